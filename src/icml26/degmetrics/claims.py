"""The paper's headline claims, executable on the NB simulator (ground truth known), on contract v3.

Every claim simulates screens (per-gene NB parameters fitted to real PBMC cells), splits each
perturbation's cells into halves, builds the calibration baselines from the first half and scores them
against the second. Each runs three arms (``Arm``):

- ``mean-baseline-v2``: over random settings drawn from the paper's simulation ranges, how often the
  dataset mean beats the technical duplicate on MSE and Pearson Δ yet loses on WMSE and R²_w, and how the
  artifact moves with sparsity and control bias. Negative: DEG weights shuffled over genes (A/A on the
  weighting); positive: the estimated DEG weights moved 37.5 % of the way to Eq. W on the true effects (a plant sized to
  land just past the bar).
- ``informative-rewarded-v2``: a ladder of interpolated duplicates; WMSE and R²_w must rank it by α,
  unweighted MSE does not. Negative and positive: the same two weightings.
- ``wmse-loss-v3``: models trained with WMSE vs MSE, each with its own tuned learning rate and both
  early-stopped on the same neutral metric, paired over seeds, judged against the TRUE expected profiles
  (R²_w with the true effects' weights; diversity ratio against the truth's spread). Negative: two MSE
  models on independent seeds (A/A); positive: the same A/A pair with the second MSE model moved a tenth of
  the way to the truth (a small planted gain on top of the A/A scatter).

``MECHANISMS`` probes the DEG weights (their enrichment on true DEGs) and WMSE training (how much it changes
the learned predictions, against how much a second seed changes them); ``MEASURES`` validates R²_w and the
diversity target both ways."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy import stats

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.degmetrics.baselines import calibration_baselines
from icml26.degmetrics.config import LOSS_PRESETS, LR_GRIDS, SIM_PRESETS, SWEEP_PRESETS, SimConfig, SweepConfig
from icml26.degmetrics.data import CONTROL, PERTURBATION_KEY, simulate
from icml26.degmetrics.evaluate import DEGReference, evaluate
from icml26.degmetrics.metrics import deg_weights, diversity_ratio, score_pseudobulk

BASELINES = ("technical_duplicate", "dataset_mean", "control_mean")


#: How the gene weights of the scoring reference are made: the paper's DEG weights from the observed half
#: ("deg"), those weights shuffled over genes within each perturbation (a random weighting of the same
#: sparsity: the A/A negative control), or the estimated weights moved part of the way to Eq. W on the true
#: |log fold change| (the planted weights: the positive control, see :data:`ORACLE_SHARE`).
WEIGHTINGS = ("deg", "permuted", "planted")

#: The positive controls' plant: w = (1 - a) w_est + a w_oracle per perturbation (both Eq. W, rows summing to 1),
#: a = ORACLE_SHARE. Sized at ``small`` on seeds 100-109 (never the judged seeds 0-4), on mean-baseline-v2's
#: judged fraction "weighted loss | unweighted win" (bar 0.8). The claim needs its 5-seed 95 % interval above
#: 0.8, i.e. a mean about one half-width d past the bar (d = t_4 sd / sqrt 5 of the planted fraction over those
#: seeds, ~0.05-0.06); we want the plant at 1.1-1.5 d. Mean over seeds 100-109 (distance in d): a = 0 (the claim
#: arm) 0.63; a = 0.2 0.80 (0.0 d); a = 0.3 0.85 (0.8 d); a = 0.35 0.86 (1.0 d); a = 0.4 0.88 (1.7 d); a = 1 (the
#: former oracle control) 0.91 (2.3 d). a = 0.375 lies between the two grid points that bracket 1.3 d.
ORACLE_SHARE = 0.375


def oracle_weights(truth: dict, perturbations: list[str]) -> np.ndarray:
    """Eq. W on the true effects: ``deg_weights(|log fold change|)`` in the order of ``perturbations`` (P, G);
    a perturbation without a true DEG gets uniform weights."""
    order = {name: i for i, name in enumerate(truth["perturbations"])}
    lfc = np.asarray(truth["log_fold_change"], dtype=np.float64)[[order[p] for p in perturbations]]
    return deg_weights(np.abs(lfc))


def reweighted(ref: DEGReference, weighting: str, truth: dict, rng: np.random.Generator) -> DEGReference:
    """``ref`` with its gene weights made as ``weighting`` says (see :data:`WEIGHTINGS`)."""
    if weighting == "deg":
        return ref
    if weighting == "permuted":  # which genes carry the weight is forgotten; how much weight is kept
        weights = rng.permuted(ref.weights, axis=1)
    elif weighting == "planted":  # Eq. W blend: (1 - a) w_est + a w_oracle, a = ORACLE_SHARE
        weights = (1 - ORACLE_SHARE) * ref.weights + ORACLE_SHARE * oracle_weights(truth, list(ref.perturbations))
    else:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}; got {weighting!r}")
    return dataclasses.replace(ref, weights=weights)


def baseline_summaries(cfg: SimConfig, seed: int, weighting: str = "deg") -> tuple[dict[str, dict[str, float]], str]:
    """Mean over perturbations of every metric for the three calibration baselines, and the gene source."""
    adata = simulate(cfg, seed=seed)
    real, preds = calibration_baselines(
        adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts", seed=seed
    )
    ref = DEGReference.from_anndata(real, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    ref = reweighted(ref, weighting, adata.uns["truth"], np.random.default_rng([seed, 7]))
    out = {}
    for name in BASELINES:
        ev = evaluate(preds[name], ref, perturbation_key=PERTURBATION_KEY, control=CONTROL)
        out[name] = {k: float(v) for k, v in ev.summary.items()}
    return out, str(adata.uns["truth"]["gene_source"])


def _source_note(source: str) -> str:
    return "" if source == "pbmc" else " (gene parameters from the gamma prior: scanpy's PBMC file not found)"


def _verdict(judge: tuple[Interval, ...], measured: dict[str, float]) -> bool:
    """The per-seed verdict read from the same thresholds the runner judges over seeds."""
    return all(j.judge([measured[j.key]])["holds"] for j in judge)


def _shortfall(judge: tuple[Interval, ...], measured: dict[str, float]) -> str:
    """The thresholds this seed missed, as a reason ('' when none)."""
    missed = [j for j in judge if not j.judge([measured[j.key]])["holds"]]
    return ", ".join(f"{j.key} = {measured[j.key]:.3g} (need {j.describe()})" for j in missed)


# ----------------------------------------------------------------------------------------------------
# mean-baseline-v2: random settings from the paper's ranges
# ----------------------------------------------------------------------------------------------------
def draw_settings(sweep: SweepConfig, rng: np.random.Generator) -> list[SimConfig]:
    """``sweep.n_settings`` simulator settings: p_effect and Nk log-uniform, fold change and B uniform."""
    n = sweep.n_settings

    def log_uniform(low: float, high: float) -> np.ndarray:
        return np.exp(rng.uniform(np.log(low), np.log(high), n))

    p = log_uniform(*sweep.p_effect)
    fc = rng.uniform(*sweep.fold_change, n)
    bias = rng.uniform(*sweep.control_bias, n)
    nk = np.round(log_uniform(*sweep.cells_per_perturbation)).astype(int)
    return [
        sweep.base.with_(p_effect=float(p[i]), fold_change=float(fc[i]), control_bias=float(bias[i]),
                         cells_per_perturbation=int(nk[i]))
        for i in range(n)
    ]  # fmt: skip


def _ols(features: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of ``y ~ 1 + features``; features (n, k) -> (k + 1,), intercept first."""
    X = np.column_stack([np.ones(len(y)), features])
    return np.linalg.lstsq(X, y, rcond=None)[0]


