"""The paper's headline claims, executable on synthetic matrices with exactly known spectra.

Theorems of the paper are checked in their measurable form (reconstructions, see the README):

- ``accelerated-rate-v2``: iterations to ``sin theta <= 1e-6`` over a gap sweep scale like ``1/sqrt(Delta)``
  for ANPM (``1/Delta`` for NPM); no momentum on a grid around ``lambda_{k+1}^2/4`` does better by more than
  10 %, and the iterations are those the Chebyshev analysis predicts (within 10 %).
- ``noise-tolerance-v2``: the largest noise ANPM tolerates (bisection, four adversaries) scales like
  ``Delta^1`` (the paper's ``eps (lambda_k - lambda_{k+1})``), not ``Delta^1.5`` (the earlier bound), while
  its iterations stay accelerated.
- ``decentralized-acceleration-v2``: communication rounds grow like ``(1/Delta)^{1/2}`` for the accelerated
  method and faster for DeEPCA, on ring, grid and Erdos-Renyi graphs, each at its best gossip rounds per
  iteration.
- ``matches-reference-v1`` (a correctness check of the implementation, not a claim of the paper): the subspace
  agrees with ``scipy.linalg.eigh`` / ``scipy.sparse.linalg.eigsh``.
"""

from __future__ import annotations

