"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on 2 cores, ``paper`` a GPU)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # bound-holds: max |(xDH)_i| over (input, sign) draws, per n and input kind
    bound_ns: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    bound_trials: int = 1000
    bound_delta: float = 0.05
    # less-homogenization: outlier activations (n channels, 4 at 25x), RMSNorm x gain, LIF T = 4, V_th = 1
    homog_n: int = 256
    homog_samples: int = 2000
    homog_gain: float = 2.0  # the prototype's saturated fractions (0.016 -> 0.19) are reproduced at gain 2
    # fusion-is-exact: a random encoder, learnable (quintic) and fixed rotations, float64
    fuse_dim: int = 64
    fuse_layers: int = 2
    fuse_sentences: int = 32
    # better-accuracy: scratch spiking encoders, unrotated vs randomized Hadamard, same init and batches
    acc_tasks: tuple[str, ...] = ("tweets", "polarity")
    # 2 arms x 5 seeds x 2 tasks = 20 trainings must fit ~5 minutes on a shared core: a small, short run
    acc_train: tuple[int, ...] = (1500, 150)
    acc_test: tuple[int, ...] = (600, 50)
    acc_steps: tuple[int, ...] = (60, 30)
    acc_batch: int = 32
    acc_lr: float = 3e-3
    acc_max_len: int = 20
    acc_dim: int = 32
    acc_layers: int = 2
    acc_init: str = "scratch"


PRESETS = {
    "smoke": Config(
        bound_ns=(64, 256, 1024),
        bound_trials=300,
        homog_samples=400,
        fuse_dim=32,
        fuse_layers=1,
        fuse_sentences=8,
        acc_train=(64, 64),
        acc_test=(64, 50),
        acc_steps=(4, 4),
        acc_batch=8,
        acc_max_len=12,
        acc_dim=16,
        acc_layers=1,
    ),
    "small": Config(),
    # a GPU setting: MiniLM-initialised 6-layer encoders (dim 384 = 12 x 32 for the Hadamard construction),
    # longer fine-tuning on the whole tweet corpus
    "paper": Config(
        bound_ns=(64, 128, 256, 384, 512, 768, 1024, 2048, 4096),
        bound_trials=20000,
        homog_samples=20000,
        fuse_dim=384,
        fuse_layers=6,
        acc_train=(30000, 150),
        acc_test=(8000, 50),
        acc_steps=(3000, 300),
        acc_lr=2e-5,
        acc_max_len=64,
        acc_dim=384,
        acc_layers=6,
        acc_init="minilm",
    ),
}
