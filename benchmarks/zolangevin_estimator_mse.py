"""How accurate is each zeroth-order gradient estimator along a Langevin path, as d grows? (referee, issue 17)

The abstract's claim is about the batch size "required for accurate estimation". This script measures the
estimator itself: chains run exact-gradient ULA on the two-mode Gaussian mixture (modes at +-2.5 e_1, unit
covariance) from exact samples, and at every step plain Gaussian smoothing (b = 4) and the VR recursion
(b = 4, q = 4, coordinate refresh) estimate the gradient at the current states; the reported number is the
relative mean squared error E|g_hat - grad f|^2 / E|grad f|^2, averaged over 200 steps and all chains.

Two step-size rules are compared: h = 0.5/d (the d-scaled step of Langevin guarantees) and h = 0.02 fixed
(the first claim's setting). Reported, not judged.

    python benchmarks/zolangevin_estimator_mse.py [--dims 16 32 64 128] [--steps 200]

Writes benchmarks/results/zolangevin_estimator_mse.json.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from icml26.zolangevin.estimators import GaussianSmoothing, VarianceReduced
from icml26.zolangevin.targets import GaussianMixture


def relative_mse(d: int, h: float, n_steps: int, seed: int = 0) -> dict[str, float]:
    target = GaussianMixture.two_modes(d)
    rng = np.random.default_rng([seed, d])
    x = target.sample(max(16, 2048 // d), rng)  # chains x d held at 2048
    estimators = {
        "plain ZO b=4": GaussianSmoothing(b=4, rng=np.random.default_rng([seed, d, 1])),
        "VR-ZO b=4 q=4": VarianceReduced(b=4, q=4, rng=np.random.default_rng([seed, d, 2])),
    }
    err: dict[str, list[float]] = {k: [] for k in estimators}
    for _ in range(n_steps):
        g = target.grad(x)  # (n, d)
        norm = float((g**2).sum(1).mean())
        for label, est in estimators.items():
            err[label].append(float(((est(target.potential, x) - g) ** 2).sum(1).mean()) / norm)
        x = x - h * g + np.sqrt(2 * h) * rng.standard_normal(x.shape)
    return {label: float(np.mean(v)) for label, v in err.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[16, 32, 64, 128])
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    rows = []
    for rule, step in (("h = 0.5/d", lambda d: 0.5 / d), ("h = 0.02", lambda d: 0.02)):
        for d in args.dims:
            r = relative_mse(d, step(d), args.steps)
            rows.append({"rule": rule, "d": d, "h": step(d), **r})
            print(json.dumps(rows[-1]))
    out = Path(__file__).parent / "results" / "zolangevin_estimator_mse.json"
    out.write_text(json.dumps({"rows": rows, "steps": args.steps}, indent=1) + "\n")


if __name__ == "__main__":
    main()
