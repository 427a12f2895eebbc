"""Tests of hyperbolic population geometry: one that discriminates, and the naive ones that do not.

- :func:`distance_scaling` / :func:`log_scaling_range` — population distance ``d_pop(Δs) = E|f(s) - f(s+Δs)|``
  against physical separation; a hyperbolic (tree-like, multi-scale) code has ``d_pop ∝ log Δs`` over a
  wide range, a single-scale code saturates within about half a decade. The range is the number of
  decades of ``Δs`` over which the local slope ``d d_pop / d ln Δs`` stays above half its maximum.
- :func:`gromov_delta` — relative Gromov δ-hyperbolicity of a distance matrix (sampled 4-point condition).
- :func:`mds_stress` — stress of a 2-D embedding in the Euclidean plane or the hyperbolic plane (Lorentz
  model, scale fitted); the "hyperbolic beats Euclidean MDS" test.
- :func:`betti_curves` — Betti curves of a point cloud's Vietoris–Rips filtration (ripser), for comparison
  with clouds sampled in H^d and R^d as in Zhang et al. (2023).

Both naive tests are confounded by distance saturation of Gaussian codes (single-scale codes look
"tree-like" too); the claim ``multiscale-widths-hyperbolic`` reports them beside the discriminating one.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from icml26.hyperhopfield.data import PlaceCells


def distance_scaling(cells: PlaceCells, seps: np.ndarray, n_pairs: int, rng: np.random.Generator) -> np.ndarray:
    """Mean population distance at each separation in ``seps`` (S,) -> (S,), over ``n_pairs`` random pairs
    inside the environment (directions uniform in 2-D)."""
    seps = np.asarray(seps, dtype=np.float64)
    if np.any(seps <= 0) or np.any(seps >= cells.size) or not np.all(np.isfinite(seps)):
        raise ValueError("separations must lie in (0, environment size)")
    out = np.empty(len(seps))
    for i, ds in enumerate(seps):
        u = rng.standard_normal((n_pairs, cells.dim))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        step = ds * u
        lo = np.maximum(0.0, -step)  # keep both ends inside [0, size]^k
        hi = cells.size - np.maximum(0.0, step)
        s = lo + rng.random((n_pairs, cells.dim)) * (hi - lo)
        out[i] = np.mean(np.linalg.norm(cells.rates(s) - cells.rates(s + step), axis=1))
    return out


def log_scaling_range(seps: np.ndarray, dpop: np.ndarray, frac: float = 0.5) -> tuple[float, np.ndarray]:
    """Decades of separation over which ``d_pop`` grows like ``log Δs``: the longest run of grid intervals
    whose local slope ``Δ d_pop / Δ ln Δs`` is at least ``frac`` of the maximal slope. ``d_pop`` is first
    normalised by its maximum (the range is scale-free). Returns (decades, local slopes)."""
    seps, dpop = np.asarray(seps, dtype=np.float64), np.asarray(dpop, dtype=np.float64)
    x = np.log(seps)
    y = dpop / max(dpop.max(), 1e-300)
    slope = np.diff(y) / np.diff(x)  # (S-1,)
    ok = slope >= frac * slope.max()
    best, start = 0.0, None
    for i, flag in enumerate([*ok, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            best = max(best, (x[i] - x[start]) / np.log(10.0))
            start = None
    return float(best), slope


def gromov_delta(D: np.ndarray, n_quads: int, rng: np.random.Generator) -> float:
    """Relative Gromov δ: ``2 max δ(x,y,z,w) / diam`` over ``n_quads`` random quadruples (0 for a tree)."""
    D = np.asarray(D, dtype=np.float64)
    n = len(D)
    idx = rng.integers(0, n, (int(n_quads), 4))
    a, b, c, d = idx.T
    s = np.sort(np.stack([D[a, b] + D[c, d], D[a, c] + D[b, d], D[a, d] + D[b, c]]), axis=0)
    delta = (s[2] - s[1]) / 2.0
    return float(2 * delta.max() / max(D.max(), 1e-300))


def _stress(E: np.ndarray, D: np.ndarray, iu) -> float:
    return float(np.sqrt(np.sum((E[iu] - D[iu]) ** 2) / np.sum(D[iu] ** 2)))


def mds_stress(D: np.ndarray, geometry: str = "euclidean", *, dim: int = 2, rng: np.random.Generator) -> float:
    """Kruskal stress-1 of the best ``dim``-D embedding of ``D`` in the Euclidean or hyperbolic space.

    Euclidean: classical MDS start then L-BFGS on the raw stress. Hyperbolic: spatial coordinates ``y`` of
    the hyperboloid point ``(sqrt(1+|y|^2), y)``, distances ``arccosh`` of the Lorentz product, with the
    target scaled by ``lambda`` (equivalently, curvature ``-lambda^2``) chosen from a grid.
    """
    if geometry not in ("euclidean", "hyperbolic"):
        raise ValueError(f"geometry must be euclidean or hyperbolic; got {geometry!r}")
    D = np.asarray(D, dtype=np.float64)
    n = len(D)
    iu = np.triu_indices(n, 1)
    J = np.eye(n) - 1.0 / n
    w, V = np.linalg.eigh(-0.5 * J @ (D**2) @ J)
    Y0 = V[:, -dim:] * np.sqrt(np.maximum(w[-dim:], 1e-12))  # (n, dim) classical MDS

    def euclid(flat, T):
        Y = flat.reshape(n, dim)
        diff = Y[:, None] - Y[None]
        E = np.sqrt(np.sum(diff**2, -1) + 1e-18)
        R = E - T
        np.fill_diagonal(R, 0.0)
        g = 2 * np.sum((R / E)[:, :, None] * diff, axis=1)
        return 0.5 * np.sum(R**2), g.ravel()

    def hyper(flat, T):
        Y = flat.reshape(n, dim)
        y0 = np.sqrt(1 + np.sum(Y**2, 1))
        B = np.maximum(np.outer(y0, y0) - Y @ Y.T, 1.0 + 1e-12)
        E = np.arccosh(B)
        R = E - T
        np.fill_diagonal(R, 0.0)
        coef = R / np.sqrt(B**2 - 1.0)  # d stress / d B
        np.fill_diagonal(coef, 0.0)
        # dB_ij / dY_i = y0_j Y_i / y0_i - Y_j
        g = 2 * ((coef @ y0)[:, None] * Y / y0[:, None] - coef @ Y)
        return 0.5 * np.sum(R**2), g.ravel()

    if geometry == "euclidean":
        res = minimize(euclid, Y0.ravel(), args=(D,), jac=True, method="L-BFGS-B", options={"maxiter": 300})
        Y = res.x.reshape(n, dim)
        E = np.sqrt(np.sum((Y[:, None] - Y[None]) ** 2, -1))
        return _stress(E, D, iu)
    best = np.inf
    scale = np.median(D[iu])
    for lam in (0.5, 1.0, 2.0, 4.0, 8.0):
        T = D * lam / scale
        y_init = Y0 / max(np.abs(Y0).max(), 1e-12) * 0.5 * lam
        res = minimize(hyper, y_init.ravel(), args=(T,), jac=True, method="L-BFGS-B", options={"maxiter": 300})
        Y = res.x.reshape(n, dim)
        y0 = np.sqrt(1 + np.sum(Y**2, 1))
        E = np.arccosh(np.maximum(np.outer(y0, y0) - Y @ Y.T, 1.0))
        best = min(best, _stress(E, T, iu))
    return float(best)


def betti_curves(X: np.ndarray, *, maxdim: int = 1, n_eps: int = 50, distance_matrix: bool = False) -> np.ndarray:
    """Betti curves ``(maxdim+1, n_eps)``: number of bars of each dimension alive at ``n_eps`` filtration
    values, equally spaced up to the largest finite death; the filtration axis is normalised to [0, 1]."""
    from ripser import ripser
    from scipy.spatial.distance import cdist

    X = np.asarray(X, dtype=np.float64)
    D = X if distance_matrix else cdist(X, X)  # always a distance matrix: no shape guessing by ripser
    dgms = ripser(D, maxdim=maxdim, distance_matrix=True)["dgms"]
    finite = np.concatenate([d[np.isfinite(d[:, 1]), 1] for d in dgms if len(d)] or [np.array([1.0])])
    top = finite.max() if len(finite) else 1.0
    eps = np.linspace(0, top, n_eps)
    curves = np.zeros((maxdim + 1, n_eps))
    for k, dgm in enumerate(dgms):
        if len(dgm):
            curves[k] = np.sum((dgm[:, :1] <= eps[None]) & (dgm[:, 1:] > eps[None]), axis=0)
    return curves


def betti_reference_distances(
    D: np.ndarray, rng: np.random.Generator, *, dim: int = 3, radius: float = 4.0, maxdim: int = 1, n_eps: int = 50
) -> dict[str, float]:
    """L1 distances between the Betti curves of a distance matrix ``D`` (n, n) and those of ``n`` points
    sampled uniformly in a hyperbolic ball (H^dim, radius ``radius``) and in a Euclidean ball (R^dim), each
    on its own normalised filtration axis, as in Zhang et al. (2023). Smaller = more alike."""
    from icml26.hyperhopfield.capacity import sample_euclidean_ball, sample_hyperbolic_ball
    from icml26.hyperhopfield.lorentz import pairwise_dist

    n = len(D)
    own = betti_curves(D, maxdim=maxdim, n_eps=n_eps, distance_matrix=True)
    H = sample_hyperbolic_ball(n, dim, radius, rng)
    E = sample_euclidean_ball(n, dim, 1.0, rng)
    ref_h = betti_curves(pairwise_dist(H, H), maxdim=maxdim, n_eps=n_eps, distance_matrix=True)
    ref_e = betti_curves(E, maxdim=maxdim, n_eps=n_eps)
    norm = max(n, 1)
    return {
        "hyperbolic": float(np.abs(own - ref_h).sum() / (norm * n_eps)),
        "euclidean": float(np.abs(own - ref_e).sum() / (norm * n_eps)),
    }
