"""Spiking networks and the Spik4lite plug-in, top to bottom.

Tensors are time-first: a spiking layer sees ``(T, B, ...)``; stateless layers (conv, linear, BN) see the time
steps merged into the batch, ``(T*B, ...)``.

1. :class:`MultiStepLIF` -- leaky integrate-and-fire, multi-step, sigmoid surrogate gradient (SpikingJelly's
   ``LIFNode`` with ``decay_input=True``, hard reset, ``detach_reset=True``; Eq. LIF below).
2. :class:`SpikingCNN` and :class:`SpikingformerMini` (spiking patch embedding, spiking self-attention without
   softmax, spiking MLP; Spikingformer's pre-activation residuals). Each declares its *prunable pairs*:
   a leader layer (conv/linear + BatchNorm) whose output channels, after a LIF, are the input channels of a
   follower layer. A gate slot sits between the LIF and the follower.
3. :class:`ChannelGate` -- per-input-channel gate driven by the per-sample firing rate (Linear C -> 2C, bias
   (drop 0.5, keep 2.0)); hard Gumbel-softmax straight-through in training, argmax at inference; it records the
   keep-probabilities that decide physical removal and the running firing rate for the energy cost.
4. :func:`energy_loss` (SOP-weighted keep-probability, the paper's default) and :func:`target_loss`.
5. :func:`refactor` -- physical removal: leader out-channels, its BatchNorm rows (weights *and* running stats),
   the follower's in-channels, the gate's rows/columns and the optimiser state, all sliced by the same index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

# --------------------------------------------------------------------------------------------- LIF neuron


class SigmoidSurrogateSpike(torch.autograd.Function):
    """Heaviside forward; derivative of sigmoid(alpha x) backward (SpikingJelly ``surrogate.Sigmoid``, alpha 4)."""

    @staticmethod
    def forward(ctx, x, alpha: float):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(ctx.alpha * x)
        return grad * ctx.alpha * s * (1 - s), None


class MultiStepLIF(nn.Module):
    """Multi-step LIF: ``H_t = V_{t-1} + (X_t - (V_{t-1} - V_reset)) / tau``; ``S_t = Theta(H_t - V_th)``;
    ``V_t = H_t (1 - S_t) + V_reset S_t`` (hard reset, the reset path detached from the gradient)."""

    def __init__(self, tau: float = 2.0, v_threshold: float = 1.0, v_reset: float = 0.0, alpha: float = 4.0):
        super().__init__()
        self.tau, self.v_threshold, self.v_reset, self.alpha = tau, v_threshold, v_reset, alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (T, B, ...) -> (T, B, ...) spikes in {0, 1}
        v = torch.full_like(x[0], self.v_reset)
        out = []
        for t in range(x.shape[0]):
            h = v + (x[t] - (v - self.v_reset)) / self.tau  # charge (decay_input=True)
            if h.requires_grad:  # fire: Heaviside forward, surrogate gradient backward
                s = SigmoidSurrogateSpike.apply(h - self.v_threshold, self.alpha)
            else:  # inference (and torch.export): the same Heaviside, no autograd Function
                s = (h >= self.v_threshold).to(h.dtype)
            sd = s.detach()  # detach_reset=True
            v = h * (1 - sd) + self.v_reset * sd  # hard reset
            out.append(s)
        return torch.stack(out)

    def extra_repr(self) -> str:
        return f"tau={self.tau}, v_threshold={self.v_threshold}"


# --------------------------------------------------------------------------------------------- building blocks


def seq(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Apply a stateless layer to ``(T, B, ...)`` by merging time into the batch."""
    T, B = x.shape[:2]
    y = layer(x.flatten(0, 1))
    return y.view(T, B, *y.shape[1:])


class ConvBN(nn.Module):
    """Conv2d (no bias) + BatchNorm2d: a leader or follower of a prunable pair."""

    def __init__(self, c_in: int, c_out: int, k: int = 3):
        super().__init__()
        self.layer = nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):  # (T, B, C_in, H, W) -> (T, B, C_out, H, W)
        return seq(lambda z: self.bn(self.layer(z)), x)


