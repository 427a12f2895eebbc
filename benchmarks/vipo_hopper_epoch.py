"""Dynamics-training epoch cost on D4RL-like Hopper (or HalfCheetah) data, with and without the VIPO term.

    python benchmarks/vipo_hopper_epoch.py [--task halfcheetah] [--out benchmarks/results/vipo_<task>_epoch.json]

Data: the shipped smoke-size <task>-medium Minari set (4,000 transitions). Model: the ``small`` preset's Hopper
ensemble (5 x [128, 128], values [128, 128]). Three epoch kinds are timed from ``DynamicsLog.epoch_seconds``:
NLL only (phi = 0), the value warm-up (NLL + 5 value TD steps per batch) and NLL + L_value (after the warm-up).
One torch thread; the machine's load is recorded, since the ratios move with it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import torch

from icml26.vipo.claims import MUJOCO_TASKS, SMOKE_SETS
from icml26.vipo.config import PRESETS
from icml26.vipo.data import load_dataset, termination_fn
from icml26.vipo.dynamics import train_dynamics


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=list(MUJOCO_TASKS), default="hopper")
    p.add_argument("--out", type=Path, help="default: benchmarks/results/vipo_<task>_epoch.json")
    args = p.parse_args()
    out = args.out or Path(__file__).parent / "results" / f"vipo_{args.task}_epoch.json"
    torch.set_num_threads(1)
    data = load_dataset(SMOKE_SETS[args.task], MUJOCO_TASKS[args.task])
    dc = PRESETS["small"].mujoco_dynamics
    term = termination_fn(MUJOCO_TASKS[args.task])
    _, nll = train_dynamics(data, dataclasses.replace(dc, phi=0.0, epochs=6), 0, termination_fn=term)
    _, vipo = train_dynamics(data, dataclasses.replace(dc, epochs=6, value_warmup_epochs=3), 0, termination_fn=term)
    res = {
        "task": args.task,
        "transitions": len(data["rewards"]),
        "ensemble": f"{dc.members} x {list(dc.hidden)}",
        "epoch_s_nll": float(np.median(nll.epoch_seconds[1:])),
        "epoch_s_value_warmup": float(np.median(vipo.epoch_seconds[1:3])),
        "epoch_s_nll_plus_vipo": float(np.median(vipo.epoch_seconds[3:])),
        "load_average_1min": os.getloadavg()[0],
    }
    res["ratio_vipo_over_nll"] = res["epoch_s_nll_plus_vipo"] / res["epoch_s_nll"]
    res["ratio_warmup_over_nll"] = res["epoch_s_value_warmup"] / res["epoch_s_nll"]
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
