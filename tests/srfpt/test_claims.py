"""Contract v3 pieces of the srfpt claims: the positive controls' oracles, the mechanisms, the measure check."""

import networkx as nx
import numpy as np
import pytest

from icml26.srfpt import claims
from icml26.srfpt.reduction import clique_to_sr, has_clique_bruteforce, solve_sr_witness


@pytest.mark.parametrize("seed", [0, 3])
def test_closed_form_answer_key_agrees_with_brute_force_sr(seed):
    """The positive control's answer key (Eq. R1 over every k-subset) is what brute-force SR finds."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        graph = nx.gnp_random_graph(7, float(rng.uniform(0.3, 0.8)), seed=int(rng.integers(2**31)))
        for k in (3, 4):
            solvable, uses = claims._closed_form_witness(graph, k)
            assert solvable == solve_sr_witness(clique_to_sr(graph, k))[0] == has_clique_bruteforce(graph, k)
            assert uses.sum() == (k if solvable else 0)


def test_gadget_probe_is_zero_without_the_non_edge_rows():
    """The probe's reading is 1 on T(7, 3) (a triangle is the best: one short of k = 4); on the complete graph,
    where no non-edge row acts, SR reaches tau exactly."""
    assert claims.gadget("smoke", 0)["gadget"] == pytest.approx(1.0)
    inst = clique_to_sr(nx.complete_graph(7), 4)
    assert solve_sr_witness(inst)[1] == pytest.approx(inst.tau)


def test_deduplication_removes_most_labelled_trees():
    out = claims.deduplication("smoke", 0)
    assert 0.5 < out["deduplication"] < 1.0
    assert out["distinct functions"] < out["labelled trees (Eq. C1)"]


@pytest.mark.parametrize("seed", [1])
def test_recovery_measure_sees_the_form_and_its_absence(seed):
    for check in claims.MEASURES:
        assert check.check(seed) == [], check.name
