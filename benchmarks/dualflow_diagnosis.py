"""Diagnosis of DCF on easy dynamics (issue 40): does the learned latent decode the true state as well as PCA?

Cases: a 2-D limit cycle (Van der Pol) and Lorenz-63, each observed (a) linearly (x = A z + Gaussian noise)
and (b) through Gaussian tuning curves with Poisson spikes (the claims' embedding, clean 20 Hz regime).
For each case and variant we fit DCF and report, on held-out trials, linear and kNN decoding R^2 of the true
state from the first d latent coordinates (d = the system's dimension) of

- ``enc``: the encoder features mu_psi(x^(1)) (the deterministic coupling's latent),
- ``flow``: the paper's flowed latent (u_phi integrated from tau = 1 to 0, then (L D^1/2)^-1),

against PCA(d) on the same frames; plus the flow's invertibility error (compress then decompress, relative
RMS), the losses at the start / end of training and the d_i spectrum head.

Run: ``python benchmarks/dualflow_diagnosis.py [--cases ...] [--variants ...] [--seeds 0 1 2 3 4]``;
writes ``benchmarks/results/dualflow_diagnosis.json`` and, beside it, ``<json stem>_decoding.png`` (DCF flowed
minus PCA, linear and kNN R^2, per case, variant and seed), ``<json stem>_losses.png`` (the four loss terms
along training, where the JSON holds loss curves) and ``<json stem>_invertibility.png`` (round-trip error).
``--plot-only`` redraws the figures from an existing JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from icml26.dualflow import DualFlow
from icml26.dualflow.baselines import PCABaseline
from icml26.dualflow.data import integrate_system, make_spiking_dataset
from icml26.dualflow.inference import compress, decompress
from icml26.dualflow.metrics import knn_decoding_r2, latent_decoding_r2

N_TRIALS, N_TEST, N_TIME, N_OBS = 60, 15, 100, 40

#: DCF variants: keyword overrides of the base setting (width 64, depth 3, h = 2, batch 128, 600 steps)
BASE = {
    "hidden": 64,
    "depth": 3,
    "history": 2,
    "batch_size": 128,
    "n_steps": 600,
    "latent_budget": 10.0,
    "solver": "rk4",
    "rk4_steps": 8,
}
VARIANTS = {
    "base": {},
    "no-nd": {"nested_dropout": False},
    "budget3": {"latent_budget": 3.0},
    "steps2000": {"n_steps": 2000},
    "lr3e-4": {"lr": 3e-4},
    "no-df": {"weights": (1.0, 0.0, 1.0)},
    "no-td": {"distortion_weight": 0.0},
    "align-only": {"weights": (0.0, 0.0, 1.0), "distortion_weight": 0.0},
    "no-temporal": {"weights": (1.0, 0.0, 1.0), "distortion_weight": 0.0},
    "no-cf": {"weights": (0.0, 1.0, 1.0)},
}


def make_case(case: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(observations (n, T, D), true state (n, T, d)) of a named case."""
    system, embedding = case.split("-")
    rng = np.random.default_rng(seed)
    if embedding == "linear":
        z = integrate_system(system, N_TRIALS, N_TIME, rng)
        z = (z - z.reshape(-1, z.shape[-1]).mean(0)) / z.reshape(-1, z.shape[-1]).std(0)
        A = rng.normal(size=(z.shape[-1], N_OBS))
        return z @ A + 0.5 * rng.normal(size=(*z.shape[:2], N_OBS)), z
    data = make_spiking_dataset(system, N_TRIALS, N_TIME, N_OBS, regime="clean", seed=seed, embedding="tuning")
    return data.smoothed, data.latents


def scores(z_tr, z_te, s_tr, s_te) -> tuple[float, float]:
    return latent_decoding_r2(z_tr, s_tr, z_te, s_te), knn_decoding_r2(z_tr, s_tr, z_te, s_te)


