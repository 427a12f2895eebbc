"""D4RL-like offline data on Gymnasium's MuJoCo tasks, made with D4RL's recipe, stored in the Minari format.

D4RL's locomotion data sets (Fu et al. 2020, Sec. 5) come from one soft actor-critic run per task: *medium* =
transitions of a policy whose training was stopped part-way (about a third of the expert's return),
*medium-replay* = that run's replay buffer up to the stopping point, *expert* = a fully trained policy,
*medium-expert* = medium and expert transitions concatenated, *random* = a randomly initialised policy. This
module follows that recipe on Gymnasium v5 tasks with stable-baselines3's SAC (a maintained implementation), at a
size a laptop affords: the data are **D4RL-like, not D4RL** (other simulator version, other seeds, a smaller
budget), so published D4RL scores are only a rough reference, but the normalised score uses D4RL's own
reference returns (:data:`D4RL_REF`) so its scale is D4RL's.

Top to bottom:

1. :func:`train_behaviour` -- SB3 SAC, evaluated every ``eval_every`` steps, checkpointed (model + replay
   buffer + state) into a work directory after each chunk, so a killed run resumes where it stopped; it
   stops at the first evaluation whose mean return reaches the *medium* target (``medium_score`` normalised
   points) -- the 'medium' policy -- or at ``max_steps``.
2. :func:`collect` -- episodes of a policy (SAC's stochastic actions, as the data's behaviour) in the true
   environment; :func:`replay_episodes` -- the replay buffer cut back into episodes.
3. :func:`write_minari` / :func:`read_minari` -- the Minari on-disk layout (``<dir>/data/metadata.json`` +
   ``<dir>/data/main_data.hdf5`` with one ``episode_<i>`` group per episode: ``observations`` ``(T+1, S)``,
   ``actions`` ``(T, U)``, ``rewards``, ``terminations``, ``truncations``), written with h5py so that neither
   writing nor reading needs the ``minari`` package, and readable by ``minari.MinariDataset`` when it is
   installed (tested). :func:`episodes_to_d4rl` flattens episodes into D4RL's keys.
4. :func:`make_d4rl_like` -- the whole recipe for one (task, kind), resumable.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

__all__ = [
    "D4RL_REF",
    "KINDS",
    "TASKS",
    "BehaviourRecipe",
    "collect",
    "episodes_to_d4rl",
    "make_d4rl_like",
    "read_minari",
    "train_behaviour",
    "write_minari",
]

#: Short task names -> Gymnasium ids (v5: the maintained MuJoCo bindings; D4RL used v2 with mujoco-py).
TASKS = {"hopper": "Hopper-v5", "halfcheetah": "HalfCheetah-v5", "walker2d": "Walker2d-v5"}
#: D4RL's reference returns (random, expert) for its v2 locomotion sets, from ``d4rl/infos.py``
#: (REF_MIN_SCORE / REF_MAX_SCORE); normalised score = 100 (R - min) / (max - min).
D4RL_REF = {
    "hopper": (-20.272305, 3234.3),
    "halfcheetah": (-280.178953, 12135.0),
    "walker2d": (1.629008, 4592.3),
}
KINDS = ("random", "medium", "medium-replay", "expert", "medium-expert")
MINARI_VERSION = "0.5.3"  # the on-disk layout version we write (minari 0.5.x reads it)


@dataclass(frozen=True)
class BehaviourRecipe:
    """The behaviour-policy budget (D4RL: 1M SAC steps for expert; medium stopped at about 1/3 of expert).

    The SAC itself is the RL Baselines3 Zoo's MuJoCo setting (``hyperparams/sac.yml``, ``mujoco-defaults`` shared by
    HalfCheetah, Hopper and Walker2d): stable-baselines3's defaults -- Adam lr 3e-4, batch 256, buffer 1M, tau 0.005,
    gamma 0.99, one gradient step per environment step, automatic entropy, [256, 256] -- with 10,000 uniform-random
    steps before the first update, for 1M steps to the expert.
    """

    max_steps: int = 300_000  # environment steps of SAC (one gradient step each after learning_starts)
    medium_score: float = 33.0  # stop at the first evaluation reaching this D4RL-normalised return
    expert_steps: int = 1_000_000  # the expert policy's budget (kinds expert / medium-expert)
    eval_every: int = 5_000
    eval_episodes: int = 5
    learning_starts: int = 10_000  # the zoo's value (SB3's own default is 100)
    hidden: tuple[int, ...] = (256, 256)


def task_env(task: str) -> str:
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    return TASKS[task]


def normalised(task: str, ret) -> float | np.ndarray:
    lo, hi = D4RL_REF[task]
    return 100.0 * (np.asarray(ret, float) - lo) / (hi - lo)


# --------------------------------------------------------------------------------------------------------
# 1. the behaviour policy: SB3 SAC, checkpointed and resumable


def episode_returns(act, env_id: str, episodes: int, seed: int) -> list[float]:
    """Returns of ``episodes`` episodes of ``env_id`` (reset seeds ``seed``, ``seed + 1``, ...) acting ``act(obs)``."""
    import gymnasium as gym

    env = gym.make(env_id)
    rets = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        done, ret = False, 0.0
        while not done:
            obs, r, term, trunc, _ = env.step(act(obs))
            ret += float(r)
            done = term or trunc
        rets.append(ret)
    env.close()
    return rets


def _evaluate_sb3(model, env_id: str, episodes: int, seed: int) -> float:
    """Mean return of the SAC policy's *stochastic* actions (the behaviour the data will hold)."""
    return float(np.mean(episode_returns(lambda o: model.predict(o, deterministic=False)[0], env_id, episodes, seed)))


