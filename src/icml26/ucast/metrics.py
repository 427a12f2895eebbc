"""Probabilistic verification, vectorised (numpy for scores, torch for the training losses).

Conventions (WeatherBench2 / the paper):

* area weights w(lat) = cos(lat) normalised to mean 1 over latitudes;
* fair CRPS (Zamo & Naveau 2018), per grid point, for members X_1..X_M and truth y::

      CRPS_fair = 1/M sum_m |X_m - y|  -  1/(2 M (M-1)) sum_{m, m'} |X_m - X_m'|

  computed either from all pairs (O(M^2)) or from the sorted members (O(M log M)) using
  sum_{m,m'} |X_m - X_m'| = 2 sum_i (2i - M - 1) X_(i);
* ensemble-mean RMSE, two conventions: ``"wb2"`` = sqrt(mean over inits of the area-weighted MSE)
  (current WeatherBench2), ``"per_init"`` = mean over inits of sqrt(area-weighted MSE) (U-Cast's script);
* spread = sqrt(mean over inits of the area-weighted unbiased member variance); spread-skill ratio
  SSR = sqrt((M+1)/M) * spread / RMSE_wb2, which is 1 for a calibrated ensemble.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = [
    "ensemble_scores",
    "fair_crps",
    "fair_crps_torch",
    "lat_weighted_mae_torch",
    "rank_histogram",
]


def _check_members(m: int) -> None:
    if m < 2:
        raise ValueError(f"the fair CRPS and the spread-skill ratio need at least 2 members, got {m}")


def fair_crps(ens: np.ndarray, obs: np.ndarray, member_axis: int = 0, method: str = "sorted") -> np.ndarray:
    """Fair (unbiased) CRPS per point.

    Parameters
    ----------
    ens : array of shape (..., M, ...)
        Ensemble, members along ``member_axis``.
    obs : array broadcastable to ``ens`` without the member axis
    method : {"sorted", "pairwise"}
        O(M log M) sorted form or O(M^2) pairwise form; both give the same value.

    Returns
    -------
    array of shape ``ens.shape`` without ``member_axis``
    """
    ens = np.moveaxis(np.asarray(ens, dtype=np.float64), member_axis, 0)  # (M, ...)
    obs = np.asarray(obs, dtype=np.float64)
    m = ens.shape[0]
    _check_members(m)
    skill = np.abs(ens - obs).mean(axis=0)
    if method == "pairwise":
        spread_sum = sum(np.abs(ens - ens[i]).sum(axis=0) for i in range(m))  # O(M^2) work, O(M) memory
    elif method == "sorted":
        coef = (2 * np.arange(1, m + 1) - m - 1).reshape((m,) + (1,) * (ens.ndim - 1))
        spread_sum = 2 * (coef * np.sort(ens, axis=0)).sum(axis=0)
    else:
        raise ValueError(f"method must be 'sorted' or 'pairwise', got {method!r}")
    return skill - spread_sum / (2 * m * (m - 1))


def fair_crps_torch(ens: torch.Tensor, obs: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Area-weighted fair CRPS loss (differentiable), mean over everything.

    ``ens``: (M, B, C, H, W); ``obs``: (B, C, H, W); ``weights``: (H,) latitude weights of mean 1.
    For M = 2 this is 1/2 (|X_1 - y| + |X_2 - y|) - 1/2 |X_1 - X_2|.
    """
    m = ens.shape[0]
    _check_members(m)
    skill = (ens - obs.unsqueeze(0)).abs().mean(0)  # (B, C, H, W)
    coef = (2 * torch.arange(1, m + 1, device=ens.device, dtype=ens.dtype) - m - 1).view(-1, 1, 1, 1, 1)
    spread = 2 * (coef * ens.sort(dim=0).values).sum(0) / (2 * m * (m - 1))
    crps = skill - spread
    if weights is not None:
        crps = crps * weights.view(1, 1, -1, 1)
    return crps.mean()


