"""The deduplicating enumerator finds every function of every tree (vs a slow explicit reference)."""

import numpy as np
import pytest

from icml26.srfpt.counting import iter_trees_by_size
from icml26.srfpt.enumerate import SearchSpaceTooLarge, enumerate_library
from icml26.srfpt.primitives import parse_ops


def _eval(tree, ops, leaves):
    if tree[0] == "leaf":
        return leaves[tree[1]]
    args = [_eval(c, ops, leaves) for c in tree[2:]]
    return ops[tree[1] if tree[0] == "u" else len(unary_of(ops)) + tree[1]].fn(*args)


def unary_of(ops):
    return [p for p in ops if p.arity == 1]


def _key(v):
    return tuple(np.round(v, 7))


def test_every_valid_tree_function_is_in_the_library():
    rng = np.random.default_rng(1)
    ops = parse_ops("sin,exp,add,sub,mul,div")  # unary ops first: the order _eval assumes
    probes = rng.uniform(0.2, 2.0, (8, 1))
    leaves = [probes[:, 0], np.ones(8)]
    lib = enumerate_library(ops, probes, 5, fold_constants=False)
    found = {_key(v) for v in lib.values}
    reference = set()
    with np.errstate(all="ignore"):
        for s in range(1, 6):
            for tree in iter_trees_by_size(s, 2, 2, 4):
                v = _eval(tree, ops, leaves)
                if np.isfinite(v).all() and (np.abs(v) < 1e12).all():
                    reference.add(_key(v))
    assert reference <= found
    # the library holds no duplicate functions (up to rounding at the hash's precision)
    assert len(found) == lib.n_nodes
    assert len(reference) == lib.n_nodes


def test_smallest_size_is_kept_and_commutative_duplicates_removed():
    probes = np.random.default_rng(2).uniform(-1, 1, (10, 2))
    lib = enumerate_library(parse_ops("add,mul"), probes, 3, constants=())
    # size 3: x0+x0, x0+x1, x1+x1, x0*x0, x0*x1, x1*x1 (x1+x0 and x1*x0 are duplicates)
    assert lib.distinct_per_grade(3) == [0, 2, 0, 6]
    assert (lib.size[lib.grade == 3] == 3).all()


def test_invalid_trees_are_discarded():
    probes = np.array([[-1.0], [0.5], [2.0]])
    lib = enumerate_library(parse_ops("log,sqrt"), probes, 2, constants=())
    assert lib.n_nodes == 1  # log(x) and sqrt(x) are undefined at x = -1
    assert np.isfinite(lib.values).all()


def test_constant_folding_keeps_simple_constants_only():
    probes = np.random.default_rng(3).uniform(1, 2, (6, 1))
    lib = enumerate_library(parse_ops("add,div,sin"), probes, 3)
    consts = lib.values[np.ptp(lib.values, axis=1) == 0][:, 0]
    assert set(np.round(consts, 9)) == {1.0, 2.0}  # 1 and 1+1 (1/1 is a duplicate; sin(1) is folded away)


def test_node_budget_is_enforced():
    probes = np.random.default_rng(4).uniform(-1, 1, (8, 2))
    with pytest.raises(SearchSpaceTooLarge, match="max_nodes"):
        enumerate_library(parse_ops("add,mul,sub,sin"), probes, 7, max_nodes=300)


def test_bad_arguments():
    probes = np.zeros((4, 1))
    with pytest.raises(ValueError, match="mode"):
        enumerate_library(parse_ops("add"), probes, 3, mode="width")
    with pytest.raises(ValueError, match="unknown operator"):
        parse_ops("add,frobnicate")
    with pytest.raises(ValueError, match="empty"):
        parse_ops(" , ")
