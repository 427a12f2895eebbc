"""The laptop-scale U-Cast experiment: simulate, train both stages, score U-Cast against its baselines.

Models compared on held-out simulator trajectories (all scores in per-channel normalised units, averaged
over channels, per lead time):

* ``ucast``       stage 2 (fair-CRPS fine-tuned) with MC dropout  - the paper's model;
* ``det``         stage 1 (MAE) deterministic; its CRPS is its MAE;
* ``mc_dropout``  stage 1 with MC dropout, no CRPS fine-tuning;
* ``ic_perturbed`` stage 1 deterministic with Gaussian initial-condition perturbations;
* ``persistence`` and ``climatology`` (reference points).
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from icml26.ucast.config import Preset, get_preset
from icml26.ucast.data import Normalizer, dataset_to_array, latitude_weights, simulate_dataset
from icml26.ucast.forecast import rollout
from icml26.ucast.metrics import deterministic_scores, ensemble_scores, rank_histogram
from icml26.ucast.model import UCast
from icml26.ucast.train import train_stage

logger = logging.getLogger(__name__)

VARIABLES = ["vorticity", "tracer"]

#: What stage 2 is: the paper's fair-CRPS fine-tuning, or a negative control of the claims.
#: ``mae``: the same steps and schedule on the stage-1 MAE loss (CRPS switched off; the batch is M times
#: larger, so each step sees as many samples as the M-member CRPS step: compute-matched);
#: ``scratch``: the paper's CRPS stage, but from random weights instead of the stage-1 warm start;
#: ``skip``: no stage 2, U-Cast keeps the stage-1 weights (it is then the MC-dropout baseline);
#: ``untrained``: no training at all, a randomly initialised network (its output layer too, which
#: :class:`UNet` zero-initialises so that an untrained U-Cast would be the persistence forecast).
STAGE2 = ("crps", "mae", "scratch", "skip", "untrained")

#: Offset of the forecast phase's seeds (one per ensemble; see :func:`run_experiment`).
_FORECAST_SEED = 7_777_777


@dataclass
class ExperimentResult:
    """Per-lead scores (channel mean) of every model, plus what the plots need."""

    leads: np.ndarray
    scores: dict[str, dict[str, np.ndarray]]  # model -> metric -> (S,)
    rank_hist: dict[str, np.ndarray]  # model -> (M+1,) counts at the last lead
    sample: dict[str, np.ndarray] = field(default_factory=dict)  # truth / member maps for a figure
    timings: dict[str, float] = field(default_factory=dict)
    history: dict[str, list] = field(default_factory=dict)


def build_model(preset: Preset, norm: Normalizer, static: np.ndarray, lat, lon) -> UCast:
    """A fresh U-Cast for the simulator's channels."""
    return UCast(preset.model, len(VARIABLES), norm.mean, norm.std, norm.res_std, static, lat, lon, 0, VARIABLES)


def simulate_split(preset: Preset, seed: int):
    """Train and test trajectories from independent simulator seeds."""
    d = preset.data
    kw = dict(n_grid=d.n_grid, solver_n=d.solver_n, every=d.every, spin_up=d.spin_up, noise=d.noise, dt=d.dt)
    train = simulate_dataset(d.n_train, d.frames, seed=2 * seed, **kw)
    test = simulate_dataset(d.n_test, d.frames, seed=2 * seed + 1, **kw)
    return train, test


def _init_indices(n_traj: int, frames: int, steps: int, n_inits: int) -> np.ndarray:
    """(n, 2) array of (trajectory, t) initial conditions, spread evenly over the test set."""
    ts = np.arange(1, frames - steps)
    pairs = np.array([(b, t) for b in range(n_traj) for t in ts])
    pick = np.linspace(0, len(pairs) - 1, min(n_inits, len(pairs))).round().astype(int)
    return pairs[pick]


