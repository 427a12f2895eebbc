"""Contract v3 of U-Cast's claims: the A/A twin, the planted handicap and oracle, the probes and the measures."""

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.ucast import claims as C
from icml26.ucast.experiment import run_experiment, stage2

torch.set_num_threads(1)


def _late(res, name, metric):
    return res.scores[name][metric][C.SKIP_LEADS :].mean()


def test_the_twin_is_an_independent_run_of_the_comparators_recipe():
    twin, comparator = stage2("smoke", 0, "mae_twin")[0], stage2("smoke", 0, "mae")[0]
    assert twin.cfg == comparator.cfg  # the same recipe ...
    differ = [
        not torch.equal(a, b)
        for a, b in zip(twin.state_dict().values(), comparator.state_dict().values())
        if a.is_floating_point()
    ]
    assert any(differ)  # ... on its own seed stream: not the comparator reused bit-for-bit


def test_the_handicap_multiplies_the_comparators_scores_exactly():
    c = 1 / (1 - C.PLANTED_GAIN)
    plain = run_experiment("smoke", 0, stage2_variant="mae_twin")
    handicapped = run_experiment("smoke", 0, stage2_variant="mae_twin", comparator_handicap=c)
    for metric in ("crps", "rmse", "spread"):  # x -> truth + c (x - truth) scales all three by c
        np.testing.assert_allclose(
            handicapped.scores["mae_continued"][metric], c * plain.scores["mae_continued"][metric], rtol=1e-5
        )
        np.testing.assert_array_equal(handicapped.scores["ucast"][metric], plain.scores["ucast"][metric])
    with pytest.raises(ValueError, match="comparator_handicap"):
        run_experiment("smoke", 0, comparator_handicap=0.5)


@pytest.mark.parametrize(
    "claim_obj, key", [(C.crps_finetune, "CRPS gain vs MAE-continued"), (C.mean_skill, "RMSE gain vs MAE-continued")]
)
def test_the_positive_control_plants_the_gain_on_the_negatives_a_a_pair(claim_obj, key):
    negative = claim_obj(Scale.SMOKE, 0, Arm.NEGATIVE).measured[key]
    positive = claim_obj(Scale.SMOKE, 0, Arm.POSITIVE).measured[key]
    # 1 - gain is score(twin) / score(comparator); the handicap divides it by exactly 1 / (1 - PLANTED_GAIN)
    assert (1 - positive) == pytest.approx((1 - C.PLANTED_GAIN) * (1 - negative), rel=1e-5)
    assert negative != 0.0  # an A/A pair of independent runs, not one model twice


def test_the_oracle_is_planted_inside_the_band_with_stage_twos_skill():
    res = run_experiment("smoke", 0)
    oracle = C._calibrated_oracle("smoke", 0, res)
    scores = C._late_scores(C.stage1("smoke", 0), oracle, C._sweep_inits("smoke", 0)[2])
    m, k = C.stage1("smoke", 0).preset.eval_members, C.ORACLE_SPREAD
    assert scores["ssr"] == pytest.approx(np.sqrt((m + 1) / m) * k / np.sqrt(1 + k**2 / m), abs=0.03)
    assert scores["rmse"] == pytest.approx(_late(res, "ucast", "rmse"), rel=0.1)


def test_every_claim_has_three_arms_and_names_declared_mechanisms():
    names = {m.name for m in C.MECHANISMS}
    for c in C.CLAIMS:
        assert c.positive and Arm.POSITIVE in c.arms
        assert set(c.mechanisms) <= names


def test_probes_measure_the_component_against_its_reference():
    spread = C.dropout_spread(Scale.SMOKE, 0)
    assert spread["one-step spread, dropout off (ablated reference)"] == 0.0  # the ablated members are one forecast
    assert spread["dropout-spread"] == pytest.approx(
        spread["one-step spread, dropout on"] / spread["one-step RMSE, dropout off"]
    )
    widening = C.crps_widening(Scale.SMOKE, 0)
    ours, twin = run_experiment("smoke", 0), run_experiment("smoke", 0, stage2_variant="mae_twin")
    cont = ours.scores["mae_continued"]["spread"][0]
    assert twin.scores["mae_continued"]["spread"][0] == cont  # one comparator ensemble for both ratios
    assert widening["crps-widening"] == pytest.approx(
        (ours.scores["ucast"]["spread"][0] - twin.scores["ucast"]["spread"][0]) / cont
    )


def test_fast_inference_controls_time_an_a_a_twin_and_plant_15x():
    negative = C.fast_inference_v2(Scale.SMOKE, 0, Arm.NEGATIVE)
    assert negative.measured["network calls per member-step, EDM / U-Cast"] == 1.0
    assert negative.baselines["CRPS U-Cast twin (own dropout masks)"] != negative.measured["CRPS U-Cast"]
    assert abs(negative.measured["log10 speed-up at equal CRPS"]) < 0.5  # two runs of one forecaster: about 1x
    assert C.TWIN_HANDICAP == 1.5 * 10  # 1.5 times the claimed 10x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measures_read_a_planted_effect_at_its_size(seed):
    for check in (C._gain_check("crps"), C._gain_check("rmse")):
        assert check(seed)["planted"] == pytest.approx(C.MEASURE_PLANTED_GAIN, abs=0.004)
    m = 10  # the synthetic ensemble's members
    ssr = np.sqrt((m + 1) / m) * 0.85 / np.sqrt(1 + 0.85**2 / m)
    assert C._ssr_check(seed)["planted"] == pytest.approx(1 - ssr, abs=0.01)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measures_see_the_effect_and_its_absence(seed):
    for m in C.MEASURES:
        assert m.check(seed) == [], m.name