def lat_weighted_mae_torch(pred: torch.Tensor, obs: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Area-weighted MAE (stage-1 loss; equals the CRPS of a one-member forecast). (B, C, H, W) inputs."""
    err = (pred - obs).abs()
    if weights is not None:
        err = err * weights.view(1, 1, -1, 1)
    return err.mean()


def _area_mean(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mean over the last two axes (lat, lon) with latitude weights of shape (H,)."""
    return (x * weights[:, None]).mean(axis=(-2, -1)) / weights.mean()


def ensemble_scores(fc: np.ndarray, truth: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Per-lead, per-channel scores of an ensemble.

    Parameters
    ----------
    fc : array of shape (M, N, S, C, H, W)
        M members, N initial conditions, S lead times, C channels.
    truth : array of shape (N, S, C, H, W)
    weights : array of shape (H,)
        Latitude weights (mean 1).

    Returns
    -------
    dict of arrays of shape (S, C)
        ``crps`` (area-weighted fair CRPS, mean over inits), ``rmse`` (ensemble mean, WB2 convention),
        ``rmse_per_init`` (the other convention), ``spread``, ``ssr`` (with the sqrt((M+1)/M) factor),
        ``mae_mean`` (MAE of the ensemble mean).
    """
    fc = np.asarray(fc, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if fc.ndim != 6 or truth.shape != fc.shape[1:]:
        raise ValueError(f"fc must be (M, N, S, C, H, W) and truth (N, S, C, H, W); got {fc.shape}, {truth.shape}")
    m = fc.shape[0]
    _check_members(m)
    weights = np.asarray(weights, dtype=np.float64)
    crps = _area_mean(fair_crps(fc, truth), weights).mean(axis=0)  # (S, C)
    mean = fc.mean(axis=0)
    mse = _area_mean((mean - truth) ** 2, weights)  # (N, S, C)
    var = _area_mean(fc.var(axis=0, ddof=1), weights)  # (N, S, C)
    rmse = np.sqrt(mse.mean(axis=0))
    spread = np.sqrt(var.mean(axis=0))
    return {
        "crps": crps,
        "rmse": rmse,
        "rmse_per_init": np.sqrt(mse).mean(axis=0),
        "spread": spread,
        "ssr": np.sqrt((m + 1) / m) * spread / np.where(rmse > 0, rmse, np.nan),
        "mae_mean": _area_mean(np.abs(mean - truth), weights).mean(axis=0),
    }


def deterministic_scores(fc: np.ndarray, truth: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Scores of a single forecast (N, S, C, H, W): ``crps`` = MAE (CRPS of a point mass), ``rmse``."""
    fc, truth = np.asarray(fc, np.float64), np.asarray(truth, np.float64)
    if fc.shape != truth.shape:
        raise ValueError(f"forecast {fc.shape} and truth {truth.shape} differ in shape")
    weights = np.asarray(weights, dtype=np.float64)
    mse = _area_mean((fc - truth) ** 2, weights)
    return {
        "crps": _area_mean(np.abs(fc - truth), weights).mean(axis=0),
        "rmse": np.sqrt(mse.mean(axis=0)),
        "rmse_per_init": np.sqrt(mse).mean(axis=0),
    }


def rank_histogram(fc: np.ndarray, truth: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """Counts of the rank of the truth among the members (M + 1 bins); ties broken at random.

    ``fc``: (M, ...); ``truth``: fc.shape[1:]. A calibrated ensemble gives a flat histogram.
    """
    fc, truth = np.asarray(fc), np.asarray(truth)
    if truth.shape != fc.shape[1:]:
        raise ValueError(f"truth shape {truth.shape} must equal the forecast shape without members {fc.shape[1:]}")
    m = fc.shape[0]
    _check_members(m)
    rng = rng if rng is not None else np.random.default_rng(0)
    below = (fc < truth).sum(axis=0)
    ties = (fc == truth).sum(axis=0)
    ranks = below + (rng.random(below.shape) * (ties + 1)).astype(int)
    return np.bincount(ranks.ravel(), minlength=m + 1)
