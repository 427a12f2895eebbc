"""Policy learning on the learned model: SAC with MOPO's reward penalty or MOBILE's Bellman-inconsistency penalty.

VIPO changes only how the dynamics ensemble is trained (:mod:`icml26.vipo.dynamics`); the policy learner is the
host method's, so ``mopo+vipo`` / ``mobile+vipo`` are ``mopo`` / ``mobile`` run on a VIPO-trained model.

- MOPO (Yu et al. 2020): ``h``-step rollouts from dataset states with a random elite per step, reward
  ``r_tilde = r_hat - lambda * max_e ||sigma_e(s, a)||_F``; SAC on a mix of real and model transitions.
- MOBILE (Sun et al. 2023): the same rollouts, unpenalised rewards; the Q target of a *model* transition is
  lowered by ``beta * std_e[r_e + gamma min_j Qbar_j(s'_e, a'_e)]`` over the elites' predicted next states.

Actions are handled in ``[-1, 1]`` (tanh-squashed Gaussian) and scaled by the environment's bound.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from icml26.vipo.dynamics import GaussianEnsemble

logger = logging.getLogger(__name__)

ALGOS = ("mopo", "mopo+vipo", "mobile", "mobile+vipo")


def _mlp(d_in: int, hidden: tuple[int, ...], d_out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(d_in, h), nn.ReLU()]
        d_in = h
    return nn.Sequential(*layers, nn.Linear(d_in, d_out))


class Actor(nn.Module):
    """Tanh-squashed Gaussian policy ``s -> a in [-1, 1]^U``."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: tuple[int, ...] = (256, 256)):
        super().__init__()
        self.net = _mlp(obs_dim, hidden, 2 * act_dim)
        self.obs_dim, self.act_dim, self.hidden = obs_dim, act_dim, tuple(hidden)
        self.extra: dict = {}

    def forward(self, s: torch.Tensor, gen: torch.Generator | None = None):
        mean, log_std = self.net(s).chunk(2, -1)
        std = log_std.clamp(-5.0, 2.0).exp()
        u = mean + std * torch.randn(mean.shape, generator=gen)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mean) / std) ** 2 - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - (2 * (math.log(2) - u - nn.functional.softplus(-2 * u))).sum(-1)  # tanh correction
        return a, logp

    @torch.no_grad()
    def act(self, s: torch.Tensor, deterministic: bool = True, gen: torch.Generator | None = None) -> torch.Tensor:
        if deterministic:
            return torch.tanh(self.net(s).chunk(2, -1)[0])
        return self(s, gen)[0]


def save_actor(actor: Actor, path, extra: dict | None = None) -> None:
    from icml26._util.io import atomic_output

    with atomic_output(path) as tmp:
        torch.save(
            {
                "kind": "icml26-vipo-actor",
                "obs_dim": actor.obs_dim,
                "act_dim": actor.act_dim,
                "hidden": actor.hidden,
                "state_dict": actor.state_dict(),
                "extra": extra or {},
            },
            tmp,
        )


def load_actor(path, obs_dim: int | None = None, act_dim: int | None = None) -> Actor:
    """Read an actor written by :func:`save_actor`; a ``ValueError`` for another file or other dimensions."""
    from icml26._util.io import check_input_file

    path = check_input_file(path, what="policy file")
    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types (UnpicklingError, RuntimeError, EOFError)
        raise ValueError(f"policy file {path} is not a readable torch file ({exc.__class__.__name__})") from None
    if not isinstance(ck, dict) or ck.get("kind") != "icml26-vipo-actor":
        raise ValueError(f"policy file {path} is not an icml26 vipo policy (written by 'icml26 vipo train')")
    if (obs_dim, act_dim) != (None, None) and (ck["obs_dim"], ck["act_dim"]) != (obs_dim, act_dim):
        raise ValueError(
            f"policy file {path} is for {ck['obs_dim']}-dim observations / {ck['act_dim']}-dim actions; "
            f"the environment has {obs_dim} / {act_dim}"
        )
    try:
        actor = Actor(ck["obs_dim"], ck["act_dim"], tuple(ck["hidden"]))
        actor.load_state_dict(ck["state_dict"])
    except (KeyError, RuntimeError, TypeError) as exc:
        raise ValueError(f"policy file {path} is damaged ({exc.__class__.__name__})") from None
    actor.extra = dict(ck.get("extra", {}))
    return actor


