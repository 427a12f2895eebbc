"""The LM runner on a tiny random Llama (never SmolLM2): batching is exact, picks follow the log-probabilities,
stores resume and refuse a changed configuration, generations are parsed and every failure is counted."""

import numpy as np
import pytest
import torch

from icml26.behaviorgeo.data import CONCRETE_NOUNS
from icml26.behaviorgeo.lm import (
    LABELS,
    STRATEGIES,
    TrialStore,
    _chat,
    content_word,
    fc_prompt,
    hidden_states,
    label_token_ids,
    next_token_logprobs,
    parse_associates,
    run_forced_choice,
    run_free_association,
    tiny_lm,
    trial_counts,
)
from icml26.behaviorgeo.subject import fc_trials

torch.set_num_threads(1)
WORDS = CONCRETE_NOUNS[:20]


@pytest.fixture(scope="module")
def lm():
    return tiny_lm(WORDS, seed=0)


def test_batched_scoring_equals_one_prompt_at_a_time(lm):
    model, tok = lm
    prompts = [_chat(tok, fc_prompt(w, WORDS[1:17]), True) for w in ("dog", "cat")] + [_chat(tok, "dog", True)]
    ids = label_token_ids(tok, 16)
    batched = next_token_logprobs(model, tok, prompts, ids)
    single = np.vstack([next_token_logprobs(model, tok, [p], ids) for p in prompts])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    assert batched.shape == (3, 16) and np.all(batched < 0)


@pytest.mark.parametrize("scoring", ["label", "word"])
def test_forced_choice_picks_the_two_most_probable_answers(lm, scoring):
    model, tok = lm
    df = run_forced_choice(model, tok, WORDS, None, batch=4, max_trials=6, scoring=scoring)
    cues, cands = fc_trials(len(WORDS), 16, 1, 0)
    for t in range(6):
        words = [WORDS[c] for c in cands[t]]
        ids = label_token_ids(tok, 16) if scoring == "label" else [tok.encode(w)[0] for w in words]
        lp = next_token_logprobs(model, tok, [_chat(tok, fc_prompt(WORDS[cues[t]], words, scoring), True)], ids)[0]
        top = np.argsort(-lp, kind="stable")[:2]
        assert (df.pick1[t], df.pick2[t]) == (WORDS[cands[t][top[0]]], WORDS[cands[t][top[1]]])
        assert df.cue[t] == WORDS[cues[t]] and df.logp1[t] >= df.logp2[t]


def test_store_resumes_to_the_same_trials_and_refuses_another_configuration(lm, tmp_path):
    model, tok = lm
    full = run_forced_choice(model, tok, WORDS, None, batch=8)
    store = tmp_path / "fc"
    part = run_forced_choice(model, tok, WORDS, store, batch=8, max_trials=10)
    assert len(part) == 10 and len(TrialStore(store, _cfg(store)).parts()) == 2
    done = run_forced_choice(model, tok, WORDS, store, batch=8)
    assert len(done) == len(full) == 2 * len(WORDS)  # ceil(19 / 16) = 2 trials per cue
    assert done.sort_values("trial").reset_index(drop=True)[["pick1", "pick2"]].equals(full[["pick1", "pick2"]])
    with pytest.raises(ValueError, match="different configuration"):
        run_forced_choice(model, tok, WORDS, store, batch=8, shuffles=2)
    with pytest.raises(ValueError, match="different configuration"):
        run_forced_choice(model, tok, WORDS[::-1], store)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.txt").write_text("x")
    with pytest.raises(ValueError, match=r"without config\.json"):
        run_forced_choice(model, tok, WORDS, tmp_path / "junk")


def _cfg(store):
    import json

    return json.loads((store / "config.json").read_text())


def test_parse_associates_normalises_and_flags_unparsable():
    index = {w: i for i, w in enumerate(["cat", "dog", "berry", "box"])}
    items, idx, status = parse_associates("1. Cats\n2) the Dog, berries; boxes and mouse.", index)
    assert status == "ok" and items == ["cat", "dog", "berry", "box", "mouse"] and idx == [0, 1, 2, 3, -1]
    assert parse_associates("!!! ... 123", index)[2] == "unparsable"
    assert parse_associates("", index)[2] == "unparsable"
    assert len(parse_associates("a, b, c, d, e, f, g", index)[0]) == 5


def test_content_word_maps_a_multi_word_associate_to_its_vocabulary_head():
    index = {w: i for i, w in enumerate(["cat", "table", "berry"])}
    assert content_word("kitchen table", index) == "table"
    assert content_word("wild berries", index) == "berry"
    assert content_word("big cats", index) == "cat"
    assert content_word("ice cream", index) == "ice cream"  # head not in the vocabulary: unchanged
    assert content_word("table", index) == "table" and content_word("chair", index) == "chair"


def test_free_association_keeps_and_counts_every_generation(lm, tmp_path):
    model, tok = lm
    df = run_free_association(model, tok, WORDS, tmp_path / "fa", runs=2, batch=8, max_new_tokens=6)
    assert len(df) == 2 * len(WORDS) and set(df.status) <= {"ok", "unparsable"}
    again = run_free_association(model, tok, WORDS, None, runs=2, batch=8, max_new_tokens=6)
    assert list(again.text) == list(df.sort_values("run").text)  # seeded: a rerun samples the same text
    B, stats = trial_counts(df, WORDS, "fa")
    n_items = sum(len(a.split("|")) for a, s in zip(df.associates, df.status, strict=True) if s == "ok")
    assert stats["unparsable"] == int((df.status == "unparsable").sum())
    assert stats["responses"] + stats["out_of_vocabulary"] + stats["cue_echo"] == n_items == B.sum() + stats[
        "out_of_vocabulary"] + stats["cue_echo"]  # fmt: skip
    B_open, _ = trial_counts(df, WORDS, "fa", open_responses=True)
    assert B_open.shape[0] == len(WORDS) and B_open.shape[1] >= len(WORDS) and B_open.sum() >= B.sum()


def test_model_without_chat_template_is_refused_unless_plain(tmp_path):
    model, tok = tiny_lm(WORDS, chat_template=False)
    with pytest.raises(ValueError, match="no chat template"):
        run_forced_choice(model, tok, WORDS, tmp_path / "s", max_trials=2)
    assert not (tmp_path / "s").exists()
    assert len(run_forced_choice(model, tok, WORDS, None, max_trials=2, chat=False)) == 2


def test_hidden_states_average_the_context_sentences(lm):
    model, tok = lm
    H = hidden_states(model, tok, WORDS[:3], "averaged")
    assert H.shape == (model.config.num_hidden_layers + 1, 3, model.config.hidden_size)
    # reference: each sentence alone, the word's last token, averaged by hand
    w = WORDS[1]
    states = []
    for template in STRATEGIES["averaged"]:
        ids = torch.as_tensor([tok.encode(template.format(w=w))])
        pos = len(tok.encode(template.split("{w}")[0] + w)) - 1
        with torch.no_grad():
            hs = model(ids, output_hidden_states=True).hidden_states
        states.append(torch.stack(hs)[:, 0, pos].numpy())
    np.testing.assert_allclose(H[:, 1], np.mean(states, axis=0), atol=1e-5)
    for s in STRATEGIES:
        assert hidden_states(model, tok, WORDS[:2], s).shape[1] == 2
    with pytest.raises(ValueError, match="strategy"):
        hidden_states(model, tok, WORDS, "mean-pool")


def test_labels_are_distinct_tokens(lm):
    _, tok = lm
    assert len(set(label_token_ids(tok, 16))) == 16 and LABELS[:2] == "AB"
