"""The fast runner against the naive reference, on tiny random-initialised models built from a config (no
download): the packed, prefix-cached scorer gives every candidate the summed log-probability a full forward
pass of the whole prompt and answer gives it, for multi-token candidates too; stores resume; sampling is
seeded; FLOPs are counted from the config."""

import numpy as np
import pytest
import torch

from icml26.behaviorgeo.data import CONCRETE_NOUNS
from icml26.behaviorgeo.lm import FA_PROMPT, FC_PROMPT, STRATEGIES, TINY_CHAT_TEMPLATE, tiny_lm
from icml26.behaviorgeo.runner import (
    FA_FAST_PROMPT,
    FC_FAST_LABEL_PROMPT,
    FC_FAST_PROMPT,
    forward_flops,
    naive_fc_scores,
    run_fa_fast,
    run_fc_fast,
)
from icml26.behaviorgeo.subject import fc_trials

torch.set_num_threads(1)
WORDS = CONCRETE_NOUNS[:24]


def split_lm(words, seed=0):
    """A tiny random Llama whose WordPiece tokenizer knows words of <= 4 letters whole and spells longer ones
    letter by letter, so candidates have 1 to 8 tokens."""
    import re

    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    text = " ".join([FC_FAST_PROMPT, FC_FAST_LABEL_PROMPT, FA_FAST_PROMPT, FC_PROMPT, FA_PROMPT, "user assistant"])
    pieces = [w for w in re.findall(r"\w+|[^\w\s]", text + " " + " ".join(words)) if len(w) <= 4]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    vocab = list(dict.fromkeys(specials + pieces + list(letters) + ["##" + c for c in letters]))
    backend = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", unk_token="<unk>",
                                  eos_token="<|im_end|>")  # fmt: skip
    tok.chat_template = TINY_CHAT_TEMPLATE
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, pad_token_id=0,
                      eos_token_id=5)  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LlamaForCausalLM(cfg).eval(), tok


@pytest.fixture(scope="module")
def lm():
    return split_lm(WORDS)


def test_the_tokenizer_splits_long_words(lm):
    _, tok = lm
    lengths = {w: len(tok(w, add_special_tokens=False)["input_ids"]) for w in WORDS}
    assert lengths["dog"] == 1 and lengths["banana"] == 6 and max(lengths.values()) >= 7


@pytest.mark.parametrize(("scoring", "calibrate"), [("sum", False), ("word", False), ("label", False), ("sum", True),
                                                     ("label", True)])  # fmt: skip
def test_fast_scores_equal_a_full_forward_per_candidate(lm, scoring, calibrate):
    model, tok = lm
    df = run_fc_fast(model, tok, WORDS, None, batch=3, max_trials=5, scoring=scoring, calibrate=calibrate)
    cues, cands = fc_trials(len(WORDS), 16, 1, 0)
    for t in range(5):
        ref = naive_fc_scores(model, tok, WORDS[cues[t]], [WORDS[c] for c in cands[t]], scoring, calibrate=calibrate)
        top = np.argsort(-ref, kind="stable")[:2]
        assert (df.pick1[t], df.pick2[t]) == (WORDS[cands[t][top[0]]], WORDS[cands[t][top[1]]])
        np.testing.assert_allclose([df.logp1[t], df.logp2[t]], ref[top], atol=2e-5)


def test_sum_scoring_differs_from_first_token_scoring_on_multi_token_words(lm):
    model, tok = lm
    cues, cands = fc_trials(len(WORDS), 16, 1, 0)
    words = [WORDS[c] for c in cands[0]]
    total, first = naive_fc_scores(model, tok, WORDS[cues[0]], words, "sum"), naive_fc_scores(
        model, tok, WORDS[cues[0]], words, "word")  # fmt: skip
    multi = np.array([len(tok(w, add_special_tokens=False)["input_ids"]) > 1 for w in words])
    assert np.all(total <= first + 1e-6) and np.all(total[multi] < first[multi])
    np.testing.assert_allclose(total[~multi], first[~multi], atol=1e-6)


