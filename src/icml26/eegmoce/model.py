"""EEG-MoCE top to bottom: Euclidean encoders -> Lorentz experts with learnable curvature -> domain Lorentz BN
-> Lorentz pooling -> curvature-aware cross-modal attention -> Lorentz midpoint -> Lorentz MLR; the Euclidean
baselines; training with a separate curvature schedule; subject-grouped cross-validation.

Names follow the paper (Sec. "Method", notes section 2): ``c_m = |K_m|`` is the curvature of modality m's expert
(``K_m = -c_m``, ``c_m = softplus(raw_m) + C_MIN`` so it stays negative-curved; or the paper's learnable
``k_m = 1/c_m`` with ``curvature_param="inverse"``), ``c_f = mean_m c_m`` the fusion
curvature, ``tau_m = tau_0 / sqrt(c_m)`` the query temperature and ``lambda log c_j`` the curvature prior.
Everything hyperbolic runs in the model's dtype (float64 by default).
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml26.eegmoce import lorentz as L
from icml26.eegmoce.config import ARMS, FITTED, RULES  # noqa: F401 (FITTED re-exported)
from icml26.eegmoce.data import MultimodalData, check_groups

log = logging.getLogger(__name__)

C_MIN = 1e-2  # lower clamp of |K| (the paper clamps k = 1/|K| from below; we clamp |K| from both sides)
C_MAX = 20.0
#: |K| of the ``moce-flat`` arm, frozen: the normalised tokens (tangent norm ~1) have a dimensionless radius
#: sqrt|K| r ~ 0.14, where sinh(t)/t - 1 < 0.4 %, so every expert and the fusion space are nearly Euclidean
FLAT_CURVATURE = 0.02


@dataclass
class ModelConfig:
    hidden: int = 8  # encoder features per time step
    steps: int = 8  # time steps per modality after the encoder (adaptive pooling)
    pool: int = 2  # Lorentz average-pool kernel along time
    fusion_dim: int = 16  # d of the fusion space H^d
    heads: int = 2
    layers: int = 2
    curvature_init: float = 1.0  # |K| at init, > 0
    learn_curvature: bool = True
    domain_bn: bool = True
    #: a learnable per-modality bias on the layer-1 attention logits (0 at init): the gate that a frozen-curvature
    #: ablation would otherwise lose with the prior lambda log|K_j| (the control arm ``moce-fixed-k-gate``)
    modality_gate: bool = False
    #: bound the gate control's bias to the range the prior lambda log|K_j| can span at lambda = prior_init and |K|
    #: in [C_MIN, C_MAX] ([-1.38, +0.90] at 0.3): ``bias = lo + (hi - lo) sigmoid(raw)``, 0 at init (v4 of the
    #: claims; v3's control had an unbounded bias, -3.38 to +3.20 at small)
    gate_bounded: bool = True
    #: ``softplus``: |K| = softplus(raw) + C_MIN (the library's); ``inverse``: the paper's learnable k = 1/|K| (the
    #: raw parameter is k itself), clamped to [1/C_MAX, 1/C_MIN] (the paper's k >= k_min is the lower end)
    curvature_param: str = "softplus"
    #: ``ambient``: y_s = W x + b, y_0 recomputed (the library's); ``hybonet``: the norm-rescaling Lorentz linear of
    #: HyboNet (Chen et al. 2022), whose time output sets the dimensionless radius cosh(theta) of each output point
    linear: str = "ambient"
    prior_init: float = 0.3  # lambda of the curvature prior at init
    dropout: float = 0.25
    eeg_f1: int = 4
    eeg_depth: int = 2
    kernel_seconds: float = 0.25  # EEGNet temporal kernel = fs * kernel_seconds samples

    def __post_init__(self) -> None:
        if not (math.isfinite(self.curvature_init) and self.curvature_init > C_MIN):
            raise ValueError(
                f"curvature initialisation |K| must be > {C_MIN} (K = -|K| < 0); got {self.curvature_init}"
            )
        if self.curvature_init > C_MAX:
            raise ValueError(f"curvature initialisation |K| must be <= {C_MAX}; got {self.curvature_init}")
        if self.curvature_param not in ("softplus", "inverse"):
            raise ValueError(f"curvature_param must be 'softplus' or 'inverse'; got {self.curvature_param!r}")
        if self.linear not in ("ambient", "hybonet"):
            raise ValueError(f"linear must be 'ambient' or 'hybonet'; got {self.linear!r}")
        if self.steps % self.pool:
            raise ValueError(f"steps ({self.steps}) must be a multiple of the pooling kernel ({self.pool})")


@dataclass
class TrainConfig:
    epochs: int = 20
    lr: float = 3e-3
    weight_decay: float = 1e-4
    # the curvatures' lr = lr x this: at 100 the experts' |K| separate on EEGMAT (v2's rotation probe 0.25; 10x reads
    # 0.009); the v3 geometry probe is inert at both (README "Curvature liveness"); at 1.0 |K| moves < 0.1 in 12 epochs
    curvature_lr_scale: float = 100.0
    warmup_epochs: int = 1  # curvature lr at 0.01x during warm-up
    curvature_clip: float = 1.0  # grad-norm clip of the curvature parameters
    domains_per_batch: int = 4
    trials_per_domain: int = 12
    #: train the domain BNs' scale gamma in the curvatures' group (same lr, warm-up and clip): the BN output radius
    #: is about gamma sqrt|K|. The default since v4 of the claims: the only piece of the paper's recipe tried that
    #: made the curvature probe live on the tuning seed (README "Curvature liveness", v4 round)
    gamma_at_curvature_rate: bool = True


# ---------------------------------------------------------------------------------------------------------
# Euclidean encoders


class EEGNetEncoder(nn.Module):
    """EEGNet-style encoder (Lawhern et al. 2018): temporal conv -> depthwise spatial conv -> separable conv.
    (B, C, T) -> (B, steps, F1*D)"""

    def __init__(self, channels: int, samples: int, fs: float, cfg: ModelConfig) -> None:
        super().__init__()
        k = round(fs * cfg.kernel_seconds) | 1  # odd temporal kernel
        if k < 3:
            raise ValueError(
                f"fs = {fs} Hz gives a temporal kernel of {k} samples (fs x {cfg.kernel_seconds} s); "
                "the EEG encoder needs >= 3: sampling rate too low or wrong"
            )
        if k > samples:
            raise ValueError(
                f"sampling-rate mismatch: the EEG temporal kernel is {k} samples (fs = {fs} Hz x "
                f"{cfg.kernel_seconds} s) but trials have only {samples} samples"
            )
        if samples // 4 < cfg.steps:
            raise ValueError(f"EEG trials of {samples} samples are too short for {cfg.steps} steps after pooling by 4")
        f2 = cfg.eeg_f1 * cfg.eeg_depth
        self.temporal = nn.Conv2d(1, cfg.eeg_f1, (1, k), padding=(0, k // 2), bias=False)
        self.bn1 = nn.BatchNorm2d(cfg.eeg_f1)
        self.spatial = nn.Conv2d(cfg.eeg_f1, f2, (channels, 1), groups=cfg.eeg_f1, bias=False)
        self.bn2 = nn.BatchNorm2d(f2)
        self.separable = nn.Sequential(
            nn.Conv2d(f2, f2, (1, 7), padding=(0, 3), groups=f2, bias=False), nn.Conv2d(f2, cfg.hidden, 1, bias=False)
        )
        self.bn3 = nn.BatchNorm2d(cfg.hidden)
        self.pool = nn.AdaptiveAvgPool2d((1, cfg.steps))
        self.drop = nn.Dropout(cfg.dropout)
        self.kernel = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.bn1(self.temporal(x.unsqueeze(1)))  # (B, F1, C, T)
        h = self.drop(F.avg_pool2d(F.elu(self.bn2(self.spatial(h))), (1, 4)))  # (B, F1*D, 1, T/4)
        h = self.drop(self.pool(F.elu(self.bn3(self.separable(h)))))  # (B, hidden, 1, steps)
        return h.squeeze(2).transpose(1, 2)  # (B, steps, hidden)


class StreamEncoder(nn.Module):
    """Audio/video feature streams: 1x1 conv -> two stride-2 temporal convs.  (B, F, T) -> (B, steps, hidden)"""

    def __init__(self, features: int, frames: int, cfg: ModelConfig) -> None:
        super().__init__()
        if frames < cfg.steps:
            raise ValueError(f"streams of {frames} frames are shorter than the {cfg.steps} encoder steps")
        h = cfg.hidden
        self.net = nn.Sequential(
            nn.Conv1d(features, h, 1),
            nn.ELU(),
            nn.Conv1d(h, h, 3, stride=2, padding=1),
            nn.ELU(),
            nn.Conv1d(h, h, 3, stride=2, padding=1),
            nn.ELU(),
            nn.AdaptiveAvgPool1d(cfg.steps),
            nn.Dropout(cfg.dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).transpose(1, 2)  # (B, steps, hidden)


def make_encoders(shapes: dict[str, tuple[int, int]], fs: float, cfg: ModelConfig) -> nn.ModuleDict:
    return nn.ModuleDict(
        {m: EEGNetEncoder(c, t, fs, cfg) if m == "eeg" else StreamEncoder(c, t, cfg) for m, (c, t) in shapes.items()}
    )


# ---------------------------------------------------------------------------------------------------------
# normalisation per domain (subject)


def _group_index(domains: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Dense subject index per trial and trials per subject: (B,), (G,)."""
    _, gid, count = torch.unique(domains, return_inverse=True, return_counts=True)
    return gid, count


