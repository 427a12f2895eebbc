"""The paper's headline claims, executable on synthetic matrices with exactly known spectra (contract v3).

Theorems of the paper are checked in their measurable form (reconstructions, see the README):

- ``accelerated-rate-v3``: iterations to ``sin theta <= 1e-6`` over a gap sweep scale like ``1/sqrt(Delta)``
  for ANPM (``1/Delta`` for NPM); no momentum on a grid around ``lambda_{k+1}^2/4`` does better by more than
  10 %, and the iterations are the Chebyshev analysis's exact count (within 10 %).
- ``noise-tolerance-v3``: under noise at 0.9 x ``eps (lambda_k - lambda_{k+1})`` (the paper's order) from the
  worst of four adversaries, ANPM's iteration count still scales like ``1/sqrt(Delta)``.
- ``decentralized-acceleration-v2``: communication rounds grow like ``(1/Delta)^{1/2}`` for the accelerated
  method and faster for DeEPCA, on ring, grid and Erdos-Renyi graphs, each at its best gossip rounds per
  iteration.
- ``matches-reference-v1`` (a correctness check of the implementation, not a claim of the paper): the subspace
  agrees with ``scipy.linalg.eigh`` / ``scipy.sparse.linalg.eigsh``.

Every claim runs three arms (``Arm``) on the same problems; each arm draws its random starts (and random
noise) from its own stream, so a negative control is an A/A run, never the claim arm reused. ``MECHANISMS``
probes the momentum, the subspace tracking and the decentralized momentum; ``MEASURES`` validates the rate
exponent and ``sin theta`` both ways."""

from __future__ import annotations

import dataclasses
import functools
import logging

import numpy as np
import scipy.linalg
import scipy.stats
from scipy.sparse.linalg import eigsh

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
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
from icml26.noisypower.theory import exact_chebyshev_iterations, textbook_chebyshev_iterations


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


#: Arms draw their own random starts (and noise) from their own stream: an A/A control never reuses the
#: claim arm's start bit-for-bit, so its statistics scatter instead of tying exactly.
_ARM_STREAM = {Arm.CLAIM: 0, Arm.NEGATIVE: 1, Arm.POSITIVE: 2}


def _arm_rng(seed: int, arm: Arm, *salt: int) -> np.random.Generator:
    """The random stream of one arm of one seed (starts, random noise), independent of the problem stream."""
    return np.random.default_rng([seed, _ARM_STREAM[arm], *salt])


@functools.lru_cache(maxsize=64)
def _momentum_speedup(scale: Scale, seed: int) -> dict[str, float]:
    """NPM's over ANPM's iterations to 1e-6 at lambda_{k+1}/lambda_k = 0.97 (exact products), and the same
    speedup under the push adversary at 0.9 x eps (lambda_k - lambda_{k+1})."""
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng([seed, 97])
    P = dense_problem(cfg.d, cfg.k, 0.97, seed=rng)
    X0 = rng.standard_normal((cfg.d, cfg.k))
    lam_k, lam_next = float(P.eigvals[cfg.k - 1]), float(P.eigvals[cfg.k])
    push = AdversarialNoise(0.9 * noise_bound(lam_k, lam_next, cfg.eps), P.top[:, cfg.k - 1], P.top[:, cfg.k])
    out = {}
    for label, noise in (("exact", None), ("push", push)):
        common = dict(tol=cfg.eps, reference=P.U, X0=X0, max_iter=50_000, noise=noise, seed=seed)
        n_anpm = accelerated_noisy_power_method(P.A, cfg.k, beta=lam_next**2 / 4, **common).iterations_to(cfg.eps)
        n_npm = noisy_power_method(P.A, cfg.k, **common).iterations_to(cfg.eps)
        out[label] = (n_npm or np.inf) / (n_anpm or np.inf)
    return {"momentum": out["exact"], "NPM/ANPM iterations under the push at 0.9 x bound": out["push"]}


