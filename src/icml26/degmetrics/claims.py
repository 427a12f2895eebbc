"""The paper's headline claims, executable on the NB simulator (ground truth known).

Every claim simulates screens (per-gene NB parameters fitted to real PBMC cells), splits each
perturbation's cells into halves, builds the calibration baselines from the first half and scores them
against the second. Three claims (issue 14 replaced five v1 claims that restated the metric):

- ``mean-baseline-v2``: over random settings drawn from the paper's simulation ranges, how often the
  dataset mean beats the technical duplicate on MSE and Pearson Δ yet loses on WMSE and R²_w, and how the
  artifact moves with sparsity and control bias. Control: uniform gene weights.
- ``informative-rewarded-v2``: a ladder of interpolated duplicates; WMSE and R²_w must rank it by α,
  unweighted MSE does not. Control: a permuted (uninformative) duplicate.
- ``wmse-loss-v2``: models trained with WMSE vs MSE, each with its own tuned learning rate and both
  early-stopped on the same neutral metric; paired over seeds. Control: the WMSE arm trains on plain MSE.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.degmetrics.baselines import calibration_baselines
from icml26.degmetrics.config import LOSS_PRESETS, LR_GRIDS, SIM_PRESETS, SWEEP_PRESETS, SimConfig, SweepConfig
from icml26.degmetrics.data import CONTROL, PERTURBATION_KEY, simulate
from icml26.degmetrics.evaluate import DEGReference, evaluate
from icml26.degmetrics.metrics import score_pseudobulk

BASELINES = ("technical_duplicate", "dataset_mean", "control_mean")


def baseline_summaries(
    cfg: SimConfig, seed: int, uniform_weights: bool = False
) -> tuple[dict[str, dict[str, float]], str]:
    """Mean over perturbations of every metric for the three calibration baselines, and the gene source.

    ``uniform_weights`` replaces the DEG weights w_k by 1/G for every gene (a negative control: WMSE becomes
    the MSE and R²_w an unweighted R² of Δ).
    """
    adata = simulate(cfg, seed=seed)
    real, preds = calibration_baselines(
        adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts", seed=seed
    )
    ref = DEGReference.from_anndata(real, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    if uniform_weights:
        ref = dataclasses.replace(ref, weights=np.full_like(ref.weights, 1.0 / ref.weights.shape[1]))
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


MEAN_BASELINE_JUDGE = (
    Interval("artifact fraction", above=0.1),
    Interval("weighted loss | unweighted win", above=0.8),
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
    control="uniform gene weights w_kg = 1/G instead of the DEG weights: WMSE becomes the MSE, so the mean "
    "can no longer win on MSE and lose on WMSE; the artifact fraction is 0 and the claim must fail",
    judge=MEAN_BASELINE_JUDGE,
)
def mean_baseline(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    sweep = SWEEP_PRESETS[scale]
    settings = draw_settings(sweep, np.random.default_rng(seed))
    rows, source = [], "pbmc"  # one row per setting
    for i, cfg in enumerate(settings):
        s, source = baseline_summaries(cfg, 1000 * seed + i, uniform_weights=control)  # the control's line
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
    control="the duplicate's rows permuted across perturbations (no row keeps its own): more α is more "
    "uninformative signal, R²_w and WMSE rank the ladder backwards and the claim must fail",
    judge=INFORMATIVE_JUDGE,
)
def informative_rewarded(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    adata = simulate(SIM_PRESETS[scale], seed=seed)
    real, preds = calibration_baselines(
        adata, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts", seed=seed
    )
    ref = DEGReference.from_anndata(real, perturbation_key=PERTURBATION_KEY, control=CONTROL, scale="counts")
    dup_ad = preds["technical_duplicate"]
    if list(dup_ad.obs[PERTURBATION_KEY]) != list(ref.perturbations):
        raise RuntimeError("duplicate and observed perturbations are not in the same order")
    dup = np.asarray(dup_ad.X, dtype=np.float64)  # (P, G) first-half pseudobulks
    mu_all = dup.mean(axis=0)  # (G,) the dataset-mean baseline
    permuted = dup[derangement(len(dup), np.random.default_rng(seed + 7))]  # (P, G), uninformative rows
    informative = permuted if control else dup  # the one line the control changes

    def score(pred: np.ndarray) -> dict[str, float]:
        s = score_pseudobulk(pred, ref.real, ref.weights, ref.mu_ctrl, ref.mu_all)
        return {k: float(np.nanmean(v)) for k, v in s.items()}

    ladder = [score(p) for p in interpolation_ladder(informative, mu_all)]
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
    other = score(permuted if not control else dup)
    holds = _verdict(INFORMATIVE_JUDGE, measured)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, (key, label) in zip(axes, (("r2w_delta", "R²_w(Δ) ↑"), ("wmse", "WMSE ↓"), ("mse", "MSE ↓"))):
        ax.plot(alphas, col[key], marker="o")
        ax.set(xlabel="α (interpolated duplicate)", title=label)
        ax.grid(alpha=0.3)
    fig.suptitle("permuted duplicate (control)" if control else "technical duplicate")
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"form": "weighted metrics reward informative predictors in proportion to their information"},
        baselines={
            ("R²_w technical duplicate" if control else "R²_w permuted duplicate"): other["r2w_delta"],
            "R²_w dataset mean (α=0)": col["r2w_delta"][0],
            "MSE dataset mean (α=0)": col["mse"][0],
        },
        reason=_shortfall(INFORMATIVE_JUDGE, measured),
        figures={"interpolation-ladder": fig},
    )


# ----------------------------------------------------------------------------------------------------
# wmse-loss-v2: training with WMSE vs MSE, tuned and early-stopped alike
# ----------------------------------------------------------------------------------------------------
ARCHS = ("linear", "mlp")
WMSE_LOSS_JUDGE = (
    *(Interval(f"{a} R2w gain (WMSE - MSE)", above=0.0) for a in ARCHS),
    *(Interval(f"{a} diversity gain |log d_MSE| - |log d_WMSE|", above=0.0) for a in ARCHS),
)


@claim(
    "degmetrics/wmse-loss-v2",
    statement="For a linear model and an MLP on held-out perturbations, training with WMSE instead of MSE (each "
    "loss with its own learning rate from the same grid, both early-stopped on the same neutral validation "
    "metric, Pearson Δ vs the training mean) raises R²_w(Δ) and brings the diversity ratio closer to 1: the "
    "paired per-seed gains have 95 % intervals above 0",
    paper="Sec. 5 (WMSE as a training loss; GEARS+WMSE vs GEARS+MSE), abstract",
    control="the 'WMSE' arm trains with the plain MSE loss (DEG weights removed): both arms are the same "
    "model, every gain is exactly 0 and the claim must fail",
    judge=WMSE_LOSS_JUDGE,
    by_construction="a review found the judged gains close to a restatement of the training loss (R²_w = 1 - "
    "WMSE / SS_tot per perturbation, so training on WMSE raises R²_w on new perturbations almost by definition) "
    "and the diversity ratio failing a ground-truth check (the true profiles score 0.8 against the noisy test "
    "half; against the truth the WMSE models are further off in 10 of 10 pairs); a v3 needs a noise-aware "
    "diversity target and R²_w against the true effects",
)
def wmse_loss(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.degmetrics.train import compare_losses_tuned

    res = compare_losses_tuned(LOSS_PRESETS[scale], seed, LR_GRIDS[scale], ARCHS, deg_weights=not control)
    mean = res["mean_baseline"]
    measured, baselines = {}, {"mean baseline MSE": mean["mse"], "mean baseline R2w": mean["r2w_delta"]}
    for a in ARCHS:
        m, w = res[f"{a}/mse"], res[f"{a}/wmse"]
        measured[f"{a} R2w gain (WMSE - MSE)"] = w["r2w_delta"] - m["r2w_delta"]
        log_gap = abs(np.log(max(m["diversity"], 1e-12))) - abs(np.log(max(w["diversity"], 1e-12)))
        measured[f"{a} diversity gain |log d_MSE| - |log d_WMSE|"] = log_gap
    for a in ARCHS:
        m, w = res[f"{a}/mse"], res[f"{a}/wmse"]
        measured |= {
            f"{a} WMSE ratio (WMSE/MSE model)": w["wmse"] / m["wmse"],
            f"{a} MSE ratio (WMSE/MSE model)": w["mse"] / m["mse"],
            f"{a} MSE of WMSE model / mean baseline": w["mse"] / mean["mse"],
            f"{a} MSE of MSE model / mean baseline": m["mse"] / mean["mse"],
            f"{a} PearsonΔall gain (WMSE - MSE)": w["pearson_delta_all"] - m["pearson_delta_all"],
            f"{a} diversity MSE": m["diversity"],
            f"{a} diversity WMSE": w["diversity"],
            f"{a} unweighted diversity MSE": m["diversity_unweighted"],
            f"{a} unweighted diversity WMSE": w["diversity_unweighted"],
        }
        for loss, r in (("MSE", m), ("WMSE", w)):
            baselines |= {f"{a}/{loss} {k}": r[k] for k in ("r2w_delta", "mse", "pearson_delta_all", "lr")}
    holds = _verdict(WMSE_LOSS_JUDGE, measured)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4))
    names = list(res)
    for ax, metric in zip(axes, ("r2w_delta", "mse", "pearson_delta_all", "diversity")):
        ax.bar(range(len(names)), [res[n][metric] for n in names], color=["grey"] + ["C0", "C1"] * len(ARCHS))
        ax.set_xticks(range(len(names)), names, rotation=30, fontsize=8)
        ax.set_title(metric + " (test)")
    axes[3].axhline(1.0, color="grey", lw=0.8)
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"form": "GEARS(WMSE) > GEARS(MSE) on WMSE and R²_w; less mode collapse (no numbers given)"},
        baselines=baselines,
        reason=_shortfall(WMSE_LOSS_JUDGE, measured),
        figures={"mse-vs-wmse-training": fig},
    )


CLAIMS = [mean_baseline, informative_rewarded, wmse_loss]
