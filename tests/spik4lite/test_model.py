"""The LIF neuron, the gate, the regularisers and the physical refactoring, against slow references and closed
forms."""

import copy
import itertools
import math

import numpy as np
import pytest
import torch

from icml26.spik4lite.model import (
    ChannelGate,
    MultiStepLIF,
    SpikingCNN,
    SpikingformerMini,
    add_gates,
    anneal,
    energy_loss,
    keep_from_gates,
    mask_model,
    refactor,
    target_loss,
)


def reference_lif(x, tau=2.0, v_th=1.0, v_reset=0.0):
    """Scalar loop over neurons and time: the LIF equations written out, one neuron at a time."""
    T = x.shape[0]
    flat = x.reshape(T, -1)
    out = np.zeros_like(flat)
    for n in range(flat.shape[1]):
        v = v_reset
        for t in range(T):
            h = v + (flat[t, n] - (v - v_reset)) / tau
            s = 1.0 if h >= v_th else 0.0
            v = v_reset if s else h
            out[t, n] = s
    return out.reshape(x.shape)


def test_lif_matches_the_scalar_reference():
    x = np.random.default_rng(1).normal(1.0, 1.5, size=(6, 3, 5, 4))  # (T, B, C, N)
    got = MultiStepLIF()(torch.from_numpy(x)).numpy()
    assert set(np.unique(got)) <= {0.0, 1.0} and 0 < got.mean() < 1
    np.testing.assert_array_equal(got, reference_lif(x))
    xg = torch.from_numpy(x).requires_grad_(True)  # the training path (surrogate Function) fires the same spikes
    np.testing.assert_array_equal(MultiStepLIF()(xg).detach().numpy(), got)


def test_lif_constant_input_fires_periodically():
    # closed form: with x = 1.5, tau = 2: h1 = 0.75, h2 = 1.125 -> spike, reset, repeat: period 2
    s = MultiStepLIF()(torch.full((8, 1), 1.5)).flatten().tolist()
    assert s == [0, 1, 0, 1, 0, 1, 0, 1]
    assert MultiStepLIF()(torch.full((8, 1), 0.99)).sum() == 0  # below threshold: v -> 0.99 < 1 never fires


def test_surrogate_gradient_is_the_sigmoid_derivative():
    x = torch.tensor([[0.5, 2.0, 3.0]], requires_grad=True)  # T = 1: h = x / 2
    MultiStepLIF(alpha=4.0)(x).sum().backward()
    z = x.detach() / 2 - 1.0
    expected = 4 * torch.sigmoid(4 * z) * (1 - torch.sigmoid(4 * z)) / 2  # d/dx sigma'(h - v_th), dh/dx = 1/2
    torch.testing.assert_close(x.grad, expected)


def _scrambled(net):
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm1d | torch.nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(0.5 + torch.rand(n, generator=g, dtype=m.weight.dtype))
                m.bias.copy_(0.5 * torch.randn(n, generator=g, dtype=m.bias.dtype))
                m.running_mean.copy_(0.3 * torch.randn(n, generator=g, dtype=m.running_mean.dtype))
                m.running_var.copy_(0.2 + torch.rand(n, generator=g, dtype=m.running_var.dtype))
    return net.eval()


