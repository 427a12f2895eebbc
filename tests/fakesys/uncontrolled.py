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
