"""dualflow benchmark: DCF training and ODE encoding cost vs GPFA (elephant), PCA and DMD on the same spikes.

Measures (one process, ours and peers interleaved, best of ``--repeats``):
- DCF time per training step at batch 256; DCF fit time (``--steps`` Adam steps);
- encoding 10k frames with DOPRI5 (rtol 1e-5 and 1e-3) and fixed-step RK4 (8 and 16 steps): wall time,
  function evaluations (NFE), max deviation from the tight DOPRI5 solution and the held-out decoding R^2
  of the first three coordinates;
- peers: elephant GPFA fit + transform, PCA fit + transform, PyDMD fit + transform.

Prints a table of ratios and writes benchmarks/results/dualflow_speed.json and a Pareto plot (wall time vs
decoding R^2) to benchmarks/results/dualflow_pareto.png.

    python benchmarks/dualflow_speed.py [--steps 1000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from icml26.dualflow.baselines import DMDBaseline, GPFABaseline, PCABaseline
from icml26.dualflow.data import make_spiking_dataset
from icml26.dualflow.estimator import DualFlow
from icml26.dualflow.metrics import latent_decoding_r2
from icml26.dualflow.model import dual_flow_losses

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--trials", type=int, default=120)
    args = parser.parse_args()
    torch.set_num_threads(1)

    data = make_spiking_dataset("lorenz", n_trials=args.trials, n_time=100, n_neurons=60, regime="noisy", seed=0)
    n_train = args.trials - args.trials // 4
    train, test = data.smoothed[:n_train], data.smoothed[n_train:]
    s_train, s_test = data.latents[:n_train], data.latents[n_train:]
    rows: dict[str, dict] = {}

    def score(z_train, z_test):
        return latent_decoding_r2(z_train, s_train, z_test, s_test)

    # ---- fits, interleaved: DCF, GPFA, PCA, DMD per repeat
    dcf = None
    for _ in range(args.repeats):
        t, est = timed(
            lambda: DualFlow(n_steps=args.steps, hidden=96, batch_size=128, rtol=1e-4, atol=1e-4, random_state=0).fit(
                train
            )
        )
        rows.setdefault("DCF fit", {"time_s": []})["time_s"].append(t)
        dcf = est
        gpfa = GPFABaseline(3, bin_size=data.bin_size, em_max_iters=30)

        def run_gpfa(gpfa=gpfa):
            with contextlib.redirect_stdout(io.StringIO()):
                gpfa.fit(data.spikes[:n_train])
                return gpfa.transform(data.spikes[:n_train]), gpfa.transform(data.spikes[n_train:])

        t, (gz_tr, gz_te) = timed(run_gpfa)
        rows.setdefault("GPFA fit+transform (elephant)", {"time_s": []})["time_s"].append(t)
        rows["GPFA fit+transform (elephant)"]["decoding_r2"] = score(gz_tr, gz_te)
        for name, cls in (("PCA fit+transform", PCABaseline), ("DMD fit+transform (PyDMD)", DMDBaseline)):

            def run(cls=cls):
                b = cls(3).fit(train)
                return b.transform(train), b.transform(test)

            t, (z_tr, z_te) = timed(run)
            rows.setdefault(name, {"time_s": []})["time_s"].append(t)
            rows[name]["decoding_r2"] = score(z_tr, z_te)

    # ---- time per training step at batch 256 (the paper's setting), on the fitted model's size
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

    # ---- encoding 10k frames: solver / tolerance sweep
    frames = np.concatenate([test] * int(np.ceil(10_000 / (len(test) * test.shape[1]))))[: 10_000 // 100]
    dcf.solver, dcf.rtol, dcf.atol = "dopri5", 1e-7, 1e-7
    reference = dcf.transform(frames)
    z_train_ref = None
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
        nfe = dcf.nfe_
        z_train_ref = dcf.transform(train, 3)
        rows[f"DCF encode 10k frames, {label}"] = {
            "time_s": times,
            "nfe": nfe,
            "max_dev_from_tight": float(np.abs(z - reference).max()),
            "decoding_r2": score(z_train_ref, dcf.transform(test, 3)),
        }

    for r in rows.values():
        r["best_s"] = float(min(r["time_s"]))
    gpfa_t = rows["GPFA fit+transform (elephant)"]["best_s"]
    pca_t = rows["PCA fit+transform"]["best_s"]
    dcf_fit = rows["DCF fit"]["best_s"]
    enc = rows["DCF encode 10k frames, DOPRI5 rtol 1e-5"]
    ratios = {
        "DCF fit / GPFA fit+transform": dcf_fit / gpfa_t,
        "DCF fit / PCA fit+transform": dcf_fit / pca_t,
        "DCF train step (batch 256) s": rows["DCF train step (batch 256)"]["best_s"],
        "DOPRI5 1e-5 / RK4 8 encode time": enc["best_s"] / rows["DCF encode 10k frames, RK4 8 steps"]["best_s"],
        "DOPRI5 1e-5 / DOPRI5 1e-3 encode time": enc["best_s"]
        / rows["DCF encode 10k frames, DOPRI5 rtol 1e-3"]["best_s"],
    }
    print(f"{'measurement':48s} {'best s':>9s} {'NFE':>5s} {'dec. R2':>8s} {'max dev':>9s}")
    for name, r in rows.items():
        print(
            f"{name:48s} {r['best_s']:9.3f} {r.get('nfe', ''):>5} {r.get('decoding_r2', float('nan')):8.3f} "
            f"{r.get('max_dev_from_tight', float('nan')):9.2e}"
        )
    print()
    for k, v in ratios.items():
        print(f"{k:48s} {v:9.3g}")

    RESULTS.mkdir(exist_ok=True)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores (shared)"
    payload = {
        "machine": machine,
        "torch_threads": 1,
        "steps": args.steps,
        "trials": args.trials,
        "rows": rows,
        "ratios": ratios,
    }
    (RESULTS / "dualflow_speed.json").write_text(json.dumps(payload, indent=2))

    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot(1, 1, 1)
    for name, r in rows.items():
        if "decoding_r2" not in r:
            continue
        cost = r["best_s"] + (dcf_fit if name.startswith("DCF encode") else 0.0)
        ax.scatter(cost, r["decoding_r2"], label=name.replace("DCF encode 10k frames, ", "DCF fit + encode, "))
    ax.set_xscale("log"), ax.set_xlabel("wall time (s, log)"), ax.set_ylabel("held-out decoding R^2 (3-D)")
    ax.legend(fontsize=7), ax.set_title("accuracy vs time (noisy Lorenz, 2-core shared CPU)")
    fig.savefig(RESULTS / "dualflow_pareto.png", dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main()