def _keep(net, drop, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for k, c in net.widths().items():
        m = torch.ones(c, dtype=torch.bool)
        m[torch.from_numpy(rng.permutation(c)[: round(drop * c)])] = False
        out[k] = m
    return out


@pytest.mark.parametrize("net_cls", [SpikingCNN, SpikingformerMini])
def test_refactored_network_equals_the_masked_one(net_cls):
    torch.manual_seed(0)
    dense = _scrambled(net_cls(1, 10, T=4).double())
    keep = _keep(dense, 0.4, 0)
    x = torch.rand(5, 1, 8, 8, dtype=torch.float64) * 4.0
    masked = mask_model(copy.deepcopy(dense), keep).eval()
    compact = refactor(copy.deepcopy(dense), keep).eval()
    with torch.no_grad():
        y_d, y_m, y_c = dense(x), masked(x), compact(x)
    assert compact.widths() == {k: int(v.sum()) for k, v in keep.items()}
    assert float((y_m - y_d).abs().max()) > 1e-3  # masking changes the function: the check can see a mistake
    torch.testing.assert_close(y_c, y_m, rtol=0, atol=1e-12)
    # the deliberate bug of the negative control is visible
    wrong = refactor(copy.deepcopy(dense), keep, misalign=True).eval()
    with torch.no_grad():
        assert float((wrong(x) - y_m).abs().max()) > 1e-3


def test_refactor_slices_the_optimiser_state_with_the_channels():
    torch.manual_seed(0)
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    net(torch.rand(3, 1, 8, 8)).sum().backward()
    opt.step()
    w_old = net.conv1.layer.weight
    st_old = {k: v.clone() for k, v in opt.state[w_old].items()}
    keep = {
        "conv0": torch.tensor([1, 0, 1, 1], dtype=torch.bool),
        "conv1": torch.tensor([1, 1, 0, 1, 0, 1], dtype=torch.bool),
    }
    refactor(net, keep, opt)
    w_new = net.conv1.layer.weight
    assert w_new.shape == (4, 3, 3, 3) and w_new in opt.state and w_old not in opt.state
    rows, cols = torch.tensor([0, 1, 3, 5]), torch.tensor([0, 2, 3])
    torch.testing.assert_close(opt.state[w_new]["exp_avg"], st_old["exp_avg"][rows][:, cols])
    assert sum(p is w_new for g in opt.param_groups for p in g["params"]) == 1
    net(torch.rand(3, 1, 8, 8)).sum().backward()  # the optimiser still steps on the compact network
    opt.step()


def test_refactor_refuses_to_empty_a_layer_and_wrong_masks():
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5))
    with pytest.raises(ValueError, match="every channel of layer 'conv1'"):
        refactor(net, {"conv1": torch.zeros(6, dtype=torch.bool)})
    with pytest.raises(ValueError, match="has 3 entries"):
        refactor(net, {"conv0": torch.ones(3, dtype=torch.bool)})


def test_gate_keeps_by_default_and_is_straight_through():
    torch.manual_seed(0)
    g = ChannelGate(6, channel_dim=2)
    g.compensate = False  # the plain gate: dropped channels zeroed (compensation: the next test)
    x = (torch.rand(4, 3, 6, 5) < 0.3).float().requires_grad_(True)  # (T, B, C, N)
    g.eval()
    assert torch.equal(g(x), x)  # bias (drop 0.5, keep 2.0): argmax keeps every channel
    g.train()
    g.tau = 1.0
    y = g(x)
    mask = (y.detach().sum((0, 3)) > 0) | (x.detach().sum((0, 3)) == 0)
    assert set(torch.unique(y.detach()).tolist()) <= {0.0, 1.0} and mask.any()
    p = g.last_keep_prob
    torch.testing.assert_close(p, torch.full_like(p, 1 / (1 + math.exp(-1.5))), atol=0.05, rtol=0)
    y.sum().backward()
    assert g.gate.bias.grad is not None and g.gate.bias.grad.abs().sum() > 0  # gradient reaches the gate
    assert g.keep_count.item() == 1 and torch.all(g.rate_ema > 0)


def test_energy_and_target_losses_match_their_formulas():
    torch.manual_seed(0)
    net = add_gates(SpikingCNN(1, 10, T=2, widths=(4, 6, 5)), (1, 8, 8))
    net.train()
    net(torch.rand(3, 1, 8, 8))
    terms, drops = [], []
    for g in net.gates.values():
        cost = g.sop_per_channel * g.rate_ema + 1e-12
        p = g.last_keep_prob.detach()
        terms.append(float((p * cost).sum() / (p.shape[0] * cost.sum())))
        drops.append(float((1 - p.mean() - 0.3) ** 2))
    assert float(energy_loss(net, 0.01).detach()) == pytest.approx(0.01 * np.mean(terms), rel=1e-6)
    assert float(target_loss(net, 2.0, 0.3).detach()) == pytest.approx(2.0 * np.mean(drops), rel=1e-6)
    # per-channel cost of conv0 -> conv1 (3x3, 6 out channels, 8x8 map): 9 * 6 * 64 MACs per spike, in millions
    assert net.gates["conv0"].sop_per_channel == pytest.approx(9 * 6 * 64 / 1e6)


def test_anneal_endpoints_and_monotone():
    taus = [anneal(s, 10) for s in range(11)]
    assert taus[0] == 1.0 and taus[-1] == pytest.approx(0.5) and all(a > b for a, b in itertools.pairwise(taus))