@functools.lru_cache(maxsize=16)  # the claims and their controls share a few (preset, seed, stage2) runs
def run_experiment(preset_name: str, seed: int, init_noise: float = 0.05, stage2: str = "crps") -> ExperimentResult:
    """Run (or return the cached) experiment for ``preset_name`` and ``seed``; ``stage2`` is one of
    :data:`STAGE2` (``crps``: the paper's recipe; the others are the claims' negative controls)."""
    if stage2 not in STAGE2:
        raise ValueError(f"stage2 must be one of {STAGE2}, got {stage2!r}")
    torch.manual_seed(seed)
    preset = get_preset(preset_name)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    train_ds, test_ds = simulate_split(preset, seed)
    timings["simulate_s"] = time.perf_counter() - t0
    x_train = dataset_to_array(train_ds, VARIABLES)  # (N, T, C, H, W)
    x_test = dataset_to_array(test_ds, VARIABLES)
    norm = Normalizer.fit(x_train)
    static = train_ds["forcing_pattern"].values[None]  # (1, H, W)
    lat, lon = train_ds.lat.values, train_ds.lon.values
    model = build_model(preset, norm, static, lat, lon)
    z_train = model.normalise(torch.as_tensor(x_train)).numpy()
    z_test = model.normalise(torch.as_tensor(x_test)).numpy()

    t0 = time.perf_counter()
    det, hist_det = train_stage(model, z_train, preset.det, seed=seed)
    timings["stage1_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = build_model(preset, norm, static, lat, lon) if stage2 in ("scratch", "untrained") else _clone(det)
    prob_cfg = preset.prob
    if stage2 == "mae":
        prob_cfg = replace(prob_cfg, stage="det", batch_size=prob_cfg.batch_size * prob_cfg.members)
    if stage2 == "untrained":
        warm.net.head[-1].reset_parameters()  # PyTorch's default random init instead of zeros
    if stage2 in ("skip", "untrained"):
        prob, hist_prob = warm.eval(), []
    else:
        prob, hist_prob = train_stage(warm, z_train, prob_cfg, seed=seed + 10_000)
    timings["stage2_s"] = time.perf_counter() - t0

    m, s = preset.eval_members, preset.eval_steps
    idx = _init_indices(z_test.shape[0], z_test.shape[1], s, preset.n_inits)
    b, t = idx[:, 0], idx[:, 1]
    z_prev, z_cur = torch.as_tensor(z_test[b, t - 1]), torch.as_tensor(z_test[b, t])
    truth = np.stack([z_test[b, t + k] for k in range(1, s + 1)], axis=1)  # (N, S, C, H, W)
    w = latitude_weights(lat)

    def seeded(k: int, *args, **kwargs) -> torch.Tensor:
        # Each ensemble's dropout masks / IC perturbations come from its own seed, fixed by ``seed`` alone:
        # whatever stage 2 drew from the global RNG (a control may train less or not at all), the baselines'
        # ensembles are the same for a claim and its control on the same seed.
        torch.manual_seed(_FORECAST_SEED + 1_000 * seed + k)
        return rollout(*args, **kwargs)

    t0 = time.perf_counter()
    fc = {
        "ucast": seeded(0, prob, z_prev, z_cur, m, s, dropout=True),
        "mc_dropout": seeded(1, det, z_prev, z_cur, m, s, dropout=True),
        "ic_perturbed": seeded(2, det, z_prev, z_cur, m, s, dropout=False, init_noise=init_noise),
    }
    timings["rollouts_s"] = time.perf_counter() - t0
    det_fc = rollout(det, z_prev, z_cur, 1, s, dropout=False)[0].transpose(0, 1).numpy()  # (N, S, C, H, W)

    def summary(sc: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: v.mean(axis=-1) for k, v in sc.items()}  # mean over channels -> (S,)

    scores = {name: summary(ensemble_scores(f.transpose(1, 2).numpy(), truth, w)) for name, f in fc.items()}
    scores["det"] = summary(deterministic_scores(det_fc, truth, w))
    persistence = np.repeat(z_test[b, t][:, None], s, axis=1)
    scores["persistence"] = summary(deterministic_scores(persistence, truth, w))
    clim = np.broadcast_to(z_train.mean(axis=(0, 1)), truth.shape)
    scores["climatology"] = summary(deterministic_scores(clim, truth, w))
    ranks = {name: rank_histogram(f[:, -1].numpy(), truth[:, -1]) for name, f in fc.items()}
    sample = {
        "truth": truth[0, -1, 0],
        "det": det_fc[0, -1, 0],
        "members": fc["ucast"][:3, -1, 0, 0].numpy(),
        "lat": lat,
        "lon": lon,
    }
    return ExperimentResult(
        leads=np.arange(1, s + 1) * preset.data.every,
        scores=scores,
        rank_hist=ranks,
        sample=sample,
        timings=timings,
        history={"det": hist_det, "prob": hist_prob},
    )


def _clone(model: UCast) -> UCast:
    """A fresh copy of ``model`` (stage 2 warm-starts from the stage-1 EMA weights)."""
    new = UCast.from_config_dict(model.config_dict())
    new.load_state_dict(model.state_dict())
    return new
