"""Communication graphs, gossip (mixing) matrices, Chebyshev-accelerated gossip, and the simulated network.

A gossip round replaces every node's matrix by a weighted average of its own and its neighbours':
``S_i <- sum_j W_ij S_j`` with ``W`` symmetric, doubly stochastic and supported on the graph's edges.
FastMix (Liu & Morse 2011; used by DeEPCA, Ye & Zhang 2021) runs ``K`` such rounds with Chebyshev
momentum::

    S^{(r+1)} = (1 + eta) W S^{(r)} - eta S^{(r-1)},   S^{(-1)} = S^{(0)},
    eta = (1 - sqrt(1 - lambda_2^2)) / (1 + sqrt(1 - lambda_2^2)),

where ``lambda_2`` is the second largest eigenvalue magnitude of ``W``. It preserves the node average and
shrinks disagreement by ``rho_K`` (:func:`fastmix_contraction`), about ``(1 - sqrt(1 - lambda_2))^K``.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

__all__ = [
    "SimNetwork",
    "fastmix",
    "fastmix_contraction",
    "make_graph",
    "metropolis_weights",
    "recommended_rounds",
    "second_eigenvalue",
    "validate_mixing",
]


def make_graph(kind: str, n_nodes: int, *, p: float = 0.3, seed=None) -> nx.Graph:
    """Communication graph with nodes ``0 .. n_nodes - 1``.

    ``kind``: ``"ring"``, ``"grid"`` (2-D grid ``r x c`` with ``r * c = n_nodes``, ``r`` the largest
    divisor not above ``sqrt(n)``), ``"erdos-renyi"`` (edge probability ``p``) or ``"complete"``.
    """
    if not isinstance(n_nodes, (int, np.integer)) or n_nodes < 2:
        raise ValueError(f"need at least 2 nodes; got {n_nodes!r}")
    if kind == "ring":
        G = nx.cycle_graph(n_nodes)
    elif kind == "grid":
        rows = max(r for r in range(1, math.isqrt(n_nodes) + 1) if n_nodes % r == 0)
        G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, n_nodes // rows), ordering="sorted")
    elif kind in ("erdos-renyi", "er"):
        if not 0 < p <= 1:
            raise ValueError(f"edge probability p must be in (0, 1]; got {p}")
        G = nx.erdos_renyi_graph(n_nodes, p, seed=seed)
    elif kind == "complete":
        G = nx.complete_graph(n_nodes)
    else:
        raise ValueError(f"unknown graph {kind!r}; use ring, grid, erdos-renyi or complete")
    if not nx.is_connected(G):
        raise ValueError(f"the {kind} graph on {n_nodes} nodes is disconnected; gossip cannot reach consensus")
    return G


def metropolis_weights(G: nx.Graph) -> np.ndarray:
    """Metropolis–Hastings gossip matrix: ``W_ij = 1 / (1 + max(deg_i, deg_j))`` on edges, rest on the diagonal."""
    if G.number_of_nodes() < 2:
        raise ValueError("the graph needs at least 2 nodes")
    if not nx.is_connected(G):
        raise ValueError("the communication graph is disconnected; gossip cannot reach consensus")
    nodes = sorted(G.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    W = np.zeros((n, n))
    deg = dict(G.degree())
    for u, v in G.edges():
        if u == v:
            continue
        w = 1.0 / (1.0 + max(deg[u], deg[v]))
        W[index[u], index[v]] = W[index[v], index[u]] = w
    W[np.diag_indices(n)] = 1.0 - W.sum(axis=1)
    return W


def second_eigenvalue(W: np.ndarray) -> float:
    """Second largest eigenvalue magnitude ``lambda_2`` of a symmetric gossip matrix (1 - spectral gap)."""
    mu = np.sort(np.abs(np.linalg.eigvalsh(W)))[::-1]
    return float(mu[1])


def validate_mixing(W, G: nx.Graph | None = None, *, atol: float = 1e-10) -> np.ndarray:
    """Check a user gossip matrix: square, finite, symmetric, doubly stochastic, on the graph, ``lambda_2 < 1``."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 2:
        raise ValueError(f"mixing matrix must be square with at least 2 nodes; got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("mixing matrix has NaN or inf entries")
    if np.max(np.abs(W - W.T)) > atol:
        raise ValueError("mixing matrix must be symmetric (Chebyshev gossip needs a real spectrum)")
    row_err = float(np.max(np.abs(W.sum(axis=1) - 1.0)))
    if row_err > atol:
        raise ValueError(f"mixing matrix is not doubly stochastic: rows sum to 1 only within {row_err:.3g}")
    if G is not None:
        if G.number_of_nodes() != W.shape[0]:
            raise ValueError(f"graph has {G.number_of_nodes()} nodes, mixing matrix {W.shape[0]}")
        A = nx.to_numpy_array(G, nodelist=sorted(G.nodes())) > 0
        off = (np.abs(W) > atol) & ~A & ~np.eye(W.shape[0], dtype=bool)
        if off.any():
            i, j = np.argwhere(off)[0]
            raise ValueError(f"mixing matrix has weight between nodes {i} and {j}, which are not neighbours")
    if second_eigenvalue(W) >= 1 - 1e-12:
        raise ValueError(
            "mixing matrix has second eigenvalue magnitude 1: the graph is disconnected or bipartite-"
            "periodic; gossip cannot reach consensus"
        )
    return W


def fastmix_eta(lambda2: float) -> float:
    """Chebyshev momentum of FastMix for second eigenvalue magnitude ``lambda2``."""
    s = math.sqrt(max(0.0, 1.0 - lambda2**2))
    return (1.0 - s) / (1.0 + s)


def fastmix_contraction(W: np.ndarray, K: int) -> float:
    """Exact worst-case factor ``rho_K`` by which ``K`` FastMix rounds shrink disagreement between nodes."""
    mu = np.linalg.eigvalsh(W)
    mu = mu[np.abs(mu - 1.0) > 1e-12]  # drop the consensus eigenvalue
    if mu.size == 0:
        return 0.0
    eta = fastmix_eta(second_eigenvalue(W))
    prev, cur = np.ones_like(mu), np.ones_like(mu)
    for _ in range(K):
        prev, cur = cur, (1 + eta) * mu * cur - eta * prev
    return float(np.max(np.abs(cur)))


def recommended_rounds(W: np.ndarray, target: float = 1e-2, max_rounds: int = 10_000) -> int:
    """Smallest ``K`` whose FastMix contraction is at most ``target``."""
    for K in range(1, max_rounds + 1):
        if fastmix_contraction(W, K) <= target:
            return K
    return max_rounds


class SimNetwork:
    """All nodes in one process: node states stacked as ``(n_nodes, d, k)``, a gossip round is ``W @ S``.

    Parameters
    ----------
    W : array (n, n)
        Validated gossip matrix.
    """

    def __init__(self, W: np.ndarray):
        self.W = np.asarray(W, dtype=float)
        self.n_nodes = self.W.shape[0]
        self.node_ids = np.arange(self.n_nodes)
        self.degrees = ((self.W != 0) & ~np.eye(self.n_nodes, dtype=bool)).sum(axis=1)  # neighbours; W_ii may be 0

    def gossip(self, S: np.ndarray) -> np.ndarray:
        """One round: ``S_i <- sum_j W_ij S_j`` for stacked ``S`` of shape (n, d, k)."""
        n = S.shape[0]
        return (self.W @ S.reshape(n, -1)).reshape(S.shape)

    def allsum(self, x: np.ndarray) -> np.ndarray:
        """Sum over all nodes of a per-process partial sum (identity here: the process holds every node)."""
        return x

    def allmax(self, x: float) -> float:
        return x


def fastmix(net, S: np.ndarray, K: int, eta: float) -> np.ndarray:
    """``K`` Chebyshev-accelerated gossip rounds on the stacked local states ``S`` (n_local, d, k)."""
    prev, cur = S, S
    for _ in range(K):
        prev, cur = cur, (1.0 + eta) * net.gossip(cur) - eta * prev
    return cur
