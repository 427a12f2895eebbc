"""GPM: a learned item-selection policy trained by gradient path matching (and the BOBCAT-style baseline).

Training simulates adaptive tests on training examinees, differentiably:

1. The policy pi_phi(j | s_t) scores the items from the response state s_t in {-1, 0, +1}^J (wrong / not
   asked / right) and the current estimate theta_t: an MLP (J + 1 -> hidden, tanh -> J) plus an information
   anchor beta * log I_j(theta_t). An item is drawn by straight-through Gumbel-softmax, so the chosen
   one-hot vector carries the gradient of the soft choice.
2. The inner estimator restarts from the meta-learned theta_0 and takes K Fisher-scoring steps on the MAP
   objective of the selected items: theta_0 -> theta_{t,1} -> ... -> theta_{t,K}, the *optimisation path*.
3. GPM's loss (path gradient matching) compares, at every point of that path, the mean gradient of the
   selected subset S_t with the mean gradient of the examinee's whole query pool Q::

       L = mean_{b, t, k} || (1/|S_t|) grad l_{S_t}(theta_{t,k}) - (1/|Q|) grad l_Q(theta_{t,k}) ||

   or (default, ``match="step"``) the same with each gradient preconditioned by its set's information,
   i.e. the Fisher-scoring steps  (grad l_S - theta) / (I_S + 1)  vs  (grad l_Q - theta) / (I_Q + 1).

   BOBCAT's loss instead is the binary cross-entropy of the held-out responses at the final estimate.
4. phi, beta and theta_0 are updated by Adam on the exact hypergradient (backpropagation through the
   unrolled test and inner path).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from icml26.gpm.evaluate import Split, split_pool
from icml26.gpm.irt import ItemBank, check_responses
from icml26.gpm.selectors import Selector, TestState, _masked_argmax

logger = logging.getLogger(__name__)


class SelectionPolicy(nn.Module):
    """pi_phi: logits over items from the response state and the current estimate.

    Parameters
    ----------
    n_items : int
    hidden : int
    dropout : float
    anchor : bool
        Add the information anchor beta * log I_j(theta) (beta learned, starts at 1). ``False``: beta is
        fixed at 0 and the policy scores items from the response state and theta alone (an ablation).
    """

    def __init__(self, n_items: int, hidden: int = 256, dropout: float = 0.1, anchor: bool = True):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(n_items + 1, hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(hidden, n_items)
        )
        nn.init.zeros_(self.mlp[-1].weight)  # start as the pure information anchor (soft MFI)
        nn.init.zeros_(self.mlp[-1].bias)
        if anchor:
            self.beta = nn.Parameter(torch.tensor(1.0))  # weight of log I_j(theta)
        else:
            self.register_buffer("beta", torch.tensor(0.0))  # no information anchor
        self.theta0 = nn.Parameter(torch.tensor(0.0))  # meta-learned initial ability

    def forward(self, state: torch.Tensor, theta: torch.Tensor, log_info: torch.Tensor) -> torch.Tensor:
        """state (B, J), theta (B,), log_info (B, J) -> logits (B, J)."""
        return self.mlp(torch.cat([state, theta[:, None]], dim=1)) + self.beta * log_info


class _TorchBank:
    """The unidimensional bank as tensors, with the per-item quantities the rollout needs."""

    def __init__(self, bank: ItemBank, dtype=torch.float32):
        self.a = torch.as_tensor(np.linalg.norm(bank.a, axis=1), dtype=dtype)
        self.b = torch.as_tensor(bank.b, dtype=dtype)
        self.c = torch.as_tensor(bank.c, dtype=dtype)

    def terms(self, theta: torch.Tensor, x: torch.Tensor):
        """P (B, J), per-item score d log L_j / d theta (B, J) and information (B, J) at theta (B,)."""
        p = (self.c + (1 - self.c) * torch.sigmoid(self.a * (theta[:, None] - self.b))).clamp(1e-6, 1 - 1e-6)
        w = (p - self.c) / (p * (1 - self.c))
        score = self.a * w * (x - p)
        info = self.a**2 * w * (p - self.c) * (1 - p) / (1 - self.c)
        return p, score, info


def inner_path(tb: _TorchBank, theta0: torch.Tensor, weights: torch.Tensor, x: torch.Tensor, steps: int):
    """K Fisher-scoring steps on the MAP objective of the (soft-)selected items; returns the iterates.

    weights (B, J) are the selection indicators; theta0 is broadcast to (B,).
    """
    theta = theta0.expand(x.shape[0])
    path = []
    for _ in range(steps):
        _, score, info = tb.terms(theta, x)
        step = ((weights * score).sum(1) - theta) / ((weights * info).sum(1) + 1.0)
        theta = (theta + step.clamp(-1.0, 1.0)).clamp(-6.0, 6.0)
        path.append(theta)
    return path


def rollout(policy, tb, x, pool, heldout, n_steps, inner_steps, temperature, objective, match="step", generator=None):
    """Simulate ``n_steps`` selections for a batch; return the training loss.

    x, pool, heldout: tensors (B, J) (responses with 0 at missing cells, pool and held-out masks).
    """
    B, J = x.shape
    avail = pool.clone()
    selected = torch.zeros(B, J, dtype=x.dtype)
    state = torch.zeros(B, J, dtype=x.dtype)
    signed = 2 * x - 1
    n_pool = pool.sum(1).clamp(min=1)
    theta = policy.theta0.expand(B)
    path_terms = []
    for t in range(n_steps):
        _, _, info = tb.terms(theta, x)
        logits = policy(state, theta, torch.log(info + 1e-8)).masked_fill(~avail, float("-inf"))
        u = torch.rand(B, J, generator=generator, dtype=x.dtype).clamp(1e-10, 1 - 1e-10)
        soft = torch.softmax((logits - torch.log(-torch.log(u))) / temperature, dim=1)  # Gumbel-softmax
        hard = nn.functional.one_hot(soft.argmax(1), J).to(x.dtype) * avail
        choice = hard + soft - soft.detach()  # straight-through
        selected = selected + choice
        state = state + choice * signed
        avail = avail & (hard == 0)
        path = inner_path(tb, policy.theta0, selected, x, inner_steps)
        theta = path[-1]
        if objective == "path":
            for th in path:  # matching at every point the estimator visits
                _, score, info_k = tb.terms(th, x)
                if match == "gradient":  # Eq. L_t: mean gradients of S_t and of Q
                    g_s = (selected * score).sum(1) / (t + 1)
                    g_q = (pool * score).sum(1) / n_pool
                else:  # the estimator's Fisher-scoring step from S_t vs from Q (MAP objective)
                    g_s = ((selected * score).sum(1) - th) / ((selected * info_k).sum(1) + 1.0)
                    g_q = ((pool * score).sum(1) - th) / ((pool * info_k).sum(1) + 1.0)
                path_terms.append((g_s - g_q).abs())
    if objective == "path":
        return torch.stack(path_terms).mean()
    p, _, _ = tb.terms(theta, x)
    bce = -(x * torch.log(p) + (1 - x) * torch.log1p(-p))
    return ((bce * heldout).sum(1) / heldout.sum(1).clamp(min=1)).mean()


class GPMSelector(Selector):
    """A selection policy trained with the path gradient-matching loss (GPM) or the held-out loss (BOBCAT).

    Parameters
    ----------
    bank : ItemBank
        Unidimensional calibrated bank the policy selects from.
    objective : {"path", "heldout"}
        ``path``: GPM's path gradient matching; ``heldout``: BOBCAT's held-out cross-entropy.
    match : {"step", "gradient"}
        What is matched along the path. ``gradient``: the mean log-likelihood gradients of S_t and Q
        (the loss as written); ``step`` (default): the Fisher-scoring steps the MAP estimator would take
        from S_t and from Q, i.e. the gradients preconditioned by each set's information. The raw mean
        gradient is smallest for uninformative items (tiny gradients everywhere), a degenerate optimum the
        policy finds; the preconditioned step is not (see the README's deviations).
    test_length : int
        Selections simulated per training test.
    inner_steps : int
        K, Fisher-scoring steps of the inner estimator (the path length).
    hidden, dropout : policy MLP size and dropout.
    epochs, batch_size, lr : Adam training schedule.
    temperature : float
        Gumbel-softmax temperature during training (selection at test time is greedy).
    anchor : bool
        Keep the information anchor beta * log I_j(theta) in the policy (default); ``False`` removes it
        (beta = 0, fixed), so the policy must learn item selection from the response state alone.
    seed : int
    """

    name = "gpm"

    def __init__(
        self,
        bank: ItemBank,
        *,
        objective: str = "path",
        match: str = "step",
        test_length: int = 20,
        inner_steps: int = 3,
        hidden: int = 256,
        dropout: float = 0.1,
        epochs: int = 5,
        batch_size: int = 128,
        lr: float = 3e-3,
        temperature: float = 1.0,
        anchor: bool = True,
        seed: int = 0,
    ):
        if objective not in ("path", "heldout"):
            raise ValueError("objective must be 'path' (GPM) or 'heldout' (BOBCAT)")
        if match not in ("step", "gradient"):
            raise ValueError("match must be 'step' (Fisher-preconditioned, default) or 'gradient' (raw mean gradients)")
        if bank.n_dims != 1:
            raise ValueError("the policy needs a unidimensional bank")
        if test_length < 1 or test_length > bank.n_items:
            raise ValueError(f"test_length must lie in 1..{bank.n_items} (the bank size)")
        self.bank = bank
        self.objective = objective
        self.match = match
        self.test_length = test_length
        self.inner_steps = inner_steps
        self.hidden = hidden
        self.dropout = dropout
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.temperature = temperature
        self.anchor = anchor
        self.seed = seed
        self.name = "gpm" if objective == "path" else "bobcat"

    def fit(self, responses, heldout_frac: float = 0.2) -> GPMSelector:
        """Train on a response matrix (N, J) of training examinees (NaN = missing)."""
        x_np = check_responses(responses, self.bank.n_items)
        if x_np.shape[0] < 2:
            raise ValueError("training needs at least 2 examinees")
        rng = np.random.default_rng(self.seed)
        torch_gen = torch.Generator().manual_seed(self.seed)
        split = split_pool(x_np, rng, heldout_frac)
        # Every simulated training test has the same length: an examinee whose query pool is shorter would
        # silently shorten it for everyone, so such examinees are left out (with a warning) instead.
        pool_size = split.pool.sum(axis=1)
        n_steps = int(min(self.test_length, pool_size.max()))
        short = pool_size < n_steps
        if short.any():
            warnings.warn(
                f"excluding {int(short.sum())} training examinee(s) whose query pool has fewer than {n_steps} "
                f"items (the simulated test length): rows {np.flatnonzero(short)[:10].tolist()}",
                UserWarning,
                stacklevel=2,
            )
            x_np, split = x_np[~short], Split(split.pool[~short], split.heldout[~short])
            if x_np.shape[0] < 2:
                raise ValueError(f"training needs at least 2 examinees with {n_steps} or more answered pool items")
        if n_steps < 1:
            raise ValueError("training needs examinees with at least 2 observed responses (a pool and a held-out item)")
        x = torch.as_tensor(np.nan_to_num(x_np), dtype=torch.float32)
        pool, held = torch.as_tensor(split.pool), torch.as_tensor(split.heldout).to(torch.float32)
        tb = _TorchBank(self.bank)
        with torch.random.fork_rng(devices=[]):  # seeded here; the caller's global RNG is restored
            torch.manual_seed(self.seed)
            policy = SelectionPolicy(self.bank.n_items, self.hidden, self.dropout, self.anchor)
            opt = torch.optim.Adam(policy.parameters(), lr=self.lr)
            history = []
            policy.train()
            epochs = tqdm(range(self.epochs), desc=f"{self.name} training", unit="epoch", disable=None, leave=False)
            for epoch in epochs:  # a progress bar on a terminal only (disable=None)
                order = torch.randperm(x.shape[0], generator=torch_gen)
                losses = []
                for lo in range(0, x.shape[0], self.batch_size):
                    idx = order[lo : lo + self.batch_size]
                    loss = rollout(
                        policy, tb, x[idx], pool[idx], held[idx], n_steps, self.inner_steps,
                        self.temperature, self.objective, self.match, torch_gen,
                    )  # fmt: skip
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(policy.parameters(), 5.0)
                    opt.step()
                    losses.append(float(loss.detach()))
                history.append(float(np.mean(losses)))
                epochs.set_postfix(loss=f"{history[-1]:.4f}")
                logger.info("%s epoch %d: loss %.4f", self.name, epoch + 1, history[-1])
            policy.eval()
            self.policy_ = policy
            self.history_ = history
        return self

    def _check_fitted(self):
        if not hasattr(self, "policy_"):
            raise RuntimeError("the policy is not trained: call fit(responses) first (or load a saved one)")

    @torch.no_grad()
    def select(self, bank, state: TestState, rng):
        self._check_fitted()
        if bank.n_items != self.bank.n_items:
            raise ValueError(f"the policy was trained for {self.bank.n_items} items, the bank has {bank.n_items}")
        if bank is not self.bank and not _same_bank(bank, self.bank):
            raise ValueError("the policy was trained for another bank (same size, different item parameters)")
        tb = _TorchBank(self.bank)
        asked = ~np.isnan(state.responses)
        x = torch.as_tensor(np.nan_to_num(state.responses), dtype=torch.float32)
        sel = torch.as_tensor(asked, dtype=torch.float32)
        theta = inner_path(tb, self.policy_.theta0, sel, x, self.inner_steps)[-1] if asked.any() else None
        if theta is None:
            theta = self.policy_.theta0.expand(x.shape[0])
        _, _, info = tb.terms(theta, x)
        logits = self.policy_(sel * (2 * x - 1), theta, torch.log(info + 1e-8))
        return _masked_argmax(logits.numpy().astype(float), state.available)

    def save(self, path) -> None:
        """Save the trained policy (and its bank) to a ``.pt`` file."""
        self._check_fitted()
        names = ("objective", "match", "test_length", "inner_steps", "hidden", "dropout", "epochs", "batch_size",
                 "lr", "temperature", "anchor", "seed")  # fmt: skip
        from icml26._util.io import atomic_output

        hyper = {k: _plain(getattr(self, k)) for k in names}
        bank = {
            "a": torch.as_tensor(np.asarray(self.bank.a, dtype=np.float64)),
            "b": torch.as_tensor(np.asarray(self.bank.b, dtype=np.float64)),
            "c": torch.as_tensor(np.asarray(self.bank.c, dtype=np.float64)),
            "model": str(self.bank.model),
        }
        blob = {"version": 2, "hyper": hyper, "bank": bank, "state": self.policy_.state_dict(),
                "history": [float(v) for v in self.history_]}  # fmt: skip
        with atomic_output(path) as tmp:  # a failed save never replaces an existing policy
            torch.save(blob, tmp)

    @classmethod
    def load(cls, path) -> GPMSelector:
        """Load a policy saved by :meth:`save`."""
        path = Path(path)
        if path.is_dir():
            raise IsADirectoryError(f"policy file {path} is a directory, not a file")
        if not path.is_file():
            raise FileNotFoundError(f"no such policy file: {path}")
        try:
            blob = torch.load(path, weights_only=True)
        except Exception as exc:  # torch raises many types, with multi-line messages, for a foreign file
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"{path}: not a GPM policy file of this version ({type(exc).__name__}: {first})") from None
        if not isinstance(blob, dict) or blob.get("version") != 2 or not {"hyper", "bank", "state"} <= set(blob):
            raise ValueError(f"{path}: not a GPM policy file (written by 'icml26 gpm train', version 2)")
        a = blob["bank"]["a"].numpy()
        bank = ItemBank(a[:, 0] if a.shape[1] == 1 else a, blob["bank"]["b"].numpy(), blob["bank"]["c"].numpy(),
                        blob["bank"]["model"])  # fmt: skip
        sel = cls(bank, **blob["hyper"])
        sel.policy_ = SelectionPolicy(bank.n_items, sel.hidden, sel.dropout, sel.anchor)
        sel.policy_.load_state_dict(blob["state"])
        sel.policy_.eval()
        sel.history_ = blob["history"]
        return sel


def _plain(value):
    """A hyper-parameter as plain Python (what ``torch.load(weights_only=True)`` accepts)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def _same_bank(a: ItemBank, b: ItemBank) -> bool:
    """Equal item parameters up to the 6 significant digits of a bank CSV."""
    return a.a.shape == b.a.shape and all(
        np.allclose(u, v, rtol=1e-5, atol=1e-8) for u, v in ((a.a, b.a), (a.b, b.b), (a.c, b.c))
    )


def BOBCATSelector(bank: ItemBank, **kwargs) -> GPMSelector:
    """The BOBCAT-style baseline: same policy, meta-learned theta_0, trained on held-out cross-entropy."""
    return GPMSelector(bank, objective="heldout", **kwargs)