MEAN_BASELINE_JUDGE = (  # the fractions count settings (6 at smoke): an A/A control may tie them at 0
    Interval("artifact fraction", above=0.1, discrete=True),
    Interval("weighted loss | unweighted win", above=0.8, discrete=True),
    Interval("slope log MSE advantage / decade p_effect", below=0.0),
)


@claim(
    "degmetrics/mean-baseline-v2",
    statement="Over random simulator settings from the paper's ranges (p_effect 0.001-0.1, fold change 1.2-5, "
    "control bias 0-2, 10-256 cells per perturbation), the dataset mean beats the technical duplicate on both "
    "MSE and Pearson Δ vs control yet loses to it on both WMSE and R²_w in more than 10 % of settings; among "
    "the settings where the mean wins on MSE and Pearson Δ, WMSE and R²_w rank the duplicate first in more than "
    "80 %; and the mean's MSE advantage grows as effects get sparser (negative OLS slope on log10 p_effect, "
    "controlling for fold change, bias and cells)",
    paper="Abstract; Sec. 3 / Fig. 1 (in-silico study over random settings); Sec. 4 (DEG-aware metrics)",
    control="A/A on the weighting: each perturbation's DEG weights shuffled over genes (its own random stream): "
    "a weighting of the same sparsity that no longer knows which genes are DEGs, so the weighted metrics "
    "behave like random-gene MSE and rarely rank the duplicate first; the claim must fail",
    positive="planted weights: the DEG weights estimated from the observed half moved part of the way to Eq. W "
    "on the true |log fold change|, w = (1 - a) w_est + a w_oracle with a = ORACLE_SHARE (0.375), sized on seeds "
    "100-109, not the judged ones, so the judged fraction lands about 1.1-1.5 interval half-widths past 0.8 "
    "(same settings, cells, baselines, OLS and thresholds)",
    mechanisms=("deg-weights",),
    judge=MEAN_BASELINE_JUDGE,
)
def mean_baseline(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    sweep = SWEEP_PRESETS[scale]
    settings = draw_settings(sweep, np.random.default_rng(seed))
    rows, source = [], "pbmc"  # one row per setting
    for i, cfg in enumerate(settings):
        weighting = {Arm.CLAIM: "deg", Arm.NEGATIVE: "permuted", Arm.POSITIVE: "planted"}[arm]  # the arms' line
        s, source = baseline_summaries(cfg, 1000 * seed + i, weighting)
        dup, mean = s["technical_duplicate"], s["dataset_mean"]
        rows.append(
            {
                "log10 p": np.log10(cfg.p_effect),
                "B": cfg.control_bias,
                "fc": cfg.fold_change,
                "log10 Nk": np.log10(cfg.cells_per_perturbation),
                "log MSE advantage": np.log(dup["mse"] / mean["mse"]),  # > 0: the mean wins on MSE
                "Pearson gap": mean["pearson_delta_ctrl"] - dup["pearson_delta_ctrl"],  # > 0: the mean wins
                "unweighted win": mean["mse"] < dup["mse"] and mean["pearson_delta_ctrl"] > dup["pearson_delta_ctrl"],
                "weighted loss": mean["wmse"] > dup["wmse"] and mean["r2w_delta"] < dup["r2w_delta"],
                "R2w mean": mean["r2w_delta"],
                "R2w duplicate": dup["r2w_delta"],
            }
        )
    col = {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]}  # each (n_settings,)
    win, loss = col["unweighted win"].astype(bool), col["weighted loss"].astype(bool)
    artifact = win & loss
    features = np.column_stack([col["log10 p"], col["B"], col["fc"], col["log10 Nk"]])  # (n, 4)
    adv_fit = _ols(features, col["log MSE advantage"])  # intercept, p, B, fc, Nk
    gap_fit = _ols(features, col["Pearson gap"])
    sparse = col["log10 p"] <= np.median(col["log10 p"])
    biased = col["B"] >= np.median(col["B"])
    measured = {
        "artifact fraction": artifact.mean(),
        "weighted loss | unweighted win": loss[win].mean() if win.any() else np.nan,
        "slope log MSE advantage / decade p_effect": adv_fit[1],
        "unweighted-win fraction": win.mean(),
        "weighted-loss fraction": loss.mean(),
        "slope log MSE advantage / unit B": adv_fit[2],
        "slope Pearson gap / decade p_effect": gap_fit[1],
        "slope Pearson gap / unit B": gap_fit[2],
        "artifact fraction, sparser half": artifact[sparse].mean(),
        "artifact fraction, denser half": artifact[~sparse].mean(),
        "artifact fraction, B above median": artifact[biased].mean(),
        "artifact fraction, B below median": artifact[~biased].mean(),
        "settings": float(len(rows)),
        "median R2w duplicate - R2w mean": float(np.median(col["R2w duplicate"] - col["R2w mean"])),
    }
    holds = _verdict(MEAN_BASELINE_JUDGE, measured)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    colors = np.where(artifact, "C3", np.where(win, "C1", "C0"))
    axes[0].scatter(col["log10 p"], col["log MSE advantage"], c=colors, s=14)
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[0].set(xlabel="log10 p_effect", ylabel="log(MSE dup / MSE mean)", title="mean's MSE advantage")
    axes[1].scatter(col["B"], col["Pearson gap"], c=colors, s=14)
    axes[1].axhline(0, color="grey", lw=0.8)
    axes[1].set(xlabel="control bias B", ylabel="PearsonΔctrl mean - duplicate", title="mean's Pearson advantage")
    axes[2].scatter(col["R2w mean"], col["R2w duplicate"], c=colors, s=14)
    axes[2].set(xlabel="R²_w mean", ylabel="R²_w duplicate", title="red: artifact; orange: win w/o weighted loss")
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={
            "form": "unweighted metrics reward the mean when effects are sparse; under WMSE / R²_w the mean "
            "sinks to null and the duplicate is rewarded"
        },
        elsewhere={
            "mean baseline MSE, Norman [GEARS issue #82]": 0.00527,
            "GEARS MSE, Norman [GEARS issue #82]": 0.00466,
            "mean baseline Δ-Pearson, Norman [GEARS issue #82]": 0.576,
            "GEARS Δ-Pearson, Norman [GEARS issue #82]": 0.570,
        },
        baselines={
            "median R2w mean": float(np.median(col["R2w mean"])),
            "median R2w duplicate": float(np.median(col["R2w duplicate"])),
        },
        reason=_shortfall(MEAN_BASELINE_JUDGE, measured) + _source_note(source),
        figures={"artifact-vs-settings": fig},
    )


