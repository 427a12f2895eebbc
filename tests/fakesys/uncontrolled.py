"""A claim whose negative control cannot fail: the tests add it to the fake system's CLAIMS and expect the
contract checker to reject the system.

The measurement (the mean's error) is invariant under shuffling the draws, so the "control" that shuffles them
changes nothing: the claim would hold whatever the estimator did with the order of the data.
"""

import numpy as np

from icml26.claims import ClaimResult, Scale, claim


@claim(
    "fakesys/order-matters-v1",
    statement="the sample mean uses the order of the draws (it does not)",
    paper="a claim that cannot fail",
    control="the draws are shuffled before the mean is taken",
)
def order_matters(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=100)
    if control:
        draws = rng.permutation(draws)
    error = abs(draws.mean())
    return ClaimResult("holds" if error < 0.5 else "fails", measured={"abs error": error})