class LinearBN(nn.Module):
    """Linear + BatchNorm1d over the feature axis of ``(T, B, N, D)``."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.layer = nn.Linear(d_in, d_out)
        self.bn = nn.BatchNorm1d(d_out)

    def forward(self, x):  # (T, B, N, D_in) -> (T, B, N, D_out)
        y = self.layer(x)
        return self.bn(y.flatten(0, 2)).view(y.shape)


class SpikeMatMul(nn.Module):
    """``a @ b`` as a module so that the SOP counter's hooks see it (``a`` is a spike tensor)."""

    def forward(self, a, b):
        return a @ b


class FixedMask(nn.Module):
    """Masked-only baseline: zero the listed input channels but keep them in the tensor (no compute saved)."""

    def __init__(self, keep: torch.Tensor, channel_dim: int):
        super().__init__()
        self.register_buffer("keep", keep.float())
        self.channel_dim = channel_dim

    def forward(self, x):  # (T, B, C, ...) with C at channel_dim
        shape = [1] * x.dim()
        shape[self.channel_dim] = -1
        return x * self.keep.view(shape).to(x.dtype)


class ChannelGate(nn.Module):
    """Spik4lite gate on the C input channels of a follower layer.

    fr_c = mean input spike of channel c over T and space (per sample); logits = Linear(C, 2C)(fr) as
    (drop, keep) pairs; training: hard Gumbel-softmax with temperature ``tau`` (straight-through);
    inference: argmax. Records ``keep_prob_sum / keep_count`` (the refactoring criterion) and ``rate_ema``
    (running firing rate, momentum 0.9, for the energy cost).

    Proactive compensation (``compensate=True``, the default): a gated-off channel is not zeroed but replaced by
    its running mean firing rate, ``x_c <- m_c x_c + (1 - m_c) rate_c`` (Eq. C1). The network therefore learns,
    while the gates train, to do without each dropped channel's *fluctuations* only; its mean contribution is
    folded into the follower at refactoring (:func:`refactor` with ``rates=``), so the compact network computes
    what the gated one did. Through the straight-through mask the task gradient on a gate is
    ``sum (x_c - rate_c) dL/dx_c``: channels whose spikes carry little beyond their mean are cheap to drop.
    """

    def __init__(self, channels: int, channel_dim: int, sop_per_channel: float = 1.0):
        super().__init__()
        self.channels, self.channel_dim = channels, channel_dim
        self.gate = nn.Linear(channels, 2 * channels)
        nn.init.normal_(self.gate.weight, std=0.01)
        with torch.no_grad():
            self.gate.bias.view(channels, 2).copy_(torch.tensor([0.5, 2.0]))  # biased towards keep
        self.tau = 1.0
        self.sop_per_channel = sop_per_channel  # follower MACs caused by one spike of a channel (set by the model)
        self.generator: torch.Generator | None = None
        self.compensate = True
        self.register_buffer("rate_ema", torch.zeros(channels))
        self.register_buffer("rate_updates", torch.zeros(()))
        self.register_buffer("keep_prob_sum", torch.zeros(channels))
        self.register_buffer("keep_count", torch.zeros(()))
        self.last_keep_prob: torch.Tensor | None = None  # (B, C), for the regulariser

    def forward(self, x):  # (T, B, C, ...) spikes
        dims = [d for d in range(x.dim()) if d not in (1, self.channel_dim)]
        fr = x.mean(dim=dims)  # (B, C) per-sample firing rate
        logits = self.gate(fr).view(-1, self.channels, 2)  # (B, C, 2): (drop, keep)
        if self.training:
            u = torch.rand(logits.shape, generator=self.generator, dtype=logits.dtype).clamp_(1e-10, 1 - 1e-10)
            soft = torch.softmax((logits - torch.log(-torch.log(u))) / self.tau, dim=-1)  # Gumbel-softmax
            hard = torch.nn.functional.one_hot(soft.argmax(-1), 2).to(soft.dtype)
            mask = (hard - soft.detach() + soft)[..., 1]  # straight-through, (B, C)
            p_keep = torch.softmax(logits / self.tau, dim=-1)[..., 1]  # (B, C)
            self.last_keep_prob = p_keep
            with torch.no_grad():
                if self.rate_updates.item() == 0:  # start the running rate at the first batch's, not at 0
                    self.rate_ema.copy_(fr.mean(0))
                self.rate_ema.mul_(0.9).add_(0.1 * fr.mean(0))
                self.rate_updates.add_(1)
                self.keep_prob_sum.add_(p_keep.mean(0))
                self.keep_count.add_(1)
        else:
            mask = (logits[..., 1] > logits[..., 0]).to(x.dtype)  # argmax at inference
        shape = [1] * x.dim()
        shape[1], shape[self.channel_dim] = mask.shape[0], self.channels
        m = mask.view(shape)
        if not self.compensate:
            return x * m
        fill = [1] * x.dim()
        fill[self.channel_dim] = self.channels
        return x * m + (1 - m) * self.rate_ema.view(fill).to(x.dtype)  # Eq. C1

    def mean_keep_prob(self) -> torch.Tensor:  # (C,)
        if self.keep_count.item() == 0:
            return torch.ones(self.channels)
        return self.keep_prob_sum / self.keep_count

    def reset_stats(self) -> None:
        self.keep_prob_sum.zero_()
        self.keep_count.zero_()


