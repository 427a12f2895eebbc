"""The headline claims of Dynamic Compression Flow (v2, issue 16), on Lorenz-63 latents driving Poisson neurons
through nonlinear tuning curves (noise-dominated, 3 Hz).

Ground truth is the Lorenz state and the noise-free rates; every method is fitted on training trials and scored
on held-out trials (see :mod:`icml26.dualflow.experiment`). Comparisons are judged by 95 % intervals of paired
per-seed differences (5 seeds at ``small``); every threshold below was written before the first ``small`` run.

- ``better-latents-v3``: DCF's 3-D latent vs the best of PCA, GPFA and CEBRA-Time (linear and kNN decoding of the
  state, kNN overlap with the true state's neighbours), by a margin;
- ``low-dimensional-support-v2``: K_eff vs the budget 1/p and vs PCA's dimension; the trained head of the
  spectrum decays;
- ``reconstruction-v4``: reconstruction of the true rates from K = 3 and K = 1/p latent coordinates vs PCA, by a
  margin;
- ``identifiable-v3``: cross-seed agreement of the coordinates separated by a spectral gap vs the VAE, by 0.05;
- ``simulated-representation-v2``: the rollout of v_theta at tau = 0 follows the flowed latent better than a
  linear autoregression fitted on the flowed training latents;
- ``real-place-cells-v3`` (issue 40 review): on real rat hippocampal units (bundled nelpy linear track), DCF's 3-D
  latent decodes the animal's position on held-out laps better than the best of PCA, GPFA and the VAE (DCF and the
  VAE tuned on the same validation grid; each seed its own split), by a margin (:mod:`icml26.dualflow.real`);
- ``temporal-terms-v2`` (issue 40 third review): the credited temporal terms (L_df, L_td) improve the flowed
  latent of a limit cycle seen through tuning curves, against DCF with beta = gamma = 0; every arm pairs two model
  seeds the same way (v1 paired the claim on one model seed, its controls on two); each term off alone is recorded;
- ``real-forecast-v3`` (issue 40 third review): on the held-out laps, v_theta's rollout at tau = 0 forecasts the
  flowed latent of the next 5 bins better than a linear autoregression, by 10 % (v1's A/A twin was fitted on a
  bootstrap resample, biased to overfit; the twin now shuffles whole lap pairs, and v2's bar at the A/A null
  became a margin; the probe now runs on the laps).

real-place-cells-v3 draws its seeds from seed + FRESH (5000), temporal-terms-v2 from seed + FRESH_V2 (8000) and
real-forecast-v3 from seed + FORECAST_SEEDS (10000): seeds never used during development or by an earlier
version.

Contract v3: every claim runs three arms on the same data and measurement. The comparisons have an A/A negative
control: a second DCF (model seed + 1000) in the peers' place (``better-latents``, ``reconstruction``,
``real-place-cells``), a second VAE
pair in DCF's place (``identifiable``), a second linear autoregression fitted on a bootstrap resample of the
training trials in the rollout's place (``simulated-representation``); ``low-dimensional-support`` switches nested
dropout off in a fit on its own model seed. Positive controls keep those A/A pairs and plant the claimed effect at
about the claim's bar: the twin handicapped by 1.5 times each judged margin, the VAE pair's score lowered by 0.05,
the twin forecaster's squared error scaled by 0.9, a geometric envelope with K_eff = 0.8 / p on the A/A spectrum.
:data:`MECHANISMS` probes nested dropout's ordering (against the A/A fit without it), the flow's compression, the
dynamical flow (on Lorenz, and on the real laps for ``real-forecast``) and whether L_td is wired in (gamma 1 -> 10);
:data:`MEASURES` checks every measure on the truth and on a null latent.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from matplotlib.figure import Figure

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.dualflow.estimator import effective_dimension
from icml26.dualflow.experiment import (
    ABLATIONS,
    CREDITED_OFF,
    FRESH,
    FRESH_V2,
    GAMMA_UP,
    N_LATENT,
    SETTINGS,
    budget_k,
    dataset,
    fit_dcf,
    fit_peers,
    fit_vae,
    fit_vdp,
    linear_twin_forecast,
    n_train,
    relative_error,
    vdp_pca,
)
from icml26.dualflow.metrics import (
    knn_decoding_r2,
    knn_overlap,
    latent_decoding_r2,
    reconstruction_r2,
    seed_consistency,
)

#: The credited component switched off (a keyword override of DualFlow in fit_dcf), fitted on the twin's seed:
NO_NESTED_DROPOUT = {"nested_dropout": False}  # every latent coordinate kept in every step: nothing orders them
#: Rule fixed before the run: coordinate i counts as separated when d_i / d_(i+1) > GAP (and d_(i-1) / d_i > GAP
#: for i > 1) in both seeds' spectra; identifiability up to sign needs distinct scales.
GAP = 1.5
HEAD_FRACTION = 0.1  # the "trained head": coordinates unmasked in at least 10 % of training windows
#: Model seed offset of the A/A twin (the same DCF fitted again): shared with ``identifiable``'s second seed.
TWIN = 1000
#: The positive controls plant 1.5 times each judged margin on the A/A pair (fixed before any v3 run).
PLANT = 1.5
LATENT_BARS = {"linear_r2": 0.02, "knn_r2": 0.02, "overlap": 0.01}  # better-latents-v3's judged margins
RECONSTRUCTION_BAR = 0.02  # reconstruction-v4's judged margin, at both K
#: identifiable-v3's margin in cross-seed |cos| (v2's bar at 0 let an A/A tie pass on half the seeds); fixed before
#: any v3 run, after v2 failed at small by -0.74 on every seed (a stricter bar cannot have been tuned to hold).
IDENTIFIABLE_BAR = 0.05
#: simulated-representation's bar is a ratio below 1: the planted forecaster has 10 % less squared error.
PLANTED_ERROR_RATIO = 0.9
#: low-dimensional-support's bar is K_eff < 1/p: the planted envelope has K_eff = 0.8 / p (20 % inside the bar).
PLANTED_KEFF = 0.8


def _coloured_latents(scale: Scale, seed: int, panels: dict[str, np.ndarray]) -> Figure:
    """First three latent coordinates of each method on the held-out trials, coloured by the true Lorenz z."""
    data = dataset(scale, seed)
    truth = data.latents[n_train(scale) :]
    colour = truth[..., 2].ravel()
    panels = {"true Lorenz state": truth, **panels}
    fig = Figure(figsize=(3.0 * len(panels), 3.3))
    for i, (name, z) in enumerate(panels.items()):
        ax = fig.add_subplot(1, len(panels), i + 1, projection="3d")
        flat = z.reshape(-1, z.shape[-1])
        ax.scatter(flat[:, 0], flat[:, 1], flat[:, 2], c=colour, s=1, cmap="viridis", rasterized=True)
        ax.set_title(name, fontsize=9)
        ax.set_xticks([]), ax.set_yticks([]), ax.set_zticks([])
    fig.suptitle("held-out trials, first 3 coordinates, coloured by the true Lorenz z (noisy, tuning curves)")
    return fig


@claim(
    "dualflow/better-latents-v3",
    statement="on noise-dominated (3 Hz) Poisson neurons with nonlinear tuning curves (PCA(3) of the noise-free "
    "rates decodes the state linearly with R^2 < 0.6), DCF's 3-D flowed latent beats the best of PCA, GPFA and "
    "CEBRA-Time on all three held-out measures: linear decoding R^2 of the Lorenz state, kNN decoding R^2, and "
    "kNN overlap with the true state's 10 nearest neighbours (paired differences above 0.02, 0.02 and 0.01 over 5 "
    "seeds)",
    paper="Abstract ('noise-dominated data sets where conventional approaches fail'); velocity decoding table "
    "(3-D latents: DCF 0.304, CEBRA 0.202, DMD 0.014)",
    control="A/A: the peers replaced by a second DCF fitted on its own model seed (+1000): the differences "
    "scatter around 0",
    positive="the negative's A/A pair (DCF and its twin as the only peer) with the twin's scores lowered by 1.5 "
    "times each bar (0.03, 0.03, 0.015): the claimed margins planted, through the same decoders, overlap and verdict",
    mechanisms=("flow-compression",),
    judge=[
        Interval("DCF - best peer, linear R2", above=0.02),
        Interval("DCF - best peer, kNN R2", above=0.02),
        Interval("DCF - best peer, kNN overlap", above=0.01),
    ],
)
def better_latents(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, seed)
    peers = fit_peers(scale, seed)
    if arm is not Arm.CLAIM:  # both controls: a DCF twin (its own model seed) is the only peer, an A/A pair
        twin = fit_dcf(scale, seed, seed + TWIN)[1]
        if arm is Arm.POSITIVE:  # the positive control's one line: the twin handicapped by 1.5 x each margin
            twin = dataclasses.replace(twin, **{k: getattr(twin, k) - PLANT * bar for k, bar in LATENT_BARS.items()})
        peers = {"DCF twin": twin}
    vae = fit_vae(scale, seed, seed)
    measured = {"DCF linear R2": dcf.linear_r2, "DCF kNN R2": dcf.knn_r2, "DCF kNN overlap": dcf.overlap}
    baselines = {}
    for name, res in {**peers, "VAE": vae}.items():
        baselines[f"{name} linear R2"] = res.linear_r2
        baselines[f"{name} kNN R2"] = res.knn_r2
        baselines[f"{name} kNN overlap"] = res.overlap
    for key, attr in (("linear R2", "linear_r2"), ("kNN R2", "knn_r2"), ("kNN overlap", "overlap")):
        measured[f"DCF - best peer, {key}"] = getattr(dcf, attr) - max(getattr(r, attr) for r in peers.values())
    diffs = {k: v for k, v in measured.items() if k.startswith("DCF - best peer")}
    holds = all(v > bar for v, bar in zip(diffs.values(), (0.02, 0.02, 0.01), strict=True))
    reason = "" if holds else "; ".join(f"{k} = {v:+.3f}" for k, v in diffs.items())
    fig = _coloured_latents(scale, seed, {"DCF (flowed)": dcf.z_test, **{n: r.z_test for n, r in peers.items()},
                                          "VAE": vae.z_test})  # fmt: skip
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF velocity R2 (3-D)": 0.304, "CEBRA velocity R2 (3-D)": 0.202, "DMD velocity R2 (3-D)": 0.014},
        figures={"latents": fig},
    )


#: real-place-cells-v3's judged margins (position R^2 on held-out laps), as v2's. v1 used 0.02 and ran once at
#: small (no-power; DCF - best peer -0.127 linear, -0.140 kNN); v2 raised them to 0.05 without fresh seeds (its
#: A/A negative held on 2 of 3 smoke seeds at 0.02). v3 keeps 0.05, judged on seeds + FRESH never seen before.
POSITION_BARS = {"linear_r2": 0.05, "knn_r2": 0.05}


def _position_panels(panels: dict) -> Figure:
    """First two latent coordinates of each method on the held-out laps, coloured by the animal's position."""
    fig = Figure(figsize=(3.0 * len(panels), 3.2))
    for i, (name, res) in enumerate(panels.items()):
        ax = fig.add_subplot(1, len(panels), i + 1)
        z = res.z_test.reshape(-1, res.z_test.shape[-1])
        ax.scatter(z[:, 0], z[:, 1], c=res.position_test.ravel(), s=2, cmap="viridis", rasterized=True)
        ax.set_title(f"{name}: kNN R2 {res.knn_r2:.2f}, lin {res.linear_r2:.2f}", fontsize=8)
        ax.set_xticks([]), ax.set_yticks([])
    fig.suptitle("rat CA1 units, held-out laps: latent coordinates 1-2 coloured by position along the track")
    return fig


