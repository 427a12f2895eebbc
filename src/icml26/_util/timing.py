"""Wall-clock timing for benchmarks and claims."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class Timer:
    """Context manager measuring wall time: ``with Timer() as t: ...; t.seconds``."""

    def __enter__(self) -> Timer:
        self.seconds = 0.0
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self._start


def best_time(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls (the least noisy estimate on a shared machine)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1; got {repeat}")
    best = float("inf")
    for _ in range(repeat):
        with Timer() as t:
            fn()
        best = min(best, t.seconds)
    return best
