"""ZO-APMC vs EnKG vs gradient APMC on real photographs (issue 51 item 4): deblurring and phase retrieval.

A score prior is trained on random crops of six scikit-image photographs (PRIOR_PHOTOS), then each of four
other photographs (TEST_PHOTOS: camera, astronaut, coins, coffee; public domain / CC0), area-averaged to the
prior's size, is recovered from y = A(x) + sigma_y eps for two black-box forward models (blur + 2x
subsampling; subsampled Fourier magnitude) by ZO-APMC, EnKG and exact-gradient APMC at equal forward-model
queries per chain (icml26.zolangevin.photos). PSNR / SSIM of the posterior mean.

Judged row (contract v3; bar fixed before the run): the per-seed paired gain PSNR(ZO-APMC) - PSNR(EnKG),
averaged over the four photos, must have its 95 % t-interval over seeds above 0.25 dB (half the paper's
black-hole gap, 26.7 vs 26.2 dB). Negative control (A/A): a second EnKG run on its own random stream in
ZO-APMC's place. Positive control: that A/A twin's posterior mean moved towards the truth so its PSNR rises by
exactly 0.375 dB (1.5 x the bar). The same paired statistics are reported against gradient APMC.

    python benchmarks/zolangevin_photos.py [--size 16] [--seeds 0 1 2] [--prior-steps 3000] [--reuse OLD.json]

Writes benchmarks/results/zolangevin_photos.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch
from scipy import stats

from icml26.zolangevin.data import load_images
from icml26.zolangevin.photos import PROBLEMS, compare_on_photos
from icml26.zolangevin.prior import train_score_prior

BAR, PLANT = 0.25, 0.375


def interval(values):
    v = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan
    return float(v.mean()), float(v.mean() - half), float(v.mean() + half)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--prior-steps", type=int, default=3000)
    ap.add_argument("--prior-width", type=int, default=256)
    ap.add_argument("--chains", type=int, default=16)
    ap.add_argument("--steps-per-level", type=int, default=25)
    ap.add_argument("--sigma-y", type=float, default=0.05)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "zolangevin_photos.json"))
    ap.add_argument("--reuse", default=None, help="keep the runs of these seeds from an earlier output JSON")
    args = ap.parse_args()
    torch.set_num_threads(1)
    kept = json.loads(Path(args.reuse).read_text())["runs"] if args.reuse else []
    kept = [r for r in kept if r["seed"] in args.seeds]
    t0 = time.perf_counter()
    patches = load_images("photos", size=args.size, n=20_000, rng=np.random.default_rng(0))
    prior = train_score_prior(patches, n_steps=args.prior_steps, width=args.prior_width, seed=0, data="photos")
    prior_s = time.perf_counter() - t0
    print(f"prior: {prior_s:.0f} s, final DSM loss {prior.final_loss_:.4f}", flush=True)
    runs = list(kept)
    for seed in [s for s in args.seeds if s not in {r["seed"] for r in kept}]:
        t0 = time.perf_counter()
        res = compare_on_photos(
            prior,
            n_chains=args.chains,
            steps_per_level=args.steps_per_level,
            sigma_y=args.sigma_y,
            plant_db=PLANT,
            seed=seed,
        )
        for row in res["runs"]:
            row.pop("_means"), row.pop("_truth")
            row["seed"] = seed
        runs.extend(res["runs"])
        Path(args.out).with_suffix(".partial.json").write_text(json.dumps({"runs": runs}))
        print(f"seed {seed}: {time.perf_counter() - t0:.0f} s", flush=True)
    methods = ("ZO-APMC", "EnKG", "gradient APMC", "EnKG twin")
    table, judged = {}, {}
    for problem in PROBLEMS:
        rows = [r for r in runs if r["problem"] == problem]
        table[problem] = {
            m: {
                k: float(np.mean([r[m][k] for r in rows]))
                for k in ("psnr", "ssim", "coverage", "queries", "steps", "seconds")
            }
            for m in methods
        }
        per_seed = {
            name: [np.mean([r[a]["psnr"] - r[b]["psnr"] for r in rows if r["seed"] == s]) for s in args.seeds]
            for name, (a, b) in {
                "ZO-APMC - EnKG": ("ZO-APMC", "EnKG"),
                "A/A: EnKG twin - EnKG (negative control)": ("EnKG twin", "EnKG"),
                f"planted +{PLANT} dB on the twin - EnKG (positive control)": ("planted", "EnKG"),
                "ZO-APMC - gradient APMC": ("ZO-APMC", "gradient APMC"),
            }.items()
        }
        judged[problem] = {}
        for name, values in per_seed.items():
            mean, lo, hi = interval(values)
            verdict = "holds" if lo > BAR else ("fails" if hi < BAR else "undecided")
            judged[problem][name] = {"per_seed": values, "mean": mean, "ci95": [lo, hi], "verdict": verdict}
    out = {
        "size": args.size,
        "seeds": args.seeds,
        "prior": {"steps": args.prior_steps, "width": args.prior_width, "seconds": prior_s, "loss": prior.final_loss_},
        "sigma_y": args.sigma_y,
        "chains": args.chains,
        "bar_db": BAR,
        "mean_over_photos_and_seeds": table,
        "psnr_gains_db (per seed: mean over the 4 photos)": judged,
        "runs": runs,
        "note": "2-core shared CPU, one thread",
    }
    Path(args.out).write_text(json.dumps(out, indent=1))
    for problem, t in table.items():
        for m, v in t.items():
            print(f"{problem:16s} {m:14s} PSNR {v['psnr']:.2f} SSIM {v['ssim']:.3f} q/chain {v['queries']:.0f}")
        for name, j in judged[problem].items():
            print(f"  {name}: {j['mean']:+.2f} dB [{j['ci95'][0]:+.2f}, {j['ci95'][1]:+.2f}] -> {j['verdict']}")


if __name__ == "__main__":
    main()
