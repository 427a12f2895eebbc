"""Perturbation models G_t for the noisy power method, and the noise bounds they are measured against.

Every model is a callable ``noise(t, X, AX, rng) -> G`` returning an array of the shape of ``AX``
(``(d, k)``); the solver then uses ``A X_t + G_t`` in place of the exact product ``A X_t``.

Noise bounds (all **reconstructions** of the scaling laws; the constants are ours, see the README):

- :func:`noise_bound` — the improved (milder) condition, ``||G_t|| <= eps * (lambda_k - lambda_{k+1})``:
  the same scaling as the non-accelerated noisy power method (Hardt & Price 2014).
- :func:`xu_noise_bound` — the earlier condition of Xu (AISTATS 2023) as summarised in the paper's abstract
  and notes: an extra factor ``sqrt(Delta_k)``, ``Delta_k = (lambda_k - lambda_{k+1}) / lambda_k``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "AdversarialNoise",
    "AlternatingNoise",
    "BoundedNoise",
    "EarlyOnlyNoise",
    "GaussianNoise",
    "NoNoise",
    "noise_bound",
    "xu_noise_bound",
]


def _check_gap(lam_k: float, lam_next: float, eps: float) -> float:
    if not (np.isfinite(lam_k) and np.isfinite(lam_next)) or lam_k <= lam_next:
        raise ValueError(f"need lambda_k > lambda_(k+1); got {lam_k} and {lam_next}")
    if not eps > 0:
        raise ValueError(f"eps must be positive; got {eps}")
    return lam_k - lam_next


def noise_bound(lam_k: float, lam_next: float, eps: float) -> float:
    """Largest per-iteration noise norm under which the accelerated method reaches accuracy ``eps``.

    ``eps * (lambda_k - lambda_{k+1})``: linear in the absolute eigengap, with no ``sqrt(Delta)`` penalty
    for acceleration (the paper's "much milder" condition; constant 1 is our choice).
    """
    return eps * _check_gap(lam_k, lam_next, eps)


def xu_noise_bound(lam_k: float, lam_next: float, eps: float) -> float:
    """The earlier, restrictive condition: ``eps * (lambda_k - lambda_{k+1}) * sqrt(Delta_k)``."""
    gap = _check_gap(lam_k, lam_next, eps)
    return eps * gap * np.sqrt(gap / lam_k)


def _spectral_norm(G: np.ndarray) -> float:
    return float(np.linalg.norm(G, 2)) if G.size else 0.0


@dataclass
class NoNoise:
    """Exact products: ``G_t = 0``."""

    def __call__(self, t: int, X: np.ndarray, AX: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.zeros_like(AX)


@dataclass
class GaussianNoise:
    """Isotropic Gaussian ``G_t`` rescaled to spectral norm exactly ``level``."""

    level: float

    def __post_init__(self) -> None:
        if not (np.isfinite(self.level) and self.level >= 0):
            raise ValueError(f"noise level must be a finite number >= 0; got {self.level}")

    def __call__(self, t: int, X: np.ndarray, AX: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        G = rng.standard_normal(AX.shape)  # (d, k)
        return G * (self.level / max(_spectral_norm(G), 1e-300))


@dataclass
class BoundedNoise:
    """Arbitrary user perturbation ``fn(t, X, AX, rng)``, clipped to spectral norm at most ``level``."""

    fn: Callable[..., np.ndarray]
    level: float

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise TypeError("BoundedNoise needs a callable fn(t, X, AX, rng)")
        if not (np.isfinite(self.level) and self.level >= 0):
            raise ValueError(f"noise level must be a finite number >= 0; got {self.level}")

    def __call__(self, t: int, X: np.ndarray, AX: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        G = np.asarray(self.fn(t, X, AX, rng), dtype=float)
        if G.shape != AX.shape:
            raise ValueError(f"noise function returned shape {G.shape}, expected {AX.shape}")
        if not np.all(np.isfinite(G)):
            raise ValueError("noise function returned NaN or inf")
        norm = _spectral_norm(G)
        return G if norm <= self.level else G * (self.level / norm)


@dataclass
class AdversarialNoise:
    """Worst-direction perturbation of norm ``level`` (the lower-bound instance, a reconstruction).

    The noise pushes the iterate coherently towards ``u_{k+1}``, the eigenvector just below the target
    subspace, acting on the weakest direction of the iterate (its component along ``u_k``):
    ``G_t = level * s * u_{k+1} q^T`` with ``q = X^T u_k / ||X^T u_k||`` and the sign ``s`` chosen so the
    perturbation adds to the ``u_{k+1}`` component the product already has. In the plane
    ``(u_k, u_{k+1})`` this makes the error settle at about ``level / (lambda_k - lambda_{k+1})``, so noise
    above :func:`noise_bound` keeps ``sin theta`` above ``eps``.

    Parameters
    ----------
    level : float
        Spectral norm of every ``G_t``.
    u_k, u_next : arrays of shape (d,)
        The k-th and (k+1)-th eigenvectors of the operator (ground truth).
    """

    level: float
    u_k: np.ndarray
    u_next: np.ndarray

    def __post_init__(self) -> None:
        if not (np.isfinite(self.level) and self.level >= 0):
            raise ValueError(f"noise level must be a finite number >= 0; got {self.level}")
        self.u_k = np.asarray(self.u_k, dtype=float).ravel()
        self.u_next = np.asarray(self.u_next, dtype=float).ravel()
        if self.u_k.shape != self.u_next.shape:
            raise ValueError("u_k and u_next must have the same length")
        if not (np.all(np.isfinite(self.u_k)) and np.all(np.isfinite(self.u_next))):
            raise ValueError("u_k and u_next must be finite")

    @classmethod
    def at_fraction(
        cls, fraction: float, eigvals: np.ndarray, eigvecs: np.ndarray, k: int, eps: float
    ) -> AdversarialNoise:
        """Adversary at ``fraction`` times :func:`noise_bound` for the top-``k`` problem at accuracy ``eps``.

        ``eigvals`` descending, ``eigvecs`` of shape (d, >= k+1) in the same order.
        """
        level = fraction * noise_bound(float(eigvals[k - 1]), float(eigvals[k]), eps)
        return cls(level, eigvecs[:, k - 1], eigvecs[:, k])

    def __call__(self, t: int, X: np.ndarray, AX: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if X.shape[0] != self.u_k.shape[0]:
            raise ValueError(f"adversary built for dimension {self.u_k.shape[0]}, iterate has {X.shape[0]}")
        q = X.T @ self.u_k  # (k,) where the iterate holds u_k
        q_norm = np.linalg.norm(q)
        q = q / q_norm if q_norm > 0 else np.eye(X.shape[1])[:, -1]
        sign = 1.0 if float(self.u_next @ AX @ q) >= 0 else -1.0
        return (self.level * sign) * np.outer(self.u_next, q)  # (d, k), spectral norm = level


@dataclass
class AlternatingNoise:
    """The push of :class:`AdversarialNoise` with its sign flipped every iteration: ``G_t = (-1)^t level u_{k+1} q^T``.

    An oscillating forcing along the worst direction, the one that would resonate with an error mode the
    momentum makes oscillate (our reading of "sign alternating with the momentum"; a reconstruction).
    """

    level: float
    u_k: np.ndarray
    u_next: np.ndarray

    def __post_init__(self) -> None:
        self._push = AdversarialNoise(self.level, self.u_k, self.u_next)

    def __call__(self, t: int, X: np.ndarray, AX: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if X.shape[0] != self._push.u_k.shape[0]:
            raise ValueError(f"adversary built for dimension {self._push.u_k.shape[0]}, iterate has {X.shape[0]}")
        q = X.T @ self._push.u_k  # (k,) where the iterate holds u_k
        q_norm = np.linalg.norm(q)
        q = q / q_norm if q_norm > 0 else np.eye(X.shape[1])[:, -1]
        return (self.level * (-1.0) ** t) * np.outer(self._push.u_next, q)  # (d, k), spectral norm = level


@dataclass
class EarlyOnlyNoise:
    """Another model's perturbation during the first ``until`` updates only, exact products afterwards."""

    inner: Callable[..., np.ndarray]
    until: int

    def __post_init__(self) -> None:
        if not callable(self.inner):
            raise TypeError("EarlyOnlyNoise needs a callable inner noise model (t, X, AX, rng) -> G")
        if isinstance(self.until, bool) or not isinstance(self.until, (int, np.integer)) or self.until < 0:
            raise ValueError(f"until must be an integer >= 0 (number of perturbed updates); got {self.until!r}")

    def __call__(self, t: int, X: np.ndarray, AX: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.inner(t, X, AX, rng) if t < self.until else np.zeros_like(AX)