# ----------------------------------------------------------------------------------------------------
# informative-rewarded-v2: a ladder of interpolated duplicates
# ----------------------------------------------------------------------------------------------------
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of ``range(n)`` with no fixed point (each row goes to another perturbation)."""
    if n < 2:
        raise ValueError(f"a derangement needs n >= 2; got {n}")
    order = rng.permutation(n)
    perm = np.empty(n, dtype=int)
    perm[order] = np.roll(order, 1)
    return perm


def interpolation_ladder(bulk: np.ndarray, mu_all: np.ndarray, alphas=ALPHAS) -> list[np.ndarray]:
    """Interpolated duplicates ``mu_all + α (bulk - mu_all)``: bulk (P, G), mu_all (G,) -> list of (P, G)."""
    return [mu_all + a * (bulk - mu_all) for a in alphas]


INFORMATIVE_JUDGE = (
    Interval("Spearman(α, R²_w)", above=0.9),
    Interval("Spearman(α, -WMSE)", above=0.9),
    Interval("Spearman(α, -MSE)", below=0.5),
)


@claim(
    "degmetrics/informative-rewarded-v2",
    statement="On the interpolated-duplicate ladder mu_all + α (duplicate - mu_all), α in {0, 0.25, 0.5, 0.75, "
    "1}, R²_w and WMSE rank the predictors by α (Spearman > 0.9), while unweighted MSE mis-ranks them "
    "(Spearman(α, -MSE) < 0.5)",
    paper="Abstract ('genuinely informative predictors are correctly rewarded'); Sec. 4; companion paper "
    "(interpolated duplicate)",
    control="A/A on the weighting (the review's sharper control): each perturbation's DEG weights shuffled over "
    "genes (own random stream), so WMSE and R²_w weigh random genes like MSE does and mis-rank the ladder; the "
    "claim must fail",
    positive="planted weights: the estimated DEG weights moved part of the way to Eq. W on the true |log fold "
    "change|, w = (1 - a) w_est + a w_oracle with mean-baseline-v2's a = ORACLE_SHARE (0.375) (same ladder, same "
    "Spearman thresholds)",
    mechanisms=("deg-weights",),
    judge=INFORMATIVE_JUDGE,
)
def informative_rewarded(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    adata = simulate(SIM_PRESETS[scale], seed=seed)
    real, preds = calibration_baselines(
        adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts", seed=seed
    )
    ref = DEGReference.from_anndata(real, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    weighting = {Arm.CLAIM: "deg", Arm.NEGATIVE: "permuted", Arm.POSITIVE: "planted"}[arm]  # the arms' one line
    ref = reweighted(ref, weighting, adata.uns["truth"], np.random.default_rng([seed, 7]))
    dup_ad = preds["technical_duplicate"]
    if list(dup_ad.obs[PERTURBATION_KEY]) != list(ref.perturbations):
        raise RuntimeError("duplicate and observed perturbations are not in the same order")
    dup = np.asarray(dup_ad.X, dtype=np.float64)  # (P, G) first-half pseudobulks
    mu_all = dup.mean(axis=0)  # (G,) the dataset-mean baseline
    permuted = dup[derangement(len(dup), np.random.default_rng(seed + 7))]  # (P, G), uninformative rows

    def score(pred: np.ndarray) -> dict[str, float]:
        s = score_pseudobulk(pred, ref.real, ref.weights, ref.mu_ctrl, ref.mu_all)
        return {k: float(np.nanmean(v)) for k, v in s.items()}

    ladder = [score(p) for p in interpolation_ladder(dup, mu_all)]
    col = {k: np.array([row[k] for row in ladder]) for k in ("mse", "wmse", "r2w_delta")}
    alphas = np.array(ALPHAS)

    def spearman(values: np.ndarray) -> float:
        return float(stats.spearmanr(alphas, values).statistic) if np.ptp(values) > 0 else 0.0

    measured = {
        "Spearman(α, R²_w)": spearman(col["r2w_delta"]),
        "Spearman(α, -WMSE)": spearman(-col["wmse"]),
        "Spearman(α, -MSE)": spearman(-col["mse"]),
        "best α by R²_w": alphas[np.argmax(col["r2w_delta"])],
        "best α by WMSE": alphas[np.argmin(col["wmse"])],
        "best α by MSE": alphas[np.argmin(col["mse"])],
        "R²_w @α=1": col["r2w_delta"][-1],
        "R²_w @α=0.5": col["r2w_delta"][2],
        "MSE @α=1 / MSE @α=0": col["mse"][-1] / col["mse"][0],
        "WMSE @α=1 / WMSE @α=0": col["wmse"][-1] / col["wmse"][0],
    }
    other = score(permuted)
    holds = _verdict(INFORMATIVE_JUDGE, measured)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, (key, label) in zip(axes, (("r2w_delta", "R²_w(Δ) ↑"), ("wmse", "WMSE ↓"), ("mse", "MSE ↓"))):
        ax.plot(alphas, col[key], marker="o")
        ax.set(xlabel="α (interpolated duplicate)", title=label)
        ax.grid(alpha=0.3)
    fig.suptitle(f"technical duplicate, {weighting} weights")
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"form": "weighted metrics reward informative predictors in proportion to their information"},
        baselines={
            "R²_w permuted duplicate": other["r2w_delta"],
            "R²_w dataset mean (α=0)": col["r2w_delta"][0],
            "MSE dataset mean (α=0)": col["mse"][0],
        },
        reason=_shortfall(INFORMATIVE_JUDGE, measured),
        figures={"interpolation-ladder": fig},
    )


# ----------------------------------------------------------------------------------------------------
# wmse-loss-v3: training with WMSE vs MSE, tuned and early-stopped alike, judged against the truth
# ----------------------------------------------------------------------------------------------------
ARCHS = ("linear", "mlp")
WMSE_LOSS_JUDGE = (
    *(Interval(f"{a} R2w gain vs truth (WMSE - MSE)", above=0.0) for a in ARCHS),
    *(Interval(f"{a} diversity gain vs truth |log d_MSE| - |log d_WMSE|", above=0.0) for a in ARCHS),
)
#: The positive control moves the A/A arm's second MSE model this share of the way to the truth (profiles, and
#: spread in log): a tenth, the smallest improvement we take "raises R²_w / brings the spread closer" to mean
#: (the paper gives no size; v3's first positive control planted a quarter on the claim's own MSE model,
#: a gain without scatter).
PLANTED_SHARE = 0.1
#: Cells per test perturbation of the truth (:func:`~icml26.degmetrics.train.latent_truth`).
TRUTH_CELLS = 800


@functools.lru_cache(maxsize=8)
def _tuned(scale: Scale, seed: int):
    """The tuned MSE and WMSE models' test predictions (cached: the three arms and the probe share them)."""
    from icml26.degmetrics.train import tuned_predictions

    return tuned_predictions(LOSS_PRESETS[scale], seed, LR_GRIDS[scale], ARCHS)


