"""Simulation and evaluation harness with the BOBCAT / BECAT protocol.

Per examinee, the observed responses are split at random into an 80 % query pool (what a selector may ask)
and a 20 % held-out set. A selector asks T items from the pool, one at a time; after every item the
ability is re-estimated by MAP (N(0, 1) prior). Metrics at every test length t:

- RMSE(theta_hat_t, theta*) with theta* the MAP estimate from the whole query pool (the "full-bank" target
  that gradient matching aims at), and RMSE against the true theta when it is known (synthetic data);
- ACC and AUC of the held-out responses predicted with P_j(theta_hat_t), pooled over examinees.

"Items needed" to reach a baseline's accuracy at length T is the (linearly interpolated) first t at which
a selector's RMSE curve drops to the baseline's RMSE at T; the paper's "% fewer questions" is 1 - that / T.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from icml26.gpm.irt import ItemBank, check_responses, estimate_ability
from icml26.gpm.selectors import Selector, TestState

logger = logging.getLogger(__name__)


@dataclass
class Split:
    """Per-examinee query pool and held-out masks, both bool arrays of shape (N, J)."""

    pool: np.ndarray
    heldout: np.ndarray


def split_pool(responses, rng: np.random.Generator, heldout_frac: float = 0.2) -> Split:
    """Split each examinee's observed items into a query pool and a held-out set (at least one each)."""
    x = check_responses(responses)
    if not 0 < heldout_frac < 1:
        raise ValueError("heldout_frac must lie in (0, 1)")
    obs = ~np.isnan(x)
    key = np.where(obs, rng.random(x.shape), np.inf)
    rank = np.argsort(np.argsort(key, axis=1), axis=1)  # 0 .. n_obs-1 over observed items
    n_held = np.maximum(1, np.round(heldout_frac * obs.sum(axis=1))).astype(int)
    heldout = obs & (rank < n_held[:, None])
    return Split(pool=obs & ~heldout, heldout=heldout)


def _map_asked(bank: ItemBank, items: np.ndarray, answers: np.ndarray, theta0: np.ndarray, n_iter: int = 12):
    """MAP (N(0,1) prior) from the asked items only: items, answers of shape (B, t). Fisher scoring."""
    a = bank.a[items, 0]
    b, c = bank.b[items], bank.c[items]
    ok = items >= 0
    theta = theta0.copy()
    for _ in range(n_iter):
        p = np.clip(c + (1 - c) / (1 + np.exp(-a * (theta[:, None] - b))), 1e-12, 1 - 1e-12)
        w = (p - c) / (p * (1 - c)) * ok
        score = np.sum(a * w * (answers - p), axis=1) - theta
        info = np.sum(a**2 * w * (p - c) * (1 - p) / (1 - c), axis=1) + 1.0
        step = np.clip(score / info, -1.0, 1.0)
        theta = np.clip(theta + step, -6.0, 6.0)
        if np.max(np.abs(step)) < 1e-8:
            break
    return theta, 1.0 / np.sqrt(info)


