"""Presets of the claim experiments (``smoke`` seconds, ``small`` ~15 min on one CPU core, ``paper``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExperimentConfig:
    """Sizes of one accuracy-vs-length experiment."""

    n_items: int = 150
    """Bank size of the synthetic misspecified data (the Swedish SAT has 160 items)."""
    n_train: int = 1000
    """Examinees used to calibrate the bank and to train the learned policies (10 % of them validate)."""
    n_test: int = 400
    """Examinees who take the simulated adaptive tests."""
    n_recal: int = 1000
    """Other examinees on whom the bank is re-calibrated (``generalizes``)."""
    test_length: int = 20
    """T: the test length at which BECAT's accuracy sets the target ("items needed")."""
    max_length: int = 26
    """Curves run to this length, so that a selector may also need *more* items than T."""
    epochs: int = 3
    """Most training epochs of the learned policies (early stopping on validation examinees)."""
    patience: int = 2
    """Epochs without a better validation loss before training stops."""
    hidden: int = 64
    """Hidden units of the policy MLP (paper: 256)."""
    batch_size: int = 64
    """Examinees per Adam update."""
    selectors: tuple[str, ...] = ("random", "mfi", "kli", "becat", "gpm")
    """Selectors whose curves are plotted (the claims add the ones they compare)."""
    datasets: tuple[str, ...] = ("misspecified MIRT", "Swedish SAT")
    """Data sets of the accuracy claims (the SAT is skipped, with a note, when irtorch is missing)."""
    n_boot: int = 200
    """Bootstrap resamples of the examinees for the items-needed intervals."""


# smoke: 600 test examinees and T = 12, so that an A/A pair's saving scatters by a few points (at 150 and T = 8
# it scattered by +-10, as much as the bars): the A/A negative controls must fail at smoke
SMOKE = ExperimentConfig(n_items=40, n_train=200, n_test=600, n_recal=150, test_length=12, max_length=16, epochs=1,
                         patience=1, hidden=16, selectors=("random", "mfi", "becat", "gpm"),
                         datasets=("misspecified MIRT",), n_boot=50)  # fmt: skip
SMALL = ExperimentConfig(epochs=5, batch_size=8)  # <= 565 updates a policy (113 an epoch), early stopping
PAPER = ExperimentConfig(n_items=500, n_train=10000, n_test=2000, n_recal=1000, epochs=60, patience=5, hidden=256,
                         selectors=("random", "mfi", "kli", "becat", "bobcat", "gpm"))  # fmt: skip
PRESETS = {"smoke": SMOKE, "small": SMALL, "paper": PAPER}

#: Bank sizes of the selection-cost scaling claim, and the examinees timed per size.
SCALING_SIZES = {"smoke": (100, 200, 400), "small": (250, 500, 1000, 2000), "paper": (500, 2000, 5000, 20000)}
SCALING_BATCH = {"smoke": 20, "small": 50, "paper": 100}