@functools.lru_cache(maxsize=8)
def _tuned_aa(scale: Scale, seed: int):
    """The A/A pair's second arm: plain-MSE models on the same screen, trained on their own seed (used by
    both controls and by the wmse-training probe's reference)."""
    from icml26.degmetrics.train import tuned_predictions

    _, preds = tuned_predictions(
        LOSS_PRESETS[scale], seed, LR_GRIDS[scale], ARCHS, deg_weights=False, wmse_seed=seed + 100_003, losses=("wmse",)
    )
    return preds


@functools.lru_cache(maxsize=8)
def _truth(scale: Scale, seed: int) -> DEGReference:
    from icml26.degmetrics.train import latent_truth

    return latent_truth(LOSS_PRESETS[scale], seed, cells=TRUTH_CELLS)


def _log_distance(d: float) -> float:
    return abs(np.log(max(d, 1e-12)))


def _planted(pred: np.ndarray, truth: DEGReference) -> np.ndarray:
    """The positive control's arm: ``pred`` (P, G) moved ``PLANTED_SHARE`` of the way to the true profiles,
    then its spread around its own mean set ``PLANTED_SHARE`` of the way (in log) from ``pred``'s diversity
    ratio to the truth's (1): better than ``pred`` on both judged quantities by a tenth of the distance, no
    more. (Mixing alone is not enough: the spread of a mixture of two weakly correlated profiles shrinks.)
    The positive control applies it to the A/A arm's second MSE model, so the judged gain is this planted
    tenth plus the A/A scatter between two seeds."""
    mixed = pred + PLANTED_SHARE * (truth.real - pred)
    center = mixed.mean(axis=0)
    d_pred = diversity_ratio(pred, truth.real, truth.weights)
    d_mixed = diversity_ratio(mixed, truth.real, truth.weights)
    target = np.exp((1 - PLANTED_SHARE) * np.log(d_pred))  # PLANTED_SHARE of the way from d_pred to 1, in log
    return center + (mixed - center) * (target / d_mixed)


