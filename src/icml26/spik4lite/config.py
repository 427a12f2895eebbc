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
    # accuracy-kept: dense -> Spik4lite (gates, energy loss, 1 round, fixed fraction) vs random / L1 / rate
    # (small uses the spiking CNN: a Spikingformer-mini run of 5 seeds x 5 trainings exceeds minutes on 2 cores)
    acc_arch: str = "cnn"
    acc_data: str = "digits"
    acc_pool: int = 1
    acc_train: int = 1257
    acc_test: int = 540
    acc_T: int = 2
    acc_model_kw: dict = field(default_factory=lambda: {"widths": (16, 32, 32)})
    acc_steps: int = 200
    acc_lr: float = 1e-2
    acc_batch: int = 32
    acc_round_steps: int = 50
    acc_finetune_steps: int = 50
    acc_fraction: float = 0.4
    # lambda scaled to our 50 gated steps (the demo gates ~27 000 steps before its first removal at 0.01):
    # at 0.01 the energy gradient on a gate logit is ~300x below the task's straight-through gradient and no
    # keep-probability ever falls below 0.5; at 2 the gates close ~30 % of the channels by themselves (README)
    acc_lam: float = 2.0
    # energy-and-latency: a trained dense model vs its refactored version (50 % of every pair removed)
    prof_arch: str = "spikingformer-mini"
    prof_model_kw: dict = field(default_factory=lambda: {"dim": 64, "heads": 4})
    prof_steps: int = 60
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
        acc_train=800,
        acc_test=300,
        acc_steps=100,
        acc_round_steps=50,  # the gates need the small budget to act (the probe)
        acc_finetune_steps=15,
        prof_arch="cnn",
        prof_model_kw={"widths": (32, 64, 64)},
        prof_steps=10,
        prof_round_steps=5,
        prof_repeats=11,  # paired ratios of identical-cost models spread by ~0.1 with 5 repeats at batch 8
        prof_batch=16,
    ),
    "small": Config(),
    "paper": Config(
        acc_arch="spikingformer-mini",
        acc_T=4,
        acc_lr=5e-3,
        acc_data="mnist",
        acc_pool=1,
        acc_train=60000,
        acc_test=10000,
        acc_model_kw={"dim": 128, "heads": 8},
        acc_steps=5000,
        acc_batch=128,
        acc_round_steps=1000,
        acc_finetune_steps=1000,
        prof_model_kw={"dim": 128, "heads": 8},
        prof_steps=500,
    ),
}
