"""GPM: a learned item-selection policy trained by gradient path matching (and its ablations / BOBCAT).

Training simulates adaptive tests on training examinees, differentiably:

1. The policy pi_phi(j | s_t) scores the items from the response state s_t in {-1, 0, +1}^J (wrong / not
   asked / right) and the current estimate theta_t: an MLP (J + 1 -> hidden, tanh -> J) plus a learned
   multiple beta of the item information log I_j(theta_t). An item is drawn by straight-through
   Gumbel-softmax, so the chosen one-hot vector carries the gradient of the soft choice. ``init="uniform"``
   (default) starts at beta = 0 with a zero output layer, i.e. uniformly random selection; ``init="mfi"``
   (ours) starts at beta = 1, i.e. maximum Fisher information at the policy's own estimate.
2. The inner estimator restarts from the meta-learned theta_0 after every selection and follows the
   paper's *optimisation path* on the selected items S_t (``inner="gradient"``, default: K = 10 plain
   gradient steps of size 0.1 on their mean binary cross-entropy, as in the authors' code)::

       theta_{t,k+1} = theta_{t,k} - eta * grad l_{S_t}(theta_{t,k}) / |S_t|,   k = 0 .. K - 1

   ``inner="fisher"`` (ours, the v1 default) takes K Fisher-scoring steps on the MAP objective instead,
   which reach the MAP estimate in about 3 steps.
3. GPM's loss (path gradient matching) compares, at every point theta_{t,0} .. theta_{t,K} of that path, the
   mean gradient of the selected subset S_t with the mean gradient of the examinee's whole query pool Q::

       L = mean_{b, t, k} | (1/|S_t|) grad l_{S_t}(theta_{t,k}) - (1/|Q|) grad l_Q(theta_{t,k}) |

   (``match="gradient"``, the loss as written) or, by default (``match="step"``, ours), the same with each side
   preconditioned by its information, i.e. the Fisher-scoring steps (grad l_S - theta) / (I_S + 1) vs
   (grad l_Q - theta) / (I_Q + 1): the raw mean gradient rewards uninformative items (see the README).
   ``objective="endpoint"`` is the ablation that matches only at the end of each path, theta_{t,K};
   ``objective="heldout"`` is BOBCAT's held-out binary cross-entropy at the final estimate.
4. phi, beta and theta_0 are updated by Adam on the exact hypergradient (backpropagation through the
   unrolled test and inner path). Training stops early when the loss on validation examinees (greedy
   rollouts, no Gumbel noise) has not improved for ``patience`` epochs; the best epoch's weights are kept.
"""

from __future__ import annotations

import copy
import logging
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from icml26._util.progress import progress
from icml26.gpm.evaluate import Split, split_pool
from icml26.gpm.irt import ItemBank, check_responses
from icml26.gpm.selectors import Selector, TestState, _masked_argmax

logger = logging.getLogger(__name__)

OBJECTIVES = ("path", "endpoint", "heldout")
INNER = ("gradient", "fisher")
INITS = ("uniform", "mfi")
#: the authors' inner estimator: 10 gradient steps of size 0.1
PAPER_INNER_STEPS, PAPER_INNER_LR = 10, 0.1


class SelectionPolicy(nn.Module):
    """pi_phi: logits over items from the response state and the current estimate.

    Parameters
    ----------
    n_items : int
    hidden : int
    dropout : float
    anchor : bool
        Add beta * log I_j(theta) with a learned beta. ``False``: beta is fixed at 0 and the policy scores
        items from the response state and theta alone (an ablation).
    init : {"uniform", "mfi"}
        Starting beta: 0 (untrained policy = uniform choice) or 1 (untrained policy = MFI; ours).
    """

    def __init__(self, n_items: int, hidden: int = 256, dropout: float = 0.1, anchor: bool = True,
                 init: str = "uniform"):  # fmt: skip
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(n_items + 1, hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(hidden, n_items)
        )
        nn.init.zeros_(self.mlp[-1].weight)  # untrained, only the information term speaks (or nothing)
        nn.init.zeros_(self.mlp[-1].bias)
        if anchor:
            self.beta = nn.Parameter(torch.tensor(1.0 if init == "mfi" else 0.0))  # weight of log I_j(theta)
        else:
            self.register_buffer("beta", torch.tensor(0.0))  # no information term
        self.theta0 = nn.Parameter(torch.tensor(0.0))  # meta-learned initial ability

    def forward(self, state: torch.Tensor, theta: torch.Tensor, log_info: torch.Tensor) -> torch.Tensor:
        """state (B, J), theta (B,), log_info (B, J) -> logits (B, J)."""
        return self.mlp(torch.cat([state, theta[:, None]], dim=1)) + self.beta * log_info


