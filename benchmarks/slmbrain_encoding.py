"""slmbrain encoding cost: himalaya kernel ridge vs himalaya primal ridge vs scikit-learn RidgeCV; GPTQ vs RTN.

    OMP_NUM_THREADS=1 python benchmarks/slmbrain_encoding.py [--full] [--out benchmarks/results/slmbrain_encoding.json]

One thread. Data: X (n_TR, p) standard normal, Y = X W + noise (n_TR, V) with a sparse-ish W (signal in 10 % of
the features, SNR 0.5 per voxel); the last 20 % of TRs are held out. Every solver gets the same alpha grid
(logspace(0, 5, 8)) and chooses alpha per voxel:

- ``himalaya kernel``: ``himalaya.kernel_ridge.KernelRidgeCV`` (dual, 5-fold CV), numpy backend, float64;
- ``himalaya primal``: ``himalaya.ridge.RidgeCV`` (primal, 5-fold CV), the same;
- ``sklearn RidgeCV``: ``sklearn.linear_model.RidgeCV(alpha_per_target=True)`` (efficient leave-one-out CV, the
  peer the issue names).

Reported: fit + predict wall time, peak Python-tracked memory (tracemalloc sees numpy buffers) and the held-out
mean Pearson r (the three must agree: same model class). Default grid n_TR in {1000, 3000}, p in {768, 4096},
V = 2000 (minutes on a laptop core); ``--full`` runs the issue's grid n_TR in {3000, 9000}, p in {768, 4096},
V in {10000, 80000} (hours on one core; Y alone is 5.8 GB at 9000 x 80000 float64).

Compression: seconds per layer of RTN and GPTQ (4 bits) on a (4d, d) MLP weight with 2048 calibration tokens,
d in {64, 256, 768}, and the layer output error ratio GPTQ / RTN (< 1: GPTQ does what it is for).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np
import torch

from icml26.slmbrain.compress import gptq_quantize, layer_output_error, rtn_quantize
from icml26.slmbrain.encoding import pearson_r

torch.set_num_threads(1)
ALPHAS = np.logspace(0, 5, 8)


def make_data(n: int, p: int, v: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    W = rng.standard_normal((p, v)) * (rng.random((p, 1)) < 0.1)
    S = X @ W
    S /= S.std(0)
    Y = S + rng.standard_normal((n, v)) / np.sqrt(0.5)
    cut = int(0.8 * n)
    return X[:cut], Y[:cut], X[cut:], S[cut:]


def fit_himalaya(kind: str, X, Y, Xt):
    from himalaya.backend import set_backend
    from himalaya.kernel_ridge import KernelRidgeCV
    from himalaya.ridge import RidgeCV

    set_backend("numpy", on_error="raise")
    model = (KernelRidgeCV if kind == "kernel" else RidgeCV)(alphas=ALPHAS, cv=5)
    model.fit(X, Y)
    return np.asarray(model.predict(Xt))


def fit_sklearn(X, Y, Xt):
    from sklearn.linear_model import RidgeCV

    return RidgeCV(alphas=ALPHAS, alpha_per_target=True).fit(X, Y).predict(Xt)


def measure(fn, *args):
    tracemalloc.start()
    t = time.perf_counter()
    pred = fn(*args)
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return pred, dt, peak / 2**20


def encoding_rows(grid) -> list[dict]:
    rows = []
    for n, p, v in grid:
        X, Y, Xt, St = make_data(n, p, v)
        row = {"n_TR": n, "p": p, "voxels": v}
        for name, fn, args in (
            ("himalaya kernel", fit_himalaya, ("kernel", X, Y, Xt)),
            ("himalaya primal", fit_himalaya, ("primal", X, Y, Xt)),
            ("sklearn RidgeCV", fit_sklearn, (X, Y, Xt)),
        ):
            pred, dt, mb = measure(fn, *args)
            row[f"{name} s"] = dt
            row[f"{name} peak MB"] = mb
            row[f"{name} r"] = float(np.mean(pearson_r(pred, St)))  # vs the clean held-out signal
            print(f"n_TR={n} p={p} V={v} {name}: {dt:.1f} s, {mb:.0f} MB, r={row[f'{name} r']:.3f}", flush=True)
        row["sklearn / himalaya kernel time"] = row["sklearn RidgeCV s"] / row["himalaya kernel s"]
        row["sklearn / himalaya primal time"] = row["sklearn RidgeCV s"] / row["himalaya primal s"]
        rows.append(row)
    return rows


def compression_rows(widths=(64, 256, 768)) -> list[dict]:
    rows = []
    g = torch.Generator().manual_seed(0)
    for d in widths:
        W = torch.randn(4 * d, d, generator=g) / np.sqrt(d)  # (out, in) like an MLP fc1
        X = torch.randn(2048, d, generator=g) @ (torch.eye(d) + 0.3 * torch.randn(d, d, generator=g) / np.sqrt(d))
        H = 2 * X.T.double() @ X.double()  # (in, in) input Hessian
        t = time.perf_counter()
        q_rtn = rtn_quantize(W, 4)
        t_rtn = time.perf_counter() - t
        t = time.perf_counter()
        q_gptq = gptq_quantize(W, H, 4)
        t_gptq = time.perf_counter() - t
        ratio = layer_output_error(W, q_gptq, X) / layer_output_error(W, q_rtn, X)
        rows.append(
            {
                "d": d,
                "weight shape": [4 * d, d],
                "RTN s": t_rtn,
                "GPTQ s": t_gptq,
                "GPTQ / RTN time": t_gptq / t_rtn,
                "GPTQ / RTN output error": ratio,
            }
        )
        print(f"d={d}: RTN {t_rtn * 1e3:.2f} ms, GPTQ {t_gptq * 1e3:.1f} ms, error ratio {ratio:.3f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the issue's grid (hours on one core, > 6 GB)")
    ap.add_argument("--out", default="benchmarks/results/slmbrain_encoding.json")
    args = ap.parse_args()
    if args.full:
        grid = [(n, p, v) for n in (3000, 9000) for p in (768, 4096) for v in (10000, 80000)]
    else:
        grid = [(n, p, 2000) for n in (1000, 3000) for p in (768, 4096)]
    import himalaya
    import sklearn

    result = {
        "encoding": encoding_rows(grid),
        "compression": compression_rows(),
        "alphas": ALPHAS.tolist(),
        "threads": 1,
        "versions": {
            "himalaya": himalaya.__version__,
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
            "torch": torch.__version__,
        },
        "machine": platform.machine(),
        "full grid": args.full,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