@claim(
    "degmetrics/wmse-loss-v3",
    statement="For a linear model and an MLP on held-out perturbations, training with WMSE instead of MSE (each "
    "loss with its own learning rate from the same grid, both early-stopped on the same neutral validation "
    "metric, Pearson Δ vs the training mean) raises R²_w(Δ) against the TRUE effects (the test perturbations' "
    "expected profiles, observed on 800 cells each, with the true effects' DEG weights) and brings the "
    "diversity ratio against the true profiles closer to 1: the paired per-seed gains have 95 % intervals above 0",
    paper="Sec. 5 (WMSE as a training loss; GEARS+WMSE vs GEARS+MSE), abstract",
    control="A/A: the 'WMSE' arm trains with the plain MSE loss on its own seed (initialisation and validation "
    "split): two MSE models on independent randomness, so every gain scatters around 0 and the claim must fail",
    positive="A/A plus a planted gain: the negative control's second MSE model (its own seed) moved a tenth of "
    "the way to the truth in the WMSE model's place (pred + 0.1 (truth - pred), its spread then set a tenth of "
    "the way, in log, from its diversity ratio to the truth's), against the first MSE model: a small improvement "
    "on both judged quantities on top of the seed-to-seed scatter, through the same truth-based scoring and intervals",
    mechanisms=("deg-weights", "wmse-training"),
    judge=WMSE_LOSS_JUDGE,
)
def wmse_loss(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    from icml26.degmetrics.train import score_against

    screen, preds = _tuned(scale, seed)
    if arm is not Arm.CLAIM:  # both controls: plain MSE in both arms, the second on its own seed (A/A)
        preds = {**preds, **_tuned_aa(scale, seed)}
    truth = _truth(scale, seed)
    observed = screen.test
    mean_pred = np.tile(screen.y_train.mean(axis=0), (len(observed.perturbations), 1))  # (P_test, G)
    measured = {}
    baselines = {f"mean baseline {k} vs truth": v for k, v in score_against(mean_pred, truth).items()}
    scores = {}
    for a in ARCHS:
        m_pred, m_lr, _ = preds[f"{a}/mse"]
        w_pred, w_lr, _ = preds[f"{a}/wmse"]
        if arm is Arm.POSITIVE:  # an improvement planted on the A/A arm: a tenth of the way to the truth
            w_pred = _planted(w_pred, truth)
        m_true, w_true = score_against(m_pred, truth), score_against(w_pred, truth)
        m_obs, w_obs = score_against(m_pred, observed), score_against(w_pred, observed)
        scores[a] = (m_true, w_true)
        measured[f"{a} R2w gain vs truth (WMSE - MSE)"] = w_true["r2w_delta"] - m_true["r2w_delta"]
        measured[f"{a} diversity gain vs truth |log d_MSE| - |log d_WMSE|"] = _log_distance(
            m_true["diversity"]
        ) - _log_distance(w_true["diversity"])
        measured |= {
            f"{a} diversity vs truth, MSE model": m_true["diversity"],
            f"{a} diversity vs truth, WMSE model": w_true["diversity"],
            f"{a} WMSE vs truth ratio (WMSE/MSE model)": w_true["wmse"] / m_true["wmse"],
            f"{a} MSE vs truth ratio (WMSE/MSE model)": w_true["mse"] / m_true["mse"],
            f"{a} R2w gain vs observed half (v2's measure)": w_obs["r2w_delta"] - m_obs["r2w_delta"],
            f"{a} diversity gain vs observed half (v2's measure)": _log_distance(m_obs["diversity"])
            - _log_distance(w_obs["diversity"]),
        }
        baselines |= {f"{a}/MSE lr": m_lr, f"{a}/WMSE lr": w_lr, f"{a}/MSE R2w vs truth": m_true["r2w_delta"]}
    holds = _verdict(WMSE_LOSS_JUDGE, measured)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, metric in zip(axes, ("r2w_delta", "mse", "diversity")):
        names = [f"{a}/{loss}" for a in ARCHS for loss in ("MSE", "WMSE")]
        values = [scores[a][i][metric] for a in ARCHS for i in (0, 1)]
        ax.bar(range(len(names)), values, color=["C0", "C1"] * len(ARCHS))
        ax.set_xticks(range(len(names)), names, rotation=30, fontsize=8)
        ax.set_title(metric + " vs truth (test)")
    axes[2].axhline(1.0, color="grey", lw=0.8)
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"form": "GEARS(WMSE) > GEARS(MSE) on WMSE and R²_w; less mode collapse (no numbers given)"},
        baselines=baselines,
        reason=_shortfall(WMSE_LOSS_JUDGE, measured),
        figures={"mse-vs-wmse-vs-truth": fig},
    )


