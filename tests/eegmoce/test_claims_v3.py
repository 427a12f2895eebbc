"""Contract v3 pieces of eegmoce: the planted handicap, the independent replicate, the measures both ways."""

import numpy as np
import pytest
import torch

from icml26.eegmoce.claims import MEASURES, handicap
from icml26.eegmoce.data import simulate
from icml26.eegmoce.model import ModelConfig, TrainConfig, cross_validate

torch.set_num_threads(1)


@pytest.mark.parametrize("seed", [0, 4])
def test_handicap_takes_exactly_the_planted_gain_from_correct_answers(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 300)
    pred = np.where(rng.random(300) < 0.6, y, (y + 2) % 3)
    worse = handicap(pred, y, 0.0334, np.random.default_rng(seed + 1))
    assert (pred == y).sum() - (worse == y).sum() == round(0.0334 * 300)
    assert np.array_equal(worse[pred != y], pred[pred != y])  # wrong answers stay as they were
    assert np.all((worse == y) <= (pred == y))


def test_a_replicate_keeps_the_folds_but_not_the_initialisation():
    d = simulate(4, 6, seed=3)
    mcfg, tcfg = ModelConfig(), TrainConfig(epochs=1, domains_per_batch=2, trials_per_domain=6, warmup_epochs=0)
    a = cross_validate(d, "euclid-xattn", mcfg, tcfg, n_folds=2, seed=3, keep_models=True)
    b = cross_validate(d, "euclid-xattn", mcfg, tcfg, n_folds=2, seed=3, keep_models=True, init_seed=7)
    again = cross_validate(d, "euclid-xattn", mcfg, tcfg, n_folds=2, seed=3, keep_models=True, init_seed=3)
    assert a.test_subjects == b.test_subjects  # the same held-out subjects
    wa, wb, wc = (next(r.models[0].parameters()).detach() for r in (a, b, again))
    assert not torch.equal(wa, wb) and torch.equal(wa, wc)  # init_seed=seed is the default run


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_measures_see_the_truth_and_the_null(seed):
    for check in MEASURES:
        assert check.check(seed) == [], check.name
