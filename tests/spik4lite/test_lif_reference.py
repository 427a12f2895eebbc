"""Our multi-step LIF against SpikingJelly 2.x's ``LIFNode`` (same tau, threshold, hard reset, detached reset,
sigmoid surrogate with alpha = 4): spikes, membrane behaviour and surrogate gradients on random inputs."""

import pytest
import torch

from icml26.spik4lite.model import MultiStepLIF

sj = pytest.importorskip("spikingjelly.activation_based")
from spikingjelly.activation_based import functional, neuron, surrogate  # noqa: E402

torch.set_num_threads(1)


def _peer(tau: float, v_threshold: float, alpha: float):
    return neuron.LIFNode(
        tau=tau,
        decay_input=True,
        v_threshold=v_threshold,
        v_reset=0.0,
        surrogate_function=surrogate.Sigmoid(alpha=alpha),
        detach_reset=True,
        step_mode="m",
    )


@pytest.mark.parametrize(("tau", "v_threshold", "alpha"), [(2.0, 1.0, 4.0), (3.0, 0.5, 2.0)])
def test_multistep_lif_forward_and_surrogate_backward_match_spikingjelly(tau, v_threshold, alpha):
    gen = torch.Generator().manual_seed(0)
    x = (1.5 * torch.randn(8, 5, 3, 7, 7, generator=gen, dtype=torch.float64)).requires_grad_(True)  # (T, B, C, H, W)
    w = torch.randn(x.shape, generator=gen, dtype=torch.float64)  # a random upstream gradient
    ours = MultiStepLIF(tau=tau, v_threshold=v_threshold, alpha=alpha)
    s_ours = ours(x)
    (g_ours,) = torch.autograd.grad((s_ours * w).sum(), x)

    peer = _peer(tau, v_threshold, alpha)
    functional.reset_net(peer)
    s_peer = peer(x)
    (g_peer,) = torch.autograd.grad((s_peer * w).sum(), x)

    assert 0.05 < float(s_ours.detach().mean()) < 0.6  # the inputs make the neurons fire, and not always
    torch.testing.assert_close(s_ours, s_peer, rtol=0, atol=0)  # identical spike trains
    assert float(g_ours.abs().max()) > 0  # the surrogate gradient flows through time
    torch.testing.assert_close(g_ours, g_peer, rtol=1e-12, atol=1e-12)


def test_inference_path_fires_like_the_training_path():
    # without autograd our LIF takes a Heaviside without the autograd Function (for torch.export): same spikes
    x = 2 * torch.rand(6, 4, 16)
    lif = MultiStepLIF()
    with torch.no_grad():
        s_eval = lif(x)
    s_train = lif(x.clone().requires_grad_(True)).detach()
    peer = _peer(2.0, 1.0, 4.0)
    functional.reset_net(peer)
    with torch.no_grad():
        s_peer = peer(x)
    assert torch.equal(s_eval, s_train) and torch.equal(s_eval, s_peer)
