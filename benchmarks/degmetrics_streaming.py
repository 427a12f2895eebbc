"""degmetrics benchmark: streaming a screen from disk, wall time and peak memory vs the number of cells.

For each cell count, ``icml26 degmetrics simulate-disk`` writes a screen of 8,000 genes (sparse CSR int32
counts, about 15 % non-zero, 1,000 perturbations, 5 % control cells) to an ``.h5ad``; then, each in a fresh
process so its peak resident memory (``ru_maxrss``) is its own:

* ``stream``: the DEG reference (pseudobulks, Welch vs-rest t, weights) built by
  :func:`icml26.degmetrics.stream.reference_from_file`, 2,048 cells per block;
* ``memory`` (up to ``--memory-max`` cells): the file read whole (``anndata.read_h5ad``) and
  :meth:`DEGReference.from_anndata`, for comparison.

The streamed and in-memory references are compared where both ran. The machine is a shared 2-core box:
times are noisy (the load average is recorded), peak memory is not.

Usage: ``python benchmarks/degmetrics_streaming.py [--cells 20000 50000 100000] [--memory-max 100000]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import numpy as np
path, mode = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if mode == "simulate":
    from icml26.degmetrics.cli import main
    cells = path.split("_")[-1].split(".")[0]
    main(["simulate-disk", "--out", path, "--cells", cells, "--genes", sys.argv[4], "--perturbations", sys.argv[5]])
elif mode == "stream":
    from icml26.degmetrics.stream import reference_from_file
    ref = reference_from_file(path, perturbation_key="perturbation", control="control", scale="counts")
else:
    import anndata as ad
    from icml26.degmetrics.evaluate import DEGReference
    ref = DEGReference.from_anndata(ad.read_h5ad(path), perturbation_key="perturbation", control="control",
                                    scale="counts")
seconds = time.perf_counter() - t0
if mode != "simulate":
    np.savez(sys.argv[3], real=ref.real, weights=ref.weights)
print(json.dumps({"seconds": seconds, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(path: Path, mode: str, out: Path, extra: tuple[str, ...] = ()) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-c", CHILD, str(path), mode, str(out), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[20_000, 50_000, 100_000])
    parser.add_argument("--genes", type=int, default=8000)
    parser.add_argument("--perturbations", type=int, default=1000)
    parser.add_argument("--memory-max", type=int, default=100_000, help="largest cell count also run in memory")
    parser.add_argument("--workdir", default=None, help="where the screens are written (default: a temp folder)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "degmetrics_streaming.json"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for n in args.cells:
            path = Path(tmp) / f"screen_{n}.h5ad"
            sim = child(path, "simulate", Path(tmp) / "unused.npz", extra=[str(args.genes), str(args.perturbations)])
            row = {"cells": n, "genes": args.genes, "perturbations": args.perturbations,
                   "simulate_s": sim["seconds"], "simulate_peak_rss_mb": sim["peak_rss_mb"],
                   "file_mb": path.stat().st_size / 2**20, "load_average": os.getloadavg()[0]}  # fmt: skip
            row["stream"] = child(path, "stream", Path(tmp) / "stream.npz")
            if n <= args.memory_max:
                row["memory"] = child(path, "memory", Path(tmp) / "memory.npz")
                with np.load(Path(tmp) / "stream.npz") as a, np.load(Path(tmp) / "memory.npz") as b:
                    row["stream_equals_memory"] = bool(
                        np.array_equal(a["real"], b["real"]) and np.array_equal(a["weights"], b["weights"])
                    )
            rows.append(row)
            print(json.dumps(row), flush=True)
            path.unlink()
            Path(args.out).write_text(json.dumps({"config": vars(args), "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
