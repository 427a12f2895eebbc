"""Agents for NanoAssemblyGym: a scripted fixed-parameter push, a random agent, a tabular Q-learning
agent, and an executor that carries out a whole plan in ``Assemble-v0``.

The Q-learning agent (Watkins' Q-learning, epsilon-greedy) chooses the tip-sample coupling of each drag
from a ladder of ``n_levels`` values ``u_nominal + levels[k]`` and whether to re-image first; the drag
always points at the goal (``min(distance, max_drag)`` long), as in the scripted push. Its state is what
the current-trace summary tells it: the last outcome (none yet / no hop / moved / kicked), the last
coupling level and the time since the last image. It therefore learns to *adapt* the set-point when the
tip changes (raise it after flat traces, lower it after kicks), which a fixed-parameter push cannot.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26._util.io import check_input_file, load_array, save_npz
from icml26.nanoassembly.config import EnvConfig
from icml26.nanoassembly.env import encode_action

logger = logging.getLogger(__name__)

SCRIPTED_BIAS_MV = 10.0


def _drag(obs: np.ndarray, cfg: EnvConfig) -> np.ndarray:
    g = np.asarray(obs[:2], dtype=float)
    d = np.linalg.norm(g)
    return g if d <= cfg.max_drag else g * cfg.max_drag / d


class ScriptedPush:
    """Fixed-parameter push: bias 10 mV and the set-point that is best for a *calibrated* tip.

    ``margin`` = coupling above the nominal threshold (default ``cfg.push_margin``: 98 % hop success
    and 0.2 % kicks on a calibrated tip); re-images every ``image_every`` actions.
    """

    def __init__(self, cfg: EnvConfig, margin: float | None = None, image_every: int = 10):
        self.cfg, self.image_every = cfg, image_every
        self.margin = cfg.push_margin if margin is None else margin

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        current = SCRIPTED_BIAS_MV * 10 ** (self.cfg.u_nominal + self.margin)
        reimage = obs[7] * 20 >= self.image_every - 1e-6
        return encode_action(self.cfg, _drag(obs, self.cfg), SCRIPTED_BIAS_MV, current, reimage)


class AdaptiveSetpoint:
    """Three-line adaptive rule, the baseline an RL agent must beat (issue 14).

    It reads the same current-trace summary as the Q-learning agent and keeps the fixed push's bias and
    imaging period; only the set-point adapts: after a flat trace (no hop, no kick) it raises the coupling
    ``u = log10(I/V)`` by ``step``, after a kick it lowers it by ``2 * step``, otherwise it keeps it. It
    starts from the calibrated push margin and stays on the Q-agent's ladder range ``[lo, hi]``.
    """

    def __init__(self, cfg: EnvConfig, step: float = 0.2, image_every: int = 10, lo: float = -0.6, hi: float = 1.8):
        if not step > 0:  # a zero or negative step would freeze or invert the rule
            raise ValueError(f"step must be positive; got {step}")
        if not image_every >= 1:
            raise ValueError(f"image_every must be at least 1 action; got {image_every}")
        if not lo < hi:
            raise ValueError(f"need lo < hi for the set-point range; got lo={lo}, hi={hi}")
        self.cfg, self.step, self.image_every, self.lo, self.hi = cfg, step, image_every, lo, hi

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        spikes, _displaced, kicked, du, drag, age = obs[2:8]
        margin = self.cfg.push_margin if drag == 0 else float(du)  # no drag yet: the calibrated set-point
        if drag > 0 and kicked > 0.5:  # 1. kick: the tip couples too strongly -> lower the set-point
            margin -= 2 * self.step
        elif drag > 0 and round(4 * spikes) == 0:  # 2. flat trace: too weakly -> raise it
            margin += self.step
        margin = min(max(margin, self.lo), self.hi)  # 3. otherwise keep it
        current = SCRIPTED_BIAS_MV * 10 ** (self.cfg.u_nominal + margin)
        reimage = age * 20 >= self.image_every - 1e-6
        return encode_action(self.cfg, _drag(obs, self.cfg), SCRIPTED_BIAS_MV, current, reimage)


class TipOracle:
    """A policy that reads the hidden tip state: the ground truth of the per-move cost measures.

    It sets the calibrated push's coupling margin (``cfg.push_margin`` unless given) above the *current* tip
    threshold ``env.u_tip`` (which no agent can observe) and keeps the rule's bias and imaging period, so it
    never has to search for a changed tip. ``env`` is the (unwrapped) MoveMolecule or Assemble environment
    the policy acts in.
    """

    def __init__(self, env, margin: float | None = None, image_every: int = 10):
        self.env, self.margin, self.image_every = env, margin, image_every

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        cfg = self.env.cfg
        margin = cfg.push_margin if self.margin is None else self.margin
        current = SCRIPTED_BIAS_MV * 10 ** (self.env.u_tip + margin)
        reimage = obs[7] * 20 >= self.image_every - 1e-6
        return encode_action(cfg, _drag(obs, cfg), SCRIPTED_BIAS_MV, current, reimage)


class IdleHandicap:
    """``policy`` made to lose a known share of its STM actions: the handicap a positive control plants.

    Before each of the policy's own actions, with probability ``fraction / (1 + fraction)``, it spends one
    idle STM action (no drag, no image: the tip state may still change and the drift grows), so idle
    actions are ``fraction`` of the policy's own ones on average. The policy never sees an idle action's
    trace: it is shown the trace of its own last action (with the current goal offset and image age), so
    its behaviour is otherwise unchanged.
    """

    def __init__(self, policy, cfg: EnvConfig, fraction: float = 0.1, seed: int = 0):
        if not fraction >= 0:
            raise ValueError(f"fraction must be non-negative; got {fraction}")
        self.policy, self.cfg, self.fraction = policy, cfg, fraction
        self.rng = np.random.default_rng(seed)
        self.trace = np.zeros(5, dtype=np.float32)  # obs[2:7] after the policy's own last action
        self.idle = False  # whether the last action was idle

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs = np.array(obs, dtype=np.float32)
        if not obs[2:7].any():  # a fresh episode (reset clears the trace; an idle action never does, below)
            self.idle = False
        if self.idle:
            obs[2:7] = self.trace  # the idle action's trace is hidden from the policy
        else:
            self.trace = obs[2:7].copy()
        self.idle = bool(self.rng.random() < self.fraction / (1 + self.fraction))
        if not self.idle:
            return self.policy(obs)
        margin = float(obs[5]) if abs(obs[5]) > 1e-3 else 1e-2  # never the exact nominal of a fresh trace
        return encode_action(
            self.cfg, np.zeros(2), SCRIPTED_BIAS_MV, SCRIPTED_BIAS_MV * 10 ** (self.cfg.u_nominal + margin)
        )


class RandomAgent:
    """Uniform random actions (the floor)."""

    def __init__(self, action_space, seed: int = 0):
        self.space = action_space
        self.space.seed(seed)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.space.sample()


@dataclass
class QLearningAgent:
    """Tabular Q-learning over coupling levels (see module docstring).

    Parameters
    ----------
    cfg : EnvConfig
    n_levels : int
        Size of the coupling ladder ``u_nominal + linspace(level_lo, level_hi, n_levels)``.
    alpha, gamma, epsilon : float
        Learning rate, discount, exploration rate (decayed linearly to ``epsilon_min``).
    """

    cfg: EnvConfig
    n_levels: int = 13
    level_lo: float = -0.6
    level_hi: float = 1.8
    alpha: float = 0.1
    gamma: float = 0.95
    epsilon: float = 0.3
    epsilon_min: float = 0.02
    seed: int = 0

    def __post_init__(self):
        self.levels = np.linspace(self.level_lo, self.level_hi, self.n_levels)
        self.start_level = int(np.argmin(np.abs(self.levels - self.cfg.push_margin)))  # calibrated
        self.deltas = np.array([-2, -1, 0, 1, 2])
        self.n_actions = 2 * len(self.deltas)  # level change x (re-image first or not)
        # (outcome, image age, action); pessimistic start so untried actions are not preferred
        self.q = np.full((5, 3, self.n_actions), -10.0)
        self.rng = np.random.default_rng(self.seed)

    def state(self, obs: np.ndarray) -> tuple[int, int]:
        """(outcome, image-age bucket) read from the observation."""
        spikes, _displaced, kicked, _du, drag, age = obs[2:8]
        hops, expected = round(4 * spikes), max(1, round(drag * self.cfg.max_drag))
        if drag == 0:
            outcome = 0  # no manipulation yet
        elif kicked > 0.5:
            outcome = 4
        else:
            outcome = 1 if hops == 0 else (2 if hops < expected else 3)  # flat / partial / full trace
        age_bucket = int(np.digitize(age * 20, [5, 10]))
        return outcome, age_bucket

    def level(self, obs: np.ndarray) -> int:
        """Ladder index of the last coupling (the calibrated one before the first drag)."""
        return self.start_level if obs[6] == 0 else int(np.argmin(np.abs(self.levels - obs[5])))

    def action(self, obs: np.ndarray, a: int) -> np.ndarray:
        """Discrete action ``a`` -> env action: drag toward the goal after a level change ``deltas[a % 5]``."""
        delta, reimage = self.deltas[a % len(self.deltas)], a >= len(self.deltas)
        level = int(np.clip(self.level(obs) + delta, 0, self.n_levels - 1))
        u = self.cfg.u_nominal + self.levels[level]
        return encode_action(self.cfg, _drag(obs, self.cfg), SCRIPTED_BIAS_MV, SCRIPTED_BIAS_MV * 10**u, reimage)

    def choose(self, obs: np.ndarray, greedy: bool = True) -> int:
        if not greedy and self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.n_actions))
        q = self.q[self.state(obs)]
        return int(self.rng.choice(np.flatnonzero(q == q.max())))

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.action(obs, self.choose(obs, greedy=True))

    def train(self, env, episodes: int, seed: int = 0) -> list[float]:
        """Q-learning on ``env`` for ``episodes`` episodes; returns STM actions per episode (learning curve)."""
        curve = []
        eps0 = self.epsilon
        for ep in range(episodes):
            self.epsilon = max(self.epsilon_min, eps0 * (1 - ep / max(1, episodes)))
            obs, _ = env.reset(seed=seed * 1_000_003 + ep)
            done, n = False, 0
            while not done:
                s = self.state(obs)
                a = self.choose(obs, greedy=False)
                obs, r, term, trunc, _ = env.step(self.action(obs, a))
                target = r if term else r + self.gamma * self.q[self.state(obs)].max()
                self.q[s][a] += self.alpha * (target - self.q[s][a])  # Watkins' update
                done, n = term or trunc, n + 1
            curve.append(float(n))
        self.epsilon = eps0
        return curve

    def save(self, path: str | Path) -> None:
        """Write the Q-table to exactly ``path`` (an .npz archive), atomically."""
        save_npz(path, q=self.q, levels=self.levels)

    @classmethod
    def load(cls, path: str | Path, cfg: EnvConfig) -> QLearningAgent:
        """Read an agent written by :meth:`save`; raise ``OSError`` / ``ValueError`` naming the file."""
        path = Path(path)
        if not path.exists():
            raise ValueError(f"{path}: not a saved Q-learning agent (no such file)")
        path = check_input_file(path, what="agent file")
        try:
            with load_array(path, what="agent file") as data:  # NumPy's header checked first: no pickle advice
                q, levels = np.asarray(data["q"], dtype=float), np.asarray(data["levels"], dtype=float)
        except Exception as exc:  # zip, pickle, key and format errors all mean "not an agent"
            raise ValueError(f"{path}: not a saved Q-learning agent ({type(exc).__name__}: {exc})") from None
        if levels.ndim != 1 or len(levels) < 2 or not np.isfinite(levels).all() or not np.isfinite(q).all():
            raise ValueError(f"{path}: not a saved Q-learning agent (levels or Q-table not finite)")
        agent = cls(cfg, n_levels=len(levels), level_lo=float(levels[0]), level_hi=float(levels[-1]))
        if q.shape != agent.q.shape:
            raise ValueError(f"{path}: Q-table shape {q.shape} does not match {agent.q.shape}")
        agent.q = q
        return agent


def evaluate(env, policy, episodes: int, seed: int = 0, options: dict | None = None) -> dict[str, float]:
    """Success rate, mean STM actions per successful move and images per episode of ``policy``."""
    wins, actions, images = [], [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed * 7_919 + ep, options=options)
        done, n, info = False, 0, {}
        while not done:
            obs, _, term, trunc, info = env.step(policy(obs))
            n += 1
            done = term or trunc
        wins.append(float(info.get("success", False)))
        images.append(info.get("images", 0))
        if info.get("success", False):
            actions.append(n)
    return {
        "success_rate": float(np.mean(wins)),
        "actions_per_success": float(np.mean(actions)) if actions else float("nan"),
        "images_per_episode": float(np.mean(images)),
    }


def execute_plan(env, policy, seed: int = 0, options: dict | None = None, frames_every: int = 0):
    """Run ``policy`` on an ``Assemble-v0`` env until the plan is done; returns (info, frames)."""
    obs, info = env.reset(seed=seed, options=options)
    frames = [env.render()] if frames_every and env.render_mode == "rgb_array" else []
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(policy(obs))
        done = term or trunc
        if frames_every and env.render_mode == "rgb_array" and info["actions"] % frames_every == 0:
            frames.append(env.render())
    if frames_every and env.render_mode == "rgb_array":
        frames.append(env.render())
    info = dict(info, truncated=bool(trunc))
    return info, frames
