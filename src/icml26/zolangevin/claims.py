"""The paper's headline claims as executable checks on targets with known ground truth."""

from __future__ import annotations

import functools
import logging

import numpy as np

from icml26.claims import ClaimResult, Scale, claim

from .config import PRESETS
from .diagnostics import imq_ksd, mode_balance
from .samplers import langevin, run_sampler
from .targets import Banana, DoubleWell, GaussianMixture

logger = logging.getLogger(__name__)


def _pooled(result, frac: float = 0.25) -> np.ndarray:
    """Final states plus the snapshots of the last ``frac`` of the budget, shape (n_samples, d)."""
    k = max(1, round(frac * len(result.trace)))
    snaps = [s for _, _, s in result.trace[-k:]] or [result.final]
    return np.concatenate(snaps)


def _finite(x: np.ndarray) -> bool:
    return bool(np.isfinite(x).all() and np.abs(x).max() < 1e6)


@claim(
    "zolangevin/vr-removes-dimension-dependence-v1",
    statement=(
        "at an equal per-chain query budget, VR-ZO-LMC with a small constant batch (b=4) matches ZO-LMC with "
        "batch b=d in variance bias (within half the excess of b=4) and KSD (within 15 %), plain ZO-LMC with "
        "b=4 is measurably biased (hotter), and the advantage of VR over plain b=4 widens with d"
    ),
    paper="Abstract ('eliminates the unfavorable dimensional dependence of the batch size required for accurate "
    "estimation'); the main theorem on the estimator's batch size",
    control="VR switched off: plain ZO-LMC (b=4) runs in VR-ZO-LMC's place, so 'VR' is as hot as plain b=4",
    by_construction="with h = 1/d plain ZO-LMC at b=4 is already flat in d (its variance bias falls from 0.23 "
    "at d=10 to 0.14 at d=100, small seed 0): the 'widening' gap comes from VR's own bias shrinking, not from "
    "a batch that must grow with d — to be replaced by vr-removes-dimension-dependence-v2 (issue 17)",
)
def vr_removes_dimension_dependence(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]["dims"]
    rows = {}
    for d in cfg.dims:
        target = GaussianMixture.two_modes(d)
        h, budget = cfg.step_c / d, cfg.budget_per_dim * d
        # every (d, run) draws from its own generator, so a claim and its control on the same seed see the
        # same starts and the same baseline runs
        x0 = 0.5 * np.random.default_rng([seed, d]).standard_normal((cfg.n_chains, d))  # off-equilibrium (var 1)
        runs = {
            "zo b=4": dict(name="zo", b=cfg.b_small),
            "zo b=d": dict(name="zo", b=d),
            # the one line the control changes: the variance-reduced estimator, or plain ZO in its place
            "vr-zo b=4": dict(name="zo", b=cfg.b_small) if control else dict(name="vr-zo", b=cfg.b_small, q=cfg.q),
        }
        rows[d] = {}
        for k, (label, kw) in enumerate(runs.items()):
            rng = np.random.default_rng([seed, d, k])
            res = run_sampler(target=target, x0=x0, step=h, query_budget=budget, rng=rng, **kw)
            pooled = _pooled(res)
            # IMQ scale c = sqrt(d) (about the median inter-sample distance / sqrt 2): with c = 1 the
            # V-statistic in d = 100 is smaller for under-dispersed samples than for exact ones
            c = np.sqrt(d)
            trace = [(qq, imq_ksd(s, target.score(s), c=c)) for qq, _, s in res.trace]
            rows[d][label] = {
                "vb": float((pooled[:, 1:].var(0, ddof=1) - 1).mean()),  # true variance 1 off the mode axis
                # final states only: independent chains (pooled snapshots are autocorrelated, which
                # changes the V-statistic's diagonal term differently for each sampler)
                "ksd": imq_ksd(res.final, target.score(res.final), c=c),
                "queries": res.queries,
                "trace": trace,
            }
        ula = run_sampler("ula", target, x0, step=h, n_steps=5 * d, rng=np.random.default_rng([seed, d, len(runs)]))
        rows[d]["ula"] = {"vb": float((_pooled(ula)[:, 1:].var(0, ddof=1) - 1).mean())}
        logger.info("d=%d: %s", d, {k: round(v["vb"], 4) for k, v in rows[d].items()})

    lo, hi = cfg.dims[0], cfg.dims[-1]
    r = rows[hi]
    excess_small = r["zo b=4"]["vb"] - r["zo b=d"]["vb"]
    excess_vr = r["vr-zo b=4"]["vb"] - r["zo b=d"]["vb"]
    gap = {d: rows[d]["zo b=4"]["vb"] - rows[d]["vr-zo b=4"]["vb"] for d in cfg.dims}
    hot = excess_small > 0.05
    matches = excess_vr < 0.5 * excess_small and r["vr-zo b=4"]["ksd"] <= 1.15 * r["zo b=d"]["ksd"]
    widens = gap[hi] > gap[lo]
    verdict = "holds" if hot and matches and widens else "fails"
    reason = (
        "IMQ KSD (c = sqrt d, final states) differs by only 5-10 % between samplers at d=100 with 120 chains, "
        "so it is checked with a 15 % tolerance and the verdict rests on the variance bias"
    )
    if verdict == "fails":
        reason = (
            f"hot={hot} (excess {excess_small:.3f}), VR matches b=d={matches} (excess {excess_vr:.3f}), "
            f"gap widens={widens} ({gap[lo]:.3f} -> {gap[hi]:.3f})"
        )
    measured = {}
    for d in (lo, hi):
        for label in ("vr-zo b=4", "zo b=d", "zo b=4"):
            measured[f"var bias {label} d={d}"] = rows[d][label]["vb"]
        measured[f"KSD vr-zo b=4 d={d}"] = rows[d]["vr-zo b=4"]["ksd"]
        measured[f"KSD zo b=d d={d}"] = rows[d]["zo b=d"]["ksd"]
        measured[f"KSD zo b=4 d={d}"] = rows[d]["zo b=4"]["ksd"]
    measured[f"queries per chain d={hi}"] = r["vr-zo b=4"]["queries"]
    return ClaimResult(
        verdict,
        measured=measured,
        paper={
            "batch size": "the VR estimator eliminates the unfavorable dimensional dependence of the batch "
            "size required for accurate estimation (abstract)"
        },
        baselines={f"var bias ULA d={d}": rows[d]["ula"]["vb"] for d in (lo, hi)},
        reason=reason,
        figures={"ksd-vs-queries": _plot_dims(rows)},
    )


