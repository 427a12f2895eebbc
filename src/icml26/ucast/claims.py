"""U-Cast's headline claims, re-run on held-out trajectories of the Kolmogorov-flow simulator.

The three skill claims share one stage 1 per (scale, seed) and a few stage-2 variants (cached), so
``icml26 reproduce ucast`` trains each seed's stage 1, its CRPS stage 2 and the compute-matched MAE-continued
comparator once. ``fast-inference`` trains an EDM diffusion forecaster over the same U-Net on the same windows
and compares the two at equal CRPS; ``paper-latency`` needs a GPU.

Contract v3, three arms per claim. The negative controls of the skill claims change only what stage 2 is
(:data:`icml26.ucast.experiment.STAGE2`): the compute-matched MAE stage trained again on its own seed stream
(``mae_twin``), so "U-Cast" and the comparator are two independent runs of one recipe (an A/A run).
``fast-inference``'s negative times a second U-Cast ensemble (its own dropout masks) in the EDM's place. The
positive controls keep those A/A pairs and plant the claimed effect at about the bar: the comparator's errors
inflated by exactly 1.5 times the 1 % bar (:data:`PLANTED_GAIN`), an oracle ensemble with SSR 0.91 (just inside
the band), the twin charged 15 times its wall time (1.5 times the claimed 10x). The credited mechanisms
(:data:`MECHANISMS`) are probed against a reference: MC dropout's one-call spread (dropout off: 0) and the CRPS
stage's widening of it over the A/A MAE twin's; :data:`MEASURES` checks the claims' CRPS gain, RMSE gain and
SSR both ways and reads a planted effect at its size.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import torch

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.ucast.config import PAPER_CHANNELS, PAPER_FORCINGS, PAPER_GRID, PAPER_STATIC, get_preset
from icml26.ucast.data import latitude_weights
from icml26.ucast.experiment import _FORECAST_SEED, ExperimentResult, _init_indices, run_experiment, stage1, stage2
from icml26.ucast.metrics import deterministic_scores, ensemble_scores

#: Leads skipped by the claims ("at all leads beyond the first one or two").
SKIP_LEADS = 2
ENSEMBLES = ("ucast", "mae_continued", "mc_dropout", "ic_perturbed")
LABELS = {
    "ucast": "U-Cast (stage 2, MC dropout)",
    "mae_continued": "stage 1 + more MAE steps + MC dropout",
    "mc_dropout": "stage 1 + MC dropout",
    "ic_perturbed": "stage 1 + IC perturbation",
    "det": "stage 1 deterministic",
    "persistence": "persistence",
    "climatology": "climatology",
}


#: The gain the positive controls of the two gain claims plant: 1.5 times the claims' 1 % bar. The comparator
#: is handicapped by c = 1 / (1 - 0.015), so an exact tie between "U-Cast" and it becomes a 1.5 % gain.
PLANTED_GAIN = 0.015
#: Spread factor of the positive control's oracle in ``calibrated-spread``: members truth + s (eta + 0.9 xi_m) have
#: SSR sqrt((M+1)/M) 0.9 / sqrt(1 + 0.81/M) = 0.91 at M = 10, planted just inside the [0.85, 1.15] band.
ORACLE_SPREAD = 0.9
#: ``fast-inference``'s controls put a second U-Cast ensemble (its own dropout masks) in the EDM's place, an A/A
#: pair at 1x; the positive control charges that twin 15 times its measured wall time, 1.5 times the claimed 10x.
TWIN_HANDICAP = 15.0


def _preset(scale: Scale) -> str:
    return "smoke" if scale is Scale.SMOKE else "small"


def _experiment(scale: Scale, seed: int, stage2: str = "crps", handicap: float = 1.0) -> ExperimentResult:
    return run_experiment(_preset(scale), seed, stage2_variant=stage2, comparator_handicap=handicap)


def _gain_arm(scale: Scale, seed: int, arm: Arm) -> ExperimentResult:
    """The experiment behind one arm of a gain claim (``crps-finetune``, ``mean-skill``).

    Claim: the CRPS stage 2 against the compute-matched MAE-continued comparator. Negative: an A/A run, the
    comparator's recipe trained again on its own seed stream in U-Cast's place. Positive: the same A/A pair with
    the comparator's errors inflated by 1 / (1 - PLANTED_GAIN), a known gain of PLANTED_GAIN planted.
    """
    if arm is Arm.CLAIM:
        return _experiment(scale, seed, "crps")
    if arm is Arm.NEGATIVE:
        return _experiment(scale, seed, "mae_twin")
    return _experiment(scale, seed, "mae_twin", handicap=1 / (1 - PLANTED_GAIN))


def _why(scale: Scale, text: str) -> str:
    """A failure reason; at smoke scale (a few dozen training steps) the effects are not expected to show."""
    return text + (
        " (smoke scale: 30 stage-1 and 10 stage-2 steps; see the small-scale table)" if scale is Scale.SMOKE else ""
    )


def _lead_plot(res: ExperimentResult, metric: str, models, ylabel: str, ref: float | None = None):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name in models:
        ax.plot(res.leads, res.scores[name][metric], marker="o", ms=3, label=LABELS[name])
    if ref is not None:
        ax.axhline(ref, color="k", lw=0.8, ls="--")
    ax.set_xlabel("lead time (simulator units)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _late(res: ExperimentResult, name: str, metric: str) -> np.ndarray:
    return res.scores[name][metric][SKIP_LEADS:]


@claim(
    "ucast/crps-finetune-v2",
    statement="fair-CRPS fine-tuning (stage 2) gives lower CRPS, averaged over leads beyond the first two, than "
    "the compute-matched alternative: stage 1 trained for the same steps more on its MAE loss (M times the "
    "batch), then MC dropout (relative gain > 1 %)",
    paper="Abstract ('deterministic pre-training on Mean Absolute Error followed by short probabilistic "
    "fine-tuning on the Continuous Ranked Probability Score'); official code (stage-1 and stage-2 configs)",
    control="A/A: CRPS switched off, 'U-Cast' is the comparator's compute-matched MAE stage trained again on its "
    "own seed stream (other minibatches and dropout masks); the gain scatters around 0",
    positive="the same A/A pair with the comparator's forecast errors inflated by 1/(1 - 0.015) (x -> truth + "
    "c (x - truth)), which multiplies its CRPS by exactly c: a 1.5 % gain, 1.5 times the bar, planted",
    mechanisms=("dropout-spread", "crps-widening"),
    judge=Interval("CRPS gain vs MAE-continued", above=0.01),
)
def crps_finetune(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    res = _gain_arm(scale, seed, arm)  # the one line the arms change
    ours = _late(res, "ucast", "crps")
    cont, det, mcd = (_late(res, k, "crps") for k in ("mae_continued", "det", "mc_dropout"))
    gain = 1 - ours.mean() / cont.mean()
    holds = gain > 0.01
    fig = _lead_plot(
        res,
        "crps",
        ["ucast", "mae_continued", "mc_dropout", "ic_perturbed", "det", "persistence", "climatology"],
        "area-weighted CRPS (normalised)",
    )
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "CRPS gain vs MAE-continued": gain,
            "CRPS stage 2 (late leads)": ours.mean(),
            "gain vs det": 1 - ours.mean() / det.mean(),
            "gain vs stage-1 MC dropout": 1 - ours.mean() / mcd.mean(),
        },
        paper={"probabilistic skill": "matches or exceeds GenCast and IFS ENS at 1.5 deg (abstract)"},
        baselines={
            "CRPS MAE-continued + MC dropout": cont.mean(),
            "CRPS stage-1 MC dropout": mcd.mean(),
            "CRPS det (=MAE)": det.mean(),
            "CRPS IC-perturbed": _late(res, "ic_perturbed", "crps").mean(),
            "CRPS persistence": _late(res, "persistence", "crps").mean(),
            "CRPS climatology": _late(res, "climatology", "crps").mean(),
        },
        reason="" if holds else _why(scale, f"CRPS gain vs the MAE-continued model {gain:.1%} <= 1%"),
        figures={"crps_vs_lead": fig},
    )


@claim(
    "ucast/calibrated-spread-v2",
    statement="after CRPS fine-tuning the MC-dropout ensemble is well calibrated: its spread-skill ratio, "
    "averaged over leads beyond the first two, lies in [0.85, 1.15]",
    paper="Abstract (CRPS fine-tuning 'using Monte Carlo Dropout for stochasticity'); official code "
    "(spread/skill: GenCast-style SSR with the sqrt((M+1)/M) factor)",
    control="CRPS switched off: stage 2 takes the same steps on the stage-1 MAE loss (compute-matched, its own "
    "seed stream), so its MC-dropout spread stays as under-dispersed as stage 1's",
    positive="an oracle planted just inside the band at the same inits and leads: members truth + s (eta + 0.9 "
    "xi_m), with eta, xi_m independent N(0, 1) per grid point and s set so its ensemble mean is as skilful as "
    "stage 2's, an SSR of 0.91 up to sampling noise (0.06 above the band's lower edge)",
    mechanisms=("dropout-spread", "crps-widening"),
    judge=Interval("SSR stage 2", above=0.85, below=1.15),
)
def calibrated_spread(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    import matplotlib.pyplot as plt

    res = _experiment(scale, seed, "mae_twin" if arm is Arm.NEGATIVE else "crps")  # the negative's one line
    ssr = _late(res, "ucast", "ssr").mean()
    if arm is Arm.POSITIVE:  # the oracle in stage 2's place, scored by the same ensemble_scores
        name = _preset(scale)
        ssr = _late_scores(stage1(name, seed), _calibrated_oracle(name, seed, res), _sweep_inits(name, seed)[2])["ssr"]
    holds = 0.85 < ssr < 1.15
    fig = _lead_plot(res, "ssr", list(ENSEMBLES), "spread-skill ratio", ref=1.0)
    fig_rank, axes = plt.subplots(1, len(ENSEMBLES), figsize=(12, 2.8), sharey=True)
    for ax, name in zip(axes, ENSEMBLES):
        counts = res.rank_hist[name]
        ax.bar(np.arange(len(counts)), counts / counts.sum())
        ax.axhline(1 / len(counts), color="k", lw=0.8, ls="--")
        ax.set_title(LABELS[name], fontsize=8)
        ax.set_xlabel("rank of truth (last lead)")
    fig_rank.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"SSR stage 2": ssr},
        paper={"calibration": "well calibrated (spread-skill ratio near 1)"},
        baselines={
            "SSR MAE-continued + MC dropout": _late(res, "mae_continued", "ssr").mean(),
            "SSR stage-1 MC dropout": _late(res, "mc_dropout", "ssr").mean(),
            "SSR IC-perturbed": _late(res, "ic_perturbed", "ssr").mean(),
        },
        reason="" if holds else _why(scale, f"SSR stage 2 {ssr:.2f} outside [0.85, 1.15]"),
        figures={"ssr_vs_lead": fig, "rank_histogram": fig_rank},
    )


@claim(
    "ucast/mean-skill-v3",
    statement="the stage-2 ensemble-mean RMSE (WB2 convention: mean MSE over inits, then sqrt), averaged over "
    "leads beyond the first two, is lower than that of the compute-matched alternative: stage 1 trained for the "
    "same steps more on its MAE loss (M times the batch), then MC dropout (relative gain > 1 %)",
    paper="Abstract (deterministic MAE pre-training, then short CRPS fine-tuning); official code "
    "(ensemble-mean RMSE per lead)",
    control="A/A: CRPS switched off, 'U-Cast' is the comparator's compute-matched MAE stage trained again on its "
    "own seed stream (other minibatches and dropout masks); the gain scatters around 0",
    positive="the same A/A pair with the comparator's forecast errors inflated by 1/(1 - 0.015) (x -> truth + "
    "c (x - truth)), which multiplies its ensemble-mean RMSE by exactly c: a 1.5 % gain, 1.5 times the bar, planted",
    mechanisms=("dropout-spread", "crps-widening"),
    judge=Interval("RMSE gain vs MAE-continued", above=0.01),
)
def mean_skill(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    import matplotlib.pyplot as plt

    res = _gain_arm(scale, seed, arm)  # the one line the arms change
    ours, mcd = _late(res, "ucast", "rmse").mean(), _late(res, "mc_dropout", "rmse").mean()
    cont = _late(res, "mae_continued", "rmse").mean()
    gain = 1 - ours / cont
    holds = gain > 0.01
    fig = _lead_plot(
        res,
        "rmse",
        ["ucast", "mae_continued", "mc_dropout", "det", "persistence", "climatology"],
        "ensemble-mean RMSE (normalised, WB2)",
    )
    fig_map, axes = plt.subplots(1, 5, figsize=(13, 2.8))
    s = res.sample
    panels = [("truth", s["truth"]), ("stage 1 deterministic", s["det"])]
    panels += [(f"U-Cast member {i}", s["members"][i]) for i in range(3)]
    vmax = float(np.abs(s["truth"]).max())
    for ax, (title, field) in zip(axes, panels):
        ax.pcolormesh(s["lon"], s["lat"], field, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
        ax.set_title(f"{title}\n(vorticity, lead {res.leads[-1]:g})", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig_map.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "RMSE gain vs MAE-continued": gain,
            "RMSE stage 2 - RMSE MAE-continued": ours - cont,
            "RMSE stage 2 - RMSE stage-1 MC dropout": ours - mcd,
            "RMSE stage 2 ens. mean": ours,
            "RMSE stage 2 (per-init convention)": _late(res, "ucast", "rmse_per_init").mean(),
        },
        paper={},
        baselines={
            "RMSE MAE-continued + MC dropout": cont,
            "RMSE stage-1 MC dropout": mcd,
            "RMSE det": _late(res, "det", "rmse").mean(),
            "RMSE climatology": _late(res, "climatology", "rmse").mean(),
        },
        reason="" if holds else _why(scale, f"RMSE gain vs the MAE-continued model {gain:.1%} <= 1%"),
        figures={"rmse_vs_lead": fig, "sample_forecast": fig_map},
    )


#: Heun step counts tried for the trained EDM, cheapest first; the sweep stops at the first that matches U-Cast.
EDM_STEPS = {"smoke": (1, 2), "small": (1, 2, 3, 4, 5, 6, 8, 10, 14, 20)}
#: Largest noise levels of the sampler's schedule: 5 suits unit-scale residuals at few steps, 80 is EDM's default
#: (a seed-0 probe: at 4 Heun steps CRPS 0.50 from 5, 0.55 from 20, 0.84 from 80); the cheaper match counts.
EDM_SIGMA_MAX = (5.0, 80.0)


@functools.lru_cache(maxsize=8)
def _trained_edm(preset_name: str, seed: int):
    """An EDM forecaster over U-Cast's U-Net, trained on the same windows with stage 1's optimiser and schedule
    for as many training samples as U-Cast's two stages (stage 2 evaluates M members of each sample)."""
    from dataclasses import replace

    from icml26.ucast.diffusion import EDMForecaster, train_edm

    s1 = stage1(preset_name, seed)
    p, c, n_static = s1.preset, s1.z_train.shape[2], s1.static.shape[0]
    samples = p.det.steps * p.det.batch_size + p.prob.steps * p.prob.batch_size * p.prob.members
    cfg = replace(p.det, steps=samples // p.det.batch_size, checkpoint_every=0)
    with torch.random.fork_rng():
        torch.manual_seed(seed + 30_000)
        edm = EDMForecaster(p.model, c, 2 * c + n_static)
    t0 = time.perf_counter()
    edm, losses = train_edm(edm, s1.z_train, s1.static, s1.det.res_std, cfg, seed=seed)
    return edm, losses, time.perf_counter() - t0


def _edm_forecast(preset_name: str, seed: int, n_steps: int, sigma_max: float) -> tuple[torch.Tensor, float]:
    """The trained EDM's ensemble on the sweep's inits with ``n_steps`` Heun steps, and its wall time."""
    s1 = stage1(preset_name, seed)
    edm, p = _trained_edm(preset_name, seed)[0], s1.preset
    zp, zc, _ = _sweep_inits(preset_name, seed)
    static = torch.as_tensor(s1.static)
    torch.manual_seed(_FORECAST_SEED + 1_000 * seed + 7)
    t0 = time.perf_counter()
    with torch.no_grad():
        fc = edm.rollout(zp, zc, static, p.eval_members, p.eval_steps, n_steps, s1.det.res_std, sigma_max)
    return fc, time.perf_counter() - t0


@functools.lru_cache(maxsize=128)
def _edm_point(preset_name: str, seed: int, n_steps: int, sigma_max: float) -> tuple[float, float]:
    """(late-lead CRPS, seconds) of the trained EDM's ensemble with ``n_steps`` Heun steps (cached)."""
    fc, seconds = _edm_forecast(preset_name, seed, n_steps, sigma_max)
    return _late_crps(stage1(preset_name, seed), fc, _sweep_inits(preset_name, seed)[2]), seconds


@functools.lru_cache(maxsize=8)
def _sweep_inits(preset_name: str, seed: int):
    """(z_prev, z_cur, truth) at the claims' initial conditions (cached; not modified by the callers)."""
    s1 = stage1(preset_name, seed)
    p = s1.preset
    idx = _init_indices(s1.z_test.shape[0], s1.z_test.shape[1], p.eval_steps, p.n_inits)  # the claims' inits
    b, t = idx[:, 0], idx[:, 1]
    truth = np.stack([s1.z_test[b, t + k] for k in range(1, p.eval_steps + 1)], axis=1)  # (N, S, C, H, W)
    return torch.as_tensor(s1.z_test[b, t - 1]), torch.as_tensor(s1.z_test[b, t]), truth


def _late_scores(s1, fc: torch.Tensor, truth: np.ndarray) -> dict[str, float]:
    """Area-weighted scores of an ensemble (M, S, N, C, H, W) against ``truth`` (N, S, C, H, W), each averaged
    over channels and leads > SKIP_LEADS as the claims average :func:`run_experiment`'s scores."""
    scores = ensemble_scores(fc.transpose(1, 2).numpy(), truth, latitude_weights(s1.lat))
    return {k: float(v.mean(axis=-1)[SKIP_LEADS:].mean()) for k, v in scores.items()}


def _late_crps(s1, fc: torch.Tensor, truth: np.ndarray) -> float:
    """Area-weighted CRPS of an ensemble (M, S, N, C, H, W) averaged over channels and leads > SKIP_LEADS."""
    return _late_scores(s1, fc, truth)["crps"]


def _calibrated_oracle(preset_name: str, seed: int, res: ExperimentResult) -> torch.Tensor:
    """The positive control's oracle (M, S, N, C, H, W) at the claims' inits: members truth + s (eta + k xi_m),
    k = ORACLE_SPREAD, eta and xi_m independent N(0, 1) per grid point; with k = 1 the truth would be exchangeable
    with the members (SSR 1), with k = 0.9 the SSR is sqrt((M+1)/M) k / sqrt(1 + k^2/M), just inside the band.
    s per lead is the stage-2 ensemble-mean RMSE / sqrt(1 + k^2/M), so the oracle's ensemble mean is as
    skilful as stage 2's."""
    s1 = stage1(preset_name, seed)
    truth = np.swapaxes(_sweep_inits(preset_name, seed)[2], 0, 1)  # (S, N, C, H, W)
    m, k = s1.preset.eval_members, ORACLE_SPREAD
    scale = res.scores["ucast"]["rmse"] / np.sqrt(1 + k**2 / m)  # (S,)
    rng = np.random.default_rng([seed, 31])
    centre = truth + scale[:, None, None, None, None] * rng.standard_normal(truth.shape)
    members = centre + k * scale[:, None, None, None, None] * rng.standard_normal((m, *truth.shape))
    return torch.as_tensor(members, dtype=torch.float32)


@claim(
    "ucast/fast-inference-v2",
    statement="at equal CRPS (late leads), U-Cast's MC-dropout ensemble is drawn at least 10x faster than by an "
    "EDM diffusion forecaster over the same U-Net trained on the same windows for as many training samples as "
    "U-Cast's two stages, with stage 1's optimiser; the EDM uses the fewest deterministic Heun steps (1, ..., 20; "
    "rho 7, sigma_min 0.002, sigma_max 5 or 80) whose CRPS matches U-Cast's (none: no speed-up)",
    paper="Abstract ('reducing ... inference latency by over 10x compared to diffusion-based models')",
    control="A/A: a second U-Cast ensemble (the same stage-2 model, its own dropout masks) in the EDM's place, "
    "equal CRPS up to mask sampling (counted as matched): one network call per member-step on both sides, so the "
    "speed-up scatters around 1x (log10 around 0)",
    positive="the negative's A/A pair with the twin's wall time charged 15 times (each of its network calls counted "
    "as fifteen): a 15x speed-up at equal CRPS, 1.5 times the claimed 10x, planted through the same timing and "
    "verdict",
    mechanisms=("dropout-spread",),
    judge=Interval("log10 speed-up at equal CRPS", above=1.0),
)
def fast_inference_v2(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.ucast.forecast import rollout

    name = "smoke" if scale is Scale.SMOKE else "small"
    s1 = stage1(name, seed)
    p = s1.preset
    zp, zc, truth = _sweep_inits(name, seed)
    model = stage2(name, seed, "crps")[0]

    def ucast_forecast(stream: int = 0) -> tuple[torch.Tensor, float]:
        torch.manual_seed(_FORECAST_SEED + 1_000 * seed + 500 * stream)  # stream 1: the A/A twin's dropout masks
        t0 = time.perf_counter()
        fc = rollout(model, zp, zc, p.eval_members, p.eval_steps, dropout=True)
        return fc, time.perf_counter() - t0

    fc, t_first = ucast_forecast()
    crps_u = _late_crps(s1, fc, truth)
    if arm is not Arm.CLAIM:  # both controls: a second U-Cast ensemble on its own masks in the EDM's place (A/A)
        return _fast_inference_twin(scale, arm, s1, truth, crps_u, t_first, ucast_forecast)
    # cheapest (Heun steps, sigma_max) whose CRPS matches: per schedule, step counts in increasing order,
    # stopping at a match or at the step count of a cheaper match already found (cost grows with the steps)
    sweep: dict[tuple[int, float], tuple[float, float]] = {}
    best: tuple[int, float] | None = None
    for sigma_max in EDM_SIGMA_MAX:
        for n in EDM_STEPS[name]:
            if best is not None and n >= best[0]:
                break
            sweep[n, sigma_max] = _edm_point(name, seed, n, sigma_max)
            if sweep[n, sigma_max][0] <= crps_u:
                best = (n, sigma_max)
                break
    matched = best is not None
    star = best if matched else min(sweep, key=lambda k: sweep[k][0])
    # wall times: each side best of its runs, the later ones interleaved after the sweep (same machine state)
    t_u = min(t_first, ucast_forecast()[1])
    t_star = min(sweep[star][1], _edm_forecast(name, seed, *star)[1])
    t_u = min(t_u, ucast_forecast()[1])
    speedup = t_star / t_u
    # no EDM sampler reached U-Cast's CRPS: an accuracy gap, not a speed-up; no credit (log10 = 0)
    log_speedup = float(np.log10(speedup)) if matched else 0.0
    edm_losses = _trained_edm(name, seed)[1]
    measured = {
        "log10 speed-up at equal CRPS": log_speedup,
        "speed-up at equal CRPS": speedup if matched else 1.0,
        "network calls per member-step, EDM / U-Cast": float(2 * star[0] - 1),
        "EDM Heun steps to match U-Cast's CRPS": float(star[0]),
        "EDM sigma_max of that match": star[1],
        "EDM matched U-Cast's CRPS (1) or the bound at the most steps (0)": float(bool(matched)),
        "CRPS U-Cast": crps_u,
        "s per ensemble forecast, U-Cast": t_u,
    }
    baselines = {f"CRPS EDM, {n} Heun steps from sigma {m:g}": c for (n, m), (c, _) in sweep.items()}
    baselines.update({f"s per forecast, EDM {n} steps from sigma {m:g}": t for (n, m), (_, t) in sweep.items()})
    baselines["EDM training loss, first / last 10 %"] = float(
        np.mean(edm_losses[: max(1, len(edm_losses) // 10)]) / np.mean(edm_losses[-max(1, len(edm_losses) // 10) :])
    )
    baselines["EDM training s"] = _trained_edm(name, seed)[2]
    holds = matched and speedup >= 10
    notes = [] if holds or not matched else [_why(scale, f"speed-up at equal CRPS {speedup:.1f}x < 10x")]
    if not matched:
        top = max(EDM_STEPS[name])
        notes.append(f"no EDM sampler up to {top} steps matched U-Cast's CRPS: counted as no speed-up")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"inference latency vs diffusion-based models": "over 10x lower (abstract)"},
        baselines=baselines,
        reason="; ".join(notes),
    )


def _fast_inference_twin(scale, arm, s1, truth, crps_u, t_first, ucast_forecast) -> ClaimResult:
    """``fast-inference``'s controls: the twin ensemble (stream 1) timed like the matched EDM sampler, interleaved
    with U-Cast's runs, best of each; the positive control charges it TWIN_HANDICAP times its wall time."""
    twin_fc, t_twin = ucast_forecast(1)
    crps_twin = _late_crps(s1, twin_fc, truth)
    t_u = min(t_first, ucast_forecast()[1])
    t_twin = min(t_twin, ucast_forecast(1)[1])
    t_u = min(t_u, ucast_forecast()[1])
    if arm is Arm.POSITIVE:  # the positive control's one line: every twin network call charged as fifteen
        t_twin *= TWIN_HANDICAP
    speedup = t_twin / t_u
    holds = speedup >= 10
    measured = {
        "log10 speed-up at equal CRPS": float(np.log10(speedup)),
        "speed-up at equal CRPS": speedup,
        "network calls per member-step, EDM / U-Cast": 1.0,  # the twin: U-Cast's own one call
        "EDM Heun steps to match U-Cast's CRPS": 0.0,  # no diffusion sampler in the A/A pair
        "EDM sigma_max of that match": 0.0,
        "EDM matched U-Cast's CRPS (1) or the bound at the most steps (0)": 1.0,  # the same forecaster
        "CRPS U-Cast": crps_u,
        "s per ensemble forecast, U-Cast": t_u,
    }
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"inference latency vs diffusion-based models": "over 10x lower (abstract)"},
        baselines={"CRPS U-Cast twin (own dropout masks)": crps_twin, "s per forecast, U-Cast twin": t_twin},
        reason="" if holds else _why(scale, f"speed-up of the twin pair {speedup:.2f}x < 10x"),
    )


def _ensemble_seconds(
    model_cfg,
    n_channels: int,
    n_static: int,
    n_forcings: int,
    grid,
    members: int,
    steps: int,
    device: torch.device,
    control: bool = False,
) -> float:
    """Seconds of one ``members`` x ``steps`` ensemble forecast under bf16 autocast (random weights), after a
    2-step warm-up; ``control``: every member-step drawn by the EDM sampler (20 Heun steps) instead."""
    from icml26.ucast.diffusion import EDMForecaster
    from icml26.ucast.forecast import rollout
    from icml26.ucast.model import UCast

    h, w = grid
    ones = np.ones(n_channels, np.float32)
    lat, lon = np.linspace(-90, 90, h), np.arange(w) * 360.0 / w
    model = UCast(model_cfg, n_channels, 0 * ones, ones, ones, np.zeros((n_static, h, w)), lat, lon, n_forcings)
    model = model.to(device)
    z = torch.randn(1, n_channels, h, w, device=device)
    f = torch.zeros(steps, 1, n_forcings, device=device)
    if control:
        edm = EDMForecaster(model_cfg, n_channels, 2 * n_channels + n_static).to(device).eval()

    def forecast(k: int) -> None:
        # the one line the control changes: U-Cast's single call per step, or the 39-call EDM sampler
        if control:
            edm.rollout(z, z, model.static, members, k, n_steps=20)
        else:
            rollout(model, z, z, members, k, forcings=f[:k])

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    with torch.autocast(device.type, dtype=torch.bfloat16):
        forecast(2)  # warm-up
        sync()
        t0 = time.perf_counter()
        forecast(steps)
        sync()
    return time.perf_counter() - t0


@claim(
    "ucast/paper-latency-v1",
    statement="a 10-member, 30-step (15-day) ensemble at 240 x 121 with the paper's U-Net widths takes about "
    "3 s, the abstract's figure (which names no hardware; we time one GPU; random weights; latency only)",
    paper="Abstract v2 (15-day ensemble in 3 s; v1: 60-step ensemble in 11 s)",
    control="U-Cast's one network call per member-step replaced by the EDM Heun sampler over the same "
    "paper-width U-Net (39 calls per member-step); GPU only, like the claim",
    positive="the same timing of a tenth of the work (10 members x 3 steps): a forecaster 10x faster than the "
    "claim's, which any GPU that runs the paper's U-Net at a tenth of the paper's speed must time under 6 s",
    gpu=True,
)
def paper_latency(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    paper = {"seconds (15-day ensemble)": 3.0}
    elsewhere = {"seconds per initial condition, 10 members x 30 steps, H200 [official code]": 10.0}
    if scale is not Scale.PAPER or not torch.cuda.is_available():
        why = []
        if scale is not Scale.PAPER:
            why.append(f"the scale is {scale.value!r}, not 'paper'")
        if not torch.cuda.is_available():
            why.append("no CUDA GPU is available")
        return ClaimResult(
            "not-measured",
            paper=paper,
            elsewhere=elsewhere,
            reason="GPU only, at --scale paper (300 evaluations of the paper-width U-Net on the 240 x 121 grid "
            f"are far beyond a 2-core CPU): {' and '.join(why)}",
        )
    torch.manual_seed(seed)
    model_cfg = get_preset("paper").model
    cuda = torch.device("cuda")
    members, steps = 10, 3 if arm is Arm.POSITIVE else 30  # the positive control's one line: a tenth of the work
    seconds = _ensemble_seconds(
        model_cfg, PAPER_CHANNELS, PAPER_STATIC, PAPER_FORCINGS, PAPER_GRID, members, steps, cuda, arm is Arm.NEGATIVE
    )
    holds = seconds <= 2 * 3.0
    device = torch.cuda.get_device_name()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "seconds": seconds,
            "members": members,
            "steps": steps,
            "member-steps per second": members * steps / seconds,
        },
        paper=paper,
        elsewhere=elsewhere,
        reason=f"device {device}; {members} members x {steps} steps in {seconds:.2f} s; bf16 autocast"
        + ("" if holds else "; more than 2x the paper's 3 s"),
    )


