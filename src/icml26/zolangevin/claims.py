"""The paper's headline claims as executable checks on targets with known ground truth.

Contract v3: each claim runs three arms on the same targets, starts and noise streams. The negative arm
switches VR's control variate off (plain Gaussian smoothing on its *own* random stream in VR's place); the
positive arm plants the claimed effect at about the claim's bar, never an oracle: an estimator whose batch need
grows like d^0.25 (the batch claim: its bar is a slope below 0.5), and Gaussian smoothing with exact
directional derivatives at a larger batch than the baseline's, charged VR's queries (the non-log-concave
claim: plain ZO's largest batch, b = d; the inverse problem: 1.5 x naive ZO-APMC's batch, two thirds of its
variance). ``MECHANISMS`` probes whether the VR recursion actually reduces the
gradient error, on the mixture and inside ZO-APMC; ``MEASURES`` checks the error measures on exact samples.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism

from .config import PRESETS
from .diagnostics import mode_balance
from .estimators import GaussianSmoothing, VarianceReduced
from .samplers import langevin
from .targets import GaussianMixture

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------------------------
# 1. the batch size that VR needs does not grow with d


def _off_axis_variance_bias(samples: np.ndarray) -> float:
    """mean_j (Var(x_j) - 1) over the coordinates j >= 2 (true variance 1), pooled over draws and chains."""
    s = samples[..., 1:].reshape(-1, samples.shape[-1] - 1)
    return float((s.var(0, ddof=1) - 1).mean())


def _estimator(kind: str, b: int, q: int, rng: np.random.Generator):
    if kind == "vr":
        return VarianceReduced(b=b, q=q, rng=rng)
    return GaussianSmoothing(b=b, rng=rng)


class _DFreeNoise:
    """A planted estimator: the exact gradient plus N(0, kappa / b) noise in every coordinate, so its stationary
    excess variance is about h kappa / (2b) and the batch it needs is proportional to kappa (which the caller
    may scale with d). It is charged ``b + 1`` queries a step, like Gaussian smoothing; its noise has its own
    stream."""

    def __init__(self, grad, b: int, kappa: float, rng: np.random.Generator):
        self.grad, self.b, self.kappa, self.rng = grad, b, kappa, rng
        self.reset()

    def reset(self) -> None:
        self.queries, self.t = 0, 0

    def next_cost(self, d: int) -> int:
        return self.b + 1

    def __call__(self, f, x: np.ndarray) -> np.ndarray:
        self.queries += self.b + 1
        self.t += 1
        return self.grad(x) + np.sqrt(self.kappa / self.b) * self.rng.standard_normal(x.shape)


class _PlantedVR:
    """The claimed variance reduction planted at a given size: Gaussian smoothing's estimator with ``b_eff``
    directions and exact directional derivatives, g = (1/b_eff) sum_i (u_i . grad f) u_i (covariance
    (|grad f|^2 I + grad f grad f^T) / b_eff, Gaussian smoothing's at batch b_eff), charged VR's queries (d + 1 on
    a refresh every q steps, 2b + 1 on a correction). Its directions have their own stream."""

    def __init__(self, grad, b: int, q: int, b_eff: int, rng: np.random.Generator):
        self.grad, self.b, self.q, self.b_eff, self.rng = grad, b, q, b_eff, rng
        self.reset()

    def reset(self) -> None:
        self.queries, self.t = 0, 0

    def next_cost(self, d: int) -> int:
        return d + 1 if self.t % self.q == 0 else 2 * self.b + 1

    def __call__(self, f, x: np.ndarray) -> np.ndarray:
        self.queries += self.next_cost(x.shape[1])
        self.t += 1
        g = self.grad(x)  # (n, d)
        u = self.rng.standard_normal((x.shape[0], self.b_eff, x.shape[1]))  # (n, b_eff, d)
        return np.einsum("nb,nbd->nd", np.einsum("nbd,nd->nb", u, g), u) / self.b_eff


#: Per-coordinate noise variance (times b) of the batch claim's planted estimator at the smallest d: its
#: stationary excess variance is about h kappa / (2b), so b* is about h kappa / (2 tol) = 4 at h = 0.02, tol = 0.03.
DFREE_KAPPA = 12.0
#: ... and its growth with d: kappa = DFREE_KAPPA (d / d_0)^PLANTED_SLOPE, so b* grows like d^0.25. The claim's bar
#: is a slope below 0.5 (plain ZO's is ~1): the plant sits 1.5 x the bar's distance (0.5 - 0.25 = 0.25) inside it.
PLANTED_SLOPE = 0.25


def _b_star(bs: list[int], biases: list[float], tol: float) -> float:
    """Smallest batch with |bias| <= tol, interpolated between the grid's last failing and first passing point
    under the estimator-noise law bias(b) = a + c/b (nan when no tried batch passed; 1 when b = 1 passed)."""
    for i, (b, v) in enumerate(zip(bs, biases, strict=True)):
        if abs(v) <= tol:
            if i == 0:
                return 1.0
            b0, v0 = bs[i - 1], biases[i - 1]
            c = (v0 - v) / (1 / b0 - 1 / b)
            a = v - c / b
            return float(np.clip(c / (tol - a), b0, b)) if c > 0 and tol > a else float(b)
    return float("nan")


def _run_bias(target, cfg, seed, d, x0, **how) -> float:
    """Off-axis variance bias of one run from ``x0`` with the Langevin noise stream [seed, d, 1]."""
    res = langevin(
        target,
        x0,
        step=cfg.step,
        n_steps=cfg.burn_in + cfg.n_steps,
        burn_in=cfg.burn_in,
        thin=cfg.thin,
        n_snapshots=0,
        rng=np.random.default_rng([seed, d, 1]),
        **how,
    )
    return _off_axis_variance_bias(res.samples)


def _batch_sweep(kind, target, cfg, seed, d, ula_bias, stream: int = 2):
    """Estimator share of the variance bias (run minus exact-gradient ULA on the same start and the same Langevin
    noise) for b = 1, 2, 4, ... until it meets the tolerance; returns (bs, excess biases). ``kind`` is "vr",
    "zo" or "dfree" (the planted estimator, b* ~ d^PLANTED_SLOPE); ``stream`` picks the estimator's random stream."""
    n = max(16, cfg.chain_dims // d)
    x0 = target.sample(n, np.random.default_rng([seed, d]))  # stationary start: the bias is all that is measured
    kappa = DFREE_KAPPA * (d / cfg.dims[0]) ** PLANTED_SLOPE  # the planted estimator's noise (kind "dfree")
    bs, excess, b = [], [], 1
    while b <= cfg.b_max:
        rng = np.random.default_rng([seed, d, stream])
        est = _DFreeNoise(target.grad, b, kappa, rng) if kind == "dfree" else _estimator(kind, b, cfg.q, rng)
        bs.append(b)
        excess.append(_run_bias(target, cfg, seed, d, x0, estimator=est) - ula_bias)
        if abs(excess[-1]) <= cfg.tol:
            break
        b *= 2
    return bs, excess


@claim(
    "zolangevin/vr-removes-dimension-dependence-v2",
    statement=(
        "at a step size h = 0.02 fixed across d in {16, 32, 64, 128} (two-mode Gaussian mixture), the smallest "
        "batch b* that brings the estimator's share of the off-axis variance bias (vs the true variance 1, minus "
        "exact-gradient ULA's on the same start and noise) within 0.03 grows like d for plain "
        "ZO-LMC (log-log slope of b* vs d above 0.5) and does not grow for VR-ZO-LMC (q = 4; slope below 0.5)"
    ),
    paper="Abstract ('eliminates the unfavorable dimensional dependence of the batch size required for accurate "
    "estimation'); the main theorem on the estimator's batch size",
    control="VR's control variate switched off, A/A: plain ZO-LMC on its own random stream in VR's place (the "
    "recursion g_{t-1} + Δf(x_t) - Δf(x_{t-1}) loses its two control-variate terms), whose b* grows like d",
    positive=f"the claimed effect planted at the bar in VR's place: the exact gradient plus N(0, {DFREE_KAPPA:g} "
    f"(d/16)^{PLANTED_SLOPE:g} / b) noise per coordinate on its own stream, an estimator whose batch need grows like "
    f"d^{PLANTED_SLOPE:g} (the bar: slope below 0.5), through the same sweep, b* and slope",
    mechanisms=("control-variate",),
    judge=[
        Interval("slope log b* vs log d, VR-ZO", below=0.5),
        Interval("slope log b* vs log d, plain ZO", above=0.5),
    ],
)
def vr_removes_dimension_dependence(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]["dims"]
    rows = {}
    # the arms differ in what runs in VR's slot: VR, plain ZO on its own stream (3), or the planted estimator
    vr_kind, vr_stream = {Arm.CLAIM: ("vr", 2), Arm.NEGATIVE: ("zo", 3), Arm.POSITIVE: ("dfree", 4)}[arm]
    for d in cfg.dims:
        target = GaussianMixture.two_modes(d)
        x0 = target.sample(max(16, cfg.chain_dims // d), np.random.default_rng([seed, d]))
        ula = _run_bias(target, cfg, seed, d, x0, grad=target.grad)
        rows[d] = {"zo": _batch_sweep("zo", target, cfg, seed, d, ula)}
        rows[d]["vr"] = _batch_sweep(vr_kind, target, cfg, seed, d, ula, stream=vr_stream)
        rows[d]["ula"] = ula
        logger.info("d=%d: %s", d, rows[d])
    star = {label: [_b_star(*rows[d][label], cfg.tol) for d in cfg.dims] for label in ("zo", "vr")}
    logd = np.log(cfg.dims)
    slope = {}
    for label, values in star.items():
        v = np.asarray(values)
        # a batch beyond the grid (nan) counts as 2 b_max: a lower bound, which can only flatten the slope
        v = np.where(np.isfinite(v), v, 2 * cfg.b_max)
        slope[label] = float(np.polyfit(logd, np.log(v), 1)[0])
    j_vr, j_zo = slope["vr"] < 0.5, slope["zo"] > 0.5
    verdict = "holds" if j_vr and j_zo else "fails"
    measured = {"slope log b* vs log d, VR-ZO": slope["vr"], "slope log b* vs log d, plain ZO": slope["zo"]}
    for d, bz, bv in zip(cfg.dims, star["zo"], star["vr"], strict=True):
        measured[f"b* VR-ZO d={d}"] = bv
        measured[f"b* plain ZO d={d}"] = bz
    measured[f"excess var bias VR-ZO b=1 d={cfg.dims[-1]}"] = rows[cfg.dims[-1]]["vr"][1][0]
    measured[f"excess var bias plain ZO b=1 d={cfg.dims[-1]}"] = rows[cfg.dims[-1]]["zo"][1][0]
    measured[f"b* plain ZO / b* VR-ZO d={cfg.dims[-1]}"] = star["zo"][-1] / star["vr"][-1]
    floor = sum(bool(v == 1.0) for v in star["vr"])
    reason = (
        f"VR slope {slope['vr']:.2f} (b* {np.round(star['vr'], 1).tolist()}), plain ZO slope {slope['zo']:.2f} "
        f"(b* {np.round(star['zo'], 1).tolist()}); VR met the tolerance at b = 1 for {floor} of {len(cfg.dims)} d"
    )
    return ClaimResult(
        verdict,
        measured=measured,
        paper={
            "batch size": "the VR estimator eliminates the unfavorable dimensional dependence of the batch "
            "size required for accurate estimation (abstract)"
        },
        baselines={f"var bias ULA d={d}": rows[d]["ula"] for d in cfg.dims},
        reason=reason,
        figures={"b-star-vs-d": _plot_b_star(cfg, rows, star)} if arm is Arm.CLAIM else {},
    )


def _plot_b_star(cfg, rows, star):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for label, name in (("zo", "plain ZO-LMC"), ("vr", "VR-ZO-LMC")):
        axes[0].plot(cfg.dims, star[label], marker="o", label=name)
    axes[0].plot(cfg.dims, np.asarray(cfg.dims) / cfg.dims[0] * star["zo"][0], "k:", lw=0.8, label="∝ d")
    axes[0].set(xscale="log", yscale="log", xlabel="d", ylabel=f"smallest b with |excess var bias| ≤ {cfg.tol}")
    axes[0].set_title(f"batch needed at fixed h = {cfg.step}", fontsize=10)
    axes[0].legend(fontsize=8)
    for d in cfg.dims:
        for label, ls in (("zo", "-"), ("vr", "--")):
            bs, v = rows[d][label]
            axes[1].plot(bs, v, ls, marker=".", label=f"{label} d={d}")
    axes[1].axhline(cfg.tol, color="k", lw=0.6)
    axes[1].set(xscale="log", yscale="symlog", xlabel="b", ylabel="variance bias minus ULA's")
    axes[1].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# 2. non-log-concave: an unequal-weight multimodal target in d >= 20


def _three_modes(dim: int) -> GaussianMixture:
    """Modes at the corners of a triangle of side 3 in the (x_1, x_2) plane, weights 0.2 / 0.3 / 0.5, unit
    covariance: the density is multimodal (non-log-concave) and the modes exchange chains on the run's time."""
    angles = np.deg2rad([90.0, 210.0, 330.0])
    means = np.zeros((3, dim))
    means[:, 0], means[:, 1] = np.sqrt(3) * np.cos(angles), np.sqrt(3) * np.sin(angles)
    return GaussianMixture(means, np.array([0.2, 0.3, 0.5]), np.ones(3))


#: tolerances fixed before any run: plain ZO-LMC (b = 4) heats the law by about h d / (2b) = 0.05 off the
#: mode plane, VR's recursion by about h² q² d / (3b) = 0.01, exact ULA by h / 2 = 0.01
NLC_TOL = {"var err": 0.04, "mode TV": 0.06, "mean err": 0.15}


def _nlc_errors(target: GaussianMixture, x: np.ndarray) -> dict[str, float]:
    """Errors against the truth: |mean_j Var(x_j) - 1| off the mode plane, mode-weight TV, and the largest
    mean error in the mode plane in units of the true sd."""
    if not (np.isfinite(x).all() and np.abs(x).max() < 1e6):
        return dict.fromkeys(NLC_TOL, np.inf)
    sd = np.sqrt(target.var[:2])
    return {
        "var err": float(abs(x[:, 2:].var(0, ddof=1).mean() - 1)),
        "mode TV": mode_balance(target.mode_probabilities(x), target.mode_weights),
        "mean err": float((np.abs(x[:, :2].mean(0) - target.mean[:2]) / sd).max()),
    }


def _plane_score(target: GaussianMixture, z: np.ndarray) -> np.ndarray:
    """Score of the target's (x_1, x_2) marginal (a 2-D mixture with the same weights), shape (n, 2)."""
    plane = GaussianMixture(target.means[:, :2], target.weights, target.scales)
    return plane.score(z)


def fisher_estimate(target: GaussianMixture, x: np.ndarray) -> float:
    """Relative Fisher information E_rho |∇log rho - ∇log pi|² of samples x (n, d) of the three-mode target.

    The law is taken as a product of its (x_1, x_2) marginal and independent Gaussians in the other
    coordinates (exact for pi and for a Langevin chain on this target up to estimator-noise correlations):
    the mode plane contributes a leave-one-out Gaussian-KDE score in 2-D, each other coordinate j the closed
    form m_j² + (v_j - 1)² / v_j of N(m_j, v_j) against N(0, 1).
    """
    from .diagnostics import relative_fisher

    z = x[:, :2]
    plane = relative_fisher(z, _plane_score(target, z))
    m, v = x[:, 2:].mean(0), x[:, 2:].var(0, ddof=1)
    return float(plane + (m**2 + (v - 1) ** 2 / v).sum())


def _kl_start(target: GaussianMixture, scale: float, rng: np.random.Generator, n: int = 20_000) -> float:
    """KL(N(0, scale² I) | pi) by Monte Carlo (pi's potential is its normalised negative log density)."""
    d = target.dim
    z = scale * rng.standard_normal((n, d))
    log_rho = -0.5 * (z**2).sum(1) / scale**2 - 0.5 * d * np.log(2 * np.pi * scale**2)
    return float(np.mean(log_rho + target.potential(z)))


@claim(
    "zolangevin/non-log-concave-v3",
    statement=(
        "on a d = 20 three-mode Gaussian mixture with weights 0.2/0.3/0.5 (non-log-concave), at an equal "
        "per-chain query budget, VR-ZO-LMC (b = 4, q = 4) meets all of: off-mode variance error <= 0.04, "
        "mode-weight TV <= 0.06, mode-plane mean error <= 0.15 sd (worst error / tolerance < 1), and its worst "
        "error / tolerance is below that of plain ZO-LMC at the best of the batches b in {4, 10, 20} chosen per "
        "seed after the fact (paired difference best plain ZO - VR-ZO > 0); the relative Fisher information "
        "along the run is reported against the theorem's KL(rho_0|pi)/(hN) rate"
    ),
    paper="Abstract (first non-asymptotic guarantee for ZO non-log-concave sampling in relative Fisher "
    "information); synthetic experiments",
    control="VR's control variate switched off: plain ZO-LMC (b = 4, same budget, on VR's own random stream, "
    "independent of the plain ZO b = 4 baseline's) runs in VR-ZO-LMC's place and is as hot as the baseline, so "
    "its worst error exceeds the tolerance and is no lower than the best plain ZO's",
    positive="the claimed effect planted at its size in VR's place: VR's b = 4 as accurate as plain ZO's largest "
    "batch b = d = 20 (Gaussian smoothing's noise at 20 directions, exact directional derivatives, its own "
    "stream), charged VR's queries (d + 1 per refresh, 2b + 1 per correction) at the same budget; same errors, "
    "best-batch baseline and thresholds",
    mechanisms=("control-variate",),
    judge=[
        Interval("worst error / tolerance, VR-ZO", below=1.0),
        Interval("worst error / tolerance, best plain ZO - VR-ZO", above=0.0),
    ],
)
def non_log_concave(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]["nlc"]
    target = _three_modes(cfg.dim)
    x0 = cfg.init_scale * np.random.default_rng([seed, 0]).standard_normal((cfg.n_chains, cfg.dim))
    vr_rng = np.random.default_rng([seed, 2])
    runs = {  # the arms differ in VR's slot only: VR, plain Gaussian smoothing, or the planted variance reduction
        "VR-ZO": {
            Arm.CLAIM: lambda: VarianceReduced(b=cfg.b, q=cfg.q, rng=vr_rng),
            Arm.NEGATIVE: lambda: GaussianSmoothing(b=cfg.b, rng=vr_rng),
            Arm.POSITIVE: lambda: _PlantedVR(target.grad, cfg.b, cfg.q, max(cfg.zo_batches), vr_rng),
        }[arm](),
    }
    for k, b in enumerate(cfg.zo_batches):
        runs[f"plain ZO b={b}"] = GaussianSmoothing(b=b, rng=np.random.default_rng([seed, 3 + k]))
    errors, fisher = {}, {}
    for k, (label, est) in enumerate(runs.items()):
        res = langevin(
            target,
            x0,
            step=cfg.step,
            estimator=est,
            query_budget=cfg.budget,
            n_snapshots=cfg.n_snapshots,
            rng=np.random.default_rng([seed, 10 + k]),
        )
        last = [s for _, _, s in res.trace[-cfg.n_snapshots // 4 :]]  # the last quarter of the budget, pooled
        errors[label] = _nlc_errors(target, np.concatenate(last))
        per_step = res.queries / res.n_steps  # snapshots are taken at query levels; convert them to steps
        fisher[label] = [(q, q / per_step, fisher_estimate(target, s)) for q, _, s in res.trace]
        errors[label]["steps"] = res.n_steps
    worst = {label: max(e[k] / t for k, t in NLC_TOL.items()) for label, e in errors.items()}
    zo_labels = [f"plain ZO b={b}" for b in cfg.zo_batches]
    best = min(zo_labels, key=worst.__getitem__)  # the strongest plain ZO, chosen on the judged errors
    diff = worst[best] - worst["VR-ZO"]
    verdict = "holds" if worst["VR-ZO"] < 1.0 and diff > 0.0 else "fails"
    kl0 = _kl_start(target, cfg.init_scale, np.random.default_rng([seed, 99]))
    measured = {
        "worst error / tolerance, VR-ZO": worst["VR-ZO"],
        "worst error / tolerance, best plain ZO - VR-ZO": diff,
        "worst error / tolerance, best plain ZO": worst[best],
        "best plain ZO batch": float(best.rsplit("=", 1)[1]),
    }
    baselines = {f"worst error / tolerance, {label}": worst[label] for label in zo_labels}
    for label, e in errors.items():
        dest = measured if label == "VR-ZO" else baselines
        for k in NLC_TOL:
            dest[f"{k} {label}"] = e[k]
        dest[f"Langevin steps {label}"] = e["steps"]
    # theorem (our reading): the average relative Fisher information over N iterates is at most about
    # KL(rho_0 | pi) / (h N) plus a bias floor; compare the running average at the budget with that bound
    for label in runs:
        fi = np.array([v for _, _, v in fisher[label]])
        steps = errors[label]["steps"]
        dest = measured if label == "VR-ZO" else baselines
        dest[f"mean relative Fisher {label}"] = float(fi.mean())
        dest[f"final relative Fisher {label}"] = float(fi[-1])
        dest[f"KL0/(hN) {label}"] = kl0 / (cfg.step * steps)
    measured["relative Fisher of exact samples"] = fisher_estimate(
        target, target.sample(cfg.n_chains, np.random.default_rng([seed, 98]))
    )
    reason = f"best plain ZO: {best}; " + ", ".join(
        f"{label}: {', '.join(f'{k} {e[k]:.3f}' for k in NLC_TOL)}" for label, e in errors.items()
    )
    return ClaimResult(
        verdict,
        measured=measured,
        paper={"relative Fisher information": "first non-asymptotic guarantee for ZO non-log-concave sampling"},
        baselines=baselines,
        reason=reason,
        figures={"fisher-vs-queries": _plot_fisher(fisher, kl0, cfg)} if arm is Arm.CLAIM else {},
    )


def _plot_fisher(fisher, kl0, cfg):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for label, pts in fisher.items():
        q, steps, v = map(np.asarray, zip(*pts, strict=True))
        (line,) = ax.plot(q, np.cumsum(v) / np.arange(1, len(v) + 1), marker=".", label=f"{label} (running mean)")
        ax.plot(q, kl0 / (cfg.step * steps), ":", color=line.get_color(), lw=0.8)
    ax.plot([], [], "k:", lw=0.8, label="KL(rho_0|pi) / (h N)")
    ax.set(xscale="log", yscale="log", xlabel="queries per chain", ylabel="relative Fisher information (est.)")
    ax.set_title(f"three-mode mixture, d = {cfg.dim}", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# 3. ZO-APMC on a black-box, likelihood-dominated image inverse problem


@functools.lru_cache(maxsize=4)
def _trained_prior(data: str, size: int, steps: int, width: int):
    """Train the score prior once per process (the claim's seeds vary images, noise and samplers)."""
    from .data import load_images
    from .prior import train_score_prior

    images = load_images(data, size=size, n=20_000 if data != "shapes" else 4000)
    return train_score_prior(images, n_steps=steps, width=width, seed=0, data=data)


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


@claim(
    "zolangevin/zo-apmc-v2",
    statement=(
        "on 14x14 MNIST with a subsampled Fourier-magnitude forward model queried as a black box, sigma_y = 0.01 "
        "(likelihood-dominated) and a locally trained score prior, ZO-APMC (VR, b = 4, q = 6) is closer than naive "
        "ZO-APMC at the same forward-query budget to the exact-gradient APMC posterior, in per-pixel mean and in "
        "per-pixel std (RMSE differences naive - VR > 0), and closer in mean than ensemble-Kalman guidance given "
        "the same forward queries (EnKG - VR > 0); 32 chains, 2 images per seed"
    ),
    paper="Abstract (ZO-APMC; 'strong empirical performance on practical linear and nonlinear inverse problems'); "
    "EnKG is the paper's derivative-free comparator",
    control="VR's control variate switched off: its recursion becomes plain ZO with the same b = 4 (b + 1 queries "
    "a step, VR's own random stream), so 'ZO-APMC' loses the variance reduction and falls behind naive ZO-APMC",
    positive="the claimed variance reduction planted at 1.5 x in VR's place: Gaussian smoothing with exact "
    "directional derivatives (autograd through the forward model) at 1.5 x naive ZO-APMC's batch (two thirds of "
    "its variance, no finite-difference error), on VR's random stream; same distances to the oracle, baselines "
    "and thresholds",
    mechanisms=("control-variate-apmc",),
    judge=[
        Interval("mean RMSE to oracle, naive - VR", above=0.0),
        Interval("std RMSE to oracle, naive - VR", above=0.0),
        Interval("mean RMSE to oracle, EnKG - VR", above=0.0),
    ],
)
def zo_apmc_v2(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from .apmc import InverseProblem, make_forward, psnr, zo_apmc
    from .data import available, load_images

    cfg = PRESETS[scale.value]["apmc"]
    data = cfg.data if available(cfg.data) else "shapes"
    prior = _trained_prior(data, cfg.size, cfg.prior_steps, cfg.prior_width)
    images = load_images(data, split="test", size=cfg.size, n=cfg.n_images, rng=np.random.default_rng([seed, 0]))
    n_steps = cfg.n_levels * cfg.steps_per_level
    d = cfg.size**2
    # forward queries per chain of ZO-APMC: a coordinate refresh (d + 1) every q steps, else 2b + 1
    vr_queries = sum((d + 1) if t % cfg.q == 0 else 2 * cfg.b + 1 for t in range(n_steps))
    per_step = vr_queries / n_steps
    b_naive = max(1, round(per_step) - 1)  # Gaussian smoothing spends b + 1 a step
    enkg_steps = cfg.steps_per_level * max(1, round(per_step))  # EnKG spends 1 a step: it runs this many more
    common = dict(n_chains=cfg.n_chains, n_levels=cfg.n_levels, step_scale=cfg.step_scale, sigma_range=cfg.sigma_range)
    forward = make_forward(cfg.problem, cfg.size)
    methods = {
        "oracle": dict(method="oracle", steps_per_level=cfg.steps_per_level),
        "oracle rerun": dict(method="oracle", steps_per_level=cfg.steps_per_level),
        # the arms differ here: the VR estimator, plain ZO with the same b (control variate off), or the planted
        # variance reduction (exact directional derivatives at 1.5 x naive's batch)
        "VR": dict(
            method={Arm.CLAIM: "vr-zo", Arm.NEGATIVE: "zo", Arm.POSITIVE: "planted"}[arm],
            b=round(1.5 * b_naive) if arm is Arm.POSITIVE else cfg.b,  # planted: 2/3 of naive's variance
            q=cfg.q,
            steps_per_level=cfg.steps_per_level,
        ),
        "naive": dict(method="zo", b=b_naive, steps_per_level=cfg.steps_per_level),
        "EnKG": dict(method="enkg", steps_per_level=enkg_steps),
    }
    per = {m: {"mean": [], "std": [], "psnr": [], "queries": []} for m in methods}
    example = None
    for i, img in enumerate(images):
        problem = InverseProblem.simulate(forward, img, cfg.sigma_y, np.random.default_rng([seed, 1, i]))
        runs = {
            m: zo_apmc(problem, prior, rng=np.random.default_rng([seed, 2, i, k]), **common, **kw)
            for k, (m, kw) in enumerate(methods.items())
        }
        ref = runs["oracle"]
        for m, res in runs.items():
            per[m]["mean"].append(_rmse(res.mean, ref.mean))
            per[m]["std"].append(_rmse(res.std, ref.std))
            per[m]["psnr"].append(psnr(res.mean, img.ravel()))
            per[m]["queries"].append(res.queries)
        if example is None:
            example = (img, runs)
    avg = {m: {k: float(np.mean(v)) for k, v in s.items()} for m, s in per.items()}
    measured = {
        "mean RMSE to oracle, naive - VR": avg["naive"]["mean"] - avg["VR"]["mean"],
        "std RMSE to oracle, naive - VR": avg["naive"]["std"] - avg["VR"]["std"],
        "mean RMSE to oracle, EnKG - VR": avg["EnKG"]["mean"] - avg["VR"]["mean"],
        "mean RMSE to oracle, VR": avg["VR"]["mean"],
        "std RMSE to oracle, VR": avg["VR"]["std"],
        "PSNR VR": avg["VR"]["psnr"],
        "forward queries/chain VR": avg["VR"]["queries"],
    }
    baselines = {}
    for m in ("naive", "EnKG", "oracle rerun"):
        baselines[f"mean RMSE to oracle, {m}"] = avg[m]["mean"]
        baselines[f"std RMSE to oracle, {m}"] = avg[m]["std"]
        baselines[f"PSNR {m}"] = avg[m]["psnr"]
    baselines["PSNR oracle"] = avg["oracle"]["psnr"]
    baselines["forward queries/chain naive"] = avg["naive"]["queries"]
    baselines["forward queries/chain EnKG"] = avg["EnKG"]["queries"]
    baselines["gradient evaluations/chain oracle"] = avg["oracle"]["queries"]
    ok = [measured[j] > 0 for j in ("mean RMSE to oracle, naive - VR", "std RMSE to oracle, naive - VR")]
    ok.append(measured["mean RMSE to oracle, EnKG - VR"] > 0)
    verdict = "holds" if all(ok) else "fails"
    reason = (
        f"RMSE of the posterior mean to the oracle's: VR {avg['VR']['mean']:.4f}, naive {avg['naive']['mean']:.4f}, "
        f"EnKG {avg['EnKG']['mean']:.4f}, oracle rerun {avg['oracle rerun']['mean']:.4f}; of the std: VR "
        f"{avg['VR']['std']:.4f}, naive {avg['naive']['std']:.4f}"
    )
    if data != cfg.data:
        reason += f" | {cfg.data} not installed: synthetic shapes used"
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
        figures={"posterior": _plot_posterior(example, cfg.size)} if arm is Arm.CLAIM else {},
    )


def _plot_posterior(example, size):
    import matplotlib.pyplot as plt

    img, runs = example
    methods = [m for m in runs if m != "oracle rerun"]
    fig, axes = plt.subplots(len(methods), 4, figsize=(7.5, 1.9 * len(methods)))
    for row, m in zip(np.atleast_2d(axes), methods, strict=True):
        res = runs[m]
        panels = [img, res.samples[0].reshape(size, size), res.mean.reshape(size, size), res.std.reshape(size, size)]
        for ax, p, t in zip(row, panels, ["truth", "sample", "posterior mean", "posterior std"], strict=True):
            ax.imshow(p, cmap="magma" if t == "posterior std" else "gray", vmin=0, vmax=None if "std" in t else 1)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(t, fontsize=8)
        row[0].set_ylabel(f"{m}\n{res.queries} q/chain", fontsize=8)
    fig.suptitle("Fourier magnitude, sigma_y = 0.01: ZO-APMC vs baselines", fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# mechanisms: does the VR recursion reduce the gradient error where the claims run it?


def _relative_mse(g: np.ndarray, g_true: np.ndarray) -> float:
    return float(((g - g_true) ** 2).sum() / (g_true**2).sum())


@mechanism(
    "control-variate",
    component="the VR recursion's control variate (the same directions at x_t and x_{t-1})",
    measures="relative gradient MSE of plain ZO (b = 4) over that of VR-ZO (b = 4, q = 4) along an exact-ULA path "
    "on the two-mode mixture at the batch claim's largest d and step h",
    above=2.0,
)
def control_variate(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]["dims"]
    d = cfg.dims[-1]
    target = GaussianMixture.two_modes(d)
    rng = np.random.default_rng([seed, d, 7])
    x = target.sample(max(16, cfg.chain_dims // d), rng)
    vr, zo = VarianceReduced(b=4, q=cfg.q, rng=rng), GaussianSmoothing(b=4, rng=rng)
    err = {"vr": [], "zo": []}
    for _ in range(8 * cfg.q):
        g = target.grad(x)
        err["vr"].append(_relative_mse(vr(target.potential, x), g))
        err["zo"].append(_relative_mse(zo(target.potential, x), g))
        x = x - cfg.step * g + np.sqrt(2 * cfg.step) * rng.standard_normal(x.shape)
    mse = {k: float(np.mean(v)) for k, v in err.items()}
    return {"control-variate": mse["zo"] / mse["vr"], "relative MSE VR": mse["vr"], "relative MSE plain ZO": mse["zo"]}


@mechanism(
    "control-variate-apmc",
    component="the VR recursion inside ZO-APMC (likelihood-dominated, sigma_y = 0.01)",
    measures="relative MSE of the data-fit gradient of naive ZO at ZO-APMC's query budget over that of VR "
    "(b = 4, q = 6), along an exact-gradient APMC path at the last noise level",
    above=1.0,
)
def control_variate_apmc(scale: Scale, seed: int) -> dict[str, float]:
    from .apmc import InverseProblem, make_forward
    from .data import available, load_images

    cfg = PRESETS[scale.value]["apmc"]
    data = cfg.data if available(cfg.data) else "shapes"
    prior = _trained_prior(data, cfg.size, cfg.prior_steps, cfg.prior_width)
    img = load_images(data, split="test", size=cfg.size, n=1, rng=np.random.default_rng([seed, 0]))[0]
    problem = InverseProblem.simulate(make_forward(cfg.problem, cfg.size), img, cfg.sigma_y,
                                      np.random.default_rng([seed, 1, 0]))  # fmt: skip
    d, n_steps = cfg.size**2, cfg.n_levels * cfg.steps_per_level
    per_step = sum((d + 1) if t % cfg.q == 0 else 2 * cfg.b + 1 for t in range(n_steps)) / n_steps
    rng = np.random.default_rng([seed, 8])
    f = problem.residual_black_box()
    vr = VarianceReduced(b=cfg.b, q=cfg.q, rng=rng)
    naive = GaussianSmoothing(b=max(1, round(per_step) - 1), rng=rng)
    sigmas = np.geomspace(*cfg.sigma_range, cfg.n_levels)
    x = sigmas[0] * rng.standard_normal((cfg.n_chains, d))
    err = {"vr": [], "naive": []}
    for level, sigma in enumerate(sigmas):  # the oracle's annealed Langevin path (the claim's schedule)
        gamma, weight = cfg.step_scale * sigma**2, 1.0 / (problem.sigma_y**2 + sigma**2)
        for _ in range(cfg.steps_per_level):
            g = problem.residual_grad(x)
            if level == len(sigmas) - 1:  # the likelihood-dominated end, where the recursion must keep up
                err["vr"].append(_relative_mse(vr(f, x), g))
                err["naive"].append(_relative_mse(naive(f, x), g))
            x = x + gamma * (prior.score(x, sigma) - weight * g) + np.sqrt(2 * gamma) * rng.standard_normal(x.shape)
    mse = {k: float(np.mean(v)) for k, v in err.items()}
    return {
        "control-variate-apmc": mse["naive"] / mse["vr"],
        "relative MSE VR": mse["vr"],
        "relative MSE naive ZO": mse["naive"],
    }


# ---------------------------------------------------------------------------------------------------------------
# measures, validated both ways


def _variance_bias_check(seed: int) -> dict[str, float]:
    """|excess off-axis variance bias| (the run's bias minus exact-gradient ULA's on the same start and Langevin
    noise) of the batch claim, at `small`'s chain count and smallest d: the exact gradient is the truth (0 by
    construction); an unbiased estimator with negligible noise (exact gradient + N(0, 1e-4), its own stream:
    the null) must stay within the 0.03 tolerance; ZO and VR at b = 1 must score worse than the truth."""
    cfg = PRESETS["small"]["dims"]
    d = cfg.dims[0]
    target = GaussianMixture.two_modes(d)
    x0 = target.sample(max(16, cfg.chain_dims // d), np.random.default_rng([seed, d]))
    ula = _run_bias(target, cfg, seed, d, x0, grad=target.grad)
    null = _DFreeNoise(target.grad, 1, 1e-4, np.random.default_rng([seed, d, 99]))
    scores = {"truth": 0.0, "null": abs(_run_bias(target, cfg, seed, d, x0, estimator=null) - ula)}
    for kind in ("zo", "vr"):
        est = _estimator(kind, 1, cfg.q, np.random.default_rng([seed, d, 2]))
        scores[f"{kind} b=1"] = abs(_run_bias(target, cfg, seed, d, x0, estimator=est) - ula)
    return scores


def _worst_error_check(seed: int) -> dict[str, float]:
    """Worst error / tolerance of the non-log-concave claim on as many samples as `small` pools: exact samples
    (truth) score best; the chains' start N(0, 1.5^2 I), a sampler that never moved (the null), must fail the
    tolerances; so must a law heated like plain ZO (b = 4) and one with equal mode weights."""
    cfg = PRESETS["small"]["nlc"]
    target = _three_modes(cfg.dim)
    rng = np.random.default_rng([seed, 97])
    n = cfg.n_chains * cfg.n_snapshots // 4
    exact = target.sample(n, rng)
    hot = exact.copy()
    hot[:, 2:] *= np.sqrt(1 + cfg.step * cfg.dim / (2 * cfg.b))  # plain ZO's stationary heat h d / (2b)
    equal = GaussianMixture(target.means, np.full(3, 1 / 3), np.ones(3)).sample(n, rng)
    start = cfg.init_scale * rng.standard_normal((n, cfg.dim))

    def worst(x):
        e = _nlc_errors(target, x)
        return max(e[k] / t for k, t in NLC_TOL.items())

    return {
        "truth": worst(exact),
        "hot (plain ZO b=4)": worst(hot),
        "equal weights": worst(equal),
        "null": worst(start),
    }


MEASURES = [
    MeasureCheck("|excess off-axis variance bias|", _variance_bias_check, null_band=(0.0, 0.03),
                 higher_is_better=False),
    MeasureCheck("worst error / tolerance", _worst_error_check, null_band=(1.0, 1e9), higher_is_better=False),
]  # fmt: skip
MECHANISMS = [control_variate, control_variate_apmc]
CLAIMS = [vr_removes_dimension_dependence, non_log_concave, zo_apmc_v2]