class _TorchBank:
    """The unidimensional bank as tensors, with the per-item quantities the rollout needs."""

    def __init__(self, bank: ItemBank, dtype=torch.float32):
        self.a = torch.as_tensor(np.linalg.norm(bank.a, axis=1), dtype=dtype)
        self.b = torch.as_tensor(bank.b, dtype=dtype)
        self.c = torch.as_tensor(bank.c, dtype=dtype) if np.any(bank.c > 0) else None  # None: no guessing

    def terms(self, theta: torch.Tensor, x: torch.Tensor):
        """P (B, J), per-item score d log L_j / d theta (B, J) and information (B, J) at theta (B,)."""
        return _item_terms(self.a, self.b, self.c, theta[:, None], x)


def _step(kind: str, theta, score_s, info_s, n_s, lr: float):
    """One inner step from theta given the subset's summed score and information (and its size)."""
    if kind == "gradient":  # gradient descent on the mean BCE = ascent on the mean log-likelihood
        step = lr * score_s / n_s
    else:  # Fisher scoring on the MAP objective (N(0, 1) prior), damped
        step = ((score_s - theta) / (info_s + 1.0)).clamp(-1.0, 1.0)
    return (theta + step).clamp(-6.0, 6.0)


def inner_path(tb: _TorchBank, theta0, weights, x, steps: int, kind: str = "gradient", lr: float = PAPER_INNER_LR):
    """The inner estimator's iterates theta_1 .. theta_K on the (soft-)selected items.

    weights (B, J) are the selection indicators; theta0 is broadcast to (B,).
    """
    theta = theta0.expand(x.shape[0])
    n_s = weights.detach().sum(1).clamp(min=1.0)
    path = []
    for _ in range(steps):
        _, score, info = tb.terms(theta, x)
        theta = _step(kind, theta, (weights * score).sum(1), (weights * info).sum(1), n_s, lr)
        path.append(theta)
    return path


def _item_terms(a, b, c, theta, x):
    """P, score and information of items with parameters a, b, c (broadcastable) at theta, answers x.

    ``c=None``: the 2PL (fewer operations; the rollout is bound by their count).
    """
    if c is None:
        p = torch.sigmoid(a * (theta - b)).clamp(1e-6, 1 - 1e-6)
        return p, a * (x - p), a * a * p * (1 - p)
    p = (c + (1 - c) * torch.sigmoid(a * (theta - b))).clamp(1e-6, 1 - 1e-6)
    w = (p - c) / (p * (1 - c))
    return p, a * w * (x - p), a**2 * w * (p - c) * (1 - p) / (1 - c)