@claim(
    "dualflow/real-place-cells-v3",
    statement="on real rat hippocampal units running a linear track (nelpy example data, MIT; 23 units above "
    "0.1 Hz, 100 ms bins smoothed with sigma = 2 bins, 48 laps in 25-bin windows), DCF's 3-D flowed latent, fitted "
    "without the position, decodes the animal's position on held-out laps better than the best of PCA, GPFA and "
    "the frame VAE with the same latent size, DCF and the VAE tuned on the same validation grid (lr x {1, 3}, steps "
    "x {0.5, 1}): paired differences of linear and kNN decoding R^2 above 0.05 (seed s: its own random split of "
    "the 24 lap pairs, 6 test / 6 validation / 12 train, and model seeds, all from s + 5000; 5 seeds)",
    paper="Abstract ('across both neural and behavioral data ... more interpretable dynamics'); velocity decoding "
    "from 3-D latents on monkey reaching (DCF 0.304 vs VAE 0.242, CEBRA 0.202)",
    control="A/A: the peers replaced by a second DCF, tuned on the same grid and fitted on its own model seed "
    "(+1000) on the same split: the differences scatter around 0",
    positive="the negative's A/A pair with the twin's two R^2 lowered by 1.5 times each bar (0.075): the claimed "
    "margin planted, through the same decoders and verdict",
    mechanisms=("flow-compression",),
    judge=[
        Interval("DCF - best peer, position linear R2", above=POSITION_BARS["linear_r2"]),
        Interval("DCF - best peer, position kNN R2", above=POSITION_BARS["knn_r2"]),
    ],
)
def real_place_cells(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.dualflow.real import fit_method, fit_real_peers

    s = seed + FRESH
    dcf = fit_method("DCF", scale, s, s)
    peers = fit_real_peers(scale, s)
    if arm is not Arm.CLAIM:  # both controls: a DCF twin (its own model seed) is the only peer, an A/A pair
        twin = fit_method("DCF", scale, s, s + TWIN)
        if arm is Arm.POSITIVE:  # the positive control's one line: the twin handicapped by 1.5 x each bar
            twin = dataclasses.replace(twin, **{k: getattr(twin, k) - PLANT * b for k, b in POSITION_BARS.items()})
        peers = {"DCF twin": twin}
    measured = {"DCF position linear R2": dcf.linear_r2, "DCF position kNN R2": dcf.knn_r2}
    measured.update({f"DCF chosen {k}": v for k, v in dcf.chosen.items()})
    baselines = {}
    for name, res in peers.items():
        baselines[f"{name} position linear R2"] = res.linear_r2
        baselines[f"{name} position kNN R2"] = res.knn_r2
        baselines.update({f"{name} chosen {k}": v for k, v in res.chosen.items()})
    for key, attr in (("linear R2", "linear_r2"), ("kNN R2", "knn_r2")):
        measured[f"DCF - best peer, position {key}"] = getattr(dcf, attr) - max(
            getattr(r, attr) for r in peers.values()
        )
    diffs = {k: v for k, v in measured.items() if k.startswith("DCF - best peer")}
    holds = all(v > b for v, b in zip(diffs.values(), POSITION_BARS.values(), strict=True))
    reason = "" if holds else "; ".join(f"{k} = {v:+.3f}" for k, v in diffs.items())
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF velocity R2 (3-D, monkey reach)": 0.304, "VAE velocity R2 (3-D, monkey reach)": 0.242},
        figures={"position": _position_panels({"DCF (flowed)": dcf, **peers})},
    )


