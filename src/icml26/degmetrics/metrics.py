"""DEG-aware metrics of "Needles in the Haystack": DEG weights, WMSE, weighted ΔR², and the usual ones.

Everything here works on *pseudobulk* arrays on the log1p-normalised scale (``normalize_total(1e4)`` then
``log1p``), one row per perturbation:

- ``pred``, ``real`` : arrays of shape (P, G) -- predicted and observed mean expression of perturbation k;
- ``weights``        : array of shape (P, G), rows summing to 1 -- DEG weights w_k (Eq. W below);
- ``mu_ctrl``        : array of shape (G,) -- mean of the control cells;
- ``mu_all``         : array of shape (G,) -- mean of all perturbation pseudobulks (control excluded).

The reference of every Δ is stated in the name: ``*_delta_ctrl`` subtracts ``mu_ctrl`` (the field's usual
choice, which inflates with a shared control-vs-perturbed shift), ``*_delta_all`` and
:func:`weighted_delta_r2` subtract ``mu_all`` (the paper's choice, which removes that shift).

Equations (paper, Sec. "DEG-aware metrics"; weights from the authors' recipe):

- (T) Welch t-score of perturbation k vs the rest (all other perturbations, control excluded), per gene;
  with ``overestim_var`` the rest's variance is divided by n_k instead of n_rest (scanpy's
  ``t-test_overestim_var``, the paper's choice).
- (W) ``w_kg = minmax_g(|t_kg|)**2 / sum_g minmax_g(|t_kg|)**2`` -- min-max over genes, squared, normalised.
- (WMSE) ``WMSE_k = sum_g w_kg (pred_kg - real_kg)**2``.
- (R2w) ``R2w_k = 1 - sum_g w_kg (Δreal_kg - Δpred_kg)**2 / sum_g w_kg (Δreal_kg - mean_w(Δreal_k))**2``
  with ``Δ = x - mu_all`` (``sklearn.metrics.r2_score(..., sample_weight=w_k)`` row by row).
"""

from __future__ import annotations

import logging
from typing import Literal

import numpy as np
import scipy.sparse as sp
from scipy import stats

logger = logging.getLogger(__name__)

Scale = Literal["counts", "log1p"]
SCALES = ("counts", "log1p")
#: log1p of 5e8: no log1p-normalised value gets near this; raw counts of a deep gene do.
LOG1P_MAX = 20.0
TTestMethod = Literal["welch", "overestim_var"]


# ----------------------------------------------------------------------------------------------------
# Data scale: stated by the user, validated here, never guessed.
# ----------------------------------------------------------------------------------------------------
def _values(X) -> np.ndarray:
    return X.data if sp.issparse(X) else np.asarray(X)


def check_scale(X, scale: str, name: str = "data") -> None:
    """Validate that a matrix is on the scale the user declared.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_obs, n_genes)
    scale : {"counts", "log1p"}
        ``counts``: raw non-negative integer UMI counts. ``log1p``: ``log1p(normalize_total(counts))``.
    name : str
        Used in the error message (e.g. ``"pred"``).

    Raises
    ------
    ValueError
        NaN/inf, negative values, non-integer "counts" (looks log1p-normalised), or "log1p" data that are
        all integers above 1 or exceed ``LOG1P_MAX`` (looks like raw counts).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
    v = _values(X)
    if v.size == 0:
        return
    if not np.issubdtype(v.dtype, np.number):
        raise ValueError(f"{name}: expression values must be numeric, got dtype {v.dtype}")
    flat = v.reshape(-1)
    bad, vmin, vmax, integer = 0, np.inf, -np.inf, True
    for lo in range(0, flat.size, 1 << 22):  # blocks: no full-size temporaries
        block = flat[lo : lo + (1 << 22)]
        finite = np.isfinite(block)
        bad += int(block.size - np.count_nonzero(finite))
        if bad:
            continue
        vmin, vmax = min(vmin, float(block.min())), max(vmax, float(block.max()))
        integer = integer and bool(np.all(np.abs(block - np.round(block)) < 1e-6))
    if bad:
        raise ValueError(f"{name}: contains {bad} NaN/inf values")
    judge_scale(name, scale, vmin, vmax, integer)


def judge_scale(name: str, scale: str, vmin: float, vmax: float, integer: bool) -> None:
    """The scale verdict of :func:`check_scale` from a matrix's summary (min, max, all integers), so a
    streamed matrix can be judged from its blocks' summaries."""
    if vmin < 0:
        raise ValueError(f"{name}: negative values (min {vmin:.4g}) in a {scale} matrix; both scales are >= 0")
    if scale == "counts" and not integer:
        raise ValueError(
            f"{name}: declared scale='counts' but has non-integer values (max {vmax:.4g}); "
            "it looks log1p-normalised -- pass scale='log1p'"
        )
    if scale == "log1p" and (vmax > LOG1P_MAX or (integer and vmax > 1)):
        raise ValueError(
            f"{name}: declared scale='log1p' but values look like raw counts (max {vmax:.4g}"
            f"{', all integers' if integer else ''}) -- pass scale='counts'"
        )


