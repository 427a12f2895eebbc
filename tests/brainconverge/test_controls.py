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


def test_rank_plant_reaches_its_target_on_the_realised_ranks_and_no_sooner():
    """real-performance-alignment-v3's positive: the mean realised Spearman rho of the planted rows reaches the
    target, a size one grid step smaller does not, and an unreachable target returns the largest size."""
    from scipy import stats

    from icml26.brainconverge.claims import plant_rank_tracking

    rng = np.random.default_rng(5)
    perf = rng.uniform(-6.0, -4.0, 36)
    base = 0.05 + 0.01 * rng.standard_normal((8, 36))  # (K, entries) story-free alignments: no rank structure
    z = (perf - perf.mean()) / perf.std()

    def mean_rho(lam):
        return np.mean([stats.spearmanr(perf, b + lam * b.std() * z)[0] for b in base])

    start = mean_rho(0.0)
    lam = plant_rank_tracking(base, perf, start + 0.25)
    assert 0 < lam < 50 and mean_rho(lam) >= start + 0.25
    grid = np.r_[0.0, np.geomspace(1e-3, 50.0, 399)]
    assert mean_rho(grid[np.searchsorted(grid, lam) - 1]) < start + 0.25  # the smallest such size
    assert plant_rank_tracking(base, perf, 1.01) == 50.0


def test_story_signal_is_story_locked_and_standardised():
    """real-region-v2's plant: one standardised course per listener, a function of the words (the same draw gives
    the same course), and different listeners read different projections."""
    from icml26.brainconverge.alice import load_alice
    from icml26.brainconverge.claims import story_signal

    alice = load_alice()
    sig = story_signal(alice.words, alice.onsets, 3, np.random.default_rng(1))
    assert sig.shape == (3, alice.n_tr)
    np.testing.assert_allclose(sig.mean(1), 0.0, atol=1e-9)
    np.testing.assert_allclose(sig.std(1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(sig, story_signal(alice.words, alice.onsets, 3, np.random.default_rng(1)))
    assert abs(np.corrcoef(sig[0], sig[1])[0, 1]) < 0.99
    # the same word sequence read in another order is another course: the signal follows the story's words
    shuffled = list(np.random.default_rng(2).permutation(alice.words))
    other = story_signal(shuffled, alice.onsets, 3, np.random.default_rng(1))
    assert abs(np.corrcoef(sig[0], other[0])[0, 1]) < 0.9
