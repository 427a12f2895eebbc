"""Calibration of the Betti-curve test's two thresholds (``betti.CURVED_RADIUS``, ``betti.HYPERBOLIC_GAIN``).

    python benchmarks/hyperhopfield_betti_calibration.py [--out benchmarks/results/hyperhopfield_betti_calibration.json]

Point clouds of 200 points (the size the simulated claims use) in flat models (R^2, R^3, R^4, the line, the
circle) and curved ones (H^2 of radius 3 and 5, H^3 of radius 5), 12 draws each (draws seed 11), are fitted
against a reference library of 10 draws per model (library seed 10). For every (radius threshold, gain
threshold) pair of a small grid the script counts how many draws of each model would be called hyperbolic
(best model a ball of H^d of radius >= the radius threshold, and the gain above the gain threshold): the
committed thresholds (2.5, 0.2) are the pair whose false-positive rate on the flat balls stays near 5-10 %
while the curved balls of radius >= 3 are called in most draws. It writes every draw's fit and the counts as
JSON; the README of hyperhopfield quotes them.

A second part runs the same fit through spiking: 200 sparse Poisson place cells (``betti.place_cell_counts``)
living on a line, a circle and in H^2 of radius 3 and 5, 2000 windows of 0.25 s, 3 draws each (seed 12), their
correlation matrices fitted against the same library: what the test sees of a place-cell population.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from icml26.hyperhopfield.betti import (
    CURVED_RADIUS,
    HYPERBOLIC_GAIN,
    betti_curves,
    correlation_geometry,
    fit_geometry,
    place_cell_counts,
    rank_distances,
    reference_library,
    sample_geometry,
)

N_POINTS, LIB_REPS, DRAWS = 200, 10, 12
#: (label, space, d, R) of the calibration clouds
CLOUDS = [
    ("R^2", "flat", 2, 0.0),
    ("R^3", "flat", 3, 0.0),
    ("R^4", "flat", 4, 0.0),
    ("line", "line", 1, 0.0),
    ("circle", "circle", 1, 0.0),
    ("H^2 radius 3", "hyperbolic", 2, 3.0),
    ("H^2 radius 5", "hyperbolic", 2, 5.0),
    ("H^3 radius 5", "hyperbolic", 3, 5.0),
]
RADIUS_GRID = (2.0, 2.5, 3.0)
GAIN_GRID = (0.1, 0.2, 0.3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/hyperhopfield_betti_calibration.json"))
    args = ap.parse_args()
    t0 = time.time()
    lib = reference_library(N_POINTS, np.random.default_rng(10), reps=LIB_REPS)
    rng = np.random.default_rng(11)
    fits = {}
    for label, space, d, R in CLOUDS:
        fits[label] = []
        for _ in range(DRAWS):
            D = sample_geometry(N_POINTS, d, R, rng, space=space)
            f = fit_geometry(betti_curves(rank_distances(D, similarity=False)), lib)
            fits[label].append({"space": f.space, "dim": f.dim, "radius": f.radius, "gain": f.gain})
        print(
            label, [f"{x['space'][:4]}{x['dim']} R{x['radius']:.1f} G{x['gain']:.2f}" for x in fits[label]], flush=True
        )

    def called(rows, r_thr, g_thr):
        return sum(x["space"] == "hyperbolic" and x["radius"] >= r_thr and x["gain"] > g_thr for x in rows)

    table = {
        f"radius >= {r:g}, gain > {g:g}": {label: called(rows, r, g) for label, rows in fits.items()}
        for r in RADIUS_GRID
        for g in GAIN_GRID
    }
    for k, v in table.items():
        print(k, v)
    spiking = {}
    rng = np.random.default_rng(12)
    for label, space, d, R in [c for c in CLOUDS if c[0] in ("line", "circle", "H^2 radius 3", "H^2 radius 5")]:
        spiking[label] = []
        for _ in range(3):
            f = correlation_geometry(place_cell_counts(N_POINTS, 2000, space, d, R, rng), rng, n_boot=0, lib=lib)
            spiking[label].append({"model": f["model"], "score": f["score"], "gain": f["gain"]})
        print("place cells,", label, [f"{x['model']} S{x['score']:.2f}" for x in spiking[label]], flush=True)
    out = {
        "points": N_POINTS,
        "library_reps": LIB_REPS,
        "draws_per_model": DRAWS,
        "library_seed": 10,
        "draws_seed": 11,
        "committed": {"CURVED_RADIUS": CURVED_RADIUS, "HYPERBOLIC_GAIN": HYPERBOLIC_GAIN},
        "called_hyperbolic": table,
        "fits": fits,
        "place_cells_2000_windows": spiking,
        "wall_s": time.time() - t0,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out} ({out['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
