r"""Executable hardness: a parameterized reduction from k-Clique to "SR using at most k variables".

Construction (ours; the paper's own reduction is not public). Given a graph G = (V, E), |V| = N, and k:

* one variable ``x_v`` per vertex; primitive set ``{+}``; no constants; no linear scaling;
* data rows: the all-ones row with target ``k``; for every vertex ``v`` the unit row ``e_v`` with target
  1/2; for every non-edge ``{u, w}`` the row ``e_u + e_w`` with target 1/2;
* threshold ``tau = (N + |non-edges|) / 4`` on the sum of squared errors (SSE).

**Claim.** Some expression tree with SSE <= tau exists iff G has a k-clique; then a tree of size 2k-1
using exactly k variables does it.

*Proof.* A tree over ``{+}`` computes ``f(x) = sum_v c_v x_v`` with ``c_v`` in {0, 1, 2, ...} (the
number of leaves labelled ``x_v``). Its SSE is

    (sum_v c_v - k)^2 + sum_v (c_v - 1/2)^2 + sum_{uw not in E} (c_u + c_w - 1/2)^2.            (Eq. R1)

Each term of the last two sums is the squared distance of an integer to 1/2, so it is at least 1/4, with
equality iff the integer is 0 or 1. Hence SSE <= tau iff the first term is 0 and every other term is
exactly 1/4, i.e. iff ``c`` is the indicator of a set S with |S| = k containing no non-edge: a k-clique.
Conversely the sum of the k variables of a k-clique has SSE = tau. The instance has N variables and
N + |non-edges| + 1 rows (polynomial), and the parameter (variables used) is k' = k: a parameterized
reduction, so SR parameterized by the number of variables used is W[1]-hard. Read with the N vertex
columns as *input-supplied nullary primitives* (the primitive set is part of the input), the witness uses
k + 1 distinct primitives (k leaves and ``+``), so the same gadget shows W[1]-hardness in the number of
primitives used.

**ETH.** k-Clique has no f(k) N^{o(k)} algorithm unless ETH fails (Chen, Huang, Kanj and Xia 2006); the
reduction keeps k' = k, so SR with at most k variables has no f(k) (n v)^{o(k)} algorithm either: trying
all C(v, k) variable subsets is optimal up to the constant in the exponent.

**Approximation.** For a 0/1 coefficient vector with |S| = k, Eq. R1 gives
``SSE - tau = 2 * (number of non-edges inside S)``: the excess loss of the best k-variable model is twice
the number of edges missing from the densest k-subgraph. Any algorithm that tells excess 0 from excess
>= 2 decides k-Clique, so no multiplicative approximation of the excess loss runs in FPT time unless
FPT = W[1] (:func:`excess_loss` checks the identity).

**No polynomial kernel** (primitive set in the input) is shown in the paper by OR-cross-composition; it
is a statement about all kernels and is documented here, not executed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from icml26.srfpt.enumerate import enumerate_library
from icml26.srfpt.fit import node_tree, score_library
from icml26.srfpt.primitives import parse_ops


@dataclass
class SRInstance:
    """A decision instance of SR: is there a tree over ``ops`` of size <= ``max_size`` with SSE <= ``tau``?

    Attributes
    ----------
    X : ndarray of shape (n_rows, N)
    y : ndarray of shape (n_rows,)
    ops : tuple of str
    max_size : int
    tau : float
        Threshold on the sum of squared errors.
    k : int
        Parameter: number of variables a witness uses.
    """

    X: np.ndarray
    y: np.ndarray
    ops: tuple
    max_size: int
    tau: float
    k: int


def clique_to_sr(graph: nx.Graph, k: int) -> SRInstance:
    """Build the SR instance of the module docstring from a graph with vertices ``0 .. N-1``."""
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}")
    nodes = sorted(graph.nodes)
    if nodes != list(range(len(nodes))):
        raise ValueError("graph vertices must be 0 .. N-1 (use networkx.convert_node_labels_to_integers)")
    n = len(nodes)
    if n == 0:
        raise ValueError("the graph has no vertex")
    if any(u == w for u, w in graph.edges):
        raise ValueError("self-loops are not allowed")
    rows = [np.ones(n)]
    targets = [float(k)]
    eye = np.eye(n)
    for v in range(n):  # vertex rows: forces c_v in {0, 1}
        rows.append(eye[v])
        targets.append(0.5)
    non_edges = [(u, w) for u, w in itertools.combinations(range(n), 2) if not graph.has_edge(u, w)]
    for u, w in non_edges:  # non-edge rows: forbids both endpoints
        rows.append(eye[u] + eye[w])
        targets.append(0.5)
    tau = (n + len(non_edges)) / 4
    return SRInstance(np.array(rows), np.array(targets), ("add",), 2 * k - 1, tau, int(k))


def solve_sr_instance(inst: SRInstance) -> tuple[bool, float]:
    """Brute-force SR: the exhaustive engine over every tree up to ``max_size`` on all rows.

    Returns
    -------
    solvable : bool
        ``min SSE <= tau`` (up to 1e-9).
    min_sse : float
    """
    lib = enumerate_library(
        parse_ops(inst.ops), inst.X, inst.max_size, constants=(), fold_constants=False, max_nodes=10**7
    )
    mse = score_library(lib, inst.X, inst.y, linear_scaling=False)
    best = float(np.min(mse)) * len(inst.y)
    return best <= inst.tau + 1e-9, best


def solve_sr_witness(inst: SRInstance) -> tuple[bool, float, np.ndarray]:
    """Brute-force SR as :func:`solve_sr_instance`, also returning the best tree's variable use.

    Returns
    -------
    solvable : bool
    min_sse : float
    uses : ndarray of shape (N,)
        ``uses[v]`` = number of leaves labelled ``x_v`` in a tree of minimum SSE (decoded from the tree,
        not from its values). By Eq. R1 a solvable instance's witness is the 0/1 indicator of a k-clique.
    """
    lib = enumerate_library(
        parse_ops(inst.ops), inst.X, inst.max_size, constants=(), fold_constants=False, max_nodes=10**7
    )
    mse = score_library(lib, inst.X, inst.y, linear_scaling=False)
    best_node = int(np.argmin(mse))
    best = float(mse[best_node]) * len(inst.y)
    uses = np.zeros(inst.X.shape[1], dtype=np.int64)
    stack = [node_tree(lib, best_node)]
    while stack:  # count the variable leaves of the tree
        node = stack.pop()
        if node[0] == "var":
            uses[node[1]] += 1
        elif node[0] != "const":
            stack.extend(node[1:])
    return best <= inst.tau + 1e-9, best, uses


def has_clique_bruteforce(graph: nx.Graph, k: int) -> bool:
    """Try every k-subset of vertices (slow, obvious)."""
    return any(
        all(graph.has_edge(u, w) for u, w in itertools.combinations(sub, 2))
        for sub in itertools.combinations(sorted(graph.nodes), k)
    )


def excess_loss(graph: nx.Graph, subset) -> float:
    """SSE - tau of the sum of the variables in ``subset`` (|subset| = k) on the instance for k."""
    inst = clique_to_sr(graph, len(subset))
    pred = inst.X[:, list(subset)].sum(axis=1)
    return float(np.sum((pred - inst.y) ** 2) - inst.tau)


def random_graph(n_vertices: int, p: float, seed: int) -> nx.Graph:
    """Erdos-Renyi G(n, p) with vertices ``0 .. n-1``."""
    if not 0 <= p <= 1:
        raise ValueError(f"edge probability must be in [0, 1]; got {p}")
    return nx.gnp_random_graph(int(n_vertices), float(p), seed=int(seed))


def read_edge_list(path) -> nx.Graph:
    """Read ``u v`` lines (integers, ``#`` comments allowed); vertices relabelled ``0 .. N-1``."""
    graph = nx.Graph()
    if Path(path).is_dir():
        raise IsADirectoryError(f"{path} is a directory, not an edge list file")
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text edge list") from None
    for lineno, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            ids = [int(s) for s in parts]
        except ValueError:
            raise ValueError(f"{path}:{lineno}: expected 'u v' integers, got {line!r}") from None
        if len(ids) == 1:  # an isolated vertex
            graph.add_node(ids[0])
        elif len(ids) == 2 and ids[0] != ids[1]:
            graph.add_edge(*ids)
        else:
            raise ValueError(f"{path}:{lineno}: expected 'u v' with u != v, got {line!r}")
    if graph.number_of_nodes() == 0:
        raise ValueError(f"{path}: no vertex found")
    return nx.convert_node_labels_to_integers(graph, ordering="sorted")
