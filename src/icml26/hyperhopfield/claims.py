"""The paper's headline claims, executable on synthetic data with known ground truth (see README "Claims").

- ``mhn-is-mmse-v1``: the MHN update (with the bias term) is the posterior mean to 1e-10 (a precondition,
  checked on every run) and its one-step MSE is minimised at ``beta = 1 / sigma^2`` (which follows from the
  identity and Bayes optimality: labelled by construction; the no-bias control is the informative part).
- ``multiscale-widths-hyperbolic-v1``: exponential widths give log-distance scaling over more decades than
  constant widths; the naive tests (Gromov delta, hyperbolic-vs-Euclidean MDS stress) are reported beside.
- ``hyperbolic-capacity-v2``: Karcher-flow hyperbolic memory vs the best of Euclidean-ball and sphere MHN at
  matched dimension, max norm and intrinsic query noise; a Euclidean ball of equal *volume* is reported beside it
  (not judged), and stores more: the win at matched max norm is the hyperbolic ball's extra volume.
- ``better-decoding-v1``: posterior-mean decoding error from exponential-width vs constant-width codes at an
  equal spike budget, each code's mean width tuned on a validation set.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.hyperhopfield.capacity import estimate_capacity, float64_radius_limit, make_space
from icml26.hyperhopfield.config import PRESETS
from icml26.hyperhopfield.data import place_cells
from icml26.hyperhopfield.geometry import (
    betti_reference_distances,
    distance_scaling,
    gromov_delta,
    log_scaling_range,
    mds_stress,
)
from icml26.hyperhopfield.lorentz import MAX_RADIUS
from icml26.hyperhopfield.memory import gaussian_posterior_mean, mhn_update, poisson_posterior_mean


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 4))


def mmse_problem(cfg, rng: np.random.Generator):
    """Patterns with unequal norms (uniform in [0.5, 1.5]), queries ``x_mu + N(0, sigma^2 I)``."""
    X = rng.standard_normal((cfg.mmse_patterns, cfg.mmse_d))
    X *= (rng.uniform(0.5, 1.5, cfg.mmse_patterns) / np.linalg.norm(X, axis=1))[:, None]  # (P, d)
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
    judge=Interval("log2(beta* sigma^2)", above=-0.2, below=0.2),
    by_construction="the posterior mean minimises the MSE over all estimators, so once the identity MHN(beta = "
    "1/sigma^2) = posterior mean holds (asserted on every run) the minimum over beta must sit at 1/sigma^2 up to "
    "Monte-Carlo noise; only the control (no bias term) is informative",
)
def mhn_is_mmse(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    X, target, xi = mmse_problem(cfg, rng)
    sigma = cfg.mmse_sigma
    bias = not control  # the one line the control changes
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
    ax.plot(2.0**grid, mse, "o-", label="MHN with bias" if bias else "MHN without bias (control)")
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


@claim(
    "hyperhopfield/multiscale-widths-hyperbolic-v1",
    statement="On a 1-D track, population distance grows like log(separation) over at least 0.25 more decades for "
    "exponentially distributed place-field widths than for constant widths of the same mean (paired, same centres); "
    "Gromov delta and hyperbolic-vs-Euclidean MDS stress are reported for both (they call both codes hyperbolic)",
    paper="a plausible tuning-curve construction (exponential widths) statistically induces hyperbolic geometry "
    "(abstract)",
    control="exponential widths replaced by constant widths (same draw of centres): both codes are single-scale, "
    "the range difference is ~0 and the claim must fail",
    judge=Interval("log-range(exponential) - log-range(constant) [decades]", above=0.25),
)
def multiscale_widths_hyperbolic(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    lo, hi, n = cfg.geo_seps
    seps = np.logspace(lo, hi, int(n))
    centers = rng.random((cfg.geo_cells, 1))
    kinds = {
        "exponential": "constant" if control else "exponential",
        "log-uniform": "log-uniform",
        "constant": "constant",
    }
    ranges, curves, naive = {}, {}, {}
    for label, kind in kinds.items():
        sub = np.random.default_rng([seed, len(label)])
        cells = place_cells(cfg.geo_cells, kind, mean_width=cfg.geo_mean_width, rng=sub)
        cells.centers = centers  # paired: same centres for every width distribution
        pair_rng = np.random.default_rng([seed, 7])  # same pairs for every code
        curves[label] = distance_scaling(cells, seps, cfg.geo_pairs, pair_rng)
        ranges[label], _ = log_scaling_range(seps, curves[label])
        s = np.sort(pair_rng.random(cfg.geo_points))
        F = cells.rates(s)
        D = np.linalg.norm(F[:, None] - F[None], axis=-1)
        naive[label] = (
            gromov_delta(D, 20000, pair_rng),
            mds_stress(D, "hyperbolic", rng=pair_rng) / mds_stress(D, "euclidean", rng=pair_rng),
            betti_reference_distances(D, np.random.default_rng([seed, 11])),  # same reference clouds for all
        )
    diff = ranges["exponential"] - ranges["constant"]
    holds = diff > 0.25
    fig, ax = _figure()
    for label, c in curves.items():
        ax.semilogx(seps, c / c.max(), "o-", ms=3, label=f"{label} ({ranges[label]:.2f} decades)")
    ax.set_xlabel("physical separation (track length 1)")
    ax.set_ylabel("population distance / max")
    ax.set_title("log-distance scaling" + (" (control)" if control else ""))
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "log-range(exponential) - log-range(constant) [decades]": diff,
            "log-range exponential [decades]": ranges["exponential"],
            "log-range log-uniform [decades]": ranges["log-uniform"],
            "delta_rel exponential": naive["exponential"][0],
            "MDS stress H/E exponential": naive["exponential"][1],
            "delta_rel log-uniform": naive["log-uniform"][0],
            "MDS stress H/E log-uniform": naive["log-uniform"][1],
            "Betti L1 to H^3 cloud, exponential": naive["exponential"][2]["hyperbolic"],
            "Betti L1 to R^3 cloud, exponential": naive["exponential"][2]["euclidean"],
        },
        baselines={
            "log-range constant [decades]": ranges["constant"],
            "delta_rel constant": naive["constant"][0],
            "MDS stress H/E constant (< 1: naive test calls it hyperbolic)": naive["constant"][1],
            "Betti L1 to H^3 cloud, constant": naive["constant"][2]["hyperbolic"],
            "Betti L1 to R^3 cloud, constant": naive["constant"][2]["euclidean"],
        },
        paper={"geometry": "exponential widths statistically induce hyperbolic geometry"},
        elsewhere={"log-linear range exponential vs constant [prototype]": "~2 vs ~0.5 decades"},
        reason="" if holds else f"range difference {diff:.2f} decades",
        figures={"distance-vs-log-separation": fig},
    )


@claim(
    "hyperhopfield/hyperbolic-capacity-v2",
    statement="At matched dimension d, max norm R and intrinsic query noise 0.5, the Karcher-flow hyperbolic memory "
    "(patterns uniform in the hyperbolic ball of radius R) stores more patterns at >= 99 % retrieval than the best "
    "beta-tuned Euclidean MHN (Euclidean ball or sphere of radius R) for every d (log2 ratio > 0) at the largest R "
    "whose baseline capacity is below the grid max (uncensored), "
    "and its capacity grows with R (every d) and with d (every R); capacities on a doubling grid, censored at its max",
    paper="hyperbolic associative memory with significantly larger capacity than leading models (abstract)",
    control="curvature switched off: the 'hyperbolic' memory is run on patterns in the flat Euclidean ball (the MHN "
    "baseline itself), so it cannot exceed the best baseline and the claim must fail",
    judge=(
        Interval("min_d log2(P_hyp / P_MHN) at largest uncensored R", above=0.0),
        Interval("min_d log2 P_hyp(R_max) / P_hyp(R_min)", above=0.0),
        Interval("min_R log2 P_hyp(d_max) / P_hyp(d_min)", above=0.0),
    ),
)
def hyperbolic_capacity(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    rho = cfg.cap_noise
    betas = tuple(b / rho**2 for b in cfg.cap_beta_rho2)
    ours = "euclidean" if control else "hyperbolic"  # the one line the control changes
    cap: dict[tuple[str, int, float], int] = {}
    sep: dict[tuple[str, int, float], float] = {}
    cut: dict[tuple[str, int, float], bool] = {}
    censored = 0
    for d in cfg.cap_dims:
        for R in cfg.cap_radii:
            for name, space in (("ours", ours), ("euclidean", "euclidean"), ("sphere", "sphere")):
                r = estimate_capacity(
                    make_space(space, d, R),
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
            label = ("hyperbolic" if not control else "flat (control)") if name == "ours" else f"{name} MHN"
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


def _decode_rmse(kind: str, width: float, cfg, seed: int, split: int, centers: np.ndarray) -> float:
    rng = np.random.default_rng([seed, int(width * 1e6)])  # the same code on both splits
    cells = place_cells(cfg.dec_cells, kind, mean_width=width, rng=rng)
    cells.centers = centers
    cells = cells.with_budget(cfg.dec_budget)
    grid = np.linspace(0, 1, cfg.dec_grid)
    s = np.random.default_rng([seed, split, 99]).random(cfg.dec_queries)  # same positions for every code
    counts = cells.counts(s, np.random.default_rng([seed, split, 98]))
    est = poisson_posterior_mean(cells.rates(grid), counts, grid)[:, 0]
    return float(np.sqrt(np.mean((est - s) ** 2)))


@claim(
    "hyperhopfield/better-decoding-v1",
    statement="With 50 place cells on a 1-D track and an equal expected budget of 20 spikes per observation, the "
    "Poisson posterior-mean (MHN) decoder's RMSE is lower for exponentially distributed widths than for constant "
    "widths, each code's mean width chosen on a validation set from the same grid (log ratio const/exp > 0)",
    paper="hyperbolic (multi-scale) code improves decoding accuracy (abstract)",
    control="exponential widths replaced by constant widths: the two codes are the same family with the same "
    "tuning, the log ratio is ~0 and the claim must fail",
    judge=Interval("log(RMSE const / RMSE exp)", above=0.0),
)
def better_decoding(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    centers = np.random.default_rng([seed, 1]).random((cfg.dec_cells, 1))
    ours = "constant" if control else "exponential"  # the one line the control changes
    best = {}
    val = {}
    for label, kind in (("exp", ours), ("const", "constant")):
        val[label] = [_decode_rmse(kind, w, cfg, seed, 0, centers) for w in cfg.dec_widths]
        w_best = cfg.dec_widths[int(np.argmin(val[label]))]
        best[label] = (w_best, _decode_rmse(kind, w_best, cfg, seed, 1, centers))  # fresh test split
    gain = float(np.log(best["const"][1] / best["exp"][1]))
    holds = gain > 0
    fig, ax = _figure()
    ax.loglog(cfg.dec_widths, val["exp"], "o-", label="exponential widths" if not control else "constant (control)")
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


CLAIMS = [mhn_is_mmse, multiscale_widths_hyperbolic, hyperbolic_capacity, better_decoding]
