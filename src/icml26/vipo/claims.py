"""The paper's headline claims at laptop scale, each in three arms (see README "Claims").

- ``closes-value-gap-v1`` (2-D mechanism system): VIPO's model (NLL + phi * L_value) has a much smaller true
  value gap |V^pi - V^pi_model| than the NLL-only ensemble, at a small cost in one-step MSE. Values are
  computed by Monte Carlo on the true system and through the model.
- ``more-accurate-model-v2`` (same system): the VIPO model predicts at least 10 % better on the states visited
  by the policy optimised on it (LQR on the learned linear model, rolled out in the true system).
- ``improves-offline-return-v3`` (Pendulum-v1 pipeline): MOPO+VIPO beats MOPO in normalised return.
- ``plug-in-v3`` (same pipeline): the same VIPO model training improves both MOPO and MOBILE.
- ``more-accurate-model-hopper-v1`` / ``improves-return-mujoco-v1`` (D4RL-like Hopper-v5 low-medium and
  HalfCheetah-v5 medium data): the VIPO model is 10 % more accurate on policy-visited states; MOPO+VIPO beats MOPO.
- ``more-accurate-model-hopper-v2`` / ``improves-return-mujoco-v2``: the same on Hopper's real-medium data (SAC
  120k steps, normalised 39.8), on a fresh seed stream shared by the two (:data:`V2_SEEDS`);
  ``improves-return-mobile-mujoco-v1``: the same ensembles plugged into MOBILE.
  (v3 of both: v2's recipe, whose phi and warm-up were chosen after seeing v2's seeds, judged on fresh seeds.)

The arms (contract v3):

- **negative** (A/A): the 'VIPO' arm is the plain NLL ensemble (phi = 0) trained -- and, in the pipeline, its
  policy learned and evaluated -- on its *own* seed stream (:data:`AA_STREAM`), so each paired statistic
  scatters around its null (ratio 1, difference 0) instead of sitting on it;
- **positive**: the claimed effect planted at about the claim's bar, on the A/A arm (its own seed stream), so
  the positive control carries the A/A noise and can fail. On the 2-D system the 'VIPO' model is the A/A NLL
  model moved a share of the way to the true mean dynamics: :data:`PLANT_GAP` for the value-gap claim (its
  model error halved; gap ratio about 0.42 against the bar 0.5), :data:`PLANT_ERROR` for the model-error claim
  (its squared error cut by 15 %, 1.5x the bar's 10 %); in the pipeline it is the A/A arm plus
  :data:`PLANTED_MARGIN` normalised points (1.5x the bar of 2).

``MECHANISMS``: the value term's share of the model gradient, ``||phi grad L_value|| / ||grad L_ori||``, in
the setting each family of claims trains (live above 1 %). ``MEASURES``: the Monte-Carlo value-gap ratio
(the true dynamics score 0, an A/A pair 1) and the normalised return (the scripted expert scores 100, uniform
random actions 0).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import torch

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.vipo.config import PRESETS
from icml26.vipo.data import MisspecifiedSystem, make_dataset, mc_value, normalised_score, termination_fn
from icml26.vipo.dynamics import model_error, train_dynamics
from icml26.vipo.policy import train_policy

#: Offset of the seed stream an A/A arm trains (and, in the pipeline, learns its policy) on.
AA_STREAM = 7919
#: Positive controls on the 2-D system: the share of the way from the A/A NLL model to the true mean dynamics.
#: closes-value-gap (bar: gap ratio < 0.5): the model error halved, a gap ratio of about 0.42 (1.2x the bar's cut).
PLANT_GAP = 0.5
#: more-accurate-model (bar: error ratio < 0.9): the squared error (1 - lam)^2 = 0.85 of the model's (1.5x the bar).
PLANT_ERROR = 1 - 0.85**0.5
#: Positive control in the pipeline: normalised points added to the A/A arm, 1.5x the claims' bar of 2 points
#: (v2 planted 10, the order of the paper's D4RL gains: five times the bar, not a test of the bar).
PLANTED_MARGIN = 3.0
#: The pipeline claims' v3 are judged on a fresh seed stream: seed + FRESH_SEEDS. Their values (phi = 1e-2, the
#: 60-epoch value warm-up) were fixed after seeing v2's seeds 0-4.
FRESH_SEEDS = 1000
#: A credited term is live when it carries more than this share of the model's gradient norm.
LIVE_SHARE = 0.01


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 3.8))


# ------------------------------------------------------------------------------------------------ 2-D system


def _torch_reward(s, a, s2):
    return MisspecifiedSystem.reward(s, a)


def linear_parts(model, obs_dim: int = 2, act_dim: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, b)`` with ``mean_step(s, a) = A s + B a + b`` for a linear (``hidden=()``) ensemble (elite mean)."""
    with torch.no_grad():
        z = torch.zeros(1, obs_dim), torch.zeros(1, act_dim)
        b = model.mean_step(*z).numpy()[0]
        A = np.stack([model.mean_step(torch.eye(obs_dim)[i : i + 1], z[1]).numpy()[0] - b for i in range(obs_dim)], 1)
        B = np.stack([model.mean_step(z[0], torch.eye(act_dim)[i : i + 1]).numpy()[0] - b for i in range(act_dim)], 1)
    return A, B, b


def lqr_gain(A: np.ndarray, B: np.ndarray, gamma: float, R: float = 0.1, iters: int = 500) -> np.ndarray:
    """Discounted LQR for cost ``|s|^2 + R |a|^2``: ``K`` with ``a = K s`` (Riccati iteration)."""
    Q, Rm = np.eye(A.shape[0]), R * np.eye(B.shape[1])
    P = Q.copy()
    for _ in range(iters):
        G = Rm + gamma * B.T @ P @ B
        P = Q + gamma * A.T @ P @ A - gamma**2 * A.T @ P @ B @ np.linalg.solve(G, B.T @ P @ A)
    return -gamma * np.linalg.solve(Rm + gamma * B.T @ P @ B, B.T @ P @ A)