@dataclass
class PolicyConfig:
    """SAC + model-rollout settings (paper values in comments; ours are laptop-sized)."""

    algo: str = "mopo"
    steps: int = 20_000  # paper: 3,000 epochs x 1,000
    batch: int = 256
    hidden: tuple[int, ...] = (256, 256)
    actor_lr: float = 1e-4  # paper
    critic_lr: float = 3e-4  # paper
    gamma: float = 0.99
    tau: float = 0.005
    rollout_length: int = 1  # paper: h = 1 (MOPO+VIPO)
    rollout_batch: int = 5_000  # paper: 50k every 1,000 steps
    rollout_every: int = 250
    retain_rollouts: int = 5  # model buffer keeps this many rollout batches (paper: 5 epochs)
    real_ratio: float = 0.05  # paper
    penalty: float = 2.5  # MOPO lambda (paper, per task) / MOBILE beta
    eval_every: int = 1000
    eval_episodes: int = 5
    last_evals: int = 3  # the score is the mean of the last evaluations, never the max over training


@dataclass
class PolicyLog:
    eval_steps: list[int] = field(default_factory=list)
    eval_returns: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    visited_obs: np.ndarray | None = None  # (N, S) true-environment states of the final evaluation
    visited_act: np.ndarray | None = None
    visited_next: np.ndarray | None = None

    @property
    def final_return(self) -> float:
        return float("nan") if not self.eval_returns else float(np.mean(self.eval_returns[-self._k :]))

    _k: int = 3


class SAC:
    """Soft actor-critic with twin critics, Polyak targets and automatic entropy temperature."""

    def __init__(self, obs_dim: int, act_dim: int, cfg: PolicyConfig):
        self.cfg = cfg
        self.actor = Actor(obs_dim, act_dim, cfg.hidden)
        self.q = nn.ModuleList(_mlp(obs_dim + act_dim, cfg.hidden, 1) for _ in range(2))
        self.q_targ = copy.deepcopy(self.q).requires_grad_(False)
        self.log_alpha = torch.zeros((), requires_grad=True)
        self.target_entropy = -float(act_dim)
        self.opt_actor = torch.optim.Adam(self.actor.parameters(), lr=cfg.actor_lr)
        self.opt_q = torch.optim.Adam(self.q.parameters(), lr=cfg.critic_lr)
        self.opt_alpha = torch.optim.Adam([self.log_alpha], lr=cfg.actor_lr)

    def q_min(self, s, a, target: bool = False) -> torch.Tensor:
        nets = self.q_targ if target else self.q
        x = torch.cat([s, a], -1)
        return torch.min(nets[0](x), nets[1](x)).squeeze(-1)

    def update(self, batch: dict, gen: torch.Generator, q_penalty: torch.Tensor | None = None) -> None:
        s, a, r, s2, d = batch["obs"], batch["act"], batch["rew"], batch["nxt"], batch["done"]
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            a2, logp2 = self.actor(s2, gen)
            y = r + self.cfg.gamma * (1 - d) * (self.q_min(s2, a2, target=True) - alpha * logp2)
            if q_penalty is not None:  # MOBILE: Bellman-inconsistency penalty on model transitions
                y = y - q_penalty
        x = torch.cat([s, a], -1)
        loss_q = sum(((net(x).squeeze(-1) - y) ** 2).mean() for net in self.q)
        self.opt_q.zero_grad()
        loss_q.backward()
        self.opt_q.step()
        a_new, logp = self.actor(s, gen)
        loss_pi = (alpha * logp - self.q_min(s, a_new)).mean()
        self.opt_actor.zero_grad()
        loss_pi.backward()
        self.opt_actor.step()
        loss_alpha = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.opt_alpha.zero_grad()
        loss_alpha.backward()
        self.opt_alpha.step()
        with torch.no_grad():
            for p, pt in zip(self.q.parameters(), self.q_targ.parameters(), strict=True):
                pt.lerp_(p, self.cfg.tau)


