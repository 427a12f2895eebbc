"""The accuracy-vs-length experiment: per-selector overrides of the GPM policy (negative controls)."""

from dataclasses import replace

import numpy as np

from icml26.gpm.config import SMOKE
from icml26.gpm.data import simulate
from icml26.gpm.experiment import compare_selectors, make_selector
from icml26.gpm.policy import GPMSelector


def test_make_selector_overrides_policy_hyper_parameters():
    bank = simulate(5, 20, np.random.default_rng(0)).bank
    sel = make_selector("gpm", bank, SMOKE, seed=3, epochs=0, anchor=False)
    assert (sel.epochs, sel.anchor, sel.seed, sel.hidden) == (0, False, 3, SMOKE.hidden)
    assert make_selector("gpm", bank, SMOKE, seed=3).epochs == SMOKE.epochs


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
    curves, _ = compare_selectors(data, cfg, 0, use_true_bank=True, gpm_kwargs={"epochs": 0})
    # an untrained GPM is MFI at its own estimate: the same accuracy curve as MFI here
    assert np.allclose(curves["gpm"].rmse_star, curves["mfi"].rmse_star, atol=0.05)
    assert fitted == {"bobcat": cfg.epochs, "gpm": 0}  # BOBCAT keeps its training
