import itertools

import numpy as np
import pytest

from icml26.gpm.data import random_bank
from icml26.gpm.selectors import BECATSelector, KLISelector, MFISelector, RandomSelector, TestState


def _state(bank, rng, n_asked, B=4):
    theta = rng.normal(size=B)
    x = bank.sample(theta, rng)
    asked = np.zeros((B, bank.n_items), dtype=bool)
    for i in range(B):
        asked[i, rng.choice(bank.n_items, n_asked, replace=False)] = True
    avail = ~asked
    avail[:, 0] = False  # an item outside every pool
    return TestState(np.where(asked, x, np.nan), avail, theta, n_asked)


@pytest.mark.parametrize(
    "selector", [RandomSelector(), MFISelector(), KLISelector(), BECATSelector(), BECATSelector(None)]
)
def test_selectors_choose_available_items(selector):
    rng = np.random.default_rng(0)
    bank = random_bank(30, rng, "3pl")
    state = _state(bank, rng, 5)
    items = selector.select(bank, state, rng)
    assert items.shape == (4,)
    assert np.all(state.available[np.arange(4), items])
    state.available[1] = False
    assert selector.select(bank, state, rng)[1] == -1


def test_mfi_is_argmax_information():
    rng = np.random.default_rng(1)
    bank = random_bank(20, rng)
    state = _state(bank, rng, 3)
    items = MFISelector().select(bank, state, rng)
    for i in range(4):
        best = max(
            (j for j in range(20) if state.available[i, j]), key=lambda j: bank.information(state.theta[i])[0, j]
        )
        assert items[i] == best


def test_kli_matches_slow_reference():
    rng = np.random.default_rng(2)
    bank = random_bank(15, rng)
    state = _state(bank, rng, 4, B=2)
    items = KLISelector(n_points=11).select(bank, state, rng)
    for i in range(2):
        delta = 3 / np.sqrt(4)
        scores = {}
        for j in np.flatnonzero(state.available[i]):
            ph = bank.prob(state.theta[i])[0, j]
            scores[j] = sum(
                ph * np.log(ph / q) + (1 - ph) * np.log((1 - ph) / (1 - q))
                for q in (bank.prob(state.theta[i] + o)[0, j] for o in np.linspace(-delta, delta, 11))
            )
        assert items[i] == max(scores, key=scores.get)


def _becat_reference(bank, theta, asked, ground, candidates, d=100.0):
    """Slow, literal BECAT: F(S) = sum_{i in V minus S} max_{j in S} w_ij on V = ground + S + q."""
    p = bank.prob(theta)[0]
    a = bank.a[:, 0]

    def g(j, y):
        return -a[j] * (y - p[j])

    def w(i, j):
        return d - sum(
            (p[i] if yi else 1 - p[i]) * (p[j] if yj else 1 - p[j]) * abs(g(i, yi) - g(j, yj))
            for yi, yj in itertools.product((1, 0), repeat=2)
        )

    def F(S, V):
        return sum(max(w(i, j) for j in S) for i in V if i not in S) if S else 0.0

    gains = {}
    for q in candidates:
        V = set(ground) | set(asked) | {q}
        gains[q] = F(set(asked) | {q}, V) - F(set(asked), V)
    return max(gains, key=gains.get)


@pytest.mark.parametrize("n_asked", [0, 3])
def test_becat_global_matches_literal_facility_location(n_asked):
    rng = np.random.default_rng(3)
    bank = random_bank(12, rng)
    state = _state(bank, rng, n_asked, B=1)
    item = BECATSelector(extra=None).select(bank, state, rng)[0]
    asked = list(np.flatnonzero(~np.isnan(state.responses[0])))
    avail = list(np.flatnonzero(state.available[0]))
    assert item == _becat_reference(bank, state.theta[:1], asked, avail, avail)
