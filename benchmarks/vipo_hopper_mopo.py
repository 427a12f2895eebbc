"""MOPO vs MOPO+VIPO on D4RL-like Hopper-v5 data at a laptop budget (exploratory; not a claim).

    python benchmarks/vipo_hopper_mopo.py --seeds 0,1,2,3,4 --steps 3000

Per seed ``k``: the ``small`` Hopper claims' data (10,000 transitions collected with the shipped medium actor,
seed 2000 + k) and their two ensembles (NLL, and NLL + phi L_value with phi = 1e-2 and the value warm-up), then
MOPO (h = 5, penalty 1.0, real ratio 0.5, SAC [128, 128], lr 3e-4) for ``--steps`` updates on each, scored by
D4RL-normalised return (mean of the last 2 evaluations of 3 episodes) and the model's error on the states the
final policy visits. Writes ``benchmarks/results/vipo_hopper_mopo.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.vipo import claims as C
from icml26.vipo.data import termination_fn
from icml26.vipo.dynamics import model_error
from icml26.vipo.mujoco_data import normalised
from icml26.vipo.policy import PolicyConfig, train_policy


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "vipo_hopper_mopo.json")
    args = p.parse_args()
    torch.set_num_threads(1)
    runs = {}
    for seed in (int(x) for x in args.seeds.split(",")):
        s = seed + C.HOPPER_SEEDS
        data = C._hopper_data("small", s)
        for variant in ("nll", "vipo"):
            t0 = time.perf_counter()
            model, _ = C._hopper_model("small", s, variant, s)
            pc = PolicyConfig(algo="mopo" + ("+vipo" if variant == "vipo" else ""), steps=args.steps, batch=256,
                              hidden=(128, 128), rollout_length=5, rollout_batch=2000, rollout_every=250,
                              real_ratio=0.5, penalty=1.0, eval_every=1000, eval_episodes=3, last_evals=2,
                              actor_lr=3e-4, critic_lr=3e-4)  # fmt: skip
            _, log = train_policy(data, model, C.HOPPER, pc, termination_fn(C.HOPPER), seed=s)
            runs[f"{seed}/{pc.algo}"] = {
                "curve": [float(normalised("hopper", r)) for r in log.eval_returns],
                "score": float(np.mean(normalised("hopper", log.eval_returns[-2:]))),
                "policy_state_error": model_error(model, log.visited_obs, log.visited_act, log.visited_next),
                "seconds": time.perf_counter() - t0,
            }
            print(seed, pc.algo, runs[f"{seed}/{pc.algo}"], flush=True)
    seeds = sorted({k.split("/")[0] for k in runs})
    diff = [runs[f"{k}/mopo+vipo"]["score"] - runs[f"{k}/mopo"]["score"] for k in seeds]
    summary = {
        "runs": runs,
        "score MOPO": [runs[f"{k}/mopo"]["score"] for k in seeds],
        "score MOPO+VIPO": [runs[f"{k}/mopo+vipo"]["score"] for k in seeds],
        "MOPO+VIPO - MOPO mean": float(np.mean(diff)),
        "MOPO+VIPO - MOPO sd": float(np.std(diff, ddof=1)) if len(diff) > 1 else None,
    }
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