def log1p_normalize(X, target_sum: float = 1e4) -> np.ndarray:
    """``log1p(counts / total_c * target_sum)`` per cell (scanpy's ``normalize_total`` + ``log1p``).

    Parameters
    ----------
    X : array or sparse matrix of shape (n_cells, n_genes), raw counts
    target_sum : float

    Returns
    -------
    array of shape (n_cells, n_genes), float64; cells with zero counts stay zero.
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    X = X.astype(np.float64)
    totals = X.sum(axis=1, keepdims=True)  # (n, 1)
    scale = np.divide(target_sum, totals, out=np.zeros_like(totals), where=totals > 0)
    return np.log1p(X * scale)


def _log1p_normalize_csr(X) -> sp.csr_matrix:
    """:func:`log1p_normalize` of a sparse count block, kept sparse (same values, zeros stay implicit)."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    totals = np.asarray(X.sum(axis=1)).ravel()  # integer counts: exact, whatever the summation order
    scale = np.divide(1e4, totals, out=np.zeros_like(totals), where=totals > 0)
    X.data *= np.repeat(scale, np.diff(X.indptr))
    np.log1p(X.data, out=X.data)
    return X


# ----------------------------------------------------------------------------------------------------
# Group moments, pseudobulk and the vectorised Welch t-test (Eq. T).
# ----------------------------------------------------------------------------------------------------
def _indicator(codes: np.ndarray, n_groups: int) -> sp.csr_matrix:
    """Sparse (n_groups, n_cells) 0/1 matrix: row k marks the cells of group k (codes < 0 are dropped)."""
    keep = codes >= 0
    cols = np.flatnonzero(keep)
    return sp.csr_matrix((np.ones(cols.size), (codes[keep], cols)), shape=(n_groups, codes.size))