# ---------------------------------------------------------------------------------------------------------
# Credited mechanisms and their liveness probes (the same cached experiment as the claims: no extra training)
# ---------------------------------------------------------------------------------------------------------


def _one_step(preset_name: str, seed: int, model, members: int, dropout: bool) -> torch.Tensor:
    """One network call per member from the claims' initial conditions: (M, 1, N, C, H, W), masks seeded."""
    from icml26.ucast.forecast import rollout

    zp, zc, _ = _sweep_inits(preset_name, seed)
    torch.manual_seed(_FORECAST_SEED + 1_000 * seed + 900)
    return rollout(model, zp, zc, members, 1, dropout=dropout)


@mechanism(
    "dropout-spread",
    component="MC dropout kept on at inference (dropout 0.1 before the second convolution of every residual "
    "block): the ensemble's only source of spread",
    measures="member spread MC dropout creates in one network call of the stage-2 model (lead 1, the component "
    "acting before the flow's chaos amplifies it) over that call's error with dropout off (the one-step RMSE the "
    "spread must cover); the ablated reference, the same members with dropout off, has spread 0",
    above=0.25,
)
def dropout_spread(scale: Scale, seed: int) -> dict[str, float]:
    name = _preset(scale)
    s1, model = stage1(name, seed), stage2(name, seed, "crps")[0]
    truth = _sweep_inits(name, seed)[2][:, :1]  # (N, 1, C, H, W)
    w = latitude_weights(s1.lat)

    def spread(dropout: bool) -> float:
        fc = _one_step(name, seed, model, s1.preset.eval_members, dropout)
        return float(ensemble_scores(fc.transpose(1, 2).numpy(), truth, w)["spread"].mean())

    det = _one_step(name, seed, model, 1, dropout=False)[0].transpose(0, 1).numpy()  # (N, 1, C, H, W)
    error = float(deterministic_scores(det, truth, w)["rmse"].mean())
    on, off = spread(True), spread(False)
    return {
        "dropout-spread": on / error,
        "one-step spread, dropout on": on,
        "one-step spread, dropout off (ablated reference)": off,
        "one-step RMSE, dropout off": error,
    }