def _mobile_penalty(sac: SAC, model: GaussianEnsemble, s, a_env, gen, act_scale) -> torch.Tensor:
    """``std_e[r_e + gamma min_j Qbar_j(s'_e, a'_e)]`` over the elites for a batch of model transitions (B,)."""
    with torch.no_grad():
        mu, logvar = model(s, a_env)
        e = model.elites
        y = mu[e] + (0.5 * logvar[e]).exp() * torch.randn(mu[e].shape, generator=gen)  # (K, B, O)
        s2 = s + y[..., : model.obs_dim]
        r = y[..., -1]
        a2, _ = sac.actor(s2, gen)
        targets = r + sac.cfg.gamma * sac.q_min(s2, a2, target=True)  # (K, B)
        return targets.std(0, correction=0)  # one elite: no disagreement, no penalty


def evaluate_policy(actor: Actor, env_id: str, episodes: int, seed: int, act_scale: np.ndarray):
    """Deterministic returns in the true environment; also the visited ``(s, a, s')`` (model error there)."""
    import gymnasium as gym

    env = gym.make(env_id)
    returns, visited = [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        done, ret = False, 0.0
        while not done:
            a = actor.act(torch.as_tensor(obs, dtype=torch.float32)[None]).numpy()[0] * act_scale
            nxt, r, term, trunc, _ = env.step(a)
            visited.append((obs, a, nxt))
            ret += float(r)
            obs, done = nxt, term or trunc
        returns.append(ret)
    env.close()
    o, a, n = (np.asarray(x, np.float32) for x in zip(*visited, strict=True))
    return returns, o, a, n


def train_policy(
    data: dict,
    model: GaussianEnsemble,
    env_id: str,
    cfg: PolicyConfig,
    termination: Callable,
    seed: int = 0,
) -> tuple[Actor, PolicyLog]:
    """Offline SAC on real + model-rollout transitions with the MOPO or MOBILE penalty (``cfg.algo``)."""
    import gymnasium as gym

    base = cfg.algo.split("+")[0]
    if base not in ("mopo", "mobile"):
        raise ValueError(f"algo must be one of {', '.join(ALGOS)}; got {cfg.algo!r}")
    env = gym.make(env_id)
    act_scale = env.action_space.high.astype(np.float32)
    env.close()
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    log = PolicyLog(_k=cfg.last_evals)
    t0 = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        obs = torch.as_tensor(data["observations"])
        real = {
            "obs": obs,
            "act": torch.as_tensor(data["actions"]) / torch.as_tensor(act_scale),
            "rew": torch.as_tensor(data["rewards"]),
            "nxt": torch.as_tensor(data["next_observations"]),
            "done": torch.as_tensor(data["terminals"], dtype=torch.float32),
        }
        sac = SAC(obs.shape[1], real["act"].shape[1], cfg)
        scale_t = torch.as_tensor(act_scale)
        cap = cfg.rollout_batch * cfg.rollout_length * cfg.retain_rollouts
        buf = {k: torch.zeros((cap, *v.shape[1:])) for k, v in real.items()}
        ptr, size = 0, 0
        n_real = max(1, round(cfg.real_ratio * cfg.batch))
        for it in range(cfg.steps):
            if it % cfg.rollout_every == 0:  # MOPO-style short rollouts from dataset states
                s = obs[torch.from_numpy(rng.integers(0, len(obs), cfg.rollout_batch))]
                for _ in range(cfg.rollout_length):
                    a = sac.actor.act(s, deterministic=False, gen=gen)
                    s2, r, unc = model.step(s, a * scale_t, gen)
                    if base == "mopo":
                        r = r - cfg.penalty * unc  # r_tilde = r_hat - lambda max_e ||Sigma_e||_F
                    d = torch.as_tensor(np.asarray(termination(s.numpy(), a.numpy(), s2.numpy())), dtype=torch.float32)
                    n = len(s)
                    idx = (ptr + torch.arange(n)) % cap
                    for k, v in (("obs", s), ("act", a), ("rew", r), ("nxt", s2), ("done", d)):
                        buf[k][idx] = v
                    ptr, size = (ptr + n) % cap, min(cap, size + n)
                    s = s2[d < 0.5]
                    if len(s) == 0:
                        break
            ri = torch.from_numpy(rng.integers(0, len(obs), n_real))
            mi = torch.from_numpy(rng.integers(0, size, cfg.batch - n_real))
            batch = {k: torch.cat([real[k][ri], buf[k][mi]]) for k in real}
            pen = None
            if base == "mobile":
                pen_m = cfg.penalty * _mobile_penalty(
                    sac, model, batch["obs"][n_real:], batch["act"][n_real:] * scale_t, gen, act_scale
                )
                pen = torch.cat([torch.zeros(n_real), pen_m])
            sac.update(batch, gen, pen)
            if (it + 1) % cfg.eval_every == 0 or it + 1 == cfg.steps:
                rets, vo, va, vn = evaluate_policy(sac.actor, env_id, cfg.eval_episodes, 10_000 + seed, act_scale)
                score = float(np.mean(rets))
                log.eval_steps.append(it + 1)
                log.eval_returns.append(score)
                log.wall_s.append(time.perf_counter() - t0)
                log.visited_obs, log.visited_act, log.visited_next = vo, va, vn
                logger.info("%s step %d: return %.1f", cfg.algo, it + 1, score)
    return sac.actor, log


def train_online(env_id: str, steps: int, seed: int = 0, start: int = 1000) -> tuple[Actor, list[float]]:
    """Plain online SAC (one update per environment step after ``start`` random steps): the behaviour policy
    that the ``paper`` preset's MuJoCo medium / expert datasets are collected with."""
    import gymnasium as gym

    env = gym.make(env_id)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    scale = env.action_space.high.astype(np.float32)
    cfg = PolicyConfig(actor_lr=3e-4)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        sac = SAC(obs_dim, act_dim, cfg)
        buf = {
            "obs": np.zeros((steps, obs_dim), np.float32),
            "act": np.zeros((steps, act_dim), np.float32),
            "rew": np.zeros(steps, np.float32),
            "nxt": np.zeros((steps, obs_dim), np.float32),
            "done": np.zeros(steps, np.float32),
        }
        obs, _ = env.reset(seed=seed)
        returns, ret = [], 0.0
        for t in range(steps):
            if t < start:
                a = rng.uniform(-1, 1, act_dim).astype(np.float32)
            else:
                a = sac.actor.act(torch.as_tensor(obs)[None], deterministic=False, gen=gen).numpy()[0]
            nxt, r, term, trunc, _ = env.step(a * scale)
            for k, v in (("obs", obs), ("act", a), ("rew", r), ("nxt", nxt), ("done", float(term))):
                buf[k][t] = v
            ret += float(r)
            obs = nxt
            if term or trunc:
                returns.append(ret)
                ret = 0.0
                obs, _ = env.reset(seed=int(rng.integers(2**31)))
            if t >= start:
                idx = rng.integers(0, t + 1, cfg.batch)
                sac.update({k: torch.as_tensor(v[idx]) for k, v in buf.items()}, gen)
    env.close()
    return sac.actor, returns
