"""extract_features reads any model: Hugging Face LMs built from configs (no download), other nn.Modules with
any activation, and plain callables; token ids stay integers and padding is respected."""

import numpy as np
import pytest
import torch
from torch import nn

from icml26.brainconverge.alignment import extract_features

torch.set_num_threads(1)
transformers = pytest.importorskip("transformers")


def _tiny(kind: str):
    torch.manual_seed(0)
    if kind == "llama":
        cfg = transformers.LlamaConfig(
            vocab_size=50,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=32,
        )
        return transformers.LlamaForCausalLM(cfg).eval()
    cfg = transformers.GPT2Config(vocab_size=50, n_embd=16, n_layer=3, n_head=2, n_positions=32)
    return transformers.GPT2LMHeadModel(cfg).eval()


@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_language_models_give_one_matrix_per_hidden_state(kind):
    model = _tiny(kind)
    ids = torch.randint(0, 50, (7, 6))
    feats = extract_features(model, ids, batch=3)
    assert list(feats) == [f"hidden_{i}" for i in range(model.config.num_hidden_layers + 1)]
    assert all(F.shape == (7, 16) and F.dtype == np.float64 and np.isfinite(F).all() for F in feats.values())
    with torch.no_grad():  # the last-token pooling is the model's own last hidden state at the last position
        ref = model(input_ids=ids, output_hidden_states=True).hidden_states[-1][:, -1]
    np.testing.assert_allclose(feats[f"hidden_{model.config.num_hidden_layers}"], ref.double().numpy(), atol=1e-5)


def test_padding_is_respected_and_mean_pooling_averages_real_tokens():
    model = _tiny("gpt2")
    ids = torch.randint(0, 50, (2, 5))
    short = ids[:1, :3]
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    padded = extract_features(model, ids, attention_mask=mask)
    alone = extract_features(model, short)
    for name in alone:  # the padded row reads as the unpadded stimulus on its own (GPT-2 pads on the right)
        np.testing.assert_allclose(padded[name][0], alone[name][0], atol=1e-5)
    mean = extract_features(model, short, pooling="mean")
    with torch.no_grad():
        h = model(input_ids=short, output_hidden_states=True).hidden_states[1]
    np.testing.assert_allclose(mean["hidden_1"][0], h[0].mean(0).double().numpy(), atol=1e-5)


def test_other_modules_any_activation_and_callables():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 2)).double()
    x = np.random.default_rng(0).standard_normal((5, 4))  # float64 stimuli for a float64 model: kept
    feats = extract_features(net, x)
    assert list(feats) == ["1", "3", "4"] and feats["1"].shape == (5, 8)
    emb = nn.Sequential(nn.Embedding(10, 3), nn.Flatten(), nn.ReLU())
    assert extract_features(emb, np.array([[1, 2], [3, 4]]))["2"].shape == (2, 6)  # integer ids not cast
    out = extract_features(lambda b: {"a": b * 2.0, "b": b.sum(1)}, np.ones((3, 2)))
    assert out["a"].shape == (3, 2) and out["b"].shape == (3, 1)


@pytest.mark.parametrize(
    ("x", "kw", "message"),
    [
        (np.ones((2, 4)), {}, "token ids"),  # floats into a language model
        (np.full((2, 4), 99), {}, r"token ids must lie in \[0, 50\)"),
        (np.ones((2, 4), dtype=int), {"attention_mask": np.zeros((2, 4))}, "at least one real token"),
        (np.ones((2, 4), dtype=int), {"pooling": "max"}, "pooling"),
        (np.ones((0, 4), dtype=int), {}, "no stimuli"),
    ],
)
def test_bad_stimuli_are_refused_clearly(x, kw, message):
    with pytest.raises(ValueError, match=message):
        extract_features(_tiny("gpt2"), x, **kw)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["llama", "mlp"])
def test_features_on_cuda_match_the_cpu(kind):
    """Stimuli go where the weights are and the features come back as host arrays."""
    if kind == "llama":
        model, x = _tiny("llama"), torch.randint(0, 50, (5, 6))
    else:
        torch.manual_seed(0)
        model, x = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval(), torch.randn(5, 4)
    cpu = extract_features(model, x)
    gpu = extract_features(model.cuda(), x)
    assert list(cpu) == list(gpu)
    for name in cpu:
        np.testing.assert_allclose(gpu[name], cpu[name], atol=1e-4)