@mechanism(
    "crps-widening",
    component="the fair-CRPS stage 2 (M = 2 MC-dropout members per sample), which rewards spread where MAE does not",
    measures="one-step (lead 1) MC-dropout spread of the CRPS stage over that of the compute-matched MAE stage, "
    "minus the same ratio for the A/A reference (the MAE stage trained again on its own seed stream): 0 when the "
    "CRPS loss leaves the network's dropout response as MAE training does",
    above=0.05,
)
def crps_widening(scale: Scale, seed: int) -> dict[str, float]:
    ours = _experiment(scale, seed, "crps").scores  # the claims' cached experiments: no extra training
    twin = _experiment(scale, seed, "mae_twin").scores
    cont = ours["mae_continued"]["spread"][0]  # the same comparator ensemble (same masks) in both experiments
    ratio, reference = ours["ucast"]["spread"][0] / cont, twin["ucast"]["spread"][0] / cont
    return {
        "crps-widening": ratio - reference,
        "one-step spread, CRPS / MAE stage": ratio,
        "one-step spread, MAE twin / MAE stage (A/A reference)": reference,
        "late-lead spread, CRPS / MAE stage": _late(_experiment(scale, seed, "crps"), "ucast", "spread").mean()
        / _late(_experiment(scale, seed, "crps"), "mae_continued", "spread").mean(),
    }


