"""WMSE loss closed forms and the response models."""

import numpy as np
import pytest
import torch

from icml26.degmetrics.config import LossConfig
from icml26.degmetrics.train import fit_response_model, wmse_loss


def test_wmse_loss_closed_forms():
    g = torch.Generator().manual_seed(0)
    pred, target = torch.randn(4, 10, generator=g), torch.randn(4, 10, generator=g)
    w = torch.rand(4, 10, generator=g)
    assert float(wmse_loss(pred, target)) == pytest.approx(float(((pred - target) ** 2).mean()))
    assert float(wmse_loss(pred, target, torch.full((4, 10), 0.1))) == pytest.approx(
        float(((pred - target) ** 2).mean())
    )
    ref = (w * (pred - target) ** 2).sum(1).mean()
    assert float(wmse_loss(pred, target, w)) == pytest.approx(float(ref))
    with pytest.raises(ValueError, match="shape"):
        wmse_loss(pred, target[:, :5])
    with pytest.raises(ValueError, match="weights"):
        wmse_loss(pred, target, w[:, :3])


@pytest.mark.parametrize("arch", ["linear", "mlp"])
def test_models_learn_a_linear_map(arch):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 4))
    A = rng.normal(size=(4, 12))
    y = 2.0 + z @ A
    cfg = LossConfig(epochs=600, lr=1e-2, weight_decay=0.0, val_fraction=0.2)
    model = fit_response_model(arch, z, y, None, cfg, seed=0)
    z_new = rng.normal(size=(20, 4))
    with torch.no_grad():
        pred = model(torch.as_tensor(z_new, dtype=torch.float32)).numpy()
    truth = 2.0 + z_new @ A
    r2 = 1 - ((pred - truth) ** 2).sum() / ((truth - truth.mean(0)) ** 2).sum()
    assert r2 > 0.9


def test_unknown_architecture():
    with pytest.raises(ValueError, match="arch"):
        fit_response_model("gears", np.zeros((4, 2)), np.zeros((4, 3)), None, LossConfig())
