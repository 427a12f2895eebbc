"""Queries and wall time to reach a KSD threshold on a Gaussian mixture: VR-ZO-LMC (ours) vs batched ZO-LMC,
emcee (gradient-free ensemble), blackjax random-walk Metropolis (gradient-free) and blackjax MALA (gradient
oracle, a lower bound). All samplers run 200 chains/walkers from the same start, interleaved in one process.

    python benchmarks/zolangevin_ksd.py [--dims 50] [--budget-per-dim 400]

Writes benchmarks/results/zolangevin_ksd.json. "queries" = potential evaluations per chain (MALA: plus as
many gradient evaluations). Convergence = KSD <= tau (1.1 x the KSD of as many exact i.i.d. samples) AND
|variance bias| <= 0.07 off the mode axis AND E[x_1^2] within 15 % of its true value: KSD alone barely
separates a hot law at d = 50 with 200 samples, so the moment checks make the criterion bite.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np

from icml26.zolangevin import GaussianMixture, imq_ksd, run_sampler

N_CHAINS = 200
N_CHECK = 20


def ours(name, target, x0, budget, seed, **kw):
    t = time.perf_counter()
    res = run_sampler(
        name,
        target,
        x0,
        step=1.0 / target.dim,
        query_budget=budget,
        n_snapshots=N_CHECK,
        rng=np.random.default_rng(seed),
        **kw,
    )
    wall = time.perf_counter() - t
    return [(q, s) for q, _, s in res.trace], wall


def run_ensemble_zo(target, x0, budget, seed, b=4, step=None):
    """Ensemble-preconditioned ZO Langevin (ALDI: Garbuno-Inigo et al. 2020) — a try at the query goal, not a
    method of the paper: preconditioning and ensemble moves in one. Each step, with C the ensemble covariance
    (+ 1e-6 I) and L its Cholesky factor, directions u = L z (z ~ N(0, I)) make the Gaussian-smoothing
    estimate (1/b) sum Delta_u U(x) u unbiased for C grad U_mu; then
        x_i <- x_i - h C grad U(x_i) + h (d + 1)/N (x_i - mean) + sqrt(2h) (1/sqrt(N)) sum_j (x_j - mean) xi_ij,
    the finite-ensemble correction term keeping pi^N invariant for the exact-gradient dynamics.
    b + 1 potential evaluations per chain and step, as plain ZO-LMC."""
    rng = np.random.default_rng(seed)
    x = np.array(x0, dtype=np.float64)
    n, d = x.shape
    h, mu = (1.0 / d if step is None else step), 1e-4
    steps = int(budget) // (b + 1)
    every = max(1, steps // N_CHECK)
    trace, t = [], time.perf_counter()
    for k in range(1, steps + 1):
        dev = x - x.mean(0)  # (N, d)
        C = dev.T @ dev / n + 1e-6 * np.eye(d)
        L = np.linalg.cholesky(C)
        u = rng.standard_normal((b, n, d)) @ L.T  # (b, N, d): rows ~ N(0, C)
        f0 = target.potential(x)
        fu = target.potential((x[None] + mu * u).reshape(-1, d)).reshape(b, n)
        g = (((fu - f0) / mu)[..., None] * u).mean(0)  # (N, d) ~ C grad U
        noise = rng.standard_normal((n, n)) @ dev / np.sqrt(n)  # (N, d) ~ N(0, C) per chain
        x = x - h * g + h * (d + 1) / n * dev + np.sqrt(2 * h) * noise
        if k % every == 0 and len(trace) < N_CHECK:
            trace.append((k * (b + 1), x.copy()))
    return trace, time.perf_counter() - t


def run_emcee(target, x0, budget, seed):
    import emcee

    n, d = x0.shape
    np.random.seed(seed)  # noqa: NPY002 - emcee draws from numpy's global state
    sampler = emcee.EnsembleSampler(n, d, lambda x: -target.potential(x), vectorize=True)
    chunk = max(1, int(budget) // N_CHECK)
    state, trace, t = x0, [], time.perf_counter()
    for i in range(N_CHECK):
        state = sampler.run_mcmc(state, chunk, progress=False)
        trace.append(((i + 1) * chunk, np.asarray(state.coords)))
    return trace, time.perf_counter() - t


def run_blackjax(kind, target, x0, budget, seed):
    import blackjax
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    means, logw = jnp.asarray(target.means), jnp.log(jnp.asarray(target.weights))

    def logdensity(x):  # the same mixture, written in jax
        return jax.scipy.special.logsumexp(logw - 0.5 * ((x[None] - means) ** 2).sum(-1)) - 0.5 * target.dim * jnp.log(
            2 * jnp.pi
        )

    d = target.dim
    if kind == "rwm":
        algo = blackjax.additive_step_random_walk.normal_random_walk(logdensity, 2.38 / np.sqrt(d) * jnp.ones(d))
        cost = 1  # one density evaluation per step
    else:
        algo = blackjax.mala(logdensity, 0.5 * d ** (-1 / 3))
        cost = 2  # one density + one gradient evaluation per step (counted separately below)
    states = jax.vmap(algo.init)(jnp.asarray(x0))
    chunk = max(1, int(budget / cost) // N_CHECK)

    @jax.jit
    def advance(states, key):
        def body(s, k):
            s, _ = jax.vmap(algo.step)(jax.random.split(k, len(x0)), s)
            return s, None

        return jax.lax.scan(body, states, jax.random.split(key, chunk))[0]

    key = jax.random.PRNGKey(seed)
    advance(states, key).position.block_until_ready()  # compile outside the timing
    trace, t = [], time.perf_counter()
    for i in range(N_CHECK):
        key, sub = jax.random.split(key)
        states = advance(states, sub)
        trace.append(((i + 1) * chunk, np.asarray(states.position)))
    return trace, time.perf_counter() - t


def converged(x, target, tau) -> bool:
    """KSD <= tau, |variance bias| <= 0.07 off the mode axis, and E[x_1^2] within 15 % (mode spread)."""
    second = float((x[:, 0] ** 2).mean()) / (target.var[0] + target.mean[0] ** 2)
    var_bias = float((x[:, 1:].var(0, ddof=1) - 1).mean())
    return imq_ksd(x, target.score(x)) <= tau and abs(var_bias) <= 0.07 and abs(second - 1) <= 0.15


def first_below(trace, target, tau):
    for q, x in trace:
        if converged(x, target, tau):
            return q
    return float("nan")


def stays_below(trace, target, tau):
    """The first checked budget from which every later check is converged too (a hit by noise does not count)."""
    ok = [converged(x, target, tau) for _, x in trace]
    return next((trace[i][0] for i in range(len(ok)) if all(ok[i:])), float("nan"))


def problem(d: int, seed: int):
    """The two-mode mixture in d dimensions, the chains' common start and the KSD threshold tau."""
    target = GaussianMixture.two_modes(d)
    rng = np.random.default_rng(seed)
    x0 = 0.5 * rng.standard_normal((N_CHAINS, d))
    exact = target.sample(N_CHAINS, rng)
    return target, x0, 1.1 * imq_ksd(exact, target.score(exact))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dims", type=int, nargs="+", default=[50])
    parser.add_argument("--budget-per-dim", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = []
    for d in args.dims:
        target, x0, tau = problem(d, args.seed)
        budget = args.budget_per_dim * d
        runs = {
            "vr-zo-lmc b=4 q=4 (ours)": (ours, "vr-zo", {"b": 4, "q": 4}),
            "zo-lmc b=4": (ours, "zo", {"b": 4}),
            "zo-lmc b=d": (ours, "zo", {"b": d}),
            "ensemble-preconditioned zo b=4, h=0.5/d (ALDI, a try)": (run_ensemble_zo, None, {"b": 4, "step": 0.5 / d}),
            "ensemble-preconditioned zo b=16 (ALDI, a try)": (run_ensemble_zo, None, {"b": 16}),
            "emcee": (run_emcee, None, {}),
            "blackjax rwm": (run_blackjax, "rwm", {}),
            "blackjax mala (gradient oracle)": (run_blackjax, "mala", {}),
        }
        for name, (fn, kind, kw) in runs.items():  # in turn on the same start, one process
            head = () if kind is None else (kind,)
            trace, wall = fn(*head, target, x0, budget, args.seed, **kw)
            final = trace[-1][1]
            if not np.isfinite(final).all():
                print(f"d={d} {name:34s} diverged")
                continue
            q_tau = first_below(trace, target, tau)
            rows.append(
                {
                    "d": d,
                    "sampler": name,
                    "queries_to_tau": q_tau,
                    "queries_to_stay": stays_below(trace, target, tau),
                    "seconds_total": wall,
                    "seconds_to_tau": wall * q_tau / trace[-1][0] if np.isfinite(q_tau) else float("nan"),
                    "final_ksd": imq_ksd(final, target.score(final)),
                    "final_var_bias": float((final[:, 1:].var(0, ddof=1) - 1).mean()),
                    "tau": tau,
                    "budget": budget,
                }
            )
            last = rows[-1]
            print(f"d={d} {name:34s} q->tau {q_tau:8.0f}  {wall:6.1f}s  KSD {last['final_ksd']:.3f}", end="")
            print(f"  var bias {last['final_var_bias']:+.3f}")
    ref = {r["d"]: r for r in rows if r["sampler"].startswith("vr-zo")}
    print("\n| d | sampler | queries to converge | ours/peer (queries) | ours/peer (seconds) | final var bias |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        o = ref[r["d"]]
        rq = o["queries_to_tau"] / r["queries_to_tau"]
        rs = o["seconds_to_tau"] / r["seconds_to_tau"]
        q = r["queries_to_tau"]
        print(f"| {r['d']} | {r['sampler']} | {q:.0f} | {rq:.2f} | {rs:.2f} | {r['final_var_bias']:+.3f} |")
    out = Path(__file__).parent / "results" / "zolangevin_ksd.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"machine": "2-core shared CPU", "n_chains": N_CHAINS, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
