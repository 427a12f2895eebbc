"""The metrics against their definitions and direct reference formulas, the cache, the hooks, the table."""

import numpy as np
import pytest
import torch

from icml26.brainconverge.alignment import (
    BrainCache,
    align_models,
    align_models_pool,
    cka,
    extract_features,
    hsic_unbiased,
    rbf_gram,
    zscore,
)

torch.set_num_threads(1)


def _ref_cka_rbf(X, Y, sigma):
    """Direct textbook formula in numpy: HSIC = tr(K H L H) / (n-1)^2 with explicit H."""

    def z(A):
        sd = A.std(0)
        return (A - A.mean(0)) / np.where(sd > 0, sd, 1)

    def gram(A):
        D = ((A[:, None] - A[None]) ** 2).sum(-1)
        return np.exp(-D / (2 * sigma**2))

    X, Y = z(X), z(Y)
    n = len(X)
    H = np.eye(n) - np.ones((n, n)) / n
    K, L = gram(X), gram(Y)

    def h(A, B):
        return np.trace(A @ H @ B @ H) / (n - 1) ** 2

    return h(K, L) / np.sqrt(h(K, K) * h(L, L))


def _ref_hsic_unbiased(K, L):
    """Song et al. (2012) Eq. 5, written out with explicit loops over the sums."""
    n = len(K)
    K, L = K.copy(), L.copy()
    np.fill_diagonal(K, 0)
    np.fill_diagonal(L, 0)
    one = np.ones(n)
    t1 = np.trace(K @ L)
    t2 = (one @ K @ one) * (one @ L @ one) / ((n - 1) * (n - 2))
    t3 = 2 / (n - 2) * (one @ K @ L @ one)
    return (t1 + t2 - t3) / (n * (n - 3))


def test_rbf_cka_matches_direct_formula():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((30, 7)), rng.standard_normal((30, 5))
    Y[:, 0] += X[:, 0]
    cache = BrainCache({"roi": Y}, "rbf-cka", sigma=12.0)
    assert cache.scores(X)["roi"] == pytest.approx(_ref_cka_rbf(X, Y, 12.0), abs=1e-12)
    assert cache.scores(X)["roi"] == pytest.approx(
        cka(rbf_gram(zscore(torch.tensor(X))), rbf_gram(zscore(torch.tensor(Y)))), abs=1e-12
    )


def test_linear_cka_invariant_to_orthogonal_maps_and_isotropic_scaling():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 6))
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    Xz = np.asarray(zscore(torch.tensor(X)))  # the cache z-scores columns, so rotate the z-scored matrix
    K = torch.tensor(Xz @ Xz.T)
    XQ = Xz @ Q * 3.0
    assert cka(K, torch.tensor(XQ @ XQ.T)) == pytest.approx(1.0, abs=1e-12)
    assert BrainCache({"r": X}, "linear-cka").scores(X)["r"] == pytest.approx(1.0, abs=1e-12)


def test_unbiased_hsic_matches_reference_and_is_unbiased_under_independence():
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((25, 4)), rng.standard_normal((25, 3))
    K, L = X @ X.T, Y @ Y.T
    assert float(hsic_unbiased(torch.tensor(K), torch.tensor(L))) == pytest.approx(_ref_hsic_unbiased(K, L), rel=1e-10)
    # independent data: unbiased CKA averages ~0, biased CKA is biased upward
    u, b = [], []
    for s in range(40):
        r = np.random.default_rng([s, 9])
        A, B = r.standard_normal((20, 30)), r.standard_normal((20, 30))
        u.append(BrainCache({"r": B}, "unbiased-cka").scores(A)["r"])
        b.append(BrainCache({"r": B}, "linear-cka").scores(A)["r"])
    assert abs(np.mean(u)) < 0.03 and np.mean(b) > 0.3


def test_mutual_knn_and_rsa_are_one_on_identical_data_and_low_on_shuffled():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 8))
    for metric in ("mutual-knn", "rsa", "rbf-cka", "unbiased-cka"):
        c = BrainCache({"r": X}, metric, k=5)
        assert c.scores(X)["r"] == pytest.approx(1.0, abs=1e-9), metric
        assert c.scores(X[rng.permutation(50)])["r"] < 0.5, metric


def test_truth_scores_best_and_bad_sizes():
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((60, 5))
    B = Z @ rng.standard_normal((5, 20)) + 0.5 * rng.standard_normal((60, 20))
    c = BrainCache({"roi": B})
    truth = c.scores(Z)["roi"]
    assert truth > c.scores(rng.standard_normal((60, 5)))["roi"]
    assert truth > c.scores(Z[:, :2] + rng.standard_normal((60, 2)))["roi"]
    with pytest.raises(ValueError, match="stimuli"):
        c.scores(Z[:10])
    with pytest.raises(ValueError, match="metric"):
        BrainCache({"roi": B}, "cosine")
    with pytest.raises(ValueError, match="different numbers"):
        BrainCache({"a": B, "b": B[:10]})


def test_hooks_capture_layers_and_refuse_nothing():
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    f = extract_features(net, torch.randn(10, 4, generator=torch.Generator().manual_seed(0)))
    assert [v.shape for v in f.values()] == [(10, 8), (10, 3)]
    unused = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="captured nothing"):
        extract_features(net, torch.randn(3, 4), modules={"unused": unused})


def test_table_same_in_pool_and_resume_skips():
    rng = np.random.default_rng(5)
    x = rng.random((30, 4))
    nets = [torch.nn.Sequential(torch.nn.Linear(4, w), torch.nn.ReLU(), torch.nn.Linear(w, 3)) for w in (4, 6)]
    items = [{"model": f"m{i}", "step": 0, "net": n} for i, n in enumerate(nets)]
    caches = {"s1": BrainCache({"a": rng.random((30, 5)), "b": rng.random((30, 7))})}
    t1 = align_models(items, x, caches)
    t2 = align_models_pool(items, x, caches, workers=2)
    assert len(t1) == 2 * 2 * 2 and t1.equals(t2)
    assert len(align_models(items, x, caches, done={("m0", 0)})) == 4


def test_rsa_is_spearman_of_correlation_distance_rdms():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(6)
    X, Y = rng.standard_normal((25, 6)), rng.standard_normal((25, 9))
    Y[:, :3] += X[:, :3]

    def rdm(A):
        A = (A - A.mean(0)) / A.std(0)  # the cache z-scores columns first
        return (1 - np.corrcoef(A))[np.triu_indices(25, 1)]

    expected = spearmanr(rdm(X), rdm(Y))[0]
    assert BrainCache({"r": Y}, "rsa").scores(X)["r"] == pytest.approx(expected, abs=1e-10)
