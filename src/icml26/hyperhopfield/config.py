"""Problem sizes of the claims per scale (``smoke`` seconds, ``small`` minutes, ``paper`` larger)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # mhn-is-mmse: P patterns in R^d with norms uniform in [0.5, 1.5], Gaussian noise sigma
    mmse_d: int = 16
    mmse_patterns: int = 64
    mmse_sigma: float = 0.6
    mmse_queries: int = 20000
    mmse_log2_grid: tuple[float, float, float] = (-1.5, 1.5, 0.125)
    """log2(beta sigma^2) grid: start, stop, step."""
    # the multiscale-widths probe: population-distance curves on a 1-D track [0, 1]
    geo_cells: int = 200
    geo_mean_width: float = 0.05
    geo_seps: tuple[float, float, int] = (-3.5, -0.5, 25)
    """log10 separations: start, stop, count."""
    geo_pairs: int = 300
    # Betti-curve test (multiscale-widths-betti-v2, real-geometry-hyperbolic-v2)
    sim_cells: int = 200
    """units of the simulated populations (200: the size the Betti test was calibrated at)"""
    sim_mean_width: float = 0.05
    sim_windows: int = 2000
    """0.25 s windows of the simulated lap running (2000: ~8 min)"""
    real_window: float = 0.25
    """seconds per window of the recordings' run epochs (and of the simulation)"""
    betti_reps: int = 10
    """draws per (d, R) model of the reference library"""
    betti_boot: int = 50
    """block-bootstrap replicates of the real-data test"""
    betti_null: int = 40
    """flat surrogates of the real-data test's null"""
    width_boot: int = 200
    """bootstrap replicates (fields resampled) of the width likelihood ratio"""
    # hyperbolic-capacity
    cap_cells: tuple[tuple[int, float], ...] = ((2, 8.0), (3, 4.0), (4, 2.0))
    """(d, R) cells of hyperbolic-capacity-v5: both capacities between 8 and the grid max in the v4 run (the
    resolvable cells, fixed before the v5 run)"""
    cap_noise: float = 0.5
    cap_p_max: int = 2048
    cap_resolution: float = 0.125
    """bisection resolution of the capacity in log2 P (the bar is 0.5)"""
    cap_queries: int = 400
    cap_draws: int = 20
    """pattern sets per P (the queries are spread over them): the success rate is an average over pattern draws"""
    cap_beta_rho2: tuple[float, ...] = (4.0, 16.0, 64.0)
    """beta grid as beta * rho^2 (every memory is tuned on the same grid)."""
    # better-decoding: 1-D track, Poisson counts, posterior-mean decoder
    dec_cells: int = 50
    dec_budget: float = 20.0
    dec_widths: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2)
    dec_queries: int = 2000
    dec_grid: int = 400


PRESETS = {
    "smoke": Config(
        mmse_queries=3000,
        geo_cells=120,
        geo_seps=(-3.5, -0.5, 17),
        geo_pairs=120,
        cap_p_max=256,
        cap_queries=200,
        cap_draws=4,
        cap_beta_rho2=(16.0, 64.0),
        dec_queries=600,
        dec_widths=(0.01, 0.02, 0.05, 0.1),  # brackets the optimum (0.02-0.05): tuning not censored at the edge
        dec_grid=200,
        sim_cells=40,
        sim_windows=800,
        betti_reps=6,
        betti_boot=10,
        betti_null=20,
        width_boot=30,
    ),
    "small": Config(),
    "paper": Config(
        mmse_queries=100000,
        geo_cells=1000,
        geo_pairs=2000,
        cap_cells=((2, 8.0), (3, 4.0), (4, 2.0), (4, 4.0)),
        cap_p_max=16384,
    ),
}
