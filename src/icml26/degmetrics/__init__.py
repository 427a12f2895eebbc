"""DEG-aware metrics for perturbation-response models, after "Needles in the Haystack: Addressing Signal
Dilution Improves scRNA-seq Perturbation Response Modeling and Evaluation" (Mejia, Miller, Leblanc, Wang,
Swain, de Lima Camillo; ICML 2026; preprint arXiv:2506.22641).

Unweighted metrics (MSE, Pearson of Δ against the control) reward predicting the dataset mean when
perturbation effects are sparse and share a control-vs-perturbed shift. The paper weights each gene by how
differentially expressed it is in the perturbation (``w_kg`` from a vs-rest Welch t-test: min-max of |t|,
squared, normalised), scores with the weighted MSE (WMSE) and the weighted R² of Δ against the mean of all
perturbations (R²_w(Δ)), calibrates them with negative (dataset mean, control) and positive (technical
duplicate) baselines, and trains models with WMSE to reduce mode collapse.

This package: :func:`evaluate` / :class:`DEGReference` score AnnData predictions with every metric side by
side (data scale stated and validated); :func:`calibration_baselines` and :func:`calibrated_score`;
:func:`simulate`, a negative-binomial perturb-seq simulator fitted to real PBMC cells; :func:`wmse_loss` and
:func:`compare_losses` / :func:`compare_losses_tuned` for training with WMSE. The array-level metrics live in
:mod:`icml26.degmetrics.metrics`.
"""

from icml26.degmetrics.baselines import calibrated_score, calibration_baselines
from icml26.degmetrics.config import SimConfig
from icml26.degmetrics.data import simulate
from icml26.degmetrics.evaluate import DEGReference, Evaluation, evaluate
from icml26.degmetrics.metrics import deg_weights, weighted_delta_r2, welch_t_vs_rest, wmse


def __getattr__(name):  # torch is imported only when the training helpers are used
    if name in ("wmse_loss", "compare_losses", "compare_losses_tuned"):
        from icml26.degmetrics import train

        return getattr(train, name)
    raise AttributeError(f"module 'icml26.degmetrics' has no attribute {name!r}")


__all__ = [
    "DEGReference",
    "Evaluation",
    "SimConfig",
    "calibrated_score",
    "calibration_baselines",
    "compare_losses",
    "compare_losses_tuned",
    "deg_weights",
    "evaluate",
    "simulate",
    "weighted_delta_r2",
    "welch_t_vs_rest",
    "wmse",
    "wmse_loss",
]
