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

import sys
import types

from icml26._util.lazy import lazy_exports

# Each public name and its module, imported on first use: pandas, scanpy and torch load only when their parts
# are used, so the command line's parser (and --help) starts fast (PEP 562).
_LAZY = {
    "calibrated_score": "baselines",
    "calibration_baselines": "baselines",
    "SimConfig": "config",
    "simulate": "data",
    "DEGReference": "evaluate",
    "Evaluation": "evaluate",
    "evaluate": "evaluate",
    "deg_weights": "metrics",
    "weighted_delta_r2": "metrics",
    "welch_t_vs_rest": "metrics",
    "wmse": "metrics",
    "wmse_loss": "train",
    "compare_losses": "train",
    "compare_losses_tuned": "train",
}


class _Package(types.ModuleType):
    """The package keeps its public function ``evaluate`` when the module of the same name is first imported
    (the import system would otherwise set the package attribute to that module; an eager import used to hide
    this by binding the function after it)."""

    def __setattr__(self, name, value):
        if name == "evaluate" and isinstance(value, types.ModuleType):
            value = value.evaluate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


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
