"""One training step of the paper-size model on a GPU (the ``paper`` preset: 137 neurons, MLPs 4 x 256,
h = 10, p = 1/50, batch 256)."""

import math

import pytest
import torch

from icml26.dualflow.config import preset
from icml26.dualflow.model import DCFModel, dual_flow_losses


@pytest.mark.gpu
def test_one_paper_size_fit_step_on_cuda():
    cfg = preset("paper")
    n_neurons = 137  # the paper's monkey-reach population
    torch.manual_seed(0)
    model = DCFModel(n_neurons, n_neurons, history=cfg.history, hidden=cfg.hidden, depth=cfg.depth).cuda()
    optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    window = torch.randn(cfg.batch_size, cfg.history + 2, n_neurons, device="cuda")
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    losses = dual_flow_losses(model, window, p=1.0 / cfg.latent_budget)
    optimiser.zero_grad()
    losses["total"].backward()
    optimiser.step()
    assert all(math.isfinite(v.item()) for v in losses.values())
    assert not torch.equal(before["encoder.log_d"], model.state_dict()["encoder.log_d"])
    assert model.encoder.d.device.type == "cuda"


@pytest.mark.gpu
def test_the_estimator_fits_on_cuda_and_its_checkpoint_loads_on_the_cpu(tmp_path):
    import numpy as np

    from icml26.dualflow.estimator import DualFlow

    X = np.random.default_rng(0).normal(size=(4, 30, 6))
    est = DualFlow(latent_budget=3, hidden=16, depth=1, n_steps=5, batch_size=16, random_state=0, device="cuda")
    Z = est.fit(X).transform(X, representation="encoder")
    assert next(est.model_.parameters()).device.type == "cuda" and Z.shape == (4, 30, 6)
    est.save(tmp_path / "m.pt")
    cpu = DualFlow.load(tmp_path / "m.pt", device="cpu")
    assert np.allclose(cpu.transform(X, representation="encoder"), Z, atol=1e-4)
