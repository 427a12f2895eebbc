"""degmetrics vs cell-eval (Arc Institute) and scanpy on the same simulated screen, in the same process.

Input: 100 perturbations × 200 cells × 2,000 genes (+ 2,000 control cells), log1p-normalised, observed and
predicted (the predicted file is an independent half of the same simulated screen: a technical duplicate).

1. End to end: ``degmetrics.evaluate`` (pseudobulk, vs-rest DEG weights, WMSE, R²_w, MSE, MAE, Pearson Δ)
   vs ``cell_eval.MetricsEvaluator(...).compute(profile=...)`` (pdex DE of pred and real + its metrics).
2. DEG step: our vectorised Welch t vs ``scanpy.tl.rank_genes_groups(method="t-test_overestim_var")``.
3. Agreement: our Pearson Δ vs control (with the prediction's own control, as cell-eval does) vs cell-eval's
   ``pearson_delta``; our t-scores vs scanpy's.

Each measurement runs in a forked child (peak RSS above the child's start = its memory), ours and the peer
interleaved, after a warm-up on a tiny input (numba JIT of pdex is not counted). Both single-threaded.

    OMP_NUM_THREADS=1 python benchmarks/degmetrics_vs_celleval.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from icml26.degmetrics.baselines import split_halves
from icml26.degmetrics.data import simulate
from icml26.degmetrics.evaluate import evaluate
from icml26.degmetrics.metrics import log1p_normalize, welch_t_vs_rest

KEY, CTRL = "perturbation", "control"
OUT = Path(__file__).parent / "results" / "degmetrics_vs_celleval.json"


def make_pair(n_perts: int, n_cells: int, n_genes: int, seed: int = 0):
    """Observed and predicted AnnData (log1p-normalised), each with n_cells per perturbation and controls."""
    adata = simulate(
        n_genes=n_genes,
        n_control=2 * 10 * n_cells,  # 10 control cells per perturbation cell-count, in each half
        n_perturbations=n_perts,
        cells_per_perturbation=2 * n_cells,
        seed=seed,
    )
    adata.X = log1p_normalize(adata.X).astype(np.float32)
    pred, real = split_halves(adata, perturbation_key=KEY, control=CTRL, seed=seed)
    return pred, real


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _child(fn, args, conn):
    warnings.simplefilter("ignore")
    start = _rss_mb()
    t0 = time.perf_counter()
    out = fn(*args)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    conn.send((wall, max(peak - start, 0.0), out))
    conn.close()


def measure(fn, *args):
    """Run fn(*args) in a forked child; return (seconds, peak extra MiB, result)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(fn, args, child))
    proc.start()
    result = parent.recv()
    proc.join()
    return result


def ours_end_to_end(pred, real):
    ev = evaluate(pred, real, perturbation_key=KEY, control=CTRL, scale="log1p", control_reference="pred")
    return ev.table["pearson_delta_ctrl"].to_dict()


def celleval_end_to_end(pred, real, profile):
    from cell_eval import MetricsEvaluator

    with tempfile.TemporaryDirectory() as tmp:
        ev = MetricsEvaluator(pred, real, control_pert=CTRL, pert_col=KEY, num_threads=1, outdir=tmp)
        results, _ = ev.compute(profile=profile, write_csv=False)
    return dict(zip(results["perturbation"].to_list(), results["pearson_delta"].to_list()))


def _non_control(real):
    labels = real.obs[KEY].astype(str).to_numpy()
    keep = labels != CTRL
    perts = sorted(set(labels[keep]))
    return np.asarray(real.X[keep]), np.searchsorted(perts, labels[keep]), perts, labels[keep]  # float32, as stored


def ours_deg(real):
    X, codes, perts, _ = _non_control(real)
    t, _ = welch_t_vs_rest(X, codes, len(perts))
    return t


