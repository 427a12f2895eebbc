"""Test set-up shared by every test: quiet, offline, single-threaded, seeded; --runslow and gpu markers."""

import os
import random

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pytest

try:  # one torch thread: on 2-core machines two threads are often several times slower for small models
    import torch
except ImportError:  # torch is an extra; the core tests run without it
    torch = None
else:
    torch.set_num_threads(1)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    has_cuda = torch is not None and torch.cuda.is_available()
    skip_gpu = pytest.mark.skip(reason="gpu: CUDA is not available")
    for item in items:
        if "slow" in item.keywords and not config.getoption("--runslow"):
            item.add_marker(skip_slow)
        if "gpu" in item.keywords and not has_cuda:
            item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _seed_everything():
    """Fixed seeds by default; a test that depends on a seed must pass for any seed."""
    random.seed(0)
    np.random.seed(0)  # noqa: NPY002
    if torch is not None:
        torch.manual_seed(0)
    yield
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


@pytest.fixture
def fake_spec():
    """The fake system under tests/fakesys, registered as implemented."""
    from icml26.registry import SystemSpec

    return SystemSpec(
        "fakesys",
        "On the Sample Mean, Considered as an Estimator",
        "a fake system for tests",
        status="implemented",
        venue="nowhere",
        package="fakesys",
    )
