"""U-Cast: A Surprisingly Simple and Efficient Frontier Probabilistic AI Weather Forecaster.

Rühling Cachay, Watson-Parris and Yu, ICML 2026 (arXiv:2604.09041). A standard U-Net (circular longitude
padding, dropout inside every residual block) forecasts the next 12-h increment from the two last frames.
It is trained in two stages: deterministic pre-training with a latitude-weighted mean absolute error, then a
short probabilistic fine-tuning with the fair CRPS over M = 2 Monte-Carlo-dropout members. Ensembles come
from MC dropout at inference: one network evaluation per member and step.

This package holds the network (:class:`UCast`), both training stages (:func:`train_stage`), ensemble
inference to xarray (:func:`forecast`), vectorised verification metrics (:func:`fair_crps`,
:func:`ensemble_scores`, :func:`evaluate_forecast`), a chaotic Kolmogorov-flow simulator standing in for
ERA5 (:func:`simulate_dataset`), a WeatherBench2-style loader for NetCDF, Zarr and GRIB (:func:`load_wb2`) and a
real hourly ERA5 2 m temperature series over the UK shipped with the package (:func:`load_era5_uk`).
"""

from icml26._util.lazy import lazy_exports

__all__ = [
    "DataConfig",
    "ModelConfig",
    "Normalizer",
    "Preset",
    "TrainConfig",
    "UCast",
    "UNet",
    "ensemble_scores",
    "evaluate_forecast",
    "fair_crps",
    "forecast",
    "get_preset",
    "latitude_weights",
    "load_checkpoint",
    "load_era5_uk",
    "load_wb2",
    "rank_histogram",
    "rollout",
    "set_mc_dropout",
    "simulate_dataset",
    "train_stage",
]


# Each public name and the module defining it, imported on first use (PEP 562): `icml26 ucast --help` and the
# CLI's parser load no torch, xarray or pandas.
_LAZY = {
    "DataConfig": "icml26.ucast.config",
    "ModelConfig": "icml26.ucast.config",
    "Normalizer": "icml26.ucast.data",
    "Preset": "icml26.ucast.config",
    "TrainConfig": "icml26.ucast.config",
    "UCast": "icml26.ucast.model",
    "UNet": "icml26.ucast.model",
    "ensemble_scores": "icml26.ucast.metrics",
    "evaluate_forecast": "icml26.ucast.evaluate",
    "fair_crps": "icml26.ucast.metrics",
    "forecast": "icml26.ucast.forecast",
    "get_preset": "icml26.ucast.config",
    "latitude_weights": "icml26.ucast.data",
    "load_checkpoint": "icml26.ucast.train",
    "load_era5_uk": "icml26.ucast.data",
    "load_wb2": "icml26.ucast.data",
    "rank_histogram": "icml26.ucast.metrics",
    "rollout": "icml26.ucast.forecast",
    "set_mc_dropout": "icml26.ucast.model",
    "simulate_dataset": "icml26.ucast.data",
    "train_stage": "icml26.ucast.train",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
