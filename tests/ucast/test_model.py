"""U-Net and forecaster: shapes, longitude periodicity, MC dropout, persistence start, round trips."""

import numpy as np
import pytest
import torch

from icml26.ucast.config import ModelConfig
from icml26.ucast.model import UCast, UNet, set_mc_dropout

CFG = ModelConfig(channels=(8, 16), n_res=1, dropout=0.2)


def _randomise_head(net: UNet) -> None:
    torch.nn.init.normal_(net.head[-1].weight, std=0.1)


def make_model(h=8, w=16, c=2, n_forcings=0, cfg=CFG) -> UCast:
    rng = np.random.default_rng(0)
    ones = np.ones(c, np.float32)
    return UCast(
        cfg,
        c,
        0 * ones,
        ones,
        ones,
        rng.normal(size=(1, h, w)),
        np.linspace(-80, 80, h),
        np.arange(w) * 360 / w,
        n_forcings,
    )


@pytest.mark.parametrize("shape", [(8, 16), (13, 20), (7, 9)])
def test_unet_shapes_on_any_grid(shape):
    net = UNet(3, 2, ModelConfig(channels=(4, 8, 8), attn_levels=(2,), heads=2))
    assert net(torch.randn(2, 3, *shape)).shape == (2, 2, *shape)


def test_longitude_is_periodic_and_latitude_is_not():
    torch.manual_seed(1)
    net = UNet(2, 2, CFG).eval()
    _randomise_head(net)
    x = torch.randn(1, 2, 8, 16)
    y = net(x)
    shift = 2 ** (len(CFG.channels) - 1)  # strided convs are equivariant to shifts by multiples of this
    torch.testing.assert_close(net(torch.roll(x, shift, dims=-1)), torch.roll(y, shift, dims=-1))
    assert not torch.allclose(net(torch.roll(x, shift, dims=-2)), torch.roll(y, shift, dims=-2), atol=1e-4)


def test_mc_dropout_keeps_only_dropout_stochastic():
    model = make_model()
    _randomise_head(model.net)
    set_mc_dropout(model, True)
    modes = {type(m).__name__: m.training for m in model.modules()}
    assert modes["Dropout"] and not modes["GroupNorm"] and not modes["UCast"]
    x = torch.randn(1, 2, 8, 16)
    with torch.no_grad():
        a, b = model(x, x), model(x, x)
        assert not torch.allclose(a, b)
        set_mc_dropout(model, False)
        torch.testing.assert_close(model(x, x), model(x, x))


def test_untrained_forecaster_is_persistence_and_uses_residual_std():
    model = make_model()
    x0, x1 = torch.randn(2, 2, 8, 16), torch.randn(2, 2, 8, 16)
    torch.testing.assert_close(model(x0, x1), x1)
    _randomise_head(model.net)
    set_mc_dropout(model, False)
    r = model.residual(model.normalise(x0), model.normalise(x1))
    model.res_std.mul_(3.0)
    expected = x1 + model.std * 3.0 * r
    torch.testing.assert_close(model(x0, x1), expected)


def test_forcings_are_checked_and_used():
    model = make_model(n_forcings=4)
    _randomise_head(model.net)
    set_mc_dropout(model, False)
    x = torch.randn(1, 2, 8, 16)
    with pytest.raises(ValueError, match="forcing"):
        model(x, x)
    assert not torch.allclose(model(x, x, torch.zeros(1, 4)), model(x, x, torch.ones(1, 4)))


def test_config_round_trip():
    model = make_model()
    _randomise_head(model.net)
    clone = UCast.from_config_dict(model.config_dict())
    clone.load_state_dict(model.state_dict())
    set_mc_dropout(model, False)
    set_mc_dropout(clone, False)
    x = torch.randn(1, 2, 8, 16)
    torch.testing.assert_close(model(x, x), clone(x, x))


def test_bad_model_config():
    with pytest.raises(ValueError):
        ModelConfig(dropout=1.0)
    with pytest.raises(ValueError):
        ModelConfig(channels=(8, 16), attn_levels=(2,))
