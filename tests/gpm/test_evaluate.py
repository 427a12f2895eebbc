import numpy as np
import pytest

from icml26.gpm.data import simulate
from icml26.gpm.evaluate import auc_score, evaluate_selectors, items_needed, run_cat, split_pool
from icml26.gpm.irt import estimate_ability
from icml26.gpm.selectors import MFISelector, RandomSelector


def test_split_pool_partitions_observed_items():
    rng = np.random.default_rng(0)
    x = (rng.random((50, 40)) < 0.5).astype(float)
    x[rng.random(x.shape) < 0.1] = np.nan
    s = split_pool(x, rng)
    obs = ~np.isnan(x)
    assert not np.any(s.pool & s.heldout)
    assert np.array_equal(s.pool | s.heldout, obs)
    np.testing.assert_allclose(s.heldout.sum(1), np.maximum(1, np.round(0.2 * obs.sum(1))))


def test_auc_matches_pair_counting():
    rng = np.random.default_rng(1)
    y = rng.random(60) < 0.4
    score = np.round(rng.random(60), 1)  # with ties
    pairs = [(s1 > s0) + 0.5 * (s1 == s0) for s1 in score[y] for s0 in score[~y]]
    assert auc_score(y, score) == pytest.approx(np.mean(pairs))
    assert np.isnan(auc_score(np.ones(3, bool), np.arange(3.0)))


def test_items_needed_interpolates():
    curve = np.array([1.0, 0.8, 0.6, 0.4, 0.3])
    assert items_needed(curve, 0.5) == pytest.approx(2.5)
    assert items_needed(curve, 0.8) == 1.0
    assert items_needed(curve, 0.1) == np.inf


def test_cat_map_equals_batch_map_on_asked_items():
    rng = np.random.default_rng(2)
    d = simulate(30, 40, rng)
    pool = np.ones_like(d.responses, dtype=bool)
    thetas, asked, _ = run_cat(d.bank, MFISelector(), d.responses, pool, 6, rng)
    assert thetas.shape == (7, 30) and asked.shape == (30, 6)
    assert all(len(set(row)) == 6 for row in asked)
    x = np.full_like(d.responses, np.nan)
    rows = np.arange(30)[:, None]
    x[rows, asked] = d.responses[rows, asked]
    ref, _ = estimate_ability(d.bank, x, "map")
    np.testing.assert_allclose(thetas[-1], ref, atol=1e-6)


def test_mfi_beats_random_on_well_specified_data():
    rng = np.random.default_rng(3)
    d = simulate(400, 100, rng)
    split = split_pool(d.responses, rng)
    curves = evaluate_selectors(
        d.bank, {"random": RandomSelector(), "mfi": MFISelector()}, d.responses, split, 10, rng, d.theta
    )
    assert curves["mfi"].rmse_star[10] < 0.85 * curves["random"].rmse_star[10]
    assert curves["mfi"].rmse_true[10] < curves["random"].rmse_true[10]
    assert np.all(np.diff(curves["mfi"].rmse_star[1:]) < 0.05)  # accuracy improves with length


def test_bad_test_lengths():
    rng = np.random.default_rng(4)
    d = simulate(5, 10, rng)
    pool = np.ones_like(d.responses, dtype=bool)
    with pytest.raises(ValueError, match="bank holds 10"):
        run_cat(d.bank, MFISelector(), d.responses, pool, 11, rng)
    with pytest.raises(ValueError, match=">= 1"):
        run_cat(d.bank, MFISelector(), d.responses, pool, 0, rng)
