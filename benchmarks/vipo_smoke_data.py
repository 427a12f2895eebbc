"""Ship a smoke-size D4RL-like '<task>-medium' set and its medium actor into ``src/icml26/vipo/data``.

    icml26 vipo dataset --env halfcheetah --kind medium --transitions 50000 --out /tmp/halfcheetah-medium
    python benchmarks/vipo_smoke_data.py /tmp/halfcheetah-medium.work [--checkpoint sac_40000.zip] [--name NAME]

Reads the SAC run of ``icml26 vipo dataset`` (its ``.work`` directory: ``state.json`` and the checkpoints), takes
its medium checkpoint (or ``--checkpoint``), exports the actor (``<task>-medium-actor.pt``), collects 4,000
transitions of its stochastic actions (seed 0), writes them as a Minari data set (``<task>-medium-smoke``) and
fills the task's behaviour line and checksum into ``src/icml26/vipo/data/README.md``. ``--name`` ships a further
behaviour beside the one the claims read (``NAME-actor.pt``, ``NAME-smoke``; its lines are added to the README).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import torch

from icml26.vipo.mujoco_data import D4RL_REF, TASKS, actor_policy, collect, export_actor, normalised, write_minari
from icml26.vipo.policy import load_actor

DEST = Path(__file__).parents[1] / "src" / "icml26" / "vipo" / "data"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("work", type=Path, help="the .work directory of 'icml26 vipo dataset'")
    p.add_argument("--checkpoint", help="SAC checkpoint file name inside WORK (default: the run's medium one)")
    p.add_argument("--transitions", type=int, default=4000)
    p.add_argument("--name", help="file stem of the shipped actor and smoke set (default: <task>-medium)")
    args = p.parse_args()
    torch.set_num_threads(1)
    state = json.loads((args.work / "state.json").read_text())
    task, env_id = state["task"], TASKS[state["task"]]
    title = {"hopper": "Hopper", "halfcheetah": "HalfCheetah", "walker2d": "Walker2d"}[task]
    name = args.name or f"{task}-medium"
    actor_file = DEST / f"{name}-actor.pt"
    ck = args.checkpoint or state["medium"]
    steps, ret, norm = next(e for e in state["evals"] if f"sac_{e[0]}.zip" == ck)
    reached = bool(state["medium_reached"]) and ck == state["medium"]
    export_actor(args.work / ck, actor_file,
                 extra={"env": env_id, "sac_steps": steps, "eval_return": ret, "eval_normalised": norm,
                        "medium_reached": reached})  # fmt: skip
    policy = actor_policy(load_actor(actor_file), env_id)
    episodes = collect(policy, env_id, args.transitions, seed=0, show_progress=False)
    full = [float(e["rewards"].sum()) for e in episodes if e["terminations"][-1] or len(e["rewards"]) == 1000]
    mean = float(np.mean(full))
    out = DEST / f"{name}-smoke"
    shutil.rmtree(out, ignore_errors=True)
    lo, hi = D4RL_REF[task]
    write_minari(out, episodes, env_id, f"icml26/{name}-smoke-v0",
                 {"task": task, "kind": "medium", "seed": 0, "env": env_id, "ref_min_score": lo,
                  "ref_max_score": hi, "behaviour_return_mean": mean,
                  "behaviour_normalised": float(normalised(task, mean)), "sac_steps": steps,
                  "medium_reached": reached,
                  "d4rl_like": "generated locally with D4RL's recipe on Gymnasium v5 -- not D4RL data"})  # fmt: skip
    digest = hashlib.sha256((out / "data" / "main_data.hdf5").read_bytes()).hexdigest()
    key = f"{title} behaviour" + ("" if name == f"{task}-medium" else f" (`{name}`)")
    line = (
        f"{key}: SAC after {steps:,} environment steps (evaluation return {ret:.0f}, D4RL-normalised "
        f"{norm:.1f}; medium target {state['recipe']['medium_score']:g} "
        f"{'reached' if reached else 'NOT reached within the budget: the best checkpoint'}); the shipped "
        f"{len(full)} complete episodes return {mean:.0f} on average (normalised {normalised(task, mean):.1f})."
    )
    readme = (DEST / "README.md").read_text()
    check = f"sha256 of `{name}-smoke/data/main_data.hdf5`: `{digest}`"
    if re.search(rf"^{re.escape(key)}: ", readme, flags=re.M) is None:  # a new behaviour: its two lines go in
        readme = readme.replace("\nRegenerate ", f"\n{line}\n\n{check}\n\nRegenerate ", 1)
    readme = re.sub(rf"^{re.escape(key)}: .*$", line.replace("\\", "\\\\"), readme, flags=re.M)
    readme = re.sub(rf"(sha256 of `{name}-smoke/data/main_data.hdf5`: `)[^`]*(`)", rf"\g<1>{digest}\g<2>",
                    readme)  # fmt: skip
    (DEST / "README.md").write_text(readme)
    print(line, "sha256", digest)


if __name__ == "__main__":
    main()
