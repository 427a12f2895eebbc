"""NanoAssemblyGym: Gymnasium contract, registered ids, physics against its closed form, rendering, agents."""

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest

from icml26.nanoassembly.agents import QLearningAgent, RandomAgent, ScriptedPush, evaluate, execute_plan
from icml26.nanoassembly.assembly import plan_assembly
from icml26.nanoassembly.config import EnvConfig, preset
from icml26.nanoassembly.data import lieb_sites, make_instance, text_sites
from icml26.nanoassembly.env import AssembleEnv, MoveMoleculeEnv, drag_sites, encode_action
from icml26.nanoassembly.planner import corridor_cells
from icml26.testing import check_env


def _small_plan(seed=0, n=12):
    starts, targets, shape = make_instance(lieb_sites(n), n + 3, seed=seed)
    return plan_assembly(starts, targets, shape)


def test_check_env_passes():
    assert check_env(MoveMoleculeEnv(preset("tip-changes"))) == []
    assert check_env(AssembleEnv(_small_plan())) == []


def test_registered_ids():
    import icml26.nanoassembly.env  # noqa: F401  (registers)

    env = gym.make("NanoAssembly/MoveMolecule-v0")
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    env = gym.make("NanoAssembly/Assemble-v0", plan=_small_plan())
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8,)


def test_drag_sites_match_corridor():
    rng = np.random.default_rng(0)
    for _ in range(50):
        d = rng.uniform(-3, 3, size=2)
        fast = drag_sites(5, 7, *d)
        slow = [tuple(c) for c in corridor_cells(np.array([[5.0, 7.0], [5 + d[0], 7 + d[1]]]), 0.5).tolist()]
        assert fast == [s for s in slow if s != (5, 7)]


def test_hop_probability_matches_eq4():
    """One-site drags on a drift-free, change-free tip: success frequency = sigmoid((u - u_tip) / width)."""
    cfg = EnvConfig(drift_per_step=0.0, landing_noise=0.0, jump_margin=10.0)
    env = MoveMoleculeEnv(cfg)
    for du in (-0.1, 0.1, 0.3):
        env.reset(seed=1, options={"tip_offset": 0.0})
        env.drift[:] = 0
        bias = 10.0
        action = encode_action(cfg, [1.0, 0.0], bias, bias * 10 ** (cfg.u_nominal + du))
        wins = 0
        for _ in range(2000):
            env.pos = np.array([3, 3])
            env.goal = np.array([10, 3])
            _, _, _, _, info = env.step(action)
            wins += info["hops"]
        p = 1 / (1 + np.exp(-du / cfg.coupling_width))
        assert abs(wins / 2000 - p) < 4 * np.sqrt(p * (1 - p) / 2000) + 0.01


def test_strong_coupling_kicks_and_weak_coupling_does_nothing():
    cfg = EnvConfig(drift_per_step=0.0, tip_change_on_kick=0.0)
    env = MoveMoleculeEnv(cfg)
    env.reset(seed=0, options={"tip_offset": 0.0})
    env.drift[:] = 0
    strong = encode_action(cfg, [2, 0], 5.0, 200_000.0)  # u = log10(4e4) = 4.6: 1.4 above threshold
    kicks = sum(env.step(strong)[4]["kicked"] for _ in range(200))
    p_kick = 1 / (1 + np.exp(-(4.6 - cfg.u_nominal - cfg.jump_margin) / cfg.jump_width))  # Eq. 5
    assert abs(kicks / 200 - p_kick) < 4 * np.sqrt(p_kick * (1 - p_kick) / 200) + 0.02
    weak = encode_action(cfg, [2, 0], 1000.0, 10.0)  # u = -2: no coupling
    env.reset(seed=0, options={"tip_offset": 0.0})
    start = env.pos.copy()
    for _ in range(10):
        env.step(weak)
    assert np.array_equal(env.pos, start)


def test_render_is_an_stm_image():
    env = AssembleEnv(_small_plan(), render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] == env.shape[1] * 4 and img.shape[1] == env.shape[0] * 4
    x, y = env.positions[0]
    bright = img[(env.shape[1] - 1 - y) * 4 + 2, x * 4 + 2].astype(int).sum()
    assert bright > np.median(img.astype(int).sum(-1))  # molecules are bright protrusions


def test_bad_render_mode_and_action_shape():
    with pytest.raises(ValueError, match="render_mode"):
        MoveMoleculeEnv(render_mode="human")
    env = MoveMoleculeEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3))


def test_scripted_push_works_on_calibrated_tip_and_random_does_not():
    env = MoveMoleculeEnv(preset("calibrated"))
    assert evaluate(env, ScriptedPush(env.cfg), 60, seed=2)["success_rate"] >= 0.9
    assert evaluate(env, RandomAgent(env.action_space, 0), 20, seed=2)["success_rate"] <= 0.3


@pytest.mark.parametrize("seed", [0, 57])
def test_assemble_without_noise_completes_without_collisions(seed):
    cfg = EnvConfig(landing_noise=0.0, jump_margin=10.0, drift_per_step=0.0)
    starts, targets, shape = make_instance(text_sites("HI"), 30, seed=seed)
    plan = plan_assembly(starts, targets, shape)
    info, _ = execute_plan(AssembleEnv(plan, config=cfg), ScriptedPush(cfg), seed=0)
    assert info["completion"] == 1.0 and info["collisions"] == 0


def test_q_agent_learns_and_roundtrips(tmp_path):
    cfg = preset("tip-changes")
    agent = QLearningAgent(cfg, seed=0)
    before = evaluate(MoveMoleculeEnv(cfg), agent, 60, seed=5)["success_rate"]
    curve = agent.train(MoveMoleculeEnv(cfg), 300, seed=0)
    assert len(curve) == 300
    assert (agent.q > -10).sum() > 10  # it visited and updated states
    after = evaluate(MoveMoleculeEnv(cfg), agent, 60, seed=5)["success_rate"]
    assert after >= 0.97 and after >= before, (before, after)  # training reaches near-perfect moves
    path = tmp_path / "agent.npz"
    agent.save(path)
    loaded = QLearningAgent.load(path, cfg)
    obs = MoveMoleculeEnv(cfg).reset(seed=3)[0]
    assert np.array_equal(loaded(obs), agent(obs))
    with pytest.raises(ValueError, match="not a saved"):
        QLearningAgent.load(tmp_path / "missing.npz", cfg)


def test_unknown_preset():
    with pytest.raises(ValueError, match="preset"):
        preset("broken-tip")
    assert replace(preset("calibrated"), size=8).size == 8
