"""Metrics against closed forms and ground truth: the true state must score best on every latent measure."""

import numpy as np
import pytest

from icml26.dualflow.data import make_spiking_dataset
from icml26.dualflow.metrics import (
    heldout_r2,
    knn_decoding_r2,
    knn_overlap,
    latent_decoding_r2,
    mean_canonical_correlation,
    pca_dimension,
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


@pytest.fixture(scope="module")
def lorenz():
    return make_spiking_dataset("lorenz", n_trials=30, n_time=60, n_neurons=30, regime="noisy", seed=0)


def test_true_state_scores_best_on_every_latent_measure(lorenz):
    """Ground truth (issue 16): the true state beats a nonlinear warp of itself, its PCA-of-rates
    projection, a noisy copy and shuffled frames, on kNN overlap and on linear and kNN decoding."""
    s = lorenz.latents
    rng = np.random.default_rng(0)
    from sklearn.decomposition import PCA

    rates = lorenz.rates.reshape(-1, lorenz.rates.shape[-1])
    candidates = {
        "truth": s,
        "scaled truth": s * np.array([3.0, 0.5, 2.0]),
        "warped": np.tanh(s) ** 3,
        "PCA(3) of true rates": PCA(3).fit_transform(rates).reshape(*s.shape[:2], 3),
        "noisy truth": s + 0.5 * rng.normal(size=s.shape),
        "shuffled": rng.permutation(s.reshape(-1, 3)).reshape(s.shape),
    }
    scores = {}
    for name, c in candidates.items():
        scores[name] = (
            knn_overlap(c[20:], s[20:]),
            latent_decoding_r2(c[:20], s[:20], c[20:], s[20:]),
            knn_decoding_r2(c[:20], s[:20], c[20:], s[20:]),
        )
    assert scores["truth"][0] > 0.99 and scores["scaled truth"][0] > 0.99  # scale per coordinate is free
    for name, sc in scores.items():
        if name in ("truth", "scaled truth"):
            continue
        for i in range(3):
            assert scores["truth"][i] > sc[i], (name, i, sc, scores["truth"])
    assert scores["shuffled"][0] < 0.05 and scores["shuffled"][2] < 0.1
    assert scores["noisy truth"][0] < scores["truth"][0] - 0.3  # the overlap sees local noise
    with pytest.raises(ValueError, match="frame counts"):
        knn_overlap(s[:3], s[:4])


def test_pca_dimension():
    rng = np.random.default_rng(0)
    low = rng.normal(size=(5, 200, 3)) @ rng.normal(size=(3, 20)) + 1e-4 * rng.normal(size=(5, 200, 20))
    assert pca_dimension(low, standardise=False) == 3
    assert pca_dimension(rng.normal(size=(5, 200, 20))) >= 18  # white noise is full rank
