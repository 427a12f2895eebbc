"""noisypower on real SuiteSparse matrices: top-k eigenvectors by NPM / ANPM (exact and noisy products) vs scipy's
``eigsh``, and decentralized PCA with a data matrix's rows dealt out to 8 and 16 nodes (ring, grid): communication
rounds to worst-node sin theta <= 1e-6, accelerated vs DeEPCA.

Matrices (``icml26.noisypower.data.load_suitesparse``): bcsstk16 (4884 x 4884 stiffness matrix, symmetrised from
its stored lower triangle) and the Gram matrix ``M^T M`` of mbeacxc (492 x 490 economic data). Reference: the
top-k eigenvectors of numpy's dense ``eigh`` (ground truth to rounding). Products are counted: NPM/ANPM report
theirs (ANPM's includes its Lanczos estimate of the momentum), eigsh's are counted through a LinearOperator.
Noise: an isotropic Gaussian G_t of spectral norm ``c * eps * (lambda_k - lambda_{k+1})`` added to every block
product (the paper's tolerated order, c = 0.1, eps = 1e-6); eigsh gets the same noise through its operator.

Decentralized: the rows of mbeacxc (492) shuffled (seed 0) and split into n parts; node i holds
``n M_i^T M_i / m`` (mean: the Gram / m). Metropolis weights on a ring or a 2-D grid; each method at its best
FastMix rounds per iteration K over the same sweep (equal tuning budget); accelerated uses the oracle momentum
``lambda_{k+1}^2 / 4`` of the global matrix, as the theory does.

A third part (``--controls-only``, ``noisypower_suitesparse_controls.json``) gives the speed-up NPM / ANPM on the
small-gap cases an A/A arm (ANPM with beta = 0 from its own start) and a planted arm (Chebyshev's exact count).

    OMP_NUM_THREADS=1 python benchmarks/noisypower_suitesparse.py [--quick | --controls-only]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh

from icml26.noisypower import (
    GaussianNoise,
    accelerated_noisy_power_method,
    decentralized_pca,
    make_graph,
    metropolis_weights,
    noisy_power_method,
    sin_theta,
)
from icml26.noisypower.data import load_suitesparse, split_rows
from icml26.noisypower.theory import exact_chebyshev_iterations

EPS = 1e-6
ROUNDS = (2, 3, 4, 6, 8, 10, 12, 16, 20)


def reference(A):
    vals, vecs = np.linalg.eigh(A.toarray())
    return vals[::-1], vecs[:, ::-1]


#: bar of the speed-up row (contract v3 style, for a benchmark row, not a judged claim): NPM / ANPM iterations to
#: 1e-6 >= SPEEDUP_BAR where lambda_{k+1}/lambda_k >= 0.8. Set after the first run of this script (which printed
#: 1.7-9.6), so it is a reading aid, not a test; the A/A row (ANPM with beta = 0 from its own start) must miss it
#: and the positive row (Chebyshev's exact count, the accelerated rate planted) must clear it.
SPEEDUP_BAR = 2.0


def run_eigsh(A, k, tol, noise_level, seed):
    rng = np.random.default_rng(seed)
    count = [0]

    def mv(x):
        x = np.asarray(x, float).reshape(A.shape[0], -1)
        count[0] += x.shape[1]
        y = A @ x
        if noise_level:
            g = rng.standard_normal(y.shape)
            y = y + g * (noise_level / np.linalg.norm(g, 2))
        return y

    op = LinearOperator(A.shape, matvec=mv, matmat=mv, dtype=float)
    t = time.perf_counter()
    vals, vecs = eigsh(op, k=k, which="LA", tol=tol, v0=rng.standard_normal(A.shape[0]), maxiter=100_000)
    return time.perf_counter() - t, count[0], vecs[:, np.argsort(vals)[::-1]]


def controls(A, lam, V, k, seed) -> dict:
    """A/A and planted rows of the speed-up NPM / ANPM (exact products, same start for NPM and ANPM)."""
    U = V[:, :k]
    X0 = np.random.default_rng([seed, 0]).standard_normal((A.shape[0], k))
    X0_aa = np.random.default_rng([seed, 1]).standard_normal((A.shape[0], k))  # the A/A arm's own start
    common = dict(tol=EPS, max_iter=20_000, reference=U)
    n_npm = noisy_power_method(A, k, X0=X0, **common).iterations_to(EPS)
    n_anpm = accelerated_noisy_power_method(A, k, X0=X0, lambda_next=lam[k], **common).iterations_to(EPS)
    n_aa = accelerated_noisy_power_method(A, k, X0=X0_aa, beta=0.0, **common).iterations_to(EPS)
    n_cheb = exact_chebyshev_iterations(lam, V, X0, k, EPS)
    ratios = {"claim": n_npm / n_anpm, "negative (A/A: beta = 0, own start)": n_npm / n_aa}
    ratios["positive (Chebyshev's exact count)"] = n_npm / n_cheb
    return {
        "bar": SPEEDUP_BAR,
        "NPM / ANPM iterations": ratios,
        "verdicts": {arm: "holds" if r >= SPEEDUP_BAR else "fails" for arm, r in ratios.items()},
        "sqrt(1/Delta)": float(np.sqrt(1.0 / (1.0 - lam[k] / lam[k - 1]))),
    }


def centralized(name, A, ks, seed):
    lam, V = reference(A)
    rows = []
    for k in ks:
        U = V[:, :k]
        if lam[k] / lam[k - 1] >= 0.8:
            row = {"matrix": name, "k": k, "controls": controls(A, lam, V, k, seed)}
            rows.append(row)
            print(json.dumps(row), flush=True)
        gap = lam[k - 1] - lam[k]
        for noisy in (False, True):
            level = 0.1 * EPS * gap if noisy else 0.0
            noise = GaussianNoise(level) if noisy else None
            row = {"matrix": name, "k": k, "lambda_ratio": float(lam[k] / lam[k - 1]), "noise_norm": level}
            for label, fn in (("npm", noisy_power_method), ("anpm", accelerated_noisy_power_method)):
                t = time.perf_counter()
                res = fn(A, k, tol=EPS, max_iter=20_000, noise=noise, seed=seed, reference=U)
                row[label] = {
                    "seconds": time.perf_counter() - t,
                    "matvecs": res.n_matvecs,
                    "iterations": res.n_iter,
                    "iterations_to_1e-6": res.iterations_to(EPS),
                    "sin_theta": sin_theta(res.basis, U),
                    "converged": bool(res.converged),
                }
            try:
                secs, mv, B = run_eigsh(A, k, 1e-10, level, seed)
                row["eigsh"] = {"seconds": secs, "matvecs": mv, "sin_theta": sin_theta(np.linalg.qr(B)[0], U)}
            except Exception as exc:  # ARPACK failing under noise is a result
                row["eigsh"] = {"error": repr(exc)[:160]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def best_rounds(A_local, k, W, method, X0, U, max_iter):
    best, best_K = None, None
    for K in ROUNDS:
        budget = max_iter if best is None else min(max_iter, best // K)
        if budget < 1:
            continue
        res = decentralized_pca(
            A_local, k, W=W, method=method, K=K, tol=EPS, max_iter=budget, X0=X0, reference=U, strict=False
        )
        r = res.rounds_to(EPS)
        if r is not None and (best is None or r < best):
            best, best_K = r, K
    return best, best_K


def decentralized(ks, nodes, seed):
    M = load_suitesparse("mbeacxc")
    rows = []
    for n in nodes:
        A_local = split_rows(M, n, seed=seed)
        vals, vecs = np.linalg.eigh(A_local.mean(axis=0))
        for k in ks:
            U = vecs[:, ::-1][:, :k]
            X0 = np.random.default_rng(seed).standard_normal((M.shape[1], k))
            for graph in ("ring", "grid"):
                W = metropolis_weights(make_graph(graph, n))
                row = {"nodes": n, "graph": graph, "k": k, "lambda_ratio": float(vals[::-1][k] / vals[::-1][k - 1])}
                for method in ("deepca", "accelerated"):
                    t = time.perf_counter()
                    r, K = best_rounds(A_local, k, W, method, X0, U, 3000)
                    row[method] = {"rounds_to_1e-6": r, "K": K, "seconds": time.perf_counter() - t}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="mbeacxc only, k = 2, 8 nodes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--controls-only", action="store_true", help="only the speed-up rows with their A/A and planted arms"
    )
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "noisypower_suitesparse.json"))
    args = ap.parse_args()
    mats = {"mbeacxc-gram": load_suitesparse("mbeacxc", gram=True)}
    if not args.quick:
        mats["bcsstk16"] = load_suitesparse("bcsstk16")
    result = {"centralized": [], "decentralized": []}
    if args.controls_only:
        for name, A in mats.items():
            lam, V = reference(A)
            for k in (1, 2, 4):
                if lam[k] / lam[k - 1] >= 0.8:
                    row = {"matrix": name, "k": k, "controls": controls(A, lam, V, k, args.seed)}
                    result["centralized"].append(row)
                    print(json.dumps(row), flush=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        return
    for name, A in mats.items():
        result["centralized"] += centralized(name, A, (2,) if args.quick else (1, 2, 4), args.seed)
    result["decentralized"] = decentralized(
        (2,) if args.quick else (1, 2, 4), (8,) if args.quick else (8, 16), args.seed
    )
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
