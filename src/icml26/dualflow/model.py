"""The Dynamic Compression Flow model: encoder coupling, compressive flow u_phi, dynamical flow v_theta.

Notation (``papers/dualflow.md`` §2): x^(1) in R^D is an observed frame (tau = 1, data space), x^(0) its
compressed version (tau = 0). The model is three networks trained jointly:

- the **encoder coupling** (Eq. 1) x^(0) = b + L D^{1/2} (m_K ⊙ mu_psi(x^(1))) with L orthonormal columns
  (non-pivoted QR of a free matrix), D = diag(d) with d > 0, mu_psi an MLP whose output is normalised by
  EMA running statistics after an l2-norm cap (Eq. 2), and the nested-dropout mask m_K(i) = 1{i <= K},
  K ~ Geom(p) truncated to [1, m];
- the **compressive flow** u_phi(x, tau) = dx/dtau;
- the **dynamical flow** v_theta(x, tau, s, x_hist) = dx/dt.

:func:`dual_flow_losses` implements the losses and their sum L = alpha L_cf + beta L_df + eta L_align + gamma L_td
(L_td: the temporal-distortion term, the ``enc_lie`` loss of the authors' repository; see the README's
*Provenance of the loss*).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["DCFModel", "EncoderCoupling", "FlowConv", "FlowMLP", "dual_flow_losses", "sample_prefix_length"]


def sample_prefix_length(n: int, p: float, m: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw K ~ Geom(p) truncated to [1, m] (nested dropout, Rippel et al. 2014), by inverse CDF.

    P(K = k) = p (1 - p)^(k - 1) / (1 - (1 - p)^m) for k = 1..m. Returns a long tensor of shape (n,).
    """
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must lie in (0, 1]; got {p}")
    if p == 1.0:
        return torch.ones(n, dtype=torch.long)
    u = torch.rand(n, generator=generator, dtype=torch.float64)
    mass = 1.0 - (1.0 - p) ** m  # truncation: total mass of 1..m
    k = torch.ceil(torch.log1p(-u * mass) / math.log1p(-p)).long()
    return k.clamp_(1, m)


class FlowMLP(nn.Module):
    """MLP vector field: input (B, n_in) and conditioning scalars (B, c) -> output (B, n_out).

    Scalars in [0, 1] (tau, s) enter raw and through sin/cos features so the field can vary quickly in them.
    """

    def __init__(self, n_in: int, n_out: int, n_scalars: int, hidden: int, depth: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = n_in + 3 * n_scalars
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        layers.append(nn.Linear(width, n_out))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, scalars: torch.Tensor) -> torch.Tensor:
        feats = torch.cat([scalars, torch.sin(math.pi * scalars), torch.cos(math.pi * scalars)], dim=-1)
        return self.net(torch.cat([x, feats], dim=-1))