# --------------------------------------------------------------------------------------------- networks


@dataclass
class Pair:
    """A prunable pair: ``leader`` (ConvBN/LinearBN) -> LIF -> gate slot ``gate_key`` -> ``follower``."""

    name: str
    leader: str  # attribute path of the leader ConvBN / LinearBN
    follower: str  # attribute path of the follower ConvBN / LinearBN / nn.Linear
    channel_dim: int  # channel axis of the (T, B, ...) tensor the gate sees


def get_module(model: nn.Module, path: str) -> nn.Module:
    return model.get_submodule(path)


def set_module(model: nn.Module, path: str, module: nn.Module) -> None:
    parent, _, name = path.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, name, module)


class SpikingNet(nn.Module):
    """Common parts: T, gate slots (``self.gates[pair.name]``), widths, encode/decode."""

    arch = "base"
    pairs: list[Pair]

    def __init__(self, T: int, in_channels: int):
        super().__init__()
        self.T, self.in_channels = T, in_channels
        self.gates = nn.ModuleDict()

    def gate(self, name: str, x):
        return self.gates[name](x) if name in self.gates else x

    def widths(self) -> dict[str, int]:
        """Current channel count of every prunable pair (what a checkpoint must restore)."""
        return {p.name: _out_features(get_module(self, p.leader)) for p in self.pairs}

    def encode(self, img):  # (B, C, H, W) -> (T, B, C, H, W): direct (real-valued) encoding
        c_in = self.in_channels
        if img.dim() != 4 or img.shape[1] != c_in:
            raise ValueError(f"{self.arch} expects images of shape (B, {c_in}, H, W); got {tuple(img.shape)}")
        return img.unsqueeze(0).expand(self.T, *img.shape)


def _out_features(m: nn.Module) -> int:
    layer = m.layer if hasattr(m, "layer") else m
    return layer.out_channels if isinstance(layer, nn.Conv2d) else layer.out_features


