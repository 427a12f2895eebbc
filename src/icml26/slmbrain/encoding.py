"""The voxelwise encoding pipeline (the field's standard) and the synthetic fMRI that defines the brain.

word features (N, p) --Lanczos--> TR features (n_TR, p) --FIR delays--> (n_TR, p * n_delays)
--ridge, alpha cross-validated by story (himalaya)--> held-out story prediction --> Pearson r per voxel
--/ noise ceiling--> normalised r --> ROI means; FDR-corrected significance; the layer chosen by
cross-validation on the training stories.

Formulas (notes, reconstruction): ``w_v = argmin ||y_v - X w||^2 + alpha ||w||^2`` (Eq. R1),
``r_v = corr(X_test w_v, y_v)`` (Eq. R2), ``r_v / NC_v`` with ``NC_v = sqrt(rho_R)`` the largest correlation any
prediction can reach with the mean of ``R`` noisy repeats, ``rho_R = R rho / (1 + (R - 1) rho)`` (Spearman-Brown)
and ``rho`` the correlation between two repeats (Eq. R3).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

logger = logging.getLogger(__name__)

DEFAULT_ALPHAS = np.logspace(-1, 6, 15)
"""alpha grid reaching 1e6: fMRI needs 1e4-1e5, and a narrower grid saturates silently at its edge"""


# ------------------------------------------------------------------------------------------ downsampling
def lanczos_kernel(t: np.ndarray, cutoff: float, window: int = 3) -> np.ndarray:
    """Lanczos-windowed sinc ``L(t) = w sin(pi c t) sin(pi c t / w) / (pi c t)^2``, 1 at 0, 0 beyond ``w``."""
    x = np.asarray(t, dtype=np.float64) * cutoff
    with np.errstate(divide="ignore", invalid="ignore"):
        val = window * np.sin(np.pi * x) * np.sin(np.pi * x / window) / (np.pi**2 * x**2)
    val[x == 0] = 1.0
    val[np.abs(x) > window] = 0.0
    return val


def lanczos_downsample(data: np.ndarray, word_times: np.ndarray, tr_times: np.ndarray, window: int = 3) -> np.ndarray:
    """Anti-aliased resampling of word features ``(N, p)`` to TRs ``(n_TR, p)`` (cutoff = the TR Nyquist rate)."""
    cutoff = 1.0 / np.mean(np.diff(tr_times)) if len(tr_times) > 1 else 0.5
    M = lanczos_kernel(tr_times[:, None] - word_times[None, :], cutoff, window)  # (n_TR, N)
    return M @ data


def hrf(tr: float = 2.0, length: float = 32.0) -> np.ndarray:
    """SPM's canonical double-gamma haemodynamic response sampled every ``tr`` seconds, unit sum."""
    t = np.arange(0, length, tr)
    h = stats.gamma.pdf(t, 6) - stats.gamma.pdf(t, 16) / 6.0
    return h / h.sum()


def convolve_hrf(x: np.ndarray, tr: float = 2.0) -> np.ndarray:
    """Causal convolution of ``(n_TR, k)`` with the HRF along time (within one story)."""
    h = hrf(tr)
    return np.stack([np.convolve(x[:, j], h)[: len(x)] for j in range(x.shape[1])], axis=1)


def make_delays(x: np.ndarray, delays: tuple[int, ...] = (1, 2, 3, 4)) -> np.ndarray:
    """FIR design ``[x(t - d) for d in delays]`` of one story ``(n_TR, p) -> (n_TR, p * len(delays))``, zero-padded
    so no delay crosses a story boundary."""
    out = np.zeros((x.shape[0], x.shape[1] * len(delays)), dtype=x.dtype)
    for i, d in enumerate(delays):
        if d < x.shape[0]:
            out[d:, i * x.shape[1] : (i + 1) * x.shape[1]] = x[: x.shape[0] - d]
    return out


def zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


