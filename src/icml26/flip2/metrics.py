"""FLIP2 metrics: Spearman, NDCG (targets shifted to be >= 0), MSE on the scaled target, bootstrap CIs."""

from __future__ import annotations

import numpy as np
from scipy import stats


def _check(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(f"y_true {y_true.shape} and y_pred {y_pred.shape} must be 1-D of one length")
    if len(y_true) < 2:
        raise ValueError("need at least 2 test variants for a rank metric")
    if not (np.all(np.isfinite(y_true)) and np.all(np.isfinite(y_pred))):
        raise ValueError("targets and predictions must be finite")
    return y_true, y_pred


def spearman(y_true, y_pred) -> float:
    """Spearman's rho; 0 when either side is constant (no ranking information)."""
    y_true, y_pred = _check(y_true, y_pred)
    if np.ptp(y_true) == 0 or np.ptp(y_pred) == 0:
        return 0.0
    return float(stats.spearmanr(y_true, y_pred).statistic)


def ndcg(y_true, y_pred, k: int | None = None) -> float:
    """Normalised discounted cumulative gain of the ranking by ``y_pred``, relevance = ``y_true - min(y_true)``
    (the paper shifts targets to be non-negative). Ties in ``y_pred`` are averaged as in scikit-learn."""
    y_true, y_pred = _check(y_true, y_pred)
    rel = y_true - y_true.min()  # shift: relevance >= 0
    n = len(rel) if k is None else min(int(k), len(rel))
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    ideal = np.sort(rel)[::-1][:n] @ discount
    if ideal == 0:
        return 0.0
    # tie-averaged gain: variants with equal predictions share their summed relevance evenly
    order = np.argsort(-y_pred, kind="stable")
    ps, rs = y_pred[order], rel[order]
    _, start, counts = np.unique(-ps, return_index=True, return_counts=True)
    gains = np.repeat(np.add.reduceat(rs, start) / counts, counts)
    return float(gains[:n] @ discount / ideal)


def scaled_mse(y_true_scaled, y_pred_scaled) -> float:
    """MSE on the scaled target (targets z-scored with the training mean and sd)."""
    a, b = _check(y_true_scaled, y_pred_scaled)
    return float(np.mean((a - b) ** 2))


def bootstrap_ci(y_true, y_pred, metric=spearman, *, n_boot: int = 200, seed: int = 0, level: float = 0.95):
    """Percentile bootstrap interval of ``metric`` over resampled test variants -> (low, high)."""
    y_true, y_pred = _check(y_true, y_pred)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(y_true), size=(n_boot, len(y_true)))
    vals = np.array([metric(y_true[i], y_pred[i]) for i in idx])
    a = (1 - level) / 2
    return float(np.quantile(vals, a)), float(np.quantile(vals, 1 - a))
