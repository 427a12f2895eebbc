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


def test_recovery_measure_reads_a_planted_deviation_at_its_size():
    """A deviation of known size (1e-5 of max |f|, ten times the recovery bar) planted on the truth reads at
    about that size after the refit, and the truth itself reads at rounding level."""
    scores = claims._form_recovery_check(0)
    assert 0.5 * claims.PLANTED_DEVIATION < scores["planted deviation"] < 1.5 * claims.PLANTED_DEVIATION
    assert scores["truth"] < 1e-12


def test_planted_function_is_in_the_library_finite_and_non_constant():
    """The recovery claims' positive control plants a library function of the asked grade; the search on its
    noiseless values recovers it (the form is in the search space)."""
    from icml26.srfpt.data import get_problem, sample
    from icml26.srfpt.primitives import DEFAULT_OPS, parse_ops
    from icml26.srfpt.search import ExhaustiveSR

    prims = parse_ops(DEFAULT_OPS)
    p = get_problem("nguyen-5")
    X, y = sample(p, seed=0)
    Xh, _ = sample(p, claims.HELDOUT_N, seed=claims.HELDOUT_SEED)
    model = ExhaustiveSR(max_size=5, ops=DEFAULT_OPS, random_state=0).fit(X, y, p.variables)
    tree = claims._planted_function(model.library_, prims, "size", 5, X, Xh, np.random.default_rng(1))
    f = claims.eval_tree(tree, prims, X)
    assert claims.tree_size(tree) == 5 and np.isfinite(f).all() and np.std(f) > 0
    model.fit(X, f, p.variables, library=model.library_)
    assert claims._refit_recovered(model.tree_, prims, Xh, claims.eval_tree(tree, prims, Xh))[0]
