"""The paper's headline claims, executable on synthetic matrices with exactly known spectra.

Theorems of the paper are checked in their measurable form (reconstructions, see the README):

- ``accelerated-rate``: iterations to ``sin theta <= 1e-6`` over a gap sweep scale like ``1/Delta`` for NPM
  and ``1/sqrt(Delta)`` for ANPM (fitted log-log slopes).
- ``noise-tolerance``: below the milder noise bound ANPM keeps its accelerated iteration count (at noise
  levels above the earlier, restrictive bound); adversarial noise above it makes it stall above ``eps``.
- ``decentralized-acceleration``: fewer communication rounds than DeEPCA on ring and grid graphs, each
  method at its best number of gossip rounds per iteration; the naive gossip power method stalls.
- ``matches-reference``: the subspace agrees with ``scipy.linalg.eigh`` / ``scipy.sparse.linalg.eigsh``.
"""

from __future__ import annotations

import functools
import logging

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import eigsh

from icml26.claims import ClaimResult, Scale, claim
from icml26.noisypower.config import CENTRALIZED, DECENTRALIZED
from icml26.noisypower.data import dense_problem, local_covariances, sparse_problem
from icml26.noisypower.decentralized import decentralized_pca
from icml26.noisypower.method import accelerated_noisy_power_method, noisy_power_method, sin_theta
from icml26.noisypower.network import make_graph, metropolis_weights
from icml26.noisypower.noise import AdversarialNoise, GaussianNoise, noise_bound, xu_noise_bound


def _expected_stalls(func):
    """For claims that run past the noise bound or with naive gossip on purpose and measure the stall
    themselves: the library's "did not reach tol" / "stalled" warnings would only repeat it in the report."""

    @functools.wraps(func)
    def quiet(*args, **kwargs):
        log = logging.getLogger("icml26.noisypower")
        level = log.level
        log.setLevel(logging.ERROR)
        try:
            return func(*args, **kwargs)
        finally:
            log.setLevel(level)

    return quiet


def _slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x``."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 4))


@claim(
    "noisypower/accelerated-rate-v1",
    statement="Iterations to sin theta <= 1e-6 scale like 1/Delta for NPM and like 1/sqrt(Delta) for ANPM "
    "(Delta = 1 - lambda_{k+1}/lambda_k, swept over lambda_{k+1}/lambda_k in {0.5, 0.8, 0.9, 0.97, 0.99}); "
    "fitted log-log slopes 1 +- 0.25 and 0.5 +- 0.2",
    paper="main theorem (accelerated rate O(sqrt(lambda_k/(lambda_k - lambda_{k+1})) log 1/eps)); abstract",
    control="momentum beta = 0 in ANPM: 'ANPM' becomes NPM, its slope is ~1 like NPM's and the claim must fail",
)
def accelerated_rate(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    it_npm, it_anpm = [], []
    for g in cfg.gap_ratios:
        P = dense_problem(cfg.d, cfg.k, g, seed=rng)
        X0 = rng.standard_normal((cfg.d, cfg.k))
        common = dict(tol=cfg.eps, reference=P.U, X0=X0, max_iter=50_000)
        momentum = dict(beta=0.0) if control else dict(lambda_next=P.eigvals[cfg.k])  # beta = lambda_{k+1}^2/4
        it_npm.append(noisy_power_method(P.A, cfg.k, **common).n_iter)
        it_anpm.append(accelerated_noisy_power_method(P.A, cfg.k, **momentum, **common).n_iter)
    inv_gap = 1.0 / (1.0 - np.asarray(cfg.gap_ratios))
    s_npm, s_anpm = _slope(inv_gap, it_npm), _slope(inv_gap, it_anpm)
    speedup = it_npm[-1] / it_anpm[-1]
    holds = abs(s_npm - 1.0) <= 0.25 and abs(s_anpm - 0.5) <= 0.2 and s_npm - s_anpm >= 0.3
    fig, ax = _figure()
    ax.loglog(inv_gap, it_npm, "o-", label=f"NPM (slope {s_npm:.2f})")
    ax.loglog(inv_gap, it_anpm, "s-", label=f"ANPM, beta = lambda_(k+1)^2/4 (slope {s_anpm:.2f})")
    ax.set_xlabel("1 / Delta,  Delta = 1 - lambda_(k+1)/lambda_k")
    ax.set_ylabel("iterations to sin theta <= 1e-6")
    ax.set_title(f"d={cfg.d}, k={cfg.k}, exact products")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "ANPM slope": s_anpm,
            f"ANPM iterations at {cfg.gap_ratios[-1]}": it_anpm[-1],
            f"NPM/ANPM iterations at {cfg.gap_ratios[-1]}": speedup,
        },
        paper={"ANPM slope": 0.5, "NPM slope": 1.0},
        baselines={"NPM slope": s_npm, f"NPM iterations at {cfg.gap_ratios[-1]}": it_npm[-1]},
        reason="" if holds else f"slopes NPM {s_npm:.2f}, ANPM {s_anpm:.2f} outside 1 +- 0.25 / 0.5 +- 0.2",
        figures={"iterations-vs-gap": fig},
    )