class TowardsTruth:
    """A model whose mean prediction is ``model``'s moved a share ``lam`` of the way to the true mean dynamics
    ``f``: ``(1 - lam) mu_model(s, a) + lam f(s, a)``. Its model error is ``(1 - lam)`` times ``model``'s
    everywhere -- the positive control's planted 'more accurate, value-consistent' model."""

    def __init__(self, model, system: MisspecifiedSystem, lam: float):
        self.model, self.system, self.lam = model, system, lam

    @torch.no_grad()
    def mean_step(self, s: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        truth = torch.as_tensor(self.system.f(s.double().numpy(), a.double().numpy()), dtype=torch.float32)
        return (1 - self.lam) * self.model.mean_step(s, a) + self.lam * truth


@functools.lru_cache(maxsize=32)  # arms, probes and measure checks of one seed share the trainings
def _mech_model(scale_value: str, seed: int, phi: float, train_seed: int, paper_estimator: bool = False):
    """The linear ensemble trained on seed ``seed``'s data with its own ``train_seed`` (init, batches, holdout).

    ``paper_estimator``: the paper's raw estimator (no standardisation, no baseline, no warm-up) at ``phi``."""
    torch.set_num_threads(1)  # small dense ops: more threads only contend (8x slower on a loaded machine)
    cfg = PRESETS[scale_value]
    dc = dataclasses.replace(cfg.mech_dynamics, phi=phi)
    if paper_estimator:
        dc = dataclasses.replace(dc, normalise_advantage=False, state_baseline=False, value_warmup_epochs=0)
    data = MisspecifiedSystem(gamma=dc.gamma).dataset(cfg.mech_episodes, cfg.mech_length, seed)
    return train_dynamics(data, dc, train_seed, reward_fn=_torch_reward)


def _mech_metrics(scale_value: str, seed: int, model) -> dict:
    """True value gap, one-step MSE, and the states the LQR policy optimised on ``model`` visits in the true
    system (``"visited"``: ``(states, actions)``), on seed ``seed``'s held-out data."""
    cfg = PRESETS[scale_value]
    system = MisspecifiedSystem(gamma=cfg.mech_dynamics.gamma)
    test = system.dataset(cfg.mech_episodes, cfg.mech_length, seed + 10_000)  # held-out behaviour data
    pick = np.random.default_rng(seed).choice(len(test["observations"]), cfg.mech_eval_states, replace=False)
    states = test["observations"][pick].astype(float)

    def model_step(s, a, rng):
        return model.mean_step(torch.as_tensor(s, dtype=torch.float32), torch.as_tensor(a, dtype=torch.float32)).numpy()

    kw = dict(policy=system.policy, reward=system.reward, states=states, gamma=system.gamma, seed=seed + 1,
              rollouts=cfg.mech_rollouts)  # fmt: skip
    v_true = mc_value(system.true_step, **kw)  # what V_D estimates from data
    v_model = mc_value(model_step, **kw)  # what V_theta estimates through the model (mean predictions)
    # the policy optimised on the model: LQR on its linear part, run in the true system from s0 ~ N(0, I)
    A, B, _ = linear_parts(model)
    K = lqr_gain(A, B, system.gamma)
    rng = np.random.default_rng(seed + 2)
    s, visited, ret = rng.normal(size=(cfg.mech_eval_states, 2)), [], 0.0
    for t in range(cfg.mech_length):
        a = s @ K.T
        visited.append((s, a))
        ret = ret + system.gamma**t * system.reward(s, a)
        s = system.true_step(s, a, rng)
    return {
        "value gap": float(np.abs(v_true - v_model).mean()),
        "value bias": float((v_model - v_true).mean()),
        "one-step MSE": model_error(model, test["observations"], test["actions"], test["next_observations"]),
        "LQR true return": float(np.mean(ret)),
        "visited": tuple(np.concatenate(x) for x in zip(*visited, strict=True)),
    }


@functools.lru_cache(maxsize=64)
def _mechanism(scale_value: str, seed: int, arm: Arm, plant: float = PLANT_GAP) -> tuple[dict, dict]:
    """``(NLL metrics, 'VIPO'-arm metrics)`` of one arm on one seed; the NLL arm is the same in all three. The
    positive arm is the A/A model moved a share ``plant`` of the way to the true mean dynamics.

    ``"policy-state error"``: each model's one-step error against the true mean dynamics on the states that the
    two LQR policies (one optimised on each model) visit in the true system, pooled -- both models are scored
    on the same states, so the ratio compares the models, not the state distributions their policies reach."""
    dc = PRESETS[scale_value].mech_dynamics
    system = MisspecifiedSystem(gamma=dc.gamma)
    nll_model, _ = _mech_model(scale_value, seed, 0.0, seed)
    if arm is Arm.NEGATIVE:  # A/A: a second NLL ensemble on its own seed stream (init, batches, holdout)
        model, log = _mech_model(scale_value, seed, 0.0, seed + AA_STREAM)
    elif arm is Arm.POSITIVE:  # the effect planted at about the bar, on the A/A model (its own noise kept)
        aa_model, _ = _mech_model(scale_value, seed, 0.0, seed + AA_STREAM)
        model, log = TowardsTruth(aa_model, system, plant), None
    else:
        model, log = _mech_model(scale_value, seed, dc.phi, seed)
    nll, other = _mech_metrics(scale_value, seed, nll_model), _mech_metrics(scale_value, seed, model)
    vs, va = (np.concatenate(x) for x in zip(nll.pop("visited"), other.pop("visited"), strict=True))
    nll["policy-state error"] = model_error(nll_model, vs, va, system.f(vs, va))
    other["policy-state error"] = model_error(model, vs, va, system.f(vs, va))
    other["learned gap"] = log.value_gap[-1] if log is not None and log.value_gap else float("nan")
    return nll, other


_ARM_LABEL = {Arm.CLAIM: "", Arm.NEGATIVE: " [A/A control]", Arm.POSITIVE: " [positive control]"}


@mechanism(
    "value-term-2d",
    component="the value-inconsistency term phi * L_value in the linear ensemble's loss on the 2-D system "
    "(our estimator: standardised advantage, per-state baseline, value warm-up, phi = 30)",
    measures="||phi grad L_value|| / ||grad L_ori|| over the ensemble's parameters, mean over the epochs after "
    "the warm-up; details: the same share for the paper's raw estimator at phi = 1e-4",
    above=LIVE_SHARE,
)
def value_term_2d(scale: Scale, seed: int) -> dict[str, float]:
    phi = PRESETS[scale.value].mech_dynamics.phi
    _, log = _mech_model(scale.value, seed, phi, seed)
    _, raw = _mech_model(scale.value, seed, 1e-4, seed, paper_estimator=True)
    return {
        "value-term-2d": float(np.mean(log.value_grad_share)),
        "share, paper's raw estimator at phi = 1e-4": float(np.mean(raw.value_grad_share)),
    }


@claim(
    "vipo/closes-value-gap-v1",
    statement="On a 2-D system s' = A s + B a + 0.2 sin(3s) + noise that a linear-Gaussian ensemble cannot fit, "
    "training the ensemble with NLL + phi * L_value (VIPO) makes the Monte-Carlo value gap |V^pi - V^pi_model| "
    "on held-out behaviour states less than half that of the NLL-only ensemble (ratio < 0.5), while one-step "
    "MSE grows by less than 25 % (ratio < 1.25); paired over seeds. Estimator: ours, not the paper's raw one "
    "(batch-standardised advantage, per-state baseline, 30 value warm-up epochs, phi = 30)",
    paper="Sec. 4 (L_aug = L_ori + lambda L_vic) and abstract: the model is learned by additionally minimising the "
    "inconsistency between the value learned from data and the value estimated from the model",
    control="A/A: a second NLL ensemble (phi = 0) on its own seed stream (initialisation, batches, holdout) in "
    "the VIPO model's place; the gap ratio scatters around 1",
    positive="at about the bar, on the A/A pair: the A/A NLL ensemble (its own seed stream) moved halfway to the "
    "true mean dynamics (its model error halved: a gap ratio of about 0.42 against the bar 0.5), measured by the "
    "same Monte Carlo against the same NLL ensemble",
    mechanisms=("value-term-2d",),
    judge=[Interval("value gap VIPO / NLL", below=0.5), Interval("one-step MSE VIPO / NLL", below=1.25)],
)
def closes_value_gap(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    nll, vipo = _mechanism(scale.value, seed, arm, PLANT_GAP)
    r_gap, r_mse = vipo["value gap"] / nll["value gap"], vipo["one-step MSE"] / nll["one-step MSE"]
    holds = r_gap < 0.5 and r_mse < 1.25
    fig, ax = _figure()
    ax.bar(["NLL", "NLL + VIPO"], [nll["value gap"], vipo["value gap"]])
    ax.set_ylabel("mean |V^pi - V^pi_model| (Monte Carlo)")
    ax.set_title(f"misspecified 2-D system, phi = {PRESETS[scale.value].mech_dynamics.phi:g}" + _ARM_LABEL[arm])
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "value gap VIPO / NLL": r_gap,
            "one-step MSE VIPO / NLL": r_mse,
            "value gap VIPO": vipo["value gap"],
            "value bias VIPO (model - true)": vipo["value bias"],
            "learned |V_D - V_theta| VIPO": vipo["learned gap"],
        },
        baselines={
            "value gap NLL": nll["value gap"],
            "value bias NLL (model - true)": nll["value bias"],
            "one-step MSE NLL": nll["one-step MSE"],
        },
        paper={"value inconsistency": "minimised alongside the NLL; model more accurate (abstract)"},
        reason="" if holds else f"gap ratio {r_gap:.2f} (needs < 0.5), MSE ratio {r_mse:.2f} (needs < 1.25)",
        figures={"value-gap": fig},
    )


