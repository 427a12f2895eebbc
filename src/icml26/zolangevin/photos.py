"""Black-box deblurring and phase retrieval of real photographs: ZO-APMC vs EnKG vs gradient APMC.

Ground truth: scikit-image's bundled photographs (:data:`icml26.zolangevin.data.TEST_PHOTOS`, public domain or
CC0), centre squares area-averaged to the prior's size. Measurements y = A(x) + σ_y ε of two forward models,
each queried as a black box by the zeroth-order samplers: Gaussian blur + 2x subsampling (deblurring) and
the subsampled magnitude of the oversampled Fourier transform (phase retrieval).

Samplers, all on the same annealed plug-and-play schedule (:func:`icml26.zolangevin.apmc.zo_apmc`) and the
same score prior, at (about) equal forward-model queries per chain:

* ``ZO-APMC``: the variance-reduced zeroth-order estimator of ∇r (b directions, coordinate refresh every q
  steps) — its queries per chain Q set the budget;
* ``EnKG``: ensemble-Kalman guidance, one query per chain and step, so Q / (steps) times as many steps;
* ``gradient APMC``: the exact ∇r by autograd through A, one forward pass and one vector-Jacobian product a
  step, counted as 2 forward-model evaluations, so Q / (2 steps) times as many steps;
* ``EnKG twin``: EnKG again on its own random stream — the A/A reference of the ZO-APMC - EnKG comparison.

Scores: PSNR and SSIM of the posterior mean (clipped to [0, 1]) against the photograph, and the 90 % coverage.
"""

from __future__ import annotations

import time

import numpy as np

from .apmc import InverseProblem, coverage, make_forward, psnr, ssim, zo_apmc
from .data import TEST_PHOTOS, load_photo

__all__ = ["PROBLEMS", "compare_on_photos", "planted_mean"]

#: The two forward models: linear deblurring and non-linear phase retrieval.
PROBLEMS = {"deblurring": "blur-subsample", "phase retrieval": "fourier-magnitude"}

#: Gradient APMC's cost per step in forward-model evaluations (one forward pass, one vector-Jacobian product).
GRADIENT_COST = 2


def planted_mean(mean: np.ndarray, truth: np.ndarray, gain_db: float) -> np.ndarray:
    """The clipped posterior mean moved towards the truth so that its PSNR rises by exactly ``gain_db``.

    truth + c (clip(mean) - truth) with c = 10^(-gain_db / 20) scales the error by c (it stays in [0, 1], a
    convex combination of two images in [0, 1]), so the MSE falls by c² and the PSNR rises by gain_db.
    """
    c = 10 ** (-gain_db / 20)
    return truth + c * (np.clip(mean, 0, 1) - truth)


def compare_on_photos(
    prior,
    *,
    photos: tuple[str, ...] = tuple(TEST_PHOTOS),
    problems: tuple[str, ...] = tuple(PROBLEMS),
    sigma_y: float = 0.05,
    n_chains: int = 16,
    n_levels: int = 8,
    steps_per_level: int = 25,
    b: int = 4,
    q: int = 6,
    plant_db: float = 0.375,
    seed: int = 0,
) -> dict:
    """Run the four samplers on every (photo, problem) and return per-run PSNR/SSIM/coverage and queries.

    ``plant_db``: the gain planted on the EnKG twin for the positive control (``planted`` PSNR/SSIM rows:
    :func:`planted_mean` of the twin's mean).

    Returns
    -------
    dict
        ``runs``: a list of {photo, problem, method -> {psnr, ssim, coverage, queries, steps, seconds}}.
    """
    for p in problems:
        if p not in PROBLEMS:
            raise ValueError(f"unknown problem {p!r}; choose from {list(PROBLEMS)}")
    lo = max(prior.sigma_min, 0.03)
    runs = []
    for i, photo in enumerate(photos):
        truth = load_photo(photo, prior.size)  # (S, S) in [0, 1]
        for j, name in enumerate(problems):
            rng = np.random.default_rng([seed, i, j])  # measurement noise and every sampler's stream
            streams = rng.spawn(5)
            problem = InverseProblem.simulate(make_forward(PROBLEMS[name], prior.size), truth, sigma_y, streams[0])
            kw = dict(n_chains=n_chains, n_levels=n_levels, sigma_range=(prior.sigma_max, lo))
            row = {"photo": photo, "problem": name}

            def run(method, steps, stream, problem=problem, kw=kw, **extra):
                t0 = time.perf_counter()
                res = zo_apmc(problem, prior, method=method, steps_per_level=steps, rng=stream, **kw, **extra)
                return res, time.perf_counter() - t0

            vr, secs = run("vr-zo", steps_per_level, streams[1], b=b, q=q)
            per_step = vr.queries / (n_levels * steps_per_level)  # forward queries per chain and step
            enkg_steps = max(1, round(steps_per_level * per_step))
            grad_steps = max(1, round(steps_per_level * per_step / GRADIENT_COST))
            results = {"ZO-APMC": (vr, secs, steps_per_level)}
            enkg, s = run("enkg", enkg_steps, streams[2])
            results["EnKG"] = (enkg, s, enkg_steps)
            grad, s = run("oracle", grad_steps, streams[3])
            results["gradient APMC"] = (grad, s, grad_steps)
            twin, s = run("enkg", enkg_steps, streams[4])
            results["EnKG twin"] = (twin, s, enkg_steps)
            for method, (res, secs, steps) in results.items():
                queries = res.queries * (GRADIENT_COST if method == "gradient APMC" else 1)
                row[method] = {
                    "psnr": psnr(res.mean, truth.ravel()),
                    "ssim": ssim(res.mean, truth, prior.size),
                    "coverage": coverage(res.samples, truth),
                    "queries": int(queries),
                    "steps": int(steps * n_levels),
                    "seconds": secs,
                }
            planted = planted_mean(twin.mean, truth.ravel(), plant_db)
            row["planted"] = {"psnr": psnr(planted, truth.ravel()), "ssim": ssim(planted, truth, prior.size)}
            row["_means"] = {m: r[0].mean.reshape(prior.size, prior.size) for m, r in results.items()}
            row["_truth"] = truth
            runs.append(row)
    return {"runs": runs, "sigma_y": sigma_y, "n_chains": n_chains, "size": prior.size}
