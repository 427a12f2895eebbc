"""Contract v3 pieces of brainconverge: the positive control's planted correlation is exact, and the planted
Granger pairs are calibrated under the permutation null and carry their direction."""

import numpy as np
import pytest

from icml26.brainconverge.analysis import granger, granger_null_fpr, planted_pair
from icml26.brainconverge.claims import PAPER_VISION_R, planted_alignment


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("coupling", [-0.8, 0.0, 0.3, 0.9])
def test_planted_alignment_has_exactly_the_planted_correlation(seed, coupling):
    """Whatever the base's own correlation with performance (above or below the target), the plant sets it."""
    rng = np.random.default_rng(seed)
    perf = rng.uniform(0.1, 1.0, 30)
    base = 0.5 + 0.1 * (coupling * (perf - perf.mean()) / perf.std() + rng.standard_normal(30))
    planted = planted_alignment(base, perf, PAPER_VISION_R)
    assert np.corrcoef(planted, perf)[0, 1] == pytest.approx(PAPER_VISION_R, abs=1e-9)
    resid = lambda v: v - np.polyval(np.polyfit(perf, v, 1), perf)  # noqa: E731
    assert np.allclose(resid(planted), resid(base))  # only the part along performance changes


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
