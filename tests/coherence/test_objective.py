"""Coh (torch) against the numpy measurement, its gradients, and its coverage terms."""

import numpy as np
import pytest
import torch

from icml26.coherence.experiment import coherent_arc_codes
from icml26.coherence.geometry import Geometry, coherence_report
from icml26.coherence.objective import Coh, coh_loss


@pytest.mark.parametrize("circular", [False, True])
def test_variances_match_numpy(circular):
    rng = np.random.default_rng(0)
    n, m = 50, 7
    A = rng.uniform(size=(n, m)) * (rng.uniform(size=(n, m)) > 0.5)
    A[:, 0] += 0.1  # every row covered
    x = rng.uniform(0, 2 * np.pi, size=(n, 2)) if circular else rng.normal(size=(n, 3))
    geo = Geometry.circular(x) if circular else Geometry.euclidean(x)
    rep = coherence_report(A, geo)
    _, terms = coh_loss(torch.tensor(A), torch.tensor(geo.coords), circular=circular, return_terms=True)
    assert float(terms["column_variance"]) == pytest.approx(np.nanmean(rep.column_variance), rel=1e-5)
    assert float(terms["row_variance"]) == pytest.approx(np.nanmean(rep.row_variance), rel=1e-5)


def test_gradients_finite_with_dead_features():
    A = torch.rand(32, 5)
    A[:, 2] = 0.0
    A.requires_grad_(True)
    coh = Coh(np.random.default_rng(0).uniform(0, 6, 32), circular=True)
    coh(A, torch.arange(32)).backward()
    assert torch.isfinite(A.grad).all()


def test_coverage_rules_out_the_trivial_minimiser():
    """Every feature firing on a single sample has zero variance; the coverage hinges must make it worse than a
    coherent tiling of the circle."""
    rng = np.random.default_rng(0)
    theta = np.sort(rng.uniform(0, 2 * np.pi, 256))
    tiling = torch.tensor(coherent_arc_codes(theta, 16, rng))
    trivial = torch.zeros(256, 16, dtype=torch.float64)
    trivial[torch.arange(16) * 16, torch.arange(16)] = 1.0
    x = torch.tensor(theta[:, None])
    assert coh_loss(trivial, x, circular=True) > coh_loss(tiling, x, circular=True)
    no_cov = dict(circular=True, lambda_cov=0.0)
    assert coh_loss(trivial, x, **no_cov) < coh_loss(tiling, x, **no_cov)  # the hinge is what prevents it
