"""Exact tree counts: recurrence vs explicit enumeration vs the vectorised engine."""

import numpy as np
import pytest

from icml26.srfpt.counting import (
    count_trees_by_depth,
    count_trees_by_size,
    depth_count_bound,
    iter_trees_by_depth,
    iter_trees_by_size,
)
from icml26.srfpt.enumerate import enumerate_library
from icml26.srfpt.primitives import parse_ops


@pytest.mark.parametrize(("leaves", "unary", "binary"), [(1, 0, 1), (2, 2, 4), (3, 1, 2), (2, 3, 0)])
def test_size_recurrence_matches_explicit_enumeration(leaves, unary, binary):
    counts = count_trees_by_size(6, leaves, unary, binary)
    for s in range(1, 7):
        assert counts[s] == sum(1 for _ in iter_trees_by_size(s, leaves, unary, binary))


def test_catalan_numbers_for_one_leaf_one_binary_op():
    # full binary trees with (s+1)/2 leaves: Catalan numbers C_0, C_1, ...
    counts = count_trees_by_size(11, 1, 0, 1)
    assert counts[1::2] == [1, 1, 2, 5, 14, 42]
    assert counts[2::2] == [0] * 5


@pytest.mark.parametrize(("leaves", "unary", "binary"), [(2, 2, 4), (1, 1, 1), (3, 0, 2)])
def test_depth_recurrence_matches_explicit_enumeration_and_bound(leaves, unary, binary):
    counts = count_trees_by_depth(2, leaves, unary, binary)
    for d in range(3):
        assert counts[d] == sum(1 for _ in iter_trees_by_depth(d, leaves, unary, binary))
        assert counts[d] <= depth_count_bound(d, leaves, unary, binary)


def test_prototype_table_of_the_paper_notes():
    # 2 unary, 4 binary operators, 1 constant, v variables (paper notes, section 7)
    table = {1: [672, 24448, 1004032, 44226560], 2: [1776, 86592, 4806912, 287238144]}
    for v, row in table.items():
        assert count_trees_by_size(11, v + 1, 2, 4)[5::2] == row
    assert count_trees_by_size(9, 9, 2, 4)[9] == 473488128
    assert 460 < count_trees_by_size(9, 9, 2, 4)[9] / count_trees_by_size(9, 2, 2, 4)[9] < 480


@pytest.mark.parametrize("n_vars", [1, 2])
def test_engine_without_dedup_enumerates_every_labelled_tree(n_vars):
    ops = parse_ops("sin,cos,add,sub,mul,div")
    probes = np.random.default_rng(0).uniform(-1, 1, (3, n_vars))
    lib = enumerate_library(ops, probes, 5, dedup=False)
    assert lib.n_candidates[1:] == count_trees_by_size(5, n_vars + 1, 2, 4)[1:]
    assert lib.n_nodes == sum(count_trees_by_size(5, n_vars + 1, 2, 4))
    lib = enumerate_library(ops, probes, 2, mode="depth", dedup=False)
    assert np.cumsum(lib.n_candidates).tolist() == count_trees_by_depth(2, n_vars + 1, 2, 4)


def test_bad_arguments():
    with pytest.raises(ValueError, match="max_size"):
        count_trees_by_size(0, 1, 1, 1)
    with pytest.raises(ValueError, match="leaf"):
        count_trees_by_depth(2, 0, 1, 1)
    with pytest.raises(ValueError, match="n_unary"):
        count_trees_by_size(3, 1, -1, 1)
