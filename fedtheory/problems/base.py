r"""The interface every federated optimisation problem offers, and its declared fast paths.

A federated problem has :math:`n` clients with local objectives :math:`f_i:\mathbb R^d\to\mathbb R`
and the global objective

.. math::

    f(x) = \sum_{i=1}^n w_i f_i(x), \qquad w_i \ge 0,\ \ \sum_i w_i = 1 .

Every method is vectorised over leading axes of ``x`` (replicas): ``x`` of shape ``(..., d)``.
The simulator's hot path is :meth:`Problem.client_gradients`, which receives only the
(replica, client) pairs that compute a gradient, flattened to ``K`` rows.

:class:`Problem` is a :class:`typing.Protocol`: any object with these attributes is a problem,
no inheritance needed (``isinstance(obj, Problem)`` checks the names only).

Optional fast paths
-------------------
A problem may offer faster exact routes through the simulator's hot path. It *declares* them
in a ``capabilities`` attribute, a frozenset of :class:`Capability` members (absent: none),
and each capability is a small protocol naming the members it promises:

==============================  ===========================  ====================================
capability                      protocol                     members
==============================  ===========================  ====================================
``GRADIENTS_INTO_BUFFER``       :class:`GradientsIntoBuffer`  ``client_gradients(y, clients, out=)``
``LOCAL_STEPS``                 :class:`OwnLocalSteps`        ``local_steps(...)``
``FUSED_LOCAL_STEPS``           :class:`FusedLocalSteps`      ``can_fuse_local_steps``,
                                                             ``fused_local_steps(...)``
``EXACT_LOSS_GAP``              :class:`ExactLossGap`         ``loss_gap(x)``
``MINIBATCH_GRADIENTS``         :class:`MinibatchGradients`   ``sizes``,
                                                             ``minibatch_gradients(...)``
==============================  ===========================  ====================================

The engine reads the declaration through :func:`declared_capabilities`, which fails with a
``ValueError`` when a declared capability's members are missing; it never probes for
undeclared methods. A problem with no declaration gets the slow, always exact route:
repeated :meth:`Problem.client_gradients` and ``loss(x) - f_star``.

>>> class Bare:  # a problem that declares nothing
...     pass
>>> declared_capabilities(Bare())
frozenset()
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fedtheory.validation import positive_integer, real_array

__all__ = [
    "CAPABILITY_PROTOCOLS",
    "Capability",
    "ExactLossGap",
    "FusedLocalSteps",
    "GradientsIntoBuffer",
    "MinibatchGradients",
    "OwnLocalSteps",
    "Problem",
    "check_problem",
    "declared_capabilities",
    "validate_weights",
]


@runtime_checkable
class Problem(Protocol):
    r"""A federated problem :math:`f = \sum_i w_i f_i` (see the module docstring).

    Attributes
    ----------
    n:
        Number of clients.
    d:
        Dimension of the model :math:`x`.
    weights:
        :math:`w \in \Delta^n`, shape ``(n,)`` (uniform :math:`1/n` unless stated).
    L:
        Every :math:`f_i` is :math:`L`-smooth: :math:`\|\nabla f_i(x)-\nabla f_i(y)\|\le L\|x-y\|`.
    mu:
        :math:`f` is :math:`\mu`-strongly convex (``0.0`` if it is not strongly convex).
    x_star:
        The minimiser of :math:`f`, shape ``(d,)``.
    f_star:
        :math:`f(x^\star)`.

    A problem may also declare optional fast paths in ``capabilities`` (a frozenset of
    :class:`Capability`; see the module docstring); the protocol does not require it.
    """

    n: int
    d: int
    weights: np.ndarray
    L: float
    mu: float
    x_star: np.ndarray
    f_star: float

    def loss(self, x: np.ndarray) -> np.ndarray:
        """:math:`f(x)`, ``x`` of shape ``(..., d)`` -> ``(...)``."""
        ...

    def client_losses(self, x: np.ndarray) -> np.ndarray:
        """:math:`(f_1(x), \\dots, f_n(x))`, ``(..., d)`` -> ``(..., n)``."""
        ...

    def grad(self, x: np.ndarray) -> np.ndarray:
        """:math:`\\nabla f(x)`, ``(..., d)`` -> ``(..., d)``."""
        ...

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        """Every client's gradient at a common point: ``(..., d)`` -> ``(..., n, d)``."""
        ...

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        """Row ``k``: :math:`\\nabla f_{c_k}(y_k)`; ``y`` ``(K, d)``, ``clients`` ``(K,)``."""
        ...

    def heterogeneity(self, x: np.ndarray) -> np.ndarray:
        """:math:`\\sum_i w_i\\|\\nabla f_i(x)-\\nabla f(x)\\|^2`, ``(..., d)`` -> ``(...)``."""
        ...



