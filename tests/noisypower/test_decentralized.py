"""Gossip matrices, FastMix, and the decentralized methods vs closed forms and a per-node loop reference."""

import networkx as nx
import numpy as np
import pytest

from icml26.noisypower import (
    InsufficientMixingError,
    accelerated_noisy_power_method,
    decentralized_pca,
    make_graph,
    metropolis_weights,
    noisy_power_method,
    sin_theta,
)
from icml26.noisypower.data import dense_problem, local_covariances
from icml26.noisypower.method import qr_pos
from icml26.noisypower.network import (
    SimNetwork,
    fastmix,
    fastmix_contraction,
    fastmix_eta,
    second_eigenvalue,
    validate_mixing,
)


@pytest.fixture
def setting():
    rng = np.random.default_rng(21)
    P = dense_problem(24, 2, 0.9, seed=rng)
    return P, local_covariances(P.A, 8, heterogeneity=0.2, seed=rng)


@pytest.mark.parametrize("kind", ["ring", "grid", "erdos-renyi", "complete"])
def test_metropolis_is_doubly_stochastic_on_graph(kind):
    G = make_graph(kind, 12, p=0.5, seed=1)
    W = validate_mixing(metropolis_weights(G), G)
    np.testing.assert_allclose(W.sum(axis=0), 1.0, atol=1e-14)
    np.testing.assert_allclose(W, W.T)
    assert second_eigenvalue(W) < 1


def test_grid_shape():
    G = make_graph("grid", 12)
    assert sorted(d for _, d in G.degree()) == sorted(d for _, d in nx.grid_2d_graph(3, 4).degree())


def test_bad_graphs_and_mixing():
    with pytest.raises(ValueError, match="disconnected"):
        metropolis_weights(nx.Graph([(0, 1), (2, 3)]))
    with pytest.raises(ValueError, match="disconnected"):
        make_graph("erdos-renyi", 30, p=0.01, seed=0)
    with pytest.raises(ValueError, match="unknown graph"):
        make_graph("star-ish", 5)
    W = metropolis_weights(make_graph("ring", 6))
    with pytest.raises(ValueError, match="doubly stochastic"):
        validate_mixing(W * 1.1)
    with pytest.raises(ValueError, match="symmetric"):
        validate_mixing(W + np.triu(np.full((6, 6), 0.01), 1))
    with pytest.raises(ValueError, match="not neighbours"):
        validate_mixing(np.full((6, 6), 1 / 6), make_graph("ring", 6))
    with pytest.raises(ValueError, match="second eigenvalue"):
        validate_mixing(np.eye(4))  # no communication at all
    with pytest.raises(ValueError, match="NaN"):
        validate_mixing(np.full((3, 3), np.nan))


def test_gossip_round_matches_per_node_loop():
    W = metropolis_weights(make_graph("ring", 7))
    S = np.random.default_rng(0).standard_normal((7, 5, 2))
    expected = np.stack([sum(W[i, j] * S[j] for j in range(7)) for i in range(7)])
    np.testing.assert_allclose(SimNetwork(W).gossip(S), expected, atol=1e-14)


def test_fastmix_keeps_mean_and_contracts_as_predicted():
    W = metropolis_weights(make_graph("ring", 10))
    S = np.random.default_rng(1).standard_normal((10, 4, 3))
    K = 6
    out = fastmix(SimNetwork(W), S, K, fastmix_eta(second_eigenvalue(W)))
    np.testing.assert_allclose(out.mean(axis=0), S.mean(axis=0), atol=1e-13)
    dis_in = np.linalg.norm(S - S.mean(axis=0))
    dis_out = np.linalg.norm(out - out.mean(axis=0))
    rho = fastmix_contraction(W, K)
    assert dis_out <= rho * dis_in * (1 + 1e-9)
    plain = np.linalg.matrix_power(W, K) @ S.reshape(10, -1)
    assert rho < second_eigenvalue(W) ** K  # Chebyshev beats K plain rounds
    assert dis_out < np.linalg.norm(plain - plain.mean(axis=0))


@pytest.mark.parametrize(
    ("method", "central"), [("deepca", noisy_power_method), ("accelerated", accelerated_noisy_power_method)]
)
def test_exact_averaging_equals_centralized(setting, method, central):
    """On the complete graph one Metropolis round is the exact average: decentralized == centralized iterate."""
    P, A_local = setting
    W = metropolis_weights(make_graph("complete", 8))
    X0 = np.random.default_rng(2).standard_normal((24, 2))
    t = 15
    dec = decentralized_pca(A_local, 2, W=W, method=method, K=1, tol=1e-300, max_iter=t, X0=X0, strict=False)
    kw = {"lambda_next": P.eigvals[2]} if method == "accelerated" else {}
    cen = central(P.A, 2, X0=X0, tol=1e-300, max_iter=t, **kw)
    for X in dec.bases:
        assert sin_theta(X, cen.basis) < 1e-10


