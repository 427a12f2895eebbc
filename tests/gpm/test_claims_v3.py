"""Contract-v3 pieces of the gpm claims: the handicapped baseline, MFI's A/A partner, the probes, the measure."""

import numpy as np
import pytest

from icml26.gpm.claims import MEASURES, _JitteredMFI, _prefix_disagreement, handicapped
from icml26.gpm.data import simulate
from icml26.gpm.evaluate import Curves, evaluate_selectors, run_cat, saving_with_interval, split_pool
from icml26.gpm.selectors import MFISelector


def _curves(rng, n=300, T=20):
    """Per-examinee squared errors that fall like 1 / (1 + t), with examinee-level noise: (T + 1, n)."""
    t = np.arange(T + 1)[:, None]
    sq = rng.gamma(4.0, 0.25, size=(1, n)) / (1.0 + t)
    return Curves(np.sqrt(sq.mean(axis=1)), np.zeros(T + 1), np.zeros(T + 1), sq_err=sq)


@pytest.mark.parametrize("margin", [10.0, 20.0])
def test_a_selector_equal_to_the_baseline_saves_the_handicap(margin):
    rng = np.random.default_rng(3)
    c = _curves(rng)
    saving = saving_with_interval(c, handicapped(c, margin), 20, rng, n_boot=1)[0]
    assert 100 * saving == pytest.approx(margin, abs=1.5)
    assert 100 * saving_with_interval(c, c, 20, rng, n_boot=1)[0] == pytest.approx(0.0, abs=1e-9)


def test_jittered_mfi_is_an_a_a_partner_of_mfi():
    rng = np.random.default_rng(0)
    data = simulate(300, 40, rng, "2pl")
    x = data.responses
    split = split_pool(x, rng)
    asked = {}

    for name, sel in {"mfi": MFISelector(), "jit": _JitteredMFI(np.random.default_rng(1))}.items():
        _, asked[name], _ = run_cat(data.bank, sel, x, split.pool, 10, np.random.default_rng(0))
    d = _prefix_disagreement(asked["mfi"], asked["jit"])
    assert 0.0 < d < 0.5  # its own randomness, but nearly MFI
    curves = evaluate_selectors(data.bank, {"mfi": MFISelector(), "jit": _JitteredMFI(np.random.default_rng(2))},
                                x, split, 12, rng)  # fmt: skip
    assert abs(100 * saving_with_interval(curves["jit"], curves["mfi"], 10, rng, n_boot=1)[0]) < 10


def test_prefix_disagreement_counts_from_the_first_difference():
    a = np.array([[1, 2, 3, 4], [1, 2, 3, 4]])
    b = np.array([[1, 9, 3, 4], [1, 2, 3, 4]])
    assert _prefix_disagreement(a, b) == pytest.approx(3 / 8)


@pytest.mark.parametrize("seed", [0, 1])
def test_saving_measure_sees_the_oracle_the_null_and_a_planted_saving(seed):
    for m in MEASURES:
        assert m.check(seed) == [], m.name


def test_accuracy_claims_negative_is_the_baselines_a_a_partner_and_positive_plants_on_it():
    from icml26.claims import Arm, Scale
    from icml26.gpm.claims import PLANTED, path_matching_matters

    key = "misspec % fewer than end-point"
    neg = path_matching_matters(Scale.SMOKE, 0, Arm.NEGATIVE).measured
    pos = path_matching_matters(Scale.SMOKE, 0, Arm.POSITIVE).measured
    assert neg[key] != 0.0  # two independently initialised policies, not one policy twice
    assert neg[key] == pytest.approx(neg["misspec A/A: second end-point % fewer than end-point (reported)"])
    assert pos[key] - neg[key] == pytest.approx(PLANTED["path-matching"], abs=4.0)  # the plant reads at its size
