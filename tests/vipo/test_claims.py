"""Contract v3 pieces of vipo: the value term's gradient share (the mechanism probe), the planted positive model,
the A/A arms' own randomness, and the two measures checked both ways."""

import dataclasses

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.vipo import claims as C
from icml26.vipo.data import MisspecifiedSystem
from icml26.vipo.dynamics import DynamicsConfig, model_error, train_dynamics

torch.set_num_threads(1)


def _reward(s, a, s2):
    return MisspecifiedSystem.reward(s, a)


@pytest.mark.parametrize("seed", [0, 5])
def test_grad_share_is_linear_in_phi_and_absent_without_the_term(seed):
    """Before L_value joins, both runs are the same NLL training, so on its first step (one batch an epoch) the
    term's share of the gradient is exactly proportional to phi; phi = 0 builds no term and logs no share."""
    data = MisspecifiedSystem().dataset(10, 20, seed)
    cfg = DynamicsConfig(members=2, elites=1, hidden=(), epochs=3, batch=256, lr=1e-2, phi=1.0, value_hidden=(8,),
                         gamma=0.8, value_warmup_epochs=2)  # fmt: skip
    _, one = train_dynamics(data, cfg, seed, reward_fn=_reward)
    _, ten = train_dynamics(data, dataclasses.replace(cfg, phi=10.0), seed, reward_fn=_reward)
    _, off = train_dynamics(data, dataclasses.replace(cfg, phi=0.0), seed, reward_fn=_reward)
    assert len(one.value_grad_share) == 1 and one.value_grad_share[0] > 0  # logged once L_value is on
    assert ten.value_grad_share[0] == pytest.approx(10 * one.value_grad_share[0], rel=1e-4)
    assert off.value_grad_share == [] and off.value_gap == []


def test_towards_truth_cuts_the_model_error_by_the_planted_share():
    """The positive control's model: its mean error against f is (1 - lam) times the model's, on any states."""
    system = MisspecifiedSystem()
    data = system.dataset(10, 20, 1)
    cfg = DynamicsConfig(members=2, elites=1, hidden=(), epochs=3, batch=64, lr=1e-2, phi=0.0)
    model, _ = train_dynamics(data, cfg, 1, reward_fn=_reward)
    rng = np.random.default_rng(2)
    s, a = 2 * rng.normal(size=(300, 2)), rng.normal(size=(300, 1))
    base = model_error(model, s, a, system.f(s, a))
    for lam in (0.0, 0.5, 2 / 3, 1.0):
        planted = model_error(C.TowardsTruth(model, system, lam), s, a, system.f(s, a))
        assert planted == pytest.approx((1 - lam) ** 2 * base, rel=1e-3, abs=1e-9)


def test_the_aa_arm_trains_on_its_own_seed_stream():
    """The negative control is an A/A run: a second NLL model with other initialisation and batches -- close to
    the first (same data, same class), never bit-for-bit the same."""
    nll, _ = C._mech_model("smoke", 0, 0.0, 0)
    aa, _ = C._mech_model("smoke", 0, 0.0, C.AA_STREAM)
    again, _ = C._mech_model.__wrapped__("smoke", 0, 0.0, 0)
    same = [torch.equal(p, q) for p, q in zip(nll.parameters(), again.parameters(), strict=True)]
    differ = [torch.equal(p, q) for p, q in zip(nll.parameters(), aa.parameters(), strict=True)]
    assert all(same) and not any(differ)
    nll_m, aa_m = C._mechanism("smoke", 0, Arm.NEGATIVE)
    assert 0.5 < aa_m["one-step MSE"] / nll_m["one-step MSE"] < 2.0


def test_positive_arm_is_the_aa_model_moved_towards_the_truth():
    """The positive arm plants the effect on the A/A pair: planted at share 0 it is exactly the A/A arm (its own
    seed stream, so it carries the A/A noise); planted at share 1 (the true mean dynamics) the value gap is ~0."""
    nll_n, aa = C._mechanism("smoke", 0, Arm.NEGATIVE)
    nll_p, zero = C._mechanism("smoke", 0, Arm.POSITIVE, 0.0)
    assert nll_p["value gap"] == nll_n["value gap"]
    assert zero["value gap"] == aa["value gap"] and zero["policy-state error"] == aa["policy-state error"]
    _, full = C._mechanism("smoke", 0, Arm.POSITIVE, 1.0)
    assert full["value gap"] < 0.2 * aa["value gap"]
    assert 0.0 < C.PLANT_ERROR < C.PLANT_GAP < 1.0 and (1 - C.PLANT_ERROR) ** 2 == pytest.approx(0.85)