def rollout(policy, tb, x, pool, heldout, n_steps, inner_steps, temperature, objective, match="step",
            generator=None, inner="gradient", inner_lr=PAPER_INNER_LR, greedy=False):  # fmt: skip
    """Simulate ``n_steps`` selections for a batch; return the training loss.

    x, pool, heldout: tensors (B, J) (responses with 0 at missing cells, pool and held-out masks).
    ``greedy``: choose the highest-scoring item without Gumbel noise (validation).

    The subset sums along the inner path are taken over the chosen items only, (B, t); the straight-through
    part of the choices (value 0, gradient of the soft choice) enters through one product with the item
    terms at the path points, computed without a graph. This gives the same values and gradients as summing
    ``selected * score`` over all J items at every path point, at a fraction of the cost.
    """
    B, J = x.shape
    rows = torch.arange(B)
    avail = pool.clone()
    state = torch.zeros(B, J, dtype=x.dtype)
    st = torch.zeros(B, J, dtype=x.dtype)  # sum over steps of (soft - soft.detach()): value 0, carries gradients
    signed = 2 * x - 1
    poolf = pool.to(x.dtype)
    n_pool = poolf.sum(1).clamp(min=1)
    chosen = torch.zeros(B, n_steps, dtype=torch.long)
    a3, b3, x3 = tb.a[None, None, :], tb.b[None, None, :], x[:, None, :]
    c3 = None if tb.c is None else tb.c[None, None, :]
    theta = policy.theta0.expand(B)
    terms = []
    for t in range(n_steps):
        _, _, info = tb.terms(theta, x)
        logits = policy(state, theta, torch.log(info + 1e-8)).masked_fill(~avail, float("-inf"))
        if greedy:
            soft = torch.softmax(logits, dim=1)
        else:
            u = torch.rand(B, J, generator=generator, dtype=x.dtype).clamp(1e-10, 1 - 1e-10)
            soft = torch.softmax((logits - torch.log(-torch.log(u))) / temperature, dim=1)  # Gumbel-softmax
        pick = soft.detach().argmax(1)
        chosen[:, t] = pick
        delta = soft - soft.detach()  # straight-through: the hard one-hot plus this
        st = st + delta
        hard = torch.zeros_like(state).index_put((rows, pick), signed[rows, pick])  # the chosen answer, +-1
        state = state + hard + delta * signed
        avail = avail.index_put((rows, pick), torch.zeros(B, dtype=torch.bool))
        idx = chosen[:, : t + 1]
        a_s, b_s, x_s = tb.a[idx], tb.b[idx], x.gather(1, idx)  # (B, t + 1)
        c_s = None if tb.c is None else tb.c[idx]
        n_s = torch.full((B,), float(t + 1), dtype=x.dtype)

        def sums(th, a_s=a_s, b_s=b_s, c_s=c_s, x_s=x_s):  # score and information summed over S_t at th (B,)
            _, sc, inf = _item_terms(a_s, b_s, c_s, th[:, None], x_s)
            return sc.sum(1), inf.sum(1)

        th, path, g_s, i_s = policy.theta0.expand(B), [], [], []
        for k in range(inner_steps + 1):  # the path theta_{t,0} .. theta_{t,K}
            with torch.no_grad():  # every item's terms at theta_{t,k}, without a graph
                _, sc_all, inf_all = tb.terms(th.detach(), x)
            s_k, i_k = sums(th)
            path.append(th)
            g_s.append(s_k + (st * sc_all).sum(1))  # value: s_k; gradient: also the soft choices' share
            i_s.append(i_k + (st * inf_all).sum(1))
            if k < inner_steps:
                th = _step(inner, th, g_s[-1], i_s[-1], n_s, inner_lr)
        theta = th
        if objective in ("path", "endpoint"):
            ks = slice(None) if objective == "path" else slice(inner_steps, None)
            ths = torch.stack(path, 1)[:, ks]  # (B, P)
            _, sc_q, inf_q = _item_terms(a3, b3, c3, ths[:, :, None], x3)  # (B, P, J)
            g_q, i_q = (sc_q * poolf[:, None, :]).sum(2), (inf_q * poolf[:, None, :]).sum(2)
            gs, is_ = torch.stack(g_s, 1)[:, ks], torch.stack(i_s, 1)[:, ks]
            if match == "gradient":  # Eq. L_t: mean gradients of S_t and of Q
                diff = gs / n_s[:, None] - g_q / n_pool[:, None]
            else:  # the Fisher-scoring steps (MAP objective) from S_t and from Q
                diff = (gs - ths) / (is_ + 1.0) - (g_q - ths) / (i_q + 1.0)
            terms.append(diff.abs())
    if objective in ("path", "endpoint"):
        return torch.cat(terms, 1).mean()
    p, _, _ = tb.terms(theta, x)
    bce = -(x * torch.log(p) + (1 - x) * torch.log1p(-p))
    return ((bce * heldout).sum(1) / heldout.sum(1).clamp(min=1)).mean()


