"""Metrics against closed forms."""

import numpy as np
import pytest

from icml26.dualflow.metrics import (
    heldout_r2,
    latent_decoding_r2,
    mean_canonical_correlation,
    seed_consistency,
    temporal_neighbour_preservation,
)


@pytest.fixture
def z():
    rng = np.random.default_rng(0)
    return rng.normal(size=(6, 40, 3)).cumsum(axis=1)


def test_r2_and_decoding(z):
    assert heldout_r2(z, z) == 1.0
    assert np.isclose(heldout_r2(z, np.broadcast_to(z.reshape(-1, 3).mean(0), z.shape)), 0.0)
    A = np.random.default_rng(1).normal(size=(3, 3))
    assert np.isclose(latent_decoding_r2(z[:4] @ A, z[:4], z[4:] @ A, z[4:]), 1.0)
    assert np.isclose(mean_canonical_correlation(z @ A + 2.0, z), 1.0)
    noise = np.random.default_rng(2).normal(size=z.shape)
    assert mean_canonical_correlation(noise, z) < 0.3
    with pytest.raises(ValueError, match="shape"):
        heldout_r2(z[0], z[0])


def test_seed_consistency(z):
    flipped = z * np.array([-1.0, 1.0, -2.0])  # one sign (and scale) per component
    assert np.isclose(seed_consistency([z, flipped, -z]), 1.0)
    permuted = z[..., [1, 2, 0]]
    assert seed_consistency([z, permuted]) < 0.6
    assert np.isclose(seed_consistency([z, permuted], allow_permutation=True), 1.0)
    with pytest.raises(ValueError, match="two seeds"):
        seed_consistency([z])


def test_temporal_neighbours():
    t = np.arange(50, dtype=float)
    smooth = np.stack([np.stack([t, 100.0 * k + 0 * t, 0 * t], -1) for k in range(4)])  # separated lines
    frac, rho = temporal_neighbour_preservation(smooth, n_neighbours=6, window=3)
    assert frac > 0.95 and rho > 0.99
    shuffled = np.random.default_rng(0).permutation(smooth.reshape(-1, 3)).reshape(smooth.shape)
    assert temporal_neighbour_preservation(shuffled, n_neighbours=6)[0] < 0.2
