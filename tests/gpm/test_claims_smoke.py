"""The claims' controls at smoke scale: the A/A pair and the plant on it, and the by-construction check's sabotage."""

import pytest

from icml26.claims import run_claim
from icml26.gpm.claims import scales, untrained_equals_mfi

KEY = "log10 time ratio BECAT / GPM at the largest bank"


@pytest.mark.slow
def test_scales_controls_are_an_a_a_pair_and_the_plant_on_it():
    s = run_claim(scales, "smoke", with_control=True)
    c = s.control
    assert c.verdict == "fails"
    # a second sampled BECAT in GPM's slot: the ratio scatters around 1 (log 0), far below the 10x bar
    assert abs(c.measured_mean[KEY]) < 0.6
    # the positive plants 12.5x on that pair: about log10 12.5 = 1.1 above the A/A ratio, not an easy 100x
    assert s.positive.measured_mean[KEY] < 1.1 + 0.6
    assert s.positive.measured_mean[KEY] > c.measured_mean[KEY] + 0.5


@pytest.mark.slow
def test_untrained_mfi_initialised_policy_is_mfi_and_the_uniform_start_is_not():
    s = run_claim(untrained_equals_mfi, "smoke", with_control=True)
    assert s.verdict == "holds" and s.control.verdict == "fails"
    assert s.control.measured_mean["share of test steps where GPM asks MFI's item"] < 0.5