def group_moments(
    X, codes: np.ndarray, n_groups: int, scale: str = "log1p", squares: bool = True, chunk: int = 2048
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Cell counts, sums and sums of squares of log1p expression per group, one block of cells at a time.

    Every statistic of the paper (pseudobulks, control mean, vs-rest and vs-control t-tests) is a function
    of these, so the full matrix is never copied to float64: peak extra memory is one block.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_cells, G), already validated for ``scale``
    codes : int array of shape (n_cells,), group in ``0 .. n_groups - 1`` (negative = ignored)
    scale : {"counts", "log1p"} -- counts are log1p-normalised block by block (per cell, so exact)
    squares : bool -- also accumulate sums of squares

    Returns
    -------
    n : array (n_groups,); sums : array (n_groups, G); sq : array (n_groups, G) or None
    """
    codes = np.asarray(codes)
    sums = np.zeros((n_groups, X.shape[1]))
    sq = np.zeros_like(sums) if squares else None
    for lo in range(0, X.shape[0], chunk):
        block = X[lo : lo + chunk]
        ind = _indicator(codes[lo : lo + chunk], n_groups)
        if scale == "counts" and sp.issparse(block):
            # sparse counts stay sparse: log1p(0) = 0, and a sparse product adds the same non-zero terms in the
            # same cell order as the dense one (the zeros it skips add nothing), so the sums are identical
            block = _log1p_normalize_csr(block)  # (chunk, G) CSR float64
            sums += (ind @ block).toarray()
            if squares:
                np.square(block.data, out=block.data)
                sq += (ind @ block).toarray()
            continue
        block = log1p_normalize(block) if scale == "counts" else _dense64(block)  # (chunk, G)
        sums += ind @ block
        if squares:
            np.square(block, out=block)
            sq += ind @ block
    n = np.bincount(codes[codes >= 0], minlength=n_groups).astype(np.float64)
    return n, sums, sq


def _dense64(block) -> np.ndarray:
    return block.toarray().astype(np.float64) if sp.issparse(block) else np.array(block, dtype=np.float64)


def pseudobulk(X, codes: np.ndarray, n_groups: int, scale: str = "log1p") -> np.ndarray:
    """Mean log1p expression per group.

    Parameters
    ----------
    X : array or sparse matrix of shape (n_cells, G)
    codes : int array of shape (n_cells,)
        Group index of each cell in ``0 .. n_groups - 1``; negative codes are ignored.
    scale : {"log1p", "counts"} -- counts are log1p-normalised first

    Returns
    -------
    array of shape (n_groups, G)
    """
    n, sums, _ = group_moments(X, codes, n_groups, scale, squares=False)
    if np.any(n == 0):
        raise ValueError(f"groups {np.flatnonzero(n == 0).tolist()} have no cells")
    return sums / n[:, None]


def _mean_var(n: np.ndarray, sums: np.ndarray, sq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means and unbiased variances from moments; n (P, 1), sums and sq (P, G)."""
    mean = sums / n
    var = np.maximum(sq - n * mean**2, 0.0) / (n - 1)
    var[var < 1e-12 * np.maximum(1.0, mean**2)] = 0.0  # rounding noise of a constant gene is no variance
    return mean, var


def welch_from_moments(
    n1: np.ndarray, mean1: np.ndarray, var1: np.ndarray, n2: np.ndarray, mean2: np.ndarray, var2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Welch's t and two-sided p from group moments (broadcasting); t = 0 where both variances are 0."""
    a, b = var1 / n1, var2 / n2  # squared standard errors
    se = np.sqrt(a + b)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, (mean1 - mean2) / se, 0.0)
        df = (a + b) ** 2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1))  # Welch–Satterthwaite
    df = np.where(np.isfinite(df), df, 1.0)
    return t, 2 * stats.t.sf(np.abs(t), df)


