"""Presets (``smoke``, ``small``, ``paper``) for the claims and the CLI."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DimensionSweepConfig:
    """Claim ``vr-removes-dimension-dependence``: GMM targets over dimensions at equal query budgets."""

    dims: tuple[int, ...] = (10, 30, 100)
    """Dimensions d of the two-mode Gaussian mixture (modes at ±2.5 e_1, unit covariance)."""
    n_chains: int = 120
    """Parallel chains; diagnostics pool their last snapshots."""
    budget_per_dim: int = 200
    """Per-chain query budget is budget_per_dim · d (the same for every sampler)."""
    step_c: float = 1.0
    """Step size h = step_c / d (the scaling under which exact ULA keeps a fixed accuracy)."""
    b_small: int = 4
    """The small constant batch of plain ZO-LMC and of the VR corrections."""
    q: int = 4
    """Refresh period of VR-ZO-LMC."""


@dataclass(frozen=True)
class NonLogConcaveConfig:
    """Claim ``non-log-concave``: mode weights and moments on multimodal / twisted targets."""

    dim: int = 5
    n_chains: int = 300
    budget: int = 25_000
    """Per-chain query budget of every zeroth-order run."""
    q_sweep: tuple[int, ...] = (2, 4, 8, 16, 32)
    q: int = 4
    b: int = 4
    """Directions per ZO step. Step sizes are per target (see ``claims._nlc_targets``)."""


@dataclass(frozen=True)
class APMCConfig:
    """Claim ``zo-apmc-near-oracle``: image inverse problems with a locally trained score prior."""

    data: str = "mnist"
    size: int = 14
    prior_steps: int = 5000
    prior_width: int = 256
    n_images: int = 1
    """Test images per forward model and seed."""
    n_chains: int = 12
    n_levels: int = 8
    steps_per_level: int = 50
    step_scale: float = 0.12
    """γ_k = step_scale · σ_k²; the VR recursion needs (γ_k w_k L)² q² d / b small (w_k the likelihood weight)."""
    sigma_range: tuple[float, float] = (1.0, 0.03)
    sigma_y: float = 0.05
    b: int = 4
    q: int = 6
    problems: tuple[str, ...] = ("blur-subsample", "blur-clip")


PRESETS = {
    "smoke": {
        "dims": DimensionSweepConfig(dims=(5, 20), n_chains=100, budget_per_dim=120),
        "nlc": NonLogConcaveConfig(dim=2, n_chains=200, budget=6000, q_sweep=(4, 16)),
        "apmc": APMCConfig(
            data="shapes",
            size=8,
            prior_steps=300,
            prior_width=64,
            n_images=1,
            n_chains=8,
            n_levels=6,
            steps_per_level=10,
            problems=("blur-subsample",),
        ),
    },
    "small": {"dims": DimensionSweepConfig(), "nlc": NonLogConcaveConfig(), "apmc": APMCConfig()},
    "paper": {
        "dims": DimensionSweepConfig(dims=(10, 50, 200), n_chains=400),
        "nlc": NonLogConcaveConfig(dim=10, n_chains=1000, budget=100_000),
        "apmc": APMCConfig(size=28, prior_steps=20_000, prior_width=512, n_images=10, n_chains=64),
    },
}
