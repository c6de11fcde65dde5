r"""The simulator's hot path of :class:`~fedtheory.problems.quadratic.QuadraticProblem`: client
gradients into a buffer, local gradient steps and their closed form for diagonal Hessians, on
the array kernels of :mod:`fedtheory.problems.quadratic_kernels`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fedtheory.problems import quadratic_kernels as kernels
from fedtheory.validation import integer_at_least, positive_real

__all__ = ["QuadraticLocalWork"]


class QuadraticLocalWork:
    """The local-work methods of :class:`~fedtheory.problems.quadratic.QuadraticProblem` (a
    base class of it): they read its ``n``, ``d``, ``diagonal``, ``hessians`` and its cast
    parameters (``_params``, ``_cast``)."""

    def client_gradients(self, y: np.ndarray, clients: np.ndarray,
                         out: np.ndarray | None = None) -> np.ndarray:
        r"""Row ``k``: :math:`\nabla f_{c_k}(y_k) = A_{c_k}(y_k - c_{c_k})` (simulator hot path).

        Row gathers into ``out`` and in-place passes, no fresh temporaries
        (:func:`~fedtheory.problems.quadratic_kernels.gradient_rows`). ``y`` may be a read-only
        broadcast view (e.g. one replica's iterate for all its clients).

        Parameters
        ----------
        y:
            Points, shape ``(..., d)``; the result has ``y``'s floating dtype.
        clients:
            Client index of each row, shape ``y.shape[:-1]``, integers in ``[0, n)``.
        out:
            Optional result array (shape of ``y``, its floating dtype; may be ``y``).

        >>> from fedtheory.problems.quadratic import QuadraticProblem
        >>> prob = QuadraticProblem(np.array([[1.0, 2.0], [3.0, 4.0]]), np.zeros((2, 2)))
        >>> prob.client_gradients(np.ones((3, 2)), np.array([1, 0, 1])).tolist()
        [[3.0, 4.0], [1.0, 2.0], [3.0, 4.0]]
        """
        y2, idx, out2 = kernels.check_rows(y, clients, out, self.n, self.d)
        A, c = self._cast.get(out2.dtype) or self._params(out2.dtype)
        v = kernels.gradient_rows(A, c, idx, y2, out2, self.diagonal)
        return v if v.shape == np.shape(y) else v.reshape(np.shape(y))

    def local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                    correction: np.ndarray | None = None,
                    add_noise: Callable[[np.ndarray], None] | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        r"""Pseudo-gradients of ``steps`` local gradient steps, client :math:`c_k` from
        :math:`y_k` (the simulator's local work, step by step):

        .. math::

            y^{j+1} = y^j - \eta\,\big(\nabla f_{c_k}(y^j) + \xi^j + u_k\big),\quad
            \Delta_k = \frac{y^0 - y^\tau}{\eta}
            = \sum_{j<\tau}\big(\nabla f_{c_k}(y^j) + \xi^j + u_k\big).

        Iterates are kept as :math:`e^j = y^j - c_{c_k}`, so a step is
        :math:`g = A_{c_k} e^j` (plus noise and correction), :math:`e^{j+1} = e^j - \eta g`:
        the centers and Hessian diagonals are gathered once for all steps.

        Parameters
        ----------
        y, clients:
            Start points ``(K, d)`` (may be a broadcast view) and client indices ``(K,)``.
        lr, steps:
            :math:`\eta > 0` and :math:`\tau \ge 1`.
        correction:
            :math:`u_k`, ``(K, d)``, added to every local gradient (SCAFFOLD), or None.
        add_noise:
            Called once per step with the gradients ``(K, d)``; adds :math:`\xi^j` in place.
        out:
            Optional result array, ``(K, d)`` of ``y``'s floating dtype.
        """
        y2, idx, total = kernels.check_rows(y, clients, out, self.n, self.d, two_d=True)
        lr = positive_real("lr", lr)
        steps = integer_at_least("steps", steps)
        A, c = self._params(total.dtype)
        return kernels.local_step_rows(A, c, idx, y2, total, lr, steps, self.diagonal,
                                       correction, add_noise)

    @property
    def can_fuse_local_steps(self) -> bool:
        """Whether :meth:`fused_local_steps` applies (diagonal Hessians)."""
        return self.diagonal

    def fused_local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                          correction: np.ndarray | None = None,
                          normals: np.ndarray | None = None, noise_sd: float = 0.0,
                          out: np.ndarray | None = None) -> np.ndarray:
        r""":meth:`local_steps` in closed form for diagonal Hessians, with additive Gaussian
        noise :math:`\xi^j \sim N(0, \sigma_\xi^2 I)` (or none).

        The steps are linear: :math:`e^{j+1} = m\odot e^j - \eta(\xi^j + u)` with
        :math:`e = y - c_i`, :math:`m = 1 - \eta a_i`, so

        .. math::

            \Delta = S_1\odot\big(a_i\odot(y^0 - c_i) + u\big)
            + \sum_{j<\tau} m^{\tau-1-j}\odot\xi^j,\qquad S_1 = \sum_{j<\tau} m^j,

        and the noise sum is one Gaussian of per-coordinate variance
        :math:`\sigma_\xi^2 S_2`, :math:`S_2 = \sum_{j<\tau} m^{2j}`: one standard normal per
        coordinate (``normals``, ``(K, d)``, overwritten) instead of :math:`\tau`.

        >>> from fedtheory.problems.quadratic import QuadraticProblem
        >>> prob = QuadraticProblem(np.array([[0.5]]), np.array([[1.0]]))
        >>> y = np.array([[3.0]])
        >>> float(prob.fused_local_steps(y, np.array([0]), lr=0.5, steps=2)[0, 0])
        1.75
        >>> float(prob.local_steps(y, np.array([0]), lr=0.5, steps=2)[0, 0])
        1.75
        """
        if not self.diagonal:
            raise ValueError("fused_local_steps needs diagonal Hessians; this problem is dense "
                             "(use local_steps)")
        y2, idx, out2 = kernels.check_rows(y, clients, out, self.n, self.d, two_d=True)
        lr = positive_real("lr", lr)
        steps = integer_at_least("steps", steps)
        noise_sd = float(noise_sd)
        if not (np.isfinite(noise_sd) and noise_sd >= 0):
            raise ValueError(f"noise_sd must be a non-negative real number, got {noise_sd!r}")
        dtype = out2.dtype
        key = ("fused", lr, steps, noise_sd, dtype)  # S_1 a_i, S_1, sigma sqrt(S_2), cached
        coefficients = self._cast.get(key)
        if coefficients is None:
            coefficients = self._cast[key] = kernels.fused_coefficients(
                self.hessians, lr, steps, noise_sd, dtype)
        return kernels.fused_step_rows(coefficients, self._params(dtype)[1], idx, y2, out2,
                                       correction, normals, noise_sd)
