"""The claims' negative controls at smoke scale: each is a real sabotage that fails by a wide margin."""

import pytest

from icml26.claims import run_claim
from icml26.gpm.claims import scales, untrained_equals_mfi

KEY = "log10 time ratio BECAT / GPM at the largest bank"


@pytest.mark.slow
def test_scales_control_restores_global_alignment_and_fails_far_from_the_bar():
    s = run_claim(scales, "smoke", with_control=True)
    c = s.control
    assert c.verdict == "fails"
    # the global alignment (all J^2 pairs) is slower than the sampled BECAT, not a tie with it
    assert c.measured_mean[KEY] < 0.0
    # and its cost grows faster with the bank than GPM's forward pass
    assert c.measured_mean["gpm log-log slope"] > s.measured_mean["gpm log-log slope"] + 0.5
    assert s.measured_mean[KEY] > c.measured_mean[KEY] + 1.5


@pytest.mark.slow
def test_untrained_mfi_initialised_policy_is_mfi_and_the_uniform_start_is_not():
    s = run_claim(untrained_equals_mfi, "smoke", with_control=True)
    assert s.verdict == "holds" and s.control.verdict == "fails"
    assert s.control.measured_mean["share of test steps where GPM asks MFI's item"] < 0.5
