"""The paper's headline claims, executable on the NB simulator (ground truth known).

Every claim simulates a screen (``SIM_PRESETS[scale]``; per-gene NB parameters fitted to real PBMC cells),
splits each perturbation's cells into halves, builds the calibration baselines from the first half and
scores them against the second with :func:`~icml26.degmetrics.evaluate.evaluate`. Each claim's negative
control removes what the paper credits: sparse effects, the DEG weights, the shared control shift, the
perturbation effects themselves, or the DEG weights of the training loss.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from icml26.claims import ClaimResult, Scale, claim
from icml26.degmetrics.baselines import calibrated_score, calibration_baselines
from icml26.degmetrics.config import LOSS_PRESETS, SIM_PRESETS, SimConfig
from icml26.degmetrics.data import CONTROL, PERTURBATION_KEY, simulate
from icml26.degmetrics.evaluate import DEGReference, evaluate

BASELINES = ("technical_duplicate", "dataset_mean", "control_mean")
NULL_BAND = 0.05  # |R²_w| of the mean baseline counted as "≈ 0"
LABEL = {"technical_duplicate": "technical duplicate", "dataset_mean": "dataset mean", "control_mean": "control mean"}


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


@claim(
    "degmetrics/mean-baseline-wins-unweighted-v1",
    statement="On simulated sparse effects the dataset mean beats the technical duplicate on unweighted MSE "
    "and on Pearson Δ vs control",
    paper="Abstract; Sec. 3 / Fig. 1 (in-silico study)",
    control="dense effects (p_effect = 0.5, every perturbation changes half the genes): the sparsity the paper "
    "blames is gone, the duplicate beats the mean on MSE and Pearson Δ and the claim must fail",
)
def mean_baseline_wins_unweighted(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = SIM_PRESETS[scale].with_(p_effect=0.5) if control else SIM_PRESETS[scale]  # the one line the control changes
    s, source = baseline_summaries(cfg, seed)
    dup, mean = s["technical_duplicate"], s["dataset_mean"]
    mse_ratio = mean["mse"] / dup["mse"]
    pearson_gap = mean["pearson_delta_ctrl"] - dup["pearson_delta_ctrl"]
    holds = mse_ratio < 0.9 and pearson_gap > 0.01
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "MSE mean/duplicate": mse_ratio,
            "PearsonΔctrl mean - duplicate": pearson_gap,
            "PearsonΔctrl mean": mean["pearson_delta_ctrl"],
        },
        paper={"form": "unweighted error metrics reward mean predictions when perturbation effects are sparse"},
        elsewhere={
            "mean baseline MSE, Norman [GEARS issue #82]": 0.00527,
            "GEARS MSE, Norman [GEARS issue #82]": 0.00466,
            "mean baseline Δ-Pearson, Norman [GEARS issue #82]": 0.576,
            "GEARS Δ-Pearson, Norman [GEARS issue #82]": 0.570,
        },
        baselines={
            "MSE duplicate": dup["mse"],
            "MSE mean": mean["mse"],
            "PearsonΔctrl duplicate": dup["pearson_delta_ctrl"],
        },
        reason=("" if holds else f"MSE ratio {mse_ratio:.3f} (need < 0.9), Pearson gap {pearson_gap:.3f} (need > 0.01)")
        + _source_note(source),
    )


@claim(
    "degmetrics/mean-baseline-null-weighted-v1",
    statement="Under R²_w(Δ) the dataset mean scores ≈ 0 (|R²_w| <= 0.05) and the technical duplicate clearly "
    "positive; WMSE ranks duplicate < mean < control",
    paper="Sec. 4 (DEG-aware metrics and calibration baselines)",
    control="uniform weights w_kg = 1/G instead of the DEG weights: WMSE becomes the MSE (which ranks the mean "
    "above the duplicate) and R²_w an unweighted R² (the duplicate's turns negative), so the claim must fail",
    by_construction="R²_w(Δ) of the dataset mean is an identity of the metric (exactly -mean_w(Δ)²/var_w(Δ), "
    "near 0 for any weights, uniform ones included); only the duplicate's R²_w and the WMSE order test the "
    "DEG weights, which the control removes - replaced by mean-baseline-v2 / informative-rewarded-v2 (issue 14)",
)
def mean_baseline_null_weighted(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    s, source = baseline_summaries(SIM_PRESETS[scale], seed, uniform_weights=control)
    dup, mean, ctrl = s["technical_duplicate"], s["dataset_mean"], s["control_mean"]
    calibrated_mse = float(calibrated_score(mean["mse"], ctrl["mse"], dup["mse"]))
    holds = (
        abs(mean["r2w_delta"]) <= NULL_BAND and dup["r2w_delta"] >= 0.2 and dup["wmse"] < mean["wmse"] < ctrl["wmse"]
    )
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "R2w mean": mean["r2w_delta"],
            "R2w duplicate": dup["r2w_delta"],
            "WMSE mean/duplicate": mean["wmse"] / dup["wmse"],
            "calibrated MSE of mean": calibrated_mse,
        },
        paper={"R2w mean": "≈ 0 by construction", "R2w duplicate": "highest"},
        baselines={"R2w control": ctrl["r2w_delta"], "WMSE duplicate": dup["wmse"], "WMSE control": ctrl["wmse"]},
        reason=(
            ""
            if holds
            else f"R2w mean {mean['r2w_delta']:.3f}, duplicate {dup['r2w_delta']:.3f}; WMSE dup/mean/ctrl "
            f"{dup['wmse']:.4f}/{mean['wmse']:.4f}/{ctrl['wmse']:.4f}"
        )
        + _source_note(source),
    )


def _sweep_figure(xs, table, xlabel, metrics, title):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.4))
    for ax, (key, label) in zip(np.atleast_1d(axes), metrics):
        for name in BASELINES:
            ax.plot(xs, [row[name][key] for row in table], marker="o", label=LABEL[name])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


@claim(
    "degmetrics/control-bias-inflates-pearson-v1",
    statement="Over control bias B in {0, 0.5, 1, 2} the dataset mean's Pearson Δ vs control rises while its "
    "R²_w(Δ) stays ≈ 0",
    paper="Preprint arXiv:2506.22641 Fig. 1A (metric vs control bias)",
    control="no shared control-vs-perturbed shift (generic_sigma = 0, so B·δ_g = 0 at every B): the mean's "
    "Pearson Δ vs control cannot rise with B and the claim must fail",
    by_construction="the simulator adds B·δ_g to every perturbation, so the mean's control-referenced Pearson "
    "rises with B by how the data are built, and R²_w(Δ) of the mean is the metric identity "
    "-mean_w(Δ)²/var_w(Δ) - replaced by mean-baseline-v2 / informative-rewarded-v2 (issue 14)",
)
def control_bias_inflates_pearson(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    biases = [0.0, 0.5, 1.0, 2.0]
    base = SIM_PRESETS[scale].with_(generic_sigma=0.0) if control else SIM_PRESETS[scale]  # the control's line
    table, source = [], "pbmc"
    for b in biases:  # same seed: same genes, effects and shift direction; only B changes
        row, source = baseline_summaries(base.with_(control_bias=b), seed)
        table.append(row)
    pear = np.array([r["dataset_mean"]["pearson_delta_ctrl"] for r in table])
    r2w = np.array([r["dataset_mean"]["r2w_delta"] for r in table])
    rise = pear[-1] - pear[0]
    monotone = bool(np.all(np.diff(pear) > -0.01))
    holds = monotone and rise > 0.2 and np.all(np.abs(r2w) <= NULL_BAND)
    fig = _sweep_figure(
        biases,
        table,
        "control bias B",
        [("pearson_delta_ctrl", "Pearson Δ vs control"), ("mse", "MSE"), ("wmse", "WMSE"), ("r2w_delta", "R²_w(Δ)")],
        "Baselines vs control bias (higher Pearson/R²_w, lower MSE/WMSE = 'better')",
    )
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "PearsonΔctrl mean @B=0": pear[0],
            "PearsonΔctrl mean @B=2": pear[-1],
            "max |R2w mean|": float(np.max(np.abs(r2w))),
        },
        paper={"form": "monotone rise of Pearson Δ with B; weighted metrics unaffected"},
        baselines={
            "PearsonΔctrl duplicate @B=0": table[0]["technical_duplicate"]["pearson_delta_ctrl"],
            "PearsonΔctrl duplicate @B=2": table[-1]["technical_duplicate"]["pearson_delta_ctrl"],
            "R2w duplicate @B=2": table[-1]["technical_duplicate"]["r2w_delta"],
        },
        reason=("" if holds else f"Pearson {np.round(pear, 3).tolist()}, R2w {np.round(r2w, 3).tolist()}")
        + _source_note(source),
        figures={"metrics-vs-control-bias": fig},
    )


@claim(
    "degmetrics/sparsity-drives-artifact-v1",
    statement="The dataset mean's MSE advantage over the technical duplicate (MSE_dup / MSE_mean) grows as "
    "p_effect shrinks",
    paper="Sec. 3 (in-silico study: sparse perturbation effects cause the artifact)",
    control="no perturbation effects (fold_change = 1): p_effect then changes nothing, the advantage stays flat "
    "across the sweep and the claim must fail",
    by_construction="per gene the dataset mean's MSE is the noise plus p_effect·log(fc)² while the duplicate's is "
    "twice the noise, so the advantage falls with p_effect by formula - replaced by mean-baseline-v2 / "
    "informative-rewarded-v2 (issue 14)",
)
def sparsity_drives_artifact(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    p_effects = [0.005, 0.01, 0.02, 0.05, 0.1]
    base = SIM_PRESETS[scale].with_(fold_change=1.0) if control else SIM_PRESETS[scale]  # the control's line
    table, source = [], "pbmc"
    for p in p_effects:
        row, source = baseline_summaries(base.with_(p_effect=p), seed)
        table.append(row)
    adv = np.array([r["technical_duplicate"]["mse"] / r["dataset_mean"]["mse"] for r in table])
    # a flat advantage (no effects to thin out) has no trend; Spearman is undefined there, count it as 0
    rho = float(stats.spearmanr(p_effects, adv).statistic) if np.ptp(adv) > 0 else 0.0
    holds = rho <= -0.9 and adv[0] > 1.2 * adv[-1]
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    axes[0].plot(p_effects, adv, marker="o")
    axes[0].axhline(1.0, color="grey", lw=0.8)
    axes[0].set(xscale="log", xlabel="p_effect", ylabel="MSE duplicate / MSE mean", title="mean-baseline advantage")
    for name in BASELINES:
        axes[1].plot(p_effects, [r[name]["r2w_delta"] for r in table], marker="o", label=LABEL[name])
    axes[1].set(xscale="log", xlabel="p_effect", ylabel="R²_w(Δ)", title="weighted metric")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"advantage @p=0.005": adv[0], "advantage @p=0.1": adv[-1], "Spearman(p, advantage)": rho},
        paper={"form": "the sparser the effects, the better the mean baseline looks on unweighted metrics"},
        baselines={"R2w mean @p=0.005": table[0]["dataset_mean"]["r2w_delta"]},
        reason=("" if holds else f"advantage {np.round(adv, 3).tolist()}, Spearman {rho:.2f}") + _source_note(source),
        figures={"advantage-vs-sparsity": fig},
    )


@claim(
    "degmetrics/wmse-loss-reduces-collapse-v1",
    statement="For a linear model and an MLP, training with WMSE instead of MSE gives higher R²_w(Δ) on held-out "
    "perturbations and a diversity ratio closer to 1",
    paper="Sec. 5 (WMSE as a training loss; GEARS+WMSE vs GEARS+MSE), abstract",
    control="the 'WMSE' runs train with every gene weighted 1/G instead of the DEG weights, i.e. plain MSE "
    "(scaled, which Adam ignores): the gain must vanish and the claim must fail",
)
def wmse_loss_reduces_collapse(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from icml26.degmetrics.train import compare_losses

    res = compare_losses(LOSS_PRESETS[scale], seed, train_weights="uniform" if control else "deg")
    measured, ok = {}, []
    for arch in ("linear", "mlp"):
        m, w = res[f"{arch}/mse"], res[f"{arch}/wmse"]
        measured[f"{arch} R2w gain"] = w["r2w_delta"] - m["r2w_delta"]
        measured[f"{arch} diversity MSE"] = m["diversity"]
        measured[f"{arch} diversity WMSE"] = w["diversity"]
        closer = abs(np.log(max(w["diversity"], 1e-12))) < abs(np.log(max(m["diversity"], 1e-12)))
        ok.append(w["r2w_delta"] > m["r2w_delta"] + 0.01 and closer)
    baselines = {f"{k} {metric}": v[metric] for k, v in res.items() for metric in ("r2w_delta", "mse")}
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    names = list(res)
    for ax, metric in zip(axes, ("r2w_delta", "mse", "diversity")):
        ax.bar(range(len(names)), [res[n][metric] for n in names], color=["grey"] + ["C0", "C1"] * 2)
        ax.set_xticks(range(len(names)), names, rotation=30, fontsize=8)
        ax.set_title({"r2w_delta": "R²_w(Δ) (test)", "mse": "MSE (test)", "diversity": "diversity ratio"}[metric])
    axes[2].axhline(1.0, color="grey", lw=0.8)
    fig.tight_layout()
    holds = all(ok)
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"form": "GEARS(WMSE) > GEARS(MSE) on WMSE and R²_w; less mode collapse (no numbers given)"},
        baselines=baselines,
        reason="" if holds else f"linear ok={ok[0]}, mlp ok={ok[1]}: {res}",
        figures={"mse-vs-wmse-training": fig},
    )


CLAIMS = [
    mean_baseline_wins_unweighted,
    mean_baseline_null_weighted,
    control_bias_inflates_pearson,
    sparsity_drives_artifact,
    wmse_loss_reduces_collapse,
]
