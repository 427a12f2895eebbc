"""Named presets (``smoke``, ``small``, ``paper``) of the claim experiments."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CoherenceConfig:
    """Sizes of the claim experiments.

    Attributes
    ----------
    n_circle : int
        Samples of the circle data (R^20 embedding of S^1).
    steps, batch_size, n_features, hidden : int
        Autoencoder training: Adam steps, batch size, code width m, hidden width.
    lam_coh : float
        Weight of Coh (fixed, not tuned per seed).
    l1_grid : tuple of float
        L1 weights swept to match Coh's activation density on the circle (the closest density wins).
    n_angles : int
        Rotation angles per image of the rotated MNIST digits.
    topo_points : int
        Samples (a random subset) whose Vietoris-Rips diagram is compared with the features'.
    n_constructed : int
        Coherent matrices built by construction per seed for the interleaving bound.
    timing_n, timing_m, timing_repeats : int
        Batch size, code width and repeats of the per-batch cost comparison (Coh vs a VR-persistence loss).
    n_mnist_images, n_mnist_heldout, mnist_steps, mnist_l1_grid :
        Rotated real MNIST: base digits for training and held-out base digits the claims are judged on (each
        rotated through ``n_angles`` angles), training steps, L1 weights
        swept to match the Coh arms' densities (one sweep serves both Coh arms).
    n_tokens, token_features, token_steps, lam_coh_tokens, token_l1_grid :
        MiniLM token embeddings of SST-2: tokens, dictionary size, steps, Coh weight, L1 weights swept.
    """

    n_circle: int
    steps: int
    batch_size: int
    n_features: int
    hidden: int
    lam_coh: float
    l1_grid: tuple[float, ...]
    n_angles: int
    topo_points: int
    n_constructed: int
    timing_n: int = 1024
    timing_m: int = 16
    timing_repeats: int = 3
    n_mnist_images: int = 40
    n_mnist_heldout: int = 10
    mnist_steps: int = 800
    mnist_l1_grid: tuple[float, ...] = (0.003, 0.01, 0.02, 0.035, 0.06)
    n_tokens: int = 2000
    token_features: int = 32
    token_steps: int = 800
    lam_coh_tokens: float = 3.0
    token_l1_grid: tuple[float, ...] = (0.001, 0.003, 0.005, 0.01, 0.03)


PRESETS: dict[str, CoherenceConfig] = {
    "smoke": CoherenceConfig(
        n_circle=512,
        steps=300,
        batch_size=256,
        n_features=16,
        hidden=64,
        lam_coh=0.1,
        l1_grid=(0.005, 0.015),
        n_angles=36,
        topo_points=200,
        n_constructed=3,
        timing_repeats=2,
        n_mnist_images=6,
        n_mnist_heldout=3,
        mnist_steps=200,
        mnist_l1_grid=(0.003, 0.02),
        n_tokens=400,
        token_steps=200,
        token_l1_grid=(0.003, 0.03),
    ),
    "small": CoherenceConfig(
        n_circle=1500,
        steps=1500,
        batch_size=256,
        n_features=16,
        hidden=64,
        lam_coh=0.1,
        l1_grid=(0.002, 0.004, 0.007, 0.012, 0.02, 0.035),
        n_angles=36,
        topo_points=400,
        n_constructed=10,
    ),
    "paper": CoherenceConfig(
        n_circle=4000,
        steps=5000,
        batch_size=512,
        n_features=32,
        hidden=128,
        lam_coh=0.1,
        l1_grid=(0.001, 0.002, 0.004, 0.007, 0.012, 0.02, 0.035, 0.06),
        n_angles=72,
        topo_points=1000,
        n_constructed=50,
        n_mnist_images=200,
        n_mnist_heldout=50,
        mnist_steps=3000,
        n_tokens=10_000,
        token_features=64,
        token_steps=3000,
    ),
}


def get_config(scale) -> CoherenceConfig:
    return PRESETS[str(scale)]
