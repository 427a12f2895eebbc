"""The accuracy-vs-length experiment: per-selector overrides of the GPM policy, caching, the items-needed measure."""

from dataclasses import replace

import numpy as np
import pytest

from icml26.gpm.config import SMOKE
from icml26.gpm.data import simulate
from icml26.gpm.evaluate import Curves, items_to_target, saving_with_interval
from icml26.gpm.experiment import compare_selectors, make_selector, selector_curves, trained_policy
from icml26.gpm.policy import GPMSelector


def test_make_selector_overrides_policy_hyper_parameters():
    bank = simulate(5, 20, np.random.default_rng(0)).bank
    sel = make_selector("gpm", bank, SMOKE, seed=3, epochs=0, anchor=False)
    assert (sel.epochs, sel.anchor, sel.seed, sel.hidden) == (0, False, 3, SMOKE.hidden)
    assert make_selector("gpm", bank, SMOKE, seed=3).epochs == SMOKE.epochs
    assert make_selector("gpm-endpoint", bank, SMOKE, seed=3).objective == "endpoint"
    with pytest.raises(ValueError, match="unknown selector"):
        make_selector("bobcatt", bank, SMOKE, seed=3)


def test_gpm_kwargs_reach_gpm_only(monkeypatch):
    fitted = {}
    real_fit = GPMSelector.fit

    def spy(self, responses, *args, **kwargs):
        fitted[self.name] = self.epochs
        return real_fit(self, responses, *args, **kwargs)

    monkeypatch.setattr(GPMSelector, "fit", spy)
    cfg = replace(SMOKE, n_items=20, n_train=40, n_test=20, test_length=4, max_length=5, hidden=8,
                  selectors=("mfi", "bobcat", "gpm"))  # fmt: skip
    data = simulate(60, 20, np.random.default_rng(1))
    untrained_mfi = {"epochs": 0, "init": "mfi", "inner": "fisher"}
    curves, _ = compare_selectors(data, cfg, 0, use_true_bank=True, gpm_kwargs=untrained_mfi)
    # an untrained MFI-initialised GPM is MFI at its own (MAP) estimate: the same accuracy curve as MFI here
    assert np.allclose(curves["gpm"].rmse_star, curves["mfi"].rmse_star, atol=1e-6)
    assert fitted == {"bobcat": cfg.epochs, "gpm": 0}  # BOBCAT keeps its training


def test_cached_curves_and_policies_are_reused():
    cfg = replace(SMOKE, n_items=15, n_train=40, n_test=20, n_recal=20, test_length=3, max_length=4, hidden=8)
    first = trained_policy("misspecified MIRT", cfg, 5, "gpm")
    assert trained_policy("misspecified MIRT", cfg, 5, "gpm") is first
    assert trained_policy("misspecified MIRT", cfg, 5, "gpm", epochs=0) is not first
    c = selector_curves("misspecified MIRT", cfg, 5, "mfi")
    assert selector_curves("misspecified MIRT", cfg, 5, "mfi") is c and c.sq_err.shape == (5, 20)


def _curves(sq_err):
    sq_err = np.asarray(sq_err, dtype=float)
    rmse = np.sqrt(sq_err.mean(axis=1))
    return Curves(rmse, rmse, rmse, sq_err=sq_err)


def test_items_needed_measure_ranks_ground_truth_first():
    """The measure on known answers: a selector as good as the target saves 0 %, an oracle that knows theta*
    after one item saves the most, and a worse one needs more items (a negative saving)."""
    rng = np.random.default_rng(0)
    T, n = 10, 300
    decay = 1.0 / np.sqrt(1 + np.arange(T + 6))[:, None]
    base = _curves(decay**2 * rng.chisquare(1, (1, n)))
    oracle = _curves(np.vstack([base.sq_err[:1], np.zeros((T + 5, n))]))  # exact after one item
    worse = _curves(base.sq_err * 1.5)
    s_self = saving_with_interval(base, base, T, rng, 100)
    np.testing.assert_allclose(s_self, 0.0, atol=1e-12)  # identical selectors: the same examinees resampled for both
    s_oracle, s_worse = saving_with_interval(oracle, base, T, rng, 100), saving_with_interval(worse, base, T, rng, 100)
    assert s_oracle[0] == pytest.approx(1 - 1 / T) and s_oracle[1] > s_self[2]
    assert s_worse[2] < 0.0
    needs = items_to_target({"base": base, "oracle": oracle}, [base.rmse_star[T]])
    assert needs["base"][0] == pytest.approx(T) and needs["oracle"][0] == 1.0
