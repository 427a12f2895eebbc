"""Accuracy-vs-length experiments: prepare a data set, train the learned policies, simulate, measure.

Everything a claim needs for one (data set, scale, seed) is computed once per process and cached: the claims
and their negative controls share the data, the calibrated bank, the trained policies and the baselines'
curves, so a control re-runs only what it changes.
"""

from __future__ import annotations

import logging
import time
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from icml26.gpm.calibrate import calibrate
from icml26.gpm.config import ExperimentConfig
from icml26.gpm.data import ResponseData, load_swedish_sat, simulate_misspecified
from icml26.gpm.evaluate import Curves, Split, evaluate_selectors, items_needed, split_pool
from icml26.gpm.irt import ItemBank
from icml26.gpm.policy import GPMSelector
from icml26.gpm.selectors import BECATSelector, KLISelector, MFISelector, RandomSelector, Selector

logger = logging.getLogger(__name__)

SELECTORS = ("random", "mfi", "kli", "becat", "bobcat", "gpm-endpoint", "gpm")
_OBJECTIVE = {"gpm": "path", "gpm-endpoint": "endpoint", "bobcat": "heldout"}


def make_selector(name: str, bank: ItemBank, cfg: ExperimentConfig, seed: int, **policy_kwargs) -> Selector:
    """An (untrained, for learned policies) selector by name; ``policy_kwargs`` override a learned policy's
    hyper-parameters (e.g. ``epochs=0``)."""
    simple = {"random": RandomSelector, "mfi": MFISelector, "kli": KLISelector, "becat": BECATSelector}
    if name in simple:
        return simple[name]()
    if name in _OBJECTIVE:
        return GPMSelector(
            bank,
            objective=_OBJECTIVE[name],
            test_length=cfg.test_length,
            hidden=cfg.hidden,
            batch_size=cfg.batch_size,
            patience=cfg.patience,
            **{"epochs": cfg.epochs, "seed": seed, **policy_kwargs},
        )
    raise ValueError(f"unknown selector {name!r}; choose from {', '.join(SELECTORS)}")


@dataclass
class Prepared:
    """One data set split into training / test / re-calibration examinees, with the bank fitted on training."""

    name: str
    bank: ItemBank
    x_train: np.ndarray
    x_test: np.ndarray
    x_recal: np.ndarray
    split: Split
    theta_true: np.ndarray | None
    calibrate_s: float


def load_dataset(name: str, n: int, n_items: int, rng: np.random.Generator) -> ResponseData:
    """``misspecified MIRT`` (n simulated examinees, n_items items) or the ``Swedish SAT`` (5,000 x 160)."""
    if name == "misspecified MIRT":
        return simulate_misspecified(n, n_items, rng)
    if name == "Swedish SAT":
        return load_swedish_sat()
    raise ValueError(f"unknown data set {name!r}")


@lru_cache(maxsize=16)
def prepare(dataset: str, cfg: ExperimentConfig, seed: int, use_true_bank: bool = False) -> Prepared:
    """Shuffle the examinees, keep n_train / n_test / n_recal of them, calibrate a 2PL on the training ones
    (or use the generating bank), and split each test examinee's items 80 / 20 into pool and held-out."""
    rng = np.random.default_rng(seed)
    data = load_dataset(dataset, cfg.n_train + cfg.n_test + cfg.n_recal, cfg.n_items, rng)
    n = data.responses.shape[0]
    n_train = min(cfg.n_train, n - cfg.n_test - cfg.n_recal)
    if n_train < 2:
        raise ValueError(f"{dataset}: needs more than {cfg.n_test + cfg.n_recal} examinees, has {n}")
    order = rng.permutation(n)
    train = data.rows(order[:n_train])
    test = data.rows(order[n_train : n_train + cfg.n_test])
    recal = data.rows(order[n_train + cfg.n_test : n_train + cfg.n_test + cfg.n_recal])
    start = time.perf_counter()
    if use_true_bank:
        if data.bank is None:
            raise ValueError("use_true_bank needs synthetic data with a known bank")
        bank, kept = data.bank, np.arange(data.responses.shape[1])
    else:
        bank, kept = calibrate(train.responses, "2pl")
    seconds = time.perf_counter() - start
    x_test = test.responses[:, kept]
    theta_true = test.theta if test.theta is not None and np.ndim(test.theta) == 1 else None
    return Prepared(dataset, bank, train.responses[:, kept], x_test, recal.responses[:, kept],
                    split_pool(x_test, rng), theta_true, seconds)  # fmt: skip


