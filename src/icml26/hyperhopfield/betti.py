"""The field's test of hyperbolic geometry: Betti curves of an order complex matched to point clouds in H^d / R^d.

Following the clique-topology method used on hippocampal data (Giusti et al. 2015; Zhang, Rich, Lee &
Sharpee 2023): only the *order* of a similarity matrix is used. Edges between the ``n`` points (neurons, or
positions) enter a Vietoris–Rips (clique) filtration from the most similar pair to the least, and the Betti
numbers ``beta_k`` of the clique complex are read as functions of the **edge density** ``rho`` (the fraction of
the ``n (n - 1) / 2`` edges present). The curves are invariant to any monotone transform of the similarity, so
an unknown nonlinearity between distance and correlation does not matter.

The data's curves are compared (L1 over a density grid, ``beta_0`` and ``beta_1``) with the mean curves of
``n`` points sampled uniformly in a ball of H^d of radius ``R`` (curvature -1; ``R`` is then the data's radius
in curvature radii, the scale-free form of the curvature: a space of curvature ``K`` holding data of radius
``r`` has ``R = r sqrt(-K)``) and in a ball of R^d (``R = 0``). The fit chooses ``d`` and ``R`` together. The
verdict reads the **hyperbolic gain** ``G = (loss of the best flat ball - loss of the best model) / loss of the
best flat ball``: the geometry is called hyperbolic when ``G > HYPERBOLIC_GAIN`` (0.3, set from the known answers
below before any recording was tested). A bootstrap (over time windows of a recording, or a parametric
bootstrap from the fitted model for a point cloud) gives the intervals of ``R`` and ``G``.

Known answers (``tests/hyperhopfield/test_betti.py``; 100 points, 10 draws each): flat balls in R^2, R^3, R^4
give G = 0-0.3 (mostly < 0.15); points in H^2 of radius 5 give G = 0.6-0.8 with a fitted d = 2 and R = 4.6-8;
H^3 is harder (G 0-0.5: at these sizes a curved H^3 trades off against a flatter H^2 or a flat R^4). Beyond
R ~ 6 the fitted radius saturates: for d >= 2 the radial density of a large ball makes ``R - r`` nearly
independent of R, so the distance *order* (all the test sees) stops changing.

:func:`hyperbolic_mds_radius` (``geometry.py``) is the second view: hyperbolic MDS with a fitted curvature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.hyperhopfield.capacity import sample_euclidean_ball, sample_hyperbolic_ball
from icml26.hyperhopfield.lorentz import pairwise_dist

#: Radii of H^d (curvature radii) the fit tries; 0 stands for the flat ball R^d.
RADII = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
DIMS = (2, 3, 4)
#: A best-fitting radius at or below this is "flat" (reported; the verdict reads the gain).
FLAT_RADIUS = 1.0
#: Hyperbolic gain above which a geometry is called hyperbolic.
HYPERBOLIC_GAIN = 0.3
#: Edge densities the curves are read at (the top of the grid bounds the filtration: cheaper; beta_1 of every
#: model is near zero beyond it).
DENSITIES = np.linspace(0.0, 0.6, 61)
MAX_POINTS = 300


def rank_distances(S: np.ndarray, *, similarity: bool = True) -> np.ndarray:
    """Order-complex distances (n, n): each pair's rank among the ``n (n-1) / 2`` off-diagonal entries of ``S``,
    divided by their number (so a filtration value is an edge density); the most similar pair (largest
    similarity, or smallest distance with ``similarity=False``) enters first. Ties are broken by position."""
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or not 4 <= len(S) <= MAX_POINTS:
        raise ValueError(f"need a square matrix of 4 to {MAX_POINTS} points; got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("the similarity / distance matrix must be finite")
    n = len(S)
    iu = np.triu_indices(n, 1)
    vals = S[iu]
    order = np.argsort(-vals if similarity else vals, kind="stable")
    rank = np.empty(len(vals))
    rank[order] = np.arange(1, len(vals) + 1) / len(vals)
    D = np.zeros((n, n))
    D[iu] = rank
    return D + D.T


def betti_curves(D_rank: np.ndarray, *, maxdim: int = 1, densities: np.ndarray = DENSITIES) -> np.ndarray:
    """Betti curves ``(maxdim + 1, len(densities))`` of the clique filtration of an order-complex matrix
    (:func:`rank_distances`): ``beta_k(rho)`` = bars of dimension k born at or before ``rho`` and dying after."""
    from ripser import ripser

    top = float(densities[-1])
    dgms = ripser(D_rank, maxdim=maxdim, distance_matrix=True, thresh=top + 1e-9)["dgms"]
    curves = np.zeros((maxdim + 1, len(densities)))
    for k, dgm in enumerate(dgms):
        if len(dgm):
            curves[k] = np.sum((dgm[:, :1] <= densities[None]) & (dgm[:, 1:] > densities[None]), axis=0)
    return curves


def sample_geometry(n: int, d: int, R: float, rng: np.random.Generator) -> np.ndarray:
    """Distances (n, n) of ``n`` points uniform in the ball of radius ``R`` of H^d (``R = 0``: the unit ball
    of R^d)."""
    if R == 0:
        X = sample_euclidean_ball(n, d, 1.0, rng)
        return np.linalg.norm(X[:, None] - X[None], axis=-1)
    H = sample_hyperbolic_ball(n, d, R, rng)
    return pairwise_dist(H, H)


@dataclass
class ReferenceLibrary:
    """Mean Betti curves of ``n`` points in each model (d, R) over ``reps`` draws."""

    n: int
    models: list[tuple[int, float]]
    curves: np.ndarray
    """(M, maxdim + 1, len(DENSITIES)) mean curves"""
    spread: np.ndarray
    """(M,) mean L1 distance of one draw's curves to the model's mean (the model's own scatter)"""


def reference_library(
    n: int, rng: np.random.Generator, *, dims=DIMS, radii=RADII, reps: int = 8, maxdim: int = 1
) -> ReferenceLibrary:
    """Reference curves for ``n`` points in every model of ``dims`` x ``radii``."""
    models = [(int(d), float(R)) for d in dims for R in radii]
    curves, spread = [], []
    for d, R in models:
        draws = np.stack(
            [
                betti_curves(rank_distances(sample_geometry(n, d, R, rng), similarity=False), maxdim=maxdim)
                for _ in range(reps)
            ]
        )
        mean = draws.mean(0)
        curves.append(mean)
        spread.append(float(np.mean([curve_distance(c, mean, n) for c in draws])))
    return ReferenceLibrary(n, models, np.stack(curves), np.array(spread))


def curve_distance(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """L1 distance of the Betti curves (all dimensions) integrated over the density, per point."""
    return float(np.abs(a - b).sum() * (DENSITIES[1] - DENSITIES[0]) / n)


@dataclass
class GeometryFit:
    """Best-fitting model of a point set's Betti curves."""

    dim: int
    radius: float
    """H^d radius in curvature radii (0: flat)"""
    loss: float
    loss_flat: float
    """the best flat model's loss (any dimension)"""
    losses: dict[tuple[int, float], float]

    @property
    def hyperbolic(self) -> bool:
        return self.gain > HYPERBOLIC_GAIN

    @property
    def flat_excess(self) -> float:
        """How much worse the best flat model fits than the best model (>= 0)."""
        return self.loss_flat - self.loss

    @property
    def gain(self) -> float:
        """The **hyperbolic gain** ``(loss_flat - loss_best) / loss_flat`` in [0, 1]: the share of the best flat
        model's misfit that a hyperbolic ball removes (0: a flat ball fits best). Known answers at n = 100:
        flat balls 0-0.3, points in H^2 of radius 5: 0.6-0.8."""
        return self.flat_excess / max(self.loss_flat, 1e-300)


def fit_geometry(curves: np.ndarray, lib: ReferenceLibrary) -> GeometryFit:
    """The model (d, R) of the library whose mean curves are nearest to ``curves``; the radius is refined by a
    parabola through the best grid radius and its neighbours (same d)."""
    losses = {m: curve_distance(curves, c, lib.n) for m, c in zip(lib.models, lib.curves, strict=True)}
    (d, R), best = min(losses.items(), key=lambda kv: kv[1])
    radii = sorted(r for dd, r in losses if dd == d)
    i = radii.index(R)
    if 0 < i < len(radii) - 1:
        x = np.array(radii[i - 1 : i + 2])
        y = np.array([losses[d, r] for r in x])
        a, b, _ = np.polyfit(x, y, 2)
        if a > 0:
            R = float(np.clip(-b / (2 * a), x[0], x[2]))
    flat = min(v for (dd, r), v in losses.items() if r == 0)
    return GeometryFit(d, float(R), float(best), float(flat), losses)


def geometry_of_distances(
    D: np.ndarray, rng: np.random.Generator, *, similarity: bool = False, n_boot: int = 20, lib=None, reps: int = 8
) -> dict:
    """The Betti-curve test on one matrix (distances, or similarities with ``similarity=True``), with a
    parametric bootstrap: ``n_boot`` fresh clouds from the fitted model, refitted, give the radius interval.

    Returns the fit, the 2.5-97.5 % bootstrap intervals of the radius and the gain, the share of bootstrap fits
    called hyperbolic, and the curves."""
    curves = betti_curves(rank_distances(D, similarity=similarity))
    lib = lib or reference_library(len(D), rng, reps=reps)
    fit = fit_geometry(curves, lib)
    boot = []
    for _ in range(int(n_boot)):
        c = betti_curves(rank_distances(sample_geometry(len(D), fit.dim, round(fit.radius, 6), rng), similarity=False))
        boot.append(fit_geometry(c, lib))
    return _summary(fit, boot, curves)


def _summary(fit: GeometryFit, boot: list[GeometryFit], curves: np.ndarray) -> dict:
    radii, gains = np.array([b.radius for b in boot]), np.array([b.gain for b in boot])
    lo, hi = np.percentile(radii, [2.5, 97.5]) if len(boot) else (np.nan, np.nan)
    return {
        "fit": fit,
        "radius": fit.radius,
        "dim": fit.dim,
        "radius_interval": (float(lo), float(hi)),
        "hyperbolic": fit.hyperbolic,
        "hyperbolic_share": float(np.mean(gains > HYPERBOLIC_GAIN)) if len(boot) else np.nan,
        "gain": fit.gain,
        "gain_interval": (float(np.percentile(gains, 2.5)), float(np.percentile(gains, 97.5)))
        if len(gains)
        else (np.nan, np.nan),
        "curves": curves,
    }


def correlation_geometry(
    counts: np.ndarray,
    rng: np.random.Generator,
    *,
    block: int = 20,
    n_boot: int = 20,
    n_null: int = 0,
    lib=None,
    reps: int = 8,
) -> dict:
    """The Betti-curve test on a population's pairwise correlations: ``counts`` (W, N) spike counts in time
    windows; the points are the N units, similarity = Pearson correlation over windows. The interval comes
    from a block bootstrap over windows (blocks of ``block`` consecutive windows, resampled with replacement),
    each replicate's correlation matrix refitted.

    ``n_null`` > 0 adds the **flat null** of the same size: the gains of ``n_null`` surrogate populations (as
    many units and windows, :func:`latent_activity`) whose correlations follow fresh points in the ball of R^d,
    d the data's best flat dimension. With few units even flat clouds reach sizeable gains (at 25-30 points
    up to ~0.5), so the data's gain is compared with this null's 95 % quantile (``excess_over_flat_null``) and
    its share at or above the data (``p_flat``)."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] < 4:
        raise ValueError(f"need (windows, units) counts with at least 4 units; got {counts.shape}")
    active = counts.std(0) > 0
    if active.sum() < 4:
        raise ValueError("fewer than 4 units fire in these windows")
    counts = counts[:, active]
    C = np.corrcoef(counts.T)
    lib = lib or reference_library(counts.shape[1], rng, reps=reps)
    curves = betti_curves(rank_distances(C))
    fit = fit_geometry(curves, lib)
    W = len(counts)
    n_blocks = max(1, W // block)
    boot = []
    for _ in range(int(n_boot)):
        starts = rng.integers(0, max(1, W - block + 1), n_blocks)
        idx = (starts[:, None] + np.arange(block)[None]).ravel() % W
        sample = counts[idx]
        if np.any(sample.std(0) == 0):
            sample = sample + 1e-9 * rng.standard_normal(sample.shape)  # a silent unit in a replicate: no NaN
        boot.append(fit_geometry(betti_curves(rank_distances(np.corrcoef(sample.T))), lib))
    out = _summary(fit, boot, curves)
    out["units"] = int(active.sum())
    if n_null > 0:
        d_flat = min((v, d) for (d, r), v in fit.losses.items() if r == 0)[1]
        null = []
        for _ in range(int(n_null)):
            act = latent_activity(sample_geometry(counts.shape[1], d_flat, 0.0, rng), W, rng)
            null.append(fit_geometry(betti_curves(rank_distances(np.corrcoef(act.T))), lib).gain)
        null = np.array(null)
        out["null_q95"] = float(np.percentile(null, 95))
        out["excess_over_flat_null"] = fit.gain - out["null_q95"]
        out["p_flat"] = float((1 + np.sum(null >= fit.gain)) / (1 + len(null)))
        out["null_dim"] = int(d_flat)
    return out


def latent_activity(D: np.ndarray, n_windows: int, rng: np.random.Generator) -> np.ndarray:
    """Activity (W, n) of ``n`` units whose correlations fall with their latent distances ``D`` (n, n):
    Gaussian windows with covariance ``exp(-D / median(D))`` (negative eigenvalues clipped), so the expected
    correlation order is the distance order and the Betti-curve test sees the latent geometry through the same
    correlation-and-bootstrap measurement as a recording (the planted and flat surrogates of the claims)."""
    D = np.asarray(D, dtype=np.float64)
    med = float(np.median(D[np.triu_indices(len(D), 1)]))
    C = np.exp(-D / med)
    w, V = np.linalg.eigh(C)
    root = V * np.sqrt(np.clip(w, 0.0, None))  # (n, n): C ~ root root^T
    return rng.standard_normal((int(n_windows), len(D))) @ root.T
