"""The EDM diffusion baseline: its training learns, its sampler scales residuals, bad input is refused."""

import numpy as np
import pytest
import torch

from icml26.ucast.config import ModelConfig
from icml26.ucast.diffusion import EDMForecaster, edm_loss, train_edm

torch.set_num_threads(1)
CFG = ModelConfig(channels=(8, 16), n_res=1, dropout=0.0)
C, H, W = 1, 8, 8


def _drifting(n_traj=4, frames=6, seed=0):
    """Trajectories whose next frame is the current one plus a fixed pattern: the residual is known exactly."""
    rng = np.random.default_rng(seed)
    pattern = np.sin(np.linspace(0, 2 * np.pi, W))[None, None, :] * np.ones((C, H, 1))  # (C, H, W)
    z0 = rng.standard_normal((n_traj, 1, C, H, W))
    return (z0 + np.arange(frames)[None, :, None, None, None] * pattern).astype(np.float32), pattern


def _sampled_residual_error(model, z, pattern, n_steps=8):
    static = torch.zeros(1, H, W)
    torch.manual_seed(0)
    fc = model.rollout(torch.as_tensor(z[:, 1]), torch.as_tensor(z[:, 2]), static, 4, 1, n_steps)  # (4, 1, N, C, H, W)
    residual = fc[:, 0] - torch.as_tensor(z[:, 2])
    return float((residual - torch.as_tensor(pattern, dtype=torch.float32)).abs().mean())


def test_trained_edm_samples_the_known_residual_and_an_untrained_one_does_not():
    z, pattern = _drifting()
    torch.manual_seed(0)
    untrained = EDMForecaster(CFG, C, 2 * C + 1).eval()
    torch.manual_seed(0)
    model, losses = train_edm(EDMForecaster(CFG, C, 2 * C + 1), z, np.zeros((1, H, W)), torch.ones(C, 1, 1),
                              steps=300, batch_size=8, lr=3e-3, seed=0)  # fmt: skip
    assert np.mean(losses[-30:]) < 0.5 * np.mean(losses[:30])
    trained_err, untrained_err = (
        _sampled_residual_error(model, z, pattern),
        _sampled_residual_error(untrained, z, pattern),
    )
    assert trained_err < 0.5 * untrained_err, (trained_err, untrained_err)
    assert not model.training  # returned in eval mode (EMA weights)


def test_rollout_adds_res_std_times_the_sampled_residual():
    z, _ = _drifting()
    model = EDMForecaster(CFG, C, 2 * C + 1).eval()
    zp, zc, static = torch.as_tensor(z[:, 0]), torch.as_tensor(z[:, 1]), torch.zeros(1, H, W)
    still = model.rollout(zp, zc, static, 2, 3, n_steps=2, res_std=0.0)
    assert still.shape == (2, 3, z.shape[0], C, H, W)
    assert torch.equal(still[:, -1], zc.expand_as(still[:, -1]))


def test_edm_loss_is_smallest_for_the_exact_denoiser_of_a_point_mass():
    """For targets r = 0 the ideal denoiser is D = 0: a model whose output is forced to 0 scores ~0."""

    class Zero(EDMForecaster):
        def denoise(self, x, sigma, cond):
            return torch.zeros_like(x)

    r, cond = torch.zeros(16, C, H, W), torch.zeros(16, 2 * C + 1, H, W)
    torch.manual_seed(0)
    with torch.no_grad():
        random_net = edm_loss(EDMForecaster(CFG, C, 2 * C + 1), r, cond)
    torch.manual_seed(0)
    assert float(edm_loss(Zero(CFG, C, 2 * C + 1), r, cond)) == 0.0 < float(random_net)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": 0}, "steps and batch_size"),
        ({"batch_size": 0}, "steps and batch_size"),
        ({"frames": 2}, ">= 3 frames"),
    ],
)
def test_train_edm_refuses_bad_input(kwargs, match):
    z, _ = _drifting(frames=kwargs.pop("frames", 6))
    args = {"steps": 5, "batch_size": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        train_edm(EDMForecaster(CFG, C, 2 * C + 1), z, np.zeros((1, H, W)), torch.ones(C, 1, 1), **args)