def train_behaviour(
    task: str,
    work: str | Path,
    recipe: BehaviourRecipe,
    seed: int = 0,
    stop_at_medium: bool = True,
    max_steps: int | None = None,
    show_progress: bool = True,
) -> dict:
    """Train (or resume) SB3 SAC on ``task`` in ``work``; return the state (steps, evaluations, checkpoints).

    Each chunk of ``eval_every`` steps ends with an evaluation and a checkpoint (``sac_<steps>.zip``,
    ``buffer.pkl``, ``state.json``). With ``stop_at_medium`` the run stops at the first evaluation whose
    normalised return reaches ``recipe.medium_score``; ``state["medium"]`` names that checkpoint (or the best
    one when the budget ran out first -- then ``state["medium_reached"]`` is False).
    """
    import gymnasium as gym
    from stable_baselines3 import SAC

    from icml26._util.progress import progress

    env_id = task_env(task)
    work = Path(work)
    work.mkdir(exist_ok=True)
    state_file = work / "state.json"
    budget = max_steps if max_steps is not None else recipe.max_steps
    env = gym.make(env_id)
    if state_file.exists():
        state = _load_state(state_file, task, seed, recipe)
        model = SAC.load(work / state["latest"], env=env, device="cpu")
        model.load_replay_buffer(work / "buffer.pkl")
        logger.info("resumed %s at %d steps", task, state["steps"])
    else:
        state = {"task": task, "env": env_id, "seed": seed, "recipe": asdict(recipe), "steps": 0, "evals": [],
                 "latest": None, "medium": None, "medium_reached": False}  # fmt: skip
        # the zoo's 1M-transition buffer, or the whole planned run when that is shorter: nothing is evicted either way
        buffer_size = min(1_000_000, max(recipe.expert_steps, budget))
        model = SAC("MlpPolicy", env, seed=seed, learning_starts=recipe.learning_starts, buffer_size=buffer_size,
                    verbose=0, device="cpu", policy_kwargs={"net_arch": list(recipe.hidden)})  # fmt: skip
    done = stop_at_medium and state["medium_reached"]
    bar = progress(total=budget, initial=min(state["steps"], budget), desc=f"SAC {task}", unit="step")
    while not done and state["steps"] < budget:
        chunk = min(recipe.eval_every, budget - state["steps"])
        model.learn(chunk, reset_num_timesteps=False)
        state["steps"] = int(model.num_timesteps)
        ret = _evaluate_sb3(model, env_id, recipe.eval_episodes, 10_000 + seed + state["steps"])
        state["evals"].append([state["steps"], ret, float(normalised(task, ret))])
        name = f"sac_{state['steps']}.zip"
        model.save(work / name)
        model.save_replay_buffer(work / "buffer.pkl")
        state["latest"] = name
        if not state["medium_reached"] and normalised(task, ret) >= recipe.medium_score:
            state["medium"], state["medium_reached"] = name, True
            # the medium-replay buffer: the replay buffer at the moment the medium policy was reached
            shutil.copyfile(work / "buffer.pkl", work / "buffer_medium.pkl")
            done = stop_at_medium
        _write_json_atomic(state_file, state)
        bar.update(chunk)
        bar.set_postfix(ret=f"{ret:.0f}", norm=f"{normalised(task, ret):.0f}")
        logger.info("%s SAC %d steps: return %.1f (normalised %.1f)", task, state["steps"], ret, normalised(task, ret))
    bar.close()
    limit = budget if stop_at_medium else recipe.max_steps  # never the expert continuation's evaluations
    early = [e for e in state["evals"] if e[0] <= limit]
    if not state["medium_reached"] and early:  # the budget ran out: the best evaluation within it stands in
        best = max(early, key=lambda e: e[1])
        state["medium"] = f"sac_{best[0]}.zip"
        _write_json_atomic(state_file, state)
    env.close()
    return state