# ----------------------------------------------------------------------------------------------------
# credited mechanisms and their probes
# ----------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _weight_precision(scale: Scale, seed: int) -> dict[str, float]:
    """How much the DEG weights concentrate on truly affected genes: their weight mass there over the genes'
    share (uniform weights: 1), on informative-rewarded's screen and at the sparsest setting of
    mean-baseline's range (p_effect 0.001)."""
    out = {}
    sparse = SWEEP_PRESETS[scale].base.with_(p_effect=0.001)
    for label, cfg in (("", SIM_PRESETS[scale]), (" at p_effect 0.001", sparse)):
        adata = simulate(cfg, seed=seed)
        real, _ = calibration_baselines(
            adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts", seed=seed
        )
        ref = DEGReference.from_anndata(real, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
        truth = adata.uns["truth"]
        order = {name: i for i, name in enumerate(truth["perturbations"])}
        affected = np.asarray(truth["log_fold_change"])[[order[p] for p in ref.perturbations]] != 0  # (P, G)
        rows = affected.any(axis=1)  # perturbations with at least one true DEG
        mass = float(np.mean(np.sum(ref.weights * affected, axis=1)[rows])) if rows.any() else 0.0
        share = float(affected[rows].mean()) if rows.any() else 1.0
        out[f"deg-weights{label}"] = mass / share
        out[f"weight mass on true DEGs{label}"] = mass
    return out


@mechanism(
    "deg-weights",
    component="the DEG-aware weights w_k (Eq. W: min-max |t| vs rest, squared, normalised) of WMSE and R²_w",
    measures="enrichment of the weights on truly affected genes: each perturbation's weight mass on its true "
    "DEGs over their share of the genes (uniform weights: 1), on informative-rewarded's screen; also at "
    "mean-baseline's sparsest setting (p_effect 0.001)",
    above=2.0,
)
def deg_weight_precision(scale: Scale, seed: int) -> dict[str, float]:
    return _weight_precision(scale, seed)


@mechanism(
    "wmse-training",
    component="WMSE as the training loss (weights 100 w_k of the training perturbations)",
    measures="||pred_WMSE - pred_MSE|| / ||pred_MSE' - pred_MSE|| on the test set, mean over the linear model and "
    "the MLP: how far the weights move the learned predictions (WMSE and MSE models on the same seed) over how far "
    "a second seed moves them (the A/A pair of wmse-loss's controls: MSE on its own seed); <= 1: the weights "
    "change what is learned no more than a reseed does",
    above=1.0,
)
def wmse_training(scale: Scale, seed: int) -> dict[str, float]:
    _, preds = _tuned(scale, seed)
    aa = _tuned_aa(scale, seed)
    ratio, out = {}, {}
    for a in ARCHS:
        m, w, m2 = preds[f"{a}/mse"][0], preds[f"{a}/wmse"][0], aa[f"{a}/wmse"][0]  # each (P_test, G)
        spread = np.linalg.norm(m - m.mean(axis=0))
        out[f"{a} WMSE change / spread"] = float(np.linalg.norm(w - m) / spread)
        out[f"{a} reseed change / spread (A/A reference)"] = float(np.linalg.norm(m2 - m) / spread)
        ratio[a] = out[f"{a} WMSE change / spread"] / out[f"{a} reseed change / spread (A/A reference)"]
    return {"wmse-training": float(np.mean(list(ratio.values()))), **out}


# ----------------------------------------------------------------------------------------------------
# measures, validated both ways
# ----------------------------------------------------------------------------------------------------
_CHECK_CFG = SimConfig(n_genes=400, n_control=300, n_perturbations=16, cells_per_perturbation=40, p_effect=0.03)


@functools.lru_cache(maxsize=4)
def _check_screen(seed: int):
    """A small screen's observed second half, the technical duplicate, and the truth (the same effects on 4,000
    cells each: ``simulate`` draws gene parameters and effects before any cell)."""
    adata = simulate(_CHECK_CFG, seed=seed)
    real, preds = calibration_baselines(
        adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts", seed=seed
    )
    ref = DEGReference.from_anndata(real, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    big = simulate(_CHECK_CFG.with_(cells_per_perturbation=4000), seed=seed)
    truth = DEGReference.from_anndata(big, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    return ref, np.asarray(preds["technical_duplicate"].X, dtype=np.float64), truth


def _r2w_check(seed: int) -> dict[str, float]:
    """R²_w(Δ) against the observed half: the truth, the duplicate, the duplicate halfway to the mean, and the null
    (the dataset mean: Δpred = 0)."""
    ref, dup, truth = _check_screen(seed)
    mean = np.tile(dup.mean(axis=0), (len(dup), 1))

    def r2w(pred):
        return float(np.nanmean(score_pseudobulk(pred, ref.real, ref.weights, ref.mu_ctrl, ref.mu_all)["r2w_delta"]))

    return {
        "truth": r2w(truth.real),
        "duplicate": r2w(dup),
        "half duplicate": r2w(0.5 * (dup + mean)),
        "null": r2w(mean),
    }


def _diversity_check(seed: int) -> dict[str, float]:
    """wmse-loss-v3's diversity target: -|log d| with d the weighted diversity ratio against the true profiles
    (higher is better, 0 at the right spread): the truth itself, the noisy duplicate (spread inflated by noise),
    the duplicate halfway to the mean (collapsed by half), and the null (the mean plus 1 % of the duplicate's Δ:
    a collapsed predictor)."""
    _, dup, truth = _check_screen(seed)
    mean = dup.mean(axis=0)

    def score(pred):
        return -_log_distance(diversity_ratio(pred, truth.real, truth.weights))

    return {
        "truth": score(truth.real),
        "duplicate": score(dup),
        "half duplicate": score(mean + 0.5 * (dup - mean)),
        "null": score(mean + 0.01 * (dup - mean)),
    }


MEASURES = [
    MeasureCheck("R²_w(Δ) against the observed half", _r2w_check, null_band=(-0.15, 0.1), margin=0.05),
    MeasureCheck("diversity against the truth: -|log d|", _diversity_check, null_band=(-10.0, -2.0), margin=0.05),
]
MECHANISMS = [deg_weight_precision, wmse_training]
CLAIMS = [mean_baseline, informative_rewarded, wmse_loss]
