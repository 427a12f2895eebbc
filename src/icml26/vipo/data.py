"""Offline RL data: the misspecified mechanism system, locally generated D4RL-format datasets, and a loader.

- :class:`MisspecifiedSystem` -- ``s' = A s + B a + c sin(3 s) + eps`` (2-D), reward ``-(|s|^2 + 0.1 |a|^2)``,
  behaviour policy ``a = K s + noise``. Its true value ``V^pi`` is computable by Monte Carlo with common random
  numbers (:func:`mc_value`), and a linear dynamics model cannot fit the ``sin`` term: the model class is
  misspecified, so the NLL-optimal model and the value-consistent model differ.
- :func:`make_dataset` -- D4RL keys (``observations, actions, rewards, next_observations, terminals,
  timeouts``) from Gymnasium environments with behaviour policies of five qualities; Pendulum-v1 uses a
  scripted energy-pumping + PD controller with noise; MuJoCo tasks use uniform random actions or a policy
  checkpoint the user trained (``paper`` preset). Each dataset carries its own random / expert reference
  returns for the normalised score ``100 (R - R_random) / (R_expert - R_random)``.
- :func:`load_dataset` / :func:`validate_dataset` -- read ``.npz`` or D4RL/HDF5 files (a user's own D4RL file
  included), refusing missing keys, mismatched lengths, non-finite values and actions outside the
  environment's action space, each with one clear message.
- :data:`TERMINATION_FNS` -- hand-coded termination functions per environment (MOPO style); asking for an
  environment without one is an error, never a silent "never terminates".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "KEYS",
    "TERMINATION_FNS",
    "MisspecifiedSystem",
    "load_dataset",
    "load_minari",
    "make_dataset",
    "normalised_score",
    "termination_fn",
    "validate_dataset",
]

KEYS = ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")
QUALITIES = ("random", "medium", "expert", "medium-replay", "medium-expert")


# --------------------------------------------------------------------------------------------------------
# The mechanism system: computable values, misspecified linear model class


@dataclass(frozen=True)
class MisspecifiedSystem:
    """2-D system ``s' = A s + B a + c sin(3 s) + sigma eps`` under the behaviour policy ``a = K s + sigma_a xi``."""

    c: float = 0.2
    sigma: float = 0.05
    sigma_a: float = 0.3
    gamma: float = 0.8
    A: tuple = ((0.9, 0.2), (-0.1, 0.8))
    B: tuple = ((0.0,), (0.5,))
    K: tuple = ((-0.3, -0.5),)

    def f(self, s: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Mean next state, ``(N, 2), (N, 1) -> (N, 2)``."""
        return s @ np.asarray(self.A).T + a @ np.asarray(self.B).T + self.c * np.sin(3 * s)

    @staticmethod
    def reward(s, a):
        """``r(s, a) = -(|s|^2 + 0.1 |a|^2)``; numpy or torch."""
        return -((s**2).sum(-1) + 0.1 * (a**2).sum(-1))

    def policy(self, s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return s @ np.asarray(self.K).T + self.sigma_a * rng.normal(size=(len(s), 1))

    def dataset(self, episodes: int, length: int, seed: int) -> dict[str, np.ndarray]:
        """Behaviour data in D4RL keys; ``s0 ~ N(0, I)``."""
        rng = np.random.default_rng(seed)
        s = rng.normal(size=(episodes, 2))
        cols: dict[str, list] = {k: [] for k in KEYS}
        for t in range(length):
            a = self.policy(s, rng)
            s2 = self.f(s, a) + self.sigma * rng.normal(size=s.shape)
            for k, v in zip(KEYS[:4], (s, a, self.reward(s, a), s2), strict=True):
                cols[k].append(v)
            cols["terminals"].append(np.zeros(episodes))
            cols["timeouts"].append(np.full(episodes, t == length - 1))
            s = s2
        return {
            k: np.concatenate(v).astype(np.float32) if k != "timeouts" else np.concatenate(v) for k, v in cols.items()
        }

    def true_step(self, s: np.ndarray, a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.f(s, a) + self.sigma * rng.normal(size=s.shape)


def mc_value(
    step: Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray],
    policy: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    reward: Callable[[np.ndarray, np.ndarray], np.ndarray],
    states: np.ndarray,
    gamma: float,
    seed: int,
    rollouts: int = 64,
    tol: float = 1e-3,
) -> np.ndarray:
    """Monte-Carlo ``V(s) = E sum_t gamma^t r_t`` from each of ``states`` ``(N, S) -> (N,)``, truncated where
    ``gamma^t < tol``. The same ``seed`` gives the same policy noise to every ``step`` (common random numbers)."""
    horizon = int(np.ceil(np.log(tol) / np.log(gamma)))
    rng = np.random.default_rng(seed)
    s = np.repeat(np.asarray(states, float), rollouts, 0)
    total = np.zeros(len(s))
    for t in range(horizon):
        a = policy(s, rng)
        total += gamma**t * reward(s, a)
        s = step(s, a, rng)
    return total.reshape(len(states), rollouts).mean(1)


# --------------------------------------------------------------------------------------------------------
# Termination functions (hand-coded per environment, MOPO style; obs of the Gymnasium v5 tasks exclude x)


def _never(obs, act, next_obs):
    return next_obs[..., 0] > float("inf")  # all False, numpy or torch alike (NaN too)


def _hopper(obs, act, next_obs):
    z, angle, rest = next_obs[..., 0], next_obs[..., 1], next_obs[..., 1:]
    healthy = (abs(rest) < 100).all(-1) & (z > 0.7) & (abs(angle) < 0.2)
    return ~healthy


def _walker(obs, act, next_obs):
    z, angle = next_obs[..., 0], next_obs[..., 1]
    healthy = (z > 0.8) & (z < 2.0) & (angle > -1.0) & (angle < 1.0)
    return ~healthy


TERMINATION_FNS: dict[str, Callable] = {
    "Pendulum-v1": _never,  # time limit only
    "HalfCheetah-v5": _never,  # time limit only
    "Hopper-v5": _hopper,  # Gymnasium Hopper-v5 healthy ranges: z > 0.7, |angle| < 0.2, |obs[1:]| < 100
    "Walker2d-v5": _walker,  # Gymnasium Walker2d-v5: 0.8 < z < 2.0, |angle| < 1
}


def termination_fn(env_id: str) -> Callable:
    """The termination function of ``env_id``; a ``ValueError`` naming the known ones when there is none."""
    try:
        return TERMINATION_FNS[env_id]
    except KeyError:
        known = ", ".join(TERMINATION_FNS)
        raise ValueError(
            f"no termination function for environment {env_id!r} (known: {known}); model rollouts would never "
            "terminate -- add one to icml26.vipo.data.TERMINATION_FNS"
        ) from None


# --------------------------------------------------------------------------------------------------------
# Behaviour policies and dataset generation


def pendulum_expert(obs: np.ndarray, rng: np.random.Generator, noise: float = 0.0) -> np.ndarray:
    """Scripted Pendulum-v1 controller: energy pumping far from the top, PD control near it; ``(N, 3) -> (N, 1)``.

    With ``theta`` measured from upright, ``E = theta_dot^2 / 2 + 15 (cos theta - 1)`` (0 at rest upright) and
    ``dE/dt = 3 u theta_dot``, so ``u = 2 sign(-E theta_dot)`` pumps energy towards the top.
    """
    cos, sin, thdot = obs[:, 0], obs[:, 1], obs[:, 2]
    theta = np.arctan2(sin, cos)
    energy = 0.5 * thdot**2 + 15.0 * (cos - 1.0)
    pump = np.clip(-2.0 * energy * thdot, -2.0, 2.0)
    pd = np.clip(-(12.0 * theta + 2.5 * thdot), -2.0, 2.0)
    u = np.where(cos > 0.8, pd, pump)
    return np.clip(u + noise * rng.normal(size=u.shape), -2.0, 2.0)[:, None]


# (noise std of the scripted controller, share of uniform random actions) per quality
_PENDULUM_QUALITY = {"random": (0.0, 1.0), "medium": (1.0, 0.35), "expert": (0.2, 0.0)}


def _rollout(env, policy, steps: int, rng: np.random.Generator, seed: int) -> tuple[dict, list[float]]:
    cols: dict[str, list] = {k: [] for k in KEYS}
    returns, ret = [], 0.0
    obs, _ = env.reset(seed=seed)
    for _ in range(steps):
        act = np.asarray(policy(obs[None], rng), np.float32)[0]
        nxt, r, term, trunc, _ = env.step(act)
        for k, v in zip(KEYS, (obs, act, r, nxt, term, trunc), strict=True):
            cols[k].append(v)
        ret += float(r)
        obs = nxt
        if term or trunc:
            returns.append(ret)
            ret = 0.0
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
    if not cols["timeouts"][-1] and not cols["terminals"][-1]:
        cols["timeouts"][-1] = True  # the last, cut episode ends by a timeout
    arrays = {k: np.asarray(v, np.float32 if k not in ("terminals", "timeouts") else bool) for k, v in cols.items()}
    return arrays, returns


def _behaviour(env_id: str, env, quality: str, policy_file: str | Path | None):
    low, high = env.action_space.low, env.action_space.high

    def uniform(obs, rng):
        return rng.uniform(low, high, size=(len(obs), len(low)))

    if quality == "random":
        return uniform
    if policy_file is not None:
        import torch

        from icml26.vipo.policy import load_actor

        actor = load_actor(policy_file, env.observation_space.shape[0], len(low))
        noise = {"medium": 0.3, "expert": 0.1}[quality]

        def learned(obs, rng):
            with torch.no_grad():
                a = actor.act(torch.as_tensor(obs, dtype=torch.float32), deterministic=True).numpy()
            return np.clip(a * high + noise * high * rng.normal(size=a.shape), low, high)

        return learned
    if env_id != "Pendulum-v1":
        raise ValueError(
            f"quality {quality!r} on {env_id} needs a behaviour policy: pass --policy (a SAC actor written by "
            "'icml26 vipo train-behaviour'); only Pendulum-v1 has a scripted controller"
        )
    noise, p_random = _PENDULUM_QUALITY[quality]

    def scripted(obs, rng):
        a = pendulum_expert(obs, rng, noise)
        mix = rng.random(len(obs)) < p_random
        return np.where(mix[:, None], uniform(obs, rng), a)

    return scripted


def reference_returns(env_id: str, episodes: int = 10, seed: int = 12345, policy_file=None) -> tuple[float, float]:
    """Mean episode return of uniform random actions and of the expert behaviour policy on ``env_id`` (NaN for a
    MuJoCo task without a policy file: its normalised score then needs the user's reference returns)."""
    import gymnasium as gym

    env = gym.make(env_id)
    steps = episodes * (env.spec.max_episode_steps or 1000)
    out = []
    for quality in ("random", "expert"):
        if quality == "expert" and policy_file is None and env_id != "Pendulum-v1":
            out.append(float("nan"))  # no expert without a trained policy: scores need --policy (or refs)
            continue
        pol = _behaviour(env_id, env, quality, policy_file)
        _, rets = _rollout(env, pol, steps, np.random.default_rng(seed), seed)
        out.append(float(np.mean(rets)) if rets else float("nan"))
    env.close()
    return out[0], out[1]


def make_dataset(
    env_id: str, quality: str, transitions: int, seed: int = 0, policy_file: str | Path | None = None
) -> dict[str, np.ndarray | dict]:
    """A D4RL-format dataset of ``transitions`` steps; ``data["meta"]`` holds env, quality, reference returns.

    ``medium-replay``: the scripted (or learned) behaviour at noise levels falling from random to medium, as a
    learner's replay buffer would hold; ``medium-expert``: half medium, half expert.
    """
    import gymnasium as gym

    if quality not in QUALITIES:
        raise ValueError(f"quality must be one of {', '.join(QUALITIES)}; got {quality!r}")
    termination_fn(env_id)  # refuse an environment the pipeline cannot roll out
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    if quality == "medium-expert":
        parts = [("medium", transitions // 2), ("expert", transitions - transitions // 2)]
    elif quality == "medium-replay":
        parts = [("random", transitions // 3), ("medium", transitions - transitions // 3)]
    else:
        parts = [(quality, transitions)]
    chunks, all_returns = [], []
    for k, (q, n) in enumerate(parts):
        arrays, rets = _rollout(env, _behaviour(env_id, env, q, policy_file), n, rng, seed + 1000 * k)
        chunks.append(arrays)
        all_returns += rets
    env.close()
    data: dict = {k: np.concatenate([c[k] for c in chunks]) for k in KEYS}
    r_random, r_expert = reference_returns(env_id, policy_file=policy_file)
    data["meta"] = {
        "env": env_id,
        "quality": quality,
        "seed": seed,
        "ref_min_score": r_random,
        "ref_max_score": r_expert,
        "behaviour_return_mean": float(np.mean(all_returns)) if all_returns else float("nan"),
    }
    return data


def normalised_score(ret: float | np.ndarray, ref_min: float, ref_max: float) -> float | np.ndarray:
    """``100 (R - R_random) / (R_expert - R_random)`` with the dataset's own references (D4RL's convention)."""
    if not np.isfinite(ref_min) or not np.isfinite(ref_max) or ref_max == ref_min:
        raise ValueError(f"reference returns must be finite and distinct; got random {ref_min}, expert {ref_max}")
    return 100.0 * (np.asarray(ret) - ref_min) / (ref_max - ref_min)


# --------------------------------------------------------------------------------------------------------
# Saving, loading and validating


def save_dataset(path: str | Path, data: dict) -> Path:
    """Write ``data`` (D4RL keys + ``meta``) to ``.npz`` or ``.hdf5``/``.h5``, atomically."""
    from icml26._util.io import atomic_output

    path = Path(path)
    meta = json.dumps(data.get("meta", {}))
    with atomic_output(path) as tmp:
        if path.suffix.lower() in (".hdf5", ".h5"):
            import h5py

            with h5py.File(tmp, "w") as fh:
                for k in KEYS:
                    fh.create_dataset(k, data=np.asarray(data[k]), compression="gzip")
                fh.attrs["meta"] = meta
        else:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, meta=np.asarray(meta), **{k: np.asarray(data[k]) for k in KEYS})
    return path


def load_dataset(path: str | Path, env_id: str | None = None) -> dict:
    """Read a ``.npz`` or D4RL ``.hdf5`` file and validate it (against ``env_id``'s spaces when given).

    A real D4RL file without ``next_observations`` gets them from ``observations[t + 1]`` within an episode
    (the transition that ends an episode is dropped, as D4RL's ``qlearning_dataset`` does).
    """
    from icml26._util.io import check_input_file

    if Path(path).is_dir():  # a Minari data set (our 'icml26 vipo dataset' output or one of Farama's)
        return load_minari(path, env_id)
    path = check_input_file(path, what="dataset")
    data: dict = {}
    meta: dict = {}
    try:
        if path.suffix.lower() in (".hdf5", ".h5"):
            import h5py

            with h5py.File(path, "r") as fh:
                for k in KEYS:
                    if k in fh:
                        data[k] = np.asarray(fh[k])
                if "meta" in fh.attrs:
                    meta = json.loads(fh.attrs["meta"])
        else:
            from icml26._util.io import load_array

            with load_array(path, what="dataset") as z:  # NumPy's header checked first: no pickle advice
                for k in KEYS:
                    if k in z.files:
                        data[k] = np.asarray(z[k])
                if "meta" in z.files:
                    meta = json.loads(str(z["meta"]))
    except (OSError, ValueError, KeyError, EOFError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"dataset {path} is not a readable .npz or HDF5 file ({exc.__class__.__name__})") from None
    if "next_observations" not in data and "observations" in data:
        data = _with_next_observations(data, path)
    if "timeouts" not in data and "terminals" in data:
        data["timeouts"] = np.zeros(len(data["terminals"]), bool)
    data = validate_dataset(data, env_id, what=f"dataset {path}")
    data["meta"] = meta
    return data


def load_minari(path: str | Path, env_id: str | None = None) -> dict:
    """A Minari HDF5 data set (its directory) in D4RL's keys, validated; ``meta`` from its metadata.json.

    The environment is the metadata's ``env`` or its ``env_spec`` id; Minari's ``ref_min_score`` /
    ``ref_max_score`` (set by Farama's MuJoCo sets and by ours, D4RL's values) become the score references.
    """
    from icml26.vipo.mujoco_data import episodes_to_d4rl, read_minari

    episodes, raw = read_minari(path)
    meta = {k: v for k, v in raw.items() if k not in ("observation_space", "action_space", "env_spec")}
    if "env" not in meta and raw.get("env_spec"):
        try:
            meta["env"] = json.loads(raw["env_spec"])["id"]
        except (json.JSONDecodeError, KeyError, TypeError):
            pass
    try:
        data = episodes_to_d4rl(episodes)
    except ValueError as exc:  # episodes of different widths
        raise ValueError(f"Minari data set {path}: episodes do not stack ({exc})") from None
    data = validate_dataset(data, env_id, what=f"Minari data set {path}")
    data["meta"] = meta
    return data


def _with_next_observations(data: dict, path) -> dict:
    need = ("observations", "actions", "rewards", "terminals", "timeouts")
    missing = [k for k in need if k not in data]
    if missing:
        raise ValueError(f"dataset {path} lacks {', '.join(missing)}")
    n = len(data["observations"])
    end = np.asarray(data["timeouts"], bool)[: n - 1]
    keep = np.flatnonzero(~end)  # t whose t+1 belongs to the same episode (or follows a terminal, unused)
    out = {k: np.asarray(data[k])[keep] for k in need}
    out["next_observations"] = np.asarray(data["observations"])[keep + 1]
    return out


def validate_dataset(data: dict, env_id: str | None = None, what: str = "dataset") -> dict:
    """Check keys, lengths, finiteness and (with ``env_id``) shapes and action bounds; return float32 arrays."""
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise ValueError(f"{what} is missing key(s) {', '.join(missing)} (needs {', '.join(KEYS)})")
    lengths = {k: len(np.asarray(data[k])) for k in KEYS}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"{what} has mismatched lengths: " + ", ".join(f"{k} {n}" for k, n in lengths.items()))
    n = lengths["observations"]
    if n < 2:
        raise ValueError(f"{what} holds {n} transition(s); need at least 2")
    out: dict = {}
    for k in KEYS:
        arr = np.asarray(data[k])
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{what}: {k} is not numeric (dtype {arr.dtype})")
        if k in ("rewards", "terminals", "timeouts") and arr.size != n:
            raise ValueError(f"{what}: {k} has shape {arr.shape}; expected one value per transition ({n},)")
        if k in ("terminals", "timeouts"):
            out[k] = arr.astype(bool).reshape(n)
            continue
        arr = arr.astype(np.float32)
        if k == "rewards":
            arr = arr.reshape(n)
        elif arr.ndim != 2:
            arr = arr.reshape(n, -1)
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad.reshape(n, -1).any(1))[0])
            raise ValueError(f"{what}: {k} holds NaN or inf (first at transition {i})")
        out[k] = arr
    if out["observations"].shape != out["next_observations"].shape:
        raise ValueError(
            f"{what}: observations {out['observations'].shape} vs next_observations {out['next_observations'].shape}"
        )
    if env_id is not None:
        _check_spaces(out, env_id, what)
    return out


def _check_spaces(data: dict, env_id: str, what: str) -> None:
    import gymnasium as gym

    try:
        env = gym.make(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"unknown environment {env_id!r} ({exc.__class__.__name__})") from None
    obs_dim, act_space = env.observation_space.shape[0], env.action_space
    env.close()
    if data["observations"].shape[1] != obs_dim:
        raise ValueError(f"{what}: observations have {data['observations'].shape[1]} dims; {env_id} has {obs_dim}")
    if data["actions"].shape[1] != act_space.shape[0]:
        raise ValueError(
            f"{what}: actions have {data['actions'].shape[1]} dims; {env_id}'s action space has {act_space.shape[0]}"
        )
    tol = 1e-4 * (1 + np.abs(act_space.high))
    outside = (data["actions"] < act_space.low - tol) | (data["actions"] > act_space.high + tol)
    if outside.any():
        i = int(np.flatnonzero(outside.any(1))[0])
        raise ValueError(
            f"{what}: action {data['actions'][i].tolist()} at transition {i} lies outside {env_id}'s "
            f"action space [{act_space.low.tolist()}, {act_space.high.tolist()}]"
        )