def _key(kwargs: dict) -> tuple:
    return tuple(sorted(kwargs.items()))


@lru_cache(maxsize=64)
def _trained(dataset: str, cfg: ExperimentConfig, seed: int, name: str, kw: tuple) -> tuple[GPMSelector, float]:
    prep = prepare(dataset, cfg, seed)
    sel = make_selector(name, prep.bank, cfg, seed, **dict(kw))
    start = time.perf_counter()
    sel.fit(prep.x_train)
    return sel, time.perf_counter() - start


def trained_policy(dataset: str, cfg: ExperimentConfig, seed: int, name: str = "gpm", **kwargs) -> GPMSelector:
    """A learned policy (``gpm``, ``gpm-endpoint`` or ``bobcat``) trained on the data set's training examinees."""
    return _trained(dataset, cfg, seed, name, _key(kwargs))[0]


def training_seconds(dataset: str, cfg: ExperimentConfig, seed: int, name: str = "gpm", **kwargs) -> float:
    return _trained(dataset, cfg, seed, name, _key(kwargs))[1]


@lru_cache(maxsize=256)
def _curves(dataset: str, cfg: ExperimentConfig, seed: int, name: str, kw: tuple, use_true_bank: bool) -> Curves:
    prep = prepare(dataset, cfg, seed, use_true_bank)
    if name in _OBJECTIVE:
        if use_true_bank:
            sel = make_selector(name, prep.bank, cfg, seed, **dict(kw)).fit(prep.x_train)
        else:
            sel = trained_policy(dataset, cfg, seed, name, **dict(kw))
    else:
        sel = make_selector(name, prep.bank, cfg, seed)
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])  # each selector its own stream
    return evaluate_selectors(prep.bank, {name: sel}, prep.x_test, prep.split, cfg.max_length, rng,
                              prep.theta_true)[name]  # fmt: skip


def selector_curves(dataset: str, cfg: ExperimentConfig, seed: int, name: str, *, use_true_bank: bool = False,
                    **policy_kwargs) -> Curves:  # fmt: skip
    """The metric curves of one selector on the data set's test examinees (cached)."""
    return _curves(dataset, cfg, seed, name, _key(policy_kwargs), use_true_bank)


