"""Presets for U-Cast: model widths, the two training stages and the simulator set-up.

``smoke`` runs in seconds (tests), ``small`` in minutes on a 2-core laptop (``icml26 reproduce``), ``era5``
sizes a run on real ERA5 fields a user brings (``icml26 ucast experiment --data era5.zarr``),
``paper`` is the paper's configuration (DhariwalUNet widths, 83 channels on the 240 x 121 1.5-degree grid;
GPU only). Paper values from the authors' ``configs/config_det.yaml`` / ``config_prob.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

__all__ = ["DataConfig", "ModelConfig", "Preset", "TrainConfig", "get_preset"]


@dataclass(frozen=True)
class ModelConfig:
    """U-Net widths and regularisation."""

    channels: tuple[int, ...] = (16, 32, 64)
    """Feature channels per resolution level (the paper: 320 x [1, 2, 3, 4])."""
    n_res: int = 1
    """Residual blocks per level (the paper: 4)."""
    attn_levels: tuple[int, ...] = ()
    """Levels (0 = full resolution) with self-attention after each residual block (the paper: 2 and 3)."""
    dropout: float = 0.1
    """Dropout probability inside every residual block, before its second convolution (the paper: 0.1)."""
    heads: int = 4
    """Attention heads."""

    def __post_init__(self) -> None:
        if not self.channels or any(c < 1 for c in self.channels):
            raise ValueError(f"channels must be positive integers, got {self.channels}")
        if self.n_res < 1:
            raise ValueError("n_res must be >= 1")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if any(not 0 <= lv < len(self.channels) for lv in self.attn_levels):
            raise ValueError(f"attn_levels {self.attn_levels} must index channels (0..{len(self.channels) - 1})")


@dataclass(frozen=True)
class TrainConfig:
    """One training stage: optimiser, schedule, EMA, clipping, loss."""

    stage: str = "det"
    """``det`` (latitude-weighted MAE) or ``prob`` (fair CRPS over ``members`` MC-dropout members)."""
    steps: int = 1000
    batch_size: int = 16
    lr: float = 3e-4
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    warmup: int = 100
    """Linear warm-up steps, then cosine decay to ``min_lr``."""
    min_lr: float = 1e-8
    ema_decay: float = 0.999
    grad_clip: float = 1.0
    members: int = 2
    """MC-dropout members per training sample in the ``prob`` stage (the paper: 2)."""
    muon: bool = False
    """Use ``torch.optim.Muon`` for 2-D weight matrices (AdamW for the rest)."""
    muon_lr: float = 3e-3
    amp: bool = True
    """bf16 autocast when training on CUDA (ignored on CPU)."""
    log_every: int = 50
    checkpoint_every: int = 0
    """Save a checkpoint every this many steps (0: only at the end)."""

    def __post_init__(self) -> None:
        if self.stage not in ("det", "prob"):
            raise ValueError(f"stage must be 'det' or 'prob', got {self.stage!r}")
        if self.steps < 1 or self.batch_size < 1:
            raise ValueError("steps and batch_size must be >= 1")
        if self.stage == "prob" and self.members < 2:
            raise ValueError("the fair CRPS needs members >= 2")
        if self.lr <= 0 or self.warmup < 0:
            raise ValueError("lr must be > 0 and warmup >= 0")


@dataclass(frozen=True)
class DataConfig:
    """Simulator set-up (Kolmogorov flow stand-in for ERA5)."""

    n_train: int = 24
    n_test: int = 8
    frames: int = 40
    n_grid: int = 16
    solver_n: int = 32
    every: float = 1.0
    """Model time step in simulator time units (the paper: 12 h)."""
    spin_up: float = 30.0
    noise: float = 0.05
    dt: float = 0.04
    """Solver time step."""


@dataclass(frozen=True)
class Preset:
    """Everything one run needs."""

    model: ModelConfig = field(default_factory=ModelConfig)
    det: TrainConfig = field(default_factory=TrainConfig)
    prob: TrainConfig = field(default_factory=lambda: TrainConfig(stage="prob", steps=300, lr=1e-4, warmup=20))
    data: DataConfig = field(default_factory=DataConfig)
    eval_members: int = 10
    eval_steps: int = 10
    n_inits: int = 24


_PRESETS = {
    "smoke": Preset(
        model=ModelConfig(channels=(8, 16), n_res=1, dropout=0.1),
        det=TrainConfig(steps=30, batch_size=8, lr=2e-3, warmup=5, ema_decay=0.9, log_every=10),
        prob=TrainConfig(stage="prob", steps=10, batch_size=8, lr=5e-4, warmup=2, ema_decay=0.9, log_every=5),
        data=DataConfig(n_train=3, n_test=2, frames=12, n_grid=16, solver_n=32, spin_up=5.0),
        eval_members=4,
        eval_steps=4,
        n_inits=4,
    ),
    "small": Preset(
        model=ModelConfig(channels=(16, 32, 64), n_res=1, dropout=0.1),
        det=TrainConfig(steps=500, batch_size=8, lr=2e-3, warmup=50, ema_decay=0.99, log_every=100),
        prob=TrainConfig(stage="prob", steps=250, batch_size=8, lr=5e-4, warmup=10, ema_decay=0.98, log_every=50),
        data=DataConfig(n_train=24, n_test=6, frames=40, n_grid=16, solver_n=32, spin_up=30.0),
        eval_members=10,
        eval_steps=10,
        n_inits=24,
    ),
    # real ERA5 fields a user brings (WeatherBench2 NetCDF/Zarr, e.g. 3 or 1.5 degrees): a small U-Net that a
    # CPU trains in minutes on a few hundred windows; scale the steps up with --steps for real training.
    "era5": Preset(
        model=ModelConfig(channels=(8, 16, 32), n_res=1, dropout=0.1),
        det=TrainConfig(steps=150, batch_size=4, lr=1e-3, warmup=10, ema_decay=0.95, log_every=25),
        prob=TrainConfig(stage="prob", steps=50, batch_size=4, lr=3e-4, warmup=5, ema_decay=0.9, log_every=10),
        data=DataConfig(),
        eval_members=10,
        eval_steps=2,
        n_inits=64,
    ),
    "paper": Preset(
        model=ModelConfig(channels=(320, 640, 960, 1280), n_res=4, attn_levels=(2, 3), dropout=0.1),
        det=TrainConfig(
            steps=100 * 30_000 // 48, batch_size=48, lr=3e-4, warmup=1500, ema_decay=0.9999, muon=True, muon_lr=3e-3
        ),
        prob=TrainConfig(
            stage="prob",
            steps=8 * 30_000 // 4,
            batch_size=4,
            lr=7e-5,
            warmup=0,
            ema_decay=0.9999,
            muon=True,
            muon_lr=7e-3,
        ),
        data=DataConfig(n_grid=121),
        eval_members=10,
        eval_steps=30,
    ),
}

#: The paper's grid and channel count (WeatherBench2 1.5 degrees with poles; 83 prognostic variables).
PAPER_GRID = (121, 240)
PAPER_CHANNELS = 83
PAPER_STATIC = 2
PAPER_FORCINGS = 4


def get_preset(name: str, **overrides) -> Preset:
    """Return the named preset (``smoke``, ``small``, ``era5`` or ``paper``), optionally with fields replaced."""
    if name not in _PRESETS:
        raise ValueError(f"preset must be one of {sorted(_PRESETS)}, got {name!r}")
    return replace(_PRESETS[name], **overrides)
