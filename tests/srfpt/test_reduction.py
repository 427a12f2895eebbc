"""Clique -> SR reduction: solvable iff a k-clique exists; Eq. R1 identities; edge-list input."""

import itertools

import networkx as nx
import numpy as np
import pytest

from icml26.srfpt.reduction import (
    clique_to_sr,
    excess_loss,
    has_clique_bruteforce,
    random_graph,
    read_edge_list,
    solve_sr_instance,
)


def _slow_sr(inst):
    """Every sum of at most k variables, with repetition: all trees over {+} up to size 2k-1."""
    n = inst.X.shape[1]
    best = np.inf
    for m in range(1, inst.k + 1):
        for combo in itertools.combinations_with_replacement(range(n), m):
            best = min(best, float(np.sum((inst.X[:, list(combo)].sum(axis=1) - inst.y) ** 2)))
    return best


@pytest.mark.parametrize("k", [2, 3, 4])
def test_sr_solvable_iff_clique_on_random_graphs(k):
    rng = np.random.default_rng(k)
    classes = set()
    for _ in range(25):
        graph = random_graph(int(rng.integers(k, 9)), float(rng.uniform(0.2, 0.9)), int(rng.integers(2**31)))
        clique = max((len(c) for c in nx.find_cliques(graph)), default=0) >= k
        assert clique == has_clique_bruteforce(graph, k)
        inst = clique_to_sr(graph, k)
        solvable, best = solve_sr_instance(inst)
        assert solvable == clique
        assert best == pytest.approx(_slow_sr(inst))
        classes.add(clique)
    assert classes == {True, False}


def test_witness_is_the_clique_and_loss_identity():
    graph = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4)])
    inst = clique_to_sr(graph, 3)
    assert inst.max_size == 5 and inst.X.shape == (1 + 5 + 10 - 5, 5)
    sse = float(np.sum((inst.X[:, [0, 1, 2]].sum(axis=1) - inst.y) ** 2))
    assert sse == pytest.approx(inst.tau)
    # Eq. R1: the excess loss of a k-subset is twice the number of its missing edges
    for sub in itertools.combinations(range(5), 3):
        missing = sum(not graph.has_edge(a, b) for a, b in itertools.combinations(sub, 2))
        assert excess_loss(graph, sub) == pytest.approx(2 * missing)


def test_edge_list_reader(tmp_path):
    f = tmp_path / "g.txt"
    f.write_text("# a triangle and a pendant\n10 11\n11 12\n10 12\n12 13\n14\n")
    graph = read_edge_list(f)
    assert graph.number_of_nodes() == 5 and graph.number_of_edges() == 4
    assert has_clique_bruteforce(graph, 3) and not has_clique_bruteforce(graph, 4)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 x\n")
    with pytest.raises(ValueError, match="integers"):
        read_edge_list(bad)
    bad.write_text("3 3\n")
    with pytest.raises(ValueError, match="u != v"):
        read_edge_list(bad)
    bad.write_text("# nothing\n")
    with pytest.raises(ValueError, match="no vertex"):
        read_edge_list(bad)


def test_bad_arguments():
    with pytest.raises(ValueError, match="k must"):
        clique_to_sr(nx.path_graph(3), 0)
    with pytest.raises(ValueError, match=r"0 \.\. N-1"):
        clique_to_sr(nx.Graph([(1, 5)]), 2)
    with pytest.raises(ValueError, match="probability"):
        random_graph(5, 1.5, 0)


@pytest.mark.parametrize("k", [3, 4])
def test_witness_is_a_k_clique_using_k_variables_once(k):
    import networkx as nx

    from icml26.srfpt.reduction import solve_sr_witness

    for n in range(k, 8):
        turan = nx.turan_graph(n, k - 1)  # densest graph without a k-clique
        solvable, _, uses = solve_sr_witness(clique_to_sr(turan, k))
        assert not solvable
        plus = turan.copy()
        plus.add_edge(*next(iter(nx.non_edges(turan))))
        solvable, best, uses = solve_sr_witness(clique_to_sr(plus, k))
        chosen = np.flatnonzero(uses)
        assert solvable and len(chosen) == k and set(uses[chosen]) == {1}
        assert all(plus.has_edge(int(a), int(b)) for a, b in itertools.combinations(chosen, 2))
        assert best == pytest.approx(solve_sr_instance(clique_to_sr(plus, k))[1])
