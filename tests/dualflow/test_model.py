"""The DCF model: nested-dropout sampling, the encoder coupling and the three losses vs a slow reference."""

import math

import numpy as np
import pytest
import torch

from icml26.dualflow.model import DCFModel, EncoderCoupling, dual_flow_losses, sample_prefix_length


@pytest.mark.parametrize(("p", "m"), [(0.1, 8), (0.5, 4), (1 / 3, 20)])
def test_prefix_length_is_truncated_geometric(p, m):
    K = sample_prefix_length(200_000, p, m).numpy()
    assert K.min() >= 1 and K.max() <= m
    pmf = np.array([p * (1 - p) ** (k - 1) for k in range(1, m + 1)])
    pmf /= pmf.sum()  # truncation to [1, m]
    freq = np.bincount(K, minlength=m + 1)[1:] / K.size
    assert np.allclose(freq, pmf, atol=4e-3)
    assert abs(K.mean() - (pmf * np.arange(1, m + 1)).sum()) < 0.05


def test_prefix_length_edge_cases():
    assert torch.equal(sample_prefix_length(5, 1.0, 7), torch.ones(5, dtype=torch.long))
    with pytest.raises(ValueError, match="p must lie"):
        sample_prefix_length(5, 0.0, 7)


def test_coupling_is_orthonormal_positive_and_invertible():
    enc = EncoderCoupling(12, 5, hidden=16, depth=1, norm_cap=3.0, momentum=0.9).double()
    L = enc.L
    assert torch.allclose(L.T @ L, torch.eye(5, dtype=torch.float64), atol=1e-12)
    _, R = torch.linalg.qr(enc.A)
    assert torch.allclose(L, enc.A @ torch.linalg.inv(R) * torch.sign(torch.diagonal(R)), atol=1e-10)
    assert (enc.d > 0).all()
    mu = torch.randn(7, 5, dtype=torch.float64)
    assert torch.allclose(enc.uncouple(enc.couple(mu)), mu, atol=1e-10)


def test_ema_normalisation_and_norm_cap():
    enc = EncoderCoupling(6, 4, hidden=16, depth=1, norm_cap=2.0, momentum=0.5).double()
    x = torch.randn(512, 6, dtype=torch.float64) * 5
    enc.train()
    for _ in range(30):  # EMA converges to the batch statistics of a fixed batch
        feats = enc.features(x)
    raw = enc.mu(x)
    capped = raw * torch.clamp(2.0 / raw.norm(dim=-1, keepdim=True), max=1.0)
    assert capped.norm(dim=-1).max() <= 2.0 + 1e-9
    assert torch.allclose(enc.running_mean, capped.mean(0), atol=1e-8)
    assert torch.allclose(feats.mean(0), torch.zeros(4, dtype=torch.float64), atol=1e-6)
    assert torch.allclose(feats.std(0), torch.ones(4, dtype=torch.float64), atol=1e-2)
    enc.eval()
    before = enc.running_mean.clone()
    enc.features(x * 3)
    assert torch.equal(before, enc.running_mean)  # no update at inference


def _reference_losses(model, window, p, dt, weights, gamma=0.0):
    """Per-sample loop re-implementation drawing the same random numbers in the same order.

    The alignment target uses the masked coupling; the flows and the distortion term the unmasked one."""
    B, W, _ = window.shape
    m = model.n_latent
    K = sample_prefix_length(B, p, m)
    tau = torch.rand(B, 1, 1, dtype=window.dtype)
    s = torch.rand(B, 1, dtype=window.dtype)
    align = cf = df = td = 0.0
    enc = model.encoder
    L, sq = enc.L, enc.d.sqrt()
    for i in range(B):
        mask = torch.tensor([1.0 if j < K[i] else 0.0 for j in range(m)], dtype=window.dtype)
        x0_masked = torch.stack([enc.b + L @ (sq * mask * enc.features(window[i, w : w + 1])[0]) for w in range(W)])
        align += ((window[i] - x0_masked) ** 2).sum() / (B * W)
        x0 = torch.stack([enc.b + L @ (sq * enc.features(window[i, w : w + 1])[0]) for w in range(W)])
        td += (((window[i, -1] - window[i, -2]) - (x0[-1] - x0[-2])) ** 2).sum() / B
        t = tau[i, 0, 0]
        xt = (1 - t) * x0 + t * window[i]
        for w in range(W):
            u = model.u_phi(xt[w : w + 1], t.reshape(1, 1))[0]
            cf += ((u - (window[i, w] - x0[w])) ** 2).sum() / (B * W)
        xs = (1 - s[i, 0]) * xt[-2] + s[i, 0] * xt[-1]
        v = model.v_theta(torch.cat([xs, xt[:-1].reshape(-1)])[None], torch.stack([t, s[i, 0]])[None])[0]
        df += ((v - (xt[-1] - xt[-2]) / dt) ** 2).sum() / B
    a, b, e = weights
    return {"align": align, "cf": cf, "df": df, "td": td, "total": a * cf + b * df + e * align + gamma * td}


