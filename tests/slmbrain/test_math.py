"""The math against ground truth and small references: downsampling, delays, ridge, ceiling, compression."""

import logging

import numpy as np
import pytest
import torch

from icml26.slmbrain.compress import (
    compress_model,
    gptq_quantize,
    layer_output_error,
    magnitude_prune,
    match_damage,
    rtn_quantize,
    wanda_prune,
)
from icml26.slmbrain.data import Grammar, generate_corpus
from icml26.slmbrain.encoding import (
    convolve_hrf,
    encode,
    fdr_bh,
    lanczos_downsample,
    make_delays,
    noise_ceiling,
    pearson_r,
)
from icml26.slmbrain.lm import TinyGPT, _windows, lm_loss, word_states

torch.set_num_threads(1)


def test_lanczos_preserves_slow_signal_and_removes_fast():
    t = np.arange(0, 200, 0.3)  # word onsets
    tr = np.arange(1, 199, 2.0)
    slow, fast = np.sin(2 * np.pi * t / 40), np.sin(2 * np.pi * t / 0.9)  # 0.025 Hz vs above Nyquist (0.25 Hz)
    ds = lanczos_downsample(np.stack([slow, fast], 1), t, tr)
    assert pearson_r(ds[5:-5, :1], np.sin(2 * np.pi * tr[5:-5] / 40)[:, None])[0] > 0.99
    assert np.std(ds[5:-5, 1]) < 0.1 * np.std(ds[5:-5, 0])


def test_delays_do_not_cross_story_start():
    x = np.arange(1, 7, dtype=float)[:, None]
    d = make_delays(x, (1, 2))
    assert d.shape == (6, 2) and d[0].tolist() == [0, 0] and d[2].tolist() == [2, 1]


def test_noise_ceiling_matches_truth():
    rng = np.random.default_rng(1)
    s = rng.standard_normal((20000, 3))
    rep = np.stack([s + rng.standard_normal(s.shape) for _ in range(2)])  # SNR 1: rho = 0.5
    nc = noise_ceiling(rep)
    true = pearson_r(s, rep.mean(0))  # the best any prediction (the signal itself) can reach
    assert np.allclose(nc, true, atol=0.02)


def test_encode_truth_scores_near_one_and_alpha_matches_reference():
    rng = np.random.default_rng(2)
    W = rng.standard_normal((5, 30))
    X = [rng.standard_normal((80, 5)) for _ in range(5)]
    Y = [convolve_hrf(x @ W) + 0.5 * rng.standard_normal((80, 30)) for x in X]
    Xt = rng.standard_normal((80, 5))
    sig = convolve_hrf(Xt @ W)
    Yt = np.stack([sig + 0.5 * rng.standard_normal(sig.shape) for _ in range(2)])
    res = encode(X, Y, Xt, Yt)
    assert np.nanmean(res.r_norm) > 0.9
    shuffled = encode(X, [y[rng.permutation(80)] for y in Y], Xt, Yt)
    assert np.nanmean(shuffled.r_norm) < 0.3


def test_alpha_edge_is_logged(caplog):
    rng = np.random.default_rng(3)
    X = [rng.standard_normal((40, 3)) for _ in range(3)]
    Y = [rng.standard_normal((40, 10)) for _ in range(3)]  # pure noise: alpha runs to the upper edge
    with caplog.at_level(logging.WARNING, logger="icml26.slmbrain.encoding"):
        res = encode(X, Y, X[0], np.stack([Y[0], Y[0]]), alphas=np.logspace(-2, 0, 3))
    assert res.edge_fraction > 0.5 and "edge of the grid" in caplog.text


def test_fdr_matches_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(4).uniform(size=200) ** 3
    assert (fdr_bh(p, 0.05) == multitest.multipletests(p, 0.05, "fdr_bh")[0]).all()


def test_rtn_levels_and_gptq_beats_rtn():
    g = torch.Generator().manual_seed(5)
    W = torch.randn(32, 64, generator=g)
    for bits in (2, 4, 8):
        q = rtn_quantize(W, bits)
        assert max(len(torch.unique(row)) for row in q) <= 2**bits
    X = torch.randn(1000, 64, generator=g) @ torch.randn(64, 64, generator=g)  # correlated inputs
    for bits in (3, 4):
        e_rtn = layer_output_error(W, rtn_quantize(W, bits), X)
        e_gptq = layer_output_error(W, gptq_quantize(W, 2 * X.T.double() @ X.double(), bits), X)
        assert e_gptq < e_rtn


def test_pruning_sparsity_and_wanda_score():
    g = torch.Generator().manual_seed(6)
    W = torch.randn(8, 20, generator=g)
    assert float((magnitude_prune(W, 0.5) == 0).float().mean()) == pytest.approx(0.5)
    norm = torch.ones(20)
    norm[0] = 1e6  # an input with huge activations: Wanda keeps its weights
    assert (wanda_prune(W, norm, 0.9)[:, 0] != 0).all()
    with pytest.raises(ValueError, match="sparsity"):
        magnitude_prune(W, 1.0)


