"""Real place cells (issue 40 item 3): DCF vs PCA, CEBRA-Time, GPFA and a frame VAE on rat hippocampal laps.

Data: the bundled nelpy linear-track session (MIT; ``icml26.dualflow.hippocampus``), 100 ms bins, units above
0.1 Hz, laps cut from the position; each lap is split into windows of ``WINDOW`` bins (the trials every
method sees; the remainder of a lap is dropped). Laps are assigned to 4 folds in pairs (one lap each way), so
every fold holds both running directions. Per fold every method is fitted **unsupervised** on the training
laps' windows (smoothed counts, Gaussian sigma = 2 bins; GPFA on the raw counts) and the animal's position is
decoded from its 3-D latent on the held-out laps by least squares (linear R^2) and by 10-nearest-neighbour
regression on per-coordinate standardised latents (kNN R^2), both fitted on the training laps' latents.

Budgets (fit + transform wall time is printed): DCF 600 Adam steps at batch 128 (width 64, depth 3, h = 2,
budget 1/p = 10, RK4 8 steps); CEBRA-Time 1,000 iterations at batch 512 (offset1-model, cosine, T = 1);
GPFA 15 EM iterations; the VAE 600 steps at batch 256; PCA exact.

Run: ``python benchmarks/dualflow_hippocampus.py`` (about 5-10 min on one shared core); writes
``benchmarks/results/dualflow_hippocampus.json`` and, with matplotlib, ``dualflow_hippocampus.png``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from icml26.dualflow import DualFlow
from icml26.dualflow.baselines import CEBRABaseline, GPFABaseline, PCABaseline, VAEBaseline
from icml26.dualflow.hippocampus import load_linear_track
from icml26.dualflow.metrics import knn_decoding_r2, latent_decoding_r2

WINDOW, N_FOLDS, N_LATENT = 25, 4, 3
DCF = {
    "hidden": 64,
    "depth": 3,
    "history": 2,
    "batch_size": 128,
    "n_steps": 600,
    "latent_budget": 10.0,
    "solver": "rk4",
    "rk4_steps": 8,
}


def windows(laps, smoothed):
    """(counts (n, WINDOW, N), smoothed (n, WINDOW, N), position (n, WINDOW, 1), lap index (n,))."""
    c, s, p, lap = [], [], [], []
    for i, (ci, si, pi) in enumerate(zip(laps.counts, smoothed, laps.position, strict=True)):
        for k in range(len(ci) // WINDOW):
            sl = slice(k * WINDOW, (k + 1) * WINDOW)
            c.append(ci[sl]), s.append(si[sl]), p.append(pi[sl, None]), lap.append(i)
    return np.stack(c).astype(float), np.stack(s), np.stack(p), np.array(lap)


def fit_transform(name: str, seed: int, C_tr, S_tr, C_te, S_te, bin_s: float):
    if name == "DCF":
        m = DualFlow(**DCF, random_state=seed).fit(S_tr)
        return m.transform(S_tr, n_components=N_LATENT), m.transform(S_te, n_components=N_LATENT)
    if name == "PCA":
        m = PCABaseline(N_LATENT).fit(S_tr)
    elif name == "VAE":
        m = VAEBaseline(n_components=N_LATENT, n_steps=600, seed=seed).fit(S_tr)
    elif name == "CEBRA-Time":
        m = CEBRABaseline(n_components=N_LATENT, max_iterations=1000, seed=seed).fit(S_tr)
    elif name == "GPFA":
        m = GPFABaseline(N_LATENT, bin_size=bin_s, em_max_iters=15, seed=seed).fit(C_tr)
        return m.transform(C_tr), m.transform(C_te)
    else:
        raise ValueError(name)
    return m.transform(S_tr), m.transform(S_te)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=["PCA", "DCF", "CEBRA-Time", "GPFA", "VAE"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--folds", type=int, default=N_FOLDS)
    ap.add_argument("--json", default="benchmarks/results/dualflow_hippocampus.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    laps = load_linear_track(rebin=2)
    C, S, P, lap = windows(laps, laps.smoothed(2.0))
    fold = (lap // 2) % args.folds
    print(f"{len(laps.counts)} laps, {C.shape[0]} windows of {WINDOW} bins x {C.shape[2]} units ({laps.bin_s} s bins)")
    results = {}
    for name in args.methods:
        lin, knn, secs, example = [], [], 0.0, None
        for f in range(args.folds):
            tr, te = fold != f, fold == f
            t0 = time.perf_counter()
            Z_tr, Z_te = fit_transform(name, args.seed + f, C[tr], S[tr], C[te], S[te], laps.bin_s)
            secs += time.perf_counter() - t0
            lin.append(latent_decoding_r2(Z_tr, P[tr], Z_te, P[te]))
            knn.append(knn_decoding_r2(Z_tr, P[tr], Z_te, P[te]))
            if f == 0:
                example = (Z_te.reshape(-1, N_LATENT), P[te].ravel())
        results[name] = {"linear R2": lin, "kNN R2": knn, "fit+transform s": secs, "example": example}
        print(
            f"{name:11s} linear R2 {np.mean(lin):.3f} ± {np.std(lin):.3f}  kNN R2 {np.mean(knn):.3f} ± "
            f"{np.std(knn):.3f}  ({secs:.1f} s for {args.folds} folds)",
            flush=True,
        )
    out = {k: {kk: vv for kk, vv in v.items() if kk != "example"} for k, v in results.items()}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1))
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3), squeeze=False)
    for ax, (name, r) in zip(axes[0], results.items(), strict=True):
        z, pos = r["example"]
        ax.scatter(z[:, 0], z[:, 1], c=pos, s=3, cmap="viridis")
        ax.set_title(f"{name}\nkNN R² {np.mean(r['kNN R2']):.2f}, lin {np.mean(r['linear R2']):.2f}", fontsize=9)
        ax.set_xticks([]), ax.set_yticks([])
    fig.suptitle("held-out laps (fold 0): latent coords 1-2, colour = position", fontsize=9)
    fig.tight_layout()
    fig.savefig(Path(args.json).with_suffix(".png"), dpi=110)


if __name__ == "__main__":
    main()
