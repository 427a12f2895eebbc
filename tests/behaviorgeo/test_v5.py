"""lm-fc-beats-fa-v5's 2,110-noun experiment is merged from stores of disjoint cue ranges: the merge must give
one forced-choice design, re-parse the old free-association runs against the whole vocabulary, stack the hidden
states, and refuse stores that do not make one design. Checked on the tiny random model and hand-made stores."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from icml26.behaviorgeo import lmexp
from icml26.behaviorgeo.lm import TrialStore, tiny_lm
from icml26.behaviorgeo.runner import _vocab_hash, fc_trial_indices, run_fc_fast
from icml26.claims import Arm, Scale

torch.set_num_threads(1)


def test_tiny_experiment_merges_both_cue_ranges_into_one_design():
    lm = lmexp.tiny_experiment_v5()
    V = len(lm["vocab"])
    assert V == 64 and lm["stats_fc"]["trials"] == len(fc_trial_indices(V, 16, 1, 4)) == 64 * 4
    assert lm["stats_fa_a"]["trials"] == lm["stats_fa_b"]["trials"] == V * 8 // 2
    # old cues saw new words among their candidates (one design, no block structure)
    assert (lm["cands"][lm["cues"] < 32] >= 32).any() and (lm["cands"][lm["cues"] >= 32] < 32).any()
    assert all(S.shape == (V, V) for S in lm["hidden"]["task-fc"]) and len(lm["hidden"]["task-fc"]) == 3


def _fa_store(folder, vocab, rows, runs=2, cues=None):
    cfg = {"paradigm": "fa", "runner": "fast", "model": "m", "vocab": _vocab_hash(vocab), "n_words": len(vocab),
           "runs": runs, "n_assoc": 5, "seed": 0, "chat": True, "max_new_tokens": 8, "temperature": 0.7,
           "prompt": "p", "top_p": 0.9}  # fmt: skip
    if cues is not None:
        cfg["cues"] = list(cues)
    ts = TrialStore(folder, cfg)
    ts.write_vocab(vocab)
    ts.append(pd.DataFrame(rows))


def test_old_free_association_is_reparsed_against_the_whole_vocabulary(tmp_path):
    old, vocab = ["apple", "boat"], ["apple", "boat", "castle", "dog"]
    # run ids are cue * runs + r in both designs; the old store parsed 'castles' as out of vocabulary
    _fa_store(tmp_path / "old", old, [
        {"run": r, "cue": old[r // 2], "text": "castles, the big dog", "status": "ok",
         "associates": "castles|big dog", "n_in_vocab": 0} for r in range(4)])  # fmt: skip
    _fa_store(tmp_path / "new", vocab, [
        {"run": r, "cue": vocab[r // 2], "text": "apple", "status": "ok", "associates": "apple", "n_in_vocab": 1}
        for r in range(4, 8)], cues=(2, 4))  # fmt: skip
    fa = lmexp.merge_fa_v5([tmp_path / "old", tmp_path / "new"], vocab, runs=2)
    assert list(fa.associates[:4]) == ["castle|dog"] * 4  # plural and content word now in vocabulary
    assert list(fa.associates[4:]) == ["apple"] * 4
    with pytest.raises(ValueError, match="runs per cue"):
        lmexp.merge_fa_v5([tmp_path / "old", tmp_path / "new"], vocab, runs=4)
    with pytest.raises(ValueError, match="not 4 x 2"):
        lmexp.merge_fa_v5([tmp_path / "old"], vocab, runs=2)  # the new cues' store missing
    with pytest.raises(ValueError, match="not a prefix"):
        lmexp.merge_fa_v5([tmp_path / "old"], ["boat", "apple", "castle", "dog"], runs=2)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        lmexp.merge_fa_v5([tmp_path / "none"], vocab, runs=2)


def test_forced_choice_stores_must_make_exactly_one_design(tmp_path):
    vocab = lmexp.read_extension()[:20]
    model, tok = tiny_lm(vocab)
    kw = {"model_name": "tiny", "trials_per_cue": 2, "batch": 16, "calibrate": True}
    run_fc_fast(model, tok, vocab, tmp_path / "a", cues=(0, 10), **kw)
    run_fc_fast(model, tok, vocab, tmp_path / "b", cues=(10, 20), max_trials=5, **kw)  # unfinished
    with pytest.raises(ValueError, match="not the design's"):
        lmexp.merge_fc_v5([tmp_path / "a", tmp_path / "b"], vocab, 2)
    run_fc_fast(model, tok, vocab, tmp_path / "b", cues=(10, 20), **kw)  # resumed to the end
    fc = lmexp.merge_fc_v5([tmp_path / "a", tmp_path / "b"], vocab, 2)
    assert np.array_equal(fc.trial, fc_trial_indices(20, 16, 1, 2))
    with pytest.raises(ValueError, match="not the design's"):  # the same range twice
        lmexp.merge_fc_v5([tmp_path / "a", tmp_path / "a", tmp_path / "b"], vocab, 2)
    with pytest.raises(ValueError, match="not run on this"):
        lmexp.merge_fc_v5([tmp_path / "a", tmp_path / "b"], vocab[::-1], 2)
    run_fc_fast(model, tok, vocab, tmp_path / "c", cues=(10, 20), **{**kw, "calibrate": False})
    with pytest.raises(ValueError, match="different configurations"):
        lmexp.merge_fc_v5([tmp_path / "a", tmp_path / "c"], vocab, 2)
    cfg = json.loads((tmp_path / "a" / "config.json").read_text())
    assert cfg["cues"] == [0, 10]


def test_hidden_blocks_stack_per_word_and_refuse_other_depths():
    a, b = np.ones((3, 4, 5)), np.zeros((3, 2, 5))
    assert lmexp.merge_hidden_v5([a, b]).shape == (3, 6, 5)
    with pytest.raises(ValueError, match="different layers"):
        lmexp.merge_hidden_v5([a, np.zeros((4, 2, 5))])


def test_v5_claim_at_smoke_runs_the_whole_path_and_its_aa_control_fails():
    from icml26.behaviorgeo.claims import lm_fc_beats_fa_v5

    res = lm_fc_beats_fa_v5(Scale("smoke"), 0)
    m = res.measured
    assert m["vocabulary"] == 64 and m["evaluated words (both folds)"] > 30
    assert m["fold 1: evaluation words"] + m["fold 2: evaluation words"] == m["evaluated words (both folds)"]
    low = m["bootstrap 95% CI low of cross-fitted held-out RSA FC - FA (words)"]
    assert low < m["cross-fitted held-out RSA FC - FA (task-fc)"] < m[
        "bootstrap 95% CI high of cross-fitted held-out RSA FC - FA (words)"]  # fmt: skip
    assert lm_fc_beats_fa_v5(Scale("smoke"), 0, Arm.NEGATIVE).verdict == "fails"
    pos = lm_fc_beats_fa_v5(Scale("smoke"), 0, Arm.POSITIVE).measured
    assert pos["fold 1: planted subject beta (positive; 0 otherwise)"] > 0 < pos[
        "fold 2: planted subject beta (positive; 0 otherwise)"]  # fmt: skip
    assert set(pos) == set(m)  # the arms measure the same things


def test_crossfit_split_keeps_the_fa_tuning_cues_out_of_evaluation():
    from icml26.behaviorgeo.claims import _crossfit_split

    V = 1200
    lm = {k: np.ones(V, bool) for k in ("answered_fc", "answered_fa_a", "answered_fa_b")}
    (s1, e1), (s2, e2) = _crossfit_split(lm, 0)
    tuned = lmexp.fa_tuning_cues()
    assert not np.isin(tuned, e1).any() and not np.isin(tuned, e2).any()
    assert np.isin(tuned, s1).all() and np.isin(tuned, s2).all()
    assert len(np.intersect1d(e1, e2)) == 0 and len(e1) + len(e2) == V - len(tuned)
    assert not np.array_equal(_crossfit_split(lm, 1)[0][1], e1)  # seeds draw other splits
