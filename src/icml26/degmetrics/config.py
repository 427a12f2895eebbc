"""Presets of the simulator and of the loss experiment (``smoke`` seconds, ``small`` minutes, ``paper``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: Largest value of one simulator axis (genes, control cells, perturbations, cells per perturbation).
MAX_SIM_AXIS = 1_000_000
#: Largest simulated count matrix, cells x genes: the simulator needs about 32 bytes per entry at its peak
#: (NB means, gamma draws, Poisson draws), so this is about 19 GB -- the ``paper`` preset (4.9e8) fits.
MAX_MATRIX_ENTRIES = 600_000_000
BYTES_PER_ENTRY = 32
#: Affected genes change by at most this factor (the paper samples 1.2-5); larger values overflow the NB means.
MAX_FOLD_CHANGE = 1000.0
#: Control-bias strength B at most this (the paper samples 0-2): exp(B * delta) overflows beyond.
MAX_CONTROL_BIAS = 10.0


@dataclass(frozen=True)
class SimConfig:
    """Negative-binomial perturb-seq simulator (the paper's simulation, Sec. "In silico simulations").

    Attributes
    ----------
    n_genes : int
        Genes G (sampled with replacement from the fitted per-gene parameters when G exceeds them).
    n_control : int
        Control cells N0.
    n_perturbations : int
        Single perturbations P.
    cells_per_perturbation : int
        Cells per perturbation Nk.
    p_effect : float
        Probability that a perturbation changes a given gene.
    fold_change : float
        Affected genes have their mean multiplied by ``fold_change`` or ``1 / fold_change`` (random sign).
    control_bias : float
        Strength B of the shared control-vs-perturbed shift: perturbed cells get ``mu_ctrl * exp(B * delta)``.
    generic_sigma : float
        Standard deviation of the shared log shift ``delta_g`` (drawn once per gene).
    generic_fraction : float
        Fraction of genes carrying the shared shift.
    library_scale : float
        Multiplier mu_l of every cell's expected library size (the paper samples 0.2-5). The PBMC fit has
        ~880 UMIs per cell over its 765 genes; 5 brings cells to perturb-seq depth.
    library_sigma : float
        Log-normal sigma of per-cell library size (0.1714, the paper's fit).
    n_doubles : int
        Double perturbations "A+B" whose log fold changes add up (ground truth for the additive baseline).
    gene_source : {"pbmc", "gamma", "auto"}
        Per-gene mean/dispersion: fitted to scanpy's bundled PBMC cells, drawn from a gamma prior, or PBMC
        when it can be read and gamma otherwise.
    """

    n_genes: int = 2000
    n_control: int = 2000
    n_perturbations: int = 60
    cells_per_perturbation: int = 100
    p_effect: float = 0.02
    fold_change: float = 2.0
    control_bias: float = 1.0
    generic_sigma: float = 0.4
    generic_fraction: float = 0.5
    library_scale: float = 5.0
    library_sigma: float = 0.1714
    n_doubles: int = 0
    gene_source: str = "auto"

    def __post_init__(self) -> None:
        for name in ("n_genes", "n_control", "n_perturbations", "cells_per_perturbation", "n_doubles"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value:
                raise ValueError(f"{name} must be an integer; got {value!r}")
        for name in ("n_genes", "n_control", "n_perturbations", "cells_per_perturbation"):
            value = int(getattr(self, name))
            if not 1 <= value <= MAX_SIM_AXIS:
                raise ValueError(f"{name} must be in [1, {MAX_SIM_AXIS:,}]; got {getattr(self, name)}")
        for name in ("p_effect", "fold_change", "control_bias", "generic_sigma", "generic_fraction", "library_scale",
                     "library_sigma"):  # fmt: skip
            if not math.isfinite(float(getattr(self, name))):
                raise ValueError(f"{name} must be a finite number; got {getattr(self, name)}")
        if not 0 <= self.p_effect <= 1:
            raise ValueError(f"p_effect must be in [0, 1]; got {self.p_effect}")
        if not 1 <= self.fold_change <= MAX_FOLD_CHANGE:
            raise ValueError(f"fold_change must be in [1, {MAX_FOLD_CHANGE:g}]; got {self.fold_change}")
        if not 0 <= self.control_bias <= MAX_CONTROL_BIAS:
            raise ValueError(f"control_bias must be in [0, {MAX_CONTROL_BIAS:g}]; got {self.control_bias}")
        if self.generic_sigma < 0 or self.library_sigma < 0:
            raise ValueError("generic_sigma and library_sigma must be >= 0")
        if not 0 <= self.generic_fraction <= 1:
            raise ValueError(f"generic_fraction must be in [0, 1]; got {self.generic_fraction}")
        if self.library_scale <= 0:
            raise ValueError(f"library_scale must be > 0; got {self.library_scale}")
        if self.n_doubles < 0 or (self.n_doubles and self.n_perturbations < 2):
            raise ValueError("n_doubles must be >= 0 and needs at least 2 single perturbations")
        pairs = self.n_perturbations * (self.n_perturbations - 1) // 2
        if self.n_doubles > pairs:
            raise ValueError(
                f"n_doubles={self.n_doubles} but {self.n_perturbations} single perturbations make only {pairs} "
                "distinct pairs"
            )
        if self.gene_source not in ("pbmc", "gamma", "auto"):
            raise ValueError(f"gene_source must be 'pbmc', 'gamma' or 'auto'; got {self.gene_source!r}")
        entries = self.n_cells * self.n_genes
        if entries > MAX_MATRIX_ENTRIES:
            raise ValueError(
                f"{self.n_cells:,} cells x {self.n_genes:,} genes = {entries:.3g} counts would need about "
                f"{entries * BYTES_PER_ENTRY / 2**30:,.0f} GiB; the simulator's limit is {MAX_MATRIX_ENTRIES:.3g} "
                "counts (lower --genes, --cells, --control-cells or --perturbations)"
            )

    @property
    def n_cells(self) -> int:
        """Cells simulated: the controls plus every single and double perturbation's cells."""
        return self.n_control + (self.n_perturbations + self.n_doubles) * self.cells_per_perturbation

    def with_(self, **changes) -> SimConfig:
        """A copy with some fields changed."""
        return replace(self, **changes)


#: Simulator presets. ``small`` is the paper-like prototype setting of the notes (G 2000, N0 2000, P 60).
SIM_PRESETS = {
    "smoke": SimConfig(n_genes=600, n_control=400, n_perturbations=24, cells_per_perturbation=60),
    "small": SimConfig(),
    "paper": SimConfig(n_genes=8192, n_control=8192, n_perturbations=200, cells_per_perturbation=256),
}


@dataclass(frozen=True)
class LossConfig:
    """The WMSE-vs-MSE training experiment (reconstruction; the paper trains GEARS).

    Attributes
    ----------
    n_train, n_test : int -- perturbations used to train and to test
    latent_dim : int -- dimension of the perturbation embedding z_k given to the models
    hidden : int -- MLP hidden width
    epochs : int -- full-batch Adam steps
    lr : float -- Adam learning rate
    weight_decay : float -- L2 penalty (AdamW)
    weight_scale : float -- WMSE weights are multiplied by this (the authors use 100 * w_k)
    val_fraction : float -- training perturbations held out to pick the best epoch (early stopping)
    sim : SimConfig -- the cells the pseudobulks come from
    """

    n_train: int = 80
    n_test: int = 30
    latent_dim: int = 8
    hidden: int = 64
    epochs: int = 1500
    lr: float = 3e-3
    weight_decay: float = 1e-4
    weight_scale: float = 100.0
    val_fraction: float = 0.2
    sim: SimConfig = SimConfig(n_genes=1000, n_control=500, cells_per_perturbation=60, p_effect=0.03)


LOSS_PRESETS = {
    "smoke": LossConfig(
        n_train=50,
        n_test=20,
        epochs=400,
        sim=SimConfig(n_genes=400, n_control=200, cells_per_perturbation=40, p_effect=0.03),
    ),
    "small": LossConfig(),
    "paper": LossConfig(
        n_train=160,
        n_test=80,
        epochs=3000,
        sim=SimConfig(n_genes=4000, n_control=2000, cells_per_perturbation=128, p_effect=0.03),
    ),
}


@dataclass(frozen=True)
class SweepConfig:
    """Random simulator settings drawn from the paper's ranges (mean-baseline-v2).

    The paper draws 10,000 trials over G, N0, Nk, P, p_effect, fc, B and mu_l. We fix the screen's size
    (``base``: G, N0, P, library scale) and draw, per setting, the four parameters the issue names:

    Attributes
    ----------
    n_settings : int -- settings drawn per seed
    p_effect : (low, high) -- effect sparsity, log-uniform (paper: 0.001-0.1)
    fold_change : (low, high) -- uniform (paper: 1.2-5)
    control_bias : (low, high) -- B, uniform (paper: 0-2)
    cells_per_perturbation : (low, high) -- Nk, log-uniform, rounded (paper: 10-256)
    base : SimConfig -- everything else
    """

    n_settings: int = 60
    p_effect: tuple[float, float] = (0.001, 0.1)
    fold_change: tuple[float, float] = (1.2, 5.0)
    control_bias: tuple[float, float] = (0.0, 2.0)
    cells_per_perturbation: tuple[int, int] = (10, 256)
    base: SimConfig = SimConfig(n_genes=1000, n_control=1000, n_perturbations=30)

    def __post_init__(self) -> None:
        if int(self.n_settings) < 6:
            raise ValueError(f"n_settings must be >= 6 (the OLS fit has 5 coefficients); got {self.n_settings}")
        bounds = {"p_effect": (0.0, 1.0), "fold_change": (1.0, None), "control_bias": (0.0, None),
                  "cells_per_perturbation": (2, None)}  # fmt: skip
        for name, (floor, ceil) in bounds.items():
            low, high = getattr(self, name)
            outside = low < floor or (ceil is not None and high > ceil) or (name == "p_effect" and low <= 0)
            if outside or not low <= high:
                raise ValueError(f"{name} must be a range (low, high) with low <= high within the simulator's "
                                 f"limits; got {(low, high)}")  # fmt: skip


SWEEP_PRESETS = {
    "smoke": SweepConfig(
        n_settings=6, cells_per_perturbation=(10, 64), base=SimConfig(n_genes=300, n_control=200, n_perturbations=12)
    ),
    "small": SweepConfig(),
    "paper": SweepConfig(n_settings=400, base=SimConfig(n_genes=2000, n_control=2000, n_perturbations=60)),
}

#: Learning rates tried for each loss in wmse-loss-v3 (as in v2); each loss keeps the one with the best
#: validation metric.
LR_GRIDS = {"smoke": (3e-3, 1e-2), "small": (1e-3, 3e-3, 1e-2, 3e-2), "paper": (3e-4, 1e-3, 3e-3, 1e-2, 3e-2)}