def compare_selectors(
    data: ResponseData,
    cfg: ExperimentConfig,
    seed: int,
    *,
    use_true_bank: bool = False,
    gpm_kwargs: dict | None = None,
) -> tuple[dict[str, Curves], dict[str, float]]:
    """Uncached, for any ``ResponseData``: split train / test, calibrate (or use the true bank), train the
    learned policies, run every selector of ``cfg.selectors`` on the test examinees' 80 / 20 pools.

    ``gpm_kwargs`` override hyper-parameters of the GPM policy only. Returns the curves and timings (s).
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


def real_data_experiment(
    data: ResponseData,
    *,
    length: int,
    max_length: int,
    train_frac: float = 0.65,
    seed: int = 0,
    epochs: int = 5,
    hidden: int = 64,
    batch_size: int = 8,
    patience: int = 2,
) -> tuple[dict[str, Curves], dict[str, float]]:
    """Adaptive tests on a real response table with held-out examinees.

    The examinees are shuffled (``seed``); ``train_frac`` of them calibrate a 2PL bank and train the GPM policy,
    the others take simulated adaptive tests on their own answers (each one's answered items split 80 / 20 into
    the pool and held-out answers, :func:`split_pool`; an examinee whose pool is shorter than ``max_length`` is
    left out and counted). Selectors: random, MFI, BECAT, a second BECAT on its own
    random stream (the A/A partner: BECAT samples its ground sets) and GPM (path matching, the small preset's
    schedule: batch 8, early stopping). Returns the curves to ``max_length`` items and the sizes and timings.
    """
    n, n_items = data.responses.shape
    n_train = round(train_frac * n)
    if not 2 <= n_train <= n - 2:
        raise ValueError(f"{data.name}: {n} examinees cannot be split {train_frac:.0%} / {1 - train_frac:.0%}")
    if not 1 <= length <= max_length:
        raise ValueError(f"need 1 <= length ({length}) <= max_length ({max_length})")
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    train, test = data.rows(order[:n_train]), data.rows(order[n_train:])
    start = time.perf_counter()
    bank, kept = calibrate(train.responses, "2pl")
    info = {"examinees": float(n), "items": float(n_items), "items kept": float(len(kept)),
            "train examinees": float(n_train), "test examinees": float(n - n_train),
            "calibrate_s": time.perf_counter() - start}  # fmt: skip
    x_train, x_test = train.responses[:, kept], test.responses[:, kept]
    split = split_pool(x_test, rng)
    # examinees who skipped many items have a pool too small for a test of max_length: they are left out
    enough = split.pool.sum(axis=1) >= max_length
    if enough.sum() < 2:
        pool = int(split.pool.sum(axis=1).max())
        raise ValueError(f"{data.name}: max_length {max_length} exceeds every test examinee's pool (<= {pool} items)")
    x_test, split = x_test[enough], Split(split.pool[enough], split.heldout[enough])
    info["test examinees"], info["test examinees left out (pool < max_length)"] = (
        float(enough.sum()),
        float((~enough).sum()),
    )
    gpm = GPMSelector(bank, test_length=length, hidden=hidden, batch_size=batch_size, epochs=epochs,
                      patience=patience, seed=seed)  # fmt: skip
    start = time.perf_counter()
    gpm.fit(x_train)
    info["train_gpm_s"] = time.perf_counter() - start
    selectors = {"random": RandomSelector(), "mfi": MFISelector(), "becat": BECATSelector(),
                 "becat (A/A)": BECATSelector(), "gpm": gpm}  # fmt: skip
    curves = evaluate_selectors(bank, selectors, x_test, split, max_length, rng)
    return curves, info


def fewer_items(curves: dict[str, Curves], ours: str, baseline: str, length: int) -> float:
    """Fraction of questions saved: 1 - (items ``ours`` needs to reach ``baseline``'s RMSE at ``length``) / length.

    When ``ours`` never reaches it within the simulated curve, the need is capped at the curve's length + 1
    (so the saving is a bound: at most this negative).
    """
    curve = curves[ours].rmse_star
    need = min(items_needed(curve, curves[baseline].rmse_star[length]), float(curve.size))
    return 1.0 - need / length


def _short(name: str) -> str:
    return "misspec" if name.startswith("misspec") else "sat" if "SAT" in name else name


def plot_curves(results: dict[str, dict[str, Curves]], length: int):
    """Per data set (columns): RMSE vs test length, and items needed vs target RMSE, per selector."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5 * len(results), 8))
    axes = fig.subplots(2, len(results), squeeze=False)
    for col, (dataset, curves) in enumerate(results.items()):
        lo = max(min(float(c.rmse_star[-1]) for c in curves.values()), 1e-3)
        hi = max(float(c.rmse_star[5]) for c in curves.values() if c.rmse_star.size > 5) if curves else 1.0
        targets = np.geomspace(lo, max(hi, lo * 1.01), 40)
        for name, c in curves.items():
            t = np.arange(c.rmse_star.size)
            style = {"lw": 2.5} if name == "gpm" else {"lw": 1.2}
            axes[0, col].plot(t[1:], c.rmse_star[1:], label=name, **style)
            need = np.array([items_needed(c.rmse_star, r) for r in targets])
            axes[1, col].plot(targets, need, label=name, **style)
        axes[0, col].axvline(length, color="grey", ls=":", lw=1)
        axes[0, col].set(title=dataset, xlabel="test length t (items asked)", ylabel="RMSE vs theta* (full pool)",
                         yscale="log")  # fmt: skip
        axes[1, col].set(xlabel="target RMSE vs theta*", ylabel="items needed (interpolated)", xscale="log")
        axes[0, col].legend(fontsize=8)
    fig.tight_layout()
    return fig