def welch_t_vs_rest_moments(
    n: np.ndarray, sums: np.ndarray, sq: np.ndarray, method: TTestMethod = "overestim_var"
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. T from group moments: every group against the union of the other groups (control excluded).

    ``overestim_var`` (the paper's, scanpy's ``t-test_overestim_var``) uses n_k in place of n_rest in the
    rest's variance term and degrees of freedom; ``welch`` is the textbook test.
    """
    if method not in ("overestim_var", "welch"):
        raise ValueError(f"method must be 'overestim_var' or 'welch'; got {method!r}")
    n_k = np.asarray(n, dtype=np.float64)[:, None]  # (P, 1)
    n_rest = n_k.sum() - n_k
    if np.any(n_k < 2) or np.any(n_rest < 2):
        raise ValueError("every group and its rest need at least 2 cells for a t-test")
    mean_k, var_k = _mean_var(n_k, sums, sq)  # (P, G)
    mean_r, var_r = _mean_var(n_rest, sums.sum(0) - sums, sq.sum(0) - sq)  # rest = totals minus the group
    return welch_from_moments(n_k, mean_k, var_k, n_k if method == "overestim_var" else n_rest, mean_r, var_r)


def welch_t_vs_rest(
    X, codes: np.ndarray, n_groups: int, method: TTestMethod = "overestim_var"
) -> tuple[np.ndarray, np.ndarray]:
    """Welch t-test of every group against all other groups, for every gene at once (Eq. T).

    Instead of P x G separate tests, per-group sums and sums of squares (two sparse products per block of
    cells) give all means and variances; the rest's statistics are totals minus the group's.

    Parameters
    ----------
    X : array of shape (n_cells, G), log1p-normalised, control cells already removed
    codes : int array of shape (n_cells,), group of each cell in ``0 .. n_groups - 1``
    n_groups : int
    method : {"overestim_var", "welch"} -- see :func:`welch_t_vs_rest_moments`

    Returns
    -------
    t : array of shape (n_groups, G); 0 where both variances are 0 (no evidence)
    pvals : array of shape (n_groups, G), two-sided, from the Welch–Satterthwaite degrees of freedom
    """
    n, sums, sq = group_moments(X, codes, n_groups)
    return welch_t_vs_rest_moments(n, sums, sq, method)


def welch_t_vs_control_moments(
    n: np.ndarray, sums: np.ndarray, sq: np.ndarray, n_ctrl: float, sum_ctrl: np.ndarray, sq_ctrl: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Welch t-test of every group against the control cells (the optional ``vscontrol`` mode)."""
    if n_ctrl < 2:
        raise ValueError("the vscontrol test needs at least 2 control cells")
    n_k = np.asarray(n, dtype=np.float64)[:, None]
    mean_k, var_k = _mean_var(n_k, sums, sq)
    mean_c, var_c = _mean_var(np.array([[n_ctrl]]), sum_ctrl[None, :], sq_ctrl[None, :])
    return welch_from_moments(n_k, mean_k, var_k, n_ctrl, mean_c, var_c)


def welch_t_vs_control(X, codes: np.ndarray, n_groups: int, control_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Welch t-test of every group against the control cells (the optional ``vscontrol`` mode).

    Parameters
    ----------
    X : array of shape (n_cells, G), log1p-normalised, all cells
    codes : int array of shape (n_cells,), group index, -1 for control cells
    control_mask : bool array of shape (n_cells,)

    Returns
    -------
    t, pvals : arrays of shape (n_groups, G)
    """
    n, sums, sq = group_moments(X, np.where(control_mask, n_groups, codes), n_groups + 1)
    return welch_t_vs_control_moments(n[:-1], sums[:-1], sq[:-1], n[-1], sums[-1], sq[-1])


def deg_weights(t: np.ndarray) -> np.ndarray:
    """DEG weights from t-scores (Eq. W): min-max of |t| over genes, squared, normalised to sum 1.

    Parameters
    ----------
    t : array of shape (P, G)

    Returns
    -------
    array of shape (P, G), non-negative, rows summing to 1; a row with constant |t| gets uniform weights.
    """
    a = np.abs(np.asarray(t, dtype=np.float64))
    lo, hi = a.min(axis=1, keepdims=True), a.max(axis=1, keepdims=True)
    span = hi - lo
    scaled = np.divide(a - lo, span, out=np.ones_like(a), where=span > 0) ** 2  # order: minmax, square
    return scaled / scaled.sum(axis=1, keepdims=True)  # then normalise


def benjamini_hochberg(pvals: np.ndarray) -> np.ndarray:
    """BH-adjusted p-values along the gene axis, one perturbation at a time (per-perturbation FDR scope)."""
    return stats.false_discovery_control(np.asarray(pvals), axis=-1, method="bh")


# ----------------------------------------------------------------------------------------------------
# Metrics, one value per perturbation (row).
# ----------------------------------------------------------------------------------------------------
def _check_pair(pred: np.ndarray, real: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pred, real = np.atleast_2d(np.asarray(pred, float)), np.atleast_2d(np.asarray(real, float))
    if pred.shape != real.shape:
        raise ValueError(f"pred has shape {pred.shape} but real has shape {real.shape}")
    return pred, real


def mse(pred: np.ndarray, real: np.ndarray) -> np.ndarray:
    """Unweighted mean squared error over genes. Shapes (P, G) -> (P,)."""
    pred, real = _check_pair(pred, real)
    return np.mean((pred - real) ** 2, axis=1)


def mae(pred: np.ndarray, real: np.ndarray) -> np.ndarray:
    """Unweighted mean absolute error over genes. Shapes (P, G) -> (P,)."""
    pred, real = _check_pair(pred, real)
    return np.mean(np.abs(pred - real), axis=1)


def wmse(pred: np.ndarray, real: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted MSE (Eq. WMSE): ``sum_g w_kg (pred_kg - real_kg)**2``. Shapes (P, G) -> (P,)."""
    pred, real = _check_pair(pred, real)
    return np.sum(np.asarray(weights) * (pred - real) ** 2, axis=1)


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=1) / den, np.nan)