@claim(
    "vipo/more-accurate-model-v2",
    statement="On the same misspecified system, the VIPO-trained linear model has an at least 10 % lower one-step "
    "error (vs the true mean dynamics) than the NLL-only model on the states visited by the LQR policies optimised "
    "on the two models (pooled, so both are scored on the same states; paired ratio < 0.9). Same estimator as "
    "closes-value-gap (standardised advantage, per-state baseline, warm-up, phi = 30)",
    paper="abstract: VIPO can learn a highly accurate model efficiently; model prediction error study",
    control="A/A: a second NLL ensemble (phi = 0) on its own seed stream in the VIPO model's place, with its own "
    "LQR policy; the error ratio scatters around 1",
    positive="at 1.5x the bar, on the A/A pair: the A/A NLL ensemble (its own seed stream) moved 7.8 % of the way "
    "to the true mean dynamics (its squared error 0.85 of its own), with the LQR policy optimised on it",
    mechanisms=("value-term-2d",),
    judge=Interval("policy-state error VIPO / NLL", below=0.9),
)
def more_accurate_model(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    nll, vipo = _mechanism(scale.value, seed, arm, PLANT_ERROR)
    ratio = vipo["policy-state error"] / nll["policy-state error"]
    return ClaimResult(
        "holds" if ratio < 0.9 else "fails",
        measured={
            "policy-state error VIPO / NLL": ratio,
            "policy-state error VIPO": vipo["policy-state error"],
            "LQR true return VIPO - NLL": vipo["LQR true return"] - nll["LQR true return"],
        },
        baselines={"policy-state error NLL": nll["policy-state error"], "LQR true return NLL": nll["LQR true return"]},
        paper={"model error": "lower than the plain ensemble (abstract, model-error study)"},
        reason="" if ratio < 0.9 else f"error ratio {ratio:.3f} >= 0.9",
    )


# ------------------------------------------------------------------------------------------------ MuJoCo (D4RL-like)

HOPPER = "Hopper-v5"
#: The D4RL-like MuJoCo tasks with a shipped 'medium' actor and smoke set (short name -> Gymnasium id).
MUJOCO_TASKS = {"hopper": HOPPER, "halfcheetah": "HalfCheetah-v5"}
_DATA = Path(__file__).parent / "data"
#: The shipped smoke-size D4RL-like '<task>-medium' sets (Minari) and the SAC 'medium' actors that collected them.
SMOKE_SETS = {task: _DATA / f"{task}-medium-smoke" for task in MUJOCO_TASKS}
ACTORS = {task: _DATA / f"{task}-medium-actor.pt" for task in MUJOCO_TASKS}
#: The shipped medium set (``<name>-smoke``, ``<name>-actor.pt``) each generation of the MuJoCo claims reads.
#: v1: Hopper's first SAC run stopped at 25k steps (a *low*-medium policy, D4RL-normalised 10). v2: the same run
#: continued to its medium target (120k steps, normalised 39.8 over 50,000 transitions). HalfCheetah: one set.
DATA_VERSIONS = {
    "v1": {"hopper": "hopper-medium", "halfcheetah": "halfcheetah-medium"},
    "v2": {"hopper": "hopper-medium-sac120k", "halfcheetah": "halfcheetah-medium"},
}
HOPPER_SMOKE_SET, HOPPER_ACTOR = SMOKE_SETS["hopper"], ACTORS["hopper"]
#: The Hopper model claim is judged on its own seed stream: seed + HOPPER_SEEDS (phi and the warm-up were chosen by
#: the liveness probe on seed 0 before any judged run).
HOPPER_SEEDS = 2000
#: The MuJoCo caches hold a whole run of up to this many seeds, so no arm, probe or measure check retrains what
#: another one made: per seed 3 data sets and visited-state sets (Hopper on its own stream, Hopper and
#: HalfCheetah on the return claim's), 11 ensembles (Hopper claim: NLL, VIPO, raw, A/A; return claim: NLL, VIPO,
#: A/A per task + raw HalfCheetah) and 6 MOPO runs (NLL, VIPO, A/A per task). An ensemble is well under 1 MB.
#: (The v2 claims share one seed stream, so they add 2 data sets, 2 visited-state sets, 6 ensembles and 4 MOPO
#: runs per seed.)
_CACHE_SEEDS = 10


def _source(task: str, version: str) -> Path:
    """The stem of the shipped medium set of ``task`` that data version ``version`` reads."""
    return _DATA / DATA_VERSIONS[version][task]


@functools.lru_cache(maxsize=5 * _CACHE_SEEDS)
def _task_data(scale_value: str, task: str, seed: int, version: str) -> dict:
    """D4RL-like '<task>-medium' transitions of data version ``version``: the shipped smoke set at smoke, else
    ``mujoco_transitions`` collected afresh (seed ``seed``) with the shipped medium actor's stochastic actions, as
    D4RL's medium sets are."""
    from icml26.vipo.data import load_dataset
    from icml26.vipo.mujoco_data import actor_policy, collect, episodes_to_d4rl
    from icml26.vipo.policy import load_actor

    env_id, n, stem = MUJOCO_TASKS[task], PRESETS[scale_value].mujoco_transitions, _source(task, version)
    if n == 0:
        return load_dataset(stem.with_name(stem.name + "-smoke"), env_id)
    policy = actor_policy(load_actor(stem.with_name(stem.name + "-actor.pt")), env_id, deterministic=False)
    return episodes_to_d4rl(collect(policy, env_id, n, seed, show_progress=False))


@functools.lru_cache(maxsize=5 * _CACHE_SEEDS)
def _task_visited(scale_value: str, task: str, seed: int, version: str) -> dict:
    """'Policy-visited' true transitions: the medium actor's *mean* action (what an offline learner's greedy
    policy resembles -- it runs further than the noisy behaviour), never in the training data (seed + 20000)."""
    from icml26.vipo.mujoco_data import actor_policy, collect, episodes_to_d4rl
    from icml26.vipo.policy import load_actor

    env_id, stem = MUJOCO_TASKS[task], _source(task, version)
    policy = actor_policy(load_actor(stem.with_name(stem.name + "-actor.pt")), env_id, deterministic=True)
    n = PRESETS[scale_value].mujoco_eval_steps
    return episodes_to_d4rl(collect(policy, env_id, n, seed + 20_000, show_progress=False))


def _task_config(scale_value: str, variant: str):
    """``nll``: phi = 0; ``vipo``: the preset (raw estimator, values warmed up); ``raw``: the paper's recipe as
    published (phi = 1e-4, no warm-up, value lr 3e-4, tau 0.005) for the same total epochs."""
    dc = PRESETS[scale_value].mujoco_dynamics
    if variant == "nll":
        return dataclasses.replace(dc, phi=0.0)
    if variant == "raw":
        default = type(dc)()
        return dataclasses.replace(dc, phi=1e-4, value_warmup_epochs=0, value_lr=default.value_lr, tau=default.tau,
                                   normalise_advantage=False, state_baseline=False)  # fmt: skip
    return dc


@functools.lru_cache(maxsize=18 * _CACHE_SEEDS)
def _task_model(scale_value: str, task: str, seed: int, variant: str, train_seed: int, version: str):
    """The ensemble (``variant``: nll / vipo / raw) on seed ``seed``'s data (data version ``version``), trained on
    its own ``train_seed``."""
    torch.set_num_threads(1)
    data, env_id = _task_data(scale_value, task, seed, version), MUJOCO_TASKS[task]
    return train_dynamics(data, _task_config(scale_value, variant), train_seed, termination_fn=termination_fn(env_id))


def _hopper_data(scale_value: str, seed: int) -> dict:
    return _task_data(scale_value, "hopper", seed, "v1")


def _hopper_model(scale_value: str, seed: int, variant: str, train_seed: int):
    return _task_model(scale_value, "hopper", seed, variant, train_seed, "v1")


def _visited_error(scale_value: str, seed: int, model, task: str = "hopper", version: str = "v1") -> float:
    v = _task_visited(scale_value, task, seed, version)
    return model_error(model, v["observations"], v["actions"], v["next_observations"])


def _flat(model) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([p.flatten() for p in model.parameters()])


def _mean_share(log) -> float:
    """The VIPO term's mean share of the model gradient over a training log's epochs (0 if it never joined)."""
    return float(np.mean(log.value_grad_share)) if log.value_grad_share else 0.0


@mechanism(
    "value-term-hopper",
    component="the value-inconsistency term phi * L_value in the Hopper ensemble's loss (the paper's raw estimator "
    "at phi = 1e-2, with the values warmed up to their scale -- extra TD steps -- before the term joins)",
    measures="||phi grad L_value|| / ||grad L_ori|| over the ensemble's parameters, mean over the epochs after "
    "the warm-up; details: the same share for the paper's recipe as published (no warm-up), and the model error "
    "on policy-visited states of the VIPO model / NLL model next to an A/A pair of NLL models",
    above=LIVE_SHARE,
)
def value_term_hopper(scale: Scale, seed: int) -> dict[str, float]:
    if scale is Scale.PAPER:
        raise NotImplementedError("the paper-scale Hopper run is not made on this machine")
    sv, seed = scale.value, seed + HOPPER_SEEDS  # the claims' own seeds and data: the models are shared
    vipo, log = _hopper_model(sv, seed, "vipo", seed)
    _, raw = _hopper_model(sv, seed, "raw", seed)
    nll, _ = _hopper_model(sv, seed, "nll", seed)
    aa, _ = _hopper_model(sv, seed, "nll", seed + AA_STREAM)
    e_nll = _visited_error(sv, seed, nll)
    a, b = _flat(vipo), _flat(nll)
    return {
        "value-term-hopper": _mean_share(log),
        "share, paper's recipe (phi = 1e-4, no warm-up)": _mean_share(raw),
        "policy-state error VIPO / NLL": _visited_error(sv, seed, vipo) / e_nll,
        "policy-state error NLL (A/A) / NLL": _visited_error(sv, seed, aa) / e_nll,
        "learned |V_D - V_theta| VIPO": log.value_gap[-1] if log.value_gap else float("nan"),
        "|theta_VIPO - theta_NLL| / |theta_NLL|": float((a - b).norm() / b.norm()),
    }


@claim(
    "vipo/more-accurate-model-hopper-v1",
    statement="On D4RL-like Hopper-v5 'medium' data (SAC behaviour, D4RL's recipe), the ensemble trained with NLL + "
    "phi * L_value (the paper's raw estimator, phi = 1e-2, values warmed up to their scale) has an at least 10 % "
    "lower one-step error than the NLL-only ensemble on states the medium policy's mean action visits (not in the "
    "data): paired ratio < 0.9 over seeds",
    paper="abstract: VIPO can learn a highly accurate model; model prediction error study (D4RL)",
    control="A/A: a second NLL ensemble (phi = 0) on its own seed stream (initialisation, batches, holdout) in the "
    "VIPO model's place; the error ratio scatters around 1",
    positive="at 1.5x the bar, on the A/A pair: the A/A ensemble's prediction moved 7.8 % of the way to the true "
    "next states, so its squared error is 0.85 of its own (bar 0.9)",
    mechanisms=("value-term-hopper",),
    judge=Interval("policy-state error VIPO / NLL", below=0.9),
)
def more_accurate_model_hopper(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return ClaimResult("not-measured", reason="the paper-scale Hopper run (1M transitions) is not made here")
    return _model_error_claim(scale.value, seed + HOPPER_SEEDS, arm, "v1")


def _model_error_claim(sv: str, s: int, arm: Arm, version: str) -> ClaimResult:
    """The Hopper model-error claim on seed ``s`` of data version ``version``: VIPO / NLL one-step error on the
    medium actor's mean-action states; A/A = a second NLL ensemble on its own seed stream; positive = that A/A
    ensemble's squared error times 0.85 (its prediction moved 7.8 % of the way to the true next states)."""
    nll, _ = _task_model(sv, "hopper", s, "nll", s, version)
    e_nll = _visited_error(sv, s, nll, "hopper", version)
    if arm is Arm.CLAIM:
        other, _ = _task_model(sv, "hopper", s, "vipo", s, version)
        e_other = _visited_error(sv, s, other, "hopper", version)
    else:
        other, _ = _task_model(sv, "hopper", s, "nll", s + AA_STREAM, version)
        e_other = _visited_error(sv, s, other, "hopper", version)
        if arm is Arm.POSITIVE:  # (1 - lam)^2 = 0.85: prediction moved a share lam towards the true next state
            e_other *= (1 - PLANT_ERROR) ** 2
    ratio = e_other / e_nll
    data = _task_data(sv, "hopper", s, version)
    return ClaimResult(
        "holds" if ratio < 0.9 else "fails",
        measured={"policy-state error VIPO / NLL": ratio, "policy-state error VIPO": e_other},
        baselines={"policy-state error NLL": e_nll, "transitions": float(len(data["rewards"]))},
        paper={"model error": "lower than the plain ensemble (abstract, model-error study)"},
        reason="" if ratio < 0.9 else f"error ratio {ratio:.3f} >= 0.9",
    )


#: The MuJoCo return claim: its tasks, its own seed stream (seed + RETURN_SEEDS: fresh data, models and SAC runs
#: for every seed; nothing in it was chosen on these seeds), its bar and its planted gain (1.5x the bar).
RETURN_TASKS = ("hopper", "halfcheetah")
RETURN_SEEDS = 3000
RETURN_BAR = 5.0
RETURN_PLANT = 7.5


@functools.lru_cache(maxsize=10 * _CACHE_SEEDS)
def _mujoco_return(
    scale_value: str, task: str, seed: int, variant: str, train_seed: int, version: str, host: str = "mopo"
) -> dict:
    """``host`` (MOPO or MOBILE, the same budget) on the ``variant`` ensemble (``nll`` or ``vipo``) of seed
    ``seed``'s data (data version ``version``); model, SAC and evaluation episodes on ``train_seed``. Score:
    D4RL-normalised return, mean of the last evaluations (never the max)."""
    from icml26.vipo.mujoco_data import normalised
    from icml26.vipo.policy import train_policy

    torch.set_num_threads(1)
    env_id = MUJOCO_TASKS[task]
    data = _task_data(scale_value, task, seed, version)
    model, mlog = _task_model(scale_value, task, seed, variant, train_seed, version)
    pc = dataclasses.replace(PRESETS[scale_value].mujoco_policy, algo=host + ("+vipo" if variant == "vipo" else ""))
    _, plog = train_policy(data, model, env_id, pc, termination_fn(env_id), seed=train_seed)
    curve = np.asarray(normalised(task, plog.eval_returns), float)
    return {
        "score": float(np.mean(curve[-pc.last_evals :])),
        "curve": tuple(float(c) for c in curve),
        "policy-state MSE": model_error(model, plog.visited_obs, plog.visited_act, plog.visited_next),
        "value share": _mean_share(mlog),
    }


def _prediction_shift(scale_value: str, seed: int, task: str, model, reference, version: str) -> float:
    """Mean squared distance of two models' mean next-state predictions on the policy-visited states."""
    v = _task_visited(scale_value, task, seed, version)
    s, a = torch.as_tensor(v["observations"]), torch.as_tensor(v["actions"])
    with torch.no_grad():
        return float(((model.mean_step(s, a) - reference.mean_step(s, a)) ** 2).sum(1).mean())


def _mujoco_probe(sv: str, s: int, version: str, raw_tasks: tuple[str, ...]) -> dict[str, float]:
    """The VIPO term on the return claims' ensembles of seed ``s`` (data version ``version``): per task its share
    of the model gradient and what it does to the model next to an A/A NLL replicate; the paper's recipe as
    published (``raw``) on ``raw_tasks``."""
    out: dict[str, float] = {}
    e_nll: dict[str, float] = {}  # the NLL model's policy-state error per task, the ratios' denominator
    for task in RETURN_TASKS:
        vipo, log = _task_model(sv, task, s, "vipo", s, version)
        nll, _ = _task_model(sv, task, s, "nll", s, version)
        aa, _ = _task_model(sv, task, s, "nll", s + AA_STREAM, version)  # the return claim's A/A ensemble
        a, b, c = _flat(vipo), _flat(nll), _flat(aa)
        e_nll[task] = _visited_error(sv, s, nll, task, version)
        out[f"share {task}"] = _mean_share(log)
        out[f"|theta_VIPO - theta_NLL| / |theta_NLL| {task}"] = float((a - b).norm() / b.norm())
        out[f"|theta_NLL(A/A) - theta_NLL| / |theta_NLL| {task}"] = float((c - b).norm() / b.norm())
        shift = _prediction_shift(sv, s, task, vipo, nll, version)
        out[f"prediction shift VIPO / A/A {task}"] = shift / _prediction_shift(sv, s, task, aa, nll, version)
        out[f"policy-state error VIPO / NLL {task}"] = _visited_error(sv, s, vipo, task, version) / e_nll[task]
        out[f"policy-state error NLL (A/A) / NLL {task}"] = _visited_error(sv, s, aa, task, version) / e_nll[task]
        out[f"learned |V_D - V_theta| {task}"] = log.value_gap[-1] if log.value_gap else float("nan")
    for task in raw_tasks:
        raw_model, raw = _task_model(sv, task, s, "raw", s, version)
        out[f"share {task}, paper's recipe (phi = 1e-4, no warm-up)"] = _mean_share(raw)
        if len(raw_tasks) > 1:  # v2: the model-error change before (paper's recipe) and after (ours), per task
            e = _visited_error(sv, s, raw_model, task, version) / e_nll[task]
            out[f"policy-state error paper's recipe / NLL {task}"] = e
    return {"share (smaller task)": min(out[f"share {t}"] for t in RETURN_TASKS), **out}


_PROBE_DETAILS = (
    "the model-error half: per task the VIPO model's relative parameter distance to the NLL model next to the A/A "
    "NLL model's (its own seed stream, so another initialisation), its shift of the mean prediction on "
    "policy-visited states as a multiple of the A/A model's, and the policy-visited error ratios VIPO / NLL and "
    "A/A / NLL"
)


@mechanism(
    "value-term-mujoco",
    component="the value-inconsistency term phi * L_value in the Hopper and HalfCheetah ensembles that the return "
    "claim's MOPO+VIPO arm learns on (the paper's raw estimator at phi = 1e-2, values warmed up to their scale)",
    measures="the smaller over the two tasks of ||phi grad L_value|| / ||grad L_ori|| (mean over the epochs after "
    "the warm-up), on the claim's own seeds and data; details: each task's share, the paper's recipe as published "
    "(phi = 1e-4, no warm-up) on HalfCheetah, and " + _PROBE_DETAILS,
    above=LIVE_SHARE,
)
def value_term_mujoco(scale: Scale, seed: int) -> dict[str, float]:
    if scale is Scale.PAPER:
        raise NotImplementedError("the paper-scale MuJoCo runs are not made on this machine")
    out = _mujoco_probe(scale.value, seed + RETURN_SEEDS, "v1", ("halfcheetah",))  # the v1 claim's own seeds
    return {"value-term-mujoco": out.pop("share (smaller task)"), **out}


#: The v2 MuJoCo claims (Hopper's real-medium data) share one fresh seed stream: seed + V2_SEEDS for data, models,
#: SAC runs and evaluations; their bars and planted effects are v1's, fixed before any v2 run.
V2_SEEDS = 5000


@mechanism(
    "value-term-mujoco-v2",
    component="the value-inconsistency term phi * L_value in the Hopper (real medium, SAC 120k) and HalfCheetah "
    "ensembles that the v2 claims compare (the paper's raw estimator at phi = 1e-2, values warmed up to their scale)",
    measures="the smaller over the two tasks of ||phi grad L_value|| / ||grad L_ori|| (mean over the epochs after "
    "the warm-up), on the v2 claims' own seeds and data; details, per task: the share and the policy-visited error "
    "ratio / NLL of the paper's recipe as published (phi = 1e-4, no warm-up: 'before') next to ours ('after'), "
    "and " + _PROBE_DETAILS,
    above=LIVE_SHARE,
)
def value_term_mujoco_v2(scale: Scale, seed: int) -> dict[str, float]:
    if scale is Scale.PAPER:
        raise NotImplementedError("the paper-scale MuJoCo runs are not made on this machine")
    out = _mujoco_probe(scale.value, seed + V2_SEEDS, "v2", RETURN_TASKS)
    return {"value-term-mujoco-v2": out.pop("share (smaller task)"), **out}


@claim(
    "vipo/improves-return-mujoco-v1",
    statement="On D4RL-like 'medium' data of Hopper-v5 and HalfCheetah-v5 (SAC behaviour, D4RL's recipe; 10,000 "
    "transitions per task and seed), MOPO (h = 5, penalty 1.0, 3,000 SAC updates) on the VIPO-trained ensemble "
    "(the paper's raw estimator, phi = 1e-2, values warmed up to their scale) reaches a D4RL-normalised return "
    f"(mean of the last 2 evaluations) higher than MOPO on the NLL ensemble by more than {RETURN_BAR:g} points, "
    "averaged over the two tasks: paired over seeds (seed stream offset by 3000, unseen before the judged run)",
    paper="abstract: VIPO consistently outperforms existing methods; D4RL tables (MOPO+VIPO vs MOPO; e.g. "
    "halfcheetah-medium 80.0 for VIPO, secondary summary)",
    control="A/A: MOPO on a second NLL ensemble with its own seed stream (model, SAC, evaluation episodes) in the "
    "MOPO+VIPO arm's place on each task; the task-mean difference scatters around 0 by the learners' own noise",
    positive=f"the A/A arm plus {RETURN_PLANT:g} normalised points on each task (1.5x the bar of {RETURN_BAR:g}; "
    "the paper's full tables were not recovered, its one recovered medium cell is far above any MOPO score): "
    "could these seeds see a gain of the claimed size through the learners' own noise?",
    mechanisms=("value-term-mujoco",),
    judge=Interval("score MOPO+VIPO - MOPO (mean over tasks)", above=RETURN_BAR),
)
def improves_return_mujoco(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return _mujoco_not_at_paper_scale()
    return _return_claim(scale.value, seed + RETURN_SEEDS, arm, "v1")


def _mujoco_not_at_paper_scale() -> ClaimResult:
    return ClaimResult("not-measured", reason="the paper-scale MuJoCo runs (1M transitions, 3M SAC steps) are "
                       "not made on this machine")  # fmt: skip


def _return_claim(sv: str, s: int, arm: Arm, version: str, host_algo: str = "mopo") -> ClaimResult:
    """``host_algo`` (MOPO / MOBILE) vs itself +VIPO per task on seed ``s`` of data version ``version``, judged on
    the task mean."""
    H = host_algo.upper()
    measured, baselines, diffs = {}, {}, []
    fig, ax = _figure()
    for i, task in enumerate(RETURN_TASKS):
        host = _mujoco_return(sv, task, s, "nll", s, version, host_algo)
        if arm is Arm.CLAIM:
            other = _mujoco_return(sv, task, s, "vipo", s, version, host_algo)
        else:  # A/A: the host on its own seed stream (model, SAC, evaluation); the positive adds the planted gain
            other = dict(_mujoco_return(sv, task, s, "nll", s + AA_STREAM, version, host_algo))
            if arm is Arm.POSITIVE:
                other["score"] += RETURN_PLANT
                other["curve"] = tuple(c + RETURN_PLANT for c in other["curve"])
        diffs.append(other["score"] - host["score"])
        measured[f"score {H}+VIPO - {H} {task}"] = diffs[-1]
        measured[f"score {H}+VIPO {task}"] = other["score"]
        measured[f"policy-state MSE {H}+VIPO {task}"] = other["policy-state MSE"]
        baselines[f"score {H} {task}"] = host["score"]
        baselines[f"policy-state MSE {H} {task}"] = host["policy-state MSE"]
        ax.plot(host["curve"], f"C{i}o-", label=f"{H} {task}")
        ax.plot(other["curve"], f"C{i}s--", label=f"{H}+VIPO {task}" + _ARM_LABEL[arm])
    diff = float(np.mean(diffs))
    ax.set_xlabel("evaluation")
    ax.set_ylabel("D4RL-normalised return")
    ax.legend(fontsize=7)
    holds = diff > RETURN_BAR
    return ClaimResult(
        "holds" if holds else "fails",
        measured={f"score {H}+VIPO - {H} (mean over tasks)": diff, **measured},
        baselines=baselines,
        paper={f"{H}+VIPO vs {H}": "higher normalised score on almost all D4RL tasks"},
        elsewhere={"halfcheetah-medium VIPO score [secondary summary, unverified]": 80.0},
        reason=""
        if holds
        else f"task-mean {H}+VIPO - {H} = {diff:+.1f} points (needs > {RETURN_BAR:g}); "
        + ", ".join(f"{t} {d:+.1f}" for t, d in zip(RETURN_TASKS, diffs, strict=True)),
        figures={"returns": fig},
    )


_V2_DATA = (
    "D4RL-like Hopper-v5 'medium' data from the real medium SAC policy (120k SAC steps, RL Zoo's MuJoCo setting; "
    "D4RL-normalised 39.8 over 50,000 transitions; shipped as hopper-medium-sac120k) and HalfCheetah-v5 'medium' "
    "(60k steps, 34.8); 10,000 fresh transitions of each actor's stochastic actions per task and seed"
)
_V2_FRESH = (
    f"v1's recipe and bar, fixed before this data existed; judged on a fresh seed stream (offset {V2_SEEDS}, shared "
    "by the two v2 claims, unseen before the judged run)"
)


@claim(
    "vipo/more-accurate-model-hopper-v2",
    statement=f"On {_V2_DATA}, the Hopper ensemble trained with NLL + phi * L_value (the paper's raw estimator, "
    "phi = 1e-2, values warmed up to their scale) has an at least 10 % lower one-step error than the NLL-only "
    "ensemble on states the medium policy's mean action visits (not in the data): paired ratio < 0.9 over seeds. "
    + _V2_FRESH,
    paper="abstract: VIPO can learn a highly accurate model; model prediction error study (D4RL)",
    control="A/A: a second NLL ensemble (phi = 0) on its own seed stream (initialisation, batches, holdout) in the "
    "VIPO model's place; the error ratio scatters around 1",
    positive="at 1.5x the bar, on the A/A pair: the A/A ensemble's prediction moved 7.8 % of the way to the true "
    "next states, so its squared error is 0.85 of its own (bar 0.9)",
    mechanisms=("value-term-mujoco-v2",),
    judge=Interval("policy-state error VIPO / NLL", below=0.9),
)
def more_accurate_model_hopper_v2(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return ClaimResult("not-measured", reason="the paper-scale Hopper run (1M transitions) is not made here")
    return _model_error_claim(scale.value, seed + V2_SEEDS, arm, "v2")


@claim(
    "vipo/improves-return-mujoco-v2",
    statement=f"On {_V2_DATA}, MOPO (h = 5, penalty 1.0, 3,000 SAC updates) on the VIPO-trained ensemble (the "
    "paper's raw estimator, phi = 1e-2, values warmed up to their scale) reaches a D4RL-normalised return (mean "
    f"of the last 2 evaluations) higher than MOPO on the NLL ensemble by more than {RETURN_BAR:g} points, "
    "averaged over the two tasks, paired over seeds; per-task scores reported. " + _V2_FRESH,
    paper="abstract: VIPO consistently outperforms existing methods; D4RL tables (MOPO+VIPO vs MOPO; e.g. "
    "halfcheetah-medium 80.0 for VIPO, secondary summary)",
    control="A/A: MOPO on a second NLL ensemble with its own seed stream (model, SAC, evaluation episodes) in the "
    "MOPO+VIPO arm's place on each task; the task-mean difference scatters around 0 by the learners' own noise",
    positive=f"the A/A arm plus {RETURN_PLANT:g} normalised points on each task (1.5x the bar of {RETURN_BAR:g}), "
    "through the same verdict code: could these seeds see a gain of the claimed size through the learners' own "
    "noise?",
    mechanisms=("value-term-mujoco-v2",),
    judge=Interval("score MOPO+VIPO - MOPO (mean over tasks)", above=RETURN_BAR),
)
def improves_return_mujoco_v2(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return _mujoco_not_at_paper_scale()
    return _return_claim(scale.value, seed + V2_SEEDS, arm, "v2")


@claim(
    "vipo/improves-return-mobile-mujoco-v1",
    statement=f"On {_V2_DATA}, the same VIPO-trained ensembles plugged into MOBILE (h = 5, beta = 1.0, 3,000 SAC "
    "updates: the MOPO host's budget and coefficient, fixed before any MOBILE run on MuJoCo) raise MOBILE's "
    f"D4RL-normalised return (mean of the last 2 evaluations) by more than {RETURN_BAR:g} points over MOBILE on "
    "the NLL ensembles, averaged over the two tasks, paired over seeds; per-task scores reported. Judged on the v2 "
    f"claims' seed stream (offset {V2_SEEDS}: the same data and ensembles as improves-return-mujoco-v2), designed "
    "before its judged run",
    paper="abstract: VIPO offers a general framework that can be readily integrated into existing model-based "
    "offline RL algorithms (shown with MOPO, MOBILE, LEQ)",
    control="A/A: MOBILE on a second NLL ensemble with its own seed stream (model, SAC, evaluation episodes) in the "
    "MOBILE+VIPO arm's place on each task; the task-mean difference scatters around 0",
    positive=f"the A/A arm plus {RETURN_PLANT:g} normalised points on each task (1.5x the bar of {RETURN_BAR:g}), "
    "through the same verdict code",
    mechanisms=("value-term-mujoco-v2",),
    judge=Interval("score MOBILE+VIPO - MOBILE (mean over tasks)", above=RETURN_BAR),
)
def improves_return_mobile_mujoco(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return _mujoco_not_at_paper_scale()
    return _return_claim(scale.value, seed + V2_SEEDS, arm, "v2", "mobile")


# ------------------------------------------------------------------------------------------------ pipeline


@functools.lru_cache(maxsize=16)
def _pipeline_data(scale_value: str, seed: int) -> dict:
    cfg = PRESETS[scale_value]
    return make_dataset(cfg.pipe_env, cfg.pipe_quality, cfg.pipe_transitions, seed=seed)


@functools.lru_cache(maxsize=32)
def _pipeline_model(scale_value: str, seed: int, phi: float, train_seed: int, paper_recipe: bool = False):
    """The ensemble on seed ``seed``'s data, trained on its own ``train_seed``; ``paper_recipe``: the paper's
    raw estimator as published (phi as given, no value warm-up, the paper's value learning rate and tau)."""
    torch.set_num_threads(1)
    cfg = PRESETS[scale_value]
    data = _pipeline_data(scale_value, seed)
    dc = dataclasses.replace(cfg.pipe_dynamics, phi=phi)
    if paper_recipe:
        default = type(dc)()
        warm = dc.value_warmup_epochs
        dc = dataclasses.replace(dc, epochs=dc.epochs - warm, value_warmup_epochs=0, value_lr=default.value_lr,
                                 tau=default.tau)  # fmt: skip
    return train_dynamics(data, dc, train_seed, termination_fn=termination_fn(cfg.pipe_env))


@functools.lru_cache(maxsize=64)
def _pipeline_run(scale_value: str, seed: int, base: str, phi: float, train_seed: int) -> dict:
    """``base`` (MOPO or MOBILE) on the model trained with ``phi``; model and policy on ``train_seed``."""
    torch.set_num_threads(1)
    cfg = PRESETS[scale_value]
    data = _pipeline_data(scale_value, seed)
    model, mlog = _pipeline_model(scale_value, seed, phi, train_seed)
    algo = base + ("+vipo" if phi > 0 else "")
    pc = dataclasses.replace(cfg.pipe_policy, algo=algo)
    _, plog = train_policy(data, model, cfg.pipe_env, pc, termination_fn(cfg.pipe_env), seed=train_seed)
    meta = data["meta"]
    curve = normalised_score(np.asarray(plog.eval_returns), meta["ref_min_score"], meta["ref_max_score"])
    return {
        "score": float(np.mean(curve[-pc.last_evals :])),  # mean of the last evaluations, never the max
        "curve": tuple(float(c) for c in curve),
        "wall": tuple(plog.wall_s),
        "policy-state MSE": model_error(model, plog.visited_obs, plog.visited_act, plog.visited_next),
        "holdout MSE": mlog.holdout_mse[-1],
        "learned gap": mlog.value_gap[-1] if mlog.value_gap else float("nan"),
    }


def _host_pair(scale_value: str, seed: int, base: str, arm: Arm) -> tuple[dict, dict]:
    """``(host, '+VIPO' arm)`` runs of one host on one seed, for one arm of a claim."""
    phi = PRESETS[scale_value].pipe_dynamics.phi
    host = _pipeline_run(scale_value, seed, base, 0.0, seed)
    if arm is Arm.CLAIM:
        return host, _pipeline_run(scale_value, seed, base, phi, seed)
    other = dict(_pipeline_run(scale_value, seed, base, 0.0, seed + AA_STREAM))  # A/A: the host on its own seeds
    if arm is Arm.POSITIVE:  # the claimed gain planted on the A/A arm
        other["score"] += PLANTED_MARGIN
        other["curve"] = tuple(c + PLANTED_MARGIN for c in other["curve"])
    return host, other


def _not_at_paper_scale() -> ClaimResult:
    return ClaimResult(
        "not-measured",
        reason="the paper-scale pipeline needs a SAC behaviour policy for Hopper-v5 and GPU-hours; run the "
        "commands of README 'paper preset' instead",
    )


@mechanism(
    "value-term-pendulum",
    component="the value-inconsistency term phi * L_value in the Pendulum ensemble's loss as the pipeline claims "
    "train it (the paper's raw estimator, values warmed up to their scale, phi = 1e-2)",
    measures="||phi grad L_value|| / ||grad L_ori|| over the ensemble's parameters, mean over the epochs after "
    "the warm-up; details: the share with the paper's recipe as published (phi = 1e-4, no warm-up) and the "
    "relative parameter distance of the VIPO and NLL models trained on the same seed",
    above=LIVE_SHARE,
)
def value_term_pendulum(scale: Scale, seed: int) -> dict[str, float]:
    if scale is Scale.PAPER:
        raise NotImplementedError("the paper-scale pipeline is not run on this machine (see README 'paper preset')")
    phi = PRESETS[scale.value].pipe_dynamics.phi
    vipo, log = _pipeline_model(scale.value, seed, phi, seed)
    nll, _ = _pipeline_model(scale.value, seed, 0.0, seed)
    _, raw = _pipeline_model(scale.value, seed, 1e-4, seed, paper_recipe=True)
    with torch.no_grad():
        a = torch.cat([p.flatten() for p in vipo.parameters()])
        b = torch.cat([p.flatten() for p in nll.parameters()])
    return {
        "value-term-pendulum": _mean_share(log),
        "share, paper's recipe (phi = 1e-4, no warm-up)": _mean_share(raw),
        "|theta_VIPO - theta_NLL| / |theta_NLL|": float((a - b).norm() / b.norm()),
    }


_PIPE_PHI = "the paper's raw estimator with values warmed up to their scale (60 value epochs), phi = 1e-2"
_FRESH = (
    "phi = 1e-2 and the warm-up were fixed from v2's seeds 0-4; v3 is judged on fresh seeds (every seed "
    f"stream offset by {FRESH_SEEDS})"
)


@claim(
    "vipo/improves-offline-return-v3",
    statement="On locally generated Pendulum-v1 'medium' data, MOPO (SAC, h = 5 rollouts, penalty 1.0) on a "
    f"VIPO-trained ensemble ({_PIPE_PHI}) reaches a higher normalised return (mean of the last evaluations) than "
    "MOPO on the NLL ensemble by more than 2 normalised points (a D4RL table's win, not a tie): paired difference "
    "> 2 over seeds. " + _FRESH,
    paper="abstract: VIPO consistently outperforms existing methods; D4RL/NeoRL tables (MOPO+VIPO vs MOPO)",
    control="A/A: MOPO on an NLL ensemble (phi = 0) with its own seed stream (model, policy, evaluation) in the "
    "MOPO+VIPO arm's place; the difference scatters around 0 by the learners' own noise",
    positive="the A/A arm plus 3 normalised points (1.5x the bar of 2; the paper's D4RL gains are of the order of "
    "10): could these seeds see a gain of the claimed size through the learners' own noise?",
    mechanisms=("value-term-pendulum",),
    judge=Interval("score MOPO+VIPO - MOPO", above=2.0),
)
def improves_offline_return(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return _not_at_paper_scale()
    base, vipo = _host_pair(scale.value, seed + FRESH_SEEDS, "mopo", arm)
    diff = vipo["score"] - base["score"]
    fig, ax = _figure()
    ax.plot(base["wall"], base["curve"], "o-", label="MOPO")
    ax.plot(vipo["wall"], vipo["curve"], "s-", label="MOPO+VIPO" + _ARM_LABEL[arm])
    ax.set_xlabel("wall-clock of policy learning [s]")
    ax.set_ylabel("normalised return")
    ax.legend()
    return ClaimResult(
        "holds" if diff > 2.0 else "fails",
        measured={
            "score MOPO+VIPO - MOPO": diff,
            "score MOPO+VIPO": vipo["score"],
            "policy-state MSE MOPO+VIPO": vipo["policy-state MSE"],
            "holdout MSE VIPO model": vipo["holdout MSE"],
            "learned |V_D - V_theta| VIPO model": vipo["learned gap"],
        },
        baselines={
            "score MOPO": base["score"],
            "policy-state MSE MOPO": base["policy-state MSE"],
            "holdout MSE NLL model": base["holdout MSE"],
        },
        paper={"MOPO+VIPO vs MOPO": "higher normalised score on almost all D4RL and NeoRL tasks"},
        reason="" if diff > 2.0 else f"MOPO+VIPO - MOPO = {diff:+.1f} points (host MOPO scores {base['score']:.0f})",
        figures={"return-vs-wallclock": fig},
    )


@claim(
    "vipo/plug-in-v3",
    statement=f"The same VIPO model training ({_PIPE_PHI}) plugged into two model-based methods raises both: "
    "MOPO+VIPO - MOPO > 2 and MOBILE+VIPO - MOBILE > 2 normalised points on Pendulum-v1 'medium' data, "
    "paired over seeds. " + _FRESH,
    paper="abstract: VIPO offers a general framework that can be readily integrated into existing model-based "
    "offline RL algorithms (shown with MOPO, MOBILE, LEQ)",
    control="A/A in both hosts: each '+VIPO' arm is its host on an NLL ensemble with its own seed stream; both "
    "differences scatter around 0",
    positive="each host's A/A arm plus 3 normalised points (1.5x the bar of 2)",
    mechanisms=("value-term-pendulum",),
    judge=[Interval("score MOPO+VIPO - MOPO", above=2.0), Interval("score MOBILE+VIPO - MOBILE", above=2.0)],
)
def plug_in(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    if scale is Scale.PAPER:
        return _not_at_paper_scale()
    mopo, mopo_vipo = _host_pair(scale.value, seed + FRESH_SEEDS, "mopo", arm)
    mobile, mobile_vipo = _host_pair(scale.value, seed + FRESH_SEEDS, "mobile", arm)
    d_mopo = mopo_vipo["score"] - mopo["score"]
    d_mobile = mobile_vipo["score"] - mobile["score"]
    holds = d_mopo > 2.0 and d_mobile > 2.0
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "score MOPO+VIPO - MOPO": d_mopo,
            "score MOBILE+VIPO - MOBILE": d_mobile,
            "score MOBILE+VIPO": mobile_vipo["score"],
            "policy-state MSE MOBILE+VIPO": mobile_vipo["policy-state MSE"],
        },
        baselines={"score MOBILE": mobile["score"], "policy-state MSE MOBILE": mobile["policy-state MSE"]},
        paper={"MOBILE+VIPO vs MOBILE": "improved (general-framework experiments)"},
        reason="" if holds else f"MOPO diff {d_mopo:+.1f}, MOBILE diff {d_mobile:+.1f} points",
    )


# ------------------------------------------------------------------------------------------------ measures


def _value_gap_check(seed: int) -> dict[str, float]:
    """The judged value-gap ratio gap(model) / gap(NLL model) at smoke size: the true dynamics (truth, 0), the NLL
    model moved halfway to the truth (about 0.5), and an A/A pair of NLL ensembles (null, about 1)."""
    nll_model, _ = _mech_model("smoke", seed, 0.0, seed)
    aa_model, _ = _mech_model("smoke", seed, 0.0, seed + AA_STREAM)
    system = MisspecifiedSystem(gamma=PRESETS["smoke"].mech_dynamics.gamma)
    gap = {
        name: float(_mech_metrics("smoke", seed, m)["value gap"])
        for name, m in {"nll": nll_model, "truth": TowardsTruth(nll_model, system, 1.0),
                        "halfway": TowardsTruth(nll_model, system, 0.5), "null": aa_model}.items()
    }  # fmt: skip
    return {k: v / gap["nll"] for k, v in gap.items() if k != "nll"}


def _normalised_return_check(seed: int) -> dict[str, float]:
    """Normalised Pendulum-v1 return (the claims' score, with the data's reference returns) of the scripted expert
    (truth, about 100), the noisy 'medium' controller, and uniform random actions (null, about 0); 10 episodes."""
    import gymnasium as gym

    from icml26.vipo.data import _behaviour, _rollout

    meta = _pipeline_data("smoke", 0)["meta"]
    env = gym.make("Pendulum-v1")
    out = {}
    for label, quality in (("truth", "expert"), ("medium", "medium"), ("null", "random")):
        rng = np.random.default_rng(seed + 77)
        _, rets = _rollout(env, _behaviour("Pendulum-v1", env, quality, None), 10 * 200, rng, seed + 77)
        out[label] = float(normalised_score(np.mean(rets), meta["ref_min_score"], meta["ref_max_score"]))
    env.close()
    return out


def _d4rl_return_check(seed: int) -> dict[str, float]:
    """The return claim's score, D4RL-normalised return, averaged over its tasks (3,000 steps each): the shipped
    medium actors' mean action (truth: a trained policy; about 10 on Hopper, 35 on HalfCheetah) and uniform random
    actions (null: D4RL's reference minimum is a random policy's return, so about 0). (The actors' stochastic
    actions score within a point of their mean action, so they are no alternative the truth must beat.)"""
    from icml26.vipo.mujoco_data import actor_policy, collect, normalised, random_policy
    from icml26.vipo.policy import load_actor

    policies = {
        "truth": lambda t: actor_policy(load_actor(ACTORS[t]), MUJOCO_TASKS[t], deterministic=True),
        "null": lambda t: random_policy(MUJOCO_TASKS[t]),
    }
    out = {}
    for label, make in policies.items():
        scores = []
        for task in RETURN_TASKS:
            episodes = collect(make(task), MUJOCO_TASKS[task], 3000, seed + 55, show_progress=False)
            done = [e for e in episodes if e["terminations"][-1] or len(e["rewards"]) == 1000] or episodes
            scores.append(float(normalised(task, np.mean([e["rewards"].sum() for e in done]))))
        out[label] = float(np.mean(scores))
    return out


MEASURES = [
    MeasureCheck("value gap VIPO / NLL (Monte Carlo)", _value_gap_check, null_band=(0.8, 1.25),
                 higher_is_better=False, margin=0.1),
    MeasureCheck("normalised return", _normalised_return_check, null_band=(-20.0, 20.0), margin=10.0),
    MeasureCheck("D4RL-normalised return (MuJoCo)", _d4rl_return_check, null_band=(-5.0, 5.0), margin=3.0),
]  # fmt: skip
MECHANISMS = [value_term_2d, value_term_hopper, value_term_mujoco, value_term_mujoco_v2, value_term_pendulum]
CLAIMS = [
    closes_value_gap,
    more_accurate_model,
    more_accurate_model_hopper,
    improves_return_mujoco,
    more_accurate_model_hopper_v2,
    improves_return_mujoco_v2,
    improves_return_mobile_mujoco,
    improves_offline_return,
    plug_in,
]
