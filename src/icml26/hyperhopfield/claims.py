"""The paper's headline claims, executable on synthetic data with known ground truth (see README "Claims").

Contract v3: every claim runs three arms (``Arm.CLAIM``, the negative control ``Arm.NEGATIVE``, the positive
control ``Arm.POSITIVE`` with the claimed effect planted), names the credited mechanisms it relies on
(``MECHANISMS``, each with a liveness probe) and its measures are validated both ways (``MEASURES``).

- ``mhn-is-mmse-v1``: the MHN update (with the bias term) is the posterior mean to 1e-10 (a precondition,
  checked on every run) and its one-step MSE is minimised at ``beta = 1 / sigma^2`` (which follows from the
  identity and Bayes optimality: labelled by construction; the no-bias control is the informative part).
- ``multiscale-widths-hyperbolic-v2``: the population code of exponential widths is more hyperbolic than that
  of constant widths, by hyperbolic MDS with a fitted curvature (the radius in curvature radii).
- ``hyperbolic-capacity-v2``: Karcher-flow hyperbolic memory vs the best of Euclidean-ball and sphere MHN at
  matched dimension, max norm and intrinsic query noise; a Euclidean ball of equal *volume* is reported beside it
  (not judged), and stores more: the win at matched max norm is the hyperbolic ball's extra volume.
- ``better-decoding-v1``: posterior-mean decoding error from exponential-width vs constant-width codes at an
  equal spike budget, each code's mean width tuned on a validation set.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.hyperhopfield.capacity import (
    estimate_capacity,
    float64_radius_limit,
    make_space,
    retrieval_success,
    sample_euclidean_ball,
    sample_hyperbolic_ball,
    sample_sphere,
)
from icml26.hyperhopfield.config import PRESETS
from icml26.hyperhopfield.data import place_cells
from icml26.hyperhopfield.geometry import distance_scaling, gromov_delta, hyperbolic_mds_radius
from icml26.hyperhopfield.lorentz import MAX_RADIUS, pairwise_dist
from icml26.hyperhopfield.memory import HyperbolicMemory, gaussian_posterior_mean, mhn_update, poisson_posterior_mean


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 4))


def mmse_problem(cfg, rng: np.random.Generator, *, unit_norms: bool = False):
    """Patterns with unequal norms (uniform in [0.5, 1.5]; all 1 with ``unit_norms``), queries
    ``x_mu + N(0, sigma^2 I)``."""
    X = rng.standard_normal((cfg.mmse_patterns, cfg.mmse_d))
    norms = rng.uniform(0.5, 1.5, cfg.mmse_patterns)
    X *= ((1.0 if unit_norms else norms) / np.linalg.norm(X, axis=1))[:, None]  # (P, d)
    target = rng.integers(0, cfg.mmse_patterns, cfg.mmse_queries)
    xi = X[target] + cfg.mmse_sigma * rng.standard_normal((cfg.mmse_queries, cfg.mmse_d))  # (Q, d)
    return X, target, xi


def argmin_refined(grid: np.ndarray, values: np.ndarray) -> float:
    """Grid argmin refined by the parabola through it and its two neighbours."""
    i = int(np.argmin(values))
    if 0 < i < len(grid) - 1:
        y0, y1, y2 = values[i - 1 : i + 2]
        den = y0 - 2 * y1 + y2
        if den > 0:
            return float(grid[i] + 0.5 * (y0 - y2) / den * (grid[1] - grid[0]))
    return float(grid[i])


@claim(
    "hyperhopfield/mhn-is-mmse-v1",
    statement="For patterns of unequal norm (0.5-1.5) observed in Gaussian noise sigma = 0.6, the modern Hopfield "
    "update with the bias -beta|x|^2/2 equals the posterior mean at beta = 1/sigma^2 (to 1e-10, checked on every "
    "run), and its one-step mean squared error over beta is minimised at beta* with |log2(beta* sigma^2)| < 0.2",
    paper="MHN update = MMSE estimator (abstract; theorem)",
    control="the textbook MHN update without the bias term (softmax(beta X xi)): no longer the posterior mean for "
    "unequal norms, so its error minimum moves away from beta = 1/sigma^2 and the claim must fail",
    positive="the theorem's exact case: unit-norm patterns, where the textbook update (no bias) is already the "
    "posterior mean at beta = 1/sigma^2, so its error minimum must sit there",
    mechanisms=("norm-bias",),
    judge=Interval("log2(beta* sigma^2)", above=-0.2, below=0.2),
    by_construction="the posterior mean minimises the MSE over all estimators, so once the identity MHN(beta = "
    "1/sigma^2) = posterior mean holds (asserted on every run) the minimum over beta must sit at 1/sigma^2 up to "
    "Monte-Carlo noise; only the control (no bias term) is informative",
)
def mhn_is_mmse(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    X, target, xi = mmse_problem(cfg, rng, unit_norms=arm is Arm.POSITIVE)  # positive: the bias is not needed
    sigma = cfg.mmse_sigma
    bias = arm is Arm.CLAIM  # the negative control drops the bias; the positive needs none (equal norms)
    ident = float(np.max(np.abs(mhn_update(X, xi[:500], 1 / sigma**2) - gaussian_posterior_mean(X, xi[:500], sigma))))
    if not ident < 1e-10:
        raise AssertionError(f"MHN(beta = 1/sigma^2) differs from the posterior mean by {ident:.3g}")
    lo, hi, step = cfg.mmse_log2_grid
    grid = np.arange(lo, hi + step / 2, step)
    mse = np.array([np.mean(np.sum((mhn_update(X, xi, 2**g / sigma**2, bias=bias) - X[target]) ** 2, 1)) for g in grid])
    g_star = argmin_refined(grid, mse)
    nn = X[np.argmin(np.sum((xi[:, None] - X[None]) ** 2, -1), axis=1)]  # beta -> inf: MAP / nearest neighbour
    mse_map = float(np.mean(np.sum((nn - X[target]) ** 2, 1)))
    holds = -0.2 < g_star < 0.2
    fig, ax = _figure()
    ax.plot(
        2.0**grid,
        mse,
        "o-",
        label={Arm.CLAIM: "MHN with bias", Arm.NEGATIVE: "MHN without bias (control)"}.get(arm, "unit norms"),
    )
    ax.axvline(1.0, color="k", ls=":", label="beta = 1/sigma^2")
    ax.axhline(mse_map, color="r", ls="--", label="beta -> inf (nearest pattern)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("beta sigma^2")
    ax.set_ylabel("one-step MSE")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "log2(beta* sigma^2)": g_star,
            "max |MHN - posterior mean| at beta = 1/sigma^2": ident,
            "MSE at beta* ": float(mse.min()),
            "MSE at beta = 1/sigma^2": float(np.interp(0.0, grid, mse)),
        },
        baselines={"MSE of beta -> inf (MAP)": mse_map},
        paper={"MHN update": "computes the MMSE estimator"},
        elsewhere={"log2(beta* sigma^2), unit norms [prototype]": 0.0},
        reason="" if holds else f"error minimum at beta sigma^2 = {2**g_star:.3g}",
        figures={"mse-vs-beta": fig},
    )


def population_distances(kind: str, cfg, seed: int, stream: int = 0, draw: int = 0) -> np.ndarray:
    """Population-vector distances ``|f(s_i) - f(s_j)|`` (n, n) of a width-``kind`` code at ``geo_points`` random
    positions ``s`` (position set ``draw``, the same for every code and arm); ``stream`` picks the code's own
    draw of centres and widths (0 for the claim's codes, 1 for the A/A control's second constant code)."""
    cells = place_cells(cfg.geo_cells, kind, mean_width=cfg.geo_mean_width, rng=np.random.default_rng([seed, stream]))
    s = np.random.default_rng([seed, 7, draw]).random(cfg.geo_points)  # (n,)
    F = cells.rates(s)  # (n, N)
    return np.linalg.norm(F[:, None] - F[None], axis=-1)


def hyperbolic_disc_distances(n: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """An exactly hyperbolic geometry: geodesic distances (n, n) of ``n`` points uniform in a disc of H^2."""
    H = sample_hyperbolic_ball(n, 2, min(radius, MAX_RADIUS), rng)
    return pairwise_dist(H, H)


def fitted_radius(distances) -> dict[str, float]:
    """:func:`hyperbolic_mds_radius` averaged over the position draws (an iterable of (n, n) matrices)."""
    fits = [hyperbolic_mds_radius(D) for D in distances]
    return {k: float(np.mean([f[k] for f in fits])) for k in fits[0]}


#: Radius (curvature radii) the positive control of multiscale-widths-hyperbolic plants beyond the constant
#: code's fitted radius: 1.5 x the claim's bar of 0.5.
PLANTED_RADIUS_GAIN = 0.75


@claim(
    "hyperhopfield/multiscale-widths-hyperbolic-v2",
    statement="On a 1-D track, the population code of exponentially distributed place-field widths is more "
    "hyperbolic than that of constant widths of the same mean: the radius in curvature radii fitted by hyperbolic "
    "MDS (the flattest curvature of H^2 that embeds the population distances as well as any; mean over 3 sets of "
    "positions) is larger by more than 0.5 (paired: same positions; judged by the 95 % interval over seeds)",
    paper="a plausible tuning-curve construction (exponential widths) statistically induces hyperbolic geometry "
    "(abstract)",
    control="A/A: the exponential code replaced by a second constant-width code with its own draw of centres: both "
    "codes are single-scale, the radius difference scatters around 0 and the claim must fail",
    positive="the exponential code replaced by an exactly hyperbolic geometry planted at 1.5 x the bar: as many "
    "points, uniform in a disc of H^2 0.75 curvature radii wider than the constant code's fitted radius (its own "
    "random points), measured by the same hyperbolic MDS and judged by the same interval",
    mechanisms=("multiscale-widths",),
    judge=Interval("R_hyp(exponential) - R_hyp(constant)", above=0.5),
)
def multiscale_widths_hyperbolic(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    draws = range(cfg.geo_draws)
    fit_const = fitted_radius(population_distances("constant", cfg, seed, draw=k) for k in draws)
    if arm is Arm.NEGATIVE:  # A/A: another single-scale code, its own centres
        ours = [population_distances("constant", cfg, seed, stream=1, draw=k) for k in draws]
    elif arm is Arm.POSITIVE:  # planted: exactly hyperbolic, 1.5 x the bar (0.5) beyond the constant code
        radius = fit_const["R_hyp"] + PLANTED_RADIUS_GAIN
        ours = [hyperbolic_disc_distances(cfg.geo_points, radius, np.random.default_rng([seed, 8, k])) for k in draws]
    else:
        ours = [population_distances("exponential", cfg, seed, draw=k) for k in draws]
    fit_ours = fitted_radius(ours)
    fit_logu = fitted_radius(population_distances("log-uniform", cfg, seed, draw=k) for k in draws)
    diff = fit_ours["R_hyp"] - fit_const["R_hyp"]
    holds = diff > 0.5
    delta_rng = np.random.default_rng([seed, 11])
    fig, ax = _figure()
    label = {Arm.CLAIM: "exponential", Arm.NEGATIVE: "constant, own centres"}.get(arm, "hyperbolic disc (planted)")
    for name, fit in ((label, fit_ours), ("constant", fit_const), ("log-uniform", fit_logu)):
        ax.bar(name, fit["R_hyp"])
    ax.axhspan(0, 1.0, color="gray", alpha=0.2, label="flat (null band of the measure check)")
    ax.set_ylabel("fitted radius R_hyp [curvature radii]")
    ax.set_title("hyperbolic MDS with a fitted curvature")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "R_hyp(exponential) - R_hyp(constant)": diff,
            "R_hyp exponential": fit_ours["R_hyp"],
            "R_hyp log-uniform": fit_logu["R_hyp"],
            "stress H^2 (fitted) exponential": fit_ours["stress hyperbolic (best)"],
            "stress flattest exponential": fit_ours["stress flattest"],
            "delta_rel exponential": gromov_delta(ours[0], 20000, delta_rng),
        },
        baselines={
            "R_hyp constant": fit_const["R_hyp"],
            "stress H^2 (fitted) constant": fit_const["stress hyperbolic (best)"],
            "stress flattest constant": fit_const["stress flattest"],
            "delta_rel constant": gromov_delta(population_distances("constant", cfg, seed), 20000, delta_rng),
        },
        paper={"geometry": "exponential widths statistically induce hyperbolic geometry"},
        reason="" if holds else f"fitted-radius difference {diff:.2f} curvature radii (needs > 0.5)",
        figures={"fitted-hyperbolic-radius": fig},
    )


@claim(
    "hyperhopfield/hyperbolic-capacity-v2",
    statement="At matched dimension d, max norm R and intrinsic query noise 0.5, the Karcher-flow hyperbolic memory "
    "(patterns uniform in the hyperbolic ball of radius R) stores more patterns at >= 99 % retrieval than the best "
    "beta-tuned Euclidean MHN (Euclidean ball or sphere of radius R) for every d (log2 ratio > 0) at the largest R "
    "whose baseline capacity is below the grid max (uncensored), "
    "and its capacity grows with R (every d) and with d (every R); capacities on a doubling grid, censored at its max",
    paper="hyperbolic associative memory with significantly larger capacity than leading models (abstract)",
    control="A/A, curvature switched off: the 'hyperbolic' memory is a Euclidean-ball MHN of radius R on its own "
    "pattern and query draws (a second copy of the baseline), so it cannot exceed the best baseline and the claim "
    "must fail",
    positive="the extra volume the claim credits, planted without curvature: in the hyperbolic memory's place a "
    "Euclidean MHN on the ball of the hyperbolic ball's volume (radius R_vol(d, R)), same noise, grid and betas",
    mechanisms=("curvature", "karcher-flow"),
    judge=(  # capacities lie on a doubling grid: every log2 ratio is an integer
        Interval("min_d log2(P_hyp / P_MHN) at largest uncensored R", above=0.0, discrete=True),
        Interval("min_d log2 P_hyp(R_max) / P_hyp(R_min)", above=0.0, discrete=True),
        Interval("min_R log2 P_hyp(d_max) / P_hyp(d_min)", above=0.0, discrete=True),
    ),
)
def hyperbolic_capacity(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    rho = cfg.cap_noise
    betas = tuple(b / rho**2 for b in cfg.cap_beta_rho2)

    def our_space(d: int, R: float):  # the one place the arms differ
        if arm is Arm.NEGATIVE:
            return make_space("euclidean", d, R)
        if arm is Arm.POSITIVE:
            return make_space("euclidean", d, equal_volume_radius(d, R))
        return make_space("hyperbolic", d, R)

    cap: dict[tuple[str, int, float], int] = {}
    sep: dict[tuple[str, int, float], float] = {}
    cut: dict[tuple[str, int, float], bool] = {}
    censored = 0
    for d in cfg.cap_dims:
        for R in cfg.cap_radii:
            for name, space in (
                ("ours", our_space(d, R)),
                ("euclidean", make_space("euclidean", d, R)),
                ("sphere", make_space("sphere", d, R)),
            ):
                r = estimate_capacity(
                    space,
                    rho,
                    betas=betas,
                    p_max=cfg.cap_p_max,
                    n_queries=cfg.cap_queries,
                    n_draws=cfg.cap_draws,
                    rng=rng,
                )
                cap[name, d, R], sep[name, d, R] = max(r.capacity, 1), r.separation
                cut[name, d, R] = r.censored
                censored += r.censored
    for d in cfg.cap_dims:  # reported only: a Euclidean ball of the hyperbolic ball's volume (radius R_vol)
        for R in cfg.cap_radii:
            r = estimate_capacity(
                make_space("euclidean", d, equal_volume_radius(d, R)),
                rho,
                betas=betas,
                p_max=cfg.cap_p_max,
                n_queries=cfg.cap_queries,
                n_draws=cfg.cap_draws,
                rng=rng,
            )
            cap["eqvol", d, R], sep["eqvol", d, R], cut["eqvol", d, R] = max(r.capacity, 1), r.separation, r.censored
    lg = {k: np.log2(v) for k, v in cap.items()}
    base = {(d, R): max(lg["euclidean", d, R], lg["sphere", d, R]) for d in cfg.cap_dims for R in cfg.cap_radii}
    r0, r1 = cfg.cap_radii[0], cfg.cap_radii[-1]
    d0, d1 = cfg.cap_dims[0], cfg.cap_dims[-1]
    # per d, the largest R at which the baseline's capacity is below the grid max: two censored capacities
    # (both >= p_max) say nothing about their ratio; a censored hyperbolic one only understates it
    r_cmp = {}
    for d in cfg.cap_dims:
        open_r = [R for R in cfg.cap_radii if not cut["euclidean", d, R] and not cut["sphere", d, R]]
        r_cmp[d] = open_r[-1] if open_r else cfg.cap_radii[0]
    ratio = min(lg["ours", d, r_cmp[d]] - base[d, r_cmp[d]] for d in cfg.cap_dims)
    by_radius = min(lg["ours", d, r1] - lg["ours", d, r0] for d in cfg.cap_dims)
    # reported only: censoring at the grid max caps the hyperbolic growth, so this gap is biased low
    growth = min((lg["ours", d, r1] - lg["ours", d, r0]) - (base[d, r1] - base[d, r0]) for d in cfg.cap_dims)
    by_dim = min(lg["ours", d1, R] - lg["ours", d0, R] for R in cfg.cap_radii)
    eqvol = min(lg["ours", d, r_cmp[d]] - lg["eqvol", d, r_cmp[d]] for d in cfg.cap_dims)
    holds = ratio > 0 and by_radius > 0 and by_dim > 0
    fig, ax = _figure()
    for name, style in (("ours", "o-"), ("euclidean", "s--"), ("sphere", "^:")):
        for R in cfg.cap_radii:
            ours = {Arm.CLAIM: "hyperbolic", Arm.NEGATIVE: "flat (control)"}.get(arm, "equal-volume ball (planted)")
            label = ours if name == "ours" else f"{name} MHN"
            ax.semilogy(cfg.cap_dims, [cap[name, d, R] for d in cfg.cap_dims], style, label=f"{label}, R={R:g}")
    ax.axhline(cfg.cap_p_max, color="gray", lw=0.5)
    ax.set_xlabel("dimension d")
    ax.set_ylabel(f"capacity (>= 99 % retrieval, noise {rho:g}; grid max {cfg.cap_p_max})")
    ax.legend(fontsize=6)
    measured = {
        "min_d log2(P_hyp / P_MHN) at largest uncensored R": ratio,
        "min_d log2 P_hyp(R_max) / P_hyp(R_min)": by_radius,
        "min_d growth gap log2 P(R_max)/P(R_min), hyp - MHN (censored, not judged)": growth,
        "min_R log2 P_hyp(d_max) / P_hyp(d_min)": by_dim,
        "min_d log2(P_hyp / P_Euclid of equal volume) at the same R (not judged)": eqvol,
        "float64 radius limit (distance 0.1 to 1 %)": float64_radius_limit(),
        "largest radius accepted": MAX_RADIUS,
        "capacities censored at the grid max": censored,
        **{f"R compared at d={d}": r_cmp[d] for d in cfg.cap_dims},
    }
    for d in cfg.cap_dims:
        for R in cfg.cap_radii:
            measured[f"capacity hyperbolic d={d} R={R:g}"] = cap["ours", d, R]
            measured[f"NN separation hyperbolic d={d} R={R:g}"] = sep["ours", d, R]
    baselines = {}
    for name in ("euclidean", "sphere", "eqvol"):
        for d in cfg.cap_dims:
            for R in cfg.cap_radii:
                label = "Euclidean MHN of equal volume" if name == "eqvol" else f"{name} MHN"
                baselines[f"capacity {label} d={d} R={R:g}"] = cap[name, d, R]
                baselines[f"NN separation {name} d={d} R={R:g}"] = sep[name, d, R]
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        paper={"capacity": "significantly larger than leading models; exponential in d, double-exponential in R"},
        elsewhere={"classical Hopfield capacity [Amit, Gutfreund & Sompolinsky 1985]": "0.138 N"},
        reason="" if holds else f"log2 ratio {ratio:.2f}, growth with R {by_radius:.2f}, growth with d {by_dim:.2f}",
        figures={"capacity-vs-dimension": fig},
    )


def equal_volume_radius(d: int, R: float) -> float:
    """Radius of the Euclidean d-ball whose volume equals that of the hyperbolic ball of radius ``R`` in H^d:
    ``R_E^d / d = int_0^R sinh(r)^(d-1) dr`` (trapezoid on a fine grid)."""
    r = np.linspace(0.0, R, 20001)
    f = np.sinh(r) ** (d - 1)
    return float((d * np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(r))) ** (1.0 / d))


def _decode_rmse(
    kind: str, width: float, cfg, seed: int, split: int, centers: np.ndarray, *, budget: float = 0.0, stream: int = 0
) -> float:
    """Test RMSE of the Poisson posterior-mean decoder for one code on one split. ``budget`` (default: the
    config's) is the expected spike count per observation; ``stream`` picks the code's own spike noise (0 for the
    claim's codes; 1 for the A/A control's second constant code)."""
    rng = np.random.default_rng([seed, int(width * 1e6)])  # the same code on both splits
    cells = place_cells(cfg.dec_cells, kind, mean_width=width, rng=rng)
    cells.centers = centers
    cells = cells.with_budget(budget or cfg.dec_budget)
    grid = np.linspace(0, 1, cfg.dec_grid)
    s = np.random.default_rng([seed, split, 99]).random(cfg.dec_queries)  # same positions for every code
    counts = cells.counts(s, np.random.default_rng([seed, split, 98] + [stream] * (stream > 0)))
    est = poisson_posterior_mean(cells.rates(grid), counts, grid)[:, 0]
    return float(np.sqrt(np.mean((est - s) ** 2)))


@claim(
    "hyperhopfield/better-decoding-v1",
    statement="With 50 place cells on a 1-D track and an equal expected budget of 20 spikes per observation, the "
    "Poisson posterior-mean (MHN) decoder's RMSE is lower for exponentially distributed widths than for constant "
    "widths, each code's mean width chosen on a validation set from the same grid (log ratio const/exp > 0)",
    paper="hyperbolic (multi-scale) code improves decoding accuracy (abstract)",
    control="A/A: exponential widths replaced by a second constant-width code with its own centres and its own "
    "spike noise, tuned alike: the log ratio scatters around 0 and the claim must fail",
    positive="a known-good arm in the exponential code's place: the constant-width code given twice the spike "
    "budget (its RMSE ~sqrt(2) lower, log ratio ~0.35), tuned and scored alike",
    mechanisms=("multiscale-widths",),
    judge=Interval("log(RMSE const / RMSE exp)", above=0.0),
)
def better_decoding(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    centers = np.random.default_rng([seed, 1]).random((cfg.dec_cells, 1))
    ours = {  # the arms differ only in the code decoded in the exponential code's place
        Arm.CLAIM: dict(kind="exponential", centers=centers),
        Arm.NEGATIVE: dict(
            kind="constant", centers=np.random.default_rng([seed, 2]).random((cfg.dec_cells, 1)), stream=1
        ),
        Arm.POSITIVE: dict(kind="constant", centers=centers, budget=2 * cfg.dec_budget),
    }[arm]
    best = {}
    val = {}
    for label, code in (("exp", ours), ("const", dict(kind="constant", centers=centers))):
        code = dict(code)
        kind, where = code.pop("kind"), code.pop("centers")
        val[label] = [_decode_rmse(kind, w, cfg, seed, 0, where, **code) for w in cfg.dec_widths]
        w_best = cfg.dec_widths[int(np.argmin(val[label]))]
        best[label] = (w_best, _decode_rmse(kind, w_best, cfg, seed, 1, where, **code))  # fresh test split
    gain = float(np.log(best["const"][1] / best["exp"][1]))
    holds = gain > 0
    fig, ax = _figure()
    label = {Arm.CLAIM: "exponential widths", Arm.NEGATIVE: "constant, own draw (control)"}.get(
        arm, "constant, 2x spikes"
    )
    ax.loglog(cfg.dec_widths, val["exp"], "o-", label=label)
    ax.loglog(cfg.dec_widths, val["const"], "s--", label="constant widths")
    ax.set_xlabel("mean width")
    ax.set_ylabel("validation RMSE")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "log(RMSE const / RMSE exp)": gain,
            "RMSE exponential (test)": best["exp"][1],
            "chosen mean width exponential": best["exp"][0],
            **{f"val RMSE exponential w={w:g}": v for w, v in zip(cfg.dec_widths, val["exp"], strict=True)},
        },
        baselines={
            "RMSE constant (test)": best["const"][1],
            "chosen width constant": best["const"][0],
            **{f"val RMSE constant w={w:g}": v for w, v in zip(cfg.dec_widths, val["const"], strict=True)},
        },
        paper={"decoding": "hyperbolic code improves decoding accuracy"},
        reason="" if holds else f"tuned constant-width code decodes as well or better (log ratio {gain:.3f})",
        figures={"rmse-vs-width": fig},
    )


# --- credited mechanisms and their liveness probes ---------------------------------------------------------------


@mechanism(
    "norm-bias",
    component="the bias -beta |x_mu|^2 / 2 in the MHN logits (what makes the update the posterior mean for "
    "patterns of unequal norm)",
    measures="RMS change of the one-step MHN output at beta = 1/sigma^2 when the bias is dropped, over the RMS "
    "error of the posterior mean (the claim's unequal-norm problem)",
    above=0.05,
)
def norm_bias(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    X, target, xi = mmse_problem(cfg, np.random.default_rng(seed))
    xi = xi[:2000]
    beta = 1 / cfg.mmse_sigma**2
    with_bias, without = mhn_update(X, xi, beta), mhn_update(X, xi, beta, bias=False)
    err = np.sqrt(np.mean(np.sum((with_bias - X[target[:2000]]) ** 2, 1)))
    change = np.sqrt(np.mean(np.sum((with_bias - without) ** 2, 1)))
    return {"norm-bias": change / err, "RMS change from the bias": change}


@mechanism(
    "multiscale-widths",
    component="exponentially distributed place-field widths (many scales) instead of one width",
    measures="largest absolute difference of the normalised population-distance curves d_pop(separation)/max of the "
    "exponential and the constant code on the same centres (0: the width distribution changes nothing)",
    above=0.05,
)
def multiscale_widths(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    lo, hi, n = cfg.geo_seps
    seps = np.logspace(lo, hi, int(n))
    centers = np.random.default_rng([seed, 3]).random((cfg.geo_cells, 1))
    curves = {}
    for kind in ("exponential", "constant"):
        cells = place_cells(cfg.geo_cells, kind, mean_width=cfg.geo_mean_width, rng=np.random.default_rng(seed))
        cells.centers = centers
        curve = distance_scaling(cells, seps, cfg.geo_pairs, np.random.default_rng([seed, 4]))
        curves[kind] = curve / curve.max()
    widths = place_cells(cfg.geo_cells, "exponential", mean_width=cfg.geo_mean_width, rng=np.random.default_rng(seed))
    q10, q90 = np.quantile(widths.widths, [0.1, 0.9])
    return {
        "multiscale-widths": float(np.max(np.abs(curves["exponential"] - curves["constant"]))),
        "decades spanned by the widths (10-90 %)": float(np.log10(q90 / q10)),
    }


def _capacity_probe_setting(scale: Scale) -> tuple[int, float, float]:
    cfg = PRESETS[scale.value]
    return cfg.cap_dims[0], cfg.cap_radii[-1], cfg.cap_noise


@mechanism(
    "curvature",
    component="negative curvature of the pattern space (the hyperbolic ball's exponential volume at max norm R)",
    measures="log2 of the median nearest-neighbour distance of 64 patterns uniform in the hyperbolic ball over "
    "that in the Euclidean ball of the same radius (smallest d, largest R of the capacity claim)",
    above=0.5,
)
def curvature(scale: Scale, seed: int) -> dict[str, float]:
    d, R, _ = _capacity_probe_setting(scale)
    rng = np.random.default_rng([seed, 5])
    nn = {}
    for name in ("hyperbolic", "euclidean"):
        space = make_space(name, d, R)
        X = space.sample(64, rng)
        D = space.pairwise(X, X)
        np.fill_diagonal(D, np.inf)
        nn[name] = float(np.median(D.min(axis=1)))
    return {"curvature": np.log2(nn["hyperbolic"] / nn["euclidean"]), "NN distance hyperbolic": nn["hyperbolic"]}


@mechanism(
    "karcher-flow",
    component="retrieval by the weighted Frechet mean computed with Karcher flow",
    measures="share of 200 queries at intrinsic noise rho retrieved (nearest pattern is the target and within "
    "rho/2) from 16 patterns in the hyperbolic ball (the query itself, before the flow, is never within rho/2)",
    above=0.5,
)
def karcher_flow(scale: Scale, seed: int) -> float:
    d, R, rho = _capacity_probe_setting(scale)
    rng = np.random.default_rng([seed, 6])
    space = make_space("hyperbolic", d, R)
    X = space.sample(16, rng)
    target = rng.integers(0, 16, 200)
    queries = space.perturb(X[target], rho, rng)
    out = HyperbolicMemory(X, beta=64.0 / rho**2).retrieve(queries)
    return float(retrieval_success(space, X, out, target, rho).mean())


# --- the claims' measures, validated both ways --------------------------------------------------------------------


@lru_cache(maxsize=8)
def _hyperbolicity_check(seed: int) -> dict[str, float]:
    """The fitted-curvature radius R_hyp on ground truth: 30 points uniform in a hyperbolic disc of radius 6
    (truth), a less curved disc (radius 3), a 3-D Euclidean ball, a line and a sphere (alternatives), and a
    flat disc (the null: a flat geometry is not hyperbolic)."""
    rng = np.random.default_rng([seed, 21])
    n = 30

    def euclid(X):
        return np.linalg.norm(X[:, None] - X[None], axis=-1)

    def hyper(R):
        H = sample_hyperbolic_ball(n, 2, R, rng)
        return pairwise_dist(H, H)

    sphere = sample_sphere(n, 2, 1.0, rng)
    inputs = {
        "truth": hyper(6.0),
        "hyperbolic disc R = 3": hyper(3.0),
        "Euclidean 3-ball": euclid(sample_euclidean_ball(n, 3, 1.0, rng)),
        "line": euclid(rng.random((n, 1))),
        "sphere": np.arccos(np.clip(sphere @ sphere.T, -1, 1)),
        "null": euclid(sample_euclidean_ball(n, 2, 1.0, rng)),
    }
    return {k: hyperbolic_mds_radius(D)["R_hyp"] for k, D in inputs.items()}


def _retrieval_check(seed: int) -> dict[str, float]:
    """Retrieval success (the capacity claim's criterion) for the truth (the target itself as final state), the
    Karcher flow in a crowded disc (64 patterns within radius 2, beyond its capacity), the untouched query, and a
    random stored pattern (the null: chance, 1/P)."""
    rng = np.random.default_rng([seed, 22])
    rho, P = 0.5, 64
    space = make_space("hyperbolic", 2, 2.0)
    X = space.sample(P, rng)
    target = rng.integers(0, P, 400)
    queries = space.perturb(X[target], rho, rng)
    finals = {  # the final states each "method" hands to the criterion
        "truth": X[target],
        "Karcher flow": HyperbolicMemory(X, beta=64.0 / rho**2).retrieve(queries),
        "query": queries,
        "null": X[rng.integers(0, P, 400)],
    }
    return {k: float(retrieval_success(space, X, out, target, rho).mean()) for k, out in finals.items()}


def _decoding_check(seed: int) -> dict[str, float]:
    """Decoding RMSE on a 1-D track: the truth (the true positions), the posterior mean of the exponential and
    constant codes, and a code with no spatial tuning (the null: the prior mean, RMSE 1/sqrt(12) = 0.289)."""
    cfg = PRESETS["smoke"]
    s = np.random.default_rng([seed, 23]).random(1000)
    grid = np.linspace(0, 1, cfg.dec_grid)
    out = {"truth": 0.0}
    for kind in ("exponential", "constant"):
        cells = place_cells(cfg.dec_cells, kind, mean_width=0.05, rng=np.random.default_rng([seed, 24]))
        cells = cells.with_budget(cfg.dec_budget)
        est = poisson_posterior_mean(cells.rates(grid), cells.counts(s, np.random.default_rng([seed, 25])), grid)
        out[kind] = float(np.sqrt(np.mean((est[:, 0] - s) ** 2)))
    flat = np.full((len(grid), cfg.dec_cells), cfg.dec_budget / cfg.dec_cells)  # rates that ignore position
    counts = np.random.default_rng([seed, 26]).poisson(flat[:1].repeat(len(s), 0)).astype(float)
    out["null"] = float(np.sqrt(np.mean((poisson_posterior_mean(flat, counts, grid)[:, 0] - s) ** 2)))
    return out


MEASURES = [
    MeasureCheck("R_hyp (hyperbolic MDS, fitted curvature)", _hyperbolicity_check, null_band=(0.0, 1.0), margin=0.5),
    MeasureCheck("retrieval success", _retrieval_check, null_band=(0.0, 0.2), margin=0.05),
    MeasureCheck("decoding RMSE", _decoding_check, null_band=(0.25, 0.33), higher_is_better=False, margin=0.001),
]
MECHANISMS = [norm_bias, multiscale_widths, curvature, karcher_flow]
CLAIMS = [mhn_is_mmse, multiscale_widths_hyperbolic, hyperbolic_capacity, better_decoding]