@mechanism(
    "momentum",
    component="ANPM's heavy-ball momentum beta X_{t-1} R_t^{-1}, beta = lambda_{k+1}^2 / 4",
    measures="NPM's iterations / ANPM's to sin theta <= 1e-6 at lambda_{k+1}/lambda_k = 0.97 (sqrt(1/Delta) ~ 5.8 "
    "by theory); also reported under the push adversary at 0.9 x eps (lambda_k - lambda_{k+1})",
    above=2.0,
)
@_expected_stalls
def momentum(scale: Scale, seed: int) -> dict[str, float]:
    return _momentum_speedup(scale, seed)


#: FastMix rounds per iteration the decentralized probes sweep (each method at its best; momentum needs more
#: rounds than DeEPCA on larger rings, see the README).
_PROBE_ROUNDS = (2, 3, 4, 6, 8, 12, 16, 24)


@functools.lru_cache(maxsize=64)
def _decentralized_probe(scale: Scale, seed: int) -> dict[str, float]:
    """On a ring at the smallest gap of the scale's sweep: the naive gossip power method's lowest worst-node
    sin theta over DeEPCA's (tracking), both at K = 8; and DeEPCA's rounds to eps over the accelerated
    method's, each at its best K in ``_PROBE_ROUNDS``."""
    cfg = DECENTRALIZED[scale.value]
    rng = np.random.default_rng([seed, 98])
    ratio = cfg.gap_ratios[-1]  # the smallest gap of the sweep, where momentum has most to gain
    P = dense_problem(cfg.d, cfg.k, ratio, seed=rng)
    A_local = local_covariances(P.A, cfg.n_nodes, heterogeneity=cfg.heterogeneity, seed=rng)
    X0 = rng.standard_normal((cfg.d, cfg.k))
    W = metropolis_weights(make_graph("ring", cfg.n_nodes))
    common = dict(W=W, K=8, tol=cfg.eps, X0=X0, reference=P.U, strict=False, max_iter=cfg.max_iter)
    floor = {
        m: min(decentralized_pca(A_local, cfg.k, method=m, **common).history["sin_theta"]) for m in ("gossip", "deepca")
    }
    swept = dataclasses.replace(cfg, rounds=_PROBE_ROUNDS)
    rounds = {m: _best_rounds(A_local, cfg.k, W, m, swept, X0, P.U)[0] or np.inf for m in ("deepca", "accelerated")}
    return {
        "tracking": float(np.log10(floor["gossip"] / max(floor["deepca"], 1e-300))),
        "decentralized-momentum": rounds["deepca"] / rounds["accelerated"],
        "naive gossip's worst-node sin theta floor": floor["gossip"],
    }


@mechanism(
    "tracking",
    component="subspace tracking S_i <- FastMix(S_i + A_i X_i^t - A_i X_i^{t-1}) (DeEPCA's, kept by the "
    "accelerated method)",
    measures="log10(naive gossip's lowest worst-node sin theta / DeEPCA's), ring, K = 8, smallest gap of the sweep",
    above=1.0,
)
@_expected_stalls
def tracking(scale: Scale, seed: int) -> dict[str, float]:
    out = _decentralized_probe(scale, seed)
    return {
        "tracking": out["tracking"],
        "naive gossip's worst-node sin theta floor": out["naive gossip's worst-node sin theta floor"],
    }


@mechanism(
    "decentralized-momentum",
    component="the ANPM momentum applied locally to the tracked product (the paper's accelerated decentralized "
    "algorithm, our reconstruction)",
    measures="DeEPCA's rounds to worst-node sin theta <= 1e-6 / the accelerated method's, ring, smallest gap of "
    "the sweep, each at its best K in {2, 3, 4, 6, 8, 12, 16, 24}",
    above=1.5,
)
@_expected_stalls
def decentralized_momentum(scale: Scale, seed: int) -> float:
    return _decentralized_probe(scale, seed)["decentralized-momentum"]