#: Recipe fields that are budgets: a resumed run may raise them (train further) without changing what was made.
_BUDGET_FIELDS = ("max_steps", "expert_steps")


def _load_state(state_file: Path, task: str, seed: int, recipe: BehaviourRecipe) -> dict:
    """The saved state of a run to resume; refuses an unreadable file, another task or seed, or another recipe
    (a changed evaluation schedule or network would silently reuse checkpoints made under the old one).

    Changes that cannot alter anything already made are accepted and logged in ``state["recipe_changes"]``:
    budgets (:data:`_BUDGET_FIELDS`: the run trains on to the new budget); ``medium_score`` while the medium
    policy has not been reached and no past evaluation reaches the new score (every past stop decision is the
    same under both); ``learning_starts`` once the run is past both values (the random warm-up is over).
    """
    try:
        state = json.loads(state_file.read_text())
        if not isinstance(state, dict):
            raise TypeError("not a JSON object")
        saved = {k: state["recipe"][k] for k in asdict(recipe) if k not in _BUDGET_FIELDS}
        old_task, old_seed = state["task"], state["seed"]
        missing = [k for k in ("steps", "evals", "latest", "medium", "medium_reached") if k not in state]
        if missing:
            raise KeyError(", ".join(missing))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(
            f"checkpoint state {state_file} is not readable ({exc.__class__.__name__}: {exc}); "
            "delete its directory to start the SAC run afresh"
        ) from None
    if old_task != task or old_seed != seed:
        raise ValueError(f"work directory {state_file.parent} holds a {old_task} run with seed {old_seed}")
    # JSON turns tuples into lists: compare through one JSON round trip
    now = json.loads(json.dumps({k: v for k, v in asdict(recipe).items() if k not in _BUDGET_FIELDS}))
    changed = {k: f"{k.replace('_', '-')} {saved[k]!r} -> {now[k]!r}" for k in now if saved[k] != now[k]}
    harmless = []
    if "medium_score" in changed and not state["medium_reached"]:
        if all(e[2] < now["medium_score"] for e in state["evals"]):
            harmless.append("medium_score")
    if "learning_starts" in changed and state["steps"] >= max(saved["learning_starts"], now["learning_starts"]):
        harmless.append("learning_starts")
    refused = [v for k, v in changed.items() if k not in harmless]
    if refused:
        raise ValueError(
            f"work directory {state_file.parent} holds a run made with another recipe ({'; '.join(refused)}); "
            "use the old settings or another --out"
        )
    for k in harmless:
        log = state.setdefault("recipe_changes", [])
        if not any(c[1] == changed[k] for c in log):
            log.append([state["steps"], changed[k]])
        if k == "medium_score":  # the new stopping rule governs from here on
            state["recipe"][k] = now[k]  # learning_starts keeps the value the run was made with
    return state


def _write_json_atomic(path: Path, payload) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1))
    tmp.replace(path)


# --------------------------------------------------------------------------------------------------------
# 2. episodes: collected from a policy, or cut from a replay buffer


def collect(policy, env_id: str, transitions: int, seed: int, show_progress: bool = True) -> list[dict]:
    """``transitions`` steps of ``policy(obs, rng) -> action`` as Minari episodes (the last one truncated)."""
    import gymnasium as gym

    from icml26._util.progress import progress

    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    episodes, ep = [], None
    bar = progress(range(transitions), desc=f"collect {env_id}", unit="step", disable=None if show_progress else True)
    for t in bar:
        if ep is None:
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
            ep = {"observations": [obs], "actions": [], "rewards": [], "terminations": [], "truncations": []}
        a = np.asarray(policy(obs, rng), np.float32)
        obs, r, term, trunc, _ = env.step(a)
        trunc = trunc or (t == transitions - 1 and not term)  # the budget cuts the last episode
        for k, v in (("observations", obs), ("actions", a), ("rewards", r), ("terminations", term),
                     ("truncations", trunc)):  # fmt: skip
            ep[k].append(v)
        if term or trunc:
            episodes.append(_pack(ep))
            ep = None
    env.close()
    return episodes


