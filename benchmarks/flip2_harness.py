"""flip2 benchmark: end-to-end GB1 leaderboard time, and ridge fit time on 149k variants (sparse vs dense).

Peer: the FLIP reference pattern -- dense one-hot of the full 265-residue sequence fed to scikit-learn's
Ridge (FLIP v1's ridge baseline encodes whole sequences densely). Run:

    OMP_NUM_THREADS=2 python benchmarks/flip2_harness.py [--out benchmarks/results/flip2_harness.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results/flip2_harness.json", help="JSON result file")
    parser.add_argument("--cnn-steps", type=int, default=2000, help="CNN optimiser steps per split")
    args = parser.parse_args()

    import torch
    from sklearn.linear_model import Ridge

    from icml26._util.io import atomic_output, check_output_path
    from icml26.flip2.data import GB1_SPLITS, load_flip_gb1
    from icml26.flip2.harness import ModelFactory, run_leaderboard, to_markdown
    from icml26.flip2.models import encode, one_hot, variable_columns
    from icml26.flip2.splits import from_assignment

    check_output_path(args.out)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    res = {"machine": platform.processor() or platform.machine(), "threads": torch.get_num_threads()}

    # 1. the full GB1 leaderboard: ridge, zsRidge, CNN on every published split, load to metrics
    t0 = time.perf_counter()
    gb1 = load_flip_gb1()
    splits = {s: from_assignment(s, gb1.published[s]) for s in GB1_SPLITS}
    f = ModelFactory(None, seed=0, cnn_epochs=10_000, max_steps=args.cnn_steps)
    df = run_leaderboard(gb1, splits, ["ridge", "zsridge", "cnn"], f)
    res["gb1_leaderboard_s"] = time.perf_counter() - t0
    res["gb1_leaderboard"] = df.to_dict(orient="records")
    print(to_markdown(df))
    print(f"GB1 leaderboard (3 models x 5 splits, load to metrics): {res['gb1_leaderboard_s']:.1f} s")

    # 2. ridge on all 149,361 variants: sparse one-hot of the varying columns vs the dense full-sequence pattern
    full = load_flip_gb1(keep_only=False)
    y = full.targets
    t0 = time.perf_counter()
    X = one_hot(encode(full.sequences)[:, variable_columns(full)])
    Ridge(alpha=1.0, solver="sparse_cg", tol=1e-6).fit(X, y)
    res["ridge_sparse_149k_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    X = one_hot(encode(full.sequences))  # every column: still sparse, 265 x 21 features
    Ridge(alpha=1.0, solver="sparse_cg", tol=1e-6).fit(X, y)
    res["ridge_sparse_allcols_149k_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    Xd = np.zeros((len(full), full.length * 21), dtype=np.float32)  # FLIP pattern: dense one-hot, 1.7 GB
    codes = encode(full.sequences)
    Xd[np.arange(len(full))[:, None], np.arange(full.length) * 21 + codes] = 1.0
    Ridge(alpha=1.0).fit(Xd, y)
    res["ridge_dense_allcols_149k_s"] = time.perf_counter() - t0
    del Xd
    for k in ("ridge_sparse_149k_s", "ridge_sparse_allcols_149k_s", "ridge_dense_allcols_149k_s"):
        print(f"{k}: {res[k]:.2f} s")
    with atomic_output(args.out) as tmp:
        tmp.write_text(json.dumps(res, indent=1, default=float))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
