"""Positive-control plants sized at the bar, and the A/A twin is a different model from the arm it stands for."""

import numpy as np
import pytest

from icml26.coherence.claims import PLANT_FACTOR, _finest_mix, _plant, _plant_whole, _Planted, word_codes
from icml26.coherence.experiment import coherent_arc_codes
from icml26.coherence.geometry import Geometry
from icml26.coherence.measures import feature_coherence, token_consistency


def test_plant_swaps_the_fewest_features_and_mixes_the_last_to_land_on_the_target():
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 400)
    geo = Geometry.circular(theta)
    aa = _Planted(rng.random((400, 16)), 1.0)  # an A/A code with no tuning

    def score(A):
        return feature_coherence(A, geo)["coherence"]

    ideal = coherent_arc_codes(theta, 16, rng)
    for bar in (0.1, 0.3):
        planted = _plant(aa, ideal, {"c": score}, {"c": bar}, seed=1)
        gain = np.nanmean(score(planted.codes)) - np.nanmean(score(aa.codes))
        swapped = int((planted.codes != aa.codes).any(0).sum())
        assert gain >= PLANT_FACTOR * bar
        # the last swap is mixed only partly (bisected), so the plant lands at its target, not up to 1/16 past it
        assert gain < PLANT_FACTOR * bar + 0.005, (bar, gain, swapped)
        mixed = [j for j in range(16) if not np.allclose(planted.codes[:, j], aa.codes[:, j])]
        full = [j for j in mixed if np.allclose(planted.codes[:, j], ideal[:, j] * aa.codes[:, j].max())]
        assert len(full) == len(mixed) - 1  # every swap whole but the last
        assert planted.mse == aa.mse


def test_word_plant_raises_top_token_consistency():
    rng = np.random.default_rng(3)
    ids = np.minimum(rng.zipf(1.4, 3000), 300)
    W = word_codes(ids, 8, rng)
    assert W.shape == (3000, 8) and np.all((W > 0).sum(0) >= 10)
    assert np.nanmean(token_consistency(W, ids)["consistency"]) == pytest.approx(1.0)


@pytest.mark.slow
def test_the_aa_twin_is_another_model_than_the_arm_it_replaces():
    from icml26.coherence.config import get_config
    from icml26.coherence.experiment import circle_runs, l1_twin

    cfg = get_config("smoke")
    twin, l1 = l1_twin(cfg, 3), circle_runs(cfg, 3)["l1"]
    assert twin.lam == l1.lam and not np.allclose(twin.codes, l1.codes)


def test_a_plant_from_two_ideals_raises_each_measure_past_its_own_target():
    """Compact bumps raise support compactness but not word consistency, same-word features the reverse: a
    two-ideal plant takes each replaced feature from the ideal of a measure still short of its target."""
    rng = np.random.default_rng(4)
    n, m = 600, 16
    ids = rng.integers(0, 30, n)
    A_c = np.zeros((n, m))  # ideal for "c": feature j fires on samples 0..39 (a block)
    A_c[:40] = 1.0
    A_w = word_codes(ids, m, rng)
    aa = _Planted(rng.random((n, m)) * (rng.random((n, m)) < 0.3), 1.0)

    def block(A):  # toy per-feature score: share of the support inside the block
        return np.array([(A[:40, j] > 0).sum() / max((A[:, j] > 0).sum(), 1) for j in range(A.shape[1])])

    def cons(A):
        return token_consistency(A, ids)["consistency"]

    scores, bars = {"c": block, "w": cons}, {"c": 0.2, "w": 0.2}
    planted = _plant(aa, {"c": A_c, "w": A_w}, scores, bars, seed=0)
    for k, fn in scores.items():
        assert np.nanmean(fn(planted.codes)) - np.nanmean(fn(aa.codes)) >= PLANT_FACTOR * bars[k], k
    assert (planted.codes != aa.codes).any(0).sum() < m  # not every feature swapped


def test_finest_mix_returns_a_weight_that_reaches():
    assert _finest_mix(lambda t: t >= 0.3) == pytest.approx(0.3, abs=2**-9)
    assert _finest_mix(lambda t: True) == pytest.approx(0.0, abs=2**-9)
    assert _finest_mix(lambda t: t >= 1.0) == 1.0