class SpikingCNN(SpikingNet):
    """conv(C_in->c1) BN LIF | gate | conv(c1->c2) BN LIF pool2 | gate | conv(c2->c3) BN LIF avgpool | gate | fc."""

    arch = "cnn"

    def __init__(self, in_channels=1, classes=10, T=4, widths=(16, 32, 64)):
        super().__init__(T, in_channels)
        c1, c2, c3 = widths
        self.model_kw = {"T": T, "widths": [int(c) for c in widths]}
        self.conv0, self.lif0 = ConvBN(in_channels, c1), MultiStepLIF()
        self.conv1, self.lif1 = ConvBN(c1, c2), MultiStepLIF()
        self.pool = nn.MaxPool2d(2)
        self.conv2, self.lif2 = ConvBN(c2, c3), MultiStepLIF()
        self.fc = nn.Linear(c3, classes)
        self.pairs = [
            Pair("conv0", "conv0", "conv1", 2),
            Pair("conv1", "conv1", "conv2", 2),
            Pair("conv2", "conv2", "fc", 2),
        ]

    def forward(self, img):  # (B, C, H, W) -> (B, classes)
        x = self.lif0(self.conv0(self.encode(img)))  # (T, B, c1, H, W) spikes
        x = self.conv1(self.gate("conv0", x))
        x = seq(self.pool, self.lif1(x))  # (T, B, c2, H/2, W/2)
        x = self.lif2(self.conv2(self.gate("conv1", x)))  # (T, B, c3, H/2, W/2)
        x = self.gate("conv2", x).mean(dim=(3, 4))  # (T, B, c3) spike rates over space
        return self.fc(x).mean(0)  # (B, classes), mean over T


