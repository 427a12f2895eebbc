"""The field's test of hyperbolic geometry: Betti curves of an order complex matched to point clouds in H^d / R^d.

Following the clique-topology method used on hippocampal data (Giusti et al. 2015; Zhang, Rich, Lee &
Sharpee 2023): only the *order* of a similarity matrix is used. Edges between the ``n`` points (neurons, or
positions) enter a Vietoris–Rips (clique) filtration from the most similar pair to the least, and the Betti
numbers ``beta_k`` of the clique complex are read as functions of the **edge density** ``rho`` (the fraction of
the ``n (n - 1) / 2`` edges present). The curves are invariant to any monotone transform of the similarity, so
an unknown nonlinearity between distance and correlation does not matter.

The data's curves are compared (L1 over a density grid, ``beta_0`` and ``beta_1``) with the mean curves of
``n`` points sampled uniformly in each model of :data:`MODELS`: the **line** (R^1: a linear track), the
**circle** (S^1: a ring track), the ball of **R^d** (d = 2-4) and the ball of radius ``R`` of **H^d** (d = 2-4,
curvature -1; ``R`` is then the data's radius in curvature radii, the scale-free form of the curvature: a space
of curvature ``K`` holding data of radius ``r`` has ``R = r sqrt(-K)``). The fit chooses the space, ``d`` and
``R`` together. The **hyperbolic gain** ``G = (loss of the best zero-curvature model - loss of the best model) /
loss of the best zero-curvature model``; the verdict reads the **hyperbolic score** (``G`` when the best model is
a ball of H^d of radius >= ``CURVED_RADIUS`` = 2.5, else 0): the geometry is called hyperbolic when the score
exceeds ``HYPERBOLIC_GAIN`` = 0.2. Both thresholds are checked (not chosen) by
``benchmarks/hyperhopfield_betti_calibration.py`` (library seed 10, draws seed 11, 200 points, 12 draws per
model; its JSON in ``benchmarks/results/``): at (2.5, 0.2) flat balls R^2-R^4 are called hyperbolic in 3 of 36
draws (all three the flat disc R^2: 3 of 12), the line and the circle in 0 of 12, H^2 of radius 3, H^2 of radius 5
and H^3 of radius 5 in 10 of 12 each (the grid around it: radius 2-3 changes nothing for the flat balls; gain 0.3
cuts flat calls to 1 of 36 and curved to 9-10 of 12). A
bootstrap (over time windows of a recording, or a parametric bootstrap from the fitted model for a point cloud)
gives the intervals of ``R`` and the score.

What the test can tell apart, and what it cannot: the Betti curves see the *order* of the distances only. A line
and a circle are told from each other and from 2-D clouds at once (``beta_1`` = 0 vs one persistent loop vs
many short loops). Between R^2, R^3 and R^4 the choice of dimension is unreliable, and near-flat balls of H^d
(R <= 2) fit flat clouds as well as R^d does, so "not hyperbolic" means "no curvature beyond R ~ 2.5 detected
at this size", not "proven flat". At 100 points H^2 and H^3 of radius 5 are missed in 3-4 of 12 draws (a flat
ball fits best); 200 points are needed for the rates above; at the 25-31 units of the shipped recordings the
test has little power, which is why the real-data claim compares with flat surrogates of the same size. Beyond
R ~ 6 the fitted radius saturates: for d >= 2 the radial density of a large ball makes ``R - r`` nearly
independent of R, so the distance order stops changing.

Through spiking the test loses most of this: populations of 200 sparse Poisson place cells
(:func:`place_cell_counts`, peak 10 Hz, 2000 windows of 0.25 s, the track code's field coverage) living in H^2 of
radius 3 score 0.00-0.06 and in H^2 of radius 5 0.01-0.19, while place cells on a line reach 0.24 and on a circle
0.21 (3 draws each; second part of the calibration script): with local Gaussian fields only near pairs are
correlated above the noise, so the correlation order shows the local neighbourhoods (for a large hyperbolic ball,
its boundary shell), not the global curvature. The claims'
positive controls and the real-data null go through this same spiking (measured numbers in the README). At the
recordings' 29 units place cells in H^2 of radius 5 are not told from place cells in a flat disc (a known-answer
test in ``tests/hyperhopfield/test_betti.py``): the test is validated on point clouds, NOT for place-cell data.

:func:`hyperbolic_mds_radius` (``geometry.py``) is the second view: hyperbolic MDS with a fitted curvature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.hyperhopfield.capacity import sample_euclidean_ball, sample_hyperbolic_ball
from icml26.hyperhopfield.lorentz import pairwise_dist

#: Radii of H^d (curvature radii) the fit tries.
RADII = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
#: Dimensions of the flat balls R^d and hyperbolic balls H^d the fit tries (d = 1 is the line: H^1 = R^1).
DIMS = (2, 3, 4)
#: The model family: ``(space, d, R)`` with space "line" (R^1, a linear track), "circle" (S^1, a ring track),
#: "flat" (the ball of R^d) or "hyperbolic" (the ball of radius R of H^d).
MODELS = (
    ("line", 1, 0.0),
    ("circle", 1, 0.0),
    *(("flat", d, 0.0) for d in DIMS),
    *(("hyperbolic", d, R) for d in DIMS for R in RADII),
)
#: A geometry is called hyperbolic when the best model is a ball of H^d of at least this radius (a ball of radius
#: 1-2 is nearly flat: flat clouds pick it by chance) ...
CURVED_RADIUS = 2.5
#: ... and it removes more than this share of the best zero-curvature model's misfit (the hyperbolic score).
HYPERBOLIC_GAIN = 0.2
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


def sample_geometry(n: int, d: int, R: float, rng: np.random.Generator, *, space: str | None = None) -> np.ndarray:
    """Distances (n, n) of ``n`` points uniform in a model space: the ball of radius ``R`` of H^d (``R > 0``),
    the unit ball of R^d (``R = 0``; ``d = 1``: the unit segment, a line), or with ``space="circle"`` the circle
    S^1 (geodesic arc lengths; ``d`` must be 1)."""
    space = space or ("hyperbolic" if R > 0 else ("line" if d == 1 else "flat"))
    if space == "circle":
        if d != 1:
            raise ValueError(f"the circle model is 1-D; got d = {d}")
        a = rng.random(n) * 2 * np.pi
        gap = np.abs(a[:, None] - a[None])
        return np.minimum(gap, 2 * np.pi - gap)
    if space == "hyperbolic":
        H = sample_hyperbolic_ball(n, d, R, rng)
        return pairwise_dist(H, H)
    if space not in ("line", "flat"):
        raise ValueError(f"unknown model space {space!r}")
    X = sample_euclidean_ball(n, d, 1.0, rng)
    return np.linalg.norm(X[:, None] - X[None], axis=-1)


Model = tuple[str, int, float]
"""(space, d, R): see :data:`MODELS`."""


def model_label(model: Model) -> str:
    space, d, R = model
    return {"line": "line (R^1)", "circle": "circle (S^1)", "flat": f"R^{d}"}.get(space, f"H^{d} radius {R:g}")


@dataclass
class ReferenceLibrary:
    """Mean Betti curves of ``n`` points in each model of :data:`MODELS` over ``reps`` draws."""

    n: int
    models: list[Model]
    curves: np.ndarray
    """(M, maxdim + 1, len(DENSITIES)) mean curves"""
    spread: np.ndarray
    """(M,) mean L1 distance of one draw's curves to the model's mean (the model's own scatter)"""


def reference_library(
    n: int, rng: np.random.Generator, *, models=MODELS, reps: int = 8, maxdim: int = 1
) -> ReferenceLibrary:
    """Reference curves for ``n`` points in every model of ``models``."""
    models = [(str(m), int(d), float(R)) for m, d, R in models]
    curves, spread = [], []
    for space, d, R in models:
        draws = np.stack(
            [
                betti_curves(
                    rank_distances(sample_geometry(n, d, R, rng, space=space), similarity=False), maxdim=maxdim
                )
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
    """Best-fitting model of a point set's Betti curves, chosen among dimensions and curvatures."""

    space: str
    """line, circle, flat (R^d, d >= 2) or hyperbolic"""
    dim: int
    radius: float
    """H^d radius in curvature radii (0: not hyperbolic)"""
    loss: float
    loss_flat: float
    """the best non-hyperbolic model's loss (line, circle or flat ball of any dimension)"""
    losses: dict[Model, float]

    @property
    def label(self) -> str:
        return model_label((self.space, self.dim, round(self.radius, 1)))

    @property
    def score(self) -> float:
        """The **hyperbolic score**: the gain when the best model is a ball of H^d of radius >= ``CURVED_RADIUS``,
        else 0 (the verdict's statistic: a geometry is called hyperbolic when it exceeds ``HYPERBOLIC_GAIN``)."""
        return self.gain if self.space == "hyperbolic" and self.radius >= CURVED_RADIUS else 0.0

    @property
    def hyperbolic(self) -> bool:
        return self.score > HYPERBOLIC_GAIN

    @property
    def flat_excess(self) -> float:
        """How much worse the best non-hyperbolic model fits than the best model (>= 0)."""
        return self.loss_flat - self.loss

    @property
    def gain(self) -> float:
        """The **hyperbolic gain** ``(loss_flat - loss_best) / loss_flat`` in [0, 1]: the share of the best
        non-hyperbolic model's misfit (line, circle, R^d) that a hyperbolic ball removes (0: a zero-curvature
        model fits best)."""
        return self.flat_excess / max(self.loss_flat, 1e-300)


def fit_geometry(curves: np.ndarray, lib: ReferenceLibrary) -> GeometryFit:
    """The model (space, d, R) of the library whose mean curves are nearest to ``curves``; a hyperbolic radius is
    refined by a parabola through the best grid radius and its neighbours (same d)."""
    losses = {m: curve_distance(curves, c, lib.n) for m, c in zip(lib.models, lib.curves, strict=True)}
    (space, d, R), best = min(losses.items(), key=lambda kv: kv[1])
    if space == "hyperbolic":
        radii = sorted(r for sp, dd, r in losses if sp == space and dd == d)
        i = radii.index(R)
        if 0 < i < len(radii) - 1:
            x = np.array(radii[i - 1 : i + 2])
            y = np.array([losses[space, d, r] for r in x])
            a, b, _ = np.polyfit(x, y, 2)
            if a > 0:
                R = float(np.clip(-b / (2 * a), x[0], x[2]))
    flat = min(v for (sp, _, _), v in losses.items() if sp != "hyperbolic")
    return GeometryFit(space, d, float(R), float(best), float(flat), losses)


def geometry_of_distances(
    D: np.ndarray, rng: np.random.Generator, *, similarity: bool = False, n_boot: int = 20, lib=None, reps: int = 8
) -> dict:
    """The Betti-curve test on one matrix (distances, or similarities with ``similarity=True``), with a
    parametric bootstrap: ``n_boot`` fresh clouds from the fitted model, refitted, give the radius interval.

    Returns the fit, the 2.5-97.5 % bootstrap intervals of the radius and the score, the share of bootstrap fits
    called hyperbolic, and the curves."""
    curves = betti_curves(rank_distances(D, similarity=similarity))
    lib = lib or reference_library(len(D), rng, reps=reps)
    fit = fit_geometry(curves, lib)
    boot = []
    for _ in range(int(n_boot)):
        cloud = sample_geometry(len(D), fit.dim, round(fit.radius, 6), rng, space=fit.space)
        c = betti_curves(rank_distances(cloud, similarity=False))
        boot.append(fit_geometry(c, lib))
    return _summary(fit, boot, curves)


def _summary(fit: GeometryFit, boot: list[GeometryFit], curves: np.ndarray) -> dict:
    radii, gains = np.array([b.radius for b in boot]), np.array([b.score for b in boot])
    lo, hi = np.percentile(radii, [2.5, 97.5]) if len(boot) else (np.nan, np.nan)
    return {
        "fit": fit,
        "radius": fit.radius,
        "dim": fit.dim,
        "space": fit.space,
        "model": fit.label,
        "radius_interval": (float(lo), float(hi)),
        "hyperbolic": fit.hyperbolic,
        "hyperbolic_share": float(np.mean(gains > HYPERBOLIC_GAIN)) if len(boot) else np.nan,
        "gain": fit.gain,
        "score": fit.score,
        "score_interval": (float(np.percentile(gains, 2.5)), float(np.percentile(gains, 97.5)))
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

    ``n_null`` > 0 adds the **flat null** of the same size: the scores of ``n_null`` surrogate populations (as
    many units and windows) of sparse Poisson place cells (:func:`place_cell_counts`) living in the data's best
    zero-curvature model (line, circle or ball of R^d), through the Poisson spiking of the simulated 1-D track
    code (field coverage 0.0975, peak 10 Hz, 0.25 s windows: the simulator's values, not fitted to the recording's
    rates, field sizes or occupancy). With few
    units even flat clouds reach sizeable scores, so the data's score is compared with this null's 95 % quantile
    (``excess_over_flat_null``) and its share at or above the data (``p_flat``)."""
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
        flat_model = min((v, m) for m, v in fit.losses.items() if m[0] != "hyperbolic")[1]
        null = []
        for _ in range(int(n_null)):
            space, d_flat, _ = flat_model
            act = place_cell_counts(counts.shape[1], W, space, d_flat, 0.0, rng)
            silent = act.std(0) == 0  # a unit that never fired: jitter it (no NaN correlation; same unit count)
            act[:, silent] += 1e-9 * rng.random((W, int(silent.sum())))
            null.append(fit_geometry(betti_curves(rank_distances(np.corrcoef(act.T))), lib).score)
        null = np.array(null)
        out["null_q95"] = float(np.percentile(null, 95))
        out["excess_over_flat_null"] = fit.score - out["null_q95"]
        out["p_flat"] = float((1 + np.sum(null >= fit.score)) / (1 + len(null)))
        out["null_model"] = model_label(flat_model)
    return out


def latent_activity(D: np.ndarray, n_windows: int, rng: np.random.Generator) -> np.ndarray:
    """Activity (W, n) of ``n`` units whose correlations fall with their latent distances ``D`` (n, n):
    Gaussian windows with covariance ``exp(-D / median(D))`` (negative eigenvalues clipped), so the expected
    correlation order is the distance order and the Betti-curve test sees the latent geometry through the same
    correlation-and-bootstrap measurement as a recording, without spiking (the Gaussian surrogates of the v2
    claims; the v3 claims use :func:`place_cell_counts`)."""
    D = np.asarray(D, dtype=np.float64)
    med = float(np.median(D[np.triu_indices(len(D), 1)]))
    C = np.exp(-D / med)
    w, V = np.linalg.eigh(C)
    root = V * np.sqrt(np.clip(w, 0.0, None))  # (n, n): C ~ root root^T
    return rng.standard_normal((int(n_windows), len(D))) @ root.T


def _cross_distances(n: int, m: int, space: str, d: int, R: float, rng: np.random.Generator) -> np.ndarray:
    """Distances (n, m) between ``n`` and ``m`` fresh points uniform in a model space (as :func:`sample_geometry`)."""
    if space == "circle":
        a, b = rng.random(n) * 2 * np.pi, rng.random(m) * 2 * np.pi
        gap = np.abs(a[:, None] - b[None])
        return np.minimum(gap, 2 * np.pi - gap)
    if space == "hyperbolic":
        return pairwise_dist(sample_hyperbolic_ball(n, d, R, rng), sample_hyperbolic_ball(m, d, R, rng))
    A, B = sample_euclidean_ball(n, d, 1.0, rng), sample_euclidean_ball(m, d, 1.0, rng)
    return np.sqrt(np.maximum(np.sum(A**2, 1)[:, None] + np.sum(B**2, 1)[None] - 2 * A @ B.T, 0.0))


#: Share of the visited positions inside one field's sd (``P(|s - c| < sd)``) of the place-cell surrogates: that of
#: the simulated 1-D track code (sd 0.05 on a unit track: 2 * 0.05 - 0.05^2).
FIELD_COVERAGE = 0.0975


def place_cell_counts(
    n_cells: int,
    n_windows: int,
    space: str,
    d: int,
    R: float,
    rng: np.random.Generator,
    *,
    coverage: float = FIELD_COVERAGE,
    peak_rate: float = 10.0,
    window: float = 0.25,
) -> np.ndarray:
    """Spike counts (W, n_cells) of sparse Poisson place cells living in a model space (``space``, ``d``, ``R`` as
    in :data:`MODELS`): field centres and the animal's positions (one per window) uniform in the model, rates
    ``peak_rate * exp(-dist(s, c)^2 / (2 sd^2))`` with the geodesic distance of the model and ``sd`` set so a field's
    sd covers ``coverage`` of the visited positions (the sparseness of the simulated track code), Poisson counts in
    windows of ``window`` s. The defaults are those of the simulated 1-D track code (its field coverage and
    10 Hz peak), not a recording's: on the line this is the track population with constant widths; in a ball of
    H^d the same population with a hyperbolic latent geometry. The claims' surrogates go through this spiking, so
    they share the simulated populations' sparseness; a recording's rates and coverage differ."""
    n_cells, n_windows = int(n_cells), int(n_windows)
    if n_cells < 4 or n_windows < 2 or n_cells * n_windows > 5e7:
        raise ValueError(f"need >= 4 cells, >= 2 windows and cells x windows <= 5e7; got {n_cells}, {n_windows}")
    D = _cross_distances(n_cells, n_windows, space, d, R, rng)  # (N, W) cell-position
    sd = float(np.quantile(D, coverage))
    rates = peak_rate * np.exp(-(D**2) / (2 * sd**2))  # (N, W) Hz
    return rng.poisson(rates.T * window).astype(np.float64)  # (W, N)
