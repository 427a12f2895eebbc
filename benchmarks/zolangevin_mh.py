"""Can a Metropolis correction close the query gap to random-walk Metropolis at d >= 50? (issue 17)

Runs, on the two-mode Gaussian mixture of ``zolangevin_ksd.py`` with the same start, budget and convergence
criterion (KSD <= tau, |variance bias| <= 0.07, E[x_1^2] within 15 %):

- VR-ZO-LMC (b=4, q=4; ours, unadjusted),
- ZO-MALA: the plain Gaussian-smoothing drift g_u(x) with Metropolis-Hastings, the SAME directions u at the
  current point and the proposal (for a fixed u the drift is a deterministic function, so the MH step is
  exactly pi-reversible; u is redrawn every step, independent of x). 2b + 1 queries a step.
- random-walk Metropolis (numpy, step 2.38 / sqrt(d)), one query a step, as the gradient-free reference.

    python benchmarks/zolangevin_mh.py [--dims 50] [--budget-per-dim 200]

Writes benchmarks/results/zolangevin_mh.json. The VR recursion itself is not combined with MH: its drift
depends on the chain's past (g_{t-1}, x_{t-1}), so an MH ratio built from it is not reversible w.r.t. pi.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from icml26.zolangevin import run_sampler

sys.path.insert(0, str(Path(__file__).parent))
from zolangevin_ksd import N_CHAINS, N_CHECK, first_below, problem  # the same problem and criterion


def zo_mala(target, x0, budget, seed, b, h, mu=1e-4):
    """MH-adjusted Langevin with a zeroth-order drift drawn afresh each step (common u at x and y)."""
    rng = np.random.default_rng(seed)
    x = x0.copy()
    n, d = x.shape
    f = target.potential
    fx = f(x)
    queries, trace, acc, steps = 1, [], 0.0, 0
    chunk = budget / N_CHECK

    def drift(z, fz, u):  # (n, d), (n,), (n, b, d) -> (n, d); b queries per chain
        fu = f((z[:, None, :] + mu * u).reshape(n * b, d)).reshape(n, b)
        return np.einsum("nb,nbd->nd", (fu - fz[:, None]) / mu, u) / b

    t = time.perf_counter()
    while queries + 2 * b + 1 <= budget:
        u = rng.standard_normal((n, b, d))
        gx = drift(x, fx, u)
        y = x - h * gx + np.sqrt(2 * h) * rng.standard_normal((n, d))
        fy = f(y)
        gy = drift(y, fy, u)
        queries += 2 * b + 1
        log_q_xy = -((x - y + h * gy) ** 2).sum(1) / (4 * h)
        log_q_yx = -((y - x + h * gx) ** 2).sum(1) / (4 * h)
        ok = np.log(rng.uniform(size=n)) < -fy + fx + log_q_xy - log_q_yx
        x, fx = np.where(ok[:, None], y, x), np.where(ok, fy, fx)
        acc += ok.mean()
        steps += 1
        while len(trace) < N_CHECK and queries >= (len(trace) + 1) * chunk - (2 * b + 1):
            trace.append((queries, x.copy()))
    return trace, time.perf_counter() - t, acc / max(steps, 1)


def rwm(target, x0, budget, seed):
    rng = np.random.default_rng(seed)
    x = x0.copy()
    n, d = x.shape
    s = 2.38 / np.sqrt(d)
    fx = target.potential(x)
    trace, acc, chunk = [], 0.0, int(budget) // N_CHECK
    t = time.perf_counter()
    for i in range(N_CHECK * chunk):
        y = x + s * rng.standard_normal((n, d))
        fy = target.potential(y)
        ok = np.log(rng.uniform(size=n)) < fx - fy
        x, fx = np.where(ok[:, None], y, x), np.where(ok, fy, fx)
        acc += ok.mean()
        if (i + 1) % chunk == 0:
            trace.append((i + 2, x.copy()))
    return trace, time.perf_counter() - t, acc / (N_CHECK * chunk)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dims", type=int, nargs="+", default=[50])
    parser.add_argument("--budget-per-dim", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = []
    for d in args.dims:
        target, x0, tau = problem(d, args.seed)
        budget = args.budget_per_dim * d
        runs = {}
        t = time.perf_counter()
        res = run_sampler("vr-zo", target, x0, step=1 / d, query_budget=budget, b=4, q=4, n_snapshots=N_CHECK,
                          rng=np.random.default_rng(args.seed))  # fmt: skip
        runs["vr-zo-lmc b=4 q=4 (ours)"] = ([(q, s) for q, _, s in res.trace], time.perf_counter() - t, None)
        for b, h in ((4, 0.5 / d), (4, 1.0 / d), (16, 1.0 / d), (16, 2.0 / d)):
            runs[f"zo-mala b={b} h={h * d:g}/d"] = zo_mala(target, x0, budget, args.seed, b, h)
        runs["rwm (numpy)"] = rwm(target, x0, budget, args.seed)
        for name, (trace, wall, acc) in runs.items():
            q_tau = first_below(trace, target, tau)
            final = trace[-1][1]
            rows.append(
                {
                    "d": d,
                    "sampler": name,
                    "queries_to_tau": q_tau,
                    "acceptance": acc,
                    "seconds_total": wall,
                    "final_var_bias": float((final[:, 1:].var(0, ddof=1) - 1).mean()),
                    "budget": budget,
                }
            )
            print(f"d={d} {name:28s} q->tau {q_tau:7.0f}  acc {acc if acc is not None else float('nan'):.2f}"
                  f"  var bias {rows[-1]['final_var_bias']:+.3f}  {wall:.1f}s")  # fmt: skip
    out = Path(__file__).parent / "results" / "zolangevin_mh.json"
    out.write_text(
        json.dumps({"machine": "2-core shared CPU (heavily loaded)", "n_chains": N_CHAINS, "rows": rows}, indent=1)
    )


if __name__ == "__main__":
    main()