def run(case: str, variant: str, seed: int) -> dict:
    X, S = make_case(case, seed)
    k = N_TRIALS - N_TEST
    d = S.shape[-1]
    out: dict = {"case": case, "variant": variant, "seed": seed}
    pca = PCABaseline(d).fit(X[:k])
    out["pca"] = scores(pca.transform(X[:k]), pca.transform(X[k:]), S[:k], S[k:])
    t0 = time.perf_counter()
    est = DualFlow(**{**BASE, **VARIANTS[variant], "random_state": seed}).fit(X[:k])
    out["fit_s"] = time.perf_counter() - t0
    enc = [est.transform(a, n_components=d, representation="encoder") for a in (X[:k], X[k:])]
    flow = [est.transform(a, n_components=d) for a in (X[:k], X[k:])]
    out["enc"] = scores(*enc, S[:k], S[k:])
    out["flow"] = scores(*flow, S[:k], S[k:])
    hist = est.loss_history_
    out["loss_start"] = hist[:20].mean(0).round(3).tolist()  # total, align, cf, df, td
    out["loss_end"] = hist[-50:].mean(0).round(3).tolist()
    out["loss_curve"] = hist[::10].round(4).tolist()  # every 10th step: total, align, cf, df, td
    x1, _, _ = est._standardise(X[k:])
    with torch.no_grad():
        x0, _ = compress(est.model_, x1, method="rk4", n_steps=8)
        back, _ = decompress(est.model_, x0, method="rk4", n_steps=8)
        # the coupling's own x^(0) (K = m) vs the flowed one: how well u_phi transports the data to the encoder
        x0_enc = est.model_.encoder(x1)
    out["invert_err"] = float((back - x1).norm() / x1.norm())
    out["flow_vs_enc_x0"] = float((x0 - x0_enc).norm() / x0_enc.norm())
    out["d_head"] = est.d_[:5].round(3).tolist()
    out["K_eff"] = est.effective_dim_
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cases", nargs="+", default=["vanderpol-linear", "lorenz-linear", "vanderpol-tuning", "lorenz-tuning"]
    )
    ap.add_argument("--variants", nargs="+", default=["base"], choices=sorted(VARIANTS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--json", default="benchmarks/results/dualflow_diagnosis.json")
    ap.add_argument("--plot-only", action="store_true", help="redraw the figures from --json; fit nothing")
    args = ap.parse_args()
    if args.plot_only:
        plot(json.loads(Path(args.json).read_text()), Path(args.json))
        return
    torch.set_num_threads(1)
    rows = []
    for case in args.cases:
        for variant in args.variants:
            for seed in args.seeds:
                r = run(case, variant, seed)
                rows.append(r)
                print(
                    f"{case:18s} {variant:10s} s{seed} PCA lin/kNN {r['pca'][0]:.3f}/{r['pca'][1]:.3f}  "
                    f"enc {r['enc'][0]:.3f}/{r['enc'][1]:.3f}  flow {r['flow'][0]:.3f}/{r['flow'][1]:.3f}  "
                    f"inv {r['invert_err']:.1e} x0gap {r['flow_vs_enc_x0']:.2f} loss {r['loss_start']}->"
                    f"{r['loss_end']} d {r['d_head']} Keff {r['K_eff']} {r['fit_s']:.0f}s",
                    flush=True,
                )
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(rows, indent=1))
    plot(rows, Path(args.json))


def plot(rows: list[dict], path: Path) -> None:
    """The diagnosis figures beside ``path`` (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["case"], r["variant"]) for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(max(6, 1.1 * len(groups)) * 2, 3.6), squeeze=False)
    for ax, j, name in ((axes[0, 0], 0, "linear"), (axes[0, 1], 1, "kNN")):
        for i, g in enumerate(groups):
            gain = [r["flow"][j] - r["pca"][j] for r in rows if (r["case"], r["variant"]) == g]
            ax.scatter(np.full(len(gain), i), gain, s=12, color="C0")
            ax.plot([i - 0.3, i + 0.3], [np.mean(gain)] * 2, color="k", lw=1.5)
        ax.axhline(0, color="grey", lw=0.8, ls=":")
        ax.set_xticks(range(len(groups)), [f"{c}\n{v}" for c, v in groups], fontsize=7, rotation=45, ha="right")
        ax.set_ylabel(f"DCF flowed - PCA, held-out {name} R^2")
    fig.tight_layout()
    fig.savefig(path.with_name(path.stem + "_decoding.png"), dpi=110)
    curves = [r for r in rows if "loss_curve" in r]
    if curves:
        fig, axes = plt.subplots(1, 4, figsize=(14, 3.2))
        for r in curves:
            c = np.asarray(r["loss_curve"])
            for k, (ax, term) in enumerate(zip(axes, ("align", "cf", "df", "td"), strict=True)):
                ax.plot(np.arange(len(c)) * 10, c[:, k + 1], lw=0.8, label=f"{r['case']} {r['variant']} s{r['seed']}")
                ax.set_title(f"L_{term}"), ax.set_yscale("log"), ax.set_xlabel("Adam step")
        axes[0].legend(fontsize=5)
        fig.tight_layout()
        fig.savefig(path.with_name(path.stem + "_losses.png"), dpi=110)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for i, g in enumerate(groups):
        err = [r["invert_err"] for r in rows if (r["case"], r["variant"]) == g]
        ax.scatter(np.full(len(err), i), err, s=12)
    ax.set_yscale("log"), ax.set_ylabel("compress -> decompress relative error")
    ax.set_xticks(range(len(groups)), [f"{c}\n{v}" for c, v in groups], fontsize=7, rotation=45, ha="right")
    fig.tight_layout()
    fig.savefig(path.with_name(path.stem + "_invertibility.png"), dpi=110)


if __name__ == "__main__":
    main()