def _loop_deepca(A_local, W, X0, K, beta, iters):
    """Per-node Python loops: DeEPCA / accelerated DeEPCA written the obvious way."""
    n = len(A_local)
    eta = fastmix_eta(second_eigenvalue(W))
    X = [X0.copy() for _ in range(n)]
    Xp = [np.zeros_like(X0) for _ in range(n)]
    Rinv = [np.eye(X0.shape[1]) for _ in range(n)]
    S = [X0.copy() for _ in range(n)]
    AXp = [X0.copy() for _ in range(n)]
    for _ in range(iters):
        AX = [A_local[i] @ X[i] for i in range(n)]
        cur = [S[i] + AX[i] - AXp[i] for i in range(n)]
        prev = cur
        for _ in range(K):
            nxt = [(1 + eta) * sum(W[i, j] * cur[j] for j in range(n)) - eta * prev[i] for i in range(n)]
            prev, cur = cur, nxt
        S, AXp = cur, AX
        for i in range(n):
            Q, R = qr_pos(S[i] - beta * Xp[i] @ Rinv[i])
            s = np.where(np.diag(Q.T @ X0) < 0, -1.0, 1.0)
            Q, R = Q * s, R * s[:, None]
            Xp[i], X[i], Rinv[i] = X[i], Q, np.linalg.inv(R)
    return np.stack(X)


@pytest.mark.parametrize("method", ["deepca", "accelerated"])
def test_vectorised_matches_loop_reference(setting, method):
    P, A_local = setting
    W = metropolis_weights(make_graph("ring", 8))
    X0 = qr_pos(np.random.default_rng(3).standard_normal((24, 2)))[0]
    beta = P.eigvals[2] ** 2 / 4 if method == "accelerated" else 0.0
    res = decentralized_pca(A_local, 2, W=W, method=method, K=5, tol=1e-300, max_iter=10, X0=X0, strict=False)
    np.testing.assert_allclose(res.bases, _loop_deepca(A_local, W, X0, 5, beta, 10), atol=1e-10)


def test_methods_direction_and_accounting(setting):
    P, A_local = setting
    G = make_graph("ring", 8)
    W = metropolis_weights(G)
    runs = {
        m: decentralized_pca(A_local, 2, W=W, method=m, K=8, tol=1e-8, seed=0, strict=False, max_iter=3000)
        for m in ("gossip", "deepca", "accelerated")
    }
    assert runs["deepca"].converged and runs["accelerated"].converged
    assert runs["accelerated"].rounds < runs["deepca"].rounds
    assert runs["gossip"].status == "stalled" and min(runs["gossip"].history["sin_theta"]) > 1e-8
    for r in runs.values():
        assert r.rounds == r.n_iter * 8
        assert r.bytes_sent == r.rounds * 2 * G.number_of_edges() * 24 * 2 * 8
        assert r.history["consensus"][-1] < 1e-6 or r.method == "gossip"
    mean = qr_pos(runs["accelerated"].bases.mean(axis=0))[0]
    assert sin_theta(mean, P.U) < 1e-8


def test_too_few_rounds_is_reported(setting):
    P, A_local = setting
    A_local = local_covariances(P.A, 16, heterogeneity=0.5, seed=5)
    W = metropolis_weights(make_graph("ring", 16))
    with pytest.raises(InsufficientMixingError, match="use more rounds") as info:
        decentralized_pca(A_local, 2, W=W, method="accelerated", K=1, tol=1e-8, seed=0, max_iter=3000)
    assert info.value.result is not None and not info.value.result.converged


def test_decentralized_bad_inputs(setting):
    _, A_local = setting
    W = metropolis_weights(make_graph("ring", 8))
    with pytest.raises(ValueError, match="n_nodes, d, d"):
        decentralized_pca(A_local[0], 2, W=W)
    with pytest.raises(ValueError, match="1 <= k < d"):
        decentralized_pca(A_local, 24, W=W)
    with pytest.raises(ValueError, match="gossip rounds"):
        decentralized_pca(A_local, 2, W=W, K=0)
    with pytest.raises(ValueError, match="for 6 nodes"):
        decentralized_pca(A_local, 2, W=metropolis_weights(make_graph("ring", 6)))
    with pytest.raises(ValueError, match="unknown method"):
        decentralized_pca(A_local, 2, W=W, method="magic", max_iter=2)
    bad = A_local.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        decentralized_pca(bad, 2, W=W)
    with pytest.raises(ValueError, match="backend"):
        decentralized_pca(A_local, 2, W=W, backend="carrier-pigeon", max_iter=2)