class FlowConv(nn.Module):
    """Small convolutional vector field for video frames (the paper uses U-Nets; this is a plain conv stack).

    Input (B, c * H * W) holds c frames (the state, then any history) flattened frame by frame; the
    conditioning scalars (B, n) enter as constant channels (raw, sin, cos). Output (B, H * W): one frame.
    """

    def __init__(self, frame_shape: tuple[int, int], n_frames_in: int, n_scalars: int, hidden: int, depth: int):
        super().__init__()
        self.frame_shape = tuple(int(v) for v in frame_shape)
        layers: list[nn.Module] = []
        width = n_frames_in + 3 * n_scalars
        for _ in range(depth):
            layers += [nn.Conv2d(width, hidden, 3, padding=1), nn.SiLU()]
            width = hidden
        layers.append(nn.Conv2d(width, 1, 3, padding=1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, scalars: torch.Tensor) -> torch.Tensor:
        B, (H, W) = x.shape[0], self.frame_shape
        img = x.reshape(B, -1, H, W)  # (B, c, H, W)
        feats = torch.cat([scalars, torch.sin(math.pi * scalars), torch.cos(math.pi * scalars)], dim=-1)
        feats = feats[:, :, None, None].expand(B, feats.shape[1], H, W)
        return self.net(torch.cat([img, feats], dim=1)).reshape(B, H * W)


class EncoderCoupling(nn.Module):
    """x^(0) = b + L D^{1/2} (m_K ⊙ mu_psi(x^(1))) (Eq. 1) with EMA feature normalisation (Eq. 2).

    Parameters
    ----------
    n_features : int
        D, the data dimension.
    n_latent : int
        m <= D, the number of latent coordinates (columns of L).
    hidden, depth : int
        Size of the MLP mu_psi.
    norm_cap : float
        Cap on the per-sample l2 norm of the raw encoder output.
    momentum : float
        EMA momentum of the running mean and variance.
    init_d : float
        Initial value of every scale d_i. Small (default 0.05): a coordinate that nested dropout rarely unmasks
        keeps a small d_i until it has been trained, so sum(d) and K_eff measure what was learned, not the
        initialisation (issue 16: with d_i = 1 the untrained tail held most of sum(d)).
    """

    def __init__(
        self,
        n_features: int,
        n_latent: int,
        hidden: int,
        depth: int,
        norm_cap: float,
        momentum: float,
        init_d: float = 0.05,
    ):
        super().__init__()
        layers: list[nn.Module] = []
        width = n_features
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        layers.append(nn.Linear(width, n_latent))
        self.mu = nn.Sequential(*layers)
        self.b = nn.Parameter(torch.zeros(n_features))
        self.A = nn.Parameter(torch.linalg.qr(torch.randn(n_features, n_latent))[0])  # L = QR(A).Q
        if not init_d > 0:
            raise ValueError(f"init_d must be positive; got {init_d}")
        self.log_d = nn.Parameter(torch.full((n_latent,), math.log(init_d)))  # d = exp(log_d) > 0
        self.register_buffer("running_mean", torch.zeros(n_latent))
        self.register_buffer("running_var", torch.ones(n_latent))
        self.register_buffer("n_updates", torch.zeros((), dtype=torch.long))
        self.norm_cap = float(norm_cap)
        self.momentum = float(momentum)

    @property
    def L(self) -> torch.Tensor:
        """Orthonormal columns (D, m): Q of the non-pivoted QR of A, signs fixed so diag(R) > 0."""
        Q, R = torch.linalg.qr(self.A)
        sign = torch.sign(torch.diagonal(R))
        sign = torch.where(sign == 0, torch.ones_like(sign), sign)
        return Q * sign

    @property
    def d(self) -> torch.Tensor:
        """Positive scales d_i of D = diag(d), shape (m,)."""
        return torch.exp(self.log_d)

    def features(self, x1: torch.Tensor) -> torch.Tensor:
        """Normalised features mu = (mu_raw - running mean) / running std (Eq. 2); (B, D) -> (B, m)."""
        raw = self.mu(x1)
        norm = raw.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        raw = raw * torch.clamp(self.norm_cap / norm, max=1.0)  # l2 norm cap
        if self.training and raw.shape[0] > 1:
            with torch.no_grad():  # EMA update of the running statistics (never back-propagated)
                w = 1.0 if int(self.n_updates) == 0 else 1.0 - self.momentum
                self.running_mean.lerp_(raw.mean(0), w)
                self.running_var.lerp_(raw.var(0), w)
                self.n_updates += 1
        return (raw - self.running_mean) / torch.sqrt(self.running_var + 1e-5)

    def couple(self, mu: torch.Tensor) -> torch.Tensor:
        """x^(0) = b + L D^{1/2} mu; (B, m) -> (B, D)."""
        return self.b + (mu * self.d.sqrt()) @ self.L.T

    def uncouple(self, x0: torch.Tensor) -> torch.Tensor:
        """Latent coordinates mu~ = D^{-1/2} L^T (x^(0) - b) (the left inverse of :meth:`couple`); (B, D) -> (B, m)."""
        return ((x0 - self.b) @ self.L) / self.d.sqrt()

    def forward(self, x1: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x^(0) of frames x1 (B, D), with the nested-dropout mask (B, m) when given."""
        mu = self.features(x1)
        return self.couple(mu if mask is None else mu * mask)


class DCFModel(nn.Module):
    """The three networks of Dynamic Compression Flow for vector data of dimension D.

    ``compressive(x, tau)``: u_phi, (B, D), (B, 1) -> (B, D).
    ``dynamical(x, tau, s, hist)``: v_theta, (B, D), (B, 1), (B, 1), (B, h+1, D) -> (B, D).
    With ``frame_shape = (H, W)`` (D = H W) both flows are convolutional (:class:`FlowConv`); the encoder
    mu_psi stays an MLP.
    """

    def __init__(
        self,
        n_features: int,
        n_latent: int,
        history: int = 2,
        hidden: int = 128,
        depth: int = 3,
        norm_cap: float | None = None,
        momentum: float = 0.9,
        frame_shape: tuple[int, int] | None = None,
        init_d: float = 0.05,
    ) -> None:
        super().__init__()
        if not 1 <= n_latent <= n_features:
            raise ValueError(f"n_latent must lie in [1, n_features={n_features}]; got {n_latent}")
        self.n_features, self.n_latent, self.history = n_features, n_latent, history
        cap = 3.0 * math.sqrt(n_latent) if norm_cap is None else norm_cap
        self.encoder = EncoderCoupling(n_features, n_latent, hidden, depth, cap, momentum, init_d)
        if frame_shape is None:
            self.u_phi = FlowMLP(n_features, n_features, 1, hidden, depth)
            self.v_theta = FlowMLP(n_features * (history + 2), n_features, 2, hidden, depth)
        else:
            if len(frame_shape) != 2 or frame_shape[0] * frame_shape[1] != n_features:
                raise ValueError(f"frame_shape {tuple(frame_shape)} does not hold {n_features} features")
            self.u_phi = FlowConv(frame_shape, 1, 1, hidden, depth)
            self.v_theta = FlowConv(frame_shape, history + 2, 2, hidden, depth)

    def compressive(self, x: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
        return self.u_phi(x, tau)

    def dynamical(self, x: torch.Tensor, tau: torch.Tensor, s: torch.Tensor, hist: torch.Tensor) -> torch.Tensor:
        return self.v_theta(torch.cat([x, hist.flatten(1)], dim=-1), torch.cat([tau, s], dim=-1))


def dual_flow_losses(
    model: DCFModel,
    window: torch.Tensor,
    p: float | None,
    dt: float = 1.0,
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0),
    gamma: float = 0.0,
) -> dict[str, torch.Tensor]:
    """The losses of DCF on a batch of frame windows.

    Parameters
    ----------
    window : tensor of shape (B, h+2, D)
        Frames x_{k-h}, ..., x_k, x_{k+1} of one trial each (data space, tau = 1).
    p : float or None
        Nested-dropout rate; K ~ Geom(p) truncated to [1, m], one K per window. ``None``: no nested dropout
        (K = m, every latent coordinate kept).
    dt : float
        Time between frames.
    weights : (alpha, beta, eta)
    gamma : float
        Weight of the temporal-distortion term L_td (0: off).

    Returns
    -------
    dict with ``align``, ``cf``, ``df``, ``td`` and ``total``:

    - L_align = E ||x^(1) - (b + L D^{1/2} (m_K ⊙ mu_psi(x^(1))))||^2 (the masked coupling)
    - L_cf = E ||u_phi(x^(tau), tau) - (x^(1) - x^(0))||^2 with x^(tau) = (1 - tau) x^(0) + tau x^(1) (Eq. 3)
    - L_df = E ||v_theta(x, tau, s, x_hist) - (x^(tau)_{k+1} - x^(tau)_k)/dt||^2 with
      x = (1 - s) x^(tau)_k + s x^(tau)_{k+1} (Eq. 4, the double interpolation)
    - L_td = E ||(x^(1)_{k+1} - x^(1)_k) - (x^(0)_{k+1} - x^(0)_k)||^2: a frame step in the compressed space
      matches the same step in the data space (the compressive flow does not distort time)
    - total = alpha L_cf + beta L_df + eta L_align + gamma L_td.

    Only L_align sees the nested-dropout mask. The flows and L_td use the **unmasked** x^(0) = b + L D^{1/2} mu,
    with gradients reaching the encoder through the first K coordinates only (the tail enters as a constant):
    our reading (the authors' loss masks only its alignment term and scores L_td on the unmasked encodings; the
    flows' inputs and this gradient mask are our choice, not verified in their code). Masking x^(0) in the flows
    too (our v1-v3 reading) made u_phi transport
    each frame to a mixture over K of truncated latents, so the flowed latent of a frame was partly zeroed.
    """
    B, W, D = window.shape  # W = h + 2
    m = model.n_latent
    K = torch.full((B,), m, device=window.device) if p is None else sample_prefix_length(B, p, m).to(window.device)
    mask = (torch.arange(1, m + 1, device=window.device)[None, :] <= K[:, None]).to(window.dtype)  # (B, m)
    mask = mask.repeat_interleave(W, dim=0)  # (B W, m), same K per window
    x1 = window.reshape(B * W, D)
    mu = model.encoder.features(x1)  # (B W, m), Eq. 2
    x0_masked = model.encoder.couple(mu * mask).reshape(B, W, D)  # Eq. 1
    mu_flow = mu * mask + mu.detach() * (1 - mask)  # unmasked value, gradient through the first K coordinates
    x0 = model.encoder.couple(mu_flow).reshape(B, W, D)
    l_align = ((window - x0_masked) ** 2).sum(-1).mean()

    tau = torch.rand(B, 1, 1, dtype=window.dtype, device=window.device)
    x_tau = (1 - tau) * x0 + tau * window  # Eq. 3, (B, W, D)
    u_star = window - x0
    u_pred = model.compressive(x_tau.reshape(B * W, D), tau.expand(B, W, 1).reshape(B * W, 1))
    l_cf = ((u_pred - u_star.reshape(B * W, D)) ** 2).sum(-1).mean()

    s = torch.rand(B, 1, dtype=window.dtype, device=window.device)
    x_k, x_next = x_tau[:, -2], x_tau[:, -1]
    x_s = (1 - s) * x_k + s * x_next  # Eq. 4
    v_star = (x_next - x_k) / dt
    v_pred = model.dynamical(x_s, tau[:, 0], s, x_tau[:, :-1])
    l_df = ((v_pred - v_star) ** 2).sum(-1).mean()

    l_td = (((window[:, -1] - window[:, -2]) - (x0[:, -1] - x0[:, -2])) ** 2).sum(-1).mean()

    alpha, beta, eta = weights
    total = alpha * l_cf + beta * l_df + eta * l_align + gamma * l_td
    return {"align": l_align, "cf": l_cf, "df": l_df, "td": l_td, "total": total}