# ---------------------------------------------------------------------------------------------------------
# The claims' measures, validated both ways on a synthetic ensemble problem with a known predictive law
# ---------------------------------------------------------------------------------------------------------


def _synthetic(seed: int, m: int = 10) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Truth (N, S, C, H, W) on a 16 x 16 grid, a calibrated comparator ensemble (M, N, S, C, H, W) and its
    latitude weights: given the centre, truth and members are i.i.d. N(centre, 1)."""
    rng = np.random.default_rng([seed, 77])
    shape = (96, 3, 2, 16, 16)  # 96 inits: the null gain's sampling sd is ~0.0013, an eighth of the 1 % bar
    centre = rng.standard_normal(shape)
    truth = centre + rng.standard_normal(shape)

    def ensemble(spread: float, centre_=centre) -> np.ndarray:
        return centre_ + spread * rng.standard_normal((m, *shape))

    lat = np.linspace(-84.375, 84.375, 16)
    return truth, {"calibrated": ensemble(1.0), "ensemble": ensemble}, latitude_weights(lat)


#: The gain the measure checks plant on the null pair (1.5 times the claims' 1 % bar); it must read at its size.
MEASURE_PLANTED_GAIN = 0.015
#: The null band of the gain measures: 0.4 times the claims' 1 % bar (about 3 sampling sd of the null gain).
GAIN_NULL_BAND = (-0.004, 0.004)


def _gain_check(metric: str):
    """The claims' relative gain 1 - score(candidate) / score(comparator), for ``metric`` (crps or rmse)."""

    def run(seed: int) -> dict[str, float]:
        truth, ens, w = _synthetic(seed)
        make = ens["ensemble"]
        comparator = ens["calibrated"]

        def score(fc: np.ndarray) -> float:
            return float(ensemble_scores(fc, truth, w)[metric].mean())

        base = score(comparator)
        exact = np.broadcast_to(truth, comparator.shape)  # every member the truth: the exact forecast
        sharper = make(1.0, truth + 0.5 * (comparator.mean(axis=0) - truth))  # half the centre's error
        null = make(1.0)  # a second draw of the comparator's own law: no gain
        c = 1 / (1 - MEASURE_PLANTED_GAIN)  # the claims' positive-control handicap, x -> truth + c (x - truth)
        return {
            "truth": 1 - score(exact) / base,
            "sharper centre": 1 - score(sharper) / base,
            "collapsed (one member repeated)": 1 - score(np.broadcast_to(comparator[:1], comparator.shape)) / base,
            "null": 1 - score(null) / base,
            "planted": 1 - score(null) / score(truth + c * (comparator - truth)),  # must read MEASURE_PLANTED_GAIN
        }

    return run


