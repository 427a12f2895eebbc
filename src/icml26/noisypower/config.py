"""Problem sizes of the claims, per scale (``smoke`` seconds, ``small`` minutes, ``paper`` larger)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CentralizedConfig:
    """Centralized experiments (rate sweep, noise-tolerance sweep, reference check)."""

    d: int = 300
    """Dimension of the synthetic matrix."""
    k: int = 4
    """Target subspace dimension."""
    gap_ratios: tuple[float, ...] = (0.5, 0.8, 0.9, 0.97, 0.99)
    """Swept ``lambda_{k+1} / lambda_k`` of the rate claim."""
    eps: float = 1e-6
    """Target ``sin theta``."""
    asymptotic_ratio: float = 0.9
    """Gap ratios from this one up count as the small-gap regime where the rate statements (optimal momentum,
    Chebyshev iteration count) are asymptotic statements checked."""
    momentum_grid: tuple[float, ...] = (-0.5, -0.25, -0.1, 0.1, 0.25, 0.5)
    """Momenta tried against ``beta* = lambda_{k+1}^2 / 4``: ``beta = lhat^2 / 4`` with ``lhat = lambda_{k+1} + s
    (lambda_k - lambda_{k+1})`` for each ``s`` (``s = 1``, ``lhat = lambda_k``, would stop convergence)."""
    tolerance_d: int = 60
    """Dimension of the noise-tolerance problems."""
    tolerance_gaps: tuple[float, ...] = (0.9, 0.97, 0.99, 0.997)
    """Gap ratios of the noise-tolerance sweep (the issue's)."""
    noise_fraction: float = 0.9
    """Noise-tolerance claim: per-iteration noise norm as a fraction of ``eps (lambda_k - lambda_{k+1})`` (the
    paper's order; the positive control takes the same fraction of the earlier, ``sqrt(Delta)``-smaller bound)."""
    max_slowdown: float = 20.0
    """A noisy run not at ``eps`` within this many times its noiseless iterations is censored there."""
    reference_dims: tuple[int, ...] = (200, 500)
    """Dense sizes checked against ``scipy.linalg.eigh``."""
    sparse_dim: int = 5000
    """Sparse size checked against ``scipy.sparse.linalg.eigsh``."""


@dataclass(frozen=True)
class DecentralizedConfig:
    """Decentralized experiment (communication rounds to ``eps`` against the gap, vs DeEPCA)."""

    d: int = 50
    k: int = 2
    n_nodes: int = 16
    gap_ratios: tuple[float, ...] = (0.95, 0.97, 0.98, 0.99, 0.995)
    """Swept ``lambda_{k+1} / lambda_k`` of the global matrix."""
    heterogeneity: float = 0.2
    """Spread of the local matrices, as a fraction of ``||A||_2`` (see ``data.local_covariances``)."""
    rounds: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24)
    """Swept FastMix rounds per iteration ``K`` (from 1, the least possible); each method at its best ``K``."""
    graphs: tuple[str, ...] = ("ring", "grid", "erdos-renyi")
    er_p: float = 0.3
    """Edge probability of the Erdos-Renyi graph (redrawn until connected)."""
    eps: float = 1e-6
    max_iter: int = 8000


CENTRALIZED = {
    "smoke": CentralizedConfig(
        d=100,
        tolerance_d=40,
        tolerance_gaps=(0.8, 0.9, 0.97),
        reference_dims=(150,),
        sparse_dim=2000,
    ),
    "small": CentralizedConfig(),
    "paper": CentralizedConfig(d=2000, tolerance_d=300, reference_dims=(1000, 2000), sparse_dim=20000),
}

DECENTRALIZED = {
    "smoke": DecentralizedConfig(
        d=20, k=2, n_nodes=8, gap_ratios=(0.9, 0.95, 0.98), rounds=(1, 2, 3, 4, 6, 8, 12), max_iter=2000
    ),
    "small": DecentralizedConfig(),
    "paper": DecentralizedConfig(
        d=300,
        k=3,
        n_nodes=64,
        gap_ratios=(0.95, 0.97, 0.98, 0.99, 0.995, 0.998),
        rounds=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48),
        max_iter=30000,
    ),
}