def test_windows_cover_every_position_once():
    for n, ctx in ((5, 8), (40, 8), (41, 16)):
        cover = np.zeros(n, int)
        for s, e, k in _windows(n, ctx):
            assert e - s == min(ctx, n)
            cover[s + k : e] += 1
        assert (cover == 1).all()


def test_word_states_are_causal_and_compression_changes_model():
    g = Grammar(n_topics=2)
    c = generate_corpus(g, 300, np.random.default_rng(7))
    m = TinyGPT(g.vocab_size, 8, 1, 2, 16, seed=0)
    h = word_states(m, c.ids)
    ids2 = c.ids.copy()
    ids2[-1] = (ids2[-1] + 1) % g.vocab_size
    h2 = word_states(m, ids2)
    assert h.shape == (2, 300, 8) and np.allclose(h[:, :-1], h2[:, :-1])  # a future word changes no past state
    before = lm_loss(m, c.ids)
    errs = compress_model(m, "rtn", bits=2)
    assert len(errs) == 4 and lm_loss(m, c.ids) != before


def test_grammar_agreement_labels():
    g = Grammar()
    c = generate_corpus(g, 2000, np.random.default_rng(8))
    verbs = np.flatnonzero(c.pos == 3)
    # a verb agrees with the number pending at the word before it
    for i in verbs[:200]:
        word = g.words[c.ids[i]]
        assert (c.number[i - 1] == 0) == word.endswith("s")


def test_tiny_gpt_init_depends_only_on_its_seed():
    torch.manual_seed(1)
    a = TinyGPT(20, 8, 1, 2, 8, seed=4)
    torch.manual_seed(2)  # the global RNG must not matter (biases included)
    b = TinyGPT(20, 8, 1, 2, 8, seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def test_fractional_bits_and_compressing_everything():
    W = torch.randn(16, 40, generator=torch.Generator().manual_seed(9))
    assert max(len(torch.unique(row)) for row in rtn_quantize(W, np.log2(3))) <= 3  # 3 levels: ternary
    m = TinyGPT(30, 8, 1, 2, 8, seed=1)
    emb = m.tok.weight.detach().clone()
    compress_model(m, "rtn", bits=2)
    assert torch.equal(m.tok.weight, emb)  # embeddings kept by default
    errs = compress_model(m, "rtn", bits=2, everything=True)
    assert {"tok", "pos", "head"} <= set(errs) and not torch.equal(m.tok.weight, emb)
    with pytest.raises(ValueError, match="calibration-free"):
        compress_model(m, "gptq", bits=4, everything=True, calib=torch.zeros(2, 8, dtype=torch.long))


def test_match_damage_finds_the_strength_of_a_target_loss():
    # a toy "model" whose loss rises as strength^2: the strength for +10 % is sqrt(0.1) of the range
    s, rel, m = match_damage(lambda s: s, lambda s: 1.0 + s**2, 0.10, 0.0, 1.0, steps=12)
    assert s == pytest.approx(np.sqrt(0.1), rel=0.01) and rel == pytest.approx(0.10, rel=0.02) and m == s
    s, rel, _ = match_damage(lambda s: s, lambda s: 1.0 + 0.01 * s, 0.10, 0.0, 1.0)
    assert s == 1.0 and rel == pytest.approx(0.01)  # out of reach: the strongest tried, with what it achieved


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> float:
    return max(float((pa - pb).detach().abs().max()) for pa, pb in zip(a.parameters(), b.parameters(), strict=True))


@pytest.mark.parametrize("method", ["gptq", "wanda"])
def test_blockwise_calibration_gives_the_per_layer_weights(method):
    """Block by block on cached activations = one full forward per layer (the reference), on a TinyGPT and on a
    config-built Llama (whose q/k/v and gate/up share their input and are compressed in one pass)."""
    import copy

    torch.manual_seed(0)
    models = [(TinyGPT(50, 32, n_layers=3, n_heads=2, ctx=16, seed=1), torch.randint(0, 50, (6, 16)))]
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError:
        pass
    else:
        cfg = LlamaConfig(vocab_size=60, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)  # fmt: skip
        models.append((LlamaForCausalLM(cfg).eval(), torch.randint(0, 60, (4, 24))))
    for model, calib in models:
        fast, slow = copy.deepcopy(model), copy.deepcopy(model)
        e_fast = compress_model(fast, method, bits=3, sparsity=0.5, calib=calib)
        e_slow = compress_model(slow, method, bits=3, sparsity=0.5, calib=calib, blockwise=False)
        assert e_fast.keys() == e_slow.keys()
        assert _same_weights(fast, slow) <= 1e-6
        assert _same_weights(fast, model) > 1e-3  # the weights did change
        assert max(abs(e_fast[k] - e_slow[k]) for k in e_fast) <= 1e-6


def test_blockwise_runs_each_block_once_per_input_group():
    """Llama's block: q/k/v, o, gate/up and down are four input groups, plus one pass for the block's output."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=1)  # fmt: skip
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).eval()
    calls = []
    for i, block in enumerate(model.model.layers):
        block.register_forward_hook(lambda _m, _i, _o, i=i: calls.append(i))
    compress_model(model, "gptq", bits=4, calib=torch.randint(0, 40, (2, 12)))
    assert calls == [0] * 5 + [1] * 5