class GPMSelector(Selector):
    """A selection policy trained with GPM's path gradient matching (or an ablation, or BOBCAT's loss).

    Parameters
    ----------
    bank : ItemBank
        Unidimensional calibrated bank the policy selects from.
    objective : {"path", "endpoint", "heldout"}
        ``path``: GPM's gradient matching at every point of the inner path; ``endpoint``: the same loss at
        the path's last point only (the ablation that removes the path); ``heldout``: BOBCAT's held-out
        cross-entropy.
    match : {"step", "gradient"}
        What is matched: the Fisher-scoring steps the MAP estimator would take from S_t and from Q (default,
        ours), or the raw mean log-likelihood gradients of S_t and Q (the loss as written). The raw mean
        gradient is smallest for uninformative items (near-zero gradients everywhere), a degenerate optimum
        the policy finds (it learns beta < 0); see the README.
    inner : {"gradient", "fisher"}
        The inner estimator whose path is matched: the paper's plain gradient steps (default) or Fisher
        scoring on the MAP objective (ours).
    test_length : int
        Selections simulated per training test.
    inner_steps, inner_lr : K and the step size of the inner estimator (paper: 10 and 0.1).
    hidden, dropout : policy MLP size and dropout.
    epochs : int
        Most passes over the training examinees (0: the untrained policy).
    batch_size, lr : Adam schedule (beta and theta_0 learn 10x faster than the MLP).
    patience : int
        Stop after this many epochs without a better validation loss (the best epoch is kept).
    val_frac : float
        Share of the training examinees held out for early stopping.
    temperature : float
        Gumbel-softmax temperature during training (selection at test time is greedy).
    anchor : bool
        Keep the learned beta * log I_j(theta) term (default); ``False`` fixes beta = 0.
    init : {"uniform", "mfi"}
        Untrained policy = uniform selection (default) or MFI at the policy's estimate (ours).
    seed : int
    """

    name = "gpm"

    def __init__(
        self,
        bank: ItemBank,
        *,
        objective: str = "path",
        match: str = "step",
        inner: str = "gradient",
        test_length: int = 20,
        inner_steps: int = PAPER_INNER_STEPS,
        inner_lr: float = PAPER_INNER_LR,
        hidden: int = 256,
        dropout: float = 0.1,
        epochs: int = 20,
        batch_size: int = 64,
        lr: float = 3e-3,
        patience: int = 3,
        val_frac: float = 0.1,
        temperature: float = 1.0,
        anchor: bool = True,
        init: str = "uniform",
        seed: int = 0,
    ):
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES} (GPM, its endpoint ablation, BOBCAT)")
        if match not in ("step", "gradient"):
            raise ValueError("match must be 'step' (Fisher-preconditioned, default) or 'gradient' (raw mean gradients)")
        if inner not in INNER:
            raise ValueError(f"inner must be one of {INNER}")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}")
        if init == "mfi" and not anchor:
            raise ValueError("init='mfi' needs the information term (anchor=True)")
        if bank.n_dims != 1:
            raise ValueError("the policy needs a unidimensional bank")
        if test_length < 1 or test_length > bank.n_items:
            raise ValueError(f"test_length must lie in 1..{bank.n_items} (the bank size)")
        if inner_steps < 1:
            raise ValueError("inner_steps must be >= 1")
        if not 0 < val_frac < 1:
            raise ValueError("val_frac must lie in (0, 1)")
        self.bank = bank
        self.objective = objective
        self.match = match
        self.inner = inner
        self.test_length = test_length
        self.inner_steps = inner_steps
        self.inner_lr = inner_lr
        self.hidden = hidden
        self.dropout = dropout
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.patience = patience
        self.val_frac = val_frac
        self.temperature = temperature
        self.anchor = anchor
        self.init = init
        self.seed = seed
        self.name = {"path": "gpm", "endpoint": "gpm-endpoint", "heldout": "bobcat"}[objective]

    def _rollout(self, policy, tb, x, pool, held, n_steps, generator=None, greedy=False):
        return rollout(policy, tb, x, pool, held, n_steps, self.inner_steps, self.temperature, self.objective,
                       self.match, generator, self.inner, self.inner_lr, greedy)  # fmt: skip

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
        # validation examinees for early stopping (none when there are too few to spare)
        n_val = round(self.val_frac * x.shape[0]) if x.shape[0] >= 20 else 0
        perm = torch.randperm(x.shape[0], generator=torch_gen)
        val, train = perm[:n_val], perm[n_val:]
        tb = _TorchBank(self.bank)
        with torch.random.fork_rng(devices=[]):  # seeded here; the caller's global RNG is restored
            torch.manual_seed(self.seed)
            policy = SelectionPolicy(self.bank.n_items, self.hidden, self.dropout, self.anchor, self.init)
            fast = [p for n, p in policy.named_parameters() if n in ("beta", "theta0")]
            slow = [p for n, p in policy.named_parameters() if n not in ("beta", "theta0")]
            opt = torch.optim.Adam([{"params": slow}, {"params": fast, "lr": 10 * self.lr}], lr=self.lr)
            history, val_history, best, best_state, stale, updates = [], [], np.inf, None, 0, 0
            epochs = progress(range(self.epochs), desc=f"{self.name} training", unit="epoch")
            for epoch in epochs:  # a progress bar on a terminal only, none under --quiet
                policy.train()
                order = train[torch.randperm(train.numel(), generator=torch_gen)]
                losses = []
                for lo in range(0, order.numel(), self.batch_size):
                    idx = order[lo : lo + self.batch_size]
                    loss = self._rollout(policy, tb, x[idx], pool[idx], held[idx], n_steps, torch_gen)
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(policy.parameters(), 5.0)
                    opt.step()
                    updates += 1
                    losses.append(float(loss.detach()))
                history.append(float(np.mean(losses)))
                if n_val:
                    policy.eval()
                    with torch.no_grad():
                        v = float(self._rollout(policy, tb, x[val], pool[val], held[val], n_steps, greedy=True))
                    val_history.append(v)
                    if v < best - 1e-6:
                        best, best_state, stale = v, copy.deepcopy(policy.state_dict()), 0
                    else:
                        stale += 1
                epochs.set_postfix(loss=f"{history[-1]:.4f}")
                logger.info("%s epoch %d: loss %.4f, validation %s", self.name, epoch + 1, history[-1],
                            f"{val_history[-1]:.4f}" if val_history else "-")  # fmt: skip
                if n_val and stale >= self.patience:
                    break
            if best_state is not None:
                policy.load_state_dict(best_state)
            policy.eval()
            self.policy_ = policy
            self.history_ = history
            self.val_history_ = val_history
            self.n_updates_ = updates
            self.best_epoch_ = int(np.argmin(val_history)) + 1 if val_history else len(history)
        return self

    def _check_fitted(self):
        if not hasattr(self, "policy_"):
            raise RuntimeError("the policy is not trained: call fit(responses) first (or load a saved one)")

    def with_bank(self, bank: ItemBank) -> GPMSelector:
        """The trained policy, re-bound to a re-calibrated bank of the same items (same order).

        The policy's weights are kept; its information term and inner estimator use the new parameters.
        """
        self._check_fitted()
        if bank.n_dims != 1 or bank.n_items != self.bank.n_items:
            raise ValueError(f"the policy was trained for {self.bank.n_items} items of a unidimensional bank")
        other = copy.copy(self)
        other.bank = bank
        return other

    @torch.no_grad()
    def select(self, bank, state: TestState, rng):
        self._check_fitted()
        if bank.n_items != self.bank.n_items:
            raise ValueError(f"the policy was trained for {self.bank.n_items} items, the bank has {bank.n_items}")
        if bank is not self.bank and not _same_bank(bank, self.bank):
            raise ValueError(
                "the policy was trained for another bank (same size, different item parameters); "
                "use policy.with_bank(bank) to re-bind it to a re-calibrated bank of the same items"
            )
        tb = _TorchBank(self.bank)
        asked = ~np.isnan(state.responses)
        x = torch.as_tensor(np.nan_to_num(state.responses), dtype=torch.float32)
        sel = torch.as_tensor(asked, dtype=torch.float32)
        theta = self.policy_.theta0.expand(x.shape[0])
        if asked.any():
            theta = inner_path(tb, self.policy_.theta0, sel, x, self.inner_steps, self.inner, self.inner_lr)[-1]
        _, _, info = tb.terms(theta, x)
        logits = self.policy_(sel * (2 * x - 1), theta, torch.log(info + 1e-8))
        return _masked_argmax(logits.numpy().astype(float), state.available)

    def save(self, path) -> None:
        """Save the trained policy (and its bank) to a ``.pt`` file."""
        self._check_fitted()
        from icml26._util.io import atomic_output

        hyper = {k: _plain(getattr(self, k)) for k in HYPER}
        bank = {
            "a": torch.as_tensor(np.asarray(self.bank.a, dtype=np.float64)),
            "b": torch.as_tensor(np.asarray(self.bank.b, dtype=np.float64)),
            "c": torch.as_tensor(np.asarray(self.bank.c, dtype=np.float64)),
            "model": str(self.bank.model),
        }
        blob = {"version": 3, "hyper": hyper, "bank": bank, "state": self.policy_.state_dict(),
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
        if not isinstance(blob, dict) or blob.get("version") != 3 or not {"hyper", "bank", "state"} <= set(blob):
            raise ValueError(f"{path}: not a GPM policy file (written by 'icml26 gpm train', version 3)")
        a = blob["bank"]["a"].numpy()
        bank = ItemBank(a[:, 0] if a.shape[1] == 1 else a, blob["bank"]["b"].numpy(), blob["bank"]["c"].numpy(),
                        blob["bank"]["model"])  # fmt: skip
        sel = cls(bank, **blob["hyper"])
        sel.policy_ = SelectionPolicy(bank.n_items, sel.hidden, sel.dropout, sel.anchor, sel.init)
        sel.policy_.load_state_dict(blob["state"])
        sel.policy_.eval()
        sel.history_ = blob["history"]
        return sel


#: hyper-parameters stored in a policy file
HYPER = ("objective", "match", "inner", "test_length", "inner_steps", "inner_lr", "hidden", "dropout", "epochs",
         "batch_size", "lr", "patience", "val_frac", "temperature", "anchor", "init", "seed")  # fmt: skip


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
