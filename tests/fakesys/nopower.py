"""A true claim no smoke run can show: its positive control (the claimed shift planted) does not hold either,
so the runner must report ``no-power``, never ``fails``. The tests add it to the fake system's CLAIMS."""

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, Scale, claim


@claim(
    "fakesys/tiny-shift-v1",
    statement="draws from N(0.001, 1) have a positive mean (true, but far below what 50 draws can resolve)",
    paper="a true statement no small run can show",
    control="A/A: draws from N(0, 1)",
    positive="a fresh sample of 50 draws with the claimed shift 0.001 planted",
    judge=Interval("mean", above=0.0),
)
def tiny_shift(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    rng = np.random.default_rng(seed)
    shift = 0.0 if arm is Arm.NEGATIVE else 0.001
    draws = rng.normal(size=50) + shift
    if arm is Arm.POSITIVE:  # planted at the claimed size, on a sample of its own
        draws = rng.normal(size=50) + shift
    mean = float(draws.mean())
    return ClaimResult("holds" if mean > 0 else "fails", measured={"mean": mean})
