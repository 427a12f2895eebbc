"""hyperhopfield — Hyperbolic Neural Population Geometry Benefits Computation.

ICML 2026 (arXiv 2606.10238). Multi-scale place-cell codes (exponentially distributed receptive-field
widths) give a population geometry that is hyperbolic; the modern Hopfield update is the minimum
mean-squared-error (posterior-mean) decoder with ``beta = 1 / sigma^2``; an associative memory defined in
hyperbolic space (patterns in the Lorentz model, retrieval by the weighted Fréchet mean computed with Karcher
flow) stores more patterns than Euclidean modern Hopfield networks at matched dimension and query noise.

Library::

    from icml26.hyperhopfield import HyperbolicMemory, mhn_update, place_cells
    mem = HyperbolicMemory(patterns, beta=64.0)        # (P, d+1) points of the hyperboloid, float64
    states = mem.retrieve(queries)                     # Karcher-flow retrieval

Command line: ``icml26 hyperhopfield geometry|capacity|decode|retrieve``.
"""

from icml26.hyperhopfield.capacity import estimate_capacity, make_space
from icml26.hyperhopfield.data import PlaceCells, place_cells
from icml26.hyperhopfield.geometry import distance_scaling, hyperbolic_mds_radius, log_scaling_range
from icml26.hyperhopfield.lorentz import MAX_RADIUS
from icml26.hyperhopfield.memory import (
    ClassicalHopfield,
    EuclideanMemory,
    HyperbolicMemory,
    SphereMemory,
    gaussian_posterior_mean,
    mhn_update,
    poisson_posterior_mean,
)

__all__ = [
    "MAX_RADIUS",
    "ClassicalHopfield",
    "EuclideanMemory",
    "HyperbolicMemory",
    "PlaceCells",
    "SphereMemory",
    "distance_scaling",
    "estimate_capacity",
    "gaussian_posterior_mean",
    "hyperbolic_mds_radius",
    "log_scaling_range",
    "make_space",
    "mhn_update",
    "place_cells",
    "poisson_posterior_mean",
]