def test_decentralized_rejects_misshaped_start_and_reference(setting):
    # a reference with k + 1 columns used to be accepted and made the run "converge" against the wrong subspace
    P, A_local = setting
    W = metropolis_weights(make_graph("ring", 8))
    d = A_local.shape[1]
    with pytest.raises(ValueError, match="reference must have shape"):
        decentralized_pca(A_local, 2, W=W, reference=P.top[:, :3], max_iter=2)
    with pytest.raises(ValueError, match="reference must have shape"):
        decentralized_pca(A_local, 2, W=W, reference=P.top[:, :1], max_iter=2)
    with pytest.raises(ValueError, match="X0 must have shape"):
        decentralized_pca(A_local, 2, W=W, X0=np.ones((d, 3)), max_iter=2)
    bad = np.ones((d, 2))
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X0 has NaN"):
        decentralized_pca(A_local, 2, W=W, X0=bad, max_iter=2)


def test_bytes_count_neighbours_when_the_diagonal_is_zero(setting):
    # a valid gossip matrix may have W_ii = 0 (complete graph, W = (J - I) / (n - 1)); the neighbour count
    # used to be "non-zeros in the row minus one", one short for such rows
    _, A_local = setting
    n, d, _ = A_local.shape
    W = (np.ones((n, n)) - np.eye(n)) / (n - 1)
    np.testing.assert_array_equal(SimNetwork(W).degrees, np.full(n, n - 1))
    res = decentralized_pca(A_local, 2, W=W, method="deepca", K=2, max_iter=3, tol=1e-12, strict=False)
    assert res.bytes_sent == res.rounds * n * (n - 1) * d * 2 * 8


def test_residual_monitor_is_zero_on_the_true_eigenspace_and_large_elsewhere():
    """The reference-free measure, checked on ground truth: the true top-k basis scores ~0, a random one ~1."""
    from icml26.noisypower.decentralized import _consensus_residual
    from icml26.noisypower.network import SimNetwork

    P = dense_problem(30, 3, 0.8, seed=4)
    A_local = local_covariances(P.A, 6, heterogeneity=0.3, seed=5)
    net = SimNetwork(metropolis_weights(make_graph("ring", 6)))
    truth, theta = _consensus_residual(net, A_local.__matmul__, P.U[:, :3], 6)
    random = _consensus_residual(net, A_local.__matmul__, np.random.default_rng(0).standard_normal((30, 3)), 6)[0]
    assert truth < 1e-12 and random > 0.1
    np.testing.assert_allclose(theta, P.eigvals[:3], atol=1e-12)


def test_residual_stop_and_operator_products_match_the_matrix_run():
    """Local products given as a callable give the same run as the stacked matrices; the residual stop lands
    on the true eigenspace without being told it."""
    P = dense_problem(30, 3, 0.8, seed=4)
    A_local = local_covariances(P.A, 6, heterogeneity=0.3, seed=5)
    W = metropolis_weights(make_graph("ring", 6))
    kw = dict(W=W, method="accelerated", K=6, tol=1e-9, seed=0, monitor="residual")
    res = decentralized_pca(A_local, 3, **kw)
    assert res.converged and res.history["residual"][-1] <= 1e-9 and res.history["consensus"][-1] <= 1e-9
    assert max(sin_theta(X, P.U[:, :3]) for X in res.bases) < 1e-7
    np.testing.assert_allclose(res.eigenvalues, P.eigvals[:3], atol=1e-8)
    from icml26.noisypower.decentralized import run_decentralized
    from icml26.noisypower.method import qr_pos
    from icml26.noisypower.network import SimNetwork

    X0 = qr_pos(np.random.default_rng(0).standard_normal((30, 3)))[0]
    args = dict(method="accelerated", K=6, beta=res.beta, tol=1e-9, max_iter=5000, X0=X0, reference=None)
    op = run_decentralized(SimNetwork(W), lambda X: np.einsum("nij,njk->nik", A_local, X), 3, **args)
    assert op.n_iter == res.n_iter and np.max(np.abs(op.bases - res.bases)) < 1e-12
