"""The learning curve of a D4RL-like behaviour run (SB3 SAC of ``icml26 vipo dataset``), with its wall-clock cost.

    python benchmarks/vipo_behaviour_curve.py /tmp/vipo-data/hopper-medium.work

Reads ``WORK/state.json`` (the evaluations: environment steps, mean return of the stochastic policy, D4RL-normalised
score) and the checkpoints' modification times (``sac_<steps>.zip``, one per evaluation); prints a markdown table
and writes ``benchmarks/results/vipo_<task>_behaviour_curve.json``. The minutes per 5k steps are those of this
shared machine (a niced process beside other users' jobs); a resumed run shows its pause as one long gap, which is
left out of the totals (gaps over an hour).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("work", type=Path, help="the .work directory of 'icml26 vipo dataset'")
    args = p.parse_args()
    state = json.loads((args.work / "state.json").read_text())
    rows, prev, busy = [], None, 0.0
    for steps, ret, norm in state["evals"]:
        ck = args.work / f"sac_{steps}.zip"
        t = ck.stat().st_mtime if ck.exists() else None
        gap = None if t is None or prev is None else (t - prev) / 60.0
        if gap is not None and gap < 60.0:
            busy += gap
        rows.append({"steps": steps, "return": round(ret, 1), "normalised": round(norm, 1),
                     "minutes_since_previous": None if gap is None else round(gap, 1)})  # fmt: skip
        prev = t if t is not None else prev
    out = {"task": state["task"], "env": state["env"], "seed": state["seed"], "recipe": state["recipe"],
           "recipe_changes": state.get("recipe_changes", []), "medium": state["medium"],
           "medium_reached": state["medium_reached"], "minutes_training_measured": round(busy, 1),
           "curve": rows}  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"vipo_{state['task']}_behaviour_curve.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("| SAC steps | return | D4RL-normalised | minutes since previous |\n|---|---|---|---|")
    for r in rows:
        gap = "—" if r["minutes_since_previous"] is None else f"{r['minutes_since_previous']:.1f}"
        print(f"| {r['steps']:,} | {r['return']:.0f} | {r['normalised']:.1f} | {gap} |")
    print(f"medium {state['medium']} ({'reached' if state['medium_reached'] else 'NOT reached'}); wrote {path}")


if __name__ == "__main__":
    main()
