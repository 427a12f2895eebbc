"""Baselines: PCA = scikit-learn, DMD recovers a known linear system, VAE and GPFA run on the same data."""

import numpy as np
import pytest

from icml26.dualflow.baselines import DMDBaseline, GPFABaseline, PCABaseline, VAEBaseline


def test_pca_matches_sklearn():
    from sklearn.decomposition import PCA

    X = np.random.default_rng(0).normal(size=(4, 10, 5))
    ours = PCABaseline(2).fit(X)
    ref = PCA(2).fit(X.reshape(-1, 5))
    assert np.allclose(ours.transform(X).reshape(-1, 2), ref.transform(X.reshape(-1, 5)))
    assert ours.inverse_transform(ours.transform(X)).shape == X.shape


def test_dmd_recovers_linear_dynamics():
    rng = np.random.default_rng(0)
    theta, r = 0.3, 0.98
    A3 = np.array([[r * np.cos(theta), -r * np.sin(theta), 0], [r * np.sin(theta), r * np.cos(theta), 0], [0, 0, 0.9]])
    z = np.empty((6, 30, 3))
    start = rng.normal(size=(3, 3))
    z[:, 0] = np.concatenate([start, -start])  # symmetric starts: the mean DMD subtracts is exactly zero
    for t in range(1, 30):
        z[:, t] = z[:, t - 1] @ A3.T
    Q, _ = np.linalg.qr(rng.normal(size=(8, 3)))
    X = z @ Q.T
    dmd = DMDBaseline(3).fit(X)
    assert np.allclose(np.sort_complex(dmd.eigs_), np.sort_complex(np.linalg.eigvals(A3)), atol=1e-6)
    lat = dmd.transform(X)
    assert lat.shape == (6, 30, 3)
    # the real span of the modes is the latent subspace: projecting back loses nothing
    assert np.allclose(lat @ dmd.basis_.T + dmd.mean_, X, atol=1e-8)


def test_vae_runs():
    X = np.random.default_rng(0).normal(size=(4, 10, 5))
    vae = VAEBaseline(2, hidden=8, n_steps=5, batch_size=8).fit(X)
    assert vae.transform(X).shape == (4, 10, 2)
    assert vae.inverse_transform(vae.transform(X)).shape == X.shape
    with pytest.raises(ValueError, match="shape"):
        vae.fit(X[0])


def test_gpfa_via_elephant():
    pytest.importorskip("elephant")
    rng = np.random.default_rng(0)
    counts = rng.poisson(1.0, size=(3, 12, 6))
    gpfa = GPFABaseline(2, em_max_iters=2).fit(counts)
    assert gpfa.transform(counts).shape == (3, 12, 2)
    assert len(gpfa._spiketrains(counts)[1][4]) == counts[1, :, 4].sum()


def test_a_missing_baseline_package_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pydmd" else real(name, *a))
    with pytest.raises(ImportError, match=r"icml26\[baselines\]"):
        DMDBaseline(2).fit(np.zeros((2, 5, 4)))


def test_cebra_time_is_seeded_and_finds_a_slow_latent():
    """CEBRA-Time (optional; Apache-2.0 with a patent notice): the fit is reproducible for a seed (its samplers
    are seeded by the wrapper) and a slowly rotating 2-D latent in 10 noisy features is recovered (kNN R^2
    0.52, 0.55, 0.99, 0.51 for seeds 0-3 after 150 iterations; 0 would be no information)."""
    pytest.importorskip("cebra")
    from icml26.dualflow.baselines import CEBRABaseline
    from icml26.dualflow.metrics import knn_decoding_r2

    rng = np.random.default_rng(0)
    t = np.arange(60) * 0.2
    phase = rng.uniform(0, 2 * np.pi, size=(6, 1))
    z = np.stack([np.cos(t + phase), np.sin(t + phase)], -1)
    X = z @ rng.normal(size=(2, 10)) + 0.1 * rng.normal(size=(6, 60, 10))
    short = [CEBRABaseline(2, max_iterations=5, batch_size=64, seed=3).fit(X[:4]).transform(X[4:]) for _ in "ab"]
    assert np.array_equal(short[0], short[1])
    np_state = np.random.get_state()[1].copy()  # noqa: NPY002 (the global generator cebra uses)
    model = CEBRABaseline(2, max_iterations=150, time_offset=1, batch_size=128, seed=0).fit(X[:4])
    assert np.array_equal(np.random.get_state()[1], np_state)  # noqa: NPY002 (restored after the fit)
    a, b = model.transform(X[:4]), model.transform(X[4:])
    assert a.shape == (4, 60, 2) and b.shape == (2, 60, 2)
    assert knn_decoding_r2(a, z[:4], b, z[4:]) > 0.45
