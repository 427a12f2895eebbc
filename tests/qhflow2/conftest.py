"""Shared fixtures: converged PySCF labels of water (computed once per session)."""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def water():
    from icml26.qhflow2.data import get_molecule

    return get_molecule("water")


@pytest.fixture(scope="session")
def water_sto3g(water):
    from icml26.qhflow2.data import label

    return label(water.Z, water.R, "sto-3g", "hf")


@pytest.fixture(scope="session")
def water_svp(water):
    from icml26.qhflow2.data import label

    return label(water.Z, water.R, "def2-svp", "hf")


@pytest.fixture(scope="session")
def tiny_ds():
    from icml26.qhflow2.data import build_dataset

    return build_dataset("water", 10, basis="sto-3g", xc="hf", temperature=500.0, seed=0)
