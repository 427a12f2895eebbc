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


def test_uniform_train_weights_make_wmse_plain_mse():
    """The negative control of the WMSE-loss claim: with every gene weighted 1/G the "WMSE" run is the MSE run
    (the loss is only rescaled, which Adam ignores), so the two score alike."""
    from icml26.degmetrics.config import SimConfig
    from icml26.degmetrics.train import compare_losses

    sim = SimConfig(n_genes=120, n_control=60, cells_per_perturbation=20, p_effect=0.05)
    cfg = LossConfig(n_train=16, n_test=8, epochs=60, sim=sim)
    res = compare_losses(cfg, seed=0, archs=("linear",), train_weights="uniform")
    assert res["linear/wmse"]["r2w_delta"] == pytest.approx(res["linear/mse"]["r2w_delta"], abs=1e-3)
    assert res["linear/wmse"]["diversity"] == pytest.approx(res["linear/mse"]["diversity"], rel=1e-2)
    deg = compare_losses(cfg, seed=0, archs=("linear",))  # the DEG weights do change the fit
    assert abs(deg["linear/wmse"]["diversity"] - deg["linear/mse"]["diversity"]) > 0.1
    with pytest.raises(ValueError, match="train_weights"):
        compare_losses(cfg, seed=0, archs=("linear",), train_weights="ones")
