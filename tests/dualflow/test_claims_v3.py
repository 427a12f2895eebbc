"""Contract v3 of DCF's claims: the A/A twin, the planted oracles and forecaster, the probes and the measures."""

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.dualflow import claims as C
from icml26.dualflow.experiment import dataset, fit_dcf, n_train

torch.set_num_threads(1)


def test_the_twin_is_an_independent_fit_of_the_same_dcf():
    est, res = fit_dcf(Scale.SMOKE, 0, 0)
    twin, twin_res = fit_dcf(Scale.SMOKE, 0, C.TWIN)
    assert twin.hidden == est.hidden and twin.n_steps == est.n_steps  # the same recipe ...
    assert not np.allclose(twin_res.z_test, res.z_test)  # ... on its own initialisation and minibatches


def test_the_oracle_latent_is_the_truth_with_small_noise():
    z_train, z_test = C._oracle(Scale.SMOKE, 0)
    truth = dataset(Scale.SMOKE, 0).latents
    k = n_train(Scale.SMOKE)
    sd = truth.reshape(-1, 3).std(0)
    noise = np.concatenate([z_train, z_test]) - truth
    assert np.allclose(noise.reshape(-1, 3).std(0) / sd, C.ORACLE_NOISE, rtol=0.1)
    assert z_train.shape[0] == k


def test_the_planted_forecaster_scales_the_error_ratio_exactly():
    ex = fit_dcf(Scale.SMOKE, 0, 0)[1].extra
    planted = C._planted_rollout(ex)
    assert planted["rollout / linear dynamics"] == pytest.approx(C.PLANTED_ERROR**2, rel=1e-9)
    assert planted["flowed latent"] is ex["flowed latent"]  # scored against the same target


def test_the_denoiser_reconstructs_the_rates_better_with_more_components():
    extra = C._denoiser(Scale.SMOKE, 0).extra
    K = round(C.SETTINGS[Scale.SMOKE]["dcf"]["latent_budget"])
    assert 0 < extra["R2 vs rates K=3"] <= extra[f"R2 vs rates K={K}"] <= 1


@pytest.mark.parametrize("claim_obj", [C.better_latents, C.reconstruction])
def test_a_a_negative_differs_from_the_claim_but_measures_the_same(claim_obj):
    claim_run, negative = claim_obj(Scale.SMOKE, 0), claim_obj(Scale.SMOKE, 0, Arm.NEGATIVE)
    assert set(claim_run.measured) == set(negative.measured)
    judged = [j.key for j in claim_obj.judge]
    assert all(negative.measured[k] not in (0.0, 1.0) for k in judged)
    assert any(negative.measured[k] != claim_run.measured[k] for k in judged)


def test_planted_identifiable_structure_is_found():
    result = C.identifiable(Scale.SMOKE, 0, Arm.POSITIVE)
    assert result.measured["separated coordinates"] == 3  # the planted gaps of 2 pass the 1.5 rule
    assert result.measured["DCF cross-seed |cos| (separated)"] > 0.95  # the sign flips do not hurt |cos|


def test_every_claim_has_three_arms_and_declared_mechanisms():
    names = {m.name for m in C.MECHANISMS}
    for c in C.CLAIMS:
        assert c.positive and Arm.POSITIVE in c.arms and set(c.mechanisms) <= names


def test_probes_read_the_cached_fit():
    est, res = fit_dcf(Scale.SMOKE, 0, 0)
    compression = C.flow_compression(Scale.SMOKE, 0)
    assert compression["flow-compression"] == pytest.approx(1 - est.effective_dim_ / res.extra["PCA dimension"])
    assert -1 <= C.nested_dropout_ordering(Scale.SMOKE, 0)["nested-dropout-ordering"] <= 1
    assert C.dynamics_flow(Scale.SMOKE, 0)["dynamics-flow"] == pytest.approx(res.extra["rollout / persistence"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measures_see_the_effect_and_its_absence(seed):
    for m in C.MEASURES:
        assert m.check(seed) == [], m.name