def pearson_delta(pred: np.ndarray, real: np.ndarray, reference: np.ndarray, pred_reference=None) -> np.ndarray:
    """Pearson correlation over genes of ``pred - ref`` and ``real - ref``. Shapes (P, G) -> (P,).

    ``reference`` (G,) is ``mu_ctrl`` for the field's "Pearson Δ" (inflated by a shared control shift) or
    ``mu_all`` for the paper's Δ. ``pred_reference`` (default ``reference``) lets the prediction use its
    own predicted control, as cell-eval does. NaN where a Δ is constant (e.g. predicting the reference).
    """
    pred, real = _check_pair(pred, real)
    pred_reference = reference if pred_reference is None else pred_reference
    return _rowwise_pearson(pred - pred_reference, real - reference)


def weighted_delta_r2(pred: np.ndarray, real: np.ndarray, weights: np.ndarray, mu_all: np.ndarray) -> np.ndarray:
    """Weighted R² of Δ = x - mu_all (Eq. R2w), one value per perturbation. Shapes (P, G) -> (P,).

    The reference is the mean of all perturbation pseudobulks, *not* the control: predicting ``mu_all``
    gives Δpred = 0 and R²_w ≈ 0 (exactly ``-mean_w(Δ)**2 / var_w(Δ)``), however strong the shared shift.
    """
    pred, real = _check_pair(pred, real)
    w = np.asarray(weights, float)
    d_real, d_pred = real - mu_all, pred - mu_all
    center = np.sum(w * d_real, axis=1, keepdims=True) / np.sum(w, axis=1, keepdims=True)
    ss_res = np.sum(w * (d_real - d_pred) ** 2, axis=1)
    ss_tot = np.sum(w * (d_real - center) ** 2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ss_tot > 0, 1 - ss_res / ss_tot, np.nan)


def score_pseudobulk(
    pred: np.ndarray,
    real: np.ndarray,
    weights: np.ndarray,
    mu_ctrl: np.ndarray,
    mu_all: np.ndarray,
    pred_ctrl: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every metric, side by side, for pseudobulk arrays of shape (P, G); each value has shape (P,).

    Keys: ``mse``, ``mae`` (all genes), ``pearson_delta_ctrl`` (Δ vs control), ``pearson_delta_all``
    (Δ vs mu_all), ``wmse``, ``r2w_delta`` (weighted R² of Δ vs mu_all).
    """
    return {
        "mse": mse(pred, real),
        "mae": mae(pred, real),
        "pearson_delta_ctrl": pearson_delta(pred, real, mu_ctrl, pred_ctrl),
        "pearson_delta_all": pearson_delta(pred, real, mu_all),
        "wmse": wmse(pred, real, weights),
        "r2w_delta": weighted_delta_r2(pred, real, weights, mu_all),
    }


def diversity_ratio(pred: np.ndarray, real: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Mode-collapse measure: mean pairwise distance of predicted profiles / that of the real ones.

    Pairwise distances between Δ vectors do not depend on the reference (it cancels). With ``weights``
    (P, G) the distance uses the mean weight vector ``w̄`` (genes that are DEGs somewhere):
    ``d(a, b) = sqrt(sum_g w̄_g (a_g - b_g)**2)``. A collapsed model (all predictions alike) gives ≪ 1.
    """
    pred, real = _check_pair(pred, real)
    if pred.shape[0] < 2:
        raise ValueError("the diversity ratio needs at least 2 perturbations")
    scale = np.ones(pred.shape[1]) if weights is None else np.asarray(weights).mean(axis=0)
    root = np.sqrt(scale)

    def mean_pdist(x: np.ndarray) -> float:
        from scipy.spatial.distance import pdist

        return float(pdist(x * root).mean())

    return mean_pdist(pred) / mean_pdist(real)