def _ssr_check(seed: int) -> dict[str, float]:
    """|SSR - 1| of the claims' spread-skill ratio: the calibrated ensemble near 0, a collapsed one exactly 1."""
    truth, ens, w = _synthetic(seed)
    make = ens["ensemble"]

    def miss(fc: np.ndarray) -> float:
        return abs(float(ensemble_scores(fc, truth, w)["ssr"].mean()) - 1)

    calibrated = ens["calibrated"]
    return {
        "truth": miss(calibrated),  # members exchangeable with the truth
        "under-dispersed (spread x 0.5)": miss(make(0.5)),
        "over-dispersed (spread x 2)": miss(make(2.0)),
        "null": miss(np.broadcast_to(calibrated[:1], calibrated.shape)),  # no spread: SSR 0
        # spread x 0.85 (the band's lower edge): SSR = sqrt((M+1)/M) 0.85 / sqrt(1 + 0.85^2/M), |SSR - 1| ~ 0.14
        "planted": miss(make(0.85)),
    }


MEASURES = [
    MeasureCheck("CRPS gain vs comparator", _gain_check("crps"), null_band=GAIN_NULL_BAND),
    MeasureCheck("ensemble-mean RMSE gain vs comparator", _gain_check("rmse"), null_band=GAIN_NULL_BAND),
    MeasureCheck("|SSR - 1|", _ssr_check, null_band=(0.99, 1.01), higher_is_better=False, margin=0.1),
]
MECHANISMS = [dropout_spread, crps_widening]
CLAIMS = [crps_finetune, calibrated_spread, mean_skill, fast_inference_v2, paper_latency]
