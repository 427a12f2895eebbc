"""Contract v3 pieces of brainconverge: the positive control's planted correlation is right in expectation and
noisy, and the planted Granger pairs are calibrated under the permutation null and carry their direction."""

import numpy as np
import pytest

from icml26.brainconverge.analysis import granger, granger_null_fpr, planted_pair
from icml26.brainconverge.claims import PAPER_VISION_R, planted_alignment


@pytest.mark.parametrize("coupling", [-0.8, 0.0, 0.3, 0.9])
def test_planted_alignment_has_the_planted_correlation_in_expectation_and_can_miss(coupling):
    """Whatever the base's own correlation with performance (above or below the target), the plant sets the
    *expected* correlation to r; the realised one scatters around it (so the positive control can fail)."""
    rng = np.random.default_rng(0)
    perf = rng.uniform(0.1, 1.0, 30)
    base = 0.5 + 0.1 * (coupling * (perf - perf.mean()) / perf.std() + rng.standard_normal(30))
    r = [np.corrcoef(planted_alignment(base, perf, PAPER_VISION_R, np.random.default_rng(k)), perf)[0, 1]
         for k in range(400)]  # fmt: skip
    assert np.mean(r) == pytest.approx(PAPER_VISION_R, abs=0.05)
    assert 0.01 < np.std(r) < 0.3  # the noise draw alone moves it (not an exact plant)
    with pytest.raises(ValueError, match="planted correlation"):
        planted_alignment(base, perf, 0.9, rng)


def test_planted_pairs_are_calibrated_and_directed():
    """The positive control's series: under the permutation null the test rejects near alpha; the planted
    direction is found far more often than the reverse."""
    rng = np.random.default_rng(3)
    pairs = [planted_pair(41, rng) for _ in range(12)]
    fpr = granger_null_fpr(pairs, n_perm=10, rng=rng, maxlag=3)
    assert 0.0 <= fpr < 0.15
    forward = np.mean([granger(x, y, maxlag=3)["p"] < 0.05 for x, y in pairs])
    backward = np.mean([granger(y, x, maxlag=3)["p"] < 0.05 for x, y in pairs])
    assert forward > 0.5 > backward
