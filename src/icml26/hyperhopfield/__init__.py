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

    from icml26.hyperhopfield import load_recording, prepare_track, place_fields, correlation_geometry
    rec = load_recording("linear-track")               # real rat hippocampal units (nelpy, MIT)
    fields = place_fields(rec, prepare_track(rec))     # rate maps, widths, spatial information

Command line: ``icml26 hyperhopfield fields|geometry|capacity|decode``.
"""

from icml26.hyperhopfield.betti import correlation_geometry, fit_geometry, reference_library
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
from icml26.hyperhopfield.recordings import (
    Recording,
    decode_position,
    load_recording,
    place_fields,
    prepare_track,
)

__all__ = [
    "MAX_RADIUS",
    "ClassicalHopfield",
    "EuclideanMemory",
    "HyperbolicMemory",
    "PlaceCells",
    "Recording",
    "SphereMemory",
    "correlation_geometry",
    "decode_position",
    "distance_scaling",
    "estimate_capacity",
    "fit_geometry",
    "gaussian_posterior_mean",
    "hyperbolic_mds_radius",
    "load_recording",
    "log_scaling_range",
    "make_space",
    "mhn_update",
    "place_cells",
    "place_fields",
    "poisson_posterior_mean",
    "prepare_track",
    "reference_library",
]
