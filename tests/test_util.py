"""The small shared helpers."""

import random

import numpy as np
import pytest

from icml26._util import Timer, best_time, resolve_device, seed_everything


def test_seed_everything_is_reproducible_and_validates():
    g1 = seed_everything(7)
    a = (random.random(), np.random.rand(), g1.normal())  # noqa: NPY002
    g2 = seed_everything(7)
    assert a == (random.random(), np.random.rand(), g2.normal())  # noqa: NPY002
    with pytest.raises(TypeError, match="integer"):
        seed_everything(1.5)
    with pytest.raises(ValueError, match="non-negative"):
        seed_everything(-1)


def test_seed_everything_seeds_torch():
    torch = pytest.importorskip("torch")
    seed_everything(3)
    x = torch.rand(3)
    seed_everything(3)
    assert torch.equal(x, torch.rand(3))


def test_resolve_device():
    torch = pytest.importorskip("torch")
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="'auto', 'cpu' or 'cuda"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_timers():
    with Timer() as t:
        sum(range(1000))
    assert t.seconds >= 0
    assert best_time(lambda: None, repeat=2) >= 0
    with pytest.raises(ValueError, match="repeat"):
        best_time(lambda: None, repeat=0)
