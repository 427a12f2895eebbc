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


def test_rank_plant_is_a_fixed_size_whose_realised_rho_scatters_around_its_target():
    """real-performance-alignment-v4's positive: a fixed lam (not fitted per draw) gives an expected Spearman rho of
    about 1.25 x the margin on a base independent of performance, and the realised rho scatters (it can miss)."""
    from scipy import stats

    from icml26.brainconverge.claims import RHO_MARGIN, RHO_PLANT, plant_rank_part

    rng = np.random.default_rng(5)
    perf = rng.uniform(-6.0, -4.0, 36)
    rhos = [stats.spearmanr(perf, plant_rank_part(0.05 + 0.01 * rng.standard_normal(36), perf, RHO_PLANT))[0]
            for _ in range(400)]  # fmt: skip
    assert np.mean(rhos) == pytest.approx(1.25 * RHO_MARGIN, abs=0.03)
    assert np.std(rhos) > 0.1  # one brain's scatter stays: the plant is not sized on the realised ranks
    base = 0.05 + 0.01 * rng.standard_normal(36)
    np.testing.assert_array_equal(plant_rank_part(base, perf, 0.0), base)


def test_permutation_p_is_the_rank_among_the_null():
    from icml26.brainconverge.claims import permutation_p

    null = np.arange(16) / 16.0
    assert permutation_p(2.0, null) == pytest.approx(1 / 17)  # above every draw: the smallest p
    assert permutation_p(-1.0, null) == 1.0
    assert permutation_p(0.5, null) == pytest.approx(9 / 17)  # ties count against the value


def test_across_model_rhos_read_the_final_models_and_each_trained_checkpoint():
    from types import SimpleNamespace

    from icml26.brainconverge.claims import _across_model_rhos

    zoo = [SimpleNamespace(name=f"m{k}", step=s) for s in (0, 10, 20) for k in range(4)]
    perf = np.array([0.0, 1.0, 2.0, 3.0] * 3)
    align = np.r_[[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 3.0, 2.0]]  # step 0 reversed: ignored
    out = _across_model_rhos(zoo, perf, align)
    assert out["Spearman rho over the final models (not judged)"] == pytest.approx(0.8)
    assert out["Spearman rho within a checkpoint, mean over trained checkpoints (not judged)"] == pytest.approx(0.9)


def test_story_signal_is_story_locked_and_standardised():
    """real-region-v3's plant: one standardised course per listener, a function of the words (the same draw gives
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
