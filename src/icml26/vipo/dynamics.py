"""The VIPO model-training step: a Gaussian dynamics ensemble trained by NLL plus the value-inconsistency term.

Read top to bottom:

1. :class:`GaussianEnsemble` -- ``E`` members, each ``(s, a) -> N(mu, diag sigma^2)`` over ``[delta s, r]``
   (the reward column is dropped when the task's reward function is known), soft-bounded log-variances
   (learned ``max_logvar`` / ``min_logvar``), inputs standardised on the data. ``hidden=()`` gives the linear
   model class used for the misspecified mechanism system.
2. :func:`nll_loss` -- ``L_ori``: ``sum_d (mu - y)^2 / sigma^2 + log sigma^2`` per member, plus
   ``0.01 (sum max_logvar - sum min_logvar)`` and weight decay.
3. :class:`ValuePair` -- ``V_D`` (one head) learned by TD on *dataset* transitions and ``V_theta`` (one head per
   member) learned by TD on the members' *mean* predictions; both with Polyak targets (tau = 0.005) and trained
   on detached inputs every mini-batch.
4. :func:`vipo_loss` -- ``L_value = -mean(A * log N(s_hat; mu_theta, Sigma_theta))`` with
   ``A = (V_D(s) - V_theta(s)) * (r_hat + gamma (1 - d_hat) Vbar_theta(s_hat'))``: the likelihood-ratio
   (score-function) gradient of the value gap. ``A`` carries no gradient, ``s_hat`` is sampled from the model
   under stop-gradient; only ``log N`` is differentiated (through ``mu_theta`` and ``Sigma_theta``).
5. :func:`train_dynamics` -- ``L_aug = L_ori + phi * L_value`` (``phi = 1e-4`` in the paper), holdout split,
   elite selection by holdout MSE. ``phi = 0`` is the plain ensemble (no value networks are built).

Shapes: ``E`` members, ``B`` batch, ``S`` state dim, ``U`` action dim, ``O = S (+1)`` outputs.
"""

from __future__ import annotations

import copy
import itertools
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

logger = logging.getLogger(__name__)

__all__ = [
    "DynamicsConfig",
    "GaussianEnsemble",
    "ValuePair",
    "nll_loss",
    "train_dynamics",
    "vipo_loss",
]


