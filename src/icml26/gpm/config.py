"""Presets of the claim experiments (``smoke`` seconds, ``small`` minutes on 2 CPU cores, ``paper``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExperimentConfig:
    """Sizes of one accuracy-vs-length experiment."""

    n_items: int = 200
    """Bank size of the synthetic data (the Swedish SAT has 160 items)."""
    n_train: int = 3000
    """Examinees used to calibrate the bank and to train the learned policies."""
    n_test: int = 500
    """Examinees who take the simulated adaptive tests."""
    test_length: int = 20
    """T: the baselines' test length whose accuracy GPM must reach ("items needed")."""
    max_length: int = 30
    """Curves run to this length, so that a selector may also need *more* items than T."""
    epochs: int = 3
    """Training epochs of the learned policies (GPM and BOBCAT)."""
    hidden: int = 256
    """Hidden units of the policy MLP (paper: 256)."""
    selectors: tuple[str, ...] = ("random", "mfi", "kli", "becat", "bobcat", "gpm")
    """Selectors compared."""


SMOKE = ExperimentConfig(n_items=60, n_train=300, n_test=150, test_length=10, max_length=15, epochs=1, hidden=64,
                         selectors=("random", "mfi", "becat", "gpm"))  # fmt: skip
SMALL = ExperimentConfig()
PAPER = ExperimentConfig(n_items=500, n_train=10000, n_test=2000, epochs=20)
PRESETS = {"smoke": SMOKE, "small": SMALL, "paper": PAPER}

#: Bank sizes of the selection-cost scaling claim, and the examinees timed per size.
SCALING_SIZES = {"smoke": (100, 200, 400), "small": (250, 500, 1000, 2000), "paper": (500, 2000, 5000, 20000)}
SCALING_BATCH = {"smoke": 20, "small": 50, "paper": 100}