@pytest.mark.parametrize("measure", C.MEASURES, ids=lambda m: m.name)
def test_measures_see_the_truth_and_the_null(measure):
    assert measure.check(1) == []


def test_value_term_probe_reports_the_papers_raw_estimator():
    out = C.value_term_2d(Scale.SMOKE, 0)
    assert out["value-term-2d"] > C.LIVE_SHARE  # our estimator at phi = 30 acts
    assert out["share, paper's raw estimator at phi = 1e-4"] < C.LIVE_SHARE  # the paper's does not, here


def test_value_warmup_steps_train_the_values_only():
    """Extra warm-up TD steps draw their own batches: before L_value joins, the model is bit-for-bit the NLL run's,
    while the values (their learned gap) differ."""
    data = MisspecifiedSystem().dataset(10, 20, 0)
    cfg = DynamicsConfig(members=2, elites=1, hidden=(8,), epochs=2, batch=64, lr=1e-2, phi=1.0, value_hidden=(8,),
                         gamma=0.8, value_warmup_epochs=2)  # fmt: skip
    one, log1 = train_dynamics(data, cfg, 0, reward_fn=_reward)
    three, log3 = train_dynamics(data, dataclasses.replace(cfg, value_warmup_steps=3), 0, reward_fn=_reward)
    nll, _ = train_dynamics(data, dataclasses.replace(cfg, phi=0.0), 0, reward_fn=_reward)
    for a, b, c in zip(one.parameters(), three.parameters(), nll.parameters(), strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)
    assert log1.value_gap != log3.value_gap and log1.value_grad_share == [] == log3.value_grad_share


def test_hopper_probe_and_claim_at_smoke():
    """The Hopper probe reports both estimators and the A/A reference; the A/A arm is not the NLL model reused."""
    out = C.value_term_hopper(Scale.SMOKE, 0)
    assert out["share, paper's recipe (phi = 1e-4, no warm-up)"] < out["value-term-hopper"]
    assert out["policy-state error NLL (A/A) / NLL"] != 1.0 and out["|theta_VIPO - theta_NLL| / |theta_NLL|"] > 0
    neg = C.more_accurate_model_hopper(Scale.SMOKE, 0, Arm.NEGATIVE).measured["policy-state error VIPO / NLL"]
    pos = C.more_accurate_model_hopper(Scale.SMOKE, 0, Arm.POSITIVE).measured["policy-state error VIPO / NLL"]
    assert pos == pytest.approx(0.85 * neg)


def test_mujoco_return_claim_arms_at_smoke():
    """The return claim's A/A arm is MOPO on a second NLL ensemble with its own seed stream (never the host's run
    reused), the positive arm is exactly that A/A arm plus the planted gain on each task, and the probe reports
    both tasks' shares with the paper's recipe beside them."""
    key = "score MOPO+VIPO - MOPO (mean over tasks)"
    neg = C.improves_return_mujoco(Scale.SMOKE, 0, Arm.NEGATIVE)
    pos = C.improves_return_mujoco(Scale.SMOKE, 0, Arm.POSITIVE)
    assert pos.measured[key] == pytest.approx(neg.measured[key] + C.RETURN_PLANT)
    for task in C.RETURN_TASKS:
        assert neg.measured[f"policy-state MSE MOPO+VIPO {task}"] != neg.baselines[f"policy-state MSE MOPO {task}"]
        assert pos.measured[f"score MOPO+VIPO {task}"] == pytest.approx(
            neg.measured[f"score MOPO+VIPO {task}"] + C.RETURN_PLANT
        )
    probe = C.value_term_mujoco(Scale.SMOKE, 0)
    assert probe["value-term-mujoco"] == min(probe["share hopper"], probe["share halfcheetah"])
    assert probe["share halfcheetah, paper's recipe (phi = 1e-4, no warm-up)"] < probe["share halfcheetah"]
    for task in C.RETURN_TASKS:  # the model-error half: the A/A reference is a distinct ensemble, never NLL reused
        assert probe[f"|theta_NLL(A/A) - theta_NLL| / |theta_NLL| {task}"] > 0
        assert probe[f"policy-state error NLL (A/A) / NLL {task}"] != 1.0
        assert (
            np.isfinite(probe[f"prediction shift VIPO / A/A {task}"])
            and probe[f"prediction shift VIPO / A/A {task}"] > 0
        )
    assert C.RETURN_PLANT == pytest.approx(1.5 * C.RETURN_BAR)


