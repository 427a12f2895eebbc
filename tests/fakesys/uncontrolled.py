"""Claims that break contract v3 on purpose: the tests add them to the fake system and expect the contract
checker to reject it.

- ``order_matters``: its negative control cannot fail (the mean's error is invariant under shuffling).
- ``reused_baseline``: its negative control is the baseline arm reused, so the paired statistic is exactly 0
  on every seed — a control that can never reveal a confound.
- ``no_positive``: a contract-v2 claim without a positive control.
- ``blind_measure``: a measure check whose null input scores far from the null.
"""

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim


@claim(
    "fakesys/order-matters-v1",
    statement="the sample mean uses the order of the draws (it does not)",
    paper="a claim that cannot fail",
    control="the draws are shuffled before the mean is taken",
    positive="an estimator that reads the first draw only",
)
def order_matters(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=100)
    if arm is Arm.NEGATIVE:
        draws = rng.permutation(draws)
    error = abs(draws[0]) if arm is Arm.POSITIVE else abs(draws.mean())
    return ClaimResult("holds" if error < 0.5 else "fails", measured={"abs error": error})


@claim(
    "fakesys/reused-baseline-v1",
    statement="the mean beats the median (its control reuses the median for both arms)",
    paper="a degenerate control",
    control="the median in the mean's place, on the same draws",
    positive="the median shrunk by sqrt(2/pi)",
    judge=Interval("gain", above=0.0),
)
def reused_baseline(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    draws = np.random.default_rng(seed).normal(size=(200, 25))
    median = np.median(draws, axis=1)
    estimate = {Arm.CLAIM: draws.mean(axis=1), Arm.NEGATIVE: median, Arm.POSITIVE: median * np.sqrt(2 / np.pi)}[arm]
    gain = float(np.mean(median**2) - np.mean(estimate**2))
    return ClaimResult("holds" if gain > 0 else "fails", measured={"gain": gain})


@claim(
    "fakesys/no-positive-v1",
    statement="the mean of 100 draws is within 0.5 of 0",
    paper="a contract-v2 claim",
    control="the draws are shifted by 1",
)
def no_positive(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    draws = np.random.default_rng(seed).normal(size=100) + (1.0 if control else 0.0)
    return ClaimResult("holds" if abs(draws.mean()) < 0.5 else "fails", measured={"abs mean": abs(draws.mean())})


def _blind(seed: int) -> dict[str, float]:
    """A 'contiguity' that scores everything near 1: a code that fires everywhere is called contiguous."""
    rng = np.random.default_rng(seed)
    return {"truth": 1.0, "scattered": 0.875 + 0.01 * rng.random(), "null": 1.0}


blind_measure = MeasureCheck("contiguity", _blind, null_band=(0.0, 0.6))


def _aa_gain(seed: int, arm: Arm) -> float:
    """The paired gain of two independently seeded medians (an A/A pair) in the negative arm: it scatters
    around 0, so with a bar at 0 it holds on about half the seeds."""
    rng = np.random.default_rng([seed, int(arm is Arm.NEGATIVE)])
    median = np.median(rng.normal(size=(200, 25)), axis=1)
    other = {
        Arm.CLAIM: rng.normal(size=(200, 25)).mean(axis=1),
        Arm.NEGATIVE: np.median(rng.normal(size=(200, 25)), axis=1),
        Arm.POSITIVE: np.median(rng.normal(size=(200, 25)), axis=1) * np.sqrt(2 / np.pi),
    }[arm]
    return float(np.mean(median**2) - np.mean(other**2))


def coin_flip_control(seeds_that_hold: set[int]):
    """A judged claim whose A/A negative control holds exactly on ``seeds_that_hold`` (the others fail): what a
    chance pass of an A/A statistic looks like to the checker."""

    @claim(
        "fakesys/coin-flip-control-v1",
        statement="the mean beats the median (its A/A control holds on some seeds by chance)",
        paper="an A/A control",
        control="A/A: a second median on its own draws in the mean's place",
        positive="the median shrunk by sqrt(2/pi)",
        judge=Interval("gain", above=0.0),
    )
    def coin_flip(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
        gain = abs(_aa_gain(seed, arm))
        if arm is Arm.NEGATIVE and seed not in seeds_that_hold:
            gain = -gain
        return ClaimResult("holds" if gain > 0 else "fails", measured={"gain": gain})

    return coin_flip
