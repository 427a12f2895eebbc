"""coherence benchmark: per-batch cost of Coh vs L1 vs a Vietoris-Rips persistent-homology loss, and ripser.

One forward + backward of each penalty on a batch of n codes (n, m), best of ``--repeats`` after a warm-up
call, one CPU thread: Coh (Euclidean positions, k = 3), L1, and torch-topological's SignatureLoss over
VietorisRipsComplex(dim=0) between a 20-dimensional input batch and the code (the topological-autoencoder
loss; falls back to our plain H0 VR loss when torch-topological is absent). Separately: ripser (H0 + H1) on
n points on a circle in R^2, the evaluation cost of the theorem check.

Usage: ``python benchmarks/coherence_cost.py [--repeats 3] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from icml26._util.io import atomic_output
from icml26.coherence.experiment import per_batch_cost
from icml26.coherence.topology import vr_diagrams


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed calls per setting (best kept)")
    ap.add_argument("--quick", action="store_true", help="n in {256, 1024}, m in {16}")
    ap.add_argument(
        "--out",
        default=str(Path(__file__).parent / "results" / "coherence_cost.json"),
        help="JSON result file",
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    ns = (256, 1024) if args.quick else (256, 1024, 2048)
    ms = (16,) if args.quick else (16, 64, 256)
    rows = []
    for n in ns:
        for m in ms:
            c = per_batch_cost(n, m, repeats=args.repeats)
            rows.append({"n": n, "m": m, **c})
            print(
                f"n={n:5d} m={m:4d}  Coh {1e3 * c['coh_s']:8.2f} ms  L1 {1e3 * c['l1_s']:7.3f} ms  "
                f"PH {1e3 * c['ph_s']:9.1f} ms  PH/Coh {c['ph_over_coh']:7.1f}"
            )
    rip = []
    rng = np.random.default_rng(0)
    for n in (200, 400, 1000):
        t = rng.uniform(0, 2 * np.pi, n)
        x = np.c_[np.cos(t), np.sin(t)]
        D = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
        t0 = time.perf_counter()
        vr_diagrams(D, maxdim=1)
        rip.append({"n": n, "ripser_H1_s": time.perf_counter() - t0})
        print(f"ripser H0+H1 on {n} circle points: {rip[-1]['ripser_H1_s']:.3f} s")
    result = {
        "machine": f"{platform.processor() or platform.machine()}, 1 torch thread",
        "torch": torch.__version__,
        "loss_cost": rows,
        "ripser": rip,
    }
    with atomic_output(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