def run_cat(
    bank: ItemBank,
    selector: Selector,
    responses,
    pool,
    n_items: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Simulate adaptive tests for every examinee in parallel.

    Parameters
    ----------
    bank : ItemBank (unidimensional)
    selector : Selector
    responses : array of shape (N, J)
        The examinees' (simulated or recorded) answers; only pool items are ever revealed.
    pool : bool array of shape (N, J)
    n_items : int
        Test length T.

    Returns
    -------
    thetas : array of shape (T + 1, N)
        MAP estimate after 0, 1, ..., T items.
    asked : int array of shape (N, T)
        Items asked in order (-1 where an examinee's pool ran out).
    seconds_per_step : float
        Mean wall time of one selection step for the whole batch.
    """
    from icml26.gpm.selectors import check_bank, check_selector

    check_bank(bank)
    check_selector(selector)
    x = check_responses(responses, bank.n_items)
    if bank.n_dims != 1:
        raise ValueError("adaptive tests here use a unidimensional bank; fit one with calibrate(model='2pl')")
    if n_items > bank.n_items:
        raise ValueError(f"asked for {n_items} items but the bank holds {bank.n_items}")
    if n_items < 1:
        raise ValueError("n_items must be >= 1")
    N, J = x.shape
    available = np.asarray(pool, dtype=bool).copy()
    state = TestState(np.full((N, J), np.nan), available, np.zeros(N), 0)
    thetas = [state.theta.copy()]
    asked = np.full((N, n_items), -1)
    answers = np.zeros((N, n_items))
    rows = np.arange(N)
    select_time = 0.0
    for t in range(n_items):
        start = time.perf_counter()
        items = selector.select(bank, state, rng)
        select_time += time.perf_counter() - start
        ok = items >= 0
        if np.any(ok & ~available[rows, np.maximum(items, 0)]):
            raise RuntimeError(f"selector {selector.name} chose an unavailable item")
        asked[:, t] = items
        answers[ok, t] = x[rows[ok], items[ok]]
        state.responses[rows[ok], items[ok]] = answers[ok, t]
        available[rows[ok], items[ok]] = False
        state.theta, _ = _map_asked(bank, asked[:, : t + 1], answers[:, : t + 1], state.theta)
        state.step = t + 1
        thetas.append(state.theta.copy())
    return np.stack(thetas), asked, select_time / n_items


def auc_score(y: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC by the Mann-Whitney rank statistic (ties get half credit)."""
    y = np.asarray(y, dtype=bool)
    n_pos, n_neg = y.sum(), (~y).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    r = rankdata(score)
    return float((r[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@dataclass
class Curves:
    """Metric curves of one selector, each of shape (T + 1,) (index t = after t items)."""

    rmse_star: np.ndarray
    acc: np.ndarray
    auc: np.ndarray
    rmse_true: np.ndarray | None = None
    seconds_per_step: float = 0.0
    extra: dict = field(default_factory=dict)
    sq_err: np.ndarray | None = None
    """Per-examinee squared error (theta_hat_t - theta*)^2, shape (T + 1, N): for bootstrap intervals."""


def evaluate_selectors(
    bank: ItemBank,
    selectors: dict[str, Selector],
    responses,
    split: Split,
    n_items: int,
    rng: np.random.Generator,
    theta_true=None,
) -> dict[str, Curves]:
    """Run every selector on the same examinees and split; return their metric curves."""
    from icml26.gpm.selectors import check_bank, check_selector

    check_bank(bank)
    if not isinstance(selectors, dict):
        raise TypeError(f"selectors must be a dict name -> Selector; got {type(selectors).__name__}")
    for name, sel in selectors.items():
        check_selector(sel, f"selectors[{name!r}]")
    x = check_responses(responses, bank.n_items)
    pool_x = np.where(split.pool, x, np.nan)
    theta_star, _ = estimate_ability(bank, pool_x, "map")
    y_held = x[split.heldout]
    out = {}
    for name, sel in selectors.items():
        thetas, _, sps = run_cat(bank, sel, x, split.pool, n_items, np.random.default_rng(rng.integers(2**32)))
        sq_err = (thetas - theta_star[None, :]) ** 2
        rmse = np.sqrt(np.mean(sq_err, axis=1))
        acc, auc = np.empty(n_items + 1), np.empty(n_items + 1)
        for t in range(n_items + 1):
            p = bank.prob(thetas[t])[split.heldout]
            acc[t] = np.mean((p > 0.5) == (y_held == 1))
            auc[t] = auc_score(y_held, p)
        rmse_true = None
        if theta_true is not None and np.ndim(theta_true) == 1:
            rmse_true = np.sqrt(np.mean((thetas - np.asarray(theta_true)[None, :]) ** 2, axis=1))
        out[name] = Curves(rmse, acc, auc, rmse_true, sps, sq_err=sq_err)
        logger.info("%s: RMSE@%d = %.3f, AUC = %.3f, %.2g s/step", name, n_items, rmse[-1], auc[-1], sps)
    return out


def items_needed(curve: np.ndarray, target: float) -> float:
    """First (interpolated) test length t >= 1 at which a decreasing ``curve`` reaches ``target``.

    ``curve[t]`` is the error after t items. Returns ``inf`` if it never does within the curve.
    """
    curve = np.asarray(curve, dtype=float)
    for t in range(1, curve.size):
        if curve[t] <= target:
            if t == 1 or curve[t - 1] <= curve[t]:
                return float(t)
            return float(t - 1 + (curve[t - 1] - target) / (curve[t - 1] - curve[t]))
    return float("inf")


def items_to_target(curves: dict[str, Curves], targets) -> dict[str, np.ndarray]:
    """Items each selector needs (interpolated) to reach each target RMSE; ``inf`` beyond its curve."""
    targets = np.atleast_1d(np.asarray(targets, dtype=float))
    return {name: np.array([items_needed(c.rmse_star, r) for r in targets]) for name, c in curves.items()}


def saving_with_interval(
    ours: Curves, baseline: Curves, length: int, rng: np.random.Generator, n_boot: int = 200
) -> tuple[float, float, float]:
    """Share of questions saved, 1 - items(ours reaches baseline's RMSE at ``length``) / length, and its 95 %
    bootstrap interval over examinees (the same resampled examinees for both selectors: a paired bootstrap).

    ``ours`` needing more items than its curve holds counts as the curve's length + 1 (a bound).
    """
    if ours.sq_err is None or baseline.sq_err is None:
        raise ValueError("the curves carry no per-examinee errors (sq_err); run evaluate_selectors")

    def saving(idx):
        mine = np.sqrt(ours.sq_err[:, idx].mean(axis=1))
        target = np.sqrt(baseline.sq_err[length, idx].mean())
        return 1.0 - min(items_needed(mine, target), float(mine.size)) / length

    n = ours.sq_err.shape[1]
    point = saving(np.arange(n))
    boots = [saving(rng.integers(0, n, n)) for _ in range(n_boot)]
    low, high = np.percentile(boots, [2.5, 97.5])
    return float(point), float(low), float(high)