# ---------------------------------------------------------------------------------------------- scoring
def pearson_r(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Column-wise Pearson correlation of two ``(n, V)`` arrays (0 for a constant column)."""
    a, b = a - a.mean(0), b - b.mean(0)
    den = np.sqrt((a**2).sum(0) * (b**2).sum(0))
    return np.where(den > 0, (a * b).sum(0) / np.where(den > 0, den, 1.0), 0.0)


def noise_ceiling(repeats: np.ndarray) -> np.ndarray:
    """Eq. R3: ``sqrt(rho_R)`` per voxel from ``(R, n_TR, V)`` repeats (mean pairwise split reliability)."""
    R = repeats.shape[0]
    if R < 2:
        raise ValueError("a noise ceiling needs at least two repeated presentations of the test story")
    pairs = [pearson_r(repeats[i], repeats[j]) for i in range(R) for j in range(i + 1, R)]
    rho = np.clip(np.mean(pairs, axis=0), 0.0, 1.0)
    return np.sqrt(R * rho / (1 + (R - 1) * rho))


def fdr_bh(p: np.ndarray, q: float = 0.05) -> np.ndarray:
    """Benjamini-Hochberg: boolean mask of discoveries at false discovery rate ``q``."""
    p = np.asarray(p)
    order = np.argsort(p)
    ranked = p[order] * len(p) / np.arange(1, len(p) + 1)
    passed = np.flatnonzero(ranked <= q)
    mask = np.zeros(len(p), dtype=bool)
    if passed.size:
        mask[order[: passed[-1] + 1]] = True
    return mask


def r_pvalues(r: np.ndarray, n: int) -> np.ndarray:
    """One-sided p-values of ``r > 0`` from the t-distribution with ``n - 2`` df (ignores autocorrelation)."""
    r = np.clip(r, -0.999999, 0.999999)
    t = r * np.sqrt((n - 2) / (1 - r**2))
    return stats.t.sf(t, n - 2)


# ------------------------------------------------------------------------------------------------ ridge
@dataclass
class EncodingResult:
    r: np.ndarray  # (V,) held-out Pearson r with the mean of the test repeats
    r_norm: np.ndarray  # (V,) r / NC (NaN where NC <= min_nc)
    nc: np.ndarray  # (V,) noise ceiling
    best_alphas: np.ndarray  # (V,)
    cv_score: float  # mean over voxels of himalaya's leave-stories-out CV score (negative MSE of z-scored
    # responses) at each voxel's best alpha: higher is better; layer selection uses this, never the test story
    edge_fraction: float  # voxels whose alpha is at the grid's upper or lower edge
    significant: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # (V,) FDR q < .05
    prediction: np.ndarray | None = None


def fit_ridge(X: np.ndarray, Y: np.ndarray, groups: np.ndarray, alphas=DEFAULT_ALPHAS, solver: str = "auto"):
    """Ridge per voxel with alpha chosen by leave-stories-out CV (himalaya, numpy backend).

    ``solver="auto"`` uses the kernel form when features outnumber samples (wide designs), the primal form
    otherwise. Returns the fitted model; ``best_alphas_`` and ``cv_scores_`` are himalaya's.
    """
    from himalaya.backend import set_backend
    from himalaya.kernel_ridge import KernelRidgeCV
    from himalaya.ridge import RidgeCV

    set_backend("numpy", on_error="raise")
    stories = np.unique(groups)
    if len(stories) < 2:
        raise ValueError("cross-validating alpha needs at least two training stories")
    folds = np.array_split(stories, min(len(stories), 5))
    cv = [(np.flatnonzero(~np.isin(groups, f)), np.flatnonzero(np.isin(groups, f))) for f in folds]
    kernel = solver == "kernel" or (solver == "auto" and X.shape[1] > X.shape[0])
    Model = KernelRidgeCV if kernel else RidgeCV
    model = Model(alphas=np.asarray(alphas, dtype=np.float64), cv=cv)
    model.fit(X.astype(np.float64), Y.astype(np.float64))
    return model


def encode(
    train_X: list[np.ndarray],
    train_Y: list[np.ndarray],
    test_X: np.ndarray,
    test_Y: np.ndarray,
    *,
    alphas=DEFAULT_ALPHAS,
    delays: tuple[int, ...] = (1, 2, 3, 4),
    min_nc: float = 0.2,
    solver: str = "auto",
) -> EncodingResult:
    """Fit on training stories (lists of TR features ``(n_TR_s, p)`` and responses ``(n_TR_s, V)``), score on
    the test story (features ``(n_TR, p)``, repeats ``(R, n_TR, V)``). Features and responses are z-scored per
    story; delays never cross a story boundary; alpha is chosen per voxel by leave-stories-out CV."""
    if len(train_X) != len(train_Y):
        raise ValueError(f"{len(train_X)} feature stories but {len(train_Y)} response stories")
    for i, (x, y) in enumerate(zip(train_X, train_Y, strict=True)):
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"story {i}: features have {x.shape[0]} TRs but the fMRI has {y.shape[0]}")
    if test_Y.ndim != 3:
        raise ValueError(f"test responses must be (repeats, n_TR, V); got shape {test_Y.shape}")
    if test_X.shape[0] != test_Y.shape[1]:
        raise ValueError(f"test story: features have {test_X.shape[0]} TRs but the fMRI has {test_Y.shape[1]}")
    for name, arrays in (("features", [*train_X, test_X]), ("responses", [*train_Y, test_Y])):
        if not all(np.all(np.isfinite(a)) for a in arrays):
            raise ValueError(f"{name} hold NaN or inf: mask those voxels/TRs first")
    X = np.concatenate([make_delays(zscore(x), delays) for x in train_X])  # (n_train, p * n_delays)
    Y = np.concatenate([zscore(y) for y in train_Y])  # (n_train, V)
    groups = np.concatenate([np.full(len(x), i) for i, x in enumerate(train_X)])
    model = fit_ridge(X, Y, groups, alphas, solver)
    alphas = np.asarray(alphas)
    best = np.asarray(model.best_alphas_)
    edge = float(np.mean((best <= alphas.min()) | (best >= alphas.max())))
    if edge > 0.1:
        logger.warning(
            "the chosen alpha sits at the edge of the grid [%g, %g] for %.0f%% of voxels: widen the grid "
            "(ridge saturates silently at the edge)",
            alphas.min(),
            alphas.max(),
            100 * edge,
        )
    pred = np.asarray(model.predict(make_delays(zscore(test_X), delays)))  # (n_TR, V)
    y_mean = test_Y.mean(0)
    r = pearson_r(pred, y_mean)
    nc = noise_ceiling(test_Y) if test_Y.shape[0] > 1 else np.full(r.shape, np.nan)
    r_norm = np.where(nc > min_nc, r / np.where(nc > 0, nc, 1.0), np.nan)
    cv = float(np.mean(np.asarray(model.cv_scores_)))  # (V,) scores at each voxel's best alpha
    sig = fdr_bh(r_pvalues(r, len(y_mean)))
    return EncodingResult(r, r_norm, nc, best, cv, edge, sig, pred)


def roi_mean(values: np.ndarray, name: str = "ROI") -> float:
    """Mean over the finite values of one ROI; NaN with a logged warning when none is finite (every voxel
    masked or under the noise-ceiling threshold) -- never a silent 0, never a crash."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        logger.warning("%s: no voxel with a finite score (all NaN or under the noise-ceiling threshold): NaN", name)
        return float("nan")
    return float(v.mean())


def roi_scores(res: EncodingResult, rois: dict[str, np.ndarray]) -> dict[str, float]:
    """Mean normalised r over the voxels of each ROI (voxels under the ceiling threshold are dropped)."""
    return {name: roi_mean(res.r_norm[idx], f"ROI {name!r}") for name, idx in rois.items()}


def encode_layers(
    layers_train: list[np.ndarray], train_Y, layers_test: np.ndarray, test_Y, layers=None, **kw
) -> tuple[int, dict[int, EncodingResult]]:
    """Encode every layer (``(L, n_TR, p)`` per story); returns the layer with the best cross-validated score on
    the *training* stories (never the test story's r) and all results, by layer. ``layers``: the layers to
    try (default all)."""
    layers = range(layers_test.shape[0]) if layers is None else layers
    results = {i: encode([x[i] for x in layers_train], train_Y, layers_test[i], test_Y, **kw) for i in layers}
    return max(results, key=lambda i: results[i].cv_score), results
