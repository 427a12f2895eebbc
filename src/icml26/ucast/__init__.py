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

from icml26.ucast.config import DataConfig, ModelConfig, Preset, TrainConfig, get_preset
from icml26.ucast.data import Normalizer, latitude_weights, load_era5_uk, load_wb2, simulate_dataset
from icml26.ucast.evaluate import evaluate_forecast
from icml26.ucast.forecast import forecast, rollout
from icml26.ucast.metrics import ensemble_scores, fair_crps, rank_histogram
from icml26.ucast.model import UCast, UNet, set_mc_dropout
from icml26.ucast.train import load_checkpoint, train_stage

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