def scanpy_deg(real):
    import anndata as ad
    import scanpy as sc

    X, _, perts, labels = _non_control(real)
    adata = ad.AnnData(X=X, obs={"g": labels})
    adata.var_names = real.var_names
    sc.tl.rank_genes_groups(adata, "g", method="t-test_overestim_var", reference="rest", n_genes=X.shape[1])
    res = adata.uns["rank_genes_groups"]
    t = np.zeros((len(perts), X.shape[1]))
    for k, name in enumerate(perts):
        t[k, adata.var_names.get_indexer(res["names"][name])] = res["scores"][name]
    return t


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 perturbations x 50 cells x 500 genes")
    parser.add_argument("--profiles", default="full,minimal", help="cell-eval profiles (full = `cell-eval run`)")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    size = (20, 50, 500) if args.quick else (100, 200, 2000)
    warnings.simplefilter("ignore")

    tiny_pred, tiny_real = make_pair(4, 10, 50, seed=1)
    profiles = args.profiles.split(",")
    for profile in profiles:  # warm-up: numba JIT, imports
        measure(celleval_end_to_end, tiny_pred, tiny_real, profile)
    measure(scanpy_deg, tiny_real)
    measure(ours_end_to_end, tiny_pred, tiny_real)

    pred, real = make_pair(*size, seed=0)
    rows = {f"end_to_end[{p}]": [] for p in profiles} | {"deg_step": []}
    agreement = {}
    for _ in range(args.repeats):  # interleaved: ours, peer, ours, peer
        for profile in profiles:
            t_o, m_o, pd_ours = measure(ours_end_to_end, pred, real)
            t_p, m_p, pd_peer = measure(celleval_end_to_end, pred, real, profile)
            rows[f"end_to_end[{profile}]"].append((t_o, t_p, m_o, m_p))
        t_o2, m_o2, t_ours = measure(ours_deg, real)
        t_p2, m_p2, t_scanpy = measure(scanpy_deg, real)
        rows["deg_step"].append((t_o2, t_p2, m_o2, m_p2))
        common = sorted(pd_ours)
        diff = np.array([pd_ours[k] - pd_peer[k] for k in common])
        agreement = {
            "pearson_delta max |ours - cell-eval|": float(np.max(np.abs(diff))),
            "t-score max |ours - scanpy| / max|t|": float(np.max(np.abs(t_ours - t_scanpy)) / np.max(np.abs(t_scanpy))),
        }

    table = {}
    for name, runs in rows.items():
        t_o, t_p, m_o, m_p = (float(np.median(v)) for v in zip(*runs))
        table[name] = {
            "ours_s": t_o,
            "peer_s": t_p,
            "time ratio ours/peer": t_o / t_p,
            "speed-up": t_p / t_o,
            "ours_peak_MiB": m_o,
            "peer_peak_MiB": m_p,
            "memory ratio ours/peer": m_o / m_p if m_p > 0 else float("nan"),
        }
    peers = {f"end_to_end[{p}]": f"cell-eval {p} profile" for p in profiles} | {"deg_step": "scanpy rank_genes_groups"}
    print(f"input: {size[0]} perturbations x {size[1]} cells x {size[2]} genes; machine: {platform.machine()}")
    print(f"{'step':<20} {'peer':<28} {'ours s':>8} {'peer s':>8} {'speed-up':>9} {'mem ratio':>10}")
    for name, r in table.items():
        print(
            f"{name:<20} {peers[name]:<28} {r['ours_s']:8.2f} {r['peer_s']:8.2f} {r['speed-up']:8.1f}x "
            f"{r['memory ratio ours/peer']:10.2f}"
        )
    for k, v in agreement.items():
        print(f"{k}: {v:.2e}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "input": dict(zip(("perturbations", "cells", "genes"), size)),
                "peers": peers,
                "results": table,
                "agreement": agreement,
                "versions": _versions(),
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {OUT}")
    return 0


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {p: version(p) for p in ("cell-eval", "pdex", "scanpy", "numpy", "anndata")}


if __name__ == "__main__":
    raise SystemExit(main())
