"""Claims of the fake system: holds, fails (refuted), not-measured, no-power, and a comparison judged by a
paired interval; one credited mechanism with its probe; one measure validated both ways."""

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism


@mechanism(
    "averaging",
    component="averaging n draws",
    measures="variance of one draw / variance of the mean of n draws",
    above=2.0,
)
def averaging(scale: Scale, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    n = {Scale.SMOKE: 400, Scale.SMALL: 10_000, Scale.PAPER: 1_000_000}[scale]
    draws = rng.normal(size=(200, min(n, 1000)))
    return {"averaging": draws[:, 0].var() / draws.mean(axis=1).var(), "n": float(n)}


@claim(
    "fakesys/mean-consistent-v2",
    statement="the sample mean of n Gaussian draws is within 5/sqrt(n) of the true mean",
    paper="Eq. 1",
    control="the estimator is shifted by one standard deviation (mean + 1): its error is ~1 > 5/sqrt(n)",
    positive="the oracle: the true mean plus an independent N(0, 1/n) error, exactly the claimed order",
    mechanisms=("averaging",),
)
def mean_consistent(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    rng = np.random.default_rng(seed)
    n = {Scale.SMOKE: 400, Scale.SMALL: 10_000, Scale.PAPER: 1_000_000}[scale]
    mu = rng.normal()
    estimate = rng.normal(mu, 1.0, size=n).mean()
    if arm is Arm.NEGATIVE:
        estimate += 1.0  # the one line the negative control changes
    elif arm is Arm.POSITIVE:
        estimate = mu + rng.normal() / np.sqrt(n)  # the effect planted at the claimed size
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
    "fakesys/biased-variance-unbiased-v2",
    statement="the 1/n variance estimator is unbiased at n = 5 (it is not: E = (n-1)/n sigma^2)",
    paper="a false statement, on purpose",
    control="the draws have sigma = 2 while the truth says 1",
    positive="the 1/(n-1) estimator in the 1/n one's place: unbiased by construction, so the check must pass",
)
def biased_variance(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    rng = np.random.default_rng(seed)
    reps = 4000 if scale is Scale.SMOKE else 40_000
    draws = rng.normal(scale=2.0 if arm is Arm.NEGATIVE else 1.0, size=(reps, 5))
    estimates = draws.var(axis=1, ddof=1 if arm is Arm.POSITIVE else 0)
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
    "fakesys/needs-cluster-v2",
    statement="the mean is fast on a 1000-node cluster",
    paper="Sec. 9",
    control="one node instead of 1000",
    positive="a cluster known to be fast",
)
def needs_cluster(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    return ClaimResult("not-measured", reason="needs a cluster; this machine has 2 cores")


def _mse_gain(rng: np.random.Generator, reps: int, arm: Arm) -> tuple[float, float, float]:
    """MSE(median) - MSE(estimator) on (reps, 25) standard normal draws (true mean 0), for one arm."""
    draws = rng.normal(size=(reps, 25))
    mse_median = np.mean(np.median(draws, axis=1) ** 2)
    if arm is Arm.NEGATIVE:  # A/A: a median on its own fresh draws, so the difference scatters around 0
        estimate = np.median(rng.normal(size=(reps, 25)), axis=1)
    elif arm is Arm.POSITIVE:  # the median made exactly as efficient as the paper says the mean is (2/pi)
        estimate = np.median(draws, axis=1) * np.sqrt(2 / np.pi)
    else:
        estimate = draws.mean(axis=1)
    mse = np.mean(estimate**2)
    return mse_median - mse, mse, mse_median


@claim(
    "fakesys/mean-beats-median-v2",
    statement="on Gaussian data (n = 25) the sample mean's squared error is lower than the sample median's by more "
    "than 0.01, half the 2/pi efficiency gap (paired over the same draws; judged by the 95 % interval over seeds)",
    paper="Sec. 2 (efficiency of the mean)",
    control="A/A: a second median on its own fresh draws in the mean's place (the difference scatters around 0)",
    positive="the median shrunk by sqrt(2/pi), so its MSE is the claimed 2/pi of the median's",
    mechanisms=("averaging",),
    judge=Interval("MSE(median) - MSE(mean)", above=0.01),
)
def mean_beats_median(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    rng = np.random.default_rng(seed)
    gain, mse, mse_median = _mse_gain(rng, 2000 if scale is Scale.SMOKE else 20_000, arm)
    return ClaimResult(
        "holds" if gain > 0.01 else "fails",
        measured={"MSE(median) - MSE(mean)": gain, "MSE(mean)": mse},
        paper={"efficiency of the median": "2/pi"},
        baselines={"MSE(median)": mse_median},
    )


def _gain_check(seed: int) -> dict[str, float]:
    """The judged statistic MSE(median) - MSE(estimator) on the truth (the exact mean 0), on the mean, and on a
    second median (the null: no effect)."""
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=(4000, 25))
    mse_median = np.mean(np.median(draws, axis=1) ** 2)
    other = np.median(rng.normal(size=(4000, 25)), axis=1)
    return {
        "truth": mse_median - 0.0,
        "mean": mse_median - np.mean(draws.mean(axis=1) ** 2),
        "null": mse_median - np.mean(other**2),
    }


MEASURES = [MeasureCheck("MSE(median) - MSE(estimator)", _gain_check, null_band=(-0.02, 0.02))]
MECHANISMS = [averaging]
CLAIMS = [mean_consistent, biased_variance, needs_cluster, mean_beats_median]