@claim(
    "noisypower/accelerated-rate-v3",
    statement="ANPM (beta* = lambda_{k+1}^2/4) needs iterations to sin theta <= 1e-6 growing like (1/Delta)^b with "
    "b in (0.3, 0.7) over lambda_{k+1}/lambda_k in {0.5, 0.8, 0.9, 0.97, 0.99} (NPM: b ~ 1), and the rate cannot "
    "be improved: at every ratio >= 0.9 no momentum beta = lhat^2/4, lhat = lambda_{k+1} + s (lambda_k - "
    "lambda_{k+1}), s in {+-0.1, +-0.25, +-0.5}, reaches 1e-6 in fewer than 1/1.1 of beta*'s iterations, and "
    "beta*'s iterations are within 10 % of the Chebyshev analysis's exact count (the tangent of p_t(A) X_0 with "
    "both diagonals, not the bound of v2)",
    paper="main theorem (accelerated rate O(sqrt(lambda_k/(lambda_k - lambda_{k+1})) log 1/eps)); worst-case "
    "optimality of the rate; abstract",
    control="A/A: momentum beta = 0 in place of beta*, from the arm's own random start (same problems, grid and "
    "prediction): 'ANPM' becomes NPM, its slope is ~1, grid momenta beat it many times over and it misses the "
    "Chebyshev count, so the claim must fail",
    positive="the theory's exact count in ANPM's place: the first t at which the exact Chebyshev tangent of "
    "p_t(A) X_0 reaches 1e-6, from the arm's own start (grid and prediction from that start too): the accelerated "
    "rate planted exactly, through the same slope fit, grid ratio and thresholds",
    mechanisms=("momentum",),
    judge=(
        Interval("ANPM slope", above=0.3, below=0.7),
        Interval("worst beta*/best-grid iterations", below=1.1),
        Interval("worst |iterations / Chebyshev - 1|", below=0.1),
    ),
)
def accelerated_rate(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)  # the problems: shared by the three arms
    starts = _arm_rng(seed, arm)  # the starts: each arm its own
    k, eps = cfg.k, cfg.eps
    it_npm, it_anpm, grid_ratio, cheb_ratio, textbook = [], [], {}, {}, {}
    for g in cfg.gap_ratios:
        P = dense_problem(cfg.d, k, g, seed=rng)
        lam_k, lam_next = float(P.eigvals[k - 1]), float(P.eigvals[k])
        X0 = starts.standard_normal((cfg.d, k))
        common = dict(tol=eps, reference=P.U, X0=X0, max_iter=50_000)
        vals, vecs = np.linalg.eigh(P.A)  # (d,), (d, d) ascending; exact up to rounding
        vals, vecs = vals[::-1], vecs[:, ::-1]
        # Chebyshev's exact count: X_t spans p_t(A) X0, p_t = (lambda_{k+1}/2)^t U_t(x / lambda_{k+1})
        predicted = exact_chebyshev_iterations(vals, vecs, X0, k, eps)
        if arm is Arm.POSITIVE:  # the accelerated rate planted: the theory's exact count in ANPM's place
            n_star = predicted
        else:
            beta_star = 0.0 if arm is Arm.NEGATIVE else lam_next**2 / 4  # the one line the control changes
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
        cheb_ratio[g] = n_star / predicted
        s0 = sin_theta(np.linalg.qr(X0)[0], P.U)
        textbook[g] = n_star / textbook_chebyshev_iterations(s0 / np.sqrt(1 - s0**2), lam_k, lam_next, eps)
    inv_gap = 1.0 / (1.0 - np.asarray(cfg.gap_ratios))
    s_npm, s_anpm = _slope(inv_gap, it_npm), _slope(inv_gap, it_anpm)
    worst_grid, worst_cheb = max(grid_ratio.values()), max(abs(r - 1.0) for r in cheb_ratio.values())
    holds = 0.3 < s_anpm < 0.7 and worst_grid < 1.1 and worst_cheb < 0.1
    fig, ax = _figure()
    ax.loglog(inv_gap, it_npm, "o-", label=f"NPM (slope {s_npm:.2f})")
    label = {Arm.CLAIM: "ANPM, beta = lambda_(k+1)^2/4", Arm.NEGATIVE: "ANPM, beta = 0", Arm.POSITIVE: "theory"}[arm]
    ax.loglog(inv_gap, it_anpm, "s-", label=f"{label} (slope {s_anpm:.2f})")
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
            **{f"iterations / Chebyshev count at {g}": r for g, r in cheb_ratio.items()},
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