def test_a_whole_code_plant_lands_at_its_target_on_the_tiling():
    """The tiling is not a per-feature score: the plant scores each prefix and mixes the last swap partly."""
    from icml26.coherence.measures import arc_tiling

    rng = np.random.default_rng(6)
    theta = rng.uniform(0, 2 * np.pi, 600)
    aa = _Planted(rng.random((600, 16)), 1.0)  # tiling 0

    def gain(C):
        return arc_tiling(C, theta)["tiling"] - arc_tiling(aa.codes, theta)["tiling"]

    planted = _plant_whole(aa, coherent_arc_codes(theta, 16, rng), gain, 0.2, seed=2)
    assert PLANT_FACTOR * 0.2 <= gain(planted.codes) < PLANT_FACTOR * 0.2 + 0.05
    assert 0 < (planted.codes != aa.codes).any(0).sum() < 16


def test_tiling_plant_at_one_scale_raises_the_tiling_where_per_feature_scales_lower_it():
    """circle-tiling-v1's plant kept each replaced feature's own maximum: arcs replacing weak or dead features lost
    the most-active comparison to strong neighbours, so a full replacement could lower the tiling. v2 plants at the
    code's largest activation."""
    from icml26.coherence.measures import arc_tiling

    rng = np.random.default_rng(9)
    theta = rng.uniform(0, 2 * np.pi, 800)
    ideal = coherent_arc_codes(theta, 16, rng)
    amp = np.r_[0.0, 0.05, rng.uniform(0.3, 1.5, 14)]  # one dead feature, one weak, the rest uneven
    aa = _Planted(coherent_arc_codes(theta, 16, rng) * amp, 1.0)
    base = arc_tiling(aa.codes, theta)["tiling"]
    assert arc_tiling(ideal * np.maximum(aa.codes.max(0), 1e-6), theta)["tiling"] < base  # v1: every arc planted, lower

    def gain(C):
        return arc_tiling(C, theta)["tiling"] - base

    planted = _plant_whole(aa, ideal, gain, 0.05, seed=0, common_scale=True)
    assert PLANT_FACTOR * 0.05 <= gain(planted.codes) < PLANT_FACTOR * 0.05 + 0.03


def test_a_two_ideal_plant_lands_each_measure_at_its_target_when_the_second_ideal_also_raises_the_first():
    """Same-word features are compact too: planted after the compact bumps, they pushed compactness to 1.5-1.8x
    its bar (the referee's item 4). The bump swaps the word features make unnecessary are undone and each ideal's
    last swap is mixed only partly, so both measures land at 1.25 x their bars."""
    rng = np.random.default_rng(8)
    n, m = 600, 16
    ids = rng.integers(0, 30, n)
    A_w = word_codes(ids, m, rng)
    A_c = np.zeros((n, m))
    A_c[:40] = 1.0  # compact bumps: a block of samples

    def block(A):  # share of a feature's mass in the block or on its heaviest word: word features score 1 too
        mass = np.maximum(A.sum(0), 1e-12)
        on_word = np.array([np.bincount(ids, weights=A[:, j]).max() for j in range(A.shape[1])])
        return np.maximum(A[:40].sum(0), on_word) / mass

    def cons(A):
        return token_consistency(A, ids)["consistency"]

    aa = _Planted(rng.random((n, m)) * (rng.random((n, m)) < 0.3), 1.0)
    scores, bars = {"c": block, "w": cons}, {"c": 0.3, "w": 0.1}
    planted = _plant(aa, {"c": A_c, "w": A_w}, scores, bars, seed=0)
    assert planted.reached
    for k, fn in scores.items():
        gain = np.nanmean(fn(planted.codes)) - np.nanmean(fn(aa.codes))
        assert PLANT_FACTOR * bars[k] <= gain < PLANT_FACTOR * bars[k] + 0.01, (k, gain)
        assert planted.gains[k] == pytest.approx(gain)


def test_plants_record_their_size_and_say_when_the_target_is_out_of_reach():
    rng = np.random.default_rng(2)
    theta = rng.uniform(0, 2 * np.pi, 400)
    geo = Geometry.circular(theta)
    aa = _Planted(rng.random((400, 16)), 1.0)

    def score(A):
        return feature_coherence(A, geo)["coherence"]

    planted = _plant(aa, coherent_arc_codes(theta, 16, rng), {"c": score}, {"c": 0.1}, seed=0)
    record, why = planted.record()
    assert record["plant gain on the A/A code (c)"] >= PLANT_FACTOR * 0.1 and record["plant target reached"] == 1.0
    assert why == ""
    # a whole-code plant whose target no swap can reach: the all-swapped code, marked not reached
    out_of_reach = _plant_whole(aa, coherent_arc_codes(theta, 16, rng), lambda C: 0.0, 0.1, seed=0, name="g")
    record, why = out_of_reach.record()
    assert not out_of_reach.reached and record == {"plant gain on the A/A code (g)": 0.0, "plant target reached": 0.0}
    assert "target not reached" in why
