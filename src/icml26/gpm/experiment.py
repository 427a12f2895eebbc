"""One accuracy-vs-test-length experiment: calibrate, train the learned policies, simulate, measure."""

from __future__ import annotations

import logging
import time

import numpy as np

from icml26.gpm.calibrate import calibrate
from icml26.gpm.config import ExperimentConfig
from icml26.gpm.data import ResponseData
from icml26.gpm.evaluate import Curves, evaluate_selectors, items_needed, split_pool
from icml26.gpm.irt import ItemBank
from icml26.gpm.policy import GPMSelector
from icml26.gpm.selectors import BECATSelector, KLISelector, MFISelector, RandomSelector, Selector

logger = logging.getLogger(__name__)

SELECTORS = ("random", "mfi", "kli", "becat", "bobcat", "gpm")


def make_selector(name: str, bank: ItemBank, cfg: ExperimentConfig, seed: int, **policy_kwargs) -> Selector:
    """An (untrained, for learned policies) selector by name; ``policy_kwargs`` override a learned policy's
    hyper-parameters (e.g. ``epochs=0``)."""
    simple = {"random": RandomSelector, "mfi": MFISelector, "kli": KLISelector, "becat": BECATSelector}
    if name in simple:
        return simple[name]()
    if name in ("gpm", "bobcat"):
        return GPMSelector(
            bank,
            objective="path" if name == "gpm" else "heldout",
            test_length=cfg.test_length,
            hidden=cfg.hidden,
            **{"epochs": cfg.epochs, "seed": seed, **policy_kwargs},
        )
    raise ValueError(f"unknown selector {name!r}; choose from {', '.join(SELECTORS)}")


def compare_selectors(
    data: ResponseData,
    cfg: ExperimentConfig,
    seed: int,
    *,
    use_true_bank: bool = False,
    gpm_kwargs: dict | None = None,
) -> tuple[dict[str, Curves], dict[str, float]]:
    """Split examinees into train / test, calibrate a 2PL on train (or use the true bank), train the learned
    policies on train, and run every selector on the test examinees' 80 / 20 pools.

    ``gpm_kwargs`` override hyper-parameters of the GPM policy only (not BOBCAT's), e.g. ``{"epochs": 0}``
    for an untrained GPM (a negative control).

    Returns the curves per selector and timings (seconds) of calibration and training.
    """
    rng = np.random.default_rng(seed)
    n = data.responses.shape[0]
    if cfg.n_train + cfg.n_test > n:
        raise ValueError(f"{data.name}: needs {cfg.n_train + cfg.n_test} examinees, has {n}")
    order = rng.permutation(n)
    train, test = data.rows(order[: cfg.n_train]), data.rows(order[cfg.n_train : cfg.n_train + cfg.n_test])
    timings = {}
    start = time.perf_counter()
    if use_true_bank:
        if data.bank is None:
            raise ValueError("use_true_bank needs synthetic data with a known bank")
        bank, x_train, x_test = data.bank, train.responses, test.responses
    else:
        bank, kept = calibrate(train.responses, "2pl")
        x_train, x_test = train.responses[:, kept], test.responses[:, kept]
    timings["calibrate_s"] = time.perf_counter() - start
    selectors = {}
    for name in cfg.selectors:
        sel = make_selector(name, bank, cfg, seed, **((gpm_kwargs or {}) if name == "gpm" else {}))
        if isinstance(sel, GPMSelector):
            start = time.perf_counter()
            sel.fit(x_train)
            timings[f"train_{name}_s"] = time.perf_counter() - start
        selectors[name] = sel
    split = split_pool(x_test, rng)
    theta_true = test.theta if test.theta is not None and np.ndim(test.theta) == 1 else None
    curves = evaluate_selectors(bank, selectors, x_test, split, cfg.max_length, rng, theta_true)
    return curves, timings


def fewer_items(curves: dict[str, Curves], ours: str, baseline: str, length: int) -> float:
    """Fraction of questions saved: 1 - (items ``ours`` needs to reach ``baseline``'s RMSE at ``length``) / length.

    When ``ours`` never reaches it within the simulated curve, the need is capped at the curve's length + 1
    (so the saving is a bound: at most this negative).
    """
    curve = curves[ours].rmse_star
    need = min(items_needed(curve, curves[baseline].rmse_star[length]), float(curve.size))
    return 1.0 - need / length


def plot_curves(results: dict[str, dict[str, Curves]], length: int):
    """RMSE(theta_hat, theta*) and held-out AUC against test length, one column per data set."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5 * len(results), 7.5))
    axes = fig.subplots(2, len(results), squeeze=False)
    for col, (dataset, curves) in enumerate(results.items()):
        for name, c in curves.items():
            t = np.arange(c.rmse_star.size)
            style = {"lw": 2.5} if name == "gpm" else {"lw": 1.2}
            axes[0, col].plot(t[1:], c.rmse_star[1:], label=name, **style)
            axes[1, col].plot(t[1:], c.auc[1:], label=name, **style)
        axes[0, col].axvline(length, color="grey", ls=":", lw=1)
        axes[0, col].set(title=dataset, ylabel="RMSE vs theta* (full pool)", yscale="log")
        axes[1, col].set(xlabel="test length t (items asked)", ylabel="held-out AUC")
        axes[0, col].legend(fontsize=8)
    fig.tight_layout()
    return fig
