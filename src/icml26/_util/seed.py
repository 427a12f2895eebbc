"""One call that seeds every random number generator a system may use."""

from __future__ import annotations

import random
import sys

import numpy as np


def seed_everything(seed: int) -> np.random.Generator:
    """Seed ``random``, NumPy's global state and torch (when it is imported); return a fresh Generator.

    Library code should prefer the returned ``numpy.random.Generator`` (or one made from the seed) over the
    global state; the global seeding is for third-party code that uses it.
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 -- seeding the legacy global state is the point here
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)
