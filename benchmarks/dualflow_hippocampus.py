"""Real place cells (issue 40): DCF vs PCA, GPFA, the frame VAE and CEBRA-Time on rat hippocampal laps.

Calls the library: every number comes from :func:`icml26.dualflow.real.fit_method`, the code the claim
``dualflow/real-place-cells-v3`` judges (bundled nelpy linear-track session, MIT; 100 ms bins, units above 0.1 Hz,
25-bin windows of laps; seed s draws its own split of the 24 lap pairs into 6 test / 6 validation / 12 training;
DCF and the VAE tuned on the same grid ``real.GRID`` of learning rate x steps on the validation pairs, then refitted
on training + validation; PCA exact; GPFA and CEBRA-Time at their fixed budgets). Position is decoded from each
method's 3-D latent on the test pairs (linear least squares and 10-NN, fitted on the fitting laps' latents).

Run: ``python benchmarks/dualflow_hippocampus.py [--seeds 0 1 2] [--scale small]`` (about 2 min per seed on one
shared core); writes ``benchmarks/results/dualflow_hippocampus.json`` and ``dualflow_hippocampus.png`` (the test
laps' latents of the first seed, coloured by position).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from icml26.claims import Scale
from icml26.dualflow.experiment import cebra_available
from icml26.dualflow.real import GRID, METHODS, fit_method, windows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--scale", default="small", choices=["smoke", "small"])
    ap.add_argument("--json", default="benchmarks/results/dualflow_hippocampus.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    scale = Scale(args.scale)
    methods = [m for m in args.methods if m != "CEBRA" or cebra_available()]
    w = windows()
    print(f"{w.counts.shape[0]} windows of {w.counts.shape[1]} bins x {w.counts.shape[2]} units ({w.bin_s} s bins)")
    results, first = {}, {}
    for name in methods:
        rows = []
        for seed in args.seeds:
            t0 = time.perf_counter()
            res = fit_method(name, scale, seed, seed)
            rows.append(
                {
                    "seed": seed,
                    "linear R2": res.linear_r2,
                    "kNN R2": res.knn_r2,
                    "chosen": res.chosen,
                    "validation": res.validation,
                    "fit+transform s (grid included)": time.perf_counter() - t0,
                }
            )
            if seed == args.seeds[0]:
                first[name] = res
        lin, knn = np.array([r["linear R2"] for r in rows]), np.array([r["kNN R2"] for r in rows])
        secs = float(np.mean([r["fit+transform s (grid included)"] for r in rows]))
        results[name] = {
            "per seed": rows,
            "linear R2 mean": lin.mean(),
            "linear R2 sd": lin.std(ddof=1),
            "kNN R2 mean": knn.mean(),
            "kNN R2 sd": knn.std(ddof=1),
            "seconds per seed": secs,
        }
        print(f"{name:6s} linear R2 {lin.mean():.3f} ± {lin.std(ddof=1):.3f}  kNN R2 {knn.mean():.3f} ± "
              f"{knn.std(ddof=1):.3f}  ({secs:.1f} s per seed)", flush=True)  # fmt: skip
    out = {"scale": args.scale, "seeds": args.seeds, "grid (lr x, steps x)": GRID, "methods": results}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1, default=float))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(first), figsize=(3.2 * len(first), 3), squeeze=False)
    for ax, (name, res) in zip(axes[0], first.items(), strict=True):
        z = res.z_test.reshape(-1, res.z_test.shape[-1])
        ax.scatter(z[:, 0], z[:, 1], c=res.position_test.ravel(), s=3, cmap="viridis")
        ax.set_title(f"{name}\nkNN R² {res.knn_r2:.2f}, lin {res.linear_r2:.2f}", fontsize=9)
        ax.set_xticks([]), ax.set_yticks([])
    fig.suptitle(f"held-out laps (seed {args.seeds[0]}): latent coords 1-2, colour = position", fontsize=9)
    fig.tight_layout()
    fig.savefig(Path(args.json).with_suffix(".png"), dpi=110)


if __name__ == "__main__":
    main()
