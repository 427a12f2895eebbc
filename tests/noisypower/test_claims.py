"""Contract v3 pieces of the noisypower claims: arms with their own starts, measures validated both ways."""

import numpy as np
import pytest

from icml26.claims import Arm
from icml26.noisypower import claims


def test_each_arm_draws_its_own_starts():
    """An A/A control must not reuse the claim arm's random start bit-for-bit."""
    draws = {arm: claims._arm_rng(3, arm).standard_normal(5) for arm in Arm}
    assert not np.allclose(draws[Arm.CLAIM], draws[Arm.NEGATIVE])
    assert not np.allclose(draws[Arm.CLAIM], draws[Arm.POSITIVE])
    np.testing.assert_array_equal(draws[Arm.CLAIM], claims._arm_rng(3, Arm.CLAIM).standard_normal(5))


@pytest.mark.parametrize("seed", [1])
def test_measures_see_the_effect_and_its_absence(seed):
    for check in claims.MEASURES:
        assert check.check(seed) == [], check.name


def test_rate_measure_orders_the_methods():
    """The exact Chebyshev count is accelerated (exponent gain ~1/2), NPM not (~0), half the momentum between."""
    scores = claims._acceleration_exponent_check(2)
    assert 0.3 < scores["truth"] < 0.7
    assert abs(scores["null"]) < 0.15
    assert scores["null"] - 0.1 < scores["half momentum"] < scores["truth"]


def test_claims_declare_their_controls_and_mechanisms():
    names = {m.name for m in claims.MECHANISMS}
    for c in claims.CLAIMS:
        assert c.positive and c.control and Arm.POSITIVE in c.arms
        assert set(c.mechanisms) <= names