def test_losses_match_slow_reference():
    model = DCFModel(5, 4, history=1, hidden=8, depth=1).double().eval().requires_grad_(False)  # EMA fixed
    window = torch.randn(6, 3, 5, dtype=torch.float64)
    torch.manual_seed(3)
    fast = dual_flow_losses(model, window, p=0.4, dt=0.5, weights=(1.0, 2.0, 0.5), gamma=0.7)
    torch.manual_seed(3)
    slow = _reference_losses(model, window, 0.4, 0.5, (1.0, 2.0, 0.5), gamma=0.7)
    for key in ("align", "cf", "df", "td", "total"):
        assert math.isclose(fast[key].item(), slow[key].item(), rel_tol=1e-9), key


def test_flows_see_the_unmasked_coupling_but_train_only_the_first_k():
    """Issue 40 (the authors' code): u_phi sees every latent coordinate of x^(0), but coordinates beyond the
    window's K get no gradient from the flow losses; with K = 1 in every window only mu_1's column moves."""
    model = DCFModel(5, 4, history=1, hidden=8, depth=1).double().eval()
    window = torch.randn(6, 3, 5, dtype=torch.float64)
    mu = model.encoder.features(window.reshape(18, 5))
    mu.retain_grad()
    model.encoder.features = lambda x1: mu  # route the loss through this one tensor
    losses = dual_flow_losses(model, window, p=1.0, weights=(1.0, 1.0, 0.0), gamma=1.0)  # p = 1: K = 1
    losses["total"].backward()
    assert mu.grad[:, 0].abs().sum() > 0
    assert torch.all(mu.grad[:, 1:] == 0)
    # ... while the flow's input still holds the tail: the masked coupling differs from what u_phi saw
    with torch.no_grad():
        full = model.encoder.couple(mu)
        masked = model.encoder.couple(mu * torch.tensor([1.0, 0, 0, 0], dtype=torch.float64))
    assert not torch.allclose(full, masked)


def test_losses_without_nested_dropout_keep_every_coordinate():
    """p=None (nested dropout off): the alignment target uses all m latent coordinates in every window."""
    model = DCFModel(5, 4, history=1, hidden=8, depth=1).double().eval().requires_grad_(False)
    window = torch.randn(6, 3, 5, dtype=torch.float64)
    losses = dual_flow_losses(model, window, p=None)
    x0 = model.encoder(window.reshape(18, 5), torch.ones(18, 4, dtype=torch.float64)).reshape(6, 3, 5)
    assert math.isclose(losses["align"].item(), ((window - x0) ** 2).sum(-1).mean().item(), rel_tol=1e-12)


def test_model_rejects_bad_latent_size():
    with pytest.raises(ValueError, match="n_latent"):
        DCFModel(5, 6)


def test_scales_start_small_and_equal():
    """Issue 16: every d_i starts at init_d (small), so a coordinate nested dropout rarely unmasks holds little
    of sum(d) until trained; a non-positive init is refused."""
    model = DCFModel(6, 5, history=1, hidden=8, depth=1, init_d=0.05)
    assert torch.allclose(model.encoder.d, torch.full((5,), 0.05))
    with pytest.raises(ValueError, match="init_d"):
        DCFModel(6, 5, init_d=0.0)
