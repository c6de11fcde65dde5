r"""Gradient-noise models: the stochastic oracles of seed 002's Assumptions 7 and 8.

A stochastic gradient is :math:`g = \nabla f_i(y) + \xi` with

.. math::

    \mathbb E[\xi] = 0, \qquad
    \mathbb E\big[\|\xi\|^2 \,\big|\, y\big] = M \|\nabla f_i(y)\|^2 + \sigma^2 ,

with equality (the assumptions' upper bound is attained, the least favourable noise of this
class). :class:`GaussianNoise` is the additive case :math:`M = 0`; :class:`RelativeNoise` adds
noise proportional to the gradient's norm. Two shapes of :math:`\xi` are offered:

* ``"gaussian"``: :math:`\xi = s\,z/\sqrt d` with :math:`z\sim\mathcal N(0, I_d)`, so
  :math:`\mathbb E\|\xi\|^2 = s^2` exactly;
* ``"sphere"``: :math:`\xi = s\,z/\|z\|`, a uniformly random direction of fixed length
  :math:`\|\xi\| = s` (no randomness in the norm),

where :math:`s^2 = M\|\nabla f_i(y)\|^2 + \sigma^2` is computed per row.

Examples
--------
>>> import numpy as np
>>> noise = RelativeNoise(M=0.5, sigma2=1.0)
>>> grads = np.array([[3.0, 4.0], [0.0, 0.0]])
>>> noise.variance(grads)
array([13.5,  1. ])
>>> xi = noise.sample(grads, np.random.default_rng(0))
>>> xi.shape
(2, 2)
>>> s = RelativeNoise(0.5, 1.0, distribution="sphere").sample(grads, np.random.default_rng(0))
>>> np.round(np.sum(s**2, axis=-1), 12)
array([13.5,  1. ])
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from fedtheory.validation import nonnegative_real

__all__ = ["DISTRIBUTIONS", "GaussianNoise", "NoiseModel", "NoiseSampler", "RelativeNoise"]

#: The shapes of noise offered (see the module docstring).
DISTRIBUTIONS = ("gaussian", "sphere")


@runtime_checkable
class NoiseSampler(Protocol):
    r"""What the simulator asks of any gradient-noise model: one draw of :math:`\xi` per row.

    :class:`NoiseModel` is one; the simulator draws a Gaussian :class:`NoiseModel`'s normals
    itself (same law, :math:`\xi = s z/\sqrt d`) and calls ``sample`` for any other.
    """

    def sample(self, grads: np.ndarray, rng: np.random.Generator,
               dtype: np.dtype | type | None = None) -> np.ndarray:
        """Noise rows of ``grads``' shape ``(K, d)`` (given the true gradients), in ``dtype``."""
        ...




class NoiseModel:
    r"""Zero-mean noise with :math:`\mathbb E\|\xi\|^2 = M\|g\|^2 + \sigma^2` per row.

    Parameters
    ----------
    M:
        Relative noise level :math:`M \ge 0`.
    sigma2:
        Additive noise level :math:`\sigma^2 \ge 0`.
    distribution:
        ``"gaussian"`` (default) or ``"sphere"``.
    """

    def __init__(self, M: float, sigma2: float, distribution: str = "gaussian") -> None:
        self.M = nonnegative_real("M", M)
        self.sigma2 = nonnegative_real("sigma2", sigma2)
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
        self.distribution = distribution

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(M={self.M!r}, sigma2={self.sigma2!r}, "
            f"distribution={self.distribution!r})"
        )

    @staticmethod
    def _grads(grads: np.ndarray) -> np.ndarray:
        g = np.asarray(grads)
        if g.ndim < 1 or g.shape[-1] < 1:
            raise ValueError(f"grads must have shape (..., d) with d >= 1, got shape {g.shape}")
        return g

    def variance(self, grads: np.ndarray) -> np.ndarray:
        r""":math:`\mathbb E\|\xi\|^2 = M\|g\|^2 + \sigma^2` per row: ``(..., d)`` -> ``(...)``."""
        g = self._grads(grads)
        dtype = g.dtype if g.dtype.kind == "f" else np.dtype(float)
        sq = np.sum(np.square(g, dtype=dtype), axis=-1) if self.M else 0.0
        return (self.M * sq + self.sigma2) * np.ones(g.shape[:-1], dtype=dtype)

    def sample(
        self,
        grads: np.ndarray,
        rng: np.random.Generator,
        dtype: np.dtype | type | None = None,
    ) -> np.ndarray:
        r"""Draw :math:`\xi`, one independent row per row of ``grads``.

        Parameters
        ----------
        grads:
            The true gradients :math:`\nabla f_i(y)`, shape ``(K, d)`` (any leading shape).
        rng:
            Source of randomness.
        dtype:
            Floating dtype of the result (``grads``' floating dtype, or float64, by default);
            ``np.float32`` draws the normals in single precision.
        """
        g = self._grads(grads)
        if dtype is None:
            dtype = g.dtype if g.dtype.kind == "f" else np.dtype(float)
        dtype = np.dtype(dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        z = rng.standard_normal(g.shape, dtype=dtype)
        scale = np.sqrt(self.variance(g)).astype(dtype)
        if self.distribution == "gaussian":
            z *= (scale / np.sqrt(dtype.type(g.shape[-1])))[..., None]
        else:
            norm = np.linalg.norm(z, axis=-1, keepdims=True)
            z *= scale[..., None] / np.where(norm > 0, norm, 1)
        return z


class GaussianNoise(NoiseModel):
    r"""Additive noise with :math:`\mathbb E\|\xi\|^2 = \sigma^2` (:math:`M = 0`).

    >>> import numpy as np
    >>> xi = GaussianNoise(2.0).sample(np.zeros((200_000, 4)), np.random.default_rng(1))
    >>> bool(abs(np.mean(np.sum(xi**2, axis=1)) - 2.0) < 0.03)
    True
    """

    def __init__(self, sigma2: float, distribution: str = "gaussian") -> None:
        super().__init__(0.0, sigma2, distribution)

    def __repr__(self) -> str:
        return f"GaussianNoise(sigma2={self.sigma2!r}, distribution={self.distribution!r})"


class RelativeNoise(NoiseModel):
    r"""Noise with :math:`\mathbb E\|\xi\|^2 = M\|\nabla f_i(y)\|^2 + \sigma^2`.

    The oracle of Assumptions 7 and 8 of seed 002, with their bound attained.
    """
