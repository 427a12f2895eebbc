"""The laptop-scale experiment behind the claims (``papers/dualflow.md`` §7, a reconstruction).

Lorenz-63 latents drive Poisson neurons; DCF and the baselines are fitted on training trials and evaluated
on held-out trials. Results are cached per (scale, seed, regime, model seed) so the claims of one
``icml26 reproduce`` run share their fits.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
from dataclasses import dataclass, field

import numpy as np

from icml26.claims import Scale
from icml26.dualflow.baselines import DMDBaseline, GPFABaseline, PCABaseline, VAEBaseline
from icml26.dualflow.data import SpikingDataset, make_spiking_dataset
from icml26.dualflow.estimator import DualFlow
from icml26.dualflow.metrics import (
    latent_decoding_r2,
    mean_canonical_correlation,
    reconstruction_r2,
    temporal_neighbour_preservation,
)

logger = logging.getLogger(__name__)

# data and training sizes per scale; DCF keyword arguments on top of the estimator's defaults
SETTINGS = {
    Scale.SMOKE: {
        "n_trials": 40,
        "n_test": 10,
        "n_time": 60,
        "n_neurons": 30,
        "steps": 150,
        "gpfa_iters": 5,
        "dcf": {"hidden": 48, "depth": 2, "batch_size": 64, "rtol": 1e-3, "atol": 1e-3},
    },
    Scale.SMALL: {
        "n_trials": 120,
        "n_test": 30,
        "n_time": 100,
        "n_neurons": 60,
        "steps": 1000,
        "gpfa_iters": 30,
        "dcf": {"hidden": 96, "depth": 3, "batch_size": 128, "rtol": 1e-4, "atol": 1e-4},
    },
    Scale.PAPER: {
        "n_trials": 800,
        "n_test": 200,
        "n_time": 100,
        "n_neurons": 137,
        "steps": 20000,
        "gpfa_iters": 200,
        "dcf": {"hidden": 256, "depth": 4, "batch_size": 256},
    },
}
N_LATENT = 3  # the paper decodes from the first three latent coordinates


@dataclass
class MethodResult:
    """Latents and scores of one method on the held-out trials."""

    z_train: np.ndarray
    z_test: np.ndarray
    decoding_r2: float
    cca: float
    neighbours: float
    spearman: float
    extra: dict = field(default_factory=dict)


def _score(z_train: np.ndarray, z_test: np.ndarray, data: SpikingDataset, n_train: int, **extra) -> MethodResult:
    s_train, s_test = data.latents[:n_train], data.latents[n_train:]
    frac, rho = temporal_neighbour_preservation(z_test)
    return MethodResult(
        z_train,
        z_test,
        latent_decoding_r2(z_train, s_train, z_test, s_test),
        mean_canonical_correlation(z_test, s_test),
        frac,
        rho,
        dict(extra),
    )


@functools.lru_cache(maxsize=4)
def dataset(scale: Scale, seed: int, regime: str) -> SpikingDataset:
    cfg = SETTINGS[scale]
    return make_spiking_dataset(
        "lorenz", n_trials=cfg["n_trials"], n_time=cfg["n_time"], n_neurons=cfg["n_neurons"], regime=regime, seed=seed
    )


@functools.lru_cache(maxsize=8)
def fit_dcf(scale: Scale, seed: int, regime: str, model_seed: int, **overrides) -> tuple[DualFlow, MethodResult]:
    """Fit DCF on the training trials; score the flowed latent (first 3 coordinates) on the test trials.

    ``overrides`` replace :class:`DualFlow` keyword arguments of the scale's setting (hashable values), e.g.
    ``lr=0.0`` (untrained) or ``nested_dropout=False`` for a negative control.
    """
    cfg, data = SETTINGS[scale], dataset(scale, seed, regime)
    n_train = cfg["n_trials"] - cfg["n_test"]
    train, test = data.smoothed[:n_train], data.smoothed[n_train:]
    est = DualFlow(**{"n_steps": cfg["steps"], "random_state": model_seed, **cfg["dcf"], **overrides}).fit(train)
    z_train, z_test = est.transform(train, N_LATENT), est.transform(test, N_LATENT)
    full = est.transform(test)
    extra = {
        "round trip R2": reconstruction_r2(test, est.inverse_transform(full)),
        "truncated R2": reconstruction_r2(test, est.inverse_transform(full[..., :N_LATENT])),
        "truncated R2 vs rates": reconstruction_r2(data.rates[n_train:], est.inverse_transform(full[..., :N_LATENT])),
        "K_eff": est.effective_dim_,
    }
    return est, _score(z_train, z_test, data, n_train, **extra)


@functools.lru_cache(maxsize=8)
def fit_vae(scale: Scale, seed: int, regime: str, model_seed: int) -> MethodResult:
    cfg, data = SETTINGS[scale], dataset(scale, seed, regime)
    n_train = cfg["n_trials"] - cfg["n_test"]
    train, test = data.smoothed[:n_train], data.smoothed[n_train:]
    vae = VAEBaseline(N_LATENT, hidden=cfg["dcf"]["hidden"], n_steps=cfg["steps"], seed=model_seed).fit(train)
    z_test = vae.transform(test)
    rec = vae.inverse_transform(z_test)
    extra = {"R2": reconstruction_r2(test, rec), "R2 vs rates": reconstruction_r2(data.rates[n_train:], rec)}
    return _score(vae.transform(train), z_test, data, n_train, **extra)


@functools.lru_cache(maxsize=4)
def fit_linear_baselines(scale: Scale, seed: int, regime: str) -> dict[str, MethodResult]:
    """PCA and DMD on smoothed counts, GPFA (elephant) on the spike counts, all with 3 components."""
    cfg, data = SETTINGS[scale], dataset(scale, seed, regime)
    n_train = cfg["n_trials"] - cfg["n_test"]
    train, test = data.smoothed[:n_train], data.smoothed[n_train:]
    out = {}
    pca = PCABaseline(N_LATENT).fit(train)
    rec = pca.inverse_transform(pca.transform(test))
    out["PCA"] = _score(
        pca.transform(train),
        pca.transform(test),
        data,
        n_train,
        **{"R2": reconstruction_r2(test, rec), "R2 vs rates": reconstruction_r2(data.rates[n_train:], rec)},
    )
    dmd = DMDBaseline(N_LATENT).fit(train)
    out["DMD"] = _score(dmd.transform(train), dmd.transform(test), data, n_train)
    gpfa = GPFABaseline(N_LATENT, bin_size=data.bin_size, em_max_iters=cfg["gpfa_iters"], seed=seed)
    with contextlib.redirect_stdout(io.StringIO()):  # elephant prints its progress
        gpfa.fit(data.spikes[:n_train])
        z_tr, z_te = gpfa.transform(data.spikes[:n_train]), gpfa.transform(data.spikes[n_train:])
    out["GPFA"] = _score(z_tr, z_te, data, n_train)
    return out