import functools
import logging

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import eigsh

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.noisypower.config import CENTRALIZED, DECENTRALIZED
from icml26.noisypower.data import dense_problem, local_covariances, sparse_problem
from icml26.noisypower.decentralized import decentralized_pca
from icml26.noisypower.method import accelerated_noisy_power_method, noisy_power_method, sin_theta
from icml26.noisypower.network import make_graph, metropolis_weights
from icml26.noisypower.noise import (
    AdversarialNoise,
    AlternatingNoise,
    EarlyOnlyNoise,
    GaussianNoise,
    noise_bound,
    xu_noise_bound,
)
from icml26.noisypower.theory import chebyshev_iterations, textbook_chebyshev_iterations, tolerated_noise


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
    "noisypower/accelerated-rate-v2",
    statement="ANPM (beta* = lambda_{k+1}^2/4) needs iterations to sin theta <= 1e-6 growing like (1/Delta)^b with "
    "b in (0.3, 0.7) over lambda_{k+1}/lambda_k in {0.5, 0.8, 0.9, 0.97, 0.99} (NPM: b ~ 1), and the rate cannot "
    "be improved: at every ratio >= 0.9 no momentum beta = lhat^2/4, lhat = lambda_{k+1} + s (lambda_k - "
    "lambda_{k+1}), s in {+-0.1, +-0.25, +-0.5}, reaches 1e-6 in fewer than 1/1.1 of beta*'s iterations, and "
    "beta*'s iterations are within 10 % of the Chebyshev prediction",
    paper="main theorem (accelerated rate O(sqrt(lambda_k/(lambda_k - lambda_{k+1})) log 1/eps)); worst-case "
    "optimality of the rate; abstract",
    control="momentum beta = 0 in place of beta* (same runs, same grid, same prediction): 'ANPM' becomes NPM, "
    "its slope is ~1, grid momenta beat it many times over and it misses the Chebyshev count, so the claim must fail",
    judge=(
        Interval("ANPM slope", above=0.3, below=0.7),
        Interval("worst beta*/best-grid iterations", below=1.1),
        Interval("worst |iterations / Chebyshev - 1|", below=0.1),
    ),
)
def accelerated_rate(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    k, eps = cfg.k, cfg.eps
    it_npm, it_anpm, grid_ratio, cheb_ratio, textbook = [], [], {}, {}, {}
    for g in cfg.gap_ratios:
        P = dense_problem(cfg.d, k, g, seed=rng)
        lam_k, lam_next = float(P.eigvals[k - 1]), float(P.eigvals[k])
        X0 = rng.standard_normal((cfg.d, k))
        common = dict(tol=eps, reference=P.U, X0=X0, max_iter=50_000)
        beta_star = 0.0 if control else lam_next**2 / 4  # the one line the control changes
        n_star = accelerated_noisy_power_method(P.A, k, beta=beta_star, **common).n_iter
        it_anpm.append(n_star)
        it_npm.append(noisy_power_method(P.A, k, **common).n_iter)
        if g < cfg.asymptotic_ratio:
            continue
        # the rate cannot be improved: momenta lhat^2/4 around beta*, lhat between lambda_{k+1} and lambda_k
        grid = []
        for s in cfg.momentum_grid:
            lhat = lam_next + s * (lam_k - lam_next)
            res = accelerated_noisy_power_method(P.A, k, beta=lhat**2 / 4, **common)
            grid.append(res.n_iter if res.converged else np.inf)
        grid_ratio[g] = n_star / min(grid)
        # Chebyshev prediction: X_t spans p_t(A) X0, p_t = (lambda_{k+1}/2)^t U_t(x / lambda_{k+1})
        vals, vecs = np.linalg.eigh(P.A)  # (d,), (d, d) ascending; exact up to rounding
        predicted = chebyshev_iterations(vals[::-1], vecs[:, ::-1], X0, k, eps)
        cheb_ratio[g] = n_star / predicted
        s0 = sin_theta(np.linalg.qr(X0)[0], P.U)
        textbook[g] = n_star / textbook_chebyshev_iterations(s0 / np.sqrt(1 - s0**2), lam_k, lam_next, eps)
    inv_gap = 1.0 / (1.0 - np.asarray(cfg.gap_ratios))
    s_npm, s_anpm = _slope(inv_gap, it_npm), _slope(inv_gap, it_anpm)
    worst_grid, worst_cheb = max(grid_ratio.values()), max(abs(r - 1.0) for r in cheb_ratio.values())
    holds = 0.3 < s_anpm < 0.7 and worst_grid < 1.1 and worst_cheb < 0.1
    fig, ax = _figure()
    ax.loglog(inv_gap, it_npm, "o-", label=f"NPM (slope {s_npm:.2f})")
    ax.loglog(
        inv_gap, it_anpm, "s-", label=f"ANPM, beta = {'0' if control else 'lambda_(k+1)^2/4'} (slope {s_anpm:.2f})"
    )
    ax.set_xlabel("1 / Delta,  Delta = 1 - lambda_(k+1)/lambda_k")
    ax.set_ylabel("iterations to sin theta <= 1e-6")
    ax.set_title(f"d={cfg.d}, k={k}, exact products")
    ax.legend()
    last = cfg.gap_ratios[-1]
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "ANPM slope": s_anpm,
            "worst beta*/best-grid iterations": worst_grid,
            "worst |iterations / Chebyshev - 1|": worst_cheb,
            f"ANPM iterations at {last}": it_anpm[-1],
            f"NPM/ANPM iterations at {last}": it_npm[-1] / it_anpm[-1],
            **{f"beta*/best-grid iterations at {g}": r for g, r in grid_ratio.items()},
            **{f"iterations / Chebyshev prediction at {g}": r for g, r in cheb_ratio.items()},
            **{f"iterations / textbook Chebyshev bound at {g}": r for g, r in textbook.items()},
        },
        paper={"rate": "accelerated; worst-case optimal (cannot be improved)"},
        elsewhere={
            "ANPM slope [standard Chebyshev rate, our reading; paper text not read]": 0.5,
            "NPM slope [standard power-method rate]": 1.0,
        },
        baselines={"NPM slope": s_npm, f"NPM iterations at {last}": it_npm[-1]},
        reason=""
        if holds
        else f"ANPM slope {s_anpm:.2f} (NPM {s_npm:.2f}), beta*/best grid {worst_grid:.2f}, "
        f"Chebyshev deviation {worst_cheb:.2f}",
        figures={"iterations-vs-gap": fig},
    )


#: The adversaries of the noise-tolerance sweep (see ``_adversary``).
ADVERSARIES = ("push", "random", "alternating", "early-only")


def _adversary(name: str, level: float, P, k: int, early_until: int):
    """Perturbation of spectral norm ``level`` at every update (``early-only``: the first ``early_until``)."""
    u_k, u_next = P.top[:, k - 1], P.top[:, k]
    if name == "push":  # coherent push along u_{k+1} (the lower-bound instance)
        return AdversarialNoise(level, u_k, u_next)
    if name == "random":  # isotropic Gaussian direction
        return GaussianNoise(level)
    if name == "alternating":  # the push with its sign flipped every update
        return AlternatingNoise(level, u_k, u_next)
    if name == "early-only":  # the push during the first half of the noiseless run only
        return EarlyOnlyNoise(AdversarialNoise(level, u_k, u_next), early_until)
    raise ValueError(f"unknown adversary {name!r}")