def _plot_dims(rows):
    import matplotlib.pyplot as plt

    dims = list(rows)
    fig, axes = plt.subplots(1, len(dims) + 1, figsize=(4 * (len(dims) + 1), 3.4))
    for ax, d in zip(axes, dims, strict=False):
        for label in ("zo b=4", "zo b=d", "vr-zo b=4"):
            q, k = zip(*rows[d][label]["trace"], strict=True)
            ax.plot(q, k, marker=".", label=label)
        ax.set(title=f"GMM d={d}", xlabel="queries per chain", ylabel="IMQ KSD (c = sqrt d)", yscale="log")
        ax.legend(fontsize=8)
    ax = axes[-1]
    for label in ("zo b=4", "zo b=d", "vr-zo b=4", "ula"):
        ax.plot(dims, [rows[d][label]["vb"] for d in dims], marker="o", label=label)
    ax.axhline(0, color="k", lw=0.5)
    ax.set(title="variance bias (true var 1)", xlabel="d", ylabel="mean Var/1 - 1", xscale="log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _nlc_targets(dim: int):
    """Targets of the non-log-concave claim with their step sizes h."""
    return {
        "gmm (0.3/0.7)": (GaussianMixture.two_modes(dim, separation=1.5, weights=(0.3, 0.7)), 0.02),
        "double-well (tilted)": (DoubleWell(dim, barrier=1.0, tilt=0.3), 0.01),
        "banana": (Banana(dim, curvature=0.3), 0.02),
    }


def _moment_errors(target, x):
    if not _finite(x):
        return {"mean err": np.inf, "var err": np.inf, "mode TV": np.inf}
    sd = np.sqrt(target.var)
    return {
        "mean err": float((np.abs(x.mean(0) - target.mean) / sd).max()),
        "var err": float(np.abs(x.var(0, ddof=1) / target.var - 1).mean()),
        "mode TV": mode_balance(target.mode_probabilities(x), target.mode_weights),
    }


TOL = {"mean err": 0.15, "var err": 0.15, "mode TV": 0.05}


@claim(
    "zolangevin/non-log-concave-v1",
    statement=(
        "on non-log-concave targets (unequal-weight Gaussian mixture, tilted double well, banana) VR-ZO-LMC "
        "recovers mode weights within 0.05 (TV), means within 0.15 sd and variances within 15 %; the refresh "
        "period q is swept and reported"
    ),
    paper="Abstract; synthetic experiments (non-log-concave targets)",
    control="sampler drift switched off: an unadjusted random walk x + sqrt(2h) ξ that never queries f (as many "
    "steps as VR's corrections afford at the budget) runs in VR-ZO-LMC's place",
    by_construction="VR switched off (plain ZO-LMC, b=4, same budget, in VR-ZO-LMC's place) meets every tolerance "
    "too (worst variance error 0.05 at small seed 0), and the banana is unimodal (mode TV 0 for any sampler): "
    "the tolerances do not need the variance reduction — to be replaced by non-log-concave-v2 (issue 17)",
)
def non_log_concave(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]["nlc"]
    qs = sorted(set(cfg.q_sweep) | {cfg.q})
    results, sweep = {}, {}
    rw_steps = cfg.budget // (2 * cfg.b + 1)  # the control's steps: what VR's corrections (2b + 1 queries) afford
    for t, (name, (target, h)) in enumerate(_nlc_targets(cfg.dim).items()):
        # every (target, run) draws from its own generator, so a claim and its control on the same seed see
        # the same starts and the same baseline runs
        x0 = np.random.default_rng([seed, t]).standard_normal((cfg.n_chains, cfg.dim))
        budget = dict(query_budget=cfg.budget, b=cfg.b)
        zo = run_sampler("zo", target, x0, step=h, rng=np.random.default_rng([seed, t, 0]), **budget)
        results[name] = {"zo b=4": _moment_errors(target, _pooled(zo, 0.5))}
        with np.errstate(over="ignore", invalid="ignore"):
            if control:  # the one change: a random walk (zero drift) in VR-ZO-LMC's place; it has no q to sweep
                rng = np.random.default_rng([seed, t, 1])
                walk = langevin(target, x0, step=h, grad=np.zeros_like, n_steps=rw_steps, rng=rng)
                runs = dict.fromkeys(qs, walk)
            else:
                runs = {
                    q: run_sampler(
                        "vr-zo", target, x0, step=h, q=q, rng=np.random.default_rng([seed, t, 1, q]), **budget
                    )
                    for q in qs
                }
        sweep[name] = {q: _moment_errors(target, _pooled(vr, 0.5)) for q, vr in runs.items()}
        results[name]["vr-zo"] = sweep[name][cfg.q]
    ok = {name: all(r["vr-zo"][k] <= TOL[k] for k in TOL) for name, r in results.items()}
    verdict = "holds" if all(ok.values()) else "fails"
    measured, baselines = {}, {}
    for name, r in results.items():
        for k in TOL:
            measured[f"{k} {name}"] = r["vr-zo"][k]
            baselines[f"{k} {name} zo b=4"] = r["zo b=4"][k]
    for q in qs:
        # a run diverged when any target's chains left the finite range (see _finite); the worst variance
        # error is reported only for runs that did not diverge (NaN otherwise, which the seed aggregation
        # skips), and divergence is reported as 0/1 per seed, so its mean over seeds is the fraction
        diverged = any(not np.isfinite(sweep[name][q]["var err"]) for name in sweep)
        measured[f"diverged runs q={q}"] = float(diverged)
        measured[f"worst var err q={q}"] = np.nan if diverged else max(sweep[name][q]["var err"] for name in sweep)
    reason = (
        ""
        if verdict == "holds"
        else "outside tolerance: "
        + ", ".join(f"{name} {results[name]['vr-zo']}" for name, good in ok.items() if not good)
    )
    return ClaimResult(
        verdict,
        measured=measured,
        paper={"mode weights, moments": "recovered (relative-Fisher / TV² guarantees)"},
        baselines=baselines,
        reason=reason,
        figures={"q-sweep": _plot_sweep(sweep, cfg.q)},
    )


def _plot_sweep(sweep, q_default):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.4))
    finite = [e for by_q in sweep.values() for r in by_q.values() if np.isfinite(e := r["var err"])]
    top = 2 * max([*finite, TOL["var err"]])  # diverged runs are drawn as crosses at this height
    for name, by_q in sweep.items():
        qs = sorted(by_q)
        errs = np.array([by_q[q]["var err"] for q in qs], dtype=float)
        bad = ~np.isfinite(errs)
        (line,) = ax.plot(qs, np.where(bad, np.nan, errs), marker="o", label=name)
        if bad.any():
            ax.plot(np.array(qs)[bad], np.full(bad.sum(), top), "x", color=line.get_color(), ms=9, mew=2)
    if any(not np.isfinite(r["var err"]) for by_q in sweep.values() for r in by_q.values()):
        ax.plot([], [], "x", color="k", ms=9, mew=2, label="diverged")
    ax.axhline(TOL["var err"], color="k", ls="--", lw=0.8, label="tolerance")
    ax.axvline(q_default, color="grey", lw=0.5)
    ax.set(xscale="log", yscale="log", xlabel="refresh period q", ylabel="mean |Var/Var_true - 1|")
    qs = sorted(next(iter(sweep.values())))
    ax.set_xticks(qs, [str(q) for q in qs])
    ax.minorticks_off()
    ax.set_title("VR-ZO-LMC: refresh-period sweep", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@functools.lru_cache(maxsize=4)
def _trained_prior(data: str, size: int, steps: int, width: int):
    """Train the score prior once per process (the claim's seeds vary images, noise and samplers)."""
    from .data import load_images
    from .prior import train_score_prior

    images = load_images(data, size=size, n=20_000 if data != "shapes" else 4000)
    return train_score_prior(images, n_steps=steps, width=width, seed=0, data=data)


APMC_METHODS = ("oracle", "vr-zo", "zo", "enkg")


class _FlatPrior:
    """The negative control's prior: flat (score 0 at every noise level) over the trained prior's images."""

    def __init__(self, prior):
        self.dim, self.size, self.sigma_min, self.sigma_max = prior.dim, prior.size, prior.sigma_min, prior.sigma_max

    def score(self, x: np.ndarray, sigma: float) -> np.ndarray:
        return np.zeros_like(x)


@claim(
    "zolangevin/zo-apmc-near-oracle-v1",
    statement=(
        "on image inverse problems with a black-box forward model (linear blur+subsampling, non-linear "
        "blur+clipping) and a locally trained score prior, ZO-APMC's posterior-mean PSNR is within 1 dB of "
        "oracle APMC (exact gradients) and above naive ZO-APMC at the same forward-query budget; its pixel-wise "
        "90 % intervals cover 75-100 % of the pixels"
    ),
    paper="Abstract (ZO-APMC; 'strong empirical performance on practical linear and nonlinear inverse problems')",
    control="score prior switched off in ZO-APMC (a flat prior, score 0; the baselines keep the trained prior): "
    "its posterior mean loses the image prior and falls far below the oracle",
    by_construction="the posterior-mean PSNR barely reacts to the data-fit gradient: with VR switched off "
    "(plain ZO, b=4, in ZO-APMC's place) the claim still held on smoke seeds 3 and 4, and with no data-fit "
    "gradient at all on smoke seed 1; with one image per problem the seed noise (about 0.5 dB) exceeds the "
    "gaps it judges (issue 17: naive ZO 18.1 dB beat the exact-gradient oracle 17.9)",
)
def zo_apmc_near_oracle(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from .apmc import InverseProblem, coverage, make_forward, psnr, ssim, zo_apmc
    from .data import available, load_images

    cfg = PRESETS[scale.value]["apmc"]
    data = cfg.data if available(cfg.data) else "shapes"
    prior = _trained_prior(data, cfg.size, cfg.prior_steps, cfg.prior_width)
    rng = np.random.default_rng(seed)
    images = load_images(data, split="test", size=cfg.size, n=cfg.n_images, rng=rng)
    n_steps = cfg.n_levels * cfg.steps_per_level
    # forward queries per chain of ZO-APMC: a coordinate refresh (d + 1) every q steps, else 2b + 1
    vr_queries = sum((cfg.size**2 + 1) if t % cfg.q == 0 else 2 * cfg.b + 1 for t in range(n_steps))
    b_naive = max(1, round(vr_queries / n_steps) - 1)  # same budget for plain Gaussian smoothing
    common = dict(
        n_chains=cfg.n_chains,
        n_levels=cfg.n_levels,
        steps_per_level=cfg.steps_per_level,
        step_scale=cfg.step_scale,
        sigma_range=cfg.sigma_range,
        q=cfg.q,
    )
    scores = {m: {"psnr": [], "ssim": [], "cov": [], "queries": []} for m in APMC_METHODS}
    example = (cfg.problems[0], images[0], {})
    for problem_name in cfg.problems:
        forward = make_forward(problem_name, cfg.size)
        for i, img in enumerate(images):
            problem = InverseProblem.simulate(forward, img, cfg.sigma_y, rng)
            for method in APMC_METHODS:
                b = b_naive if method == "zo" else cfg.b
                # the one line the control changes: ZO-APMC without its score prior (the baselines keep it)
                method_prior = _FlatPrior(prior) if control and method == "vr-zo" else prior
                res = zo_apmc(problem, method_prior, method=method, b=b, rng=rng, **common)
                scores[method]["psnr"].append(psnr(res.mean, img.ravel()))
                scores[method]["ssim"].append(ssim(res.mean, img, cfg.size))
                scores[method]["cov"].append(coverage(res.samples, img))
                scores[method]["queries"].append(res.queries)
                if problem_name == cfg.problems[0] and i == 0:
                    example[2][method] = res
    mean = {m: {k: float(np.mean(v)) for k, v in s.items()} for m, s in scores.items()}
    near = mean["vr-zo"]["psnr"] >= mean["oracle"]["psnr"] - 1.0
    better = mean["vr-zo"]["psnr"] > mean["zo"]["psnr"]
    covered = 0.75 <= mean["vr-zo"]["cov"] <= 1.0
    verdict = "holds" if near and better and covered else "fails"
    reason = (
        ""
        if verdict == "holds"
        else (
            f"PSNR vr-zo {mean['vr-zo']['psnr']:.2f} vs oracle {mean['oracle']['psnr']:.2f} (near={near}), "
            f"vs naive {mean['zo']['psnr']:.2f} (better={better}), coverage {mean['vr-zo']['cov']:.2f}"
        )
    )
    measured = {
        "PSNR zo-apmc": mean["vr-zo"]["psnr"],
        "SSIM zo-apmc": mean["vr-zo"]["ssim"],
        "coverage90 zo-apmc": mean["vr-zo"]["cov"],
        "forward queries/chain zo-apmc": mean["vr-zo"]["queries"],
    }
    baselines = {}
    for m, label in (("oracle", "oracle APMC"), ("zo", "naive ZO-APMC"), ("enkg", "EnKG")):
        baselines[f"PSNR {label}"] = mean[m]["psnr"]
        baselines[f"SSIM {label}"] = mean[m]["ssim"]
        baselines[f"coverage90 {label}"] = mean[m]["cov"]
        # the oracle's count is autograd gradient evaluations of the forward model, not forward queries
        key = "gradient evaluations/chain" if m == "oracle" else "forward queries/chain"
        baselines[f"{key} {label}"] = mean[m]["queries"]
    if data != cfg.data:
        reason = (reason + " | " if reason else "") + f"{cfg.data} not installed: synthetic shapes used"
    return ClaimResult(
        verdict,
        measured=measured,
        paper={
            "inverse problems": "strong empirical performance on practical linear and nonlinear inverse "
            "problems (abstract)"
        },
        elsewhere={
            "fastMRI SSIM ZO-APMC [secondary listing, unverified]": 0.966,
            "fastMRI SSIM EnKG [secondary listing, unverified]": 0.953,
            "black-hole PSNR ZO-APMC [secondary listing, unverified]": 26.71,
            "black-hole PSNR EnKG [secondary listing, unverified]": 26.21,
        },
        baselines=baselines,
        reason=reason,
        figures={"posterior": _plot_posterior(example, cfg.size)},
    )


def _plot_posterior(example, size):
    import matplotlib.pyplot as plt

    problem_name, img, runs = example
    methods = [m for m in APMC_METHODS if m in runs]
    fig, axes = plt.subplots(len(methods), 5, figsize=(9, 1.9 * len(methods)))
    axes = np.atleast_2d(axes)
    for row, m in zip(axes, methods, strict=True):
        res = runs[m]
        panels = [
            img,
            res.samples[0].reshape(size, size),
            res.samples[1].reshape(size, size),
            res.mean.reshape(size, size),
            res.std.reshape(size, size),
        ]
        titles = ["truth", "sample 1", "sample 2", "posterior mean", "posterior std"]
        for ax, p, t in zip(row, panels, titles, strict=True):
            ax.imshow(
                p, cmap="gray" if t != "posterior std" else "magma", vmin=0, vmax=1 if t != "posterior std" else None
            )
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(t, fontsize=8)
        row[0].set_ylabel(f"{m}\n{res.queries} q/chain", fontsize=8)
    fig.suptitle(f"{problem_name}: ZO-APMC vs baselines", fontsize=10)
    fig.tight_layout()
    return fig


CLAIMS = [vr_removes_dimension_dependence, non_log_concave, zo_apmc_near_oracle]