class EuclideanDomainBN(nn.Module):
    """Per-subject standardisation of (B, S, F) features (batch statistics of each subject; at test time the
    test subject's own unlabeled trials), or plain BatchNorm when ``domain=False``."""

    def __init__(self, features: int, domain: bool) -> None:
        super().__init__()
        self.domain = domain
        self.bn = nn.BatchNorm1d(features, affine=False)
        self.gamma = nn.Parameter(torch.ones(features))
        self.beta = nn.Parameter(torch.zeros(features))

    def forward(self, z: torch.Tensor, domains: torch.Tensor) -> torch.Tensor:
        if not self.domain:
            out = self.bn(z.transpose(1, 2)).transpose(1, 2)
        else:
            gid, count = _group_index(domains)  # (B,), (G,)
            n = (count * z.shape[1]).unsqueeze(1)  # tokens per subject
            mu = z.sum(1).new_zeros(count.numel(), z.shape[2]).index_add_(0, gid, z.sum(1)) / n  # (G, F)
            dev = z - mu[gid].unsqueeze(1)
            var = dev.new_zeros(count.numel(), z.shape[2]).index_add_(0, gid, (dev * dev).sum(1)) / n
            out = dev / torch.sqrt(var[gid].unsqueeze(1) + 1e-5)
        return out * self.gamma + self.beta


