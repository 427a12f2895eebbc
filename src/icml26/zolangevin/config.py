"""Presets (``smoke``, ``small``, ``paper``) for the claims and the CLI."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DimensionSweepConfig:
    """Claim ``vr-removes-dimension-dependence-v2``: smallest batch that meets a variance tolerance, per d."""

    dims: tuple[int, ...] = (16, 32, 64, 128)
    """Dimensions d of the two-mode Gaussian mixture (modes at ±2.5 e_1, unit covariance)."""
    chain_dims: int = 2048
    """Chains per run: max(16, chain_dims // d), so chains x dimensions (the data behind a variance) is fixed."""
    step: float = 0.02
    """Step size h, the same at every d (exact ULA's variance bias is about h/2 = 0.01)."""
    q: int = 4
    """Refresh period of VR-ZO-LMC (a coordinate-wise refresh, d + 1 queries)."""
    tol: float = 0.03
    """Variance-bias tolerance |mean_j Var(x_j) - 1| (off the mode axis) that b* must reach."""
    burn_in: int = 100
    """Steps before measuring (chains start at exact samples; 2h·100 = 4 relaxation times of the variance)."""
    n_steps: int = 200
    """Measured steps after the burn-in (every ``thin``-th state is pooled)."""
    thin: int = 5
    b_max: int = 256
    """Largest batch tried (grid 1, 2, 4, ..., b_max)."""


@dataclass(frozen=True)
class NonLogConcaveConfig:
    """Claim ``non-log-concave-v3``: an unequal-weight three-mode mixture in d >= 20 at equal query budgets."""

    dim: int = 20
    n_chains: int = 400
    budget: int = 12_000
    """Per-chain query budget of every zeroth-order run."""
    step: float = 0.02
    b: int = 4
    """Directions per VR correction step."""
    q: int = 4
    zo_batches: tuple[int, ...] = (4, 10, 20)
    """Batches tried for plain ZO-LMC at the same budget; the best (lowest worst error) per seed is judged."""
    init_scale: float = 1.5
    """Chains start at N(0, init_scale² I): off-equilibrium in every direction."""
    n_snapshots: int = 40


@dataclass(frozen=True)
class APMCConfig:
    """Claim ``zo-apmc-v2``: black-box image inverse problems with a locally trained score prior."""

    data: str = "mnist"
    size: int = 14
    prior_steps: int = 5000
    prior_width: int = 256
    n_images: int = 2
    """Test images per seed (5 seeds at small: 10 images)."""
    n_chains: int = 32
    """Chains (posterior samples) per run (the issue's 32)."""
    n_levels: int = 8
    steps_per_level: int = 25
    step_scale: float = 0.12
    """γ_k = step_scale · σ_k²; the VR recursion needs (γ_k w_k L)² q² d / b small (w_k the likelihood weight)."""
    sigma_range: tuple[float, float] = (1.0, 0.03)
    sigma_y: float = 0.01
    b: int = 4
    q: int = 6
    problem: str = "fourier-magnitude"


PRESETS = {
    "smoke": {
        "dims": DimensionSweepConfig(dims=(8, 16, 32), chain_dims=256, burn_in=50, n_steps=60),
        "nlc": NonLogConcaveConfig(dim=20, n_chains=100, budget=2500, n_snapshots=8),
        "apmc": APMCConfig(
            data="shapes",
            size=8,
            prior_steps=300,
            prior_width=64,
            n_images=1,
            n_chains=8,
            n_levels=6,
            steps_per_level=10,
        ),
    },
    "small": {"dims": DimensionSweepConfig(), "nlc": NonLogConcaveConfig(), "apmc": APMCConfig()},
    "paper": {
        "dims": DimensionSweepConfig(dims=(16, 32, 64, 128, 256), chain_dims=8192, n_steps=1000),
        "nlc": NonLogConcaveConfig(dim=50, n_chains=2000, budget=40_000, zo_batches=(4, 10, 25, 50)),
        "apmc": APMCConfig(size=28, prior_steps=20_000, prior_width=512, n_images=10, n_chains=64),
    },
}