def test_v2_mujoco_claims_read_the_real_medium_hopper_on_their_own_seeds():
    """The v2 claims read Hopper's real-medium set (the v1s keep the low-medium one), on a seed stream no other
    claim uses; their arms are v1's: A/A on its own seeds, positive = that A/A arm with the effect planted; the v2
    probe reports the paper's recipe ('before') next to ours ('after') on both tasks."""
    assert C.DATA_VERSIONS["v1"]["hopper"] == "hopper-medium"
    assert C.DATA_VERSIONS["v2"]["hopper"] == "hopper-medium-sac120k"
    assert len({C.V2_SEEDS, C.HOPPER_SEEDS, C.RETURN_SEEDS, C.FRESH_SEEDS, C.AA_STREAM}) == 5
    low, real = (C._task_data("smoke", "hopper", 0, v) for v in ("v1", "v2"))
    assert real["rewards"].mean() > low["rewards"].mean()  # the medium policy hops forward, the low one falls
    key = "policy-state error VIPO / NLL"
    neg = C.more_accurate_model_hopper_v2(Scale.SMOKE, 0, Arm.NEGATIVE).measured[key]
    pos = C.more_accurate_model_hopper_v2(Scale.SMOKE, 0, Arm.POSITIVE).measured[key]
    assert neg != 1.0 and pos == pytest.approx(0.85 * neg)
    assert neg != C.more_accurate_model_hopper(Scale.SMOKE, 0, Arm.NEGATIVE).measured[key]  # not v1's data
    key = "score MOPO+VIPO - MOPO (mean over tasks)"
    neg_r = C.improves_return_mujoco_v2(Scale.SMOKE, 0, Arm.NEGATIVE)
    pos_r = C.improves_return_mujoco_v2(Scale.SMOKE, 0, Arm.POSITIVE)
    assert pos_r.measured[key] == pytest.approx(neg_r.measured[key] + C.RETURN_PLANT)
    claim = C.improves_return_mujoco_v2(Scale.SMOKE, 0)
    for task in C.RETURN_TASKS:  # per-task MOPO vs MOPO+VIPO for the README
        assert np.isfinite(claim.measured[f"score MOPO+VIPO {task}"]) and np.isfinite(
            claim.baselines[f"score MOPO {task}"]
        )
    probe = C.value_term_mujoco_v2(Scale.SMOKE, 0)
    assert probe["value-term-mujoco-v2"] == min(probe["share hopper"], probe["share halfcheetah"])
    for task in C.RETURN_TASKS:
        assert probe[f"share {task}, paper's recipe (phi = 1e-4, no warm-up)"] < probe[f"share {task}"]
        assert probe[f"policy-state error paper's recipe / NLL {task}"] > 0
        assert probe[f"policy-state error NLL (A/A) / NLL {task}"] != 1.0


def test_mobile_mujoco_claim_reads_the_v2_ensembles_through_mobile():
    """MOBILE(+VIPO) on the v2 data: its own runs (not MOPO's scores relabelled), the same arms and plant."""
    key = "score MOBILE+VIPO - MOBILE (mean over tasks)"
    neg = C.improves_return_mobile_mujoco(Scale.SMOKE, 0, Arm.NEGATIVE)
    pos = C.improves_return_mobile_mujoco(Scale.SMOKE, 0, Arm.POSITIVE)
    assert pos.measured[key] == pytest.approx(neg.measured[key] + C.RETURN_PLANT)
    mopo = C.improves_return_mujoco_v2(Scale.SMOKE, 0, Arm.NEGATIVE)
    assert [neg.baselines[f"score MOBILE {t}"] for t in C.RETURN_TASKS] != [
        mopo.baselines[f"score MOPO {t}"] for t in C.RETURN_TASKS
    ]