def test_fast_store_resumes_to_the_uninterrupted_run(lm, tmp_path):
    model, tok = lm
    full = run_fc_fast(model, tok, WORDS, None, batch=8, trials_per_cue=1)
    assert len(full) == len(WORDS) and set(full.cue) == set(WORDS)  # one trial of every cue
    part = run_fc_fast(model, tok, WORDS, tmp_path / "fc", batch=8, trials_per_cue=1, max_trials=10)
    assert len(part) == 10
    done = run_fc_fast(model, tok, WORDS, tmp_path / "fc", batch=8, trials_per_cue=1)
    assert done.sort_values("trial").reset_index(drop=True)[["pick1", "pick2"]].equals(full[["pick1", "pick2"]])
    with pytest.raises(ValueError, match="different configuration"):
        run_fc_fast(model, tok, WORDS, tmp_path / "fc", batch=8, trials_per_cue=2)
    with pytest.raises(ValueError, match="scoring"):
        run_fc_fast(model, tok, WORDS, None, scoring="first")
    with pytest.raises(ValueError, match="content-free cue"):
        run_fc_fast(model, tok, [*WORDS, "thing"], None, calibrate=True)


def test_fast_free_association_is_seeded_and_resumes(lm, tmp_path):
    model, tok = lm
    a = run_fa_fast(model, tok, WORDS, None, runs=2, batch=8, max_new_tokens=5)
    b = run_fa_fast(model, tok, WORDS, tmp_path / "fa", runs=2, batch=8, max_new_tokens=5, max_trials=16)
    b = run_fa_fast(model, tok, WORDS, tmp_path / "fa", runs=2, batch=8, max_new_tokens=5)
    assert len(a) == 2 * len(WORDS) and list(a.text) == list(b.sort_values("run").text)
    c = run_fa_fast(model, tok, WORDS, None, runs=2, batch=8, max_new_tokens=5, seed=1)
    assert list(c.text) != list(a.text)
    with pytest.raises(ValueError, match="temperature"):
        run_fa_fast(model, tok, WORDS, None, temperature=float("nan"))
    with pytest.raises(ValueError, match="top_p"):
        run_fa_fast(model, tok, WORDS, None, top_p=0.0)


def test_a_vanishing_nucleus_samples_greedily(lm):
    """top_p -> 0 keeps only the most probable token: two sampling seeds give the same text, which is the
    temperature -> 0 (greedy) text."""
    model, tok = lm
    kw = {"runs": 1, "batch": 4, "max_new_tokens": 4, "max_trials": 4}
    a = run_fa_fast(model, tok, WORDS, None, top_p=1e-6, seed=0, **kw)
    b = run_fa_fast(model, tok, WORDS, None, top_p=1e-6, seed=5, **kw)
    greedy = run_fa_fast(model, tok, WORDS, None, temperature=1e-4, **kw)
    assert list(a.text) == list(b.text) == list(greedy.text)


def test_sampling_after_the_cache_follows_the_full_forward_distribution(lm):
    """With temperature -> 0 the sampler is greedy: its tokens must be the argmax of full forward passes."""
    model, tok = lm
    df = run_fa_fast(model, tok, WORDS[:4] + WORDS[4:20], None, runs=1, batch=4, max_new_tokens=4,
                     temperature=1e-4, max_trials=4)  # fmt: skip
    from icml26.behaviorgeo.lm import _chat

    for r in range(4):
        ids = tok(_chat(tok, FA_FAST_PROMPT.format(cue=WORDS[r]), True))["input_ids"]
        out = []
        for _ in range(4):
            with torch.no_grad():
                nxt = int(model(input_ids=torch.as_tensor([ids])).logits[0, -1].argmax())
            if nxt == tok.eos_token_id:
                break
            out.append(nxt)
            ids = [*ids, nxt]
        assert df.text[r] == tok.decode(out, skip_special_tokens=True)


