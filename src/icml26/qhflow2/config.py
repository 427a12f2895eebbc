"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on one CPU core, ``paper`` a GPU)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # energy-error-is-second-order: symmetric Gaussian noise of size sigma on the converged H of one molecule
    noise_molecule: str = "water"
    noise_basis: str = "def2-svp"
    noise_xc: str = "pbe"
    noise_sigmas: tuple[float, ...] = (1e-5, 1e-4, 1e-3)  # Hartree; the slope is fitted over these
    noise_draws: int = 3
    # training claims: one molecule, thermal normal-mode conformations, labels at xc/basis
    molecule: str = "water"
    basis: str = "sto-3g"
    xc: str = "hf"
    temperature: float = 500.0
    n_train: int = 100
    n_test: int = 20
    steps: int = 300
    batch: int = 8
    lr: float = 3e-3
    channels: int = 16
    lmax: int = 2
    layers: int = 2
    # so2-matches-tp-cheaper: step timing of untrained models on `timing_molecule` at these l_max
    timing_molecule: str = "ethanol"
    timing_lmax: tuple[int, ...] = (2, 4)
    timing_batch: int = 4
    timing_repeats: int = 5
    # scaling: the SO(2) model at two widths x two training-set sizes (the first frames of the train split),
    # `steps` each; test H / E / F MAE on the test split
    scaling_channels: tuple[int, ...] = (8, 16)
    scaling_frames: tuple[int, ...] = (25, 100)
    # tuned comparisons (so2-beats-tuned-tp, *-vs-mace): every model gets the same grid, learning rate x width,
    # chosen on `n_val` validation frames (sampled with another seed: disjoint from train and test)
    n_val: int = 20
    # v1's grid {3e-3, 1e-2} and v2's {3e-3, 1e-2, 3e-2} each chose their top rate for SO(2) and TP on every seed.
    # Before v3 ran, 1e-1 was tried on the validation frames of one already-judged seed (5000): 3-5x worse than
    # 3e-2 for SO(2) and TP at 8 channels (18.4 / 20.1 mHa against 3.6 / 5.7), worse still at 16, and MACE's
    # energies diverge there (1.5 eV at 8 channels); 3e-1 blows up for SO(2) and TP. So the grid brackets every optimum.
    tune_lrs: tuple[float, ...] = (3e-3, 1e-2, 3e-2, 1e-1)
    tune_channels: tuple[int, ...] = (8, 16)


PRESETS = {
    "smoke": Config(
        noise_basis="sto-3g",
        noise_xc="hf",
        noise_draws=2,
        n_train=16,
        n_test=4,
        steps=30,
        batch=4,
        channels=8,
        timing_molecule="water",
        timing_lmax=(2, 4),
        timing_batch=2,
        timing_repeats=7,
        scaling_channels=(4, 8),
        scaling_frames=(4, 16),
        n_val=4,
        tune_lrs=(1e-2,),
        tune_channels=(4, 8),
    ),
    "small": Config(),
    # the paper's setting (GPU): MD17-like ethanol at PBE/def2-SVP, l_max = m_max = 4, 128 channels (5 layers in the
    # paper: 3 backbone + 2 Hamiltonian); thousands of frames (build them with `icml26 qhflow2 build-dataset`)
    "paper": Config(
        noise_molecule="ethanol",
        noise_draws=10,
        molecule="ethanol",
        basis="def2-svp",
        xc="pbe",
        temperature=500.0,
        n_train=1000,
        n_test=200,
        steps=100000,
        batch=32,
        lr=5e-4,
        channels=128,
        lmax=4,
        layers=5,
        timing_lmax=(2, 4, 6),
        scaling_channels=(64, 128),
        scaling_frames=(250, 1000),
        n_val=200,
        tune_lrs=(2e-4, 5e-4, 1e-3),
        tune_channels=(64, 128),
    ),
}