def _pack(ep: dict) -> dict:
    return {
        "observations": np.asarray(ep["observations"], np.float32),  # (T+1, S)
        "actions": np.asarray(ep["actions"], np.float32),  # (T, U)
        "rewards": np.asarray(ep["rewards"], np.float32),  # (T,)
        "terminations": np.asarray(ep["terminations"], bool),
        "truncations": np.asarray(ep["truncations"], bool),
    }


def sb3_policy(path: str | Path, env_id: str, deterministic: bool = False):
    """A ``policy(obs, rng)`` from an SB3 SAC checkpoint (stochastic actions by default, D4RL's behaviour)."""
    import torch
    from stable_baselines3 import SAC

    model = SAC.load(path, device="cpu")

    def policy(obs, rng):
        # seed SB3's sampling from our generator so collection is reproducible; the caller's torch RNG is restored
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(2**31)))
            return model.predict(obs, deterministic=deterministic)[0]

    return policy


def export_actor(sb3_file: str | Path, out: str | Path, extra: dict | None = None) -> None:
    """Save an SB3 SAC checkpoint's actor as an icml26 :class:`~icml26.vipo.policy.Actor` (a plain state dict, read
    without unpickling code). SB3's ``latent_pi`` MLP becomes ``net``'s hidden layers and its ``mu`` and ``log_std``
    heads are stacked into ``net``'s last layer; the mean action is the same, and the sampled one too unless
    SB3's log-std falls below our clamp of -5 (SB3 clamps at -20)."""
    import torch
    from stable_baselines3 import SAC

    from icml26.vipo.policy import Actor, save_actor

    sb3 = SAC.load(sb3_file, device="cpu").actor
    lin = [m for m in sb3.latent_pi if isinstance(m, torch.nn.Linear)]
    actor = Actor(lin[0].in_features, sb3.mu.out_features, tuple(m.out_features for m in lin))
    ours = [m for m in actor.net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for a, b in zip(ours[:-1], lin, strict=True):
            a.weight.copy_(b.weight)
            a.bias.copy_(b.bias)
        ours[-1].weight.copy_(torch.cat([sb3.mu.weight, sb3.log_std.weight]))
        ours[-1].bias.copy_(torch.cat([sb3.mu.bias, sb3.log_std.bias]))
    save_actor(actor, out, extra=extra)


def actor_policy(actor, env_id: str, deterministic: bool = False):
    """A ``policy(obs, rng)`` from an icml26 Actor (actions scaled to the task's bound); sampling uses ``rng``."""
    import gymnasium as gym
    import torch

    env = gym.make(env_id)
    high = env.action_space.high.astype(np.float32)
    env.close()

    def policy(obs, rng):
        with torch.no_grad():
            s = torch.as_tensor(obs, dtype=torch.float32)[None]
            mean, log_std = actor.net(s).chunk(2, -1)
            u = (
                mean
                if deterministic
                else mean
                + log_std.clamp(-5.0, 2.0).exp() * torch.as_tensor(rng.normal(size=mean.shape), dtype=torch.float32)
            )
        return np.tanh(u.numpy()[0]) * high

    return policy


def random_policy(env_id: str):
    import gymnasium as gym

    env = gym.make(env_id)
    low, high = env.action_space.low, env.action_space.high
    env.close()
    return lambda obs, rng: rng.uniform(low, high)


def replay_episodes(buffer_file: str | Path, env_id: str, limit: int | None = None) -> list[dict]:
    """The replay buffer of an SB3 run (``save_replay_buffer``), in insertion order, cut into episodes.

    SB3 keeps the true terminal observation as ``next_observations`` and flags time-limit ends in
    ``timeouts``; actions are stored in the policy's [-1, 1] scale and mapped back to the action space.
    """
    import gymnasium as gym
    from stable_baselines3.common.save_util import load_from_pkl

    buf = load_from_pkl(buffer_file)
    n = buf.buffer_size if buf.full else buf.pos
    if buf.full:  # oldest first
        order = np.r_[np.arange(buf.pos, buf.buffer_size), np.arange(buf.pos)]
    else:
        order = np.arange(n)
    if limit is not None:
        order = order[-limit:]
    obs, nxt = buf.observations[order, 0], buf.next_observations[order, 0]
    act, rew = buf.actions[order, 0], buf.rewards[order, 0]
    dones, timeouts = buf.dones[order, 0].astype(bool), buf.timeouts[order, 0].astype(bool)
    env = gym.make(env_id)
    low, high = env.action_space.low, env.action_space.high
    env.close()
    act = low + 0.5 * (act + 1.0) * (high - low)
    episodes, start = [], 0
    for t in range(len(order)):
        last = t == len(order) - 1
        if dones[t] or last or not np.array_equal(nxt[t], obs[t + 1]):
            sl = slice(start, t + 1)
            term = dones[sl] & ~timeouts[sl]
            trunc = np.zeros(t + 1 - start, bool)
            trunc[-1] = not term[-1]
            episodes.append(_pack({"observations": np.concatenate([obs[sl], nxt[t : t + 1]]), "actions": act[sl],
                                   "rewards": rew[sl], "terminations": term, "truncations": trunc}))  # fmt: skip
            start = t + 1
    return episodes


def episodes_to_d4rl(episodes: list[dict]) -> dict[str, np.ndarray]:
    """Flatten Minari episodes into D4RL's keys (``timeouts`` = truncations)."""
    cat = np.concatenate
    return {
        "observations": cat([e["observations"][:-1] for e in episodes]).astype(np.float32),
        "actions": cat([e["actions"] for e in episodes]).astype(np.float32),
        "rewards": cat([e["rewards"] for e in episodes]).astype(np.float32),
        "next_observations": cat([e["observations"][1:] for e in episodes]).astype(np.float32),
        "terminals": cat([e["terminations"] for e in episodes]).astype(bool),
        "timeouts": cat([e["truncations"] for e in episodes]).astype(bool),
    }


# --------------------------------------------------------------------------------------------------------
# 3. the Minari on-disk layout


def _box_json(space, dtype: str = "float32") -> str:
    return json.dumps({"type": "Box", "dtype": dtype, "shape": list(space.shape), "low": space.low.tolist(),
                       "high": space.high.tolist()})  # fmt: skip


def write_minari(path: str | Path, episodes: list[dict], env_id: str, dataset_id: str, extra: dict | None = None):
    """Write ``episodes`` as a Minari data set in the new directory ``path`` (``path/data/...``), atomically:
    built in a temporary sibling directory and renamed when complete."""
    import gymnasium as gym
    import h5py

    path = Path(path)
    if path.exists():
        raise FileExistsError(f"output {path} exists; Minari data sets are never overwritten")
    if not episodes:
        raise ValueError("no episodes to write")
    env = gym.make(env_id)
    meta = {
        "dataset_id": dataset_id,
        "minari_version": MINARI_VERSION,
        "total_episodes": len(episodes),
        "total_steps": int(sum(len(e["rewards"]) for e in episodes)),
        "data_format": "hdf5",
        "jpeg_encoding": False,
        "observation_space": _box_json(env.observation_space),
        "action_space": _box_json(env.action_space),
        "env_spec": env.spec.to_json(),
        "dataset_size": None,
        "requirements": ["gymnasium[mujoco]>=1.0"],
        **(extra or {}),
    }
    env.close()
    tmp = path.with_name(f".{path.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        (tmp / "data").mkdir(parents=True)
        with h5py.File(tmp / "data" / "main_data.hdf5", "w") as fh:
            for i, e in enumerate(episodes):
                g = fh.create_group(f"episode_{i}")
                g.attrs["id"] = i
                g.attrs["total_steps"] = len(e["rewards"])
                for k in ("observations", "actions", "rewards", "terminations", "truncations"):
                    g.create_dataset(k, data=e[k], compression="gzip", shuffle=True)
                g.create_group("infos")
        (tmp / "data" / "metadata.json").write_text(json.dumps(meta))
        tmp.rename(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _minari_data_dir(path: Path) -> Path:
    for cand in (path / "data", path):
        if (cand / "metadata.json").is_file() and (cand / "main_data.hdf5").is_file():
            return cand
    raise ValueError(
        f"{path} is not a Minari data set (no data/metadata.json + data/main_data.hdf5 inside); "
        "give a Minari dataset directory, a .npz or a D4RL .hdf5 file"
    )


def read_minari(path: str | Path) -> tuple[list[dict], dict]:
    """Episodes and metadata of a Minari HDF5 data set (its directory, or its ``data`` folder)."""
    import h5py

    d = _minari_data_dir(Path(path))
    try:
        meta = json.loads((d / "metadata.json").read_text())
        if not isinstance(meta, dict):
            raise ValueError("metadata is not a JSON object")
        if meta.get("data_format", "hdf5") != "hdf5":
            raise ValueError(f"data format {meta.get('data_format')!r}; only hdf5 is read")
        episodes = []
        with h5py.File(d / "main_data.hdf5", "r") as fh:
            keys = sorted((k for k in fh if k.startswith("episode_")), key=lambda k: int(k.split("_")[1]))
            for k in keys:
                g = fh[k]
                e = {n: np.asarray(g[n]) for n in ("observations", "actions", "rewards", "terminations", "truncations")}
                if len(e["observations"]) != len(e["rewards"]) + 1:
                    raise ValueError(f"{k}: observations must hold one more step than rewards")
                episodes.append(e)
    except (OSError, KeyError, TypeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"Minari data set {path} is not readable ({exc.__class__.__name__}: {exc})") from None
    except ValueError as exc:
        raise ValueError(f"Minari data set {path}: {exc}") from None
    if not episodes:
        raise ValueError(f"Minari data set {path} holds no episodes")
    return episodes, meta


# --------------------------------------------------------------------------------------------------------
# 4. the recipe, end to end


def make_d4rl_like(
    task: str,
    kind: str,
    transitions: int,
    work: str | Path,
    recipe: BehaviourRecipe = BehaviourRecipe(),
    seed: int = 0,
    show_progress: bool = True,
) -> tuple[list[dict], dict]:
    """Episodes of one D4RL-like data set and its metadata; SAC checkpoints live (and resume) in ``work``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    env_id = task_env(task)
    info: dict = {"task": task, "kind": kind, "seed": seed}
    if kind == "random":
        episodes = collect(random_policy(env_id), env_id, transitions, seed, show_progress)
    else:
        state = train_behaviour(task, work, recipe, seed, stop_at_medium=True, show_progress=show_progress)
        info["behaviour"] = {"medium_checkpoint": state["medium"], "medium_reached": state["medium_reached"],
                             "sac_steps": state["steps"], "evals": state["evals"]}  # fmt: skip
        if kind == "medium":
            episodes = collect(sb3_policy(Path(work) / state["medium"], env_id), env_id, transitions, seed,
                               show_progress)  # fmt: skip
        elif kind == "medium-replay":
            buf = "buffer_medium.pkl" if state["medium_reached"] else "buffer.pkl"
            episodes = replay_episodes(Path(work) / buf, env_id, limit=transitions)
        else:  # expert / medium-expert: the same SAC run continued to the expert budget
            full = train_behaviour(task, work, recipe, seed, stop_at_medium=False, max_steps=recipe.expert_steps,
                                   show_progress=show_progress)  # fmt: skip
            expert = sb3_policy(Path(work) / full["latest"], env_id)
            info["behaviour"]["expert_checkpoint"] = full["latest"]
            if kind == "expert":
                episodes = collect(expert, env_id, transitions, seed, show_progress)
            else:
                half = transitions // 2
                medium = sb3_policy(Path(work) / state["medium"], env_id)
                episodes = collect(medium, env_id, half, seed, show_progress)
                episodes += collect(expert, env_id, transitions - half, seed + 1, show_progress)
    returns = [float(e["rewards"].sum()) for e in episodes if e["terminations"][-1] or e["truncations"][-1]]
    lo, hi = D4RL_REF[task]
    info.update({
        "env": env_id,
        "ref_min_score": lo,
        "ref_max_score": hi,
        "ref_source": "D4RL v2 reference returns (d4rl/infos.py REF_MIN_SCORE / REF_MAX_SCORE)",
        "d4rl_like": "generated locally with D4RL's recipe on Gymnasium v5 -- not D4RL data",
        "behaviour_return_mean": float(np.mean(returns)),
        "behaviour_normalised": float(normalised(task, np.mean(returns))),
    })  # fmt: skip
    return episodes, info
