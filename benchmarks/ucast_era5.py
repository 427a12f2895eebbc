"""U-Cast on real ERA5 fields: the ``era5`` preset trained and scored on the sample shipped for the tests.

The sample (tests/data/era5-sample/era5-levels-members.nc: z and t at 500 and 850 hPa, 10 ensemble members x
4 times 12 h apart, 3 degrees) is far too small to train a forecaster; this run shows the real-data path end
to end and puts U-Cast's CRPS/SSR next to persistence and climatology on held-out members. Contains modified
Copernicus Climate Change Service information (2017).

Usage: ``python benchmarks/ucast_era5.py [--data FILE_OR_ZARR] [--seeds 0 1 2]``; JSON in
``benchmarks/results/ucast_era5.json``. With a WeatherBench2 Zarr of your own, pass ``--data``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.ucast.experiment import run_on_data

SAMPLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "era5-sample" / "era5-levels-members.nc"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(SAMPLE))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--preset", default="era5")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "ucast_era5.json"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    runs = []
    for seed in args.seeds:
        t0 = time.perf_counter()
        res = run_on_data(args.data, args.preset, seed=seed)
        res["seed"], res["seconds"] = seed, time.perf_counter() - t0
        runs.append(res)
        print(f"seed {seed}: {res['seconds']:.0f} s; {res['split']}", flush=True)
    models = list(runs[0]["scores"])
    table = {}
    for name in models:
        table[name] = {
            metric: np.mean([r["scores"][name][metric] for r in runs], axis=0).tolist()
            for metric in ("crps", "rmse", "ssr")
            if metric in runs[0]["scores"][name]
        }
    out = {
        "data": Path(args.data).name,
        "preset": args.preset,
        "seeds": args.seeds,
        "leads (12 h steps)": runs[0]["leads"],
        "mean_over_seeds": table,
        "runs": runs,
        "note": "normalised units, area-weighted, mean over variables; 2-core shared CPU, one thread",
    }
    Path(args.out).write_text(json.dumps(out, indent=1))
    for name, sc in table.items():
        ssr = " ".join(f"{v:.3f}" for v in sc.get("ssr", []))
        print(f"{name:12s} CRPS {' '.join(f'{v:.4f}' for v in sc['crps'])}  SSR {ssr}")


if __name__ == "__main__":
    main()
