"""Autoencoder training: seeded, leaves torch's global RNG alone, density matching picks the closest."""

import numpy as np
import pytest
import torch

from icml26.coherence.data import circle_data, rotated_digits, torus_data
from icml26.coherence.geometry import Geometry
from icml26.coherence.model import activation_density, fit_autoencoder, fit_l1_matched


def test_fit_is_seeded_and_leaves_global_rng():
    ds = circle_data(128, seed=0)
    geo = Geometry.circular(ds.theta)
    state = torch.random.get_rng_state()
    a = fit_autoencoder(ds.X, penalty="coh", lam=0.1, geometry=geo, steps=20, batch_size=64, seed=3)
    assert torch.equal(state, torch.random.get_rng_state())
    b = fit_autoencoder(ds.X, penalty="coh", lam=0.1, geometry=geo, steps=20, batch_size=64, seed=3)
    np.testing.assert_array_equal(a.codes, b.codes)
    assert a.codes.min() >= 0 and np.isfinite(a.mse)


def test_l1_matching_picks_closest_density():
    ds = circle_data(128, seed=0)
    best, sweep = fit_l1_matched(ds.X, 0.2, (0.0, 0.05), steps=30, batch_size=64)
    assert best.density == min((d for _, d, _ in sweep), key=lambda d: abs(d - 0.2))
    assert sweep[1][1] < sweep[0][1]  # a larger L1 weight gives sparser codes


def test_density_and_validation():
    assert activation_density(np.array([[1.0, 0.0], [0.5, 0.0]])) == 0.5
    X = circle_data(64, seed=0).X
    with pytest.raises(ValueError, match="geometry"):
        fit_autoencoder(X, penalty="coh", steps=1)
    with pytest.raises(ValueError, match="penalty"):
        fit_autoencoder(X, penalty="l2", steps=1)
    with pytest.raises(ValueError, match="finite"):
        fit_autoencoder(X * np.nan, penalty="none", steps=1)


def test_data_sets():
    t = torus_data(64, seed=0)
    assert t.X.shape == (64, 20) and t.theta.shape == (64, 2)
    d = rotated_digits(2, 8, seed=0)
    assert d.X.shape == (16, 256) and np.allclose(np.unique(d.theta), np.arange(8) * np.pi / 4)
    with pytest.raises(ValueError):
        circle_data(3)
