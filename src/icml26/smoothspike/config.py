"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on 2 cores, ``paper`` a GPU)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # bound-holds: max |(xDH)_i| over (input, sign) draws, per n and input kind
    bound_ns: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    bound_trials: int = 1000
    bound_delta: float = 0.05
    # less-homogenization (reported): outlier activations (n channels, 4 at 25x), RMSNorm x gain, LIF T = 4
    homog_n: int = 256
    homog_samples: int = 2000
    homog_gain: float = 2.0  # the prototype's saturated fractions (0.016 -> 0.19) are reproduced at gain 2
    # ... and (judged) the residual-stream LIFs of an encoder holding MiniLM-L6's weights, on tweets
    homog_layers: int = 2
    homog_sentences: int = 32
    homog_max_len: int = 24
    # fusion-is-exact: a random encoder, learnable (quintic) and fixed rotations, float64
    fuse_dim: int = 64
    fuse_layers: int = 2
    fuse_sentences: int = 32
    # better-accuracy: scratch spiking encoders, unrotated vs randomized Hadamard, same init and batches
    # (the 200 polarity sentences leave 50 for testing, 2 points per sentence, and stayed at chance: dropped)
    acc_tasks: tuple[str, ...] = ("tweets",)
    # 3 arms (baseline, SmoothSpike, control) x 5 seeds = 15 trainings must fit ~5 minutes on a shared core:
    # a small, short run (60 steps of 32 = 1.3 epochs), too short for a verdict about the paper's method
    acc_train: tuple[int, ...] = (1500,)
    acc_test: tuple[int, ...] = (600,)
    acc_steps: tuple[int, ...] = (60,)
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
        homog_layers=1,
        homog_sentences=8,
        homog_max_len=16,
        fuse_dim=32,
        fuse_layers=1,
        fuse_sentences=8,
        acc_train=(64,),
        acc_test=(64,),
        acc_steps=(4,),
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
        homog_layers=6,
        homog_sentences=512,
        homog_max_len=64,
        fuse_dim=384,
        fuse_layers=6,
        acc_train=(30000,),
        acc_test=(8000,),
        acc_steps=(3000,),
        acc_lr=2e-5,
        acc_max_len=64,
        acc_dim=384,
        acc_layers=6,
        acc_init="minilm",
    ),
}
