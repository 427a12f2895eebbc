"""Claims of the fake system: holds, fails, not-measured (in that order)."""

import numpy as np

from icml26.claims import ClaimResult, Scale, claim


@claim(
    "fakesys/mean-consistent-v1",
    statement="the sample mean of n Gaussian draws is within 5/sqrt(n) of the true mean",
    paper="Eq. 1",
)
def mean_consistent(scale: Scale, seed: int) -> ClaimResult:
    rng = np.random.default_rng(seed)
    n = {Scale.SMOKE: 400, Scale.SMALL: 10_000, Scale.PAPER: 1_000_000}[scale]
    mu = rng.normal()
    error = abs(rng.normal(mu, 1.0, size=n).mean() - mu)
    bound = 5 / np.sqrt(n)

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.bar(["error", "bound"], [error, bound])
    return ClaimResult(
        "holds" if error < bound else "fails",
        measured={"abs error": error},
        paper={"bound": "5/sqrt(n)"},
        baselines={"bound": bound},
        figures={"error": fig},
    )


@claim(
    "fakesys/biased-variance-unbiased-v1",
    statement="the 1/n variance estimator is unbiased at n = 5 (it is not: E = (n-1)/n sigma^2)",
    paper="a false statement, on purpose",
)
def biased_variance(scale: Scale, seed: int) -> ClaimResult:
    rng = np.random.default_rng(seed)
    reps = 4000 if scale is Scale.SMOKE else 40_000
    estimates = rng.normal(size=(reps, 5)).var(axis=1, ddof=0)
    mean = estimates.mean()
    stderr = estimates.std() / np.sqrt(reps)
    holds = abs(mean - 1.0) < 3 * stderr
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"E[var]": mean},
        paper={"E[var]": 1.0},
        reason="" if holds else f"E[var] = {mean:.3f}, expected 1 within {3 * stderr:.3f}",
    )


@claim("fakesys/needs-cluster-v1", statement="the mean is fast on a 1000-node cluster", paper="Sec. 9")
def needs_cluster(scale: Scale, seed: int) -> ClaimResult:
    return ClaimResult("not-measured", reason="needs a cluster; this machine has 2 cores")


CLAIMS = [mean_consistent, biased_variance, needs_cluster]
