"""d3rlpy's IQL and CQL as reference peers on the return claims' D4RL-like MuJoCo data, at the claims' budget.

    python benchmarks/vipo_mujoco_peers.py [--data v2] --seeds 0,1,2 [--tasks hopper,halfcheetah] [--steps 3000]

Per task and seed ``k``: the ``small`` data of the return claims of data version ``--data`` (10,000 transitions
of the shipped medium actor's stochastic actions -- the very transitions the claims' hosts learn from): ``v2``
(default; Hopper's real-medium actor, SAC 120k steps) on collection seed 5000 + k, the seed stream of
``vipo/improves-return-mujoco-v2`` and ``vipo/improves-return-mobile-mujoco-v1``; ``v1`` (Hopper's low-medium
actor, 25k steps) on seed 3000 + k, that of ``vipo/improves-return-mujoco-v1``. Then d3rlpy 2.8.1's IQL
(``--algos``; CQL too if named: its update is ~5x slower) for ``--steps`` updates of batch 256 with [128, 128]
networks (the claims' SAC size and step count; everything else d3rlpy's defaults -- no tuning for either side),
evaluated like the claims' hosts: 3 deterministic episodes every 1,000 updates in the true Gymnasium v5 task,
score = D4RL-normalised mean of the last 2 evaluations. Throughput (first seed): median seconds per ``update``
of IQL and CQL over ``--throughput-steps`` updates, and ours: one MOPO policy step (SAC update, batch 256,
[128, 128], with the claims' model rollouts -- 2,000 starts x h = 5 every 250 steps -- amortised) on an NLL
ensemble of the same data. Writes ``benchmarks/results/vipo_mujoco_peers_<data>.json`` (v1's run is
``vipo_mujoco_peers.json``). Needs d3rlpy (see the README, Deviations: installed with ``--no-deps``); without it
the script stops with a message.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

from icml26.vipo import claims as C
from icml26.vipo.config import PRESETS
from icml26.vipo.data import termination_fn
from icml26.vipo.dynamics import train_dynamics
from icml26.vipo.mujoco_data import episode_returns, normalised
from icml26.vipo.policy import train_policy

EVAL_EVERY, EVAL_EPISODES, LAST_EVALS, BATCH, HIDDEN = 1000, 3, 2, 256, [128, 128]


def d3rlpy_algos():
    import d3rlpy

    enc = d3rlpy.models.encoders.VectorEncoderFactory(HIDDEN)
    return {
        "IQL": d3rlpy.algos.IQLConfig(batch_size=BATCH, actor_encoder_factory=enc, critic_encoder_factory=enc,
                                      value_encoder_factory=enc),
        "CQL": d3rlpy.algos.CQLConfig(batch_size=BATCH, actor_encoder_factory=enc, critic_encoder_factory=enc),
    }  # fmt: skip


def evaluate(predict, env_id: str, seed: int) -> float:
    """Mean return of ``EVAL_EPISODES`` deterministic episodes (the claim's hosts are evaluated the same way)."""
    return float(np.mean(episode_returns(predict, env_id, EVAL_EPISODES, seed)))


def mdp_dataset(data: dict):
    import d3rlpy

    terminals, timeouts = data["terminals"].astype(np.float32), data["timeouts"].astype(np.float32)
    obs, act, rew = data["observations"], data["actions"], data["rewards"]
    return d3rlpy.dataset.MDPDataset(obs, act, rew, terminals, timeouts=timeouts)


def update_ms(cfg, data: dict, steps: int, seed: int) -> float:
    """Median wall time of one d3rlpy ``update`` (batch sampling excluded)."""
    import d3rlpy

    d3rlpy.seed(seed)
    ds = mdp_dataset(data)
    algo = cfg.create(device="cpu:0")
    algo.build_with_dataset(ds)
    buf = d3rlpy.dataset.ReplayBuffer(d3rlpy.dataset.InfiniteBuffer(), episodes=ds.episodes)
    times = []
    for _ in range(steps):
        batch = buf.sample_transition_batch(BATCH)
        t0 = time.perf_counter()
        algo.update(batch)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def run_d3rlpy(name: str, cfg, data: dict, task: str, steps: int, seed: int) -> dict:
    import d3rlpy

    d3rlpy.seed(seed)
    ds = mdp_dataset(data)
    algo = cfg.create(device="cpu:0")
    algo.build_with_dataset(ds)
    buf = d3rlpy.dataset.ReplayBuffer(d3rlpy.dataset.InfiniteBuffer(), episodes=ds.episodes)
    env_id, times, curve = C.MUJOCO_TASKS[task], [], []
    for i in range(steps):
        batch = buf.sample_transition_batch(BATCH)
        t0 = time.perf_counter()
        algo.update(batch)
        times.append(time.perf_counter() - t0)
        if (i + 1) % EVAL_EVERY == 0 or i + 1 == steps:
            ret = evaluate(lambda o: algo.predict(np.asarray(o, np.float32)[None])[0], env_id, 10_000 + seed)
            curve.append(float(normalised(task, ret)))
    return {"curve": curve, "score": float(np.mean(curve[-LAST_EVALS:])), "update [ms]": 1e3 * statistics.median(times),
            "episodes in d3rlpy's split": len(ds.episodes)}  # fmt: skip


def mopo_step_ms(data: dict, task: str, steps: int) -> float:
    """Wall time per MOPO policy step on the claim's configuration (rollouts amortised; one evaluation at the end)."""
    env_id = C.MUJOCO_TASKS[task]
    dc = dataclasses.replace(PRESETS["small"].mujoco_dynamics, phi=0.0, epochs=2)
    model, _ = train_dynamics(data, dc, 0, termination_fn=termination_fn(env_id))
    pc = dataclasses.replace(PRESETS["small"].mujoco_policy, steps=steps, eval_every=10**9, eval_episodes=1)
    t0 = time.perf_counter()
    train_policy(data, model, env_id, pc, termination_fn(env_id), seed=0)
    return 1e3 * (time.perf_counter() - t0) / steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--tasks", default="hopper,halfcheetah")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--algos", default="IQL", help="d3rlpy algorithms trained and scored (IQL, CQL)")
    p.add_argument("--throughput-steps", type=int, default=300, help="updates timed per algorithm (ours: MOPO steps)")
    p.add_argument(
        "--data",
        choices=sorted(C.DATA_VERSIONS),
        default="v2",
        help="data version of the return claims (v2: seeds 5000 + k; v1: seeds 3000 + k)",
    )
    p.add_argument("--out", type=Path, default=None, help="default benchmarks/results/vipo_mujoco_peers_<data>.json")
    args = p.parse_args()
    offset = {"v1": C.RETURN_SEEDS, "v2": C.V2_SEEDS}[args.data]
    if args.out is None:
        name = "vipo_mujoco_peers.json" if args.data == "v1" else f"vipo_mujoco_peers_{args.data}.json"
        args.out = Path(__file__).parent / "results" / name
    if importlib.util.find_spec("d3rlpy") is None:
        sys.exit("d3rlpy is not importable here: pip install --no-deps d3rlpy==2.8.1 and its light dependencies "
                 "(see src/icml26/vipo/README.md, Deviations)")  # fmt: skip
    import d3rlpy

    torch.set_num_threads(1)
    runs: dict = {}
    speed: dict = {}
    algos = args.algos.split(",")
    for task in args.tasks.split(","):
        for k in (int(x) for x in args.seeds.split(",")):
            data = C._task_data("small", task, k + offset, args.data)
            if task not in speed:  # throughput on the first seed's data
                speed[task] = {"MOPO step (ours) [ms]": mopo_step_ms(data, task, args.throughput_steps)}
                for name, cfg in d3rlpy_algos().items():
                    speed[task][f"{name} update [ms]"] = update_ms(cfg, data, args.throughput_steps, k)
                    speed[task][f"MOPO step / {name} update"] = (
                        speed[task]["MOPO step (ours) [ms]"] / speed[task][f"{name} update [ms]"]
                    )
                print(task, speed[task], flush=True)
            for name, cfg in d3rlpy_algos().items():
                if name in algos:
                    runs[f"{task}/{k}/{name}"] = run_d3rlpy(name, cfg, data, task, args.steps, k + offset)
                    print(task, k, name, runs[f"{task}/{k}/{name}"], flush=True)
    summary = {}
    for task in args.tasks.split(","):
        row = dict(speed[task])
        for name in algos:
            sc = [v["score"] for key, v in runs.items() if key.startswith(f"{task}/") and key.endswith(f"/{name}")]
            row[f"{name} score mean"] = float(np.mean(sc))
            row[f"{name} score sd"] = float(np.std(sc, ddof=1)) if len(sc) > 1 else None
            row[f"{name} scores"] = sc
        summary[task] = row
    machine = {"python": platform.python_version(), "torch": torch.__version__, "d3rlpy": d3rlpy.__version__}
    result = {
        "machine": machine,
        "data": args.data,
        "seeds": [int(x) + offset for x in args.seeds.split(",")],
        "steps": args.steps,
        "summary": summary,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
