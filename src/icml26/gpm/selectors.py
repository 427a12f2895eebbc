"""Item selectors behind one interface, vectorised over a batch of examinees taking tests in parallel.

A selector sees a :class:`TestState` and returns one item per examinee. Selectors never see unasked
responses. Unidimensional banks only (a multidimensional bank is scored by the trace of its information).

- :class:`RandomSelector` - uniform over the available items.
- :class:`MFISelector` - maximum Fisher information at the current estimate, I_j(theta) = a^2 P (1 - P) (2PL).
- :class:`KLISelector` - Kullback-Leibler information integrated over theta_hat +- 3 / sqrt(t) (Chang & Ying, 1996).
- :class:`BECATSelector` - BECAT (Zhuang et al., NeurIPS 2023): greedy facility location on the expected
  gradient difference w_ij = d - E|g_i - g_j|, over a random sample of |S| + 5 untested items (or all of them).
- Learned policies (BOBCAT-style, GPM) live in :mod:`icml26.gpm.policy` and implement the same interface.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.gpm.irt import ItemBank


@dataclass
class TestState:
    """What a selector may look at, for B examinees.

    Attributes
    ----------
    responses : array of shape (B, J)
        1 / 0 for asked items, NaN elsewhere.
    available : bool array of shape (B, J)
        Items that may still be asked (in the examinee's pool and not asked yet).
    theta : array of shape (B,)
        Current ability estimate (MAP on the asked items).
    step : int
        Number of items asked so far.
    """

    responses: np.ndarray
    available: np.ndarray
    theta: np.ndarray
    step: int

    __test__ = False  # not a pytest test class


def _masked_argmax(score: np.ndarray, available: np.ndarray) -> np.ndarray:
    """Row-wise argmax over available items; -1 for rows with nothing available."""
    score = np.where(available, score, -np.inf)
    idx = np.argmax(score, axis=1)
    return np.where(available.any(axis=1), idx, -1)


class Selector:
    """Interface: ``select(bank, state, rng) -> array of shape (B,)`` item indices (-1: none available)."""

    name = "selector"

    def select(self, bank: ItemBank, state: TestState, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError


def check_selector(selector, name: str = "selector") -> None:
    """Refuse anything without a ``select`` method (e.g. the string ``"mfi"``) with a clear TypeError."""
    if not callable(getattr(selector, "select", None)):
        hint = (
            " (build one with icml26.gpm.experiment.make_selector(name, bank, cfg, seed))"
            if isinstance(selector, str)
            else ""
        )
        raise TypeError(f"{name} must be a Selector object; got {type(selector).__name__} {selector!r}{hint}")


def check_bank(bank, name: str = "bank") -> None:
    """Refuse anything that is not an :class:`ItemBank` with a clear TypeError."""
    if not isinstance(bank, ItemBank):
        raise TypeError(f"{name} must be an icml26.gpm.irt.ItemBank; got {type(bank).__name__}")


class RandomSelector(Selector):
    name = "random"

    def select(self, bank, state, rng):
        return _masked_argmax(rng.random(state.available.shape), state.available)


class MFISelector(Selector):
    name = "mfi"

    def select(self, bank, state, rng):
        return _masked_argmax(bank.information(state.theta), state.available)


class KLISelector(Selector):
    """KL information sum_q KL(P(theta_hat) || P(theta_q)) over a grid on theta_hat +- 3 / sqrt(max(t, 1))."""

    name = "kli"

    def __init__(self, n_points: int = 11):
        self.n_points = n_points

    def select(self, bank, state, rng):
        delta = 3.0 / np.sqrt(max(state.step, 1))
        offsets = np.linspace(-delta, delta, self.n_points)
        p_hat = np.clip(bank.prob(state.theta), 1e-9, 1 - 1e-9)  # (B, J)
        score = np.zeros_like(p_hat)
        for off in offsets:
            p = np.clip(bank.prob(state.theta + off), 1e-9, 1 - 1e-9)
            score += p_hat * np.log(p_hat / p) + (1 - p_hat) * np.log((1 - p_hat) / (1 - p))
        return _masked_argmax(score, state.available)


class BECATSelector(Selector):
    """BECAT's greedy facility-location step on the expected gradient difference.

    Every available item q is a candidate. Its marginal gain is computed on a ground set
    V = S (asked items) + a random sample of ``|S| + extra`` untested items (+ q)::

        w_ij = d - E_{y_i, y_j} |g_i(y_i) - g_j(y_j)|,   g_j(y) = d loss_j / d theta at theta_hat
        F(S) = sum_{i in V minus S} max_{j in S} w_ij,       gain(q) = F(S + q) - F(S)

    with the expectation over the predicted outcome probabilities (as in the published code). So one
    step costs O(|V| J) per examinee; with ``extra=None`` the ground set is every available item
    ("global" alignment) and a step costs O(J^2).

    Parameters
    ----------
    extra : int or None
        Sample ``|S| + extra`` untested items into the ground set (published: 5); ``None``: all of them.
    d : float
        The constant of w_ij (published: 100).
    """

    name = "becat"

    def __init__(self, extra: int | None = 5, d: float = 100.0):
        self.extra = extra
        self.d = d

    def select(self, bank, state, rng):
        # Chunk the batch so the (B, V, J) weight tensors stay below ~4 M entries.
        B, J = state.available.shape
        n_s = int((~np.isnan(state.responses)).sum(axis=1).max())
        n_v = J if self.extra is None else min(J, 2 * n_s + self.extra)
        chunk = max(1, int(4e6 // (n_v * J)))
        out = []
        for lo in range(0, B, chunk):
            sl = slice(lo, lo + chunk)
            sub = TestState(state.responses[sl], state.available[sl], state.theta[sl], state.step)
            out.append(self._select(bank, sub, rng))
        return np.concatenate(out)

    def _select(self, bank, state, rng):
        B, J = state.available.shape
        rows = np.arange(B)[:, None]
        a = np.linalg.norm(bank.a, axis=1)
        p = np.clip(bank.prob(state.theta), 1e-9, 1 - 1e-9)  # (B, J)
        # Gradient of the item's log-loss wrt theta for outcome y: g_j(y) = -a w (y - P), w = (P-c)/(P(1-c)).
        w = (p - bank.c) / (p * (1 - bank.c))
        g1, g0 = -a * w * (1 - p), a * w * p  # (B, J)
        asked = ~np.isnan(state.responses)
        n_s = int(asked.sum(axis=1).max())
        s_idx = np.argsort(~asked, axis=1, kind="stable")[:, :n_s]  # (B, n_s), asked items first
        s_ok = asked[rows, s_idx]
        m = J if self.extra is None else min(J, n_s + self.extra)
        key = np.where(state.available, rng.random((B, J)), -np.inf)
        smp = np.argsort(-key, axis=1)[:, :m]  # (B, m) random untested sample
        smp_ok = state.available[rows, smp]
        V = np.concatenate([s_idx, smp], axis=1)  # ground set, (B, n_v)
        in_s = np.concatenate([s_ok, np.zeros_like(smp_ok)], axis=1)  # i in S
        in_v = np.concatenate([s_ok, smp_ok], axis=1)

        def weights(i_idx):  # w_ij between items i_idx (B, k) and every item j, (B, k, J)
            qi, g1i, g0i = p[rows, i_idx][..., None], g1[rows, i_idx][..., None], g0[rows, i_idx][..., None]
            qj, g1j, g0j = p[:, None, :], g1[:, None, :], g0[:, None, :]
            expect = (
                qi * qj * np.abs(g1i - g1j)
                + qi * (1 - qj) * np.abs(g1i - g0j)
                + (1 - qi) * qj * np.abs(g0i - g1j)
                + (1 - qi) * (1 - qj) * np.abs(g0i - g0j)
            )
            return self.d - expect

        w_vj = weights(V)  # (B, n_v, J)
        w_vs = np.take_along_axis(w_vj, np.broadcast_to(s_idx[:, None, :], (B, V.shape[1], n_s)), axis=2)
        if n_s:
            cover_v = np.max(np.where(s_ok[:, None, :], w_vs, -np.inf), axis=2)  # max_{j in S} w_ij
            cover_v = np.where(np.isfinite(cover_v), cover_v, 0.0)
            cover_q = np.max(np.where(s_ok[:, None, :], weights(s_idx).transpose(0, 2, 1), -np.inf), axis=2)
            cover_q = np.where(np.isfinite(cover_q), cover_q, 0.0)  # (B, J)
        else:  # F(empty set) = 0
            cover_v, cover_q = np.zeros(V.shape), np.zeros((B, J))
        counted = (in_v & ~in_s)[:, :, None] & (V[:, :, None] != np.arange(J)[None, None, :])
        improve = np.where(counted, np.maximum(w_vj - cover_v[:, :, None], 0.0), 0.0).sum(axis=1)  # (B, J)
        # q leaves the sum of F once it joins S: subtract its own coverage when it was counted in F(S).
        q_in_sample = np.zeros((B, J), dtype=bool)
        q_in_sample[rows, smp] = smp_ok
        gain = improve - np.where(q_in_sample | (n_s > 0), cover_q, 0.0)
        return _masked_argmax(gain, state.available)