def test_keep_from_gates_threshold_fraction_and_cap():
    net = add_gates(SpikingCNN(1, 10, T=2, widths=(10, 10, 10)), (1, 8, 8))
    for g in net.gates.values():
        g.keep_prob_sum.copy_(torch.linspace(0.05, 0.95, 10))
        g.keep_count.fill_(1)
    k = keep_from_gates(net, threshold=0.5, max_drop=0.9)
    assert all(v.tolist() == [False] * 5 + [True] * 5 for v in k.values())
    k = keep_from_gates(net, threshold=0.5, max_drop=0.2)  # capped, lowest first
    assert all(v.tolist() == [False] * 2 + [True] * 8 for v in k.values())
    k = keep_from_gates(net, fraction=0.3)
    assert all(int(v.sum()) == 7 and not v[:3].any() for v in k.values())
    with pytest.raises(ValueError, match="threshold"):
        keep_from_gates(net, threshold=1.0)
    with pytest.raises(ValueError, match="every channel"):
        keep_from_gates(net, fraction=1.0)


def test_compensation_holds_dropped_channels_at_their_rate_and_refactor_folds_it_exactly():
    """Eq. C1: a gated-off channel reads its running rate; Eq. C2: refactoring folds that constant into the
    follower, so the compact network computes what the gated one did -- exactly for linear followers (the
    Spikingformer MLP, the CNN's head), and in the interior of the map for a padded conv."""
    torch.manual_seed(0)
    net = add_gates(SpikingformerMini(1, 10, T=2, dim=16, heads=2), (1, 8, 8))
    net = _scrambled(net.double())
    x = torch.rand(6, 1, 8, 8, dtype=torch.float64) * 3
    net.train()
    with torch.no_grad():
        net(x)  # one training forward: the running rates
    g = net.gates["mlp0"]
    assert g.compensate and g.rate_updates.item() == 1 and g.rate_ema.sum() > 0
    drop = torch.zeros(g.channels, dtype=torch.bool)
    drop[::3] = True
    with torch.no_grad():  # close every third channel: the drop logit wins
        g.gate.weight.zero_()
        g.gate.bias.view(-1, 2)[drop] = torch.tensor([5.0, -5.0], dtype=torch.float64)
    for other in ("stem",):  # the other gate stays open
        with torch.no_grad():
            net.gates[other].gate.weight.zero_()
    net.eval()
    spikes = (torch.rand(2, 3, 4, g.channels) < 0.4).double()
    out = g(spikes)
    torch.testing.assert_close(out[..., drop], g.rate_ema[drop].expand(2, 3, 4, -1))  # held at the rate
    torch.testing.assert_close(out[..., ~drop], spikes[..., ~drop])
    with torch.no_grad():
        y_gated = net(x)
    rates = {"mlp0": g.rate_ema.clone()}
    compact = refactor(copy.deepcopy(net), {"mlp0": ~drop}, rates=rates)
    uncompensated = refactor(copy.deepcopy(net), {"mlp0": ~drop})
    with torch.no_grad():
        y_c, y_u = compact(x), uncompensated(x)
    assert compact.widths()["mlp0"] == int((~drop).sum())
    torch.testing.assert_close(y_c, y_gated, rtol=0, atol=1e-10)
    assert float((y_u - y_gated).abs().max()) > 1e-3  # without the fold the compact network differs


def test_compensation_fold_on_the_cnn_head_is_exact():
    torch.manual_seed(1)
    net = _scrambled(SpikingCNN(1, 10, T=2, widths=(4, 6, 5)).double())
    rate = torch.rand(5, dtype=torch.float64)
    keep = torch.tensor([1, 0, 1, 0, 1], dtype=torch.bool)
    x = torch.rand(3, 1, 8, 8, dtype=torch.float64) * 3

    class Hold(torch.nn.Module):  # the gate's inference output: dropped channels held at their rate
        def forward(self, s):  # (T, B, C, H, W)
            k = keep.view(1, 1, -1, 1, 1).to(s.dtype)
            return s * k + (1 - k) * rate.view(1, 1, -1, 1, 1)

    held = copy.deepcopy(net)
    held.gates["conv2"] = Hold()
    compact = refactor(copy.deepcopy(net), {"conv2": keep}, rates={"conv2": rate})
    with torch.no_grad():
        torch.testing.assert_close(compact.eval()(x), held.eval()(x), rtol=0, atol=1e-12)
