"""Alignment measurements per second at n = 1,000 stimuli: ours (ROI Gram cached, torch) vs an uncached CKA,
repsim CKA and rsatoolbox RSA, single process (one thread), plus ours on a local 2-CPU Ray instance.

    OMP_NUM_THREADS=1 python benchmarks/brainconverge_alignment.py [--quick] [--json OUT]

A "measurement" is one (layer, ROI) score. Our cost per measurement is one n x n x d Gram product plus an
O(n^2) contraction; the ROI side (n x n x voxels) is computed once and reported separately ("cache s").
rsatoolbox is given the same advantage (the ROI RDM computed once) and is also compared with our RSA (the same
metric). Cross-checks: our linear CKA vs repsim's, our RSA vs rsatoolbox's Spearman comparison, on the same data.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from icml26.brainconverge.alignment import BrainCache, center, rbf_gram, zscore

torch.set_num_threads(1)


def problem(n, d, v, layers, rng):
    Z = rng.standard_normal((n, 32))
    B = Z @ rng.standard_normal((32, v)) + rng.standard_normal((n, v))  # (n, v) voxels
    Fs = [np.tanh(Z @ rng.standard_normal((32, d)) * 0.3) + 0.5 * rng.standard_normal((n, d)) for _ in range(layers)]
    return B, Fs


def rate(fn, items):
    t = time.perf_counter()
    out = [fn(x) for x in items]
    return len(items) / (time.perf_counter() - t), out


def uncached_cka(F, B, sigma=12.0):
    K, L = center(rbf_gram(zscore(torch.as_tensor(F)), sigma)), center(rbf_gram(zscore(torch.as_tensor(B)), sigma))
    return float((K * L).sum() / (K.norm() * L.norm()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="d = 512 and voxels = 1000 only")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, layers = 1000, 4
    configs = [(512, 1000)] if args.quick else [(512, 1000), (512, 10000), (4096, 1000), (4096, 10000)]
    try:
        import repsim
    except ImportError:
        repsim = None
    try:
        import rsatoolbox
    except ImportError:
        rsatoolbox = None
    rows = []
    for d, v in configs:
        B, Fs = problem(n, d, v, layers, rng)
        row = {"d": d, "voxels": v}
        t = time.perf_counter()
        cache = BrainCache({"roi": B}, "rbf-cka", sigma=12.0)
        row["cache s"] = time.perf_counter() - t
        row["ours/s"], ours = rate(lambda F, c=cache: c.scores(F)["roi"], Fs)
        row["uncached/s"], unc = rate(lambda F, B=B: uncached_cka(F, B), Fs[:1])
        assert abs(unc[0] - ours[0]) < 1e-10
        if repsim is not None:
            row["repsim rbf/s"], _ = rate(lambda F, B=B: repsim.cka([F, B], kernel_type="rbf")[0, 1], Fs[:1])
            lin = BrainCache({"roi": B}, "linear-cka").scores(Fs[0])["roi"]
            Bz, Fz = np.asarray(zscore(torch.as_tensor(B))), np.asarray(zscore(torch.as_tensor(Fs[0])))
            row["|linear CKA - repsim|"] = abs(lin - float(repsim.cka([Fz, Bz], kernel_type="linear")[0, 1]))
        if rsatoolbox is not None:
            from rsatoolbox.data import Dataset
            from rsatoolbox.rdm import calc_rdm, compare

            roi_rdm = calc_rdm(Dataset(B), method="correlation")  # cached like ours

            def rsa(F, roi_rdm=roi_rdm):
                return float(compare(calc_rdm(Dataset(F), method="correlation"), roi_rdm, method="spearman")[0, 0])

            row["rsatoolbox/s"], rs = rate(rsa, Fs[:1])
            rsa_cache = BrainCache({"roi": B}, "rsa")  # the same metric as rsatoolbox, ROI RDM cached
            row["ours RSA/s"], ours_rsa = rate(lambda F, c=rsa_cache: c.scores(F)["roi"], Fs)
            row["|RSA - rsatoolbox|"] = abs(ours_rsa[0] - rs[0])
        rows.append(row)
        print({k: (f"{x:.3g}" if isinstance(x, float) else x) for k, x in row.items()}, flush=True)
    try:
        import ray

        d, v = configs[-1]
        B, Fs = problem(n, d, v, 8, rng)
        cache = BrainCache({"roi": B}, "rbf-cka", sigma=12.0)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        score = ray.remote(num_cpus=1)(lambda c, F: c.scores(F)["roi"])
        cref = ray.put(cache)
        refs = [ray.put(F) for F in Fs]
        ray.get([score.remote(cref, F) for F in refs[:4]])  # warm both workers (imports, object fetch)
        t = time.perf_counter()
        ray_scores = ray.get([score.remote(cref, F) for F in refs])
        ray_rate = len(Fs) / (time.perf_counter() - t)
        ray.shutdown()
        one = [cache.scores(F)["roi"] for F in Fs[:2]]
        rows.append({"d": d, "voxels": v, "ours on Ray (2 CPUs)/s": ray_rate, "identical": ray_scores[:2] == one})
        print(rows[-1])
    except ImportError:
        pass
    print("\n| d | voxels | ours (cached) /s | cache s | uncached /s | repsim /s | ours RSA /s | rsatoolbox /s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "ours/s" in r:
            print(
                f"| {r['d']} | {r['voxels']} | {r['ours/s']:.3g} | {r['cache s']:.3g} | {r['uncached/s']:.3g} | "
                f"{r.get('repsim rbf/s', float('nan')):.3g} | {r.get('ours RSA/s', float('nan')):.3g} | "
                f"{r.get('rsatoolbox/s', float('nan')):.3g} |"
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2, default=float)


if __name__ == "__main__":
    main()