def _log_slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x``; NaN when some ``y`` is not positive and finite."""
    y = np.asarray(y, dtype=float)
    return _slope(x, y) if np.all(np.isfinite(y)) and np.all(y > 0) else float("nan")


def _noisy_iterations(solve, noise, n0: int, cfg, seed: int) -> tuple[int, bool]:
    """Iterations to eps under ``noise``; a run that has not reached it within ``max_slowdown`` x the noiseless
    count is censored there (counted at that budget, finite, and reported)."""
    budget = max(1, int(cfg.max_slowdown * n0))
    n = solve(noise=noise, tol=cfg.eps, max_iter=budget, seed=seed).iterations_to(cfg.eps)
    return (budget, True) if n is None else (n, False)


@claim(
    "noisypower/noise-tolerance-v3",
    statement="Under per-iteration noise of norm 0.9 x eps (lambda_k - lambda_{k+1}) - the paper's milder order, "
    "3 to 18x the earlier eps (lambda_k - lambda_{k+1}) sqrt(Delta) at these gaps - from the worst of four "
    "adversaries (push along u_{k+1}, random, push with alternating sign, push in the first half only), ANPM's "
    "iterations to sin theta <= 1e-6 over lambda_{k+1}/lambda_k in {0.9, 0.97, 0.99, 0.997} grow like "
    "(1/Delta)^b with b in (0.3, 0.7), and stay below 1.5x its noiseless iterations at every gap: the accelerated "
    "rate survives noise of the non-accelerated method's order",
    paper="main theorem (noise conditions, 'much milder' than the earlier analysis); abstract",
    control="A/A: momentum beta = 0 (NPM in ANPM's place) from the arm's own start and noise draws, same noise "
    "levels and adversaries: its iteration slope under noise is ~1, so the claim must fail",
    positive="the noise held to 0.9 x the earlier analysis's eps (lambda_k - lambda_{k+1}) sqrt(Delta), under which "
    "acceleration was already guaranteed (Xu 2023): the accelerated count under noise planted by a known "
    "theorem, through the same runs, adversaries, slope fit and thresholds",
    mechanisms=("momentum",),
    judge=(
        Interval("ANPM iteration slope under noise, worst adversary", above=0.3, below=0.7),
        Interval("worst ANPM noisy / noiseless iterations", below=1.5),
    ),
)
@_expected_stalls
def noise_tolerance(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)  # the problems: shared by the three arms
    starts = _arm_rng(seed, arm)  # starts and random-noise draws: each arm its own
    noise_seed = int(starts.integers(2**31))
    k, d = cfg.k, cfg.tolerance_d
    gaps = np.asarray(cfg.tolerance_gaps)
    delta = 1.0 - gaps  # Delta = 1 - lambda_{k+1} / lambda_k
    n0 = {"ANPM": [], "NPM": []}
    noisy = {a: [] for a in ADVERSARIES}  # ANPM's iterations under each adversary, per gap
    npm_push, censored, level_over_xu = [], [], []
    for g in gaps:
        P = dense_problem(d, k, float(g), seed=rng)
        lam_k, lam_next = float(P.eigvals[k - 1]), float(P.eigvals[k])
        bound = xu_noise_bound if arm is Arm.POSITIVE else noise_bound  # the one line the positive changes
        level = cfg.noise_fraction * bound(lam_k, lam_next, cfg.eps)
        level_over_xu.append(level / xu_noise_bound(lam_k, lam_next, cfg.eps))
        X0 = starts.standard_normal((d, k))
        beta = 0.0 if arm is Arm.NEGATIVE else lam_next**2 / 4  # the one line the negative control changes
        anpm = functools.partial(accelerated_noisy_power_method, P.A, k, beta=beta, X0=X0, reference=P.U)
        npm = functools.partial(noisy_power_method, P.A, k, X0=X0, reference=P.U)
        for method, solve in (("ANPM", anpm), ("NPM", npm)):
            n0[method].append(solve(tol=cfg.eps, max_iter=200_000, seed=noise_seed).iterations_to(cfg.eps))
        for a in ADVERSARIES:
            noise = _adversary(a, level, P, k, max(1, n0["ANPM"][-1] // 2))
            n, cut = _noisy_iterations(anpm, noise, n0["ANPM"][-1], cfg, noise_seed)
            noisy[a].append(n)
            censored += [f"{a} at {g:g}"] if cut else []
        push = _adversary("push", level, P, k, 0)
        npm_push.append(_noisy_iterations(npm, push, n0["NPM"][-1], cfg, noise_seed)[0])
    worst = np.max([noisy[a] for a in ADVERSARIES], axis=0)  # (n_gaps,) the worst adversary at each gap
    worst_name = [ADVERSARIES[i] for i in np.argmax([noisy[a] for a in ADVERSARIES], axis=0)]
    slowdown = worst / np.asarray(n0["ANPM"], dtype=float)
    s_noisy = _log_slope(1.0 / delta, worst)
    s_clean = {m: _log_slope(1.0 / delta, n0[m]) for m in n0}
    holds = bool(0.3 < s_noisy < 0.7 and slowdown.max() < 1.5)
    fig, ax = _figure()
    for i, a in enumerate(ADVERSARIES):
        ax.loglog(1.0 / delta, noisy[a], "o-", color=f"C{i}", label=f"ANPM, {a}")
    ax.loglog(1.0 / delta, n0["ANPM"], "k-", lw=0.8, label=f"ANPM noiseless (slope {s_clean['ANPM']:.2f})")
    ax.loglog(1.0 / delta, npm_push, "x--", color="C5", label="NPM, push")
    ax.set_xlabel("1 / Delta,  Delta = 1 - lambda_(k+1)/lambda_k")
    ax.set_ylabel("iterations to sin theta <= 1e-6")
    ax.set_title(f"noise {cfg.noise_fraction:g} x {'earlier bound' if arm is Arm.POSITIVE else 'paper bound'}")
    ax.legend(fontsize=6)
    small = f"{gaps[-1]:g}"
    measured = {
        "ANPM iteration slope under noise, worst adversary": s_noisy,
        "worst ANPM noisy / noiseless iterations": float(slowdown.max()),
        "ANPM noiseless iteration slope": s_clean["ANPM"],
        **{f"ANPM iteration slope under noise, {a}": _log_slope(1.0 / delta, noisy[a]) for a in ADVERSARIES},
        f"ANPM noisy iterations at {small}, worst adversary": float(worst[-1]),
        f"noise level / earlier bound at {small}": level_over_xu[-1],
        "gaps where the push is the worst adversary": float(sum(w == "push" for w in worst_name)),
    }
    baselines = {
        "NPM noiseless iteration slope": s_clean["NPM"],
        "NPM iteration slope under the push": _log_slope(1.0 / delta, npm_push),
        f"NPM iterations under the push at {small}": float(npm_push[-1]),
    }
    reason = (
        ""
        if holds
        else f"iteration slope under noise {s_noisy:.2f} (need 0.3..0.7), worst slowdown {slowdown.max():.2f} "
        "(need < 1.5)"
    )
    if censored:
        reason = (
            reason + "; " if reason else ""
        ) + f"eps not reached within {cfg.max_slowdown:g}x: {', '.join(censored)}"
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"noise conditions": "much milder than the earlier analysis; accelerated rate preserved"},
        elsewhere={
            "tolerated noise [reconstruction: eps (lambda_k - lambda_{k+1}), paper text not read]": "order Delta^1",
            "earlier analysis's tolerated noise [Xu 2023, as our notes summarise it]": "order Delta^1.5",
        },
        baselines=baselines,
        reason=reason,
        figures={"iterations-under-noise-vs-gap": fig},
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


#: DeEPCA's best rounds and K per (config, seed, gap ratio, graph): the claim and its two controls run the same
#: baseline on the same seeds (problems, splits, graphs and the baseline's start are drawn identically), so the
#: controls reuse it.
#: Keyed on the frozen config itself, not the scale's name, so an edited config never reuses stale results.
_DEEPCA_ROUNDS: dict[tuple[object, int, float, str], tuple[int | None, int | None]] = {}
#: Exponent the positive control of decentralized-acceleration plants: 1.5 x the claim's separation bar (0.25).
PLANTED_SPEEDUP = 0.375


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
    control="A/A: momentum beta = 0 in the accelerated method, from the arm's own random start: it becomes DeEPCA "
    "(same tracking, same K sweep) on an independent start, its exponent scatters around DeEPCA's and both "
    "intervals must fail",
    positive="an A/A run as in the negative control (momentum 0 from the arm's own start, same graphs, gossip and K "
    "sweep) with the claimed acceleration planted at 1.5 x the separation bar: its rounds multiplied by "
    "(Delta / Delta_0)^0.375, so its exponent is DeEPCA's A/A exponent - 0.375 (about 0.65 against the "
    "accelerated bar 0.5 +- 0.2); same exponent fit and thresholds",
    mechanisms=("tracking", "decentralized-momentum"),
    judge=(
        Interval("worst |a_accelerated - 0.5| over graphs", below=0.2),
        Interval("min over graphs a_DeEPCA - a_accelerated", above=0.25),
    ),
)
@_expected_stalls
def decentralized_acceleration(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = DECENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    own = _arm_rng(seed, arm)  # the controls' own starts (the claim arm draws from rng, as in v1-v2)
    graphs = {g: metropolis_weights(_connected_graph(g, cfg.n_nodes, cfg.er_p, rng)) for g in cfg.graphs}
    aa = arm is not Arm.CLAIM  # both controls run the A/A pair: momentum 0 from the arm's own start
    rounds = {(m, g): [] for m in ("accelerated", "DeEPCA") for g in graphs}
    best_K = {(m, g): [] for m in ("accelerated", "DeEPCA") for g in graphs}
    for ratio in cfg.gap_ratios:
        P = dense_problem(cfg.d, cfg.k, ratio, seed=rng)
        A_local = local_covariances(P.A, cfg.n_nodes, heterogeneity=cfg.heterogeneity, seed=rng)
        X0 = rng.standard_normal((cfg.d, cfg.k))
        X0_own = own.standard_normal((cfg.d, cfg.k)) if aa else X0
        beta = 0.0 if aa else P.eigvals[cfg.k] ** 2 / 4  # the momentum the paper credits
        for g, W in graphs.items():
            for m, method, b, start in (("accelerated", "accelerated", beta, X0_own), ("DeEPCA", "deepca", None, X0)):
                key = (cfg, seed, float(ratio), g)
                if m == "DeEPCA" and key in _DEEPCA_ROUNDS:  # the baseline is the same in every arm
                    r, K = _DEEPCA_ROUNDS[key]
                else:
                    r, K, _ = _best_rounds(A_local, cfg.k, W, method, cfg, start, P.U, beta=b)
                    if m == "DeEPCA":
                        _DEEPCA_ROUNDS[key] = (r, K)
                rounds[m, g].append(r if r is not None else np.nan)
                best_K[m, g].append(K if K is not None else np.nan)
    inv_gap = 1.0 / (1.0 - np.asarray(cfg.gap_ratios))
    if arm is Arm.POSITIVE:  # plant the acceleration at 1.5 x the separation bar on the A/A run
        for g in graphs:
            rounds["accelerated", g] = list(
                np.asarray(rounds["accelerated", g]) * (inv_gap / inv_gap[0]) ** -PLANTED_SPEEDUP
            )
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
    positive="the exact answer in the solvers' place: the generator's eigenvectors, rotated by a random k x k "
    "orthogonal matrix within the subspace, with the generator's eigenvalues (same comparison with scipy)",
)
def matches_reference(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = CENTRALIZED[scale.value]
    rng = np.random.default_rng(seed)
    k = cfg.k
    tol = 1e-4 if arm is Arm.NEGATIVE else 1e-10  # residual stopping of ANPM and NPM
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
            if arm is Arm.POSITIVE:  # the oracle: the exact subspace in another basis, the exact eigenvalues
                basis = P.U @ scipy.stats.ortho_group.rvs(k, random_state=rng)
                eigenvalues = P.eigvals[:k]
            else:
                res = solver(P.A, k, tol=tol, seed=rng, max_iter=50_000)
                basis, eigenvalues = res.basis, res.eigenvalues
            worst_sin = max(worst_sin, sin_theta(basis, vecs))
            worst_val = max(worst_val, float(np.max(np.abs(eigenvalues - vals) / np.abs(vals))))
    holds = worst_sin <= 1e-8 and worst_val <= 1e-9
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"worst sin theta vs scipy": worst_sin, "worst relative eigenvalue error": worst_val},
        paper={},
        baselines={"scipy vs exact ground truth (sin theta)": worst_peer},
        reason="" if holds else f"sin theta {worst_sin:.2g}, eigenvalue error {worst_val:.2g}",
    )


# --- measures, validated both ways -------------------------------------------------------------------------


def _acceleration_exponent_check(seed: int) -> dict[str, float]:
    """The claims' rate measure, 1 - (least-squares slope of log iterations against log 1/Delta) over the smoke
    gap sweep, on: the truth (the exact Chebyshev count of ANPM at beta*, the theory's rate), ANPM with half the
    momentum's lhat (a partial acceleration), and the null (NPM: no acceleration, exponent gain ~0)."""
    cfg = CENTRALIZED["smoke"]
    rng = np.random.default_rng([seed, 99])
    counts = {"truth": [], "half momentum": [], "null": []}
    for g in cfg.gap_ratios:
        P = dense_problem(cfg.d, cfg.k, g, seed=rng)
        X0 = rng.standard_normal((cfg.d, cfg.k))
        vals, vecs = np.linalg.eigh(P.A)
        counts["truth"].append(exact_chebyshev_iterations(vals[::-1], vecs[:, ::-1], X0, cfg.k, cfg.eps))
        common = dict(tol=cfg.eps, reference=P.U, X0=X0, max_iter=50_000)
        half = (0.5 * P.eigvals[cfg.k]) ** 2 / 4
        counts["half momentum"].append(accelerated_noisy_power_method(P.A, cfg.k, beta=half, **common).n_iter)
        counts["null"].append(noisy_power_method(P.A, cfg.k, **common).n_iter)
    inv_gap = 1.0 / (1.0 - np.asarray(cfg.gap_ratios))
    return {label: 1.0 - _slope(inv_gap, n) for label, n in counts.items()}


def _sin_theta_check(seed: int) -> dict[str, float]:
    """sin theta to the true top-k subspace (lower is better) of: the truth in another basis, the truth
    perturbed by 1e-4, the truth with u_k swapped for u_{k+1}, and the null (a random k-dimensional subspace)."""
    rng = np.random.default_rng([seed, 100])
    P = dense_problem(100, 4, 0.9, seed=rng)
    U, k = P.U, 4
    swapped = np.column_stack([U[:, : k - 1], P.top[:, k]])
    return {
        "truth": sin_theta(U @ scipy.stats.ortho_group.rvs(k, random_state=rng), U),
        "perturbed 1e-4": sin_theta(np.linalg.qr(U + 1e-4 * rng.standard_normal(U.shape))[0], U),
        "u_k swapped for u_(k+1)": sin_theta(swapped, U),
        "null": sin_theta(np.linalg.qr(rng.standard_normal(U.shape))[0], U),
    }


MEASURES = [
    MeasureCheck(
        "acceleration exponent: 1 - slope of log iterations vs log 1/Delta",
        _acceleration_exponent_check,
        null_band=(-0.15, 0.15),
        margin=0.1,
    ),
    MeasureCheck("sin theta to the true subspace", _sin_theta_check, null_band=(0.9, 1.0), higher_is_better=False),
]
MECHANISMS = [momentum, tracking, decentralized_momentum]
CLAIMS = [accelerated_rate, noise_tolerance, decentralized_acceleration, matches_reference]
