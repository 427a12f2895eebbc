"""dualflow benchmark: DCF vs CEBRA-Time, GPFA, PCA and a VAE on the same spikes (time and decoding R^2).

Data: the claims' ``small`` setting (Lorenz-63 -> 60 Poisson neurons through Gaussian tuning curves, 3 Hz,
80 training / 20 held-out trials of 100 bins). For each method (one process, interleaved, best of
``--repeats`` wall times): fit + transform time, and the held-out linear and kNN decoding R^2 of the true
Lorenz state from 3 latent coordinates. DCF also: time per training step at batch 256, and encoding 10k frames
with DOPRI5 (rtol 1e-5, 1e-3) and fixed-step RK4 (8, 16 steps) with function evaluations (NFE) and deviation
from a tight DOPRI5 solve.

Writes benchmarks/results/dualflow_speed.json and a Pareto plot (time vs decoding R^2) to
benchmarks/results/dualflow_pareto.png.

    python benchmarks/dualflow_speed.py [--repeats 1]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from icml26.claims import Scale
from icml26.dualflow.baselines import CEBRABaseline, GPFABaseline, PCABaseline, VAEBaseline
from icml26.dualflow.estimator import DualFlow
from icml26.dualflow.experiment import N_LATENT, SETTINGS, dataset, n_train
from icml26.dualflow.metrics import knn_decoding_r2, latent_decoding_r2
from icml26.dualflow.model import dual_flow_losses

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    cfg = SETTINGS[Scale.SMALL]
    data = dataset(Scale.SMALL, args.seed)
    k = n_train(Scale.SMALL)
    train, test = data.smoothed[:k], data.smoothed[k:]
    s_train, s_test = data.latents[:k], data.latents[k:]
    rows: dict[str, dict] = {}

    def record(name, t, z_tr, z_te):
        row = rows.setdefault(name, {"time_s": []})
        row["time_s"].append(t)
        row["linear_r2"] = latent_decoding_r2(z_tr, s_train, z_te, s_test)
        row["knn_r2"] = knn_decoding_r2(z_tr, s_train, z_te, s_test)

    def run_dcf():
        est = DualFlow(**{**cfg["dcf"], "random_state": args.seed}).fit(train)
        return est, est.transform(train, N_LATENT), est.transform(test, N_LATENT)

    def run_gpfa():
        gpfa = GPFABaseline(N_LATENT, bin_size=data.bin_size, em_max_iters=cfg["gpfa_iters"], seed=args.seed)
        with contextlib.redirect_stdout(io.StringIO()):
            gpfa.fit(data.spikes[:k])
            return gpfa.transform(data.spikes[:k]), gpfa.transform(data.spikes[k:])

    def run_cebra():
        model = CEBRABaseline(N_LATENT, max_iterations=cfg["cebra_iters"], seed=args.seed).fit(train)
        return model.transform(train), model.transform(test)

    def run_pca():
        pca = PCABaseline(N_LATENT).fit(train)
        return pca.transform(train), pca.transform(test)

    def run_vae():
        vae = VAEBaseline(N_LATENT, hidden=cfg["dcf"]["hidden"], n_steps=cfg["vae_steps"], seed=args.seed).fit(train)
        return vae.transform(train), vae.transform(test)

    has_cebra = importlib.util.find_spec("cebra") is not None
    dcf = None
    for _ in range(args.repeats):
        t, (dcf, z_tr, z_te) = timed(run_dcf)
        record(f"DCF fit+transform ({cfg['dcf']['n_steps']} steps)", t, z_tr, z_te)
        record("GPFA fit+transform (elephant)", *_flat(timed(run_gpfa)))
        if has_cebra:
            record(f"CEBRA-Time fit+transform ({cfg['cebra_iters']} iterations)", *_flat(timed(run_cebra)))
        record("PCA fit+transform", *_flat(timed(run_pca)))
        record(f"VAE fit+transform ({cfg['vae_steps']} steps)", *_flat(timed(run_vae)))

    # ---- time per training step at batch 256 (the notes' setting), on the fitted model's size
    model = dcf.model_
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    window = torch.randn(256, model.history + 2, model.n_features)
    step_times = []
    for _ in range(3 + 20):
        t0 = time.perf_counter()
        loss = dual_flow_losses(model, window, p=0.1)["total"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - t0)
    model.eval()
    rows["DCF train step (batch 256)"] = {"time_s": [float(np.median(step_times[3:]))]}

    # ---- encoding 10k frames: solver / tolerance sweep (the speed knob)
    frames = np.concatenate([test] * int(np.ceil(10_000 / test[..., 0].size)))[: 10_000 // test.shape[1]]
    dcf.solver, dcf.rtol, dcf.atol = "dopri5", 1e-7, 1e-7
    reference = dcf.transform(frames)
    for label, solver, tol, n in (
        ("DOPRI5 rtol 1e-5", "dopri5", 1e-5, 8),
        ("DOPRI5 rtol 1e-3", "dopri5", 1e-3, 8),
        ("RK4 16 steps", "rk4", 0, 16),
        ("RK4 8 steps", "rk4", 0, 8),
    ):
        dcf.solver, dcf.rtol, dcf.atol, dcf.rk4_steps = solver, tol, tol, n
        times = []
        for _ in range(args.repeats):
            t, z = timed(lambda: dcf.transform(frames))
            times.append(t)
        rows[f"DCF encode 10k frames, {label}"] = {
            "time_s": times,
            "nfe": dcf.nfe_,
            "max_dev_from_tight": float(np.abs(z - reference).max()),
            "linear_r2": latent_decoding_r2(dcf.transform(train, 3), s_train, dcf.transform(test, 3), s_test),
        }

    for r in rows.values():
        r["best_s"] = float(min(r["time_s"]))
    print(f"{'measurement':52s} {'best s':>9s} {'NFE':>5s} {'lin R2':>7s} {'kNN R2':>7s} {'max dev':>9s}")
    for name, r in rows.items():
        print(
            f"{name:52s} {r['best_s']:9.3f} {r.get('nfe', ''):>5} {r.get('linear_r2', float('nan')):7.3f} "
            f"{r.get('knn_r2', float('nan')):7.3f} {r.get('max_dev_from_tight', float('nan')):9.2e}"
        )

    RESULTS.mkdir(exist_ok=True)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores (shared)"
    payload = {"machine": machine, "torch_threads": 1, "seed": args.seed, "setting": "claims' small", "rows": rows}
    (RESULTS / "dualflow_speed.json").write_text(json.dumps(payload, indent=2))

    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.8))
    for i, key in enumerate(("linear_r2", "knn_r2")):
        ax = fig.add_subplot(1, 2, i + 1)
        for name, r in rows.items():
            if key in r and not name.startswith("DCF encode"):
                ax.scatter(r["best_s"], r[key], label=name)
        ax.set_xscale("log"), ax.set_xlabel("fit + transform wall time (s, log)")
        ax.set_ylabel(f"held-out {'linear' if i == 0 else 'kNN'} decoding R^2 (3-D)")
    fig.axes[0].legend(fontsize=7)
    fig.suptitle("accuracy vs time (noisy Lorenz, tuning curves, 2-core shared CPU)")
    fig.savefig(RESULTS / "dualflow_pareto.png", dpi=110, bbox_inches="tight")


def _flat(timed_out):
    t, (z_tr, z_te) = timed_out
    return t, z_tr, z_te


if __name__ == "__main__":
    main()
