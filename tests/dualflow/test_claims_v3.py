"""Contract v3 of DCF's claims: the A/A twin, the planted oracles and forecaster, the probes and the measures."""

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.dualflow import claims as C
from icml26.dualflow.experiment import fit_dcf

torch.set_num_threads(1)


def test_the_twin_is_an_independent_fit_of_the_same_dcf():
    est, res = fit_dcf(Scale.SMOKE, 0, 0)
    twin, twin_res = fit_dcf(Scale.SMOKE, 0, C.TWIN)
    assert twin.hidden == est.hidden and twin.n_steps == est.n_steps  # the same recipe ...
    assert not np.allclose(twin_res.z_test, res.z_test)  # ... on its own initialisation and minibatches


def test_the_linear_twin_is_an_independent_fit_of_the_peer():
    ex = fit_dcf(Scale.SMOKE, 0, 0)[1].extra
    twin = C.linear_twin_forecast(Scale.SMOKE, 0, C.TWIN)
    assert twin.shape == ex["linear dynamics latent"].shape
    assert not np.allclose(twin, ex["linear dynamics latent"])  # its own bootstrap resample, not the peer reused
    scored = C._in_rollouts_place(ex, twin)
    assert scored["flowed latent"] is ex["flowed latent"]  # scored against the same target


def test_the_positive_controls_plant_the_bar_on_the_negatives_a_a_pair():
    key = "rollout / linear dynamics"
    neg, pos = (C.simulated_representation(Scale.SMOKE, 0, arm).measured[key] for arm in (Arm.NEGATIVE, Arm.POSITIVE))
    assert pos == pytest.approx(C.PLANTED_ERROR_RATIO * neg, rel=1e-9)  # the error scaled: the ratio exactly x 0.9
    key = "DCF (separated) - VAE (best permutation) cross-seed |cos|"
    neg, pos = (C.identifiable(Scale.SMOKE, 0, arm).measured[key] for arm in (Arm.NEGATIVE, Arm.POSITIVE))
    assert pos == pytest.approx(neg + C.PLANT * C.IDENTIFIABLE_BAR, abs=1e-12)
    for claim_obj in (C.better_latents, C.reconstruction, C.real_place_cells):
        neg, pos = claim_obj(Scale.SMOKE, 0, Arm.NEGATIVE), claim_obj(Scale.SMOKE, 0, Arm.POSITIVE)
        for j in claim_obj.judge:  # each difference raised by exactly 1.5 times its bar
            assert pos.measured[j.key] - neg.measured[j.key] == pytest.approx(C.PLANT * j.above, abs=1e-12)


def test_the_planted_envelope_puts_k_eff_at_0_8_over_p():
    for budget in (5.0, 10.0, 50.0):
        k_eff = C.effective_dimension(C.planted_envelope(budget, 200))
        assert abs(k_eff - C.PLANTED_KEFF * budget) <= 1  # inside the 1/p bar by about 20 %
    neg = C.low_dimensional_support(Scale.SMOKE, 0, Arm.NEGATIVE).measured
    pos = C.low_dimensional_support(Scale.SMOKE, 0, Arm.POSITIVE).measured
    assert pos["K_eff"] < neg["K_eff"]


@pytest.mark.parametrize("claim_obj", [C.better_latents, C.reconstruction, C.real_place_cells])
def test_a_a_negative_differs_from_the_claim_but_measures_the_same(claim_obj):
    claim_run, negative = claim_obj(Scale.SMOKE, 0), claim_obj(Scale.SMOKE, 0, Arm.NEGATIVE)
    assert set(claim_run.measured) == set(negative.measured)
    judged = [j.key for j in claim_obj.judge]
    assert all(negative.measured[k] not in (0.0, 1.0) for k in judged)
    assert any(negative.measured[k] != claim_run.measured[k] for k in judged)


@pytest.mark.parametrize("claim_obj", [C.identifiable, C.simulated_representation])
def test_a_a_negatives_compare_two_independent_copies_of_the_baseline(claim_obj):
    negative = claim_obj(Scale.SMOKE, 0, Arm.NEGATIVE).measured
    (key,) = [j.key for j in claim_obj.judge]
    assert np.isfinite(negative[key]) and negative[key] not in (0.0, 1.0)  # not one copy scored twice


def test_every_claim_has_three_arms_and_declared_mechanisms():
    names = {m.name for m in C.MECHANISMS}
    for c in C.CLAIMS:
        assert c.positive and Arm.POSITIVE in c.arms and set(c.mechanisms) <= names


def test_probes_read_the_cached_fit():
    est, res = fit_dcf(Scale.SMOKE, 0, 0)
    compression = C.flow_compression(Scale.SMOKE, 0)
    assert compression["flow-compression"] == pytest.approx(1 - est.effective_dim_ / res.extra["PCA dimension"])
    ordering = C.nested_dropout_ordering(Scale.SMOKE, 0)
    assert -2 <= ordering["nested-dropout-ordering"] <= 2
    assert ordering["nested-dropout-ordering"] == pytest.approx(
        ordering["head Spearman, nested dropout on"] - ordering["head Spearman, off (A/A reference)"]
    )
    assert C.dynamics_flow(Scale.SMOKE, 0)["dynamics-flow"] == pytest.approx(res.extra["rollout / persistence"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measures_see_the_effect_and_its_absence(seed):
    for m in C.MEASURES:
        assert m.check(seed) == [], m.name


def test_real_place_cells_folds_hold_both_directions_and_cover_every_lap():
    from icml26.dualflow.real import N_FOLDS, windows

    w = windows()
    assert set(np.unique(w.fold)) == set(range(N_FOLDS))
    for f in range(N_FOLDS):  # every fold spans most of the track (windows drop the laps' ends)
        assert np.ptp(w.position[w.fold == f]) > 0.6
