"""The simulated subject and the trial design: the paradigms read the true semantics, the controls do not."""

import numpy as np
import pytest

from icml26.behaviorgeo.geometry import count_matrix, hidden_similarity, ppmi, row_cosine, rsa
from icml26.behaviorgeo.subject import SemanticWorld, SimulatedSubject, fc_trials


def test_fc_trials_show_every_other_word_once_per_shuffle():
    cues, cands = fc_trials(50, 16, shuffles=2, seed=1)
    per = -(-49 // 16)
    assert len(cues) == 50 * 2 * per and cands.shape == (len(cues), 16)
    for c in (0, 17, 49):
        block = cands[cues == c]
        assert not np.any(block == c)
        for r in range(2):
            shown = block[r * per : (r + 1) * per].ravel()
            assert set(shown) == set(range(50)) - {c}
            assert all(len(set(row)) == 16 for row in block[r * per : (r + 1) * per])
    np.testing.assert_array_equal(fc_trials(50, 16, 2, seed=1)[1], cands)  # deterministic
    assert not np.array_equal(fc_trials(50, 16, 2, seed=2)[1], cands)
    assert -(-4999 // 16) == 313  # the paper's trials per cue at 5,000 words
    with pytest.raises(ValueError, match="too few"):
        fc_trials(10, 16)


def test_forced_choice_picks_the_most_similar_candidates_when_noise_is_small():
    world = SemanticWorld.make(60, seed=0)
    sub = SimulatedSubject(world, seed=0, beta_fc=1e6)
    cues, cands = fc_trials(60, 16, seed=0)
    picks = sub.forced_choice(cues, cands)
    S = sub.semantic_similarity()
    for t in range(0, len(cues), 7):
        best = cands[t][np.argsort(-S[cues[t], cands[t]])[:2]]
        np.testing.assert_array_equal(picks[t], best)


def test_free_association_without_the_cue_and_with_frequency_bias():
    world = SemanticWorld.make(80, seed=1)
    sub = SimulatedSubject(world, seed=1, beta_fa=0.0, alpha_fa=1.0)
    cues, assoc = sub.free_association(np.arange(80), n_runs=30)
    assert assoc.shape == (80 * 30, 5)
    assert not np.any(assoc == cues[:, None])
    assert all(len(set(r)) == 5 for r in assoc[:50])
    counts = np.bincount(assoc.ravel(), minlength=80)
    assert np.corrcoef(counts, world.freq)[0, 1] > 0.8


def test_true_semantics_scores_best_and_random_subject_scores_nothing():
    world = SemanticWorld.make(150, seed=2)
    sub = SimulatedSubject(world, seed=2)
    H = sub.hidden_states()
    best = int(np.argmax(sub.layer_mixing()))
    Sh = hidden_similarity(H[best])
    cues, cands = fc_trials(150, 16, shuffles=3, seed=2)
    S_fc = row_cosine(ppmi(count_matrix(np.repeat(cues, 2), sub.forced_choice(cues, cands).ravel(), 150)))
    rnd = SimulatedSubject(world, seed=2, random_responses=True)
    S_rnd = row_cosine(ppmi(count_matrix(np.repeat(cues, 2), rnd.forced_choice(cues, cands).ravel(), 150)))
    r_true, r_fc, r_rnd = rsa(sub.semantic_similarity(), Sh), rsa(S_fc, Sh), rsa(S_rnd, Sh)
    assert r_true > r_fc > 0.3 > 0.05 > abs(r_rnd)
    # the embedding layer carries no meaning: alignment there is ~0
    assert abs(rsa(sub.semantic_similarity(), hidden_similarity(H[0]))) < 0.05


def test_bad_designs_and_worlds_are_refused():
    with pytest.raises(ValueError, match=r"cue indices must lie in \[0, 20\)"):
        fc_trials(20, 16, cues=np.array([25]))
    with pytest.raises(ValueError, match=">= 2 words"):
        SemanticWorld.make(0)