class Capability(Enum):
    """An optional fast path a problem may declare in its ``capabilities`` (see the module
    docstring); :data:`CAPABILITY_PROTOCOLS` names the protocol each one promises."""

    #: ``client_gradients`` writes into a caller's ``out`` buffer (:class:`GradientsIntoBuffer`).
    GRADIENTS_INTO_BUFFER = "gradients_into_buffer"
    #: The problem runs the :math:`\tau` local steps itself (:class:`OwnLocalSteps`).
    LOCAL_STEPS = "local_steps"
    #: Closed-form :math:`\tau` local steps (:class:`FusedLocalSteps`).
    FUSED_LOCAL_STEPS = "fused_local_steps"
    #: :math:`f(x) - f^\star` without cancellation (:class:`ExactLossGap`).
    EXACT_LOSS_GAP = "exact_loss_gap"
    #: Gradients on mini-batches of a client's samples (:class:`MinibatchGradients`), for
    #: local mini-batch SGD (``simulate(batches=MiniBatches(...))``).
    MINIBATCH_GRADIENTS = "minibatch_gradients"


@runtime_checkable
class GradientsIntoBuffer(Protocol):
    """Capability ``GRADIENTS_INTO_BUFFER``: the hot-path gradients written into a buffer."""

    def client_gradients(self, y: np.ndarray, clients: np.ndarray,
                         out: np.ndarray | None = None) -> np.ndarray:
        r"""Row ``k``: :math:`\nabla f_{c_k}(y_k)`, written into ``out`` when given.

        ``y`` ``(K, d)`` (may be a read-only broadcast view), ``clients`` ``(K,)`` integers in
        ``[0, n)``, ``out`` None or a C-contiguous ``(K, d)`` array of ``y``'s floating dtype,
        which may be ``y`` itself. Returns ``out`` (a fresh array when ``out`` is None).
        """
        ...


@runtime_checkable
class OwnLocalSteps(Protocol):
    """Capability ``LOCAL_STEPS``: the problem runs the local steps in its own coordinates
    (e.g. a quadratic gathers its Hessians and centers once for all steps)."""

    def local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                    correction: np.ndarray | None = None,
                    add_noise: Callable[[np.ndarray], None] | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        r"""The pseudo-gradients of ``steps`` local gradient steps of client :math:`c_k` from
        :math:`y_k`:

        .. math::

            y^{j+1} = y^j - \eta\,\big(\nabla f_{c_k}(y^j) + \xi^j + u_k\big),\qquad
            \Delta_k = \frac{y^0 - y^\tau}{\eta}
            = \sum_{j<\tau}\big(\nabla f_{c_k}(y^j) + \xi^j + u_k\big),

        ``y`` ``(K, d)``, ``clients`` ``(K,)``, :math:`\eta` = ``lr`` > 0,
        :math:`\tau` = ``steps`` >= 1, :math:`u_k` = ``correction`` ``(K, d)`` or None;
        ``add_noise(g)`` adds :math:`\xi^j` to the ``(K, d)`` gradients in place, once per
        step, in step order (so the noise streams are drawn as in the step-by-step loop).
        Returns :math:`\Delta`, ``(K, d)``, in ``out`` when given.
        """
        ...


@runtime_checkable
class FusedLocalSteps(Protocol):
    r"""Capability ``FUSED_LOCAL_STEPS``: the :math:`\tau` local steps in closed form, exact
    for additive Gaussian noise :math:`\xi^j \sim N(0, \sigma_\xi^2 I)` (or none).

    ``can_fuse_local_steps`` says whether the closed form applies to this instance (a dense
    quadratic has the method but no closed form).
    """

    can_fuse_local_steps: bool

    def fused_local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                          correction: np.ndarray | None = None,
                          normals: np.ndarray | None = None, noise_sd: float = 0.0,
                          out: np.ndarray | None = None) -> np.ndarray:
        r"""The :math:`\Delta_k` of :meth:`OwnLocalSteps.local_steps` with one Gaussian draw per
        coordinate instead of :math:`\tau`. For linear steps
        :math:`e^{j+1} = m\odot e^j - \eta(\xi^j + u)` (:math:`e = y - c_i`,
        :math:`m = 1 - \eta a_i` for a diagonal quadratic)

        .. math::

            \Delta = S_1\odot\big(a_i\odot(y^0 - c_i) + u\big)
            + \sum_{j<\tau} m^{\tau-1-j}\odot\xi^j,\qquad S_q = \sum_{j<\tau} m^{qj},

        and the noise sum is one Gaussian of per-coordinate variance
        :math:`\sigma_\xi^2 S_2`: ``normals`` ``(K, d)`` standard normals (overwritten),
        ``noise_sd`` :math:`= \sigma_\xi \ge 0`.
        """
        ...


@runtime_checkable
class ExactLossGap(Protocol):
    """Capability ``EXACT_LOSS_GAP``: the optimality gap without cancellation."""

    def loss_gap(self, x: np.ndarray) -> np.ndarray:
        r""":math:`f(x) - f^\star`, ``(..., d)`` -> ``(...)``, accurate where ``loss(x) -
        f_star`` is rounding noise of size :math:`\varepsilon |f^\star|` (near :math:`x^\star`)."""
        ...


