"""Contract-v3 pieces of the flip2 claims: the planted handicap, the oracle prior, the probes, the measures."""

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.flip2.claims import (
    MEASURES,
    PLANTED_GAP,
    _land,
    _OracleEnergy,
    fitness_shift,
    handicap,
    zero_shot_prior,
)
from icml26.flip2.config import preset
from icml26.flip2.metrics import spearman

torch.set_num_threads(1)


@pytest.mark.parametrize("drop", [0.05, 0.2])
def test_handicap_lowers_spearman_by_the_planted_drop(drop):
    rng = np.random.default_rng(0)
    y = np.tanh(rng.normal(size=2000))  # a saturated, non-Gaussian target, as the Potts landscapes have
    pred = y + 0.8 * rng.normal(size=2000)
    s = spearman(y, pred)
    drops = [s - spearman(y, handicap(y, pred, drop, rng)) for _ in range(40)]
    assert np.mean(drops) == pytest.approx(drop, abs=0.01)


def test_handicap_keeps_the_ranking_without_a_drop_and_gives_noise_past_zero():
    rng = np.random.default_rng(1)
    y = rng.normal(size=500)
    pred = y + rng.normal(size=500)
    assert spearman(pred, handicap(y, pred, 0.0, rng)) == pytest.approx(1.0)
    assert abs(spearman(y, handicap(y, pred, 5.0, rng))) < 0.15  # a target below 0: independent noise


def test_oracle_energy_scores_wild_types_zero_and_ranks_fitness_best():
    land = _land(preset(Scale.SMOKE), 0)
    t = land.table
    idx = np.arange(len(t))
    oracle = _OracleEnergy(land.potts).fit().score(t, idx)
    assert np.allclose(oracle, land.potts.energy(_codes(t.sequences)) - land.potts.energy(_codes(_wts(t))))
    probe = zero_shot_prior(Scale.SMOKE, 0)
    assert probe["oracle energy (true Potts E) Spearman"] > probe["zero-shot-prior"] > 0.1


def _codes(seqs):
    from icml26.flip2.models import encode

    return encode(list(seqs))


def _wts(t):
    return [t.wild_types[w] for w in t.wt_of]


def test_fitness_shift_probe_sees_the_low_to_high_shift():
    assert fitness_shift(Scale.SMOKE, 0)["fitness-shift"] > 1.0


@pytest.mark.parametrize("seed", [0, 1])
def test_measures_see_the_truth_and_the_null(seed):
    for m in MEASURES:
        assert m.check(seed) == [], m.name


def test_gain_measure_reads_the_planted_handicap():
    gains = MEASURES[1].run(0)
    assert -3 * PLANTED_GAP < gains["handicapped ridge"] < 0 < gains["zsridge"] < gains["truth"]


def test_gb1_positive_control_is_the_oracle_builder():
    from icml26.flip2.claims import reproduces_flip_gb1

    r = reproduces_flip_gb1(Scale.SMOKE, 0, Arm.POSITIVE)
    assert r.verdict == "holds" and r.measured["split assignment mismatches"] == 0
    assert reproduces_flip_gb1(Scale.SMOKE, 0, control=True).measured["split assignment mismatches"] > 1000
