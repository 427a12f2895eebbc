"""Closed-form operations of the Lorentz (hyperboloid) model of hyperbolic space H^d, curvature -1, float64.

A point of H^d is ``x = (x_0, x_1..x_d)`` in R^{d+1} with ``<x, x>_L = -1`` and ``x_0 > 0``, where
``<x, y>_L = -x_0 y_0 + sum_i x_i y_i`` is the Lorentz inner product. Closed forms used here:

- distance      ``d(x, y) = arccosh(-<x, y>_L)``
- exponential   ``exp_m(v) = cosh(|v|) m + sinh(|v|) v / |v|``, ``|v| = sqrt(<v, v>_L)`` for ``v`` tangent at ``m``
- logarithm     ``log_m(x) = d / sinh(d) (x + <m, x>_L m)``, ``d = d(m, x)``

Everything is written with matrix products (``(Q, D) @ (D, P)``), so a weighted sum of logarithms over P
stored patterns never builds a ``(Q, P, D)`` array (see :func:`weighted_log_sum`).

Numerics: coordinates grow like ``e^R / 2`` at radius ``R`` and ``-<x, y>_L`` suffers cancellation, so a
small distance between two points at radius ``R`` carries a round-off error of about ``e^R sqrt(eps)``.
:data:`MAX_RADIUS` is the largest radius the library accepts in float64 (distances of 0.1 still resolved
to about 1 %); beyond it a clear ``ValueError`` is raised.
"""

from __future__ import annotations

import numpy as np

#: Largest hyperbolic radius (distance from the origin) accepted in float64: at R = 12 a distance of 0.1
#: between two points is resolved to ~1 % (error ~ e^R sqrt(eps) ~ 2e-3); at R ~ 18 it is lost entirely.
MAX_RADIUS = 12.0
#: Default tolerance for "on the hyperboloid": |<x, x>_L + 1| <= TOL * x_0^2 (relative to the coordinate size).
ON_MANIFOLD_TOL = 1e-8


