"""Granger calibration and power, correlation interval, hierarchy slope on known cases."""

import numpy as np
import pandas as pd
import pytest

from icml26.brainconverge.analysis import (
    granger,
    granger_null_fpr,
    hierarchy_slope,
    performance_correlation,
    planted_pair,
    select_lag,
)


def test_granger_recovers_planted_direction_and_is_calibrated():
    rng = np.random.default_rng(0)
    pairs = [planted_pair(60, rng) for _ in range(60)]
    power = np.mean([granger(x, y, maxlag=2)["p"] < 0.05 for x, y in pairs])
    reverse = np.mean([granger(y, x, maxlag=2)["p"] < 0.05 for x, y in pairs])
    assert power > 0.8 and reverse < 0.15
    fpr = granger_null_fpr(pairs[:20], n_perm=10, rng=rng, maxlag=2)
    assert 0.0 <= fpr < 0.12


def test_robust_granger_finds_the_direction_and_keeps_its_level_under_changing_variance():
    """The HC3 Wald test: power on a planted direction, near-nominal false positives on independent pairs whose
    increments shrink along training (the heteroscedasticity of learning curves); it agrees with the F-test's
    direction on homoscedastic series."""
    rng = np.random.default_rng(2)
    pairs = [planted_pair(40, rng) for _ in range(80)]
    power = np.mean([granger(x, y, maxlag=2, robust=True)["p"] < 0.05 for x, y in pairs])
    decay = np.exp(-np.arange(40) / 10)  # increments 50x larger early than late
    shrink = [np.cumsum(np.diff(s, prepend=0) * decay) for s in (p[1] for p in pairs)]
    fpr = np.mean([granger(shrink[i - 1], shrink[i], maxlag=2, robust=True)["p"] < 0.05 for i in range(80)])
    assert power > 0.7 and fpr < 0.15


def test_planted_direction_adds_the_lagged_cause_and_keeps_the_start():
    from icml26.brainconverge.claims import plant_direction

    rng = np.random.default_rng(3)
    cause, effect = planted_pair(30, rng)[0], np.cumsum(rng.standard_normal(30))
    planted = plant_direction(cause, effect, 0.6)
    assert planted[0] == effect[0] and planted.shape == effect.shape
    assert granger(cause, planted, maxlag=1, robust=True)["p"] < granger(cause, effect, maxlag=1, robust=True)["p"]


def test_levels_of_trending_series_give_spurious_causality():
    rng = np.random.default_rng(1)
    ind = [(planted_pair(40, rng)[0], planted_pair(40, rng)[1]) for _ in range(100)]
    diffd = np.mean([granger(x, y, maxlag=2)["p"] < 0.05 for x, y in ind])
    levels = np.mean([granger(x, y, maxlag=2, difference=False)["p"] < 0.05 for x, y in ind])
    assert diffd < 0.12 < levels


def test_granger_refuses_constant_and_short_series():
    with pytest.raises(ValueError, match="constant"):
        granger(np.arange(20.0), np.ones(20))
    with pytest.raises(ValueError, match="constant"):
        granger(np.arange(20.0), np.arange(20.0) * 2)  # linear trend: constant after differencing
    with pytest.raises(ValueError, match="too short"):
        granger(np.random.default_rng(0).random(6), np.random.default_rng(1).random(6))


def test_select_lag_finds_ar2_order():
    rng = np.random.default_rng(2)
    y = np.zeros(400)
    for t in range(2, 400):
        y[t] = 0.5 * y[t - 1] - 0.4 * y[t - 2] + rng.standard_normal()
    assert select_lag(y, 4) == 2


def test_correlation_interval_and_errors():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(50)
    out = performance_correlation(a, 2 * a + 0.5 * rng.standard_normal(50))
    assert out["ci_low"] < out["r"] < out["ci_high"] and out["r"] > 0.9 and out["p"] < 1e-10
    with pytest.raises(ValueError, match="constant"):
        performance_correlation(a, np.ones(50))
    with pytest.raises(ValueError, match="at least 4"):
        performance_correlation(a[:3], a[:3])


def test_hierarchy_slope_sign():
    rows = []
    for li, d in enumerate((1 / 3, 2 / 3, 1.0)):
        for roi, s in (("early", 0.9 - 0.2 * d), ("semantic", 0.5 + 0.3 * d)):
            rows.append(
                {
                    "model": "m",
                    "step": 0,
                    "subject": "s",
                    "roi": roi,
                    "layer_index": li,
                    "n_layers": 3,
                    "depth_frac": d,
                    "score": s,
                }
            )
    t = pd.DataFrame(rows)
    assert hierarchy_slope(t, "semantic", "early") == pytest.approx(0.5)
    assert hierarchy_slope(t, "early", "semantic") == pytest.approx(-0.5)
