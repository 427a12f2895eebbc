"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on 2 cores, ``paper`` GPU/overnight)."""

from __future__ import annotations

from dataclasses import dataclass, field

from icml26.vipo.dynamics import DynamicsConfig
from icml26.vipo.policy import PolicyConfig


def _mujoco_dynamics(**kw) -> DynamicsConfig:
    """The MuJoCo ensemble (Hopper, HalfCheetah): the paper's raw estimator (no advantage standardisation, no
    baseline) with the values warmed up to their scale while the ensemble trains by NLL alone, then L_value on
    (both arms see the same NLL epochs)."""
    # phi = 1e-2, fixed by the liveness probe before any judged run: with the values at their scale the raw term
    # carried 0.4 % of the gradient at the paper's 1e-4 (smoke set, seed 0), 0.44 % at 1e-3 (small, seed 0) --
    # inert by our 1 % bar -- and 34 % at 1e-2 (smoke); at 1e-1 it swamped the NLL (the model's error grew 8x)
    base = dict(members=5, elites=3, hidden=(128, 128), epochs=16, batch=256, value_hidden=(128, 128), gamma=0.99,
                phi=1e-2, value_warmup_epochs=8, value_warmup_steps=5, tau=0.05, value_lr=1e-3)  # fmt: skip
    return DynamicsConfig(**{**base, **kw})


@dataclass(frozen=True)
class Config:
    # closes-value-gap / more-accurate-model: the 2-D misspecified system, a linear-Gaussian ensemble
    mech_episodes: int = 60
    mech_length: int = 50
    mech_eval_states: int = 200
    mech_rollouts: int = 64
    mech_dynamics: DynamicsConfig = field(
        default_factory=lambda: DynamicsConfig(
            members=5, elites=3, hidden=(), epochs=90, batch=256, lr=3e-3, phi=30.0, normalise_advantage=True,
            state_baseline=True, value_hidden=(64, 64), value_lr=3e-3, gamma=0.8, tau=0.05, value_warmup_epochs=30,
        )
    )  # fmt: skip
    # value-term-hopper / more-accurate-model-hopper: D4RL-like Hopper-v5 'medium' data from the shipped SAC actor
    mujoco_transitions: int = 10_000  # 0 = the shipped smoke-size Minari set as is
    mujoco_eval_steps: int = 3_000  # true transitions of the medium actor's mean action ("policy-visited")
    mujoco_dynamics: DynamicsConfig = field(default_factory=_mujoco_dynamics)
    # improves-return-mujoco: MOPO (+ VIPO) on the same data and ensembles; the host's budget is the exploratory
    # Hopper run's (benchmarks/vipo_hopper_mopo.py, fixed before any judged run): 3,000 SAC updates
    mujoco_policy: PolicyConfig = field(
        default_factory=lambda: PolicyConfig(
            steps=3000, batch=256, hidden=(128, 128), rollout_length=5, rollout_batch=2000, rollout_every=250,
            actor_lr=3e-4, critic_lr=3e-4, real_ratio=0.5, penalty=1.0, eval_every=1000, eval_episodes=3,
            last_evals=2,
        )
    )  # fmt: skip
    # improves-offline-return / plug-in: Pendulum-v1, scripted 'medium' data, MOPO / MOBILE (+ VIPO)
    pipe_env: str = "Pendulum-v1"
    pipe_quality: str = "medium"
    pipe_transitions: int = 5000
    pipe_dynamics: DynamicsConfig = field(
        default_factory=lambda: DynamicsConfig(
            members=7, elites=5, hidden=(64, 64), epochs=75, batch=256, value_hidden=(64, 64),
            # the paper's raw estimator; phi = 1e-4 gave the term 2e-5 of the gradient at this budget, and 2e-3
            # with the values trained to their scale first: the values warm up (60 epochs, tau 0.05, lr 1e-3)
            # while the ensemble trains by NLL alone, then L_value joins at phi = 1e-2 for 15 epochs
            phi=1e-2, value_warmup_epochs=60, tau=0.05, value_lr=1e-3,
        )
    )  # fmt: skip
    pipe_policy: PolicyConfig = field(
        default_factory=lambda: PolicyConfig(
            steps=1500, batch=128, hidden=(64, 64), rollout_length=5, rollout_batch=1000, rollout_every=250,
            actor_lr=1e-3, critic_lr=1e-3,  # paper 1e-4 / 3e-4 left both arms below random at 1,500 steps
            real_ratio=0.5, penalty=1.0, eval_every=500, eval_episodes=3, last_evals=2,
        )
    )  # fmt: skip


PRESETS = {
    "smoke": Config(
        mech_episodes=30,
        mech_length=40,
        mech_eval_states=50,
        mech_rollouts=16,
        mech_dynamics=DynamicsConfig(
            members=3,
            elites=2,
            hidden=(),
            epochs=30,
            batch=64,
            lr=1e-2,
            phi=30.0,
            normalise_advantage=True,
            state_baseline=True,
            value_hidden=(32, 32),
            value_lr=3e-3,
            gamma=0.8,
            tau=0.05,
            value_warmup_epochs=10,
        ),
        mujoco_transitions=0,
        mujoco_eval_steps=1_000,
        mujoco_policy=PolicyConfig(
            steps=40,
            batch=64,
            hidden=(32, 32),
            rollout_length=2,
            rollout_batch=200,
            rollout_every=20,
            real_ratio=0.5,
            penalty=1.0,
            eval_every=20,
            eval_episodes=1,
            last_evals=2,
        ),
        mujoco_dynamics=_mujoco_dynamics(
            members=3,
            elites=2,
            hidden=(64, 64),
            epochs=6,
            value_hidden=(64, 64),
            value_warmup_epochs=3,
            value_warmup_steps=20,
        ),
        pipe_transitions=600,
        pipe_dynamics=DynamicsConfig(
            members=3,
            elites=2,
            hidden=(32, 32),
            epochs=9,
            batch=128,
            value_hidden=(32, 32),
            phi=1e-2,
            value_warmup_epochs=6,
            tau=0.05,
            value_lr=1e-3,
        ),
        pipe_policy=PolicyConfig(
            steps=60,
            batch=64,
            hidden=(32, 32),
            rollout_length=2,
            rollout_batch=200,
            rollout_every=30,
            real_ratio=0.5,
            penalty=1.0,
            eval_every=30,
            eval_episodes=1,
            last_evals=2,
        ),
    ),
    "small": Config(),
    # The paper's setting (GPU or overnight CPU): 7 x [200]*4 ensemble, 5 elites, phi = 1e-4, h = 1, 50k-rollout
    # batches every 1,000 steps, real ratio 0.05, penalty 2.5, 3,000 x 1,000 SAC steps; Hopper-v5 medium data
    # from a SAC behaviour policy ('icml26 vipo train-behaviour', then make-dataset --policy).
    "paper": Config(
        mech_episodes=200,
        mech_length=50,
        mech_eval_states=500,
        mech_rollouts=256,
        pipe_env="Hopper-v5",
        pipe_quality="medium",
        pipe_transitions=1_000_000,
        pipe_dynamics=DynamicsConfig(),
        pipe_policy=PolicyConfig(
            steps=3_000_000,
            rollout_length=1,
            rollout_batch=50_000,
            rollout_every=1000,
            eval_every=10_000,
            eval_episodes=10,
            last_evals=10,
        ),
    ),
}