@claim(
    "noisypower/noise-tolerance-v1",
    statement="With adversarial noise at <= 0.3x the bound eps (lambda_k - lambda_{k+1}) (which exceeds the earlier "
    "sqrt(Delta)-scaled bound) ANPM still reaches eps within 1.3x its noiseless iterations and >= 2x faster than "
    "noiseless NPM; at 3x and 10x the bound it stalls above eps (the condition cannot be relaxed)",
    paper="main theorem (noise conditions) and the lower-bound construction (worst-case optimality); abstract",
    control="momentum beta = 0 in ANPM (noiseless, adversarial and Gaussian runs): 'ANPM' becomes NPM, which is "
    "not >= 2x faster than noiseless NPM below the bound, so the claim must fail",
    by_construction="the adversary is built to settle the error at level/gap for any method (NPM stalls above the "
    "bound as well), the 1x-bound case passes unchecked (f == 1) and the 'tolerated noise / earlier bound' ratio "
    "is a formula of the chosen fractions; only the speed-up below the bound is measured, which its control "
    "(beta = 0) does remove - replaced by noise-tolerance-v2 (issue 14)",
)
@_expected_stalls
def noise_tolerance(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    eps, k = cfg.eps, cfg.k
    ok, details = True, []
    measured: dict[str, float] = {}
    baselines: dict[str, float] = {}
    fig, ax = _figure()
    for g in cfg.noise_gaps:
        P = dense_problem(cfg.d, k, g, seed=rng)
        lam_k, lam_next = P.eigvals[k - 1], P.eigvals[k]
        X0 = rng.standard_normal((cfg.d, k))
        common = dict(tol=eps, reference=P.U, X0=X0, seed=rng)
        momentum = dict(beta=0.0) if control else dict(lambda_next=lam_next)  # beta = lambda_{k+1}^2 / 4
        base_npm = noisy_power_method(P.A, k, max_iter=50_000, **common).n_iter
        base = accelerated_noisy_power_method(P.A, k, **momentum, max_iter=50_000, **common).n_iter
        baselines[f"NPM iterations, no noise, gap {g}"] = base_npm
        measured[f"ANPM iterations, no noise, gap {g}"] = base
        for f in cfg.noise_fractions:
            noise = AdversarialNoise.at_fraction(f, P.eigvals, P.top, k, eps)
            stop = eps if f < 1 else eps * 1e-3  # above the bound: run the full budget and record the floor
            res = accelerated_noisy_power_method(
                P.A, k, **momentum, noise=noise, max_iter=max(20 * base, 400), **{**common, "tol": stop}
            )
            hist = np.asarray(res.history["sin_theta"])
            ax.semilogy(hist, label=f"{f}x bound, gap {g}")
            if f < 1:
                n_it = res.iterations_to(eps)
                measured[f"ANPM iterations at {f}x bound, gap {g}"] = n_it if n_it is not None else np.nan
                good = n_it is not None and n_it <= 1.3 * base and 2 * n_it <= base_npm
                details.append(f"{f}x: {n_it} it (noiseless {base}, NPM {base_npm})")
            else:
                floor = float(np.min(hist[len(hist) // 2 :]))
                measured[f"ANPM floor / eps at {f}x bound, gap {g}"] = floor / eps
                good = f == 1 or floor > eps
                details.append(f"{f}x: floor {floor / eps:.2f} eps")
            ok &= good
        level = max(f for f in cfg.noise_fractions if f < 1) * noise_bound(lam_k, lam_next, eps)
        measured[f"tolerated noise / earlier bound, gap {g}"] = level / xu_noise_bound(lam_k, lam_next, eps)
        gauss = accelerated_noisy_power_method(
            P.A, k, **momentum, noise=GaussianNoise(level), max_iter=20 * base, **common
        )
        measured[f"ANPM iterations, Gaussian noise, gap {g}"] = gauss.n_iter if gauss.converged else np.nan
    ax.axhline(eps, color="k", ls=":", label="eps")
    ax.set_xlabel("iteration")
    ax.set_ylabel("sin theta (ANPM, adversarial noise)")
    ax.legend(fontsize=7)
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        paper={"below the bound": "accelerated rate kept", "above the bound": "no convergence to eps"},
        baselines=baselines,
        reason="" if ok else "; ".join(details),
        figures={"error-vs-iteration": fig},
    )


def _best_rounds(A_local, k, W, method, cfg, X0, U, beta=None):
    """Fewest communication rounds to eps over the K sweep (a run is cut once it exceeds the best so far)."""
    best, best_K, best_hist = None, None, None
    for K in cfg.rounds:
        budget = cfg.max_iter if best is None else min(cfg.max_iter, best // K)
        if budget < 1:
            continue
        res = decentralized_pca(
            A_local,
            k,
            W=W,
            method=method,
            K=K,
            tol=cfg.eps,
            max_iter=budget,
            X0=X0,
            reference=U,
            beta=beta,
            strict=False,
        )
        r = res.rounds_to(cfg.eps)
        if r is not None and (best is None or r < best):
            best, best_K, best_hist = r, K, res.history
    return best, best_K, best_hist


@claim(
    "noisypower/decentralized-acceleration-v1",
    statement="On ring and 2-D grid graphs, accelerated decentralized PCA reaches worst-node sin theta <= 1e-6 in "
    ">= 1.5x fewer communication rounds than DeEPCA (each at its best gossip rounds per iteration K), at "
    "lambda_{k+1}/lambda_k >= 0.95; the naive gossip power method never reaches 1e-6",
    paper="decentralized algorithm and its communication-complexity corollary; abstract",
    control="momentum beta = 0 in the accelerated method: it becomes DeEPCA (same tracking, same K sweep), the "
    "rounds ratio is 1 and the claim must fail",
)
@_expected_stalls
def decentralized_acceleration(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = DECENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    P = dense_problem(cfg.d, cfg.k, cfg.gap_ratio, seed=rng)
    A_local = local_covariances(P.A, cfg.n_nodes, heterogeneity=cfg.heterogeneity, seed=rng)
    X0 = rng.standard_normal((cfg.d, cfg.k))
    measured: dict[str, float] = {}
    baselines: dict[str, float] = {}
    ok, details = True, []
    import matplotlib.pyplot as plt

    beta = 0.0 if control else P.eigvals[cfg.k] ** 2 / 4  # the momentum the paper credits
    fig, axes = plt.subplots(1, len(cfg.graphs), figsize=(5 * len(cfg.graphs), 4), squeeze=False)
    for ax, graph in zip(axes[0], cfg.graphs, strict=True):
        W = metropolis_weights(make_graph(graph, cfg.n_nodes))
        acc, acc_K, acc_h = _best_rounds(A_local, cfg.k, W, "accelerated", cfg, X0, P.U, beta=beta)
        dee, dee_K, dee_h = _best_rounds(A_local, cfg.k, W, "deepca", cfg, X0, P.U)
        gos = [
            decentralized_pca(
                A_local,
                cfg.k,
                W=W,
                method="gossip",
                K=K,
                tol=cfg.eps,
                max_iter=cfg.max_iter,
                X0=X0,
                reference=P.U,
                strict=False,
            )
            for K in (cfg.rounds[0], cfg.rounds[-1])
        ]
        gossip_floor = min(min(g.history["sin_theta"]) for g in gos)
        ratio = dee / acc if acc and dee else np.nan
        measured[f"DeEPCA/accelerated rounds, {graph}"] = ratio
        measured[f"accelerated rounds, {graph}"] = acc if acc else np.nan
        measured[f"accelerated best K, {graph}"] = acc_K if acc_K else np.nan
        baselines[f"DeEPCA rounds, {graph}"] = dee if dee else np.nan
        baselines[f"DeEPCA best K, {graph}"] = dee_K if dee_K else np.nan
        baselines[f"gossip best sin theta, {graph}"] = gossip_floor
        good = bool(acc and dee and ratio >= 1.5 and gossip_floor > cfg.eps)
        details.append(
            f"{graph}: accelerated {acc} (K={acc_K}) vs DeEPCA {dee} (K={dee_K}), gossip floor {gossip_floor:.2g}"
        )
        ok &= good
        for hist, name in (
            (acc_h, f"accelerated, K={acc_K}"),
            (dee_h, f"DeEPCA, K={dee_K}"),
            (gos[-1].history, f"naive gossip, K={cfg.rounds[-1]}"),
        ):
            if hist is not None:
                ax.semilogy(hist["rounds"], hist["sin_theta"], label=name)
        ax.axhline(cfg.eps, color="k", ls=":")
        ax.set_xlabel("communication rounds")
        ax.set_ylabel("worst-node sin theta")
        ax.set_title(f"{graph}, {cfg.n_nodes} nodes, gap ratio {cfg.gap_ratio}")
        ax.legend(fontsize=8)
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        paper={"rounds": "O(K / sqrt(Delta)) vs O(K / Delta)"},
        baselines=baselines,
        elsewhere={"DeEPCA/accelerated rounds, ring, gap ratio 0.964, K = 6 [prototype]": 2.3},
        reason="" if ok else "; ".join(details),
        figures={"error-vs-rounds": fig},
    )


@claim(
    "noisypower/matches-reference-v1",
    statement="ANPM (auto momentum, residual stopping at 1e-10, no reference used) and NPM return a top-k subspace "
    "within sin theta 1e-8 of scipy.linalg.eigh (dense) and scipy.sparse.linalg.eigsh (sparse), eigenvalues "
    "within 1e-9 relative",
    paper="correctness of the method (the subspace it converges to); Sec. on ANPM",
    control="the solvers stopped early, at residual 1e-4 instead of 1e-10: their subspace is not converged, so "
    "it must miss the 1e-8 agreement and the claim must fail",
)
def matches_reference(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    k = cfg.k
    tol = 1e-4 if control else 1e-10  # residual stopping of ANPM and NPM
    worst_sin, worst_val, worst_peer = 0.0, 0.0, 0.0
    problems = [dense_problem(d, k, g, seed=rng) for d in cfg.reference_dims for g in (0.9, 0.95)]
    problems.append(sparse_problem(cfg.sparse_dim, k, gap_ratio=0.9, seed=rng))
    for P in problems:
        if isinstance(P.A, np.ndarray):
            vals, vecs = scipy.linalg.eigh(P.A, subset_by_index=[P.A.shape[0] - k, P.A.shape[0] - 1])
        else:
            vals, vecs = eigsh(P.A, k=k, which="LA", tol=0, v0=rng.standard_normal(P.A.shape[0]))
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        worst_peer = max(worst_peer, sin_theta(vecs, P.U))
        for solver in (accelerated_noisy_power_method, noisy_power_method):
            res = solver(P.A, k, tol=tol, seed=rng, max_iter=50_000)
            worst_sin = max(worst_sin, sin_theta(res.basis, vecs))
            worst_val = max(worst_val, float(np.max(np.abs(res.eigenvalues - vals) / np.abs(vals))))
    holds = worst_sin <= 1e-8 and worst_val <= 1e-9
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"worst sin theta vs scipy": worst_sin, "worst relative eigenvalue error": worst_val},
        paper={"worst sin theta vs scipy": 1e-8},
        baselines={"scipy vs exact ground truth (sin theta)": worst_peer},
        reason="" if holds else f"sin theta {worst_sin:.2g}, eigenvalue error {worst_val:.2g}",
    )


CLAIMS = [accelerated_rate, noise_tolerance, decentralized_acceleration, matches_reference]
