"""Retrieval latency per query: MHN (matmul + softmax, and torch SDPA) vs Karcher flow (ours vs geoopt's ops).

    python benchmarks/hyperhopfield_retrieval.py [--out benchmarks/results/hyperhopfield_retrieval.json]

d = 16, a batch of 32 queries, float64, one thread; P = 1e2, 1e3, 1e4 stored patterns. Karcher flow: one
retrieval update with 1, 5 and 20 inner iterations (fixed count, no early stop). Ours: closed-form Lorentz ops
with the weighted log-sum as two matrix products (numpy). Peer: geoopt 0.5.1 ``Lorentz`` ``dist``/``logmap``/
``expmap`` (torch), which broadcasts to a (Q, P, D) tensor.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from icml26.hyperhopfield import lorentz as L
from icml26.hyperhopfield.capacity import sample_hyperbolic_ball
from icml26.hyperhopfield.memory import karcher_mean

torch.set_num_threads(1)
sdpa = torch.nn.functional.scaled_dot_product_attention
D_DIM, Q, BETA = 16, 32, 4.0


def best_time(fn, repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def ours(X, xi, iters):
    W = np.exp(-0.5 * BETA * L.pairwise_dist(xi, X) ** 2)
    W /= W.sum(1, keepdims=True)
    return karcher_mean(X, W, xi, iters=iters, tol=0.0)[0]


def geoopt_flow(man, X, xi, iters):
    W = torch.softmax(-0.5 * BETA * man.dist(xi[:, None, :], X[None]) ** 2, dim=1)  # (Q, P)
    m = xi
    for _ in range(iters):
        v = (W[..., None] * man.logmap(m[:, None, :], X[None])).sum(1)  # (Q, P, D) -> (Q, D)
        m = man.projx(man.expmap(m, v))
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "hyperhopfield_retrieval.json")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # geoopt's torch.jit.script deprecation warnings
        import geoopt
    man = geoopt.Lorentz()
    rng = np.random.default_rng(0)
    rows = []
    for P in (100, 1000, 10000):
        X = sample_hyperbolic_ball(P, D_DIM, 4.0, rng)
        xi = L.expmap(X[:Q], L.random_tangent(X[:Q], 0.3, rng))
        Xt, xit = torch.from_numpy(X), torch.from_numpy(xi)
        E = rng.standard_normal((P, D_DIM))
        e = E[:Q] + 0.3 * rng.standard_normal((Q, D_DIM))
        Et, et = torch.from_numpy(E), torch.from_numpy(e)
        row = {"P": P}
        row["mhn_matmul_us"] = best_time(lambda e=et, E=Et: torch.softmax(e @ E.T * BETA, 1) @ E) / Q * 1e6
        row["mhn_sdpa_us"] = best_time(lambda e=et, E=Et: sdpa(e[None], E[None], E[None], scale=BETA)) / Q * 1e6
        for it in (1, 5, 20):
            a = ours(X, xi, it)
            b = geoopt_flow(man, Xt, xit, it).numpy()
            row[f"max_dist_ours_vs_geoopt_{it}"] = float(L.dist(a, b).max())
            row[f"karcher{it}_ours_us"] = best_time(lambda it=it, X=X, xi=xi: ours(X, xi, it), 3) / Q * 1e6
            row[f"karcher{it}_geoopt_us"] = (
                best_time(lambda it=it, Xt=Xt, xit=xit: geoopt_flow(man, Xt, xit, it), 3) / Q * 1e6
            )
            row[f"karcher{it}_speedup"] = row[f"karcher{it}_geoopt_us"] / row[f"karcher{it}_ours_us"]
        rows.append(row)
        print(json.dumps(row))
    payload = {
        "d": D_DIM,
        "batch": Q,
        "dtype": "float64",
        "threads": 1,
        "torch": torch.__version__,
        "geoopt": geoopt.__version__,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