def _thresholds(solve, P, k: int, cfg, seed: int) -> tuple[int, dict[str, float], list[str]]:
    """Noiseless iterations, per adversary the largest tolerated noise level (bisection), and the adversaries
    whose bracket could not be closed (their level is capped)."""
    lam_k, lam_next = float(P.eigvals[k - 1]), float(P.eigvals[k])
    n0 = solve(noise=None, tol=cfg.eps, max_iter=200_000, seed=seed).iterations_to(cfg.eps)
    out, censored = {}, []
    for name in ADVERSARIES:
        level, cut = tolerated_noise(
            solve,
            lambda lv, name=name: _adversary(name, lv, P, k, max(1, n0 // 2)),
            eps=cfg.eps,
            noiseless_iterations=n0,
            start=noise_bound(lam_k, lam_next, cfg.eps),
            slack=cfg.tolerance_slack,
            steps=cfg.bisection_steps,
            seed=seed,
        )
        out[name] = level
        if cut:
            censored.append(name)
    return n0, out, censored


#: NPM's noiseless iterations and thresholds per (config, seed, gap ratio): the claim and its control run the
#: same baseline on the same seeds, so the control reuses it (the problem and start are drawn identically).
#: Keyed on the frozen config itself, not the scale's name, so an edited config never reuses stale results.
_NPM_THRESHOLDS: dict[tuple[object, int, float], tuple[int, dict[str, float], list[str]]] = {}


def _log_slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x``; NaN when some ``y`` is not positive and finite."""
    y = np.asarray(y, dtype=float)
    return _slope(x, y) if np.all(np.isfinite(y)) and np.all(y > 0) else float("nan")


@claim(
    "noisypower/noise-tolerance-v2",
    statement="The largest noise level under which ANPM still reaches sin theta <= 1e-6 within 1.3x its noiseless "
    "iterations (bisection; worst of four adversaries: push along u_{k+1}, random, push with alternating sign, push "
    "in the first half only), over lambda_{k+1}/lambda_k in {0.9, 0.97, 0.99, 0.997}, scales like Delta^a with "
    "a in (0.75, 1.25) - the paper's eps (lambda_k - lambda_{k+1}) condition (a = 1), not the earlier "
    "eps (lambda_k - lambda_{k+1}) sqrt(Delta) (a = 1.5) - while those noiseless iterations grow like "
    "(1/Delta)^b with b in (0.3, 0.7): the accelerated rate survives noise of the non-accelerated method's order",
    paper="main theorem (noise conditions, 'much milder' than the earlier analysis) and their optimality; abstract",
    control="momentum beta = 0 in ANPM (every run): 'ANPM' becomes NPM, which tolerates noise of the same "
    "Delta^1 order but needs (1/Delta)^1 iterations, so the iteration slope leaves (0.3, 0.7) and the claim must fail",
    by_construction="review (referee, v2): the tolerated-noise half holds by how the adversary and the bisection were "
    "built. The worst adversary is always the push, whose error floor level / (lambda_k - lambda_{k+1}) is the same "
    "for any momentum (the momentum term is parallel to X at the fixed point); bisection starts at eps (lambda_k - "
    "lambda_{k+1}) and any linearly converging method reaches eps within 1.3x its noiseless count one bisection step "
    "below it, so the slope is exactly 1.00 with zero spread for ANPM, NPM and the control alike. The other half is "
    "the noiseless iteration slope (accelerated-rate-v2's measurement), the only key the control breaks; no judged "
    "key counts ANPM's iterations under noise.",
    judge=(
        Interval("ANPM tolerated-noise slope, worst adversary", above=0.75, below=1.25),
        Interval("ANPM iteration slope", above=0.3, below=0.7),
    ),
)
@_expected_stalls
def noise_tolerance(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    k, d = cfg.k, cfg.tolerance_d
    gaps = np.asarray(cfg.tolerance_gaps)
    delta = 1.0 - gaps  # Delta = 1 - lambda_{k+1} / lambda_k
    n0 = {"ANPM": [], "NPM": []}
    tau = {m: {a: [] for a in ADVERSARIES} for m in n0}  # tolerated levels per method, adversary, gap
    censored, paper_bound, xu_bound = [], [], []
    for g in gaps:
        P = dense_problem(d, k, float(g), seed=rng)
        lam_k, lam_next = float(P.eigvals[k - 1]), float(P.eigvals[k])
        paper_bound.append(noise_bound(lam_k, lam_next, cfg.eps))
        xu_bound.append(xu_noise_bound(lam_k, lam_next, cfg.eps))
        X0 = rng.standard_normal((d, k))
        beta = 0.0 if control else lam_next**2 / 4  # the one line the control changes
        solvers = {
            "ANPM": functools.partial(accelerated_noisy_power_method, P.A, k, beta=beta, X0=X0, reference=P.U),
            "NPM": functools.partial(noisy_power_method, P.A, k, X0=X0, reference=P.U),
        }
        for method, solve in solvers.items():
            key = (cfg, seed, float(g))
            if method == "NPM" and key in _NPM_THRESHOLDS:  # the baseline does not depend on `control`
                n, levels, cut = _NPM_THRESHOLDS[key]
            else:
                n, levels, cut = _thresholds(solve, P, k, cfg, seed)
                if method == "NPM":
                    _NPM_THRESHOLDS[key] = (n, levels, cut)
            n0[method].append(n)
            censored += [f"{method} {a} at {g:g}" for a in cut]
            for a in ADVERSARIES:
                tau[method][a].append(levels[a])
    worst = {m: np.min([tau[m][a] for a in ADVERSARIES], axis=0) for m in tau}  # (n_gaps,) per method
    slope = {m: {a: _log_slope(delta, tau[m][a]) for a in ADVERSARIES} for m in tau}
    s_worst = {m: _log_slope(delta, worst[m]) for m in worst}
    s_iter = {m: _log_slope(1.0 / delta, n0[m]) for m in n0}
    holds = 0.75 < s_worst["ANPM"] < 1.25 and 0.3 < s_iter["ANPM"] < 0.7
    fig, ax = _figure()
    for i, a in enumerate(ADVERSARIES):
        ax.loglog(delta, tau["ANPM"][a], "o-", color=f"C{i}", label=f"ANPM, {a} (slope {slope['ANPM'][a]:.2f})")
        ax.loglog(delta, tau["NPM"][a], "x--", color=f"C{i}", alpha=0.6, label=f"NPM, {a}")
    ax.loglog(delta, paper_bound, "k-", lw=0.8, label="eps (lambda_k - lambda_(k+1)) [paper's order]")
    ax.loglog(delta, xu_bound, "k:", lw=0.8, label="... x sqrt(Delta) [earlier bound]")
    ax.set_xlabel("Delta = 1 - lambda_(k+1)/lambda_k")
    ax.set_ylabel(f"largest tolerated ||G_t|| (eps reached within {cfg.tolerance_slack}x noiseless iterations)")
    ax.legend(fontsize=6)
    small = f"{gaps[-1]:g}"
    measured = {
        "ANPM tolerated-noise slope, worst adversary": s_worst["ANPM"],
        "ANPM iteration slope": s_iter["ANPM"],
        "ANPM - NPM tolerated-noise slope, worst adversary": s_worst["ANPM"] - s_worst["NPM"],
        **{f"ANPM tolerated-noise slope, {a}": slope["ANPM"][a] for a in ADVERSARIES},
        f"ANPM worst tolerated / eps (lambda_k - lambda_(k+1)) at {small}": worst["ANPM"][-1] / paper_bound[-1],
        f"ANPM worst tolerated / earlier bound at {small}": worst["ANPM"][-1] / xu_bound[-1],
        f"ANPM noiseless iterations at {small}": n0["ANPM"][-1],
    }
    baselines = {
        "NPM tolerated-noise slope, worst adversary": s_worst["NPM"],
        "NPM iteration slope": s_iter["NPM"],
        **{f"NPM tolerated-noise slope, {a}": slope["NPM"][a] for a in ADVERSARIES},
        f"NPM worst tolerated / eps (lambda_k - lambda_(k+1)) at {small}": worst["NPM"][-1] / paper_bound[-1],
        f"NPM noiseless iterations at {small}": n0["NPM"][-1],
    }
    reason = (
        ""
        if holds
        else (
            f"worst-adversary tolerated-noise slope {s_worst['ANPM']:.2f} (need 0.75..1.25), iteration slope "
            f"{s_iter['ANPM']:.2f} (need 0.3..0.7)"
        )
    )
    if censored:
        reason = (reason + "; " if reason else "") + f"level capped (bracket not closed): {', '.join(censored)}"
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"noise conditions": "much milder than the earlier analysis; cannot be relaxed"},
        elsewhere={
            "tolerated-noise slope [reconstruction: eps (lambda_k - lambda_{k+1}), paper text not read]": 1.0,
            "earlier analysis's tolerated-noise slope [Xu 2023, as our notes summarise it]": 1.5,
        },
        baselines=baselines,
        reason=reason,
        figures={"tolerated-noise-vs-gap": fig},
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


#: DeEPCA's best rounds and K per (config, seed, gap ratio, graph): the claim and its control run the same
#: baseline on the same seeds (problems, splits, graphs and starts are drawn identically), so the control reuses it.
#: Keyed on the frozen config itself, not the scale's name, so an edited config never reuses stale results.
_DEEPCA_ROUNDS: dict[tuple[object, int, float, str], tuple[int | None, int | None]] = {}


def _connected_graph(kind: str, n_nodes: int, p: float, rng: np.random.Generator):
    """``make_graph``; an Erdos-Renyi graph is redrawn until connected."""
    if kind not in ("erdos-renyi", "er"):
        return make_graph(kind, n_nodes)
    for _ in range(1000):
        try:
            return make_graph(kind, n_nodes, p=p, seed=int(rng.integers(2**31)))
        except ValueError:  # disconnected draw
            continue
    raise RuntimeError(f"no connected Erdos-Renyi graph on {n_nodes} nodes with p = {p}")


@claim(
    "noisypower/decentralized-acceleration-v2",
    statement="Communication rounds to worst-node sin theta <= 1e-6, each method at its best K in {1, ..., 24} "
    "FastMix rounds per iteration, grow like (1/Delta)^a over lambda_{k+1}/lambda_k in {0.95, 0.97, 0.98, 0.99, "
    "0.995}: on ring, 2-D grid and Erdos-Renyi graphs the accelerated method's a is within 0.2 of 1/2 and at "
    "least 0.25 below DeEPCA's (theory: 1/2 vs 1)",
    paper="decentralized algorithm and its communication-complexity corollary (O(K / sqrt(Delta)) rounds); abstract",
    control="momentum beta = 0 in the accelerated method: it becomes DeEPCA (same tracking, same K sweep), its "
    "exponent is DeEPCA's and both intervals must fail",
    judge=(
        Interval("worst |a_accelerated - 0.5| over graphs", below=0.2),
        Interval("min over graphs a_DeEPCA - a_accelerated", above=0.25),
    ),
)
@_expected_stalls
def decentralized_acceleration(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = DECENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    graphs = {g: metropolis_weights(_connected_graph(g, cfg.n_nodes, cfg.er_p, rng)) for g in cfg.graphs}
    rounds = {(m, g): [] for m in ("accelerated", "DeEPCA") for g in graphs}
    best_K = {(m, g): [] for m in ("accelerated", "DeEPCA") for g in graphs}
    for ratio in cfg.gap_ratios:
        P = dense_problem(cfg.d, cfg.k, ratio, seed=rng)
        A_local = local_covariances(P.A, cfg.n_nodes, heterogeneity=cfg.heterogeneity, seed=rng)
        X0 = rng.standard_normal((cfg.d, cfg.k))
        beta = 0.0 if control else P.eigvals[cfg.k] ** 2 / 4  # the momentum the paper credits
        for g, W in graphs.items():
            for m, method, b in (("accelerated", "accelerated", beta), ("DeEPCA", "deepca", None)):
                key = (cfg, seed, float(ratio), g)
                if m == "DeEPCA" and key in _DEEPCA_ROUNDS:  # the baseline does not depend on `control`
                    r, K = _DEEPCA_ROUNDS[key]
                else:
                    r, K, _ = _best_rounds(A_local, cfg.k, W, method, cfg, X0, P.U, beta=b)
                    if m == "DeEPCA":
                        _DEEPCA_ROUNDS[key] = (r, K)
                rounds[m, g].append(r if r is not None else np.nan)
                best_K[m, g].append(K if K is not None else np.nan)
    inv_gap = 1.0 / (1.0 - np.asarray(cfg.gap_ratios))
    a = {key: _log_slope(inv_gap, v) for key, v in rounds.items()}
    off = max(abs(a["accelerated", g] - 0.5) for g in graphs)
    sep = min(a["DeEPCA", g] - a["accelerated", g] for g in graphs)
    holds = bool(off < 0.2 and sep > 0.25)  # NaN (a method never reached eps) fails both
    fig, ax = _figure()
    for i, g in enumerate(graphs):
        ax.loglog(
            inv_gap,
            rounds["accelerated", g],
            "o-",
            color=f"C{i}",
            label=f"accelerated, {g} (a = {a['accelerated', g]:.2f})",
        )
        ax.loglog(inv_gap, rounds["DeEPCA", g], "x--", color=f"C{i}", label=f"DeEPCA, {g} (a = {a['DeEPCA', g]:.2f})")
    ax.set_xlabel("1 / Delta")
    ax.set_ylabel("communication rounds to worst-node sin theta <= 1e-6 (best K)")
    ax.set_title(f"{cfg.n_nodes} nodes, d={cfg.d}, k={cfg.k}")
    ax.legend(fontsize=7)
    small = f"{cfg.gap_ratios[-1]:g}"
    measured = {
        "worst |a_accelerated - 0.5| over graphs": off,
        "min over graphs a_DeEPCA - a_accelerated": sep,
        **{f"a_accelerated, {g}": a["accelerated", g] for g in graphs},
        **{
            f"DeEPCA/accelerated rounds at {small}, {g}": rounds["DeEPCA", g][-1] / rounds["accelerated", g][-1]
            for g in graphs
        },
        **{f"accelerated best K at {small}, {g}": best_K["accelerated", g][-1] for g in graphs},
    }
    baselines = {
        **{f"a_DeEPCA, {g}": a["DeEPCA", g] for g in graphs},
        **{f"DeEPCA best K at {small}, {g}": best_K["DeEPCA", g][-1] for g in graphs},
        **{f"DeEPCA best K at {cfg.gap_ratios[0]:g}, {g}": best_K["DeEPCA", g][0] for g in graphs},
    }
    lowest, highest = min(cfg.rounds), max(cfg.rounds)
    at_edge = [f"{m} {g}" for (m, g), ks in best_K.items() if any(K == lowest for K in ks)]
    at_top = [f"{m} {g}" for (m, g), ks in best_K.items() if any(K == highest for K in ks)]
    details = [f"{g}: a_acc {a['accelerated', g]:.2f}, a_DeEPCA {a['DeEPCA', g]:.2f}" for g in graphs]
    reason = "" if holds else "; ".join(details)
    if at_edge:
        reason = (reason + "; " if reason else "") + f"best K = {lowest} (edge of the sweep) for {', '.join(at_edge)}"
    if at_top:
        reason = (reason + "; " if reason else "") + f"best K = {highest} (top of the sweep) for {', '.join(at_top)}"
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"rounds": "accelerated; communication cost similar to non-accelerated methods"},
        baselines=baselines,
        elsewhere={
            "DeEPCA/accelerated rounds, ring, gap ratio 0.964, K = 6 [prototype]": 2.3,
            "rounds [reconstruction: O(K / sqrt(Delta)) vs DeEPCA's O(K / Delta)]": "exponent 1/2 vs 1",
        },
        reason=reason,
        figures={"rounds-vs-gap": fig},
    )


@claim(
    "noisypower/matches-reference-v1",
    statement="ANPM (auto momentum, residual stopping at 1e-10, no reference used) and NPM return a top-k subspace "
    "within sin theta 1e-8 of scipy.linalg.eigh (dense) and scipy.sparse.linalg.eigsh (sparse), eigenvalues "
    "within 1e-9 relative",
    paper="correctness check of our implementation, not a claim of the paper (the subspace ANPM converges to)",
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
        paper={},
        baselines={"scipy vs exact ground truth (sin theta)": worst_peer},
        reason="" if holds else f"sin theta {worst_sin:.2g}, eigenvalue error {worst_val:.2g}",
    )


CLAIMS = [accelerated_rate, noise_tolerance, decentralized_acceleration, matches_reference]
