"""Sample-quality diagnostics against a known target: IMQ kernel Stein discrepancy, an estimate of the
relative Fisher information, per-dimension variance bias, MMD and mode balance.

Samples are arrays of shape ``(n, d)`` (e.g. the final states of n chains); ``score`` is ∇ log pi at the
samples, shape ``(n, d)``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax

__all__ = ["imq_ksd", "mmd", "mode_balance", "relative_fisher", "variance_bias"]


def _samples(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"samples must have shape (n >= 2, d), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("samples contain NaN or inf (the sampler diverged: reduce the step size)")
    return x


def imq_ksd(x, score, c: float = 1.0, beta: float = -0.5, unbiased: bool = False) -> float:
    """Kernel Stein discrepancy with the IMQ kernel k(x, y) = (c² + ‖x - y‖²)^β (Gorham & Mackey 2017).

    KSD² = (1/n²) Σ_ij k_p(x_i, x_j), with the Stein kernel
    k_p = s_iᵀs_j k + 2β B^(β-1) (s_j - s_i)ᵀ r - 2βd B^(β-1) - 4β(β-1) ‖r‖² B^(β-2),  r = x_i - x_j, B = c² + ‖r‖².

    Returns the square root of the V-statistic (≥ 0; zero only when the samples follow pi as n → ∞), or,
    with ``unbiased=True``, the U-statistic of KSD² (diagonal excluded; unbiased, may be slightly negative,
    and far more sensitive in high dimension, where the V-statistic's O(d/n) diagonal term dominates).
    """
    x = _samples(x)
    s = np.asarray(score, dtype=np.float64)
    if s.shape != x.shape:
        raise ValueError(f"score must have the samples' shape {x.shape}, got {s.shape}")
    if not (c > 0 and -1 < beta < 0):
        raise ValueError("IMQ kernel needs c > 0 and beta in (-1, 0)")
    n, d = x.shape
    sq_x = (x**2).sum(1)
    r2 = np.maximum(sq_x[:, None] + sq_x[None] - 2 * x @ x.T, 0.0)  # ‖x_i - x_j‖²  (n, n)
    base = c**2 + r2
    k = base**beta
    ss = s @ s.T  # s_i·s_j
    sx = (s * x).sum(1)
    # (s_j - s_i)·(x_i - x_j) = s_j·x_i - s_j·x_j - s_i·x_i + s_i·x_j
    cross = (x @ s.T) - sx[None] - sx[:, None] + (s @ x.T)
    kp = ss * k + 2 * beta * base ** (beta - 1) * cross
    kp += -2 * beta * d * base ** (beta - 1) - 4 * beta * (beta - 1) * r2 * base ** (beta - 2)
    if unbiased:
        return float((kp.sum() - np.trace(kp)) / (n * (n - 1)))
    return float(np.sqrt(max(kp.mean(), 0.0)))


def relative_fisher(x, score, bandwidth: float | None = None) -> float:
    """Estimate of the relative Fisher information FI(rho | pi) = E_rho ‖∇log rho - ∇log pi‖².

    ∇log rho is replaced by the leave-one-out Gaussian-KDE score of the samples,
    ∇log rhô(x_i) = Σ_{j≠i} w_ij (x_j - x_i) / h², w_i· = softmax_j(-‖x_i - x_j‖² / 2h²),
    with Scott's bandwidth by default. The KDE score is biased (towards pi smoothed by the kernel), so the
    estimate is for comparing samplers at the same n and d, not an absolute value.
    """
    x = _samples(x)
    s = np.asarray(score, dtype=np.float64)
    if s.shape != x.shape:
        raise ValueError(f"score must have the samples' shape {x.shape}, got {s.shape}")
    n, d = x.shape
    if bandwidth is None:
        bandwidth = float(np.sqrt(x.var(0).mean())) * n ** (-1.0 / (d + 4))
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be positive, got {bandwidth}")
    sq_x = (x**2).sum(1)
    r2 = np.maximum(sq_x[:, None] + sq_x[None] - 2 * x @ x.T, 0.0)
    logits = -r2 / (2 * bandwidth**2)
    np.fill_diagonal(logits, -np.inf)
    w = softmax(logits, axis=1)  # (n, n)
    kde_score = (w @ x - x) / bandwidth**2
    return float(((kde_score - s) ** 2).sum(1).mean())


def variance_bias(x, true_var) -> float:
    """Mean relative excess variance over dimensions, mean_j (Var̂(x_j) / Var_pi(x_j) - 1).

    Positive values mean a "hotter" (over-dispersed) law, the signature of gradient-noise bias.
    """
    x = _samples(x)
    true_var = np.broadcast_to(np.asarray(true_var, dtype=np.float64), (x.shape[1],))
    if (true_var <= 0).any():
        raise ValueError("true variances must be positive")
    return float((x.var(0, ddof=1) / true_var - 1).mean())


def mmd(x, y, bandwidth: float | None = None) -> float:
    """Unbiased MMD² with a Gaussian kernel between samples x (n, d) and reference samples y (m, d).

    Bandwidth: median pairwise distance of the pooled samples by default.
    """
    x, y = _samples(x), _samples(y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must have the same dimension, got {x.shape[1]} and {y.shape[1]}")
    z = np.concatenate([x, y])
    sq = (z**2).sum(1)
    r2 = np.maximum(sq[:, None] + sq[None] - 2 * z @ z.T, 0.0)
    if bandwidth is None:
        bandwidth = float(np.sqrt(np.median(r2[np.triu_indices(len(z), 1)]) / 2))
    k = np.exp(-r2 / (2 * bandwidth**2))
    n, m = len(x), len(y)
    kxx, kyy, kxy = k[:n, :n], k[n:, n:], k[:n, n:]
    return float(
        (kxx.sum() - np.trace(kxx)) / (n * (n - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1)) - 2 * kxy.mean()
    )


def mode_balance(probabilities, true_weights) -> float:
    """Total-variation distance between the estimated mode weights (mean of p(mode | x_i)) and the true ones."""
    p = np.asarray(probabilities, dtype=np.float64)
    w = np.asarray(true_weights, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != len(w):
        raise ValueError(f"probabilities must have shape (n, {len(w)}), got {p.shape}")
    return float(0.5 * np.abs(p.mean(0) - w).sum())
