"""Small simulated screens shared by the degmetrics tests."""

import pytest

from icml26.degmetrics.data import simulate


@pytest.fixture(scope="module")
def small_screen():
    """300 genes, 200 control cells, 12 perturbations x 30 cells, raw counts."""
    return simulate(n_genes=300, n_control=200, n_perturbations=12, cells_per_perturbation=30, p_effect=0.05, seed=3)