@runtime_checkable
class MinibatchGradients(Protocol):
    r"""Capability ``MINIBATCH_GRADIENTS``: client :math:`i` holds ``sizes[i]`` samples and
    gives the gradient of its objective on any batch of them (local mini-batch SGD)."""

    sizes: np.ndarray

    def minibatch_gradients(self, y: np.ndarray, clients: np.ndarray, samples: np.ndarray,
                            valid: np.ndarray) -> np.ndarray:
        r"""Row ``k``: the gradient of client :math:`c_k`'s objective at :math:`y_k` on the
        batch :math:`B_k` of its samples ``samples[k, valid[k]]`` (indices in
        :math:`[0, s_{c_k})`),

        .. math:: g_k = \nabla r(y_k) + \frac{1}{|B_k|}\sum_{j\in B_k}\nabla\ell(y_k; a_j),

        the objective's per-sample form (the full batch gives :math:`\nabla f_{c_k}(y_k)`).
        ``y`` ``(K, d)``, ``clients`` ``(K,)``, ``samples`` and ``valid`` ``(K, B)``; computed
        in ``y``'s floating dtype. Returns ``(K, d)``.
        """
        ...


#: The protocol each capability promises, and the members that protocol names.
CAPABILITY_PROTOCOLS: dict[Capability, tuple[type, tuple[str, ...]]] = {
    Capability.GRADIENTS_INTO_BUFFER: (GradientsIntoBuffer, ("client_gradients",)),
    Capability.LOCAL_STEPS: (OwnLocalSteps, ("local_steps",)),
    Capability.FUSED_LOCAL_STEPS: (FusedLocalSteps,
                                   ("can_fuse_local_steps", "fused_local_steps")),
    Capability.EXACT_LOSS_GAP: (ExactLossGap, ("loss_gap",)),
    Capability.MINIBATCH_GRADIENTS: (MinibatchGradients, ("sizes", "minibatch_gradients")),
}

#: Members of a protocol that are data, not methods.
_DATA_MEMBERS = frozenset({"can_fuse_local_steps", "sizes"})


#: What every problem the engine runs offers.
REQUIRED = ("n", "d", "weights", "loss", "grad", "client_gradients", "x_star", "f_star")


def check_problem(problem: Any, name: str = "problem") -> Any:
    """``problem`` itself when it offers :data:`REQUIRED`, else a ``ValueError`` naming
    ``name`` and what it lacks.

    >>> check_problem(object())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: problem must offer (...); <object object at ...> lacks ['n', 'd', ...]
    """
    missing = [a for a in REQUIRED if not hasattr(problem, a)]
    if missing:
        raise ValueError(f"{name} must offer {REQUIRED}; {problem!r} lacks {missing}")
    return problem


def declared_capabilities(problem: Any) -> frozenset[Capability]:
    """The fast paths ``problem`` declares in its ``capabilities`` (none when it has no such
    attribute), checked against their protocols.

    Raises ``ValueError`` when the declaration is not a set of :class:`Capability` members,
    or when a declared capability's method is missing or not callable: a problem must not
    promise what it lacks.

    >>> class Claims:
    ...     capabilities = frozenset({Capability.EXACT_LOSS_GAP})
    >>> declared_capabilities(Claims())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: problem Claims declares capability EXACT_LOSS_GAP (...) but lacks loss_gap
    """
    declared = getattr(problem, "capabilities", frozenset())  # the declaration is optional
    if not isinstance(declared, (set, frozenset)) or not all(
            isinstance(c, Capability) for c in declared):
        raise ValueError(f"capabilities of problem {type(problem).__name__} must be a frozenset "
                         f"of Capability members, got {declared!r}")
    for cap in sorted(declared, key=lambda c: c.value):
        proto, members = CAPABILITY_PROTOCOLS[cap]
        lacks = [m for m in members if not hasattr(problem, m)
                 or (m not in _DATA_MEMBERS and not callable(getattr(problem, m)))]
        if lacks:
            raise ValueError(
                f"problem {type(problem).__name__} declares capability {cap.name} (protocol "
                f"{proto.__name__}) but lacks {', '.join(lacks)}"
            )
    return frozenset(declared)

def validate_weights(weights: np.ndarray | list[float] | None, n: int) -> np.ndarray:
    """Return the client weights as a float array of shape ``(n,)`` (uniform when ``None``).

    Raises ``ValueError`` naming the argument and the bad value when the weights have the wrong
    shape, are negative or not finite, or do not sum to 1 (within ``1e-9``).

    >>> validate_weights(None, 4)
    array([0.25, 0.25, 0.25, 0.25])
    >>> validate_weights([0.5, 0.6], 2)
    Traceback (most recent call last):
    ...
    ValueError: weights must sum to 1, got sum 1.1
    """
    positive_integer("n", n)
    if weights is None:
        return np.full(int(n), 1.0 / n)
    w = real_array("weights", weights)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be finite, got {w[~np.isfinite(w)][0]!r}")
    if np.any(w < 0):
        raise ValueError(f"weights must be non-negative, got {w[w < 0][0]!r}")
    total = float(w.sum())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"weights must sum to 1, got sum {total!r}")
    return w