class SSA(nn.Module):
    """Spiking self-attention without softmax (Spikformer/Spikingformer): ``LIF(Q (K^T V) * scale)``."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.scale = heads, 0.125
        self.lif_in = MultiStepLIF()
        self.q, self.k, self.v = LinearBN(dim, dim), LinearBN(dim, dim), LinearBN(dim, dim)
        self.lif_q, self.lif_k, self.lif_v = MultiStepLIF(), MultiStepLIF(), MultiStepLIF()
        self.kv, self.qkv = SpikeMatMul(), SpikeMatMul()
        self.lif_attn = MultiStepLIF(v_threshold=0.5)
        self.proj = LinearBN(dim, dim)

    def forward(self, x):  # (T, B, N, D)
        T, B, N, D = x.shape
        s = self.lif_in(x)  # pre-activation spikes

        def split(z):  # (T, B, N, D) -> (T, B, h, N, D/h)
            return z.view(T, B, N, self.heads, D // self.heads).transpose(2, 3)

        branches = ((self.q, self.lif_q), (self.k, self.lif_k), (self.v, self.lif_v))
        q, k, v = (split(lif(lin(s))) for lin, lif in branches)  # (T, B, h, N, D/h) spikes each
        kv = self.kv(k.transpose(-2, -1), v)  # (T, B, h, d, d): K^T V, integer counts
        a = self.qkv(q, kv) * self.scale  # (T, B, h, N, d), no softmax
        a = self.lif_attn(a.transpose(2, 3).reshape(T, B, N, D))
        return self.proj(a)


class Block(nn.Module):
    """Spikingformer block: ``x + SSA(x)``, ``x + MLP(x)`` with MLP = LIF fc1 BN LIF | gate | fc2 BN."""

    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.attn = SSA(dim, heads)
        self.lif_mlp_in = MultiStepLIF()
        self.fc1, self.lif_hidden, self.fc2 = LinearBN(dim, hidden), MultiStepLIF(), LinearBN(hidden, dim)


class SpikingformerMini(SpikingNet):
    """Spiking patch embedding (conv BN LIF | gate | conv BN pool, + conv RPE), ``depth`` blocks, linear head."""

    arch = "spikingformer-mini"

    def __init__(self, in_channels=1, classes=10, T=4, dim=64, depth=1, heads=4, mlp_ratio=4, stem=None, hidden=None):
        super().__init__(T, in_channels)
        stem = stem or dim // 2
        hidden = list(hidden or [dim * mlp_ratio] * depth)
        self.model_kw = {"T": T, "dim": dim, "depth": depth, "heads": heads, "stem": stem, "hidden": hidden}
        self.stem0, self.lif_s0 = ConvBN(in_channels, stem), MultiStepLIF()
        self.stem1 = ConvBN(stem, dim)
        self.pool = nn.MaxPool2d(2)
        self.lif_rpe, self.rpe = MultiStepLIF(), ConvBN(dim, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, h) for h in hidden])
        self.lif_head = MultiStepLIF()
        self.head = nn.Linear(dim, classes)
        self.pairs = [Pair("stem", "stem0", "stem1", 2)] + [
            Pair(f"mlp{i}", f"blocks.{i}.fc1", f"blocks.{i}.fc2", 3) for i in range(depth)
        ]

    def forward(self, img):  # (B, C, H, W) -> (B, classes)
        x = self.lif_s0(self.stem0(self.encode(img)))  # (T, B, stem, H, W)
        x = seq(self.pool, self.stem1(self.gate("stem", x)))  # (T, B, D, H/2, W/2)
        x = x + self.rpe(self.lif_rpe(x))  # relative position embedding (conv), residual
        x = x.flatten(3).transpose(2, 3)  # (T, B, N, D) tokens
        for i, blk in enumerate(self.blocks):
            x = x + blk.attn(x)
            h = blk.lif_hidden(blk.fc1(blk.lif_mlp_in(x)))  # (T, B, N, hidden) spikes
            x = x + blk.fc2(self.gate(f"mlp{i}", h))
        x = self.lif_head(x).mean(2)  # (T, B, D) token-averaged spike rates
        return self.head(x).mean(0)  # (B, classes)


ARCHS = {"cnn": SpikingCNN, "spikingformer-mini": SpikingformerMini}


# --------------------------------------------------------------------------------------------- Spik4lite plug-in


def _follower_cost(model: SpikingNet, pair: Pair, img_shape) -> float:
    """MACs per sample and time step that one input channel of the follower causes (the SOP it costs when it
    spikes at rate 1), in millions: k_h k_w C_out H_out W_out / 1e6 for a conv; tokens x D_out for a linear."""
    from icml26.spik4lite.measure import count_ops

    ops = count_ops(model, torch.zeros(1, *img_shape))
    fol = get_module(model, pair.follower)
    layer = fol.layer if hasattr(fol, "layer") else fol
    c_in = layer.in_channels if isinstance(layer, nn.Conv2d) else layer.in_features
    return ops.macs[id(layer)] / model.T / c_in / 1e6


def add_gates(model: SpikingNet, img_shape, generator: torch.Generator | None = None) -> SpikingNet:
    """Insert a :class:`ChannelGate` into every prunable pair (the plug-in); ``img_shape`` = (C, H, W)."""
    for p in model.pairs:
        c = model.widths()[p.name]
        g = ChannelGate(c, p.channel_dim)
        g.generator = generator
        model.gates[p.name] = g
    for p in model.pairs:  # costs measured with the gates in place (same shapes)
        model.gates[p.name].sop_per_channel = _follower_cost(model, p, img_shape)
    return model


def set_temperature(model: SpikingNet, tau: float) -> None:
    for g in model.gates.values():
        if isinstance(g, ChannelGate):
            g.tau = tau


def anneal(step: int, total: int, tau0: float = 1.0, tau1: float = 0.5) -> float:
    """Exponential temperature annealing tau0 -> tau1 over ``total`` steps (the training script's 1.0 -> 0.5)."""
    return tau0 * (tau1 / tau0) ** (min(step, total) / max(total, 1))


def energy_loss(model: SpikingNet, lam: float) -> torch.Tensor:
    """Energy-aware regulariser: ``lam * mean_l sum_c p_keep[b, c] cost_c / (B sum_c cost_c)`` with
    ``cost_c = sop_per_channel * rate_ema_c`` (the synaptic operations channel c causes)."""
    terms = []
    for g in model.gates.values():
        if isinstance(g, ChannelGate) and g.last_keep_prob is not None:
            cost = g.sop_per_channel * g.rate_ema + 1e-12  # (C,)
            p = g.last_keep_prob  # (B, C)
            terms.append((p * cost).sum() / (p.shape[0] * cost.sum()))
    return lam * torch.stack(terms).mean() if terms else torch.zeros(())


def target_loss(model: SpikingNet, lam: float, target_drop: float) -> torch.Tensor:
    """Target-sparsity alternative: ``lam * mean_l (mean drop probability - target)^2``."""
    terms = [
        (1 - g.last_keep_prob.mean() - target_drop) ** 2
        for g in model.gates.values()
        if isinstance(g, ChannelGate) and g.last_keep_prob is not None
    ]
    return lam * torch.stack(terms).mean() if terms else torch.zeros(())


# --------------------------------------------------------------------------------------------- physical refactoring


def _slice_param(old: nn.Parameter, index: torch.Tensor, dim: int, opt: torch.optim.Optimizer | None) -> nn.Parameter:
    """New Parameter = old sliced along ``dim``; its optimiser state (exp_avg, ...) sliced the same way."""
    new = nn.Parameter(old.detach().index_select(dim, index).clone(), requires_grad=old.requires_grad)
    if opt is not None:
        for group in opt.param_groups:
            for i, q in enumerate(group["params"]):
                if q is old:
                    group["params"][i] = new
        if old in opt.state:
            st = opt.state.pop(old)
            opt.state[new] = {
                k: (v.index_select(dim, index).clone() if torch.is_tensor(v) and v.shape == old.shape else v)
                for k, v in st.items()
            }
    return new


def _slice_leader(m: nn.Module, keep: torch.Tensor, opt, stats_index: torch.Tensor | None = None) -> None:
    """Remove output channels of a ConvBN / LinearBN: weight rows, bias, BN affine *and* running stats."""
    m.layer.weight = _slice_param(m.layer.weight, keep, 0, opt)
    if m.layer.bias is not None:
        m.layer.bias = _slice_param(m.layer.bias, keep, 0, opt)
    bn = m.bn
    bn.weight, bn.bias = _slice_param(bn.weight, keep, 0, opt), _slice_param(bn.bias, keep, 0, opt)
    si = keep if stats_index is None else stats_index  # stats_index: the control's deliberate mistake
    bn.running_mean = bn.running_mean.index_select(0, si).clone()
    bn.running_var = bn.running_var.index_select(0, si).clone()
    bn.num_features = len(keep)
    if isinstance(m.layer, nn.Conv2d):
        m.layer.out_channels = len(keep)
    else:
        m.layer.out_features = len(keep)


def _slice_follower(m: nn.Module, keep: torch.Tensor, opt) -> None:
    """Remove input channels of the follower (ConvBN / LinearBN / Linear): weight columns."""
    layer = m.layer if hasattr(m, "layer") else m
    layer.weight = _slice_param(layer.weight, keep, 1, opt)
    if isinstance(layer, nn.Conv2d):
        layer.in_channels = len(keep)
    else:
        layer.in_features = len(keep)


def _compensate_follower(m: nn.Module, dropped: torch.Tensor, rates: torch.Tensor) -> None:
    """Fold the mean input of the dropped channels into the follower (Eq. C2): a channel held at its rate r_c adds
    ``b_o = sum_c r_c sum_k W[o, c, k]`` to every output o. Before a BatchNorm (ConvBN / LinearBN) the constant
    goes into the running mean (``mu_o -= b_o``: the same eval output; in training BatchNorm removes constants
    anyway); a plain Linear takes it in its bias. For a 3x3 conv with zero padding the folded constant is exact
    away from the one-pixel border, where the padded taps saw zeros."""
    layer = m.layer if hasattr(m, "layer") else m
    w = layer.weight.detach()
    r = rates.to(w.dtype)[dropped]  # (n_dropped,)
    b = (w[:, dropped].flatten(2).sum(2) if w.dim() > 2 else w[:, dropped]) @ r  # (C_out,)
    with torch.no_grad():
        if hasattr(m, "bn"):
            m.bn.running_mean.sub_(b.to(m.bn.running_mean.dtype))
        else:
            layer.bias.add_(b.to(layer.bias.dtype))


def _slice_gate(g: nn.Module, keep: torch.Tensor, opt) -> nn.Module:
    if isinstance(g, FixedMask):
        return FixedMask(g.keep[keep], g.channel_dim)
    if not isinstance(g, ChannelGate):
        return g
    rows = torch.stack([2 * keep, 2 * keep + 1], 1).flatten()  # (drop, keep) logits of the kept channels
    lin = g.gate
    lin.weight = _slice_param(_slice_param(lin.weight, rows, 0, opt), keep, 1, opt)
    lin.bias = _slice_param(lin.bias, rows, 0, opt)
    lin.in_features, lin.out_features = len(keep), 2 * len(keep)
    g.channels = len(keep)
    g.rate_ema = g.rate_ema[keep].clone()
    g.rate_updates = g.rate_updates.clone()
    g.keep_prob_sum = g.keep_prob_sum[keep].clone()
    return g


def refactor(
    model: SpikingNet,
    keep: dict[str, torch.Tensor],
    optimizer: torch.optim.Optimizer | None = None,
    *,
    misalign: bool = False,
    rates: dict[str, torch.Tensor] | None = None,
) -> SpikingNet:
    """Physically remove channels, in place: ``keep[pair]`` is a bool mask over the pair's current channels.

    Leader out-channels, its BatchNorm (affine and running statistics), the gate, and the follower's in-channels
    are sliced by the same index, so the compact network computes exactly what the network with those channels
    zeroed computed. ``misalign=True`` is the negative control's bug: the BatchNorm running statistics are
    sliced with the *first* k indices instead of the kept ones. ``rates[pair]`` (per-channel firing rates): the
    dropped channels' mean input is folded into the follower first (proactive compensation, Eq. C2), so the
    compact network computes what the network with those channels *held at their rates* computed.
    Raises ``ValueError`` naming the layer when a mask would remove every channel.
    """
    widths = model.widths()
    for p in model.pairs:
        if p.name not in keep:
            continue
        mask = torch.as_tensor(keep[p.name], dtype=torch.bool).flatten()
        if mask.numel() != widths[p.name]:
            raise ValueError(f"keep mask for {p.name!r} has {mask.numel()} entries; the layer has {widths[p.name]}")
        if not mask.any():
            raise ValueError(f"refusing to remove every channel of layer {p.name!r} ({p.leader}); keep at least one")
        idx = torch.nonzero(mask).flatten()
        if rates is not None and p.name in rates and not mask.all():
            _compensate_follower(get_module(model, p.follower), torch.nonzero(~mask).flatten(), rates[p.name])
        wrong = torch.arange(len(idx)) if misalign else None
        _slice_leader(get_module(model, p.leader), idx, optimizer, stats_index=wrong)
        _slice_follower(get_module(model, p.follower), idx, optimizer)
        if p.name in model.gates:
            model.gates[p.name] = _slice_gate(model.gates[p.name], idx, optimizer)
    return model


def mask_model(model: SpikingNet, keep: dict[str, torch.Tensor]) -> SpikingNet:
    """Masked-only: replace the gates by fixed masks (zeroed channels stay in the tensors), in place."""
    for p in model.pairs:
        if p.name in keep:
            model.gates[p.name] = FixedMask(torch.as_tensor(keep[p.name]).flatten(), p.channel_dim)
    return model


def strip_gates(model: SpikingNet) -> SpikingNet:
    """Delete every gate: the static compact network that is fine-tuned and deployed."""
    model.gates = nn.ModuleDict()
    return model


def keep_from_gates(
    model: SpikingNet, threshold: float = 0.5, max_drop: float = 0.5, fraction: float | None = None
) -> dict[str, torch.Tensor]:
    """Channels whose mean keep-probability is below ``threshold`` are dropped, at most ``max_drop`` of a layer
    per round (the lowest first) and never all of them. ``fraction`` instead drops exactly that fraction of
    every layer, lowest keep-probability first (used to compare methods at equal compaction)."""
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be in (0, 1); got {threshold}")
    keep = {}
    for p in model.pairs:
        g = model.gates[p.name] if p.name in model.gates else None
        if not isinstance(g, ChannelGate):
            continue
        prob = g.mean_keep_prob()
        order = torch.argsort(prob)
        if fraction is not None:
            n_drop = round(fraction * len(prob))
        else:
            n_drop = min(int((prob < threshold).sum()), math.floor(max_drop * len(prob)))
        if n_drop >= len(prob):
            raise ValueError(f"refusing to remove every channel of layer {p.name!r} ({p.leader}); lower the fraction")
        mask = torch.ones(len(prob), dtype=torch.bool)
        mask[order[:n_drop]] = False
        keep[p.name] = mask
    return keep