def test_flops_follow_the_config():
    from transformers import LlamaConfig

    cfg = LlamaConfig(vocab_size=100, hidden_size=8, intermediate_size=16, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1)  # fmt: skip
    # per token and layer: q, o 8x8; k, v 8x4; MLP 3 x 8x16 -> 64 + 64 + 32 + 32 + 384 = 576 MACs
    assert forward_flops(cfg, 1, 0, 0) == 2 * 2 * 576
    assert forward_flops(cfg, 1, 10, 1) == 2 * (2 * 576 + 2 * 2 * 8 * 10 + 8 * 100)
    _ = STRATEGIES  # the strategies' prompts are in the tokenizer's vocabulary too
    assert tiny_lm(WORDS)[0].config.num_hidden_layers == 2


def test_bfloat16_choices_agree_with_float32_on_most_trials():
    """The bfloat16 runner answers like float32 where the model is decisive: a tiny model with larger weights
    (so candidates' scores differ by more than bfloat16's rounding), 48 calibrated trials."""
    import copy

    model, tok = split_lm(WORDS, seed=3)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(6.0)
    half = copy.deepcopy(model).to(torch.bfloat16)
    kw = {"batch": 8, "max_trials": 48, "calibrate": True}
    a, b = run_fc_fast(model, tok, WORDS, None, **kw), run_fc_fast(half, tok, WORDS, None, **kw)
    same_top = np.mean(a.pick1.to_numpy() == b.pick1.to_numpy())
    same_pair = np.mean([{p, q} == {r, s} for p, q, r, s in zip(a.pick1, a.pick2, b.pick1, b.pick2, strict=True)])
    assert same_top >= 0.75 and same_pair >= 0.6, (same_top, same_pair)
    spread = np.std(a.logp1.to_numpy())
    assert np.median(np.abs(a.logp1.to_numpy() - b.logp1.to_numpy())) < 0.25 * spread
    # and the two never share a store: the dtype is part of its configuration
    assert run_fc_fast(half, tok, WORDS, None, max_trials=2, batch=2).shape[0] == 2


def test_a_bfloat16_store_does_not_resume_a_float32_one(lm, tmp_path):
    import copy

    model, tok = lm
    run_fc_fast(model, tok, WORDS, tmp_path / "fc", batch=4, max_trials=4)
    with pytest.raises(ValueError, match="dtype"):
        run_fc_fast(copy.deepcopy(model).to(torch.bfloat16), tok, WORDS, tmp_path / "fc", batch=4, max_trials=8)


def test_dtype_names_resolve():
    from icml26.behaviorgeo.lm import resolve_dtype

    assert resolve_dtype("float32") is torch.float32 and resolve_dtype("bfloat16") is torch.bfloat16
    assert resolve_dtype("auto", "cpu") in (torch.float32, torch.bfloat16)
    with pytest.raises(ValueError, match="dtype"):
        resolve_dtype("float16")


def test_compile_elementwise_refuses_a_model_without_norms_or_mlps():
    from icml26.behaviorgeo.runner import compile_elementwise

    with pytest.raises(ValueError, match="no RMSNorm / MLP"):
        compile_elementwise(torch.nn.Sequential(torch.nn.Linear(2, 2)))


@pytest.mark.slow  # inductor compiles C++ kernels: ~30 s cold on one core
def test_compiled_elementwise_kernels_score_like_the_eager_model():
    """compile_elementwise fuses every RMSNorm and MLP (float32: the same scores to rounding, the same picks)."""
    from icml26.behaviorgeo.runner import compile_elementwise

    eager, tok = split_lm(WORDS, seed=3)
    fused = compile_elementwise(split_lm(WORDS, seed=3)[0])
    names = [type(m).__name__ for m in fused.modules()]
    assert names.count("OptimizedModule") == 2 * 2 + 1 + 2  # 2 norms a layer, the final norm, 2 MLPs
    a = run_fc_fast(eager, tok, WORDS, None, batch=4, max_trials=6, calibrate=True)
    b = run_fc_fast(fused, tok, WORDS, None, batch=3, max_trials=6, calibrate=True)  # another width: no recompile
    assert list(a.pick1) == list(b.pick1) and list(a.pick2) == list(b.pick2)
    np.testing.assert_allclose(b[["logp1", "logp2"]].to_numpy(), a[["logp1", "logp2"]].to_numpy(), atol=1e-4)