class EnsembleLinear(nn.Module):
    """``E`` independent affine maps applied in one batched matmul: ``(E, B, I) -> (E, B, O)``."""

    def __init__(self, members: int, d_in: int, d_out: int, decay: float = 0.0):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(members, d_in, d_out))
        self.bias = nn.Parameter(torch.zeros(members, 1, d_out))
        bound = 1.0 / math.sqrt(d_in)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)
        self.decay = decay

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class GaussianEnsemble(nn.Module):
    """Probabilistic ensemble over ``y = [s' - s, r]`` (``r`` only when ``learn_reward``).

    ``forward(s, a)`` takes ``(B, S), (B, U)`` (or ``(E, B, .)``) and returns ``mu, logvar`` of shape
    ``(E, B, O)``; the log-variance is soft-clamped between learned bounds as in PETS/MBPO.
    """

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        members: int = 7,
        elites: int = 5,
        hidden: tuple[int, ...] = (200, 200, 200, 200),
        learn_reward: bool = True,
        weight_decay: tuple[float, ...] | None = None,
    ):
        super().__init__()
        if not 1 <= elites <= members:
            raise ValueError(f"elites must be in [1, members={members}]; got {elites}")
        self.obs_dim, self.act_dim, self.members, self.n_elites = obs_dim, act_dim, members, elites
        self.learn_reward = learn_reward
        self.out_dim = obs_dim + int(learn_reward)
        sizes = (obs_dim + act_dim, *hidden, 2 * self.out_dim)
        decays = weight_decay or (2.5e-5, 5e-5, 7.5e-5, 7.5e-5, 1e-4)  # MBPO's per-layer weight decay
        self.layers = nn.ModuleList(
            EnsembleLinear(members, i, o, decays[min(k, len(decays) - 1)])
            for k, (i, o) in enumerate(itertools.pairwise(sizes))
        )
        self.max_logvar = nn.Parameter(torch.full((self.out_dim,), 0.5))
        self.min_logvar = nn.Parameter(torch.full((self.out_dim,), -10.0))
        self.register_buffer("in_mean", torch.zeros(obs_dim + act_dim))
        self.register_buffer("in_std", torch.ones(obs_dim + act_dim))
        self.register_buffer("elites", torch.arange(elites))

    def set_normaliser(self, x: np.ndarray) -> None:
        self.in_mean.copy_(torch.as_tensor(x.mean(0), dtype=torch.float32))
        self.in_std.copy_(torch.as_tensor(x.std(0) + 1e-6, dtype=torch.float32))

    def forward(self, s: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = (torch.cat([s, a], -1) - self.in_mean) / self.in_std  # (B, S+U) or (E, B, S+U)
        if x.dim() == 2:
            x = x.unsqueeze(0).expand(self.members, -1, -1)
        for layer in self.layers[:-1]:
            x = nn.functional.silu(layer(x))
        mu, raw = self.layers[-1](x).chunk(2, dim=-1)  # (E, B, O) each
        logvar = self.max_logvar - nn.functional.softplus(self.max_logvar - raw)
        logvar = self.min_logvar + nn.functional.softplus(logvar - self.min_logvar)
        return mu, logvar

    def decay_loss(self) -> torch.Tensor:
        return sum(layer.decay * 0.5 * (layer.weight**2).sum() for layer in self.layers)

    @torch.no_grad()
    def step(
        self, s: torch.Tensor, a: torch.Tensor, gen: torch.Generator | None = None, sample: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """One model transition per row from a uniformly chosen elite: ``(s', r or None, max_e ||sigma_e||)``.

        The last value is MOPO's uncertainty ``max over elites of the Frobenius norm of sigma_e(s, a)``.
        """
        mu, logvar = self(s, a)  # (E, B, O)
        std = (0.5 * logvar).exp()
        y = mu + std * torch.randn(mu.shape, generator=gen) if sample else mu
        pick = self.elites[torch.randint(len(self.elites), (s.shape[0],), generator=gen)]
        y = y[pick, torch.arange(s.shape[0])]  # (B, O)
        unc = std[self.elites].norm(dim=-1).amax(0)  # (B,)
        r = y[:, -1] if self.learn_reward else None
        return s + y[:, : self.obs_dim], r, unc

    @torch.no_grad()
    def mean_step(self, s: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """The elites' average mean prediction of ``s'`` (the deterministic 'model' used for value rollouts)."""
        mu, _ = self(s, a)
        return s + mu[self.elites, :, : self.obs_dim].mean(0)


def nll_loss(model: GaussianEnsemble, mu: torch.Tensor, logvar: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``L_ori``: Gaussian NLL summed over outputs, averaged over batch, summed over members; + logvar bounds."""
    inv_var = torch.exp(-logvar)
    nll = (((mu - y) ** 2) * inv_var + logvar).mean(1).sum()  # (E, B, O) -> scalar
    bounds = 0.01 * (model.max_logvar.sum() - model.min_logvar.sum())
    return nll + bounds + model.decay_loss()


def _mlp(d_in: int, hidden: tuple[int, ...], d_out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(d_in, h), nn.ReLU()]
        d_in = h
    return nn.Sequential(*layers, nn.Linear(d_in, d_out))


class ValuePair(nn.Module):
    """``V_D`` (dataset TD) and ``V_theta`` (one head per ensemble member, model TD), each with a target copy."""

    def __init__(self, obs_dim: int, members: int, hidden: tuple[int, ...], lr: float, gamma: float, tau: float):
        super().__init__()
        self.v_data = _mlp(obs_dim, hidden, 1)
        self.v_model = _mlp(obs_dim, hidden, members)  # head e = V_theta of member e
        self.v_data_targ = copy.deepcopy(self.v_data).requires_grad_(False)
        self.v_model_targ = copy.deepcopy(self.v_model).requires_grad_(False)
        self.opt = torch.optim.Adam([*self.v_data.parameters(), *self.v_model.parameters()], lr=lr)
        self.gamma, self.tau = gamma, tau

    def V_D(self, s: torch.Tensor) -> torch.Tensor:  # (B, S) -> (B,)
        return self.v_data(s).squeeze(-1)

    def V_theta(self, s: torch.Tensor, target: bool = False) -> torch.Tensor:  # (E, B, S) or (B, S) -> (E, B)
        net = self.v_model_targ if target else self.v_model
        if s.dim() == 2:  # the same states for every member: one pass, head e = member e
            return net(s).T
        out = net(s)  # (E, B, E): every head on every member's states; keep head e on member e's
        return out.diagonal(dim1=0, dim2=2).T

    def update(self, s, r, s2, d, r_hat, s2_hat, d_hat) -> float:
        """One TD step of both values on detached inputs. Shapes: data ``(B, .)``, model ``(E, B, .)``."""
        with torch.no_grad():
            y_data = r + self.gamma * (1 - d) * self.v_data_targ(s2).squeeze(-1)  # (B,)
            y_model = r_hat + self.gamma * (1 - d_hat) * self.V_theta(s2_hat, target=True)  # (E, B)
        loss = ((self.V_D(s) - y_data) ** 2).mean() + ((self.V_theta(s) - y_model) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            for net, targ in ((self.v_data, self.v_data_targ), (self.v_model, self.v_model_targ)):
                for p, pt in zip(net.parameters(), targ.parameters(), strict=True):
                    pt.lerp_(p, self.tau)
        return float(loss.detach())


def vipo_loss(
    mu: torch.Tensor,
    logvar: torch.Tensor,
    s_hat: torch.Tensor,
    advantage: torch.Tensor,
) -> torch.Tensor:
    """``L_value = -mean_e,b(A * log N(s_hat; mu, diag exp(logvar)))`` -- the score-function estimator.

    ``mu, logvar, s_hat``: ``(E, B, O)`` (``s_hat`` sampled under stop-gradient); ``advantage``: ``(E, B)``,
    detached. Its gradient is ``-mean(A * grad log p_theta(s_hat))``, an unbiased estimate of
    ``-(V_D - V_theta) * grad_theta E_{s_hat ~ p_theta}[r_hat + gamma V(s_hat')]``, i.e. of
    ``grad (V_D - V_theta)^2 / 2`` up to the value-network approximation.
    """
    assert not s_hat.requires_grad and not advantage.requires_grad, "A and s_hat must carry no gradient"
    log_prob = -0.5 * (((s_hat - mu) ** 2) * torch.exp(-logvar) + logvar + math.log(2 * math.pi)).sum(-1)  # (E, B)
    return -(advantage * log_prob).mean()


@dataclass
class DynamicsConfig:
    """Model-training settings. ``phi = 0`` trains the plain NLL ensemble (MOPO's model)."""

    members: int = 7
    elites: int = 5
    hidden: tuple[int, ...] = (200, 200, 200, 200)
    epochs: int = 50
    batch: int = 256
    lr: float = 1e-3
    holdout: float = 0.1
    phi: float = 1e-4  # weight of L_value (paper: 1e-4)
    normalise_advantage: bool = False  # standardise A over the batch (paper: optional)
    value_hidden: tuple[int, ...] = (256, 256, 256)
    value_lr: float = 3e-4
    gamma: float = 0.99
    tau: float = 0.005
    value_warmup_epochs: int = 0  # epochs of value-only TD before L_value switches on (ours; 0 = paper)
    # TD steps of the values per model batch during the warm-up, each on its own random batch (ours; 1 = paper):
    # gamma = 0.99 values need thousands of TD steps to reach their scale, more than a small data set's batches
    value_warmup_steps: int = 1
    state_baseline: bool = False  # A uses r_hat + gamma Vbar(s_hat') - Vbar_theta(s): per-state baseline (ours)
    value_on_samples: bool = False  # V_theta's TD targets on sampled s_hat instead of the mean (ours; False = paper)


@dataclass
class DynamicsLog:
    epoch_seconds: list[float] = field(default_factory=list)
    holdout_mse: list[float] = field(default_factory=list)
    value_gap: list[float] = field(default_factory=list)  # mean |V_D - V_theta| over the epoch's batches
    # ||phi grad L_value|| / ||grad L_ori|| over the ensemble's parameters, on each epoch's last batch once
    # L_value is on: the value term's share of the model gradient (the mechanism's liveness probe)
    value_grad_share: list[float] = field(default_factory=list)


def _targets(obs, act, rew, next_obs, learn_reward: bool) -> np.ndarray:
    y = next_obs - obs
    return np.concatenate([y, rew[:, None]], 1) if learn_reward else y


def train_dynamics(
    data: dict[str, np.ndarray],
    cfg: DynamicsConfig,
    seed: int = 0,
    reward_fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    termination_fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> tuple[GaussianEnsemble, DynamicsLog]:
    """Fit the ensemble on ``data`` (D4RL keys) by ``L_ori + phi * L_value``; return it with elites chosen.

    ``reward_fn(s, a, s')``: a known reward (the model then predicts states only); ``None`` = learned reward
    column. ``termination_fn(s, a, s') -> bool``; ``None`` = never terminates (the caller decides; the
    pipeline refuses an environment without one).
    """
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    value_rng = np.random.default_rng([seed, 1])  # the values' extra batches: the model's batches stay the NLL run's
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        obs, act = data["observations"].astype(np.float32), data["actions"].astype(np.float32)
        rew, nxt = data["rewards"].astype(np.float32), data["next_observations"].astype(np.float32)
        done = data["terminals"].astype(np.float32)
        n = len(obs)
        model = GaussianEnsemble(obs.shape[1], act.shape[1], cfg.members, cfg.elites, cfg.hidden, reward_fn is None)
        model.set_normaliser(np.concatenate([obs, act], 1))
        y = _targets(obs, act, rew, nxt, reward_fn is None)
        perm = rng.permutation(n)
        n_hold = min(int(cfg.holdout * n), 1000) if n >= 20 else 0
        hold, train = perm[:n_hold], perm[n_hold:]
        T = {k: torch.from_numpy(v) for k, v in dict(obs=obs, act=act, rew=rew, nxt=nxt, done=done, y=y).items()}
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        values = None
        if cfg.phi > 0:
            values = ValuePair(obs.shape[1], cfg.members, cfg.value_hidden, cfg.value_lr, cfg.gamma, cfg.tau)
        log = DynamicsLog()
        nt = len(train)
        steps = max(1, nt // cfg.batch)
        for epoch in range(cfg.epochs):
            t0 = time.perf_counter()
            order = np.stack([rng.permutation(train) for _ in range(cfg.members)])  # (E, n_train) per member
            gaps = []
            for k in range(steps):
                idx = torch.from_numpy(order[:, k * cfg.batch : (k + 1) * cfg.batch])  # (E, B)
                s, a, yt = T["obs"][idx], T["act"][idx], T["y"][idx]  # (E, B, .)
                mu, logvar = model(s, a)
                loss = nll_loss(model, mu, logvar, yt)
                if values is not None:
                    if epoch < cfg.value_warmup_epochs:  # extra TD steps on fresh batches while the values warm up
                        for _ in range(cfg.value_warmup_steps - 1):
                            extra = torch.from_numpy(value_rng.choice(train, min(cfg.batch, nt), replace=False))
                            _value_step(model, values, T, extra, gen, reward_fn, termination_fn, cfg, epoch)
                    gap, l_value = _value_step(model, values, T, idx[0], gen, reward_fn, termination_fn, cfg, epoch)
                    gaps.append(gap)
                    if l_value is not None:
                        if k == steps - 1:
                            log.value_grad_share.append(_grad_share(model, loss, cfg.phi * l_value))
                        loss = loss + cfg.phi * l_value  # Eq. L_aug = L_ori + phi * L_value
                opt.zero_grad()
                loss.backward()
                opt.step()
            log.epoch_seconds.append(time.perf_counter() - t0)
            if gaps:
                log.value_gap.append(float(np.mean(gaps)))
            if n_hold:
                log.holdout_mse.append(float(_holdout_mse(model, T, hold).mean()))
        if n_hold:
            mse = _holdout_mse(model, T, hold)
            model.elites.copy_(torch.argsort(mse)[: cfg.elites])
    return model, log


def _value_step(model, values, T, idx, gen, reward_fn, termination_fn, cfg, epoch):
    """Train ``V_D`` / ``V_theta`` one TD step on detached features, then build ``L_value`` on the same batch.

    Returns ``(mean |V_D - V_theta|, L_value or None during the value warm-up)``.
    """
    s, a, r, s2, d = T["obs"][idx], T["act"][idx], T["rew"][idx], T["nxt"][idx], T["done"][idx]  # (B, .)
    S = model.obs_dim
    mu, logvar = model(s, a)  # (E, B, O), with gradient (used by L_value below)
    with torch.no_grad():  # stop-gradient: the sample, the model-side rewards/terminals and the values
        s_hat = mu + (0.5 * logvar).exp() * torch.randn(mu.shape, generator=gen)  # (E, B, O) ~ p_theta
        s_e = s.unsqueeze(0).expand(model.members, -1, -1)
        a_e = a.unsqueeze(0).expand(model.members, -1, -1)

        def reward_done(out):
            nxt = s_e + out[..., :S]
            rr = out[..., -1] if reward_fn is None else reward_fn(s_e, a_e, nxt)
            dd = termination_fn(s_e, a_e, nxt).float() if termination_fn is not None else torch.zeros_like(rr)
            return nxt, rr, dd

        nxt_hat, r_hat, d_hat = reward_done(s_hat)
        # V_theta learns on the members' mean predictions (official code) or on the samples (option)
        nxt_v, r_v, d_v = (nxt_hat, r_hat, d_hat) if cfg.value_on_samples else reward_done(mu)
    values.update(s, r, s2, d, r_v, nxt_v, d_v)
    with torch.no_grad():
        gap = values.V_D(s).unsqueeze(0) - values.V_theta(s)  # (E, B): V_D(s) - V_theta^e(s)
        ret = r_hat + cfg.gamma * (1 - d_hat) * values.V_theta(nxt_hat, target=True)  # (E, B)
        if cfg.state_baseline:  # E[grad log p] = 0, so any function of s may be subtracted (less variance)
            ret = ret - values.V_theta(s, target=True)
        A = gap * ret
        if cfg.normalise_advantage:
            A = (A - A.mean(1, keepdim=True)) / (A.std(1, keepdim=True) + 1e-8)
    mean_gap = float(gap.abs().mean())
    if epoch < cfg.value_warmup_epochs:
        return mean_gap, None
    return mean_gap, vipo_loss(mu, logvar, s_hat, A)


def _grad_share(model: GaussianEnsemble, l_ori: torch.Tensor, l_value: torch.Tensor) -> float:
    """``||grad phi L_value|| / ||grad L_ori||`` over the ensemble's parameters (both graphs are kept)."""
    params = [p for p in model.parameters() if p.requires_grad]

    def norm(loss):
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        return math.sqrt(sum(float((g**2).sum()) for g in grads if g is not None))

    return norm(l_value) / max(norm(l_ori), 1e-30)


@torch.no_grad()
def _holdout_mse(model: GaussianEnsemble, T, hold) -> torch.Tensor:
    idx = torch.as_tensor(hold)
    mu, _ = model(T["obs"][idx], T["act"][idx])
    return ((mu - T["y"][idx]) ** 2).mean((1, 2))  # (E,)


@torch.no_grad()
def model_error(model: GaussianEnsemble, obs: np.ndarray, act: np.ndarray, next_obs: np.ndarray) -> float:
    """Mean squared error of the elites' mean next-state prediction (state part only)."""
    s, a = torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(act, dtype=torch.float32)
    pred = model.mean_step(s, a).numpy()
    return float(((pred - next_obs) ** 2).sum(1).mean())
