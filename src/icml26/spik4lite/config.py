"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes on 2 cores, ``paper`` larger)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Config:
    # zeroing-saves-nothing: an untrained SpikingCNN (widths lat_width x3) on lat_hw x lat_hw inputs,
    # dense vs 50 % channels masked vs the same channels removed; interleaved medians, one thread
    lat_width: int = 96
    lat_hw: int = 16
    lat_batch: int = 16
    lat_T: int = 4
    lat_repeats: int = 9
    lat_drop: float = 0.5
    # refactor-is-exact: random 40 % removal on both architectures with randomised BN statistics, float64
    exact_drop: float = 0.4
    exact_images: int = 64
    # accuracy-kept-v5: dense -> Spik4lite (gates, energy loss, compensation, 1 round, 40 % of every pair removed,
    # lowest keep-probability first) vs random / L1 / rate pruning and the dense reference, every arm through the
    # same acc_round_steps + acc_finetune_steps schedule from the same pretrained network, on the shipped
    # Fashion-MNIST subset (8k / 2k real images), 2x2-pooled to 14 x 14; a spiking CNN (5 seeds x 5 trainings of a
    # Spikingformer-mini do not fit in minutes on 2 shared cores)
    acc_arch: str = "cnn"
    acc_data: str = "fashion-mnist"
    acc_pool: int = 2
    acc_train: int = 8000
    acc_test: int = 2000
    acc_T: int = 2
    acc_model_kw: dict = field(default_factory=lambda: {"widths": (16, 32, 32)})
    acc_steps: int = 1000  # cosine-decayed: a converged dense reference (constant lr left it ~8 points short)
    acc_lr: float = 5e-3
    acc_batch: int = 32
    acc_round_steps: int = 100
    acc_finetune_steps: int = 200
    acc_fraction: float = 0.4
    # lambda fixed on a validation split of the training images (seed 0, images 6000-7999 held out; README): at
    # 100 gated steps lambda = 1 closes 0.30 of the channels by itself, 2 closes 0.70, 0 closes none
    acc_lam: float = 1.5
    # energy-and-latency: a trained dense model vs its refactored version (50 % of every pair removed)
    prof_arch: str = "spikingformer-mini"
    prof_data: str = "fashion-mnist"  # v3: trained on real images (v2: digits)
    prof_pool: int = 2
    prof_train: int = 8000
    prof_model_kw: dict = field(default_factory=lambda: {"dim": 64, "heads": 4})
    prof_steps: int = 200
    prof_round_steps: int = 30
    prof_fraction: float = 0.5
    prof_repeats: int = 21  # latency medians: 7 gave a seed-to-seed spread of 0.5-1.0 on shared cores (v1)
    prof_batch: int = 32  # the judged batch (the claim's '32' label holds at small and paper)


PRESETS = {
    "smoke": Config(
        lat_width=64,
        lat_batch=8,
        lat_repeats=5,
        exact_images=16,
        acc_train=1500,
        acc_test=400,
        acc_steps=150,
        acc_round_steps=50,  # the gates need the small budget to act (the probe)
        acc_finetune_steps=20,
        prof_arch="cnn",
        prof_model_kw={"widths": (32, 64, 64)},
        prof_steps=10,
        prof_train=500,
        prof_round_steps=5,
        prof_repeats=11,  # paired ratios of identical-cost models spread by ~0.1 with 5 repeats at batch 8
        prof_batch=16,
    ),
    "small": Config(),
    "paper": Config(
        acc_arch="spikingformer-mini",
        acc_T=4,
        acc_lr=5e-3,
        acc_data="fashion-mnist-full",
        acc_pool=1,
        acc_train=60000,
        acc_test=10000,
        acc_model_kw={"dim": 128, "heads": 8},
        acc_steps=5000,
        acc_batch=128,
        acc_round_steps=1000,
        acc_finetune_steps=1000,
        prof_data="fashion-mnist-full",
        prof_pool=1,
        prof_train=60000,
        prof_model_kw={"dim": 128, "heads": 8},
        prof_steps=500,
    ),
}
