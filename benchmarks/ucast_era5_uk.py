"""U-Cast on a real hourly series: ERA5 2 m temperature over the UK, March 2019 (shipped with icml26, GRIB).

The smallest U-Cast (the ``era5`` preset's U-Net, 8/16/32 channels) is trained on the first three weeks
(1-21 March, 504 h) with a 6-hour model step and forecasts 22-31 March from 00/06/12/18 UTC, 4 steps
(6-24 h), 10 MC-dropout members. Its CRPS is compared with persistence, the training-period climatology and
a climatological ensemble (the 21 training days at the valid hour), with stage-1 MC dropout beside it.

Each comparison is a paired per-seed gain, 1 - CRPS(U-Cast) / CRPS(reference) (mean over the leads), judged by
its 95 % t-interval over seeds against a 5 % bar, next to its two controls (contract v3): the A/A reference, a
second U-Cast ensemble from the same model with its own dropout masks (the gain must scatter around 0 and
fail), and the positive control, that A/A twin handicapped by c = 1 / (1 - 0.075) (every member mapped to
truth + c (x - truth), which multiplies its CRPS by exactly c: a planted 7.5 % gain, 1.5 x the bar, which
must hold).

Usage: ``python benchmarks/ucast_era5_uk.py [--seeds 0 1 2] [--det-steps 1000] [--prob-steps 300]``; JSON in
``benchmarks/results/ucast_era5_uk.json``. Contains modified Copernicus Climate Change Service information
(2019).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from scipy import stats

from icml26.ucast.data import load_era5_uk
from icml26.ucast.experiment import run_time_split

BAR, PLANT = 0.05, 0.075
REFS = ("persistence", "climatology", "diurnal_climatology", "mc_dropout")


def interval(values: list[float]) -> tuple[float, float, float]:
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()), float("nan"), float("nan")
    half = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--det-steps", type=int, default=1000)
    ap.add_argument("--prob-steps", type=int, default=300)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "ucast_era5_uk.json"))
    ap.add_argument("--from-json", default=None, help="summarise the runs of an earlier (partial) output instead")
    args = ap.parse_args()
    torch.set_num_threads(1)
    runs = json.loads(Path(args.from_json).read_text())["runs"] if args.from_json else []
    args.seeds = [r["seed"] for r in runs] or args.seeds
    ds = None if runs else load_era5_uk()
    for seed in [] if runs else args.seeds:
        t0 = time.perf_counter()
        res = run_time_split(
            ds, "2019-03-22", every=6, steps=4, seed=seed, det_steps=args.det_steps, prob_steps=args.prob_steps
        )
        res["seed"], res["seconds"] = seed, time.perf_counter() - t0
        runs.append(res)
        print(f"seed {seed}: {res['seconds']:.0f} s", flush=True)
        Path(args.out).write_text(json.dumps({"partial": True, "runs": runs}, indent=1))

    def crps(r, name):  # mean over leads
        return float(np.mean(r["scores"][name]["crps"]))

    gains = {ref: [1 - crps(r, "ucast") / crps(r, ref) for r in runs] for ref in REFS}
    gains["A/A: second U-Cast ensemble (negative control)"] = [
        1 - crps(r, "ucast") / crps(r, "ucast_twin") for r in runs
    ]
    c = 1 / (1 - PLANT)
    gains["planted 7.5 % on the A/A pair (positive control)"] = [
        1 - crps(r, "ucast") / (c * crps(r, "ucast_twin")) for r in runs
    ]
    judged = {}
    for name, values in gains.items():
        mean, lo, hi = interval(values)
        verdict = "holds" if lo > BAR else ("fails" if hi < BAR else "undecided")
        if len(values) < 2:
            verdict = "holds" if mean > BAR else "fails"
        judged[name] = {"per_seed": values, "mean": mean, "ci95": [lo, hi], "verdict": verdict}
    models = list(runs[0]["scores"])
    table = {
        name: {
            metric: np.mean([r["scores"][name][metric] for r in runs], axis=0).tolist()
            for metric in ("crps", "rmse", "ssr")
            if metric in runs[0]["scores"][name]
        }
        for name in models
    }
    out = {
        "data": "ERA5 2 m temperature, UK, March 2019 (icml26.ucast.data.ERA5_UK)",
        "split": runs[0]["split"],
        "seeds": args.seeds,
        "train_steps": runs[0]["train_steps"],
        "leads_hours": runs[0]["leads_hours"],
        "n_test_inits": runs[0]["n_test_inits"],
        "units": "K",
        "mean_over_seeds": table,
        "gain_bar": BAR,
        "gains (1 - CRPS(U-Cast)/CRPS(ref), mean over leads)": judged,
        "rank_hist_last_lead": {
            k: np.sum([r["rank_hist"][k] for r in runs], axis=0).tolist() for k in runs[0]["rank_hist"]
        },
        "runs": runs,
        "note": "2-core shared CPU, one thread",
    }
    Path(args.out).write_text(json.dumps(out, indent=1))
    for name, sc in table.items():
        ssr = " ".join(f"{v:.2f}" for v in sc.get("ssr", []))
        crps_row, rmse_row = (" ".join(f"{v:.3f}" for v in sc[k]) for k in ("crps", "rmse"))
        print(f"{name:20s} CRPS {crps_row}  RMSE {rmse_row}  SSR {ssr}")
    for name, j in judged.items():
        print(f"gain vs {name}: {j['mean']:.3f} [{j['ci95'][0]:.3f}, {j['ci95'][1]:.3f}] -> {j['verdict']}")


if __name__ == "__main__":
    main()
