"""The EDM diffusion baseline: its training learns, its sampler scales residuals, bad input is refused."""

import numpy as np
import pytest
import torch

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.diffusion import EDMForecaster, edm_loss, train_edm

torch.set_num_threads(1)
CFG = ModelConfig(channels=(8, 16), n_res=1, dropout=0.0)
TRAIN = TrainConfig(steps=300, batch_size=8, lr=3e-3, warmup=10, ema_decay=0.95)
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
    model, losses = train_edm(EDMForecaster(CFG, C, 2 * C + 1), z, np.zeros((1, H, W)), torch.ones(C, 1, 1), TRAIN)
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


def test_edm_loss_weighting_makes_every_noise_level_count_alike():
    """For r ~ N(0, 1) (sigma_data = 1) a network that outputs 0 is the ideal denoiser under this
    preconditioning at every sigma, and lambda(sigma) scales its expected loss to exactly 1."""

    class Zero(EDMForecaster):
        def denoise(self, x, sigma, cond):
            s2 = sigma**2 + 1
            return x / s2  # c_skip x + c_out * 0

    torch.manual_seed(0)
    r, cond = torch.randn(4096, C, H, W), torch.zeros(4096, 2 * C + 1, H, W)
    loss = float(edm_loss(Zero(CFG, C, 2 * C + 1), r, cond))
    assert loss == pytest.approx(1.0, abs=0.03)


def _bad(z=None, static=None, res_std=None, cfg=None, model=None):
    z0, _ = _drifting()
    train_edm(
        model or EDMForecaster(CFG, C, 2 * C + 1),
        z0 if z is None else z,
        np.zeros((1, H, W)) if static is None else static,
        torch.ones(C, 1, 1) if res_std is None else res_std,
        cfg or TrainConfig(steps=2, batch_size=2),
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"z": np.zeros((4, 6, H, W))}, r"shape \(N, T, C, H, W\)"),
        ({"z": np.zeros((4, 2, C, H, W))}, ">= 3 frames"),
        ({"z": np.zeros((4, 6, 2, H, W))}, "2 channels"),
        ({"z": np.full((4, 6, C, H, W), np.nan)}, "NaN"),
        ({"static": np.zeros((2, H, W))}, "static fields"),
    ],
)
def test_train_edm_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _bad(**kwargs)


def test_sampler_and_rollout_refuse_bad_arguments():
    model = EDMForecaster(CFG, C, 2 * C + 1).eval()
    z = torch.zeros(2, C, H, W)
    with pytest.raises(ValueError, match="sigma_min < sigma_max"):
        model.sample(torch.zeros(2, 2 * C + 1, H, W), 2, sigma_min=1.0, sigma_max=0.5)
    with pytest.raises(ValueError, match="members and steps"):
        model.rollout(z, z, torch.zeros(1, H, W), 0, 1)
    with pytest.raises(ValueError, match="differ"):
        model.rollout(z, z[:1], torch.zeros(1, H, W), 1, 1)