def lorentz_inner(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``<x, y>_L`` over the last axis, broadcasting the leading ones."""
    return np.sum(x[..., 1:] * y[..., 1:], axis=-1) - x[..., 0] * y[..., 0]


def lorentz_gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """All pairwise Lorentz inner products: ``(Q, D), (P, D) -> (Q, P)``, one matrix product."""
    Bs = B.copy()
    Bs[:, 0] = -Bs[:, 0]
    return A @ Bs.T


def origin(d: int) -> np.ndarray:
    """The base point ``(1, 0, ..., 0)`` of H^d."""
    o = np.zeros(d + 1)
    o[0] = 1.0
    return o


def project(x: np.ndarray) -> np.ndarray:
    """Nearest-in-coordinates point of the hyperboloid: keep the spatial part, recompute ``x_0``."""
    x = np.array(x, dtype=np.float64, copy=True)
    x[..., 0] = np.sqrt(1.0 + np.sum(x[..., 1:] ** 2, axis=-1))
    return x


def check_points(x: np.ndarray, *, tol: float = ON_MANIFOLD_TOL, fix: bool = False, what: str = "points") -> np.ndarray:
    """Validate points of H^d (shape ``(..., d+1)``): finite, ``x_0 > 0``, ``|<x,x>_L + 1| <= tol x_0^2``,
    radius <= :data:`MAX_RADIUS`. ``fix=True`` projects points that are off by more than ``tol`` instead of
    rejecting them (points with ``x_0 <= 0`` are always rejected)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise ValueError(f"{what} must have shape (..., d+1) with d >= 1; got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} contain NaN or inf")
    if np.any(x[..., 0] <= 0):
        raise ValueError(f"{what}: the time coordinate x_0 must be positive (upper sheet of the hyperboloid)")
    defect = np.abs(lorentz_inner(x, x) + 1.0) / np.maximum(x[..., 0] ** 2, 1.0)
    if np.any(defect > tol):
        if not fix:
            raise ValueError(
                f"{what} are off the hyperboloid <x,x>_L = -1 (relative defect {defect.max():.3g} > tol {tol:g}); "
                "project them (project=True) or fix the input"
            )
        x = project(x)
    check_radius(radius(x).max(initial=0.0), what=what)
    return x


def check_radius(r: float, *, what: str = "radius") -> None:
    """Raise a clear error beyond the float64 safe range :data:`MAX_RADIUS` (or for NaN/negative)."""
    r = float(r)
    if not np.isfinite(r) or r < 0:
        raise ValueError(f"{what} must be a finite non-negative hyperbolic radius; got {r}")
    if r > MAX_RADIUS + 1e-9:
        raise ValueError(
            f"{what} {r:.4g} exceeds the float64 safe radius {MAX_RADIUS:g} of the Lorentz model "
            "(beyond it distances of 0.1 lose more than ~1 % to round-off)"
        )


def radius(x: np.ndarray) -> np.ndarray:
    """Distance from the origin, ``arccosh(x_0)``."""
    return np.arccosh(np.maximum(x[..., 0], 1.0))


def dist(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Geodesic distance, broadcasting; the arccosh argument is clamped to >= 1 (cancellation)."""
    return np.arccosh(np.maximum(-lorentz_inner(x, y), 1.0))


def pairwise_dist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``(Q, D), (P, D) -> (Q, P)`` geodesic distances."""
    return np.arccosh(np.maximum(-lorentz_gram(A, B), 1.0))


def _d_over_sinh(d: np.ndarray) -> np.ndarray:
    """``d / sinh(d)`` with its limit 1 at 0."""
    out = np.ones_like(d)
    big = d > 1e-8
    out[big] = d[big] / np.sinh(d[big])
    return out


def expmap(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``exp_m(v)`` for tangent vectors ``v`` at ``m`` (broadcasting over leading axes); re-projected."""
    n = np.sqrt(np.maximum(lorentz_inner(v, v), 0.0))[..., None]
    small = n < 1e-12
    safe = np.where(small, 1.0, n)
    out = np.cosh(n) * m + np.where(small, v, np.sinh(n) * v / safe)
    return project(out)


def logmap(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``log_m(x)`` (broadcasting): the tangent vector at ``m`` pointing to ``x`` with length ``d(m, x)``."""
    ip = lorentz_inner(m, x)
    d = np.arccosh(np.maximum(-ip, 1.0))
    return _d_over_sinh(d)[..., None] * (x + ip[..., None] * m)


def to_tangent(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Project an ambient vector onto the tangent space at ``m``: ``v + <m, v>_L m``."""
    return v + lorentz_inner(m, v)[..., None] * m


def weighted_log_sum(M: np.ndarray, X: np.ndarray, W: np.ndarray, G: np.ndarray | None = None) -> np.ndarray:
    """``sum_mu W[q, mu] log_{M_q}(X_mu)`` for all queries at once with two matrix products.

    ``M`` (Q, D) base points, ``X`` (P, D) patterns, ``W`` (Q, P) weights, ``G`` optional precomputed
    ``lorentz_gram(M, X)``. Uses ``log_m x = c (x + <m,x> m)``, ``c = d / sinh d``, so the sum is
    ``(W c) @ X + (sum_mu W c <m, x_mu>) m``.
    """
    G = lorentz_gram(M, X) if G is None else G  # (Q, P)
    C = W * _d_over_sinh(np.arccosh(np.maximum(-G, 1.0)))  # (Q, P)
    return C @ X + np.sum(C * G, axis=1, keepdims=True) * M  # (Q, D)


def from_spatial(y: np.ndarray) -> np.ndarray:
    """Lift spatial coordinates ``y`` (..., d) onto the hyperboloid (..., d+1)."""
    y = np.asarray(y, dtype=np.float64)
    return np.concatenate([np.sqrt(1.0 + np.sum(y**2, axis=-1, keepdims=True)), y], axis=-1)


def from_polar(r: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The point at distance ``r`` from the origin in unit direction ``u`` (..., d): ``(cosh r, sinh r u)``."""
    r = np.asarray(r, dtype=np.float64)[..., None]
    return np.concatenate([np.cosh(r), np.sinh(r) * u], axis=-1)


def random_tangent(m: np.ndarray, length: float | np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Tangent vectors at ``m`` (Q, D) in uniformly random directions with Lorentz norm ``length``."""
    v = to_tangent(m, rng.standard_normal(m.shape))
    n = np.sqrt(np.maximum(lorentz_inner(v, v), 1e-300))[..., None]
    return v / n * np.asarray(length, dtype=np.float64).reshape(-1, 1)


def to_poincare(x: np.ndarray) -> np.ndarray:
    """Poincaré-ball coordinates ``x_{1:} / (1 + x_0)``."""
    return x[..., 1:] / (1.0 + x[..., :1])
