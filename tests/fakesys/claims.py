"""Claims of the fake system: holds, fails, not-measured, and a comparison judged by a paired interval."""

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim


@claim(
    "fakesys/mean-consistent-v1",
    statement="the sample mean of n Gaussian draws is within 5/sqrt(n) of the true mean",
    paper="Eq. 1",
    control="the estimator is shifted by one standard deviation (mean + 1): its error is ~1 > 5/sqrt(n)",
)
def mean_consistent(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    rng = np.random.default_rng(seed)
    n = {Scale.SMOKE: 400, Scale.SMALL: 10_000, Scale.PAPER: 1_000_000}[scale]
    mu = rng.normal()
    estimate = rng.normal(mu, 1.0, size=n).mean() + (1.0 if control else 0.0)  # the one line the control changes
    error = abs(estimate - mu)
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
        elsewhere={"abs error at n = 400 [a textbook]": 0.04},
    )


@claim(
    "fakesys/biased-variance-unbiased-v1",
    statement="the 1/n variance estimator is unbiased at n = 5 (it is not: E = (n-1)/n sigma^2)",
    paper="a false statement, on purpose",
    control="the draws have sigma = 2 while the truth says 1",
)
def biased_variance(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    rng = np.random.default_rng(seed)
    reps = 4000 if scale is Scale.SMOKE else 40_000
    estimates = rng.normal(scale=2.0 if control else 1.0, size=(reps, 5)).var(axis=1, ddof=0)
    mean = estimates.mean()
    stderr = estimates.std() / np.sqrt(reps)
    holds = abs(mean - 1.0) < 3 * stderr
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"E[var]": mean},
        paper={"E[var]": 1.0},
        reason="" if holds else f"E[var] = {mean:.3f}, expected 1 within {3 * stderr:.3f}",
    )


@claim(
    "fakesys/needs-cluster-v1",
    statement="the mean is fast on a 1000-node cluster",
    paper="Sec. 9",
    control="one node instead of 1000",
)
def needs_cluster(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    return ClaimResult("not-measured", reason="needs a cluster; this machine has 2 cores")


@claim(
    "fakesys/mean-beats-median-v1",
    statement="on Gaussian data the sample mean has a lower squared error than the sample median "
    "(paired over the same draws; judged by the 95 % interval over seeds)",
    paper="Sec. 2 (efficiency of the mean)",
    control="the median in the mean's place: the paired difference is exactly 0",
    judge=Interval("MSE(median) - MSE(mean)", above=0.0),
)
def mean_beats_median(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=(200 if scale is Scale.SMOKE else 2000, 25))  # (replications, n); true mean 0
    mse_median = np.mean(np.median(draws, axis=1) ** 2)
    mse_mean = mse_median if control else np.mean(draws.mean(axis=1) ** 2)
    gain = mse_median - mse_mean
    return ClaimResult(
        "holds" if gain > 0 else "fails",
        measured={"MSE(median) - MSE(mean)": gain, "MSE(mean)": mse_mean},
        paper={"efficiency of the median": "2/pi"},
        baselines={"MSE(median)": mse_median},
    )


CLAIMS = [mean_consistent, biased_variance, needs_cluster, mean_beats_median]
