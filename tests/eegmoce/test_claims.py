"""The claims' measures on ground truth, their data manipulations, and their bad input."""

import numpy as np
import pytest

from icml26.eegmoce.claims import kendall_tau
from icml26.eegmoce.data import _tree_codes, gromov_delta, level_weights


def test_kendall_tau_scores_the_true_order_best():
    truth = np.array([0.1, 0.22, 0.28])  # delta_rel EEG / audio / video
    assert kendall_tau(-truth, -truth) == 1.0  # the true ordering scores the maximum
    assert kendall_tau(truth, -truth) == -1.0
    assert kendall_tau(np.ones(3), -truth) == 0.0  # ties count 0
    assert kendall_tau([3.0, 1.0, 2.0], -truth) == pytest.approx(1 / 3)
    for a, b in (([1.0, 2.0], [1.0, 2.0, 3.0]), ([1.0], [1.0]), (np.ones((2, 2)), np.ones((2, 2)))):
        with pytest.raises(ValueError, match="Kendall tau"):
            kendall_tau(a, b)


def test_the_claims_read_the_eegmat_subset_by_subject():
    from icml26.claims import Scale
    from icml26.eegmoce import claims as C

    d = C._data(Scale.SMOKE)
    assert d.names == ["eeg", "ecg", "hrv"] and np.unique(d.subject).tolist() == [0, 1, 2, 3]
    assert np.bincount(d.y).tolist() == [60, 60]  # 15 rest + 15 arithmetic windows per subject
    for tr, te in C._folds(Scale.SMOKE, 0):  # leave-subjects-out: no subject on both sides
        assert not set(d.subject[tr]) & set(d.subject[te])


def test_delta_rel_of_the_true_leaf_codes_ranks_the_level_decay():
    """Ground truth for the hierarchy measure: on the generator's noiseless leaf codes, a steeper decay (more
    weight on the top of the tree) is more tree-like; class-level-only codes are 3 points, a tree metric."""
    rel = {
        decay: gromov_delta(
            _tree_codes(np.random.default_rng(1), 3, 3, 24, level_weights(decay, 3)), 20000, np.random.default_rng(0)
        )[1]
        for decay in (0.0, 0.3, 0.5, 0.85)
    }
    assert rel[0.0] < 1e-6 < rel[0.3] < rel[0.5] < rel[0.85]


def test_judged_scales_run_on_v5s_own_seed_stream():
    """v5 = v4 on a stream no earlier version was judged on (v1 2000-2002, v2-v4 3000-3004); smoke keeps the seeds
    the contract checker uses."""
    from icml26.claims import Scale
    from icml26.eegmoce import claims as C

    assert [C._fresh(Scale.SMALL, s) for s in range(3)] == [4000, 4001, 4002]
    assert C._fresh(Scale.SMOKE, 2) == 2
