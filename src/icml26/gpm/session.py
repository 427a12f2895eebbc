"""A real-time adaptive test: ask, record, re-estimate, stop.

>>> test = AdaptiveTest(bank, selector=MFISelector(), max_items=20, se_target=0.3)
>>> while not test.done:
...     item = test.next_item()
...     test.record(item, ask_the_examinee(item))
>>> test.ability, test.standard_error
"""

from __future__ import annotations

import numpy as np

from icml26.gpm.irt import ItemBank, estimate_ability
from icml26.gpm.selectors import MFISelector, Selector, TestState


class AdaptiveTest:
    """One examinee's adaptive test.

    Parameters
    ----------
    bank : ItemBank
        Unidimensional bank.
    selector : Selector, optional
        Any selector of this package (default: maximum Fisher information).
    max_items : int
        Stop after this many items (must not exceed the bank size).
    se_target : float, optional
        Also stop once the standard error of the ability falls below this.
    method : {"map", "eap", "mle"}
        Ability estimator after each answer (MLE falls back to MAP until both a right and a wrong answer
        have been seen, since all-right / all-wrong patterns have no finite MLE).
    seed : int
        For selectors that randomise (random, BECAT's sample).
    """

    def __init__(
        self,
        bank: ItemBank,
        selector: Selector | None = None,
        *,
        max_items: int = 20,
        se_target: float | None = None,
        method: str = "map",
        seed: int = 0,
    ):
        from icml26.gpm.selectors import check_bank, check_selector

        check_bank(bank)
        if selector is not None:
            check_selector(selector)
        if bank.n_dims != 1:
            raise ValueError("AdaptiveTest needs a unidimensional bank")
        if not 1 <= max_items <= bank.n_items:
            raise ValueError(f"max_items must lie in 1..{bank.n_items} (the bank holds {bank.n_items} items)")
        if se_target is not None and se_target <= 0:
            raise ValueError("se_target must be > 0")
        if method not in ("map", "eap", "mle"):
            raise ValueError("method must be 'map', 'eap' or 'mle'")
        self.bank = bank
        self.selector = selector or MFISelector()
        self.max_items = max_items
        self.se_target = se_target
        self.method = method
        self._rng = np.random.default_rng(seed)
        self._responses = np.full(bank.n_items, np.nan)
        self._order: list[int] = []
        self._pending: int | None = None
        self.ability, self.standard_error = 0.0, 1.0

    @property
    def items(self) -> list[int]:
        """Items asked so far, in order."""
        return list(self._order)

    @property
    def responses(self) -> list[bool]:
        """Answers so far, in the order asked."""
        return [bool(self._responses[j]) for j in self._order]

    @property
    def done(self) -> bool:
        """True once ``max_items`` were asked or the standard error reached ``se_target``."""
        if len(self._order) >= self.max_items:
            return True
        return self.se_target is not None and len(self._order) > 0 and self.standard_error <= self.se_target

    def next_item(self) -> int:
        """The index of the item to ask next (the same one until it is recorded)."""
        if self.done:
            raise RuntimeError("the test is over (stopping rule met); read .ability and .standard_error")
        if self._pending is None:
            available = np.isnan(self._responses)[None, :]
            state = TestState(self._responses[None, :].copy(), available, np.array([self.ability]), len(self._order))
            self._pending = int(self.selector.select(self.bank, state, self._rng)[0])
        return self._pending

    def record(self, item: int, correct: bool) -> None:
        """Record the answer to ``item`` and re-estimate the ability."""
        item = int(item)
        if not 0 <= item < self.bank.n_items:
            raise ValueError(f"item {item} is not in the bank (0..{self.bank.n_items - 1})")
        if not np.isnan(self._responses[item]):
            raise ValueError(f"item {item} was already answered")
        if self.done:
            raise RuntimeError("the test is over; no more answers can be recorded")
        if correct not in (0, 1, True, False):
            raise ValueError(f"correct must be True/False (or 1/0); got {correct!r}")
        self._responses[item] = float(correct)
        self._order.append(item)
        self._pending = None
        method = self.method
        answered = self._responses[~np.isnan(self._responses)]
        if method == "mle" and (answered.min() == answered.max()):
            method = "map"
        theta, se = estimate_ability(self.bank, self._responses[None, :], method)
        self.ability, self.standard_error = float(theta[0]), float(se[0])
