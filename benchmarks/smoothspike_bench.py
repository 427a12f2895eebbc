"""SmoothSpike benchmarks on one CPU thread: the fast Walsh-Hadamard transform vs the dense rotation matmul,
Newton-Schulz iterations to orthogonality, and inference latency of the baseline, unfused and fused encoders.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/smoothspike_bench.py [--quick]

Writes benchmarks/results/smoothspike_bench.json. No CPU peer for the transform is installed (QuaRot's and
Dao-AILab's fast-hadamard-transform are CUDA-only), so the peers are the dense products: torch matmul with the
Hadamard matrix and NumPy matmul with ``scipy.linalg.hadamard``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import scipy.linalg
import torch

from icml26.smoothspike.hadamard import (
    HadamardRotation,
    fwht,
    hadamard_matrix,
    hadamard_transform,
    newton_schulz,
    orthogonality_error,
)
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, fuse, n_params

OUT = Path(__file__).parent / "results" / "smoothspike_bench.json"


def best(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_transform(rows: int, repeats: int) -> list[dict]:
    out = []
    for n in (256, 384, 512, 768, 1024, 1536, 2048, 4096):  # 384 / 1536: MiniLM's width and MLP width
        x = torch.randn(rows, n)
        h = hadamard_matrix(n)
        row = {"n": n, "rows": rows}
        row["dense torch [ms]"] = 1e3 * best(lambda x=x, h=h: x @ h, repeats)
        if n & (n - 1) == 0:
            hn, xn = scipy.linalg.hadamard(n).astype(np.float32) / np.sqrt(n), x.numpy()
            row["dense numpy+scipy [ms]"] = 1e3 * best(lambda xn=xn, hn=hn: xn @ hn, repeats)
            row["fwht butterfly [ms]"] = 1e3 * best(lambda x=x: fwht(x), repeats)
        row["fast transform (Kronecker) [ms]"] = 1e3 * best(lambda x=x: hadamard_transform(x), repeats)
        row["speed-up vs dense torch"] = row["dense torch [ms]"] / row["fast transform (Kronecker) [ms]"]
        err = float((hadamard_transform(x.double()) - x.double() @ h.double()).abs().max())
        row["max |fast - dense| (float64)"] = err
        out.append(row)
        fast, ratio = row["fast transform (Kronecker) [ms]"], row["speed-up vs dense torch"]
        print(f"n={n:5d}: dense {row['dense torch [ms]']:8.2f} ms, fast {fast:7.2f} ms, x{ratio:.1f}")
    return out


def bench_newton_schulz(repeats: int) -> list[dict]:
    out = []
    for n in (64, 256, 384):
        g = torch.Generator().manual_seed(0)
        w0 = HadamardRotation(n, generator=g).matrix(torch.float64)
        w = w0 + 0.05 * torch.randn(n, n, generator=g, dtype=torch.float64) / n**0.5  # a trained-like drift
        row = {"n": n}
        for steps in (1, 2, 3, 5, 8, 10, 12, 15):
            row[f"quintic {steps} steps ||QtQ-I||"] = orthogonality_error(
                newton_schulz(w, method="quintic", steps=steps)
            )
            row[f"cubic {steps} steps ||QtQ-I||"] = orthogonality_error(newton_schulz(w, method="cubic", steps=steps))
        s = torch.linalg.svdvals(newton_schulz(w, method="quintic"))
        row["quintic 5 steps sigma min"], row["quintic 5 steps sigma max"] = float(s.min()), float(s.max())
        w32 = w.float()
        row["quintic 5 steps [ms]"] = 1e3 * best(lambda w32=w32: newton_schulz(w32, method="quintic"), repeats)
        row["cubic 12 steps [ms]"] = 1e3 * best(lambda w32=w32: newton_schulz(w32, method="cubic", steps=12), repeats)
        out.append(row)
        print(f"NS n={n}: quintic(5) err {row['quintic 5 steps ||QtQ-I||']:.3f} "
              f"(sigma {row['quintic 5 steps sigma min']:.2f}-{row['quintic 5 steps sigma max']:.2f}), "
              f"cubic(12) err {row['cubic 12 steps ||QtQ-I||']:.1e}")  # fmt: skip
    return out


def bench_latency(repeats: int, batch: int, dim: int, heads: int) -> dict:
    """Inference latency at MiniLM-L6's width (dim 384, 12 heads, MLP 1536), 2 layers, T = 4, L = 32: the
    baseline, the unfused rotated models (rotations as dense blocks formed once per pass, and as the per-use fast
    transform) and the fused ones (the paper's "no additional overhead"), interleaved, paired ratios."""
    base_cfg = dict(vocab_size=30522, max_len=32, dim=dim, heads=heads, layers=2, n_outputs=3, norm_gain=2.0)
    models = {
        "baseline (no rotation)": SpikingEncoder(EncoderConfig(**base_cfg, rotation="none")),
        "hadamard, unfused": SpikingEncoder(EncoderConfig(**base_cfg, rotation="hadamard")),
        "hadamard, unfused, per-use FWHT": SpikingEncoder(EncoderConfig(**base_cfg, rotation="hadamard")),
        "learnable quintic, unfused": SpikingEncoder(EncoderConfig(**base_cfg, rotation="learnable")),
    }
    models["hadamard, unfused, per-use FWHT"].dense_rotations = False
    models["hadamard, fused"] = fuse(models["hadamard, unfused"])
    models["learnable quintic, fused"] = fuse(models["learnable quintic, unfused"])
    for m in models.values():
        m.eval()
    ids = torch.randint(0, 30522, (batch, 32), generator=torch.Generator().manual_seed(0))
    times = {k: [] for k in models}
    with torch.no_grad():
        for m in models.values():
            m(ids)
        for _ in range(repeats):  # interleaved: every repeat runs every model back to back
            for k, m in models.items():
                t = time.perf_counter()
                m(ids)
                times[k].append(time.perf_counter() - t)
    base = times["baseline (no rotation)"]
    rows = {}
    for k, ts in times.items():
        ratios = [a / b for a, b in zip(ts, base, strict=True)]
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        rows[k] = {"median latency [ms]": 1e3 * statistics.median(ts),
                   "median paired ratio vs baseline": statistics.median(ratios),
                   "paired ratio IQR": [q[0], q[2]], "params": n_params(models[k])}  # fmt: skip
        print(f"{k:34s} {rows[k]['median latency [ms]']:8.1f} ms  x{rows[k]['median paired ratio vs baseline']:.3f} "
              f"(IQR {q[0]:.3f}-{q[2]:.3f})")  # fmt: skip
    return {"batch": batch, "length": 32, "dim": dim, "heads": heads, "layers": 2, "T": 4, "repeats": repeats,
            "models": rows}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = p.parse_args()
    torch.set_num_threads(1)
    r = 3 if args.quick else 9
    result = {
        "transform": bench_transform(64 if args.quick else 256, r),
        "newton_schulz": bench_newton_schulz(r),
        "latency": bench_latency(r if args.quick else 15, 4 if args.quick else 16, 384, 12),
        "torch": torch.__version__,
        "threads": 1,
        "load average at end": list(__import__("os").getloadavg()),
    }
    if not args.quick:
        OUT.parent.mkdir(exist_ok=True)
        tmp = OUT.with_suffix(".part")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(OUT)
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