#: real-forecast-v3's bar: the rollout must beat the linear peer by 10 % in squared error (ratio < 0.9). v2's bar
#: sat at the null of an A/A pair (ratio 1), which an unbiased twin clears on about half of the seeds; a margin is
#: only stricter than v2's bar (v2 failed at small by 2.66 [1.36, 3.95]), so it cannot have been tuned to hold.
FORECAST_BAR = 0.9
#: real-forecast's seeds: seed + 10000 (v3; v1 used + 5000 and v2 + 8000), for the claim and its probe alike.
FORECAST_SEEDS = 10000


@claim(
    "dualflow/real-forecast-v3",
    statement="on the rat's held-out laps (the real-place-cells-v3 splits and tuned DCF, drawn at seeds + 10000, "
    "fresh), the paper's simulated representation — the 3 bins before bin 10 of each 25-bin test window "
    "compressed, v_theta rolled out at tau = 0 for 5 bins (0.5 s), latent read with (L D^1/2)^-1 — follows the "
    "flowed latent of those held-out bins (first 3 coordinates) better than a ridge linear autoregression of the "
    "same order fitted on the fitting laps' flowed latents, by a margin: error ratio rollout / linear < 0.9",
    paper="Inference section ('simulated' representation: compress, then integrate v_theta in time at fixed tau)",
    control="A/A: the rollout replaced by a second linear autoregression, chosen and fitted the same way on the same "
    "fitting windows in an order that shuffles whole lap pairs (no duplicates; its validation laps, the last fifth, "
    "are its own draw and disjoint from its fitting laps): the ratio sits at or around 1",
    positive="the negative's A/A pair with the twin's squared forecast error scaled by 0.85 (1.5 times the 10 % "
    "margin): the claimed gain planted, through the same error and verdict",
    mechanisms=("laps-dynamics-flow",),
    judge=Interval("rollout / linear dynamics (real laps)", below=FORECAST_BAR),
)
def real_forecast(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.dualflow.real import forecast_scores

    ex = forecast_scores(scale, seed + FORECAST_SEEDS)
    err = ex["rollout error"]
    if arm is not Arm.CLAIM:  # both controls: the lap-pair-shuffled twin of the linear peer in the rollout's place
        twin = ex["twin forecast"]
        if arm is Arm.POSITIVE:  # the positive control's one line: 1.5 x the margin less squared error
            twin = ex["target"] + np.sqrt(1 - PLANT * (1 - FORECAST_BAR)) * (twin - ex["target"])
        err = relative_error(twin, ex["target"])
    ratio = err / max(ex["linear dynamics error"], 1e-12)
    measured = {"rollout / linear dynamics (real laps)": ratio, "rollout error (relative)": err,
                "rollout / persistence (real laps)": err / max(ex["persistence error"], 1e-12)}  # fmt: skip
    baselines = {"linear dynamics error (relative)": ex["linear dynamics error"],
                 "persistence error (relative)": ex["persistence error"],
                 "linear peer ridge": ex["peer choice"]["VAR ridge"],
                 "A/A twin ridge": ex["twin choice"]["VAR ridge"],
                 "linear peer latent size": ex["peer choice"]["VAR latent dimensions"],
                 "A/A twin latent size": ex["twin choice"]["VAR latent dimensions"]}  # fmt: skip
    holds = ratio < FORECAST_BAR
    reason = "" if holds else f"rollout error {err:.3f} vs linear {ex['linear dynamics error']:.3f}"
    return ClaimResult("holds" if holds else "fails", measured=measured, baselines=baselines, reason=reason)


#: temporal-terms' judged margins (held-out decoding R^2 of the limit cycle's state), fixed before v1's first run
#: and unchanged in v2.
TEMPORAL_BARS = {"linear_r2": 0.05, "knn_r2": 0.02}


@claim(
    "dualflow/temporal-terms-v2",
    statement="the component the paper credits — the temporal terms through which time reaches the coupling, the "
    "dynamics loss L_df (beta) and the temporal-distortion term L_td (gamma) — makes DCF's 2-D flowed latent of a "
    "Van der Pol limit cycle seen through Gaussian tuning curves (40 Poisson neurons, 20 Hz) decode the state on "
    "held-out trials better than DCF with beta = gamma = 0: paired differences of linear and kNN R^2 above 0.05 and "
    "0.02. Every arm pairs two fits on distinct model seeds of the same data (seed + 8000, fresh): the reference on "
    "seed + 8000, the compared fit on seed + 9000; each term off alone is recorded beside it",
    paper="Abstract ('the dimension-reducing flow is trained to minimize distortions of the temporal dynamics, "
    "learning an identifiable low-dimensional representation that preserves temporal relations')",
    control="A/A: the temporal terms off on both sides — a second beta = gamma = 0 fit on the compared fit's model "
    "seed (+1000) in the full DCF's place, paired with the reference exactly as the claim is: the differences "
    "scatter around 0",
    positive="the negative's A/A pair with the reference's R^2 lowered by 1.5 times each bar (0.075, 0.03): the "
    "claimed gain planted, through the same decoders, the same seed pairing and the same verdict",
    mechanisms=("temporal-distortion",),
    judge=[
        Interval("DCF - no temporal terms, linear R2", above=TEMPORAL_BARS["linear_r2"]),
        Interval("DCF - no temporal terms, kNN R2", above=TEMPORAL_BARS["knn_r2"]),
    ],
)
def temporal_terms(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    data_seed = seed + FRESH_V2
    ref = fit_vdp(scale, data_seed, data_seed, CREDITED_OFF)  # the credited component removed, model seed +0
    if arm is Arm.CLAIM:
        ours = fit_vdp(scale, data_seed, data_seed + TWIN)  # the full DCF, model seed +1000
    else:  # both controls: the component removed on both sides, the same seed pairing as the claim
        ours = fit_vdp(scale, data_seed, data_seed + TWIN, CREDITED_OFF)
        if arm is Arm.POSITIVE:  # the positive control's one line: the reference handicapped by 1.5 x each bar
            ref = dataclasses.replace(ref, **{k: getattr(ref, k) - PLANT * b for k, b in TEMPORAL_BARS.items()})
    measured = {
        "DCF linear R2": ours.linear_r2,
        "DCF kNN R2": ours.knn_r2,
        "DCF - no temporal terms, linear R2": ours.linear_r2 - ref.linear_r2,
        "DCF - no temporal terms, kNN R2": ours.knn_r2 - ref.knn_r2,
        "DCF final L_td": ours.loss_end["td"],
    }
    pca = vdp_pca(scale, data_seed)
    baselines = {"no temporal terms linear R2": ref.linear_r2, "no temporal terms kNN R2": ref.knn_r2,
                 "no temporal terms final L_td": ref.loss_end["td"], "PCA(2) linear R2": pca[0],
                 "PCA(2) kNN R2": pca[1]}  # fmt: skip
    if arm is Arm.CLAIM:  # the ablation, each term off alone, on the full fit's model seed (recorded, not judged)
        for name, overrides in ABLATIONS.items():
            res = fit_vdp(scale, data_seed, data_seed + TWIN, overrides)
            baselines[f"{name} linear R2"], baselines[f"{name} kNN R2"] = res.linear_r2, res.knn_r2
    diffs = [measured["DCF - no temporal terms, linear R2"], measured["DCF - no temporal terms, kNN R2"]]
    holds = all(v > b for v, b in zip(diffs, TEMPORAL_BARS.values(), strict=True))
    reason = "" if holds else f"DCF - no temporal terms: linear R2 {diffs[0]:+.3f}, kNN R2 {diffs[1]:+.3f}"
    fig = Figure(figsize=(7, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    names = ["DCF", "no temporal", "PCA(2)", *[k for k in ABLATIONS if f"{k} linear R2" in baselines]]
    vals = [ours.linear_r2, ref.linear_r2, pca[0], *[baselines[f"{k} linear R2"] for k in names[3:]]]
    ax.bar(names, vals, color=["C0", "C3", "C2", *["C7"] * (len(names) - 3)])
    ax.set_ylabel("held-out linear R^2 of the state"), ax.set_title("Van der Pol through tuning curves: ablations")
    ax.tick_params(axis="x", labelsize=7)
    return ClaimResult("holds" if holds else "fails", measured=measured, baselines=baselines, reason=reason,
                       figures={"ablation": fig})  # fmt: skip


def planted_envelope(budget: float, m: int) -> np.ndarray:
    """r^(i-1), i = 1..m, with r = 0.05^(1 / (PLANTED_KEFF budget)): alone, its K_eff (95 % of the sum) is
    about PLANTED_KEFF / p, the low dimension of ``low-dimensional-support``'s positive control."""
    r = 0.05 ** (1.0 / (PLANTED_KEFF * budget))
    return r ** np.arange(m)


def head_size(budget: float, m: int) -> int:
    """Coordinates unmasked in at least HEAD_FRACTION of windows: P(K >= i) = (1 - p)^(i - 1) >= fraction."""
    p = 1.0 / budget
    return min(m, 1 + math.floor(math.log(HEAD_FRACTION) / math.log1p(-p))) if p < 1 else 1


@claim(
    "dualflow/low-dimensional-support-v2",
    statement="with nested dropout (budget 1/p = 10) the effective dimension K_eff (95 % of sum d_i) is at most 1/p "
    "and below the 95 %-variance PCA dimension of the same standardised training frames, and the trained head of "
    "the spectrum (coordinates unmasked in >= 10 % of windows) decays: Spearman(d_i, i) < -0.8",
    paper="Nested-dropout section; K_eff = 30 at p = 1/50 on the ball and mouse videos (K_eff below 1/p)",
    control="nested dropout off (every latent coordinate kept in every training step), fitted on its own model seed "
    "(+1000): nothing orders the scales d_i or keeps the rarely used ones small",
    positive="the effect planted at the bar on the negative's spectrum: its d_i times a geometric envelope r^(i-1) "
    "whose own K_eff is 0.8/p (r = 0.05^(p/0.8)), so K_eff x p ~ 0.8 with a real spectrum's scatter kept; the "
    "same K_eff, PCA-dimension and head-Spearman code",
    mechanisms=("nested-dropout-ordering",),
    judge=[
        Interval("K_eff x p", below=1.0),
        Interval("PCA dimension - K_eff", above=0.0),
        Interval("head spectrum Spearman", below=-0.8),
    ],
)
def low_dimensional_support(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from scipy.stats import spearmanr

    budget = float(SETTINGS[scale]["dcf"]["latent_budget"])
    if arm is Arm.CLAIM:
        est, res = fit_dcf(scale, seed, seed)
        d = est.d_
    else:  # both controls: nested dropout off, on the twin's model seed
        est, res = fit_dcf(scale, seed, seed + TWIN, **NO_NESTED_DROPOUT)
        d = est.d_
        if arm is Arm.POSITIVE:  # the positive control's one line: the low dimension planted at 0.8 / p
            d = d * planted_envelope(budget, len(d))
    pca_dim, k_eff = res.extra["PCA dimension"], effective_dimension(d)
    head = head_size(budget, len(d))
    measured = {
        "K_eff": float(k_eff),
        "K_eff x p": k_eff / budget,
        "PCA dimension - K_eff": float(pca_dim - k_eff),
        "head spectrum Spearman": float(spearmanr(np.arange(head), d[:head])[0]),
        "d1+d2+d3 share": float(d[:3].sum() / d.sum()),
    }
    baselines = {"PCA 95 %-variance dimension": float(pca_dim), "1/p": budget}
    holds = measured["K_eff x p"] < 1.0 and measured["PCA dimension - K_eff"] > 0
    holds = holds and measured["head spectrum Spearman"] < -0.8
    reason = "" if holds else (
        f"K_eff = {k_eff} (1/p = {budget:g}, PCA dimension {pca_dim}); head "
        f"({head} coordinates) Spearman {measured['head spectrum Spearman']:.2f} (needs < -0.8)"
    )  # fmt: skip
    fig = Figure(figsize=(6, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(np.arange(1, len(d) + 1), d, marker="o", ms=3, label=f"d_i (K_eff = {k_eff})")
    ax.axvline(head + 0.5, color="grey", ls=":", lw=0.8, label=f"trained head ({head})")
    ax.axvline(budget, color="C1", ls="--", lw=0.8, label="1/p")
    ax.axvline(pca_dim, color="C2", ls="--", lw=0.8, label="PCA 95 % dimension")
    ax.set_xlabel("latent coordinate i"), ax.set_ylabel("d_i"), ax.set_yscale("log"), ax.legend(fontsize=7)
    ax.set_title("D spectrum (noisy, tuning curves)")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"K_eff (videos, p = 1/50)": 30},
        figures={"spectrum": fig},
    )


@claim(
    "dualflow/reconstruction-v4",
    statement="decoded back from its first K latent coordinates (the rest zero), DCF reconstructs the noise-free "
    "rates (smoothed like the counts) of held-out trials better than PCA with the same K, for K = 3 and K = 1/p = "
    "10 (paired R^2 differences > 0.02); the full round trip is reported, not judged (invertible for any weights)",
    paper="Monkey-reach reconstruction table (firing-rate R^2: DCF 0.999, VAE 0.618, LFADS 0.595)",
    control="A/A: PCA replaced by a second DCF fitted on its own model seed (+1000): the differences scatter around 0",
    positive="the negative's A/A pair (DCF and its twin in PCA's place) with the twin's R^2 at both K lowered by "
    "0.03, 1.5 times the bar: the claimed margin planted, through the same verdict",
    mechanisms=("flow-compression", "nested-dropout-ordering"),
    judge=[
        Interval("DCF - PCA, R2 vs rates K=3", above=0.02),
        Interval("DCF - PCA, R2 vs rates K=1/p", above=0.02),
    ],
)
def reconstruction(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, seed)
    pca = fit_peers(scale, seed)["PCA"]
    vae = fit_vae(scale, seed, seed)
    K = budget_k(scale)
    if arm is not Arm.CLAIM:  # both controls: a DCF twin (its own model seed) in PCA's place, an A/A pair
        pca = fit_dcf(scale, seed, seed + TWIN)[1]
        if arm is Arm.POSITIVE:  # the positive control's one line: the twin handicapped by 1.5 x the margin
            lowered = {k: pca.extra[k] - PLANT * RECONSTRUCTION_BAR for k in ("R2 vs rates K=3", f"R2 vs rates K={K}")}
            pca = dataclasses.replace(pca, extra={**pca.extra, **lowered})
    measured = {
        "DCF round-trip R2 (smoothed counts)": dcf.extra["round trip R2"],
        "DCF R2 vs rates K=3": dcf.extra["R2 vs rates K=3"],
        "DCF R2 vs rates K=1/p": dcf.extra[f"R2 vs rates K={K}"],
        "DCF - PCA, R2 vs rates K=3": dcf.extra["R2 vs rates K=3"] - pca.extra["R2 vs rates K=3"],
        "DCF - PCA, R2 vs rates K=1/p": dcf.extra[f"R2 vs rates K={K}"] - pca.extra[f"R2 vs rates K={K}"],
    }
    baselines = {
        "PCA R2 vs rates K=3": pca.extra["R2 vs rates K=3"],
        "PCA R2 vs rates K=1/p": pca.extra[f"R2 vs rates K={K}"],
        "VAE R2 vs rates K=3": vae.extra["R2 vs rates K=3"],
    }
    holds = measured["DCF - PCA, R2 vs rates K=3"] > 0.02 and measured["DCF - PCA, R2 vs rates K=1/p"] > 0.02
    reason = "" if holds else (
        f"vs true rates: K=3 DCF {measured['DCF R2 vs rates K=3']:.3f} vs PCA {baselines['PCA R2 vs rates K=3']:.3f}; "
        f"K={K} DCF {measured['DCF R2 vs rates K=1/p']:.3f} vs PCA {baselines['PCA R2 vs rates K=1/p']:.3f}"
    )  # fmt: skip
    fig = Figure(figsize=(7, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    names = ["DCF K=3", "PCA K=3", "VAE K=3", f"DCF K={K}", f"PCA K={K}"]
    vals = [measured["DCF R2 vs rates K=3"], baselines["PCA R2 vs rates K=3"], baselines["VAE R2 vs rates K=3"],
            measured["DCF R2 vs rates K=1/p"], baselines["PCA R2 vs rates K=1/p"]]  # fmt: skip
    ax.bar(names, vals, color=["C0", "C2", "C1", "C0", "C2"])
    ax.set_ylabel("held-out R^2 vs true (smoothed) rates"), ax.set_title("reconstruction from K coordinates")
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"DCF R2": 0.999, "VAE R2": 0.618, "LFADS R2": 0.595},
        figures={"reconstruction": fig},
    )


def separated(d_a: np.ndarray, d_b: np.ndarray, n: int = N_LATENT) -> list[int]:
    """Indices i < n (0-based) whose scale is separated from both neighbours by GAP in both spectra."""
    out = []
    for i in range(n):
        ok = True
        for d in (d_a, d_b):
            ok &= bool(d[i] / d[i + 1] > GAP) and (i == 0 or bool(d[i - 1] / d[i] > GAP))
        if ok:
            out.append(i)
    return out


@claim(
    "dualflow/identifiable-v3",
    statement="DCF latent coordinates among the first 3 that a spectral gap separates (d_i / d_(i+1) > 1.5 and "
    "d_(i-1) / d_i > 1.5 in both seeds; rule fixed before the run) agree across two training seeds (sign-aligned "
    "|cos|, no permutation) better than the VAE's 3-D latent given its best permutation, by more than 0.05 (margin "
    "pre-registered before any run of this version); no separated coordinate scores 0",
    paper="Identifiability section (QR + normalisation + nested dropout: unique up to one sign per component); "
    "cross-seed stability figure",
    control="A/A: DCF's pair replaced by a second VAE pair on its own model seeds (+2000, +3000), scored as the "
    "VAE is (best permutation; a VAE has no spectrum for the gap rule): the difference scatters around 0",
    positive="the negative's A/A pair with the VAE's cross-seed |cos| lowered by 0.075, 1.5 times the margin: a "
    "known identifiability gain planted, through the same |cos| and verdict",
    mechanisms=("nested-dropout-ordering",),
    judge=Interval("DCF (separated) - VAE (best permutation) cross-seed |cos|", above=IDENTIFIABLE_BAR),
)
def identifiable(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    vae = [fit_vae(scale, seed, s).z_test for s in (seed, seed + TWIN)]
    vae_score = seed_consistency(vae, allow_permutation=True)
    if arm is Arm.CLAIM:
        fits = [fit_dcf(scale, seed, s) for s in (seed, seed + TWIN)]
        dcf_z = [r.z_test for _, r in fits]
        idx = separated(*(est.d_ for est, _ in fits))
        dcf_score = seed_consistency([z[..., idx] for z in dcf_z]) if idx else 0.0
    else:  # both controls: a second VAE pair in DCF's place, scored like the VAE (an A/A pair)
        dcf_z = [fit_vae(scale, seed, seed + s).z_test for s in (2 * TWIN, 3 * TWIN)]
        idx = list(range(N_LATENT))
        dcf_score = seed_consistency(dcf_z, allow_permutation=True)
        if arm is Arm.POSITIVE:  # the positive control's one line: the effect planted, the VAE 0.05 less consistent
            vae_score -= PLANT * IDENTIFIABLE_BAR
    measured = {
        "DCF cross-seed |cos| (separated)": dcf_score,
        "separated coordinates": float(len(idx)),
        "DCF cross-seed |cos| (first 3, no permutation)": seed_consistency(dcf_z),
        "DCF (separated) - VAE (best permutation) cross-seed |cos|": dcf_score - vae_score,
    }
    for c in range(N_LATENT):
        measured[f"DCF cross-seed |cos| coordinate {c + 1}"] = seed_consistency([z[..., c : c + 1] for z in dcf_z])
    baselines = {"VAE cross-seed |cos| (best permutation)": vae_score, "VAE cross-seed |cos|": seed_consistency(vae)}
    holds = dcf_score - vae_score > IDENTIFIABLE_BAR
    reason = "" if holds else (
        f"separated coordinates {[i + 1 for i in idx]}: DCF {dcf_score:.3f} vs VAE (best permutation) {vae_score:.3f}"
    )  # fmt: skip
    fig = Figure(figsize=(9, 4.5))
    for row, (name, zs) in enumerate((("DCF", dcf_z), ("VAE", vae))):
        for c in range(N_LATENT):
            ax = fig.add_subplot(2, N_LATENT, row * N_LATENT + c + 1)
            ref = zs[0][0, :, c]
            for k, z in enumerate(zs):
                trace = z[0, :, c]
                sign = np.sign(np.dot(trace - trace.mean(), ref - ref.mean())) or 1.0
                ax.plot(sign * (trace - trace.mean()) / (trace.std() + 1e-12), lw=0.8, label=f"model seed {k}")
            tag = " (separated)" if row == 0 and c in idx else ""
            ax.set_title(f"{name} coordinate {c + 1}{tag}", fontsize=9)
    fig.axes[0].legend(fontsize=7)
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        reason=reason,
        paper={"cross-seed stability": "DCF high; LFADS and CEBRA lower (figure)"},
        figures={"seeds": fig},
    )


@claim(
    "dualflow/simulated-representation-v2",
    statement="the simulated representation (the h + 1 frames before t = 20 compressed, v_theta integrated at "
    "tau = 0 for 10 frames, latent read with (L D^1/2)^-1) follows the flowed latent of the same held-out frames "
    "(first 3 coordinates) better than a linear autoregression of the same order fitted on the training trials' "
    "flowed latents (latent size and ridge chosen on training trials): error ratio rollout / linear < 1",
    paper="Inference section ('simulated' representation: compress the first frame, integrate v_theta in time at "
    "fixed tau; plotted against the flowed one)",
    control="A/A: the rollout replaced by a second linear autoregression, chosen and fitted the same way on a "
    "bootstrap resample of the training trials (its own randomness): the ratio scatters around 1",
    positive="the negative's A/A pair with the twin's forecast error scaled by sqrt(0.9) (pred -> target + "
    "sqrt(0.9) (pred - target)): a 10 % lower squared error planted, through the same error and verdict",
    mechanisms=("dynamics-flow",),
    judge=Interval("rollout / linear dynamics", below=1.0),
)
def simulated_representation(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    _, dcf = fit_dcf(scale, seed, seed)
    ex = dcf.extra
    if arm is not Arm.CLAIM:  # both controls: the bootstrap twin of the linear peer in the rollout's place
        twin = linear_twin_forecast(scale, seed, seed + TWIN)
        if arm is Arm.POSITIVE:  # the positive control's one line: its error scaled, 10 % less squared error
            twin = ex["flowed latent"] + np.sqrt(PLANTED_ERROR_RATIO) * (twin - ex["flowed latent"])
        ex = _in_rollouts_place(ex, twin)
    measured = {
        "rollout / linear dynamics": ex["rollout / linear dynamics"],
        "rollout / persistence": ex["rollout / persistence"],
        "rollout error (relative)": ex["rollout error"],
        "rollout decoding R2": ex["rollout decoding R2"],
    }
    baselines = {
        "linear dynamics error (relative)": ex["linear dynamics error"],
        "persistence error (relative)": ex["persistence error"],
        "linear dynamics: latent dimensions used": ex["VAR latent dimensions"],
    }
    holds = measured["rollout / linear dynamics"] < 1.0
    reason = "" if holds else (
        f"rollout error {ex['rollout error']:.3f} vs linear dynamics {ex['linear dynamics error']:.3f} "
        f"(persistence {ex['persistence error']:.3f}; relative to the flowed latent's variance)"
    )  # fmt: skip
    fig = Figure(figsize=(9, 3))
    for c in range(N_LATENT):
        ax = fig.add_subplot(1, N_LATENT, c + 1)
        ax.plot(ex["flowed latent"][0, :, c], "k-", label="flowed")
        ax.plot(ex["rollout latent"][0, :, c], "C0--", label="simulated (v_theta at tau = 0)")
        ax.plot(ex["linear dynamics latent"][0, :, c], "C2:", label="linear autoregression")
        ax.set_title(f"coordinate {c + 1}", fontsize=9), ax.set_xlabel("frames after t = 20")
    fig.axes[0].legend(fontsize=7)
    fig.tight_layout()
    return ClaimResult("holds" if holds else "fails", measured=measured, baselines=baselines, reason=reason,
                       figures={"rollout": fig})  # fmt: skip


def _in_rollouts_place(ex: dict, forecast: np.ndarray) -> dict:
    """The rollout's scores with ``forecast`` (n, horizon, 3) in its place, scored by the same relative error
    against the same flowed latent (the controls of ``simulated-representation``)."""
    err = relative_error(forecast, ex["flowed latent"])
    return {
        **ex,
        "rollout error": err,
        "rollout / linear dynamics": err / max(ex["linear dynamics error"], 1e-12),
        "rollout / persistence": err / max(ex["persistence error"], 1e-12),
        "rollout decoding R2": float("nan"),  # not a latent of the model: no decoder was fitted for it
        "rollout latent": forecast,
    }


# ---------------------------------------------------------------------------------------------------------
# Credited mechanisms and their liveness probes (the claims' cached fit: no extra training)
# ---------------------------------------------------------------------------------------------------------


@mechanism(
    "nested-dropout-ordering",
    component="nested dropout on the latent coordinates (prefix length K ~ Geom(p)), which orders the scales d_i",
    measures="Spearman(d_i, i) over the trained head of the spectrum with nested dropout minus the same for the "
    "A/A reference fitted without it on its own model seed (+1000): 0 when nested dropout orders nothing",
    below=-0.5,
)
def nested_dropout_ordering(scale: Scale, seed: int) -> dict[str, float]:
    from scipy.stats import spearmanr

    est, _ = fit_dcf(scale, seed, seed)
    ref, _ = fit_dcf(scale, seed, seed + TWIN, **NO_NESTED_DROPOUT)  # the ablated A/A reference (cached)
    head = head_size(float(SETTINGS[scale]["dcf"]["latent_budget"]), len(est.d_))
    on, off = (float(spearmanr(np.arange(head), e.d_[:head])[0]) for e in (est, ref))
    return {
        "nested-dropout-ordering": on - off,
        "head Spearman, nested dropout on": on,
        "head Spearman, off (A/A reference)": off,
        "head size": float(head),
        "d1 / d_head": float(est.d_[0] / est.d_[head - 1]),
    }


@mechanism(
    "flow-compression",
    component="the compression flow u_phi with the learned scales D: the frames' variance carried by few latent "
    "coordinates",
    measures="1 - K_eff / (95 %-variance PCA dimension of the same frames): the share of PCA's dimension the flow "
    "compresses away (0: no compression beyond PCA)",
    above=0.2,
)
def flow_compression(scale: Scale, seed: int) -> dict[str, float]:
    est, res = fit_dcf(scale, seed, seed)
    pca_dim = float(res.extra["PCA dimension"])
    return {
        "flow-compression": 1 - est.effective_dim_ / pca_dim,
        "K_eff": float(est.effective_dim_),
        "PCA dimension": pca_dim,
    }


@mechanism(
    "dynamics-flow",
    component="the dynamical flow v_theta (trained by the dynamics loss, beta > 0)",
    measures="error of the simulated representation (v_theta rolled out at tau = 0) / error of persistence, over "
    "10 held-out frames (1: v_theta forecasts nothing)",
    below=0.8,
)
def dynamics_flow(scale: Scale, seed: int) -> dict[str, float]:
    ex = fit_dcf(scale, seed, seed)[1].extra
    return {"dynamics-flow": ex["rollout / persistence"], "rollout / linear dynamics": ex["rollout / linear dynamics"]}


@mechanism(
    "temporal-distortion",
    component="the temporal-distortion term L_td (gamma): a frame step in the compressed space equals the same step "
    "in the data",
    measures="is the term wired into training? relative reduction of the final L_td (mean of the last 50 steps) "
    "when gamma goes from the recipe's 1 to 10, same data and model seed as temporal-terms' full fit: (L_td at "
    "gamma = 1 - L_td at gamma = 10) / L_td at gamma = 1 (0: the weight moves nothing); the claim's own contrast "
    "(gamma = 1 against beta = gamma = 0) is reported beside it, not judged here",
    above=0.1,
)
def temporal_distortion(scale: Scale, seed: int) -> dict[str, float]:
    data_seed = seed + FRESH_V2
    on = fit_vdp(scale, data_seed, data_seed + TWIN)  # temporal-terms' full fit (cached)
    up = fit_vdp(scale, data_seed, data_seed + TWIN, GAMMA_UP)
    off = fit_vdp(scale, data_seed, data_seed, CREDITED_OFF)  # temporal-terms' reference (cached)
    return {
        "temporal-distortion": (on.loss_end["td"] - up.loss_end["td"]) / on.loss_end["td"],
        "final L_td, gamma = 1": on.loss_end["td"],
        "final L_td, gamma = 10": up.loss_end["td"],
        "final L_td, beta = gamma = 0": off.loss_end["td"],
        "linear R2, gamma = 10": up.linear_r2,
        "linear R2, gamma = 1": on.linear_r2,
    }


@mechanism(
    "laps-dynamics-flow",
    component="the dynamical flow v_theta on the real laps (real-forecast's fit)",
    measures="error of the simulated representation (v_theta rolled out at tau = 0 for 5 bins from each held-out "
    "window) / error of persistence, on the rat's held-out laps at seed + 10000 (1: v_theta forecasts nothing)",
    below=0.8,
)
def laps_dynamics_flow(scale: Scale, seed: int) -> dict[str, float]:
    from icml26.dualflow.real import forecast_scores

    ex = forecast_scores(scale, seed + FORECAST_SEEDS)
    return {
        "laps-dynamics-flow": ex["rollout error"] / max(ex["persistence error"], 1e-12),
        "rollout / linear dynamics (real laps)": ex["rollout error"] / max(ex["linear dynamics error"], 1e-12),
    }


# ---------------------------------------------------------------------------------------------------------
# The claims' measures, validated both ways on the smoke data set (the true state and a null latent)
# ---------------------------------------------------------------------------------------------------------


def _latent_inputs(seed: int):
    """(truth train, truth test, noisy truth train/test, null train/test) latents of the smoke data set."""
    scale = Scale.SMOKE
    data, k = dataset(scale, 0), n_train(scale)
    s_train, s_test = data.latents[:k], data.latents[k:]
    rng = np.random.default_rng([seed, 47])
    sd = data.latents.reshape(-1, 3).std(0)
    noisy = [s + 0.5 * sd * rng.standard_normal(s.shape) for s in (s_train, s_test)]
    null = [rng.standard_normal(s.shape) for s in (s_train, s_test)]  # independent of the state
    return (s_train, s_test), noisy, null


def _decoding_check(decoder):
    def run(seed: int) -> dict[str, float]:
        (s_train, s_test), noisy, null = _latent_inputs(seed)
        return {
            "truth": decoder(s_train, s_train, s_test, s_test),
            "truth + 50 % noise": decoder(*noisy[:1], s_train, noisy[1], s_test),
            "null": decoder(null[0], s_train, null[1], s_test),
        }

    return run


def _overlap_check(seed: int) -> dict[str, float]:
    (_, s_test), noisy, null = _latent_inputs(seed)
    return {"truth": knn_overlap(s_test, s_test), "truth + 50 % noise": knn_overlap(noisy[1], s_test),
            "null": knn_overlap(null[1], s_test)}  # fmt: skip


def _reconstruction_check(seed: int) -> dict[str, float]:
    """R^2 against the true rates of the held-out trials: the rates themselves, the counts, and the training
    trials' mean rate (the null: a reconstruction that knows nothing of the trial)."""
    data, k = dataset(Scale.SMOKE, 0), n_train(Scale.SMOKE)
    rates = data.smoothed_rates[k:]
    mean = np.broadcast_to(data.smoothed_rates[:k].mean(axis=(0, 1)), rates.shape)
    return {"truth": reconstruction_r2(rates, rates), "smoothed counts": reconstruction_r2(rates, data.smoothed[k:]),
            "null": reconstruction_r2(rates, mean)}  # fmt: skip


def _consistency_check(seed: int) -> dict[str, float]:
    """Cross-seed |cos| (no permutation): the same latent up to sign, with noise, and two independent latents."""
    (_, s_test), noisy, null = _latent_inputs(seed)
    return {"truth": seed_consistency([s_test, -s_test]), "truth vs truth + 50 % noise": seed_consistency(
        [s_test, noisy[1]]), "null": seed_consistency([null[1], null[0][: len(null[1])]])}  # fmt: skip


MEASURES = [
    MeasureCheck("linear decoding R2 of the state", _decoding_check(latent_decoding_r2), null_band=(-0.2, 0.1)),
    MeasureCheck("kNN decoding R2 of the state", _decoding_check(knn_decoding_r2), null_band=(-0.5, 0.1)),
    MeasureCheck("kNN overlap with the true state", _overlap_check, null_band=(0.0, 0.1)),
    MeasureCheck("reconstruction R2 vs the true rates", _reconstruction_check, null_band=(-0.1, 0.05)),
    MeasureCheck("cross-seed |cos| (no permutation)", _consistency_check, null_band=(0.0, 0.1)),
]
MECHANISMS = [nested_dropout_ordering, flow_compression, dynamics_flow, temporal_distortion, laps_dynamics_flow]
CLAIMS = [
    better_latents,
    low_dimensional_support,
    reconstruction,
    identifiable,
    simulated_representation,
    real_place_cells,
    temporal_terms,
    real_forecast,
]