class LorentzDomainBN(nn.Module):
    """Lorentz batch norm per domain: centroid mu and Frechet variance sigma^2 = mean d(x, mu)^2 of each subject's
    points; ``x -> expmap0(gamma * PT_{mu->o}(log_mu x) / sqrt(sigma^2 + eps) + beta)``. Without ``domain`` the
    statistics are pooled over the batch (running averages at test time), like ordinary BN."""

    def __init__(self, features: int, domain: bool, momentum: float = 0.1) -> None:
        super().__init__()
        self.domain, self.momentum = domain, momentum
        self.gamma = nn.Parameter(torch.ones(()))
        self.beta = nn.Parameter(torch.zeros(features))  # tangent shift at the origin
        self.register_buffer("running_mean", torch.zeros(features))  # tangent at origin of the running centroid
        self.register_buffer("running_var", torch.ones(()))
        #: statistics (mu (1, F+1), var (1,)) to use instead of the batch's own, set by :func:`predict` when the
        #: domain BN is refitted on another subject (the negative control of the domain-BN claim)
        self.refitted: tuple[torch.Tensor, torch.Tensor] | None = None
        self.last_stats: tuple[torch.Tensor, torch.Tensor] | None = None

    def _normalise(self, pts: torch.Tensor, mu: torch.Tensor, var: torch.Tensor, c) -> torch.Tensor:
        v = L.transport_to_origin(mu, L.logmap(mu, pts, c), c)  # (n, F) tangent at origin
        return self.gamma * v / torch.sqrt(var + 1e-5) + self.beta

    def forward(self, x: torch.Tensor, domains: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        B, S, D1 = x.shape  # (B, S, F+1)
        if self.domain:  # statistics of each subject, vectorised with index_add
            gid, count = _group_index(domains)
            G = count.numel()
            m = x.new_zeros(G, D1).index_add_(0, gid, x.sum(1))  # (G, F+1) unnormalised centroid
            mu = L.centroid(m.unsqueeze(1), c, dim=1)  # (G, F+1)
            d2 = (L.dist(x, mu[gid].unsqueeze(1), c) ** 2).sum(1)  # (B,)
            var = x.new_zeros(G).index_add_(0, gid, d2) / (count * S)  # (G,)
            self.last_stats = (mu.detach(), var.detach())
            if self.refitted is not None:  # one subject's batch, normalised with statistics fitted elsewhere
                mu, var = self.refitted
                gid = torch.zeros_like(gid)
            mu_t = mu[gid].unsqueeze(1).expand(B, S, D1)  # (B, S, F+1)
            return L.expmap0(self._normalise(x, mu_t, var[gid].view(B, 1, 1), c), c)
        pts = x.reshape(-1, D1)
        if self.training:
            mu = L.centroid(pts, c, dim=0)
            var = (L.dist(pts, mu, c) ** 2).mean()
            with torch.no_grad():
                self.running_mean.lerp_(L.logmap0(mu, c).detach(), self.momentum)
                self.running_var.lerp_(var.detach(), self.momentum)
        else:
            mu, var = L.expmap0(self.running_mean, c), self.running_var
        return L.expmap0(self._normalise(pts, mu, var, c).reshape(B, S, D1 - 1), c)


# ---------------------------------------------------------------------------------------------------------
# Lorentz layers


class LorentzLinear(nn.Module):
    """Fully hyperbolic linear layer on the ambient coordinates, (..., d_in+1) -> (..., heads * (d_out+1)).

    ``ambient``: ``y_s = W x + b``, ``y_0 = sqrt(1/c + |y_s|^2)``. ``hybonet`` (Chen et al. 2022, "Fully hyperbolic
    neural networks", their Lorentz linear with norm rescaling): ``h = W x + b`` in R^{d_out+1}, the dimensionless
    time ``t = sigmoid(h_0) e^s + 1.1`` (s learnable, init log 10, at most log 10) = cosh(theta) of the output
    point, ``y = (t, sqrt(t^2 - 1) h_s / |h_s|) / sqrt(c)``, so the layer itself places its outputs at a radius
    theta in [0.44, 3.1] whatever |K| is. ``heads`` > 1 returns that many points per input, (..., heads, d_out+1).
    """

    def __init__(self, d_in: int, d_out: int, kind: str = "ambient", heads: int = 1) -> None:
        super().__init__()
        self.kind, self.heads, self.d_out = kind, heads, d_out
        self.lin = nn.Linear(d_in + 1, heads * (d_out + (kind == "hybonet")))
        self.log_scale = nn.Parameter(torch.tensor(math.log(10.0))) if kind == "hybonet" else None

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        if self.heads > 1:
            h = h.reshape(*h.shape[:-1], self.heads, -1)  # (..., heads, d_out [+1])
        if self.kind == "ambient":
            return L.project(h, c)
        t = torch.sigmoid(h[..., :1]) * self.log_scale.clamp_max(math.log(10.0)).exp() + 1.1  # cosh(theta) >= 1.1
        hs = h[..., 1:]
        hs = hs * torch.sqrt(t * t - 1.0) / hs.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return torch.cat([t, hs], dim=-1) / c.sqrt()


def hyp_layer_norm(x: torch.Tensor, c: torch.Tensor, ln: nn.LayerNorm) -> torch.Tensor:
    """HypLayerNorm: LayerNorm of the spatial part, time coordinate recomputed."""
    return L.project(ln(x[..., 1:]), c)


class LorentzMLR(nn.Module):
    """Lorentz multinomial logistic regression (Bdeir et al. 2024): the logit of class k is ``|z_k|`` times the
    signed distance to the hyperplane (z_k, a_k): ``|z_k|/sqrt(c) asinh(sqrt(c) alpha_k / |z_k|)`` with
    ``alpha_k = cosh(sqrt(c) a_k) <z_k, x_s> - sinh(sqrt(c) a_k) x_0``.  (B, d+1) -> (B, n_classes)"""

    def __init__(self, d: int, n_classes: int) -> None:
        super().__init__()
        self.z = nn.Parameter(torch.randn(n_classes, d) / math.sqrt(d))
        self.a = nn.Parameter(torch.zeros(n_classes))

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        sc = c.sqrt()
        znorm = self.z.norm(dim=-1).clamp_min(1e-12)  # (K,)
        alpha = torch.cosh(sc * self.a) * (x[:, 1:] @ self.z.T) - torch.sinh(sc * self.a) * x[:, :1]  # (B, K)
        return znorm / sc * torch.asinh(sc * alpha / znorm)


class LorentzExpert(nn.Module):
    """One modality's expert in H_{c_m}: L2-normalise -> lift -> domain BN -> Lorentz ELU -> Lorentz average pool
    -> Lorentz flatten -> Lorentz linear to the fusion dimension.  (B, S, F) -> (B, d+1)"""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.pool = cfg.pool
        self.bn = LorentzDomainBN(cfg.hidden, cfg.domain_bn)
        self.out = LorentzLinear(cfg.hidden * cfg.steps // cfg.pool, cfg.fusion_dim, cfg.linear)

    def forward(self, z: torch.Tensor, domains: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        B, S, Fh = z.shape
        x = L.project(F.normalize(z, dim=-1), c)  # (B, S, F+1): pad the time coordinate
        x = self.bn(x, domains, c)  # (B, S, F+1)
        x = L.project(F.elu(x[..., 1:]), c)  # Lorentz ELU
        x = L.centroid(x.reshape(B, S // self.pool, self.pool, Fh + 1), c, dim=2)  # (B, S/p, F+1) pooling
        x = L.project(x[..., 1:].reshape(B, -1), c)  # (B, S/p * F + 1) Lorentz flatten
        return self.out(x, c)  # (B, d+1)


class CurvatureAwareAttention(nn.Module):
    """One fusion layer over M modality tokens in H_{c_f}: every modality attends only to the others.

    score_ij = 2/c_f + 2 <q_i, k_j>_L  (= -||q_i - k_j||_L^2), logits_ij = score_ij / tau_i + lambda log c_j
    with tau_i = tau_0 / sqrt(c_i) (query modality's curvature), the prior only in layer 1; values aggregated by the
    Lorentz weighted midpoint, heads combined by midpoint, residual midpoint, HypLayerNorm.
    """

    def __init__(self, cfg: ModelConfig, prior: bool) -> None:
        super().__init__()
        d, H = cfg.fusion_dim, cfg.heads
        self.H, self.d = H, d
        self.q, self.k, self.v = (LorentzLinear(d, d, cfg.linear, heads=H) for _ in range(3))
        self.log_tau0 = nn.Parameter(torch.tensor(0.5 * math.log(d)))  # tau_0 init sqrt(d)
        self.raw_lambda = nn.Parameter(torch.tensor(math.log(math.expm1(cfg.prior_init)))) if prior else None
        self.ln = nn.LayerNorm(d)
        self.attention: torch.Tensor | None = None  # last (B, H, M, M) weights, for contributions

    def _heads(self, lin: LorentzLinear, x: torch.Tensor, cf: torch.Tensor) -> torch.Tensor:
        return lin(x, cf).reshape(*x.shape[:2], self.H, self.d + 1).transpose(1, 2)  # (B, H, M, d+1)

    def _logits_bias(self, c: torch.Tensor, c_prior: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scale = c.sqrt() / self.log_tau0.exp()  # (M,) = 1 / tau_i
        bias = F.softplus(self.raw_lambda) * c_prior.log() if self.raw_lambda is not None else torch.zeros_like(c)
        return scale, bias

    def forward(
        self,
        x: torch.Tensor,
        c: torch.Tensor,
        cf: torch.Tensor,
        vectorised: bool = True,
        gate: torch.Tensor | None = None,
        c_prior: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``c``: (M,) |K| of the geometry (temperatures); ``c_prior``: (M,) |K| of the prior (default ``c``)."""
        B, M, _ = x.shape  # (B, M, d+1)
        q, k, v = self._heads(self.q, x, cf), self._heads(self.k, x, cf), self._heads(self.v, x, cf)
        scale, bias = self._logits_bias(c, c if c_prior is None else c_prior)
        if gate is not None:  # (M,) learnable key bias of the gate control
            bias = bias + gate
        if vectorised:
            kflip = torch.cat([-k[..., :1], k[..., 1:]], dim=-1)
            score = 2.0 / cf + 2.0 * q @ kflip.transpose(-1, -2)  # (B, H, M, M) = -||q_i - k_j||_L^2
            logits = score * scale[:, None] + bias[None, :]
            eye = torch.eye(M, dtype=torch.bool)
            alpha = torch.softmax(logits.masked_fill(eye, float("-inf")), dim=-1)  # each attends to the others
            out = L.centroid(v.unsqueeze(2), cf, weights=alpha, dim=3)  # (B, H, M, d+1) weighted midpoint
        else:  # reference loop over query modalities and heads, as the authors' code does
            outs, alphas = [], []
            for i in range(M):
                others = [j for j in range(M) if j != i]
                per_head, a_heads = [], []
                for h in range(self.H):
                    s = -L.sqdist_lorentz(q[:, h, i : i + 1], k[:, h, others], cf)  # (B, M-1)
                    a = torch.softmax(s * scale[i] + bias[others], dim=-1)
                    per_head.append(L.centroid(v[:, h, others], cf, weights=a, dim=1))  # (B, d+1)
                    full = torch.zeros(B, M, dtype=x.dtype)
                    full[:, others] = a
                    a_heads.append(full)
                outs.append(torch.stack(per_head, 1))  # (B, H, d+1)
                alphas.append(torch.stack(a_heads, 1))  # (B, H, M)
            out, alpha = torch.stack(outs, 2), torch.stack(alphas, 2)  # (B, H, M, d+1), (B, H, M, M)
        self.attention = alpha.detach()
        out = L.centroid(out, cf, dim=1)  # (B, M, d+1) heads combined by midpoint
        out = L.centroid(torch.stack([x, out], dim=2), cf, dim=2)  # residual midpoint
        return hyp_layer_norm(out, cf, self.ln)


class MoCE(nn.Module):
    """EEG-MoCE: per-modality Euclidean encoder -> Lorentz expert with its own learnable curvature -> curvature
    projection to the fusion space -> curvature-aware attention layers -> midpoint over modalities -> hyperbolic
    linear -> Lorentz MLR."""

    def __init__(self, shapes: dict[str, tuple[int, int]], fs: float, n_classes: int, cfg: ModelConfig) -> None:
        super().__init__()
        self.names = list(shapes)
        self.shapes, self.fs, self.n_classes = {m: tuple(shapes[m]) for m in shapes}, fs, n_classes
        self.encoders = make_encoders(shapes, fs, cfg)
        self.experts = nn.ModuleDict({m: LorentzExpert(cfg) for m in shapes})
        self.curvature_param = cfg.curvature_param
        if cfg.curvature_param == "inverse":
            raw = 1.0 / cfg.curvature_init  # the paper's k = 1/|K|
        else:
            raw = math.log(math.expm1(cfg.curvature_init - C_MIN))  # inverse softplus
        self.raw_curvature = nn.Parameter(torch.full((len(shapes),), raw), requires_grad=cfg.learn_curvature)
        self.layers = nn.ModuleList(CurvatureAwareAttention(cfg, prior=(i == 0)) for i in range(cfg.layers))
        self.head = LorentzLinear(cfg.fusion_dim, cfg.fusion_dim, cfg.linear)
        self.mlr = LorentzMLR(cfg.fusion_dim, n_classes)
        self.vectorised = True
        self.raw_gate = nn.Parameter(torch.zeros(len(shapes))) if cfg.modality_gate else None  # (M,)
        # the gate's bounds: the prior's range at lambda = prior_init, |K| in [C_MIN, C_MAX]
        self.gate_range = (cfg.prior_init * math.log(C_MIN), cfg.prior_init * math.log(C_MAX))
        self.gate_bounded = cfg.gate_bounded
        if cfg.gate_bounded and cfg.modality_gate:
            lo, hi = self.gate_range
            with torch.no_grad():  # bias 0 at init: sigmoid(raw) = -lo / (hi - lo)
                self.raw_gate.fill_(math.log(-lo / hi))
        #: (M,) |K| that the geometry uses instead of the learned ones (test-time probes; the prior keeps the
        #: learned |K|); None in training and ordinary use
        self.geometry_override: torch.Tensor | None = None

    @property
    def curvatures(self) -> torch.Tensor:
        """|K_m| per modality, (M,): softplus keeps K_m = -|K_m| < 0; clamped to [C_MIN, C_MAX]. With the paper's
        parameterisation, |K_m| = 1 / k_m with k_m clamped to [1/C_MAX, 1/C_MIN]."""
        if self.curvature_param == "inverse":
            return 1.0 / self.raw_curvature.clamp(1.0 / C_MAX, 1.0 / C_MIN)
        return (F.softplus(self.raw_curvature) + C_MIN).clamp_max(C_MAX)

    @property
    def gate(self) -> torch.Tensor | None:
        """(M,) per-modality bias on the layer-1 logits of the gate control (None without one); bounded to the
        prior's range with ``gate_bounded``."""
        if self.raw_gate is None or not self.gate_bounded:
            return self.raw_gate
        lo, hi = self.gate_range
        return lo + (hi - lo) * torch.sigmoid(self.raw_gate)

    def forward(self, inputs: dict[str, torch.Tensor], domains: torch.Tensor) -> torch.Tensor:
        c_prior = self.curvatures  # (M,) learned |K|: the fusion prior lambda log|K_j| always reads these
        # the geometry (experts, projection, temperatures) reads geometry_override when a probe sets it
        c = c_prior if self.geometry_override is None else self.geometry_override.to(c_prior)  # (M,)
        cf = c.mean()  # fusion curvature
        tokens = []
        for i, m in enumerate(self.names):
            x = self.experts[m](self.encoders[m](inputs[m]), domains, c[i])  # (B, d+1) in H_{c_m}
            tokens.append(L.rescale_curvature(x, c[i], cf))  # to H_{c_f}
        x = torch.stack(tokens, dim=1)  # (B, M, d+1)
        for i, layer in enumerate(self.layers):
            x = layer(x, c, cf, self.vectorised, self.gate if i == 0 else None, c_prior=c_prior)
        x = L.centroid(x, cf, dim=1)  # (B, d+1) midpoint over modalities
        return self.mlr(self.head(x, cf), cf)  # (B, n_classes)

    def contributions(self) -> np.ndarray:
        """Share of attention each modality receives as a key in layer 1 (mean over batch, heads, queries)."""
        a = self.layers[0].attention.mean((0, 1))  # (M, M) rows = queries
        return (a.sum(0) / a.sum()).numpy()


class EuclideanFusion(nn.Module):
    """Euclidean baselines on the same encoders and per-subject BN: ``eeg-only`` (EEGNet + linear), ``late-fusion``
    (concat -> MLP) and ``euclid-xattn`` (the MoCE fusion in flat space: masked cross-attention with score
    -|q - k|^2 / tau_0, mean of heads, residual mean, LayerNorm, mean over modalities, linear)."""

    def __init__(self, shapes, fs: float, n_classes: int, cfg: ModelConfig, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.names = ["eeg"] if kind == "eeg-only" else list(shapes)
        self.shapes, self.fs, self.n_classes = {m: tuple(shapes[m]) for m in self.names}, fs, n_classes
        self.encoders = make_encoders({m: shapes[m] for m in self.names}, fs, cfg)
        self.bn = nn.ModuleDict({m: EuclideanDomainBN(cfg.hidden, cfg.domain_bn) for m in self.names})
        self.pool, d, H = cfg.pool, cfg.fusion_dim, cfg.heads
        flat = cfg.hidden * cfg.steps // cfg.pool
        self.proj = nn.ModuleDict({m: nn.Linear(flat, d) for m in self.names})
        self.H, self.d = H, d
        if kind == "euclid-xattn":
            self.qkv = nn.ModuleList(nn.Linear(d, 3 * H * d) for _ in range(cfg.layers))
            self.log_tau0 = nn.Parameter(torch.full((cfg.layers,), 0.5 * math.log(d)))
            self.lns = nn.ModuleList(nn.LayerNorm(d) for _ in range(cfg.layers))
        hidden = d * len(self.names)
        self.classifier = (
            nn.Sequential(nn.ELU(), nn.Linear(hidden, n_classes)) if kind != "euclid-xattn" else nn.Linear(d, n_classes)
        )
        self.attention = None

    def forward(self, inputs: dict[str, torch.Tensor], domains: torch.Tensor) -> torch.Tensor:
        tokens = []
        for m in self.names:
            z = F.elu(self.bn[m](self.encoders[m](inputs[m]), domains))  # (B, S, F)
            B = z.shape[0]
            tokens.append(self.proj[m](F.avg_pool1d(z.transpose(1, 2), self.pool).transpose(1, 2).reshape(B, -1)))
        x = torch.stack(tokens, 1)  # (B, M, d)
        if self.kind != "euclid-xattn":
            return self.classifier(x.reshape(x.shape[0], -1))
        M = x.shape[1]
        eye = torch.eye(M, dtype=torch.bool)
        for i, (qkv, ln) in enumerate(zip(self.qkv, self.lns, strict=True)):
            q, k, v = qkv(x).reshape(B, M, 3, self.H, self.d).permute(2, 0, 3, 1, 4)  # 3 x (B, H, M, d)
            score = -(torch.cdist(q, k) ** 2) / self.log_tau0[i].exp()
            alpha = torch.softmax(score.masked_fill(eye, float("-inf")), -1)
            if i == 0:
                self.attention = alpha.detach()
            x = ln(0.5 * (x + (alpha @ v).mean(1)))
        return self.classifier(x.mean(1))

    def contributions(self) -> np.ndarray:
        if self.attention is None:
            return np.full(len(self.names), 1.0 / len(self.names))
        a = self.attention.mean((0, 1))
        return (a.sum(0) / a.sum()).numpy()


class BraindecodeEEG(nn.Module):
    """A braindecode 0.8 EEG classifier (EEG only) behind the arms' interface, trained by :func:`train` with the
    same budget as every arm. ``eegnet``: ``EEGNetv4`` (F1 8, D 2, temporal kernel 0.5 s = 64 samples at
    braindecode's 128 Hz, scaled to ``fs``); ``shallow``: ``ShallowFBCSPNet`` with braindecode's 250 Hz kernel,
    pool and stride (25, 75, 15 samples) scaled to ``fs``. Their BatchNorm is the ordinary, pooled one (no
    per-subject statistics). (B, C, T) -> (B, n_classes)"""

    def __init__(self, shapes, fs: float, n_classes: int, kind: str) -> None:
        super().__init__()
        import warnings

        from braindecode.models import EEGNetv4, ShallowFBCSPNet

        self.names, self.kind = ["eeg"], kind
        self.shapes, self.fs, self.n_classes = {"eeg": tuple(shapes["eeg"])}, fs, n_classes
        C, T = self.shapes["eeg"]
        with warnings.catch_warnings():  # braindecode warns about its renamed arguments
            warnings.simplefilter("ignore")
            if kind == "eegnet":
                k = max(3, round(0.5 * fs))
                if T < 32 or k > T:
                    raise ValueError(f"braindecode EEGNetv4 needs trials of >= 32 samples and >= 0.5 s; got {T}")
                self.net = EEGNetv4(n_chans=C, n_outputs=n_classes, n_times=T, kernel_length=k)
            else:
                pool, stride = max(2, round(0.3 * fs)), max(1, round(0.06 * fs))
                if T < pool + max(2, round(0.1 * fs)):
                    raise ValueError(f"braindecode ShallowFBCSPNet needs trials longer than {pool} samples; got {T}")
                self.net = ShallowFBCSPNet(
                    n_chans=C,
                    n_outputs=n_classes,
                    n_times=T,
                    filter_time_length=max(2, round(0.1 * fs)),
                    pool_time_length=pool,
                    pool_time_stride=stride,
                    final_conv_length="auto",
                    add_log_softmax=False,
                )

    def forward(self, inputs: dict[str, torch.Tensor], domains: torch.Tensor) -> torch.Tensor:
        return self.net(inputs["eeg"])  # (B, n_classes) logits (EEGNetv4: log-probabilities)

    def contributions(self) -> np.ndarray:
        return np.ones(1)


FROZEN_CURVATURE_ARMS = ("moce-fixed-k", "moce-fixed-k-gate", "moce-flat")


def build_model(arm: str, shapes, fs: float, n_classes: int, cfg: ModelConfig) -> nn.Module:
    """One of :data:`ARMS` (the ablations override ``learn_curvature`` / ``domain_bn`` / ``curvature_init``)."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; choose from {', '.join(ARMS)}")
    if arm.startswith("moce"):
        cfg = ModelConfig(
            **{
                **asdict(cfg),
                "learn_curvature": cfg.learn_curvature and arm not in FROZEN_CURVATURE_ARMS,
                "modality_gate": cfg.modality_gate or arm == "moce-fixed-k-gate",
                "domain_bn": cfg.domain_bn and arm != "moce-no-dbn",
                "curvature_init": FLAT_CURVATURE if arm == "moce-flat" else cfg.curvature_init,
            }
        )
        return MoCE(shapes, fs, n_classes, cfg)
    if arm.startswith("braindecode-"):
        return BraindecodeEEG(shapes, fs, n_classes, "eegnet" if arm == "braindecode-eegnet" else "shallow")
    return EuclideanFusion(shapes, fs, n_classes, cfg, arm)


# ---------------------------------------------------------------------------------------------------------
# training and evaluation


def to_tensors(d: MultimodalData, names: list[str], dtype=torch.float64) -> dict[str, torch.Tensor]:
    return {m: torch.as_tensor(d.modalities[m], dtype=dtype) for m in names}


def check_data(model: nn.Module, d: MultimodalData, *, labels: bool = False) -> None:
    """ValueError when trials do not fit the model: a missing modality, other shapes, another EEG sampling rate,
    or (``labels``) a class the classifier does not have."""
    for m in model.names:
        if m not in d.modalities:
            raise ValueError(f"the data lack the modality {m!r} the model was built for (has {d.names})")
        if tuple(d.modalities[m].shape[1:]) != model.shapes[m]:
            raise ValueError(
                f"modality {m!r} trials are {tuple(d.modalities[m].shape[1:])}; "
                f"the model was built for {model.shapes[m]}"
            )
    if abs(d.fs - model.fs) > 1e-9 * model.fs:
        raise ValueError(
            f"sampling-rate mismatch: the data are at {d.fs} Hz, the EEG encoder's kernels were built for "
            f"{model.fs} Hz; resample the data first"
        )
    if labels and d.y.max() >= model.n_classes:
        raise ValueError(f"label {int(d.y.max())} is out of range for a model of {model.n_classes} classes")


def _batches(subject: np.ndarray, cfg: TrainConfig, rng: np.random.Generator) -> list[np.ndarray]:
    """Batches of ``domains_per_batch`` subjects x ``trials_per_domain`` trials (paper: 5 subjects per batch)."""
    chunks = []
    for s in np.unique(subject):
        idx = rng.permutation(np.flatnonzero(subject == s))
        chunks += [idx[i : i + cfg.trials_per_domain] for i in range(0, idx.size, cfg.trials_per_domain)]
    order = rng.permutation(len(chunks))
    return [
        np.concatenate([chunks[j] for j in order[i : i + cfg.domains_per_batch]])
        for i in range(0, len(order), cfg.domains_per_batch)
    ]


#: parameters trained at the curvature's rate: the log-curvatures and the gate control's per-modality bias
GEOMETRY_PARAMETERS = ("raw_curvature", "raw_gate")


def train(
    model: nn.Module, d: MultimodalData, cfg: TrainConfig, seed: int, dtype=torch.float64, on_epoch=None
) -> list[float]:
    """Adam on Euclidean parameters; curvatures in their own group (warm-up at 0.01x, grad-norm clip); returns
    the loss per epoch. All parameters are Euclidean (biases live in tangent spaces at the origin), so no
    Riemannian optimiser is needed. ``on_epoch(epoch, model)`` (1-based epoch) is called after each epoch (the
    validation readings of :func:`tune`); returning True stops training there (early stopping)."""
    # the curvatures and the gate control's modality bias (its stand-in in ``moce-fixed-k-gate``) share one group:
    # the same lr (lr x curvature_lr_scale), warm-up and clip, so the ablation's gate can move as far as |K| does
    fast = GEOMETRY_PARAMETERS
    if cfg.gamma_at_curvature_rate:  # the experts' domain-BN scales too
        fast = fast + tuple(n for n, _ in model.named_parameters() if n.startswith("experts.") and n.endswith(".gamma"))
    curv = [p for n, p in model.named_parameters() if n in fast and p.requires_grad]
    rest = [p for n, p in model.named_parameters() if n not in fast and p.requires_grad]
    groups = [{"params": rest, "lr": cfg.lr, "weight_decay": cfg.weight_decay}]
    if curv:
        groups.append({"params": curv, "lr": cfg.lr * cfg.curvature_lr_scale, "weight_decay": 0.0})
    check_data(model, d, labels=True)
    opt = torch.optim.Adam(groups)
    X, y, dom = to_tensors(d, model.names, dtype), torch.as_tensor(d.y), torch.as_tensor(d.subject)
    rng = np.random.default_rng(seed)
    losses = []
    model.train()
    for epoch in range(cfg.epochs):
        if curv:
            opt.param_groups[1]["lr"] = cfg.lr * cfg.curvature_lr_scale * (0.01 if epoch < cfg.warmup_epochs else 1.0)
        total = 0.0
        for idx in _batches(d.subject, cfg, rng):
            ix = torch.as_tensor(idx)
            loss = F.cross_entropy(model({m: X[m][ix] for m in model.names}, dom[ix]), y[ix])
            opt.zero_grad()
            loss.backward()
            if curv:
                torch.nn.utils.clip_grad_norm_(curv, cfg.curvature_clip)
            opt.step()
            total += loss.item() * idx.size
        losses.append(total / d.n)
        if not math.isfinite(losses[-1]):
            raise FloatingPointError(f"training diverged at epoch {epoch} (loss {losses[-1]})")
        if on_epoch is not None:
            stop = on_epoch(epoch + 1, model)
            model.train()
            if stop is True:  # the callback's early stopping
                break
    return losses


@torch.no_grad()
def predict(
    model: nn.Module, d: MultimodalData, dtype=torch.float64, bn_source: dict[int, MultimodalData] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Class predictions and mean layer-1 attention contributions. Each subject is passed as one batch: the domain
    BN refits its statistics on that subject's unlabeled trials (source-free adaptation), never on labels or on
    other subjects. ``bn_source`` (the negative control of the domain-BN claim) maps a subject id to another
    subject's trials, on which its domain BN is refitted instead."""
    check_data(model, d)
    model.eval()
    X, dom = to_tensors(d, model.names, dtype), torch.as_tensor(d.subject)
    pred, contrib = np.empty(d.n, dtype=np.int64), []
    for s in np.unique(d.subject):
        ix = torch.as_tensor(np.flatnonzero(d.subject == s))
        try:
            if bn_source is not None:
                refit_domain_bn(model, bn_source[int(s)], dtype)
            pred[ix.numpy()] = model({m: X[m][ix] for m in model.names}, dom[ix]).argmax(1).numpy()
        finally:
            refit_domain_bn(model, None, dtype)
        contrib.append(model.contributions())
    return pred, np.mean(contrib, axis=0)


@torch.no_grad()
def refit_domain_bn(model: nn.Module, source: MultimodalData | None, dtype=torch.float64) -> None:
    """Make every domain Lorentz BN of ``model`` normalise with the statistics of one subject's ``source`` trials
    instead of each batch's own (``None`` restores the default)."""
    layers = [b for b in model.modules() if isinstance(b, LorentzDomainBN) and b.domain]
    for b in layers:
        b.refitted = None
    if source is None:
        return
    if not layers:
        raise ValueError("refitting the domain BN on other trials needs a MoCE model with domain BN")
    if np.unique(source.subject).size != 1:
        raise ValueError("the domain BN is refitted on the trials of exactly one subject")
    check_data(model, source)
    model.eval()
    model(to_tensors(source, model.names, dtype), torch.as_tensor(source.subject))
    for b in layers:
        b.refitted = b.last_stats


@torch.no_grad()
def embeddings(model: nn.Module, d: MultimodalData, dtype=torch.float64) -> dict[str, np.ndarray]:
    """Each modality's Euclidean encoder output, flattened: the 'embedded features' on which delta is measured."""
    check_data(model, d)
    model.eval()
    X = to_tensors(d, model.names, dtype)
    return {m: model.encoders[m](X[m]).reshape(d.n, -1).numpy() for m in model.names}


@dataclass
class CVResult:
    arm: str
    balanced_accuracy: list[float] = field(default_factory=list)  # per fold
    macro_f1: list[float] = field(default_factory=list)
    curvatures: list[list[float]] = field(default_factory=list)  # per fold, |K_m|
    contributions: list[list[float]] = field(default_factory=list)
    test_subjects: list[list[int]] = field(default_factory=list)
    models: list[nn.Module] = field(default_factory=list, repr=False)  # per fold, with ``keep_models=True``

    def summary(self) -> dict:
        per_fold = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "models"}
        return {
            "arm": self.arm,
            "balanced_accuracy_mean": float(np.mean(self.balanced_accuracy)),
            "balanced_accuracy_sd": float(np.std(self.balanced_accuracy)),
            "macro_f1_mean": float(np.mean(self.macro_f1)),
            **per_fold,
        }


def folds(d: MultimodalData, cv: str, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``loso`` (leave one subject out) or ``kfold`` (GroupKFold over subjects, shuffled by ``seed``)."""
    from sklearn.model_selection import GroupKFold, LeaveOneGroupOut

    if cv == "loso":
        check_groups(d, None)
        splitter = LeaveOneGroupOut()
    elif cv == "kfold":
        check_groups(d, n_folds)
        if n_folds < 2:
            raise ValueError("kfold needs at least 2 folds")
        splitter = GroupKFold(n_folds, shuffle=True, random_state=seed)
    else:
        raise ValueError(f"cv must be 'loso' or 'kfold'; got {cv!r}")
    return list(splitter.split(np.zeros(d.n), d.y, d.subject))


def cross_validate(
    d: MultimodalData,
    arm: str,
    mcfg: ModelConfig,
    tcfg: TrainConfig,
    *,
    cv: str = "kfold",
    n_folds: int = 4,
    seed: int = 0,
    dtype=torch.float64,
    keep_models: bool = False,
    init_seed: int | None = None,
) -> CVResult:
    """Subject-grouped CV of one arm: train on the training subjects, test on held-out subjects (cross-subject).
    ``keep_models`` keeps each fold's trained model in ``.models`` (the claims' controls re-test them).
    ``init_seed`` (default ``seed``) seeds the initialisations and minibatches only, so that a second run on the
    same folds is an independent replicate (an A/A partner)."""
    from sklearn.metrics import balanced_accuracy_score, f1_score

    res = CVResult(arm)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    splits = folds(d, cv, n_folds, seed)
    for f, (tr, te) in enumerate(splits):
        init = (seed if init_seed is None else init_seed) * 1000 + f
        with torch.random.fork_rng(devices=[]):  # local seeding: the global generator is restored afterwards
            torch.manual_seed(init)
            model = build_model(arm, shapes, d.fs, d.n_classes, mcfg).to(dtype)
            train(model, d.subset(tr), tcfg, init, dtype)
            pred, contrib = predict(model, d.subset(te), dtype)
        res.balanced_accuracy.append(float(balanced_accuracy_score(d.y[te], pred)))
        log.info("%s fold %d/%d: balanced accuracy %.3f", arm, f + 1, len(splits), res.balanced_accuracy[-1])
        res.macro_f1.append(float(f1_score(d.y[te], pred, average="macro")))
        curv = model.curvatures.detach().numpy().tolist() if isinstance(model, MoCE) else []
        res.curvatures.append(curv)
        res.contributions.append(np.asarray(contrib).tolist())
        res.test_subjects.append(np.unique(d.subject[te]).tolist())
        if keep_models:
            res.models.append(model)
    return res


def tangent_space_cv(
    d: MultimodalData, splits, *, predictions: bool = False, bootstrap: np.random.Generator | None = None
):
    """pyriemann baseline on EEG only: OAS covariances re-centred per subject to the identity (unsupervised, the
    Riemannian analogue of domain BN), tangent space at the training mean, logistic regression. Returns the
    balanced accuracy per fold, or with ``predictions`` the test predictions per fold. ``bootstrap``: fit each
    fold on a bootstrap resample of its training trials (the deterministic baseline's independent replicate)."""
    from pyriemann.estimation import Covariances
    from pyriemann.geometry.base import invsqrtm
    from pyriemann.geometry.mean import mean_riemann
    from pyriemann.tangentspace import TangentSpace
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score

    C = Covariances("oas").fit_transform(d.modalities["eeg"])  # (N, C, C)
    for s in np.unique(d.subject):
        m = d.subject == s
        W = invsqrtm(mean_riemann(C[m]))
        C[m] = W @ C[m] @ W
    out = []
    for tr, te in splits:
        if bootstrap is not None:
            tr = bootstrap.choice(tr, len(tr), replace=True)
        ts = TangentSpace(metric="riemann").fit(C[tr])
        clf = LogisticRegression(max_iter=500).fit(ts.transform(C[tr]), d.y[tr])
        pred = clf.predict(ts.transform(C[te]))
        out.append(pred if predictions else float(balanced_accuracy_score(d.y[te], pred)))
    return out


# ---------------------------------------------------------------------------------------------------------
# trivial rules on the heart-rate stream (the review's ceiling: no EEG, no deep learning)

# RULES (the rules that use only the HRV stream: instantaneous heart rate, |delta RR|) and FITTED (these rules
# and the tangent space: the baselines fitted without epochs) live in config.py


def _hrv(d: MultimodalData) -> np.ndarray:
    if "hrv" not in d.modalities:
        raise ValueError(f"the heart-rate rules need an 'hrv' modality (EEG + ECG recordings); the data have {d.names}")
    return d.modalities["hrv"]  # (N, 2, frames): heart rate, |delta RR|


def hr_above_zero(d: MultimodalData) -> np.ndarray:
    """The training-free rule of the review: class 1 (task) when the window's mean heart rate is above 0. Only
    meaningful on per-subject z-scored data, where 0 is the subject's own mean over both conditions.  (N,)"""
    return (_hrv(d)[:, 0].mean(1) > 0).astype(np.int64)


def _fit_stump(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """Threshold t and sign s of the rule ``class = 1 if s (x - t) > 0``, maximising training balanced accuracy
    (two classes). Candidates: the midpoints of the sorted values."""
    xs = np.unique(x)
    cand = np.concatenate([[xs[0] - 1.0], (xs[1:] + xs[:-1]) / 2])  # (K,)
    above = x[None, :] > cand[:, None]  # (K, N)
    pos, neg = y == 1, y == 0
    ba = 0.5 * (above[:, pos].mean(1) + (~above[:, neg]).mean(1))  # (K,) sign +1
    k_plus, k_minus = int(np.argmax(ba)), int(np.argmax(1 - ba))
    return (float(cand[k_plus]), 1) if ba[k_plus] >= 1 - ba[k_minus] else (float(cand[k_minus]), -1)


def rule_cv(
    d: MultimodalData,
    splits,
    kind: str,
    *,
    predictions: bool = False,
    bootstrap: np.random.Generator | None = None,
):
    """A rule on the HRV stream, fitted on each fold's training windows: ``hr-stump`` (a threshold and sign on the
    window's mean heart rate) or ``hrv-logreg`` (logistic regression on the window mean and sd of heart rate and
    |delta RR|). Balanced accuracy per fold, or with ``predictions`` the test predictions; ``bootstrap``: fit on
    a bootstrap resample of the training windows (the rule's independent replicate)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score

    if kind not in RULES:
        raise ValueError(f"unknown rule {kind!r}; choose from {', '.join(RULES)}")
    if d.n_classes != 2 and kind == "hr-stump":
        raise ValueError(f"the heart-rate stump separates two classes; the data have {d.n_classes}")
    h = _hrv(d)
    feats = np.concatenate([h.mean(2), h.std(2)], axis=1)  # (N, 4)
    out = []
    for tr, te in splits:
        if bootstrap is not None:
            tr = bootstrap.choice(tr, len(tr), replace=True)
        if kind == "hr-stump":
            t, s = _fit_stump(feats[tr, 0], d.y[tr])
            pred = (s * (feats[te, 0] - t) > 0).astype(np.int64)
        else:
            pred = LogisticRegression(max_iter=500).fit(feats[tr], d.y[tr]).predict(feats[te])
        out.append(pred if predictions else float(balanced_accuracy_score(d.y[te], pred)))
    return out


# ---------------------------------------------------------------------------------------------------------
# tuning on validation subjects (the same lr x epochs grid for every trained arm)


def validation_split(d: MultimodalData, train_idx: np.ndarray, n_val: int, rng: np.random.Generator):
    """Split a fold's training trials by subject: (inner training trials, validation trials of ``n_val`` randomly
    drawn training subjects). The fold's test subjects are never touched."""
    subjects = np.unique(d.subject[train_idx])
    if not 1 <= n_val < subjects.size:
        raise ValueError(f"{n_val} validation subjects cannot be drawn from {subjects.size} training subjects")
    val = rng.choice(subjects, n_val, replace=False)
    is_val = np.isin(d.subject[train_idx], val)
    return train_idx[~is_val], train_idx[is_val]


def tune(
    d: MultimodalData,
    arm: str,
    mcfg: ModelConfig,
    tcfg: TrainConfig,
    splits,
    *,
    lrs=(1e-3, 3e-3, 1e-2),
    epochs=(8, 16),
    n_val: int = 3,
    seed: int = 0,
    dtype=torch.float64,
) -> dict:
    """Choose (lr, epochs) of one trained arm on validation subjects: in each fold, ``n_val`` of the training
    subjects are held out, the arm is trained on the rest once per lr for max(epochs) epochs, and its validation
    balanced accuracy is read after each epoch count of the grid. The pair with the best mean over folds wins
    (ties: fewer epochs, then smaller lr). Returns {"lr", "epochs", "validation": {"lr x epochs": BA}, "folds"}.
    The curvature lr of MoCE moves with lr (x ``tcfg.curvature_lr_scale``)."""
    from dataclasses import replace

    from sklearn.metrics import balanced_accuracy_score

    epochs = sorted(set(epochs))
    grid: dict[tuple[float, int], list[float]] = {(lr, e): [] for lr in lrs for e in epochs}
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    for f, (tr, _) in enumerate(splits):
        inner, val = validation_split(d, tr, n_val, np.random.default_rng([seed, 55, f]))
        d_inner, d_val = d.subset(inner), d.subset(val)
        for lr in lrs:
            init = seed * 1000 + f

            def read(epoch, model, lr=lr, d_val=d_val):
                if epoch in epochs:
                    pred, _ = predict(model, d_val, dtype)
                    grid[(lr, epoch)].append(float(balanced_accuracy_score(d_val.y, pred)))

            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(init)
                model = build_model(arm, shapes, d.fs, d.n_classes, mcfg).to(dtype)
                train(model, d_inner, replace(tcfg, lr=lr, epochs=epochs[-1]), init, dtype, on_epoch=read)
            log.info("tune %s fold %d lr %g: validation BA %s", arm, f, lr, [grid[(lr, e)][-1] for e in epochs])
    score = {k: float(np.mean(v)) for k, v in grid.items()}
    lr, e = max(score, key=lambda k: (round(score[k], 10), -k[1], -k[0]))
    return {
        "lr": lr,
        "epochs": e,
        "validation": {f"{k[0]:g} x {k[1]}": v for k, v in score.items()},
        "validation_ba": score[(lr, e)],
        "folds": len(splits),
    }
