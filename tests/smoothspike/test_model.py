"""The spiking encoder: LIF against a scalar reference, the norm's rotation invariance, fusion exactness, the
MiniLM loader against the weight file, input checks."""

import pytest
import torch

from icml26.smoothspike.model import (
    EncoderConfig,
    MultiStepLIF,
    SpikingEncoder,
    count_ops,
    fuse,
    load_minilm,
    minilm_folder,
    n_params,
    rms_norm,
    unfuse,
)


def reference_lif(x, tau=2.0, v_th=1.0):
    """One neuron at a time: V <- V + (x - V)/tau; spike when V >= V_th; hard reset to 0."""
    T = x.shape[0]
    flat = x.reshape(T, -1)
    out = torch.zeros_like(flat)
    for j in range(flat.shape[1]):
        v = 0.0
        for t in range(T):
            v = v + (float(flat[t, j]) - v) / tau
            if v >= v_th:
                out[t, j] = 1.0
                v = 0.0
    return out.reshape(x.shape)


def test_lif_matches_scalar_reference():
    x = 3 * torch.randn(4, 5, 7, dtype=torch.float64)
    for v_th in (1.0, 0.5):
        torch.testing.assert_close(MultiStepLIF(2.0, v_th)(x), reference_lif(x, v_th=v_th))


def test_lif_surrogate_gradient_flows():
    x = torch.randn(4, 10, requires_grad=True)
    MultiStepLIF()(x).sum().backward()
    assert x.grad.abs().sum() > 0


def test_rms_norm_commutes_with_rotations():
    x = torch.randn(6, 32, dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.randn(32, 32, dtype=torch.float64))
    torch.testing.assert_close(rms_norm(x @ q), rms_norm(x) @ q)
    torch.testing.assert_close(rms_norm(x).pow(2).mean(-1), torch.ones(6, dtype=torch.float64), atol=1e-5, rtol=0)


def _model(rotation, ns="quintic", seed=0, dim=32, layers=2):
    cfg = EncoderConfig(vocab_size=200, max_len=12, dim=dim, heads=4, layers=layers, rotation=rotation,
                        ns_method=ns, n_outputs=3, norm_gain=2.0)  # fmt: skip
    gen = torch.Generator().manual_seed(seed)
    m = SpikingEncoder(cfg, seed=seed).double().eval()
    with torch.no_grad():  # learnable rotations drift from their orthogonal start during training
        for name, p in m.named_parameters():
            if "h1" in name or "h2" in name or "h3" in name:
                p.add_(0.05 * torch.randn(p.shape, generator=gen, dtype=p.dtype) / p.shape[-1] ** 0.5)
    return m


IDS = torch.randint(0, 200, (6, 12), generator=torch.Generator().manual_seed(0))
MASK = (torch.arange(12)[None] < torch.tensor([[12], [9], [5], [12], [3], [7]])).double()


@pytest.mark.parametrize(
    ("rotation", "ns"), [("hadamard", "quintic"), ("learnable", "quintic"), ("learnable", "cubic")]
)
def test_fusion_is_exact_and_gives_the_baseline_architecture(rotation, ns):
    m = _model(rotation, ns)
    f = fuse(m)
    with torch.no_grad():
        y, yf = m(IDS, MASK), f(IDS, MASK)
    assert float((y - yf).abs().max()) < 1e-10
    assert float(y.std(0).min()) > 1e-3  # the logits depend on the input (not a degenerate all-silent model)
    base = SpikingEncoder(EncoderConfig(**{**m.cfg.__dict__, "rotation": "none"}))
    assert n_params(f) == n_params(base)
    assert f.cfg.rotation == "none" and all(b.h2 is None and b.h3 is None for b in f.blocks)
    ops = count_ops(f, IDS, MASK)
    assert ops["MACs"] == 0.0 and ops["SOPs"] > 0  # every projection inside the blocks reads spikes
    assert count_ops(m, IDS, MASK)["MACs"] > 0  # the unfused model multiplies real-valued rotated spikes


def test_fusing_the_raw_learnable_parameter_is_wrong():
    m = _model("learnable", "quintic")
    with torch.no_grad():
        assert float((m(IDS, MASK) - fuse(m, use_raw_parameter=True)(IDS, MASK)).abs().max()) > 1e-3


def test_rotation_changes_what_the_neurons_see():
    """Same un-rotated weights, rotated basis: the function differs (only the LIFs see the rotation)."""
    base = _model("none")
    rot = unfuse(base, rotation="hadamard", seed=1)
    with torch.no_grad():
        assert float((base(IDS, MASK) - rot(IDS, MASK)).abs().max()) > 1e-3
        # and fusing it back gives the base weights again (R orthogonal)
        f = fuse(rot)
        torch.testing.assert_close(f.blocks[0].v.weight, base.blocks[0].v.weight)
        torch.testing.assert_close(f.blocks[0].fc2.bias, base.blocks[0].fc2.bias)


def test_config_refuses_unsupported_rotation_sizes():
    with pytest.raises(ValueError, match="no Hadamard construction for size 100"):
        EncoderConfig(dim=100, heads=4, rotation="hadamard")
    EncoderConfig(dim=100, heads=4, rotation="none")  # fine without a rotation
    with pytest.raises(ValueError, match="rotation must be one of"):
        EncoderConfig(rotation="givens")


def test_input_checks():
    m = _model("none")
    with pytest.raises(ValueError, match="exceeds the model's maximum 12 positions"):
        m(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match="tokenizer and model do not match"):
        m(torch.full((1, 4), 500, dtype=torch.long))


def test_minilm_weights_land_in_the_encoder():
    from safetensors import safe_open

    m = load_minilm(1, n_outputs=2, max_len=16)
    assert (m.cfg.dim, m.cfg.heads, m.cfg.hidden, m.cfg.vocab_size) == (384, 12, 1536, 30522)
    with safe_open(str(minilm_folder() / "model.safetensors"), "pt") as fh:
        keys = {k.removeprefix("bert."): k for k in fh.keys()}
        q = fh.get_tensor(keys["encoder.layer.0.attention.self.query.weight"])
        w = fh.get_tensor(keys["embeddings.word_embeddings.weight"])
    torch.testing.assert_close(m.blocks[0].q.weight.detach(), q)
    torch.testing.assert_close(m.word.weight.detach(), w)
    r = load_minilm(1, n_outputs=2, max_len=16, rotation="hadamard")  # 384 = 12 x 32
    torch.testing.assert_close(fuse(r).blocks[0].fc1.weight, m.blocks[0].fc1.weight, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="MiniLM has 6 layers"):
        load_minilm(7)
