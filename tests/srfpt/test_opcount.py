"""Operation counter: matches Eq. C1 without deduplication; the exponential part does not depend on n."""

import numpy as np
import pytest

from icml26.srfpt.counting import count_trees_by_depth, count_trees_by_size
from icml26.srfpt.opcount import counted_search, counting_primitives
from icml26.srfpt.primitives import parse_ops


@pytest.mark.parametrize(("ops", "n_vars", "k"), [(("add", "mul"), 1, 5), (("sin", "add", "sub"), 2, 4)])
def test_raw_enumeration_ops_equal_labelled_trees_times_probes(ops, n_vars, k):
    prims = parse_ops(ops)
    X = np.random.default_rng(0).uniform(-1, 1, (30, n_vars))
    cost = counted_search(prims, X, X[:, 0], k, n_probe=5, dedup=False)
    u = sum(p.arity == 1 for p in prims)
    assert cost.enumerate_ops == 5 * sum(count_trees_by_size(k, n_vars + 1, u, len(prims) - u)[2:])


def test_raw_depth_enumeration_ops_equal_eq_c2():
    prims = parse_ops(("cos", "add"))
    X = np.random.default_rng(1).uniform(-1, 1, (10, 1))
    cost = counted_search(prims, X, X[:, 0], 2, mode="depth", n_probe=3, dedup=False)
    trees = count_trees_by_depth(2, 2, 1, 1)[-1]
    assert cost.enumerate_ops == 3 * (trees - 2)  # every non-leaf tree of depth <= 2, on 3 probe rows


def test_scoring_ops_are_distinct_functions_times_n_and_enumeration_is_n_free():
    prims = parse_ops(("sin", "add", "mul", "div"))
    X = np.random.default_rng(2).uniform(-2, 2, (5000, 1))
    costs = [counted_search(prims, X[:n], X[:n, 0] ** 2, 5) for n in (50, 500, 5000)]
    assert len({c.n_distinct for c in costs}) == 1
    assert len({c.enumerate_ops for c in costs}) == 1
    for c in costs:
        assert c.score_ops == (c.n_distinct - c.n_leaves) * c.n
        assert c.total_ops == c.enumerate_ops + c.score_ops


def test_counting_primitives_leave_the_originals_untouched():
    prims = parse_ops(("add", "sin"))
    counted, counter = counting_primitives(prims)
    out = counted[0].fn(np.ones(3), np.ones(3))
    counted[1].fn(np.ones((2, 4)), out=np.empty((2, 4)))
    np.testing.assert_array_equal(out, 2 * np.ones(3))
    assert counter.count == 3 + 8
    prims[0].fn(np.ones(3), np.ones(3))
    assert counter.count == 11


def test_counted_search_rejects_bad_input():
    prims = parse_ops(("add", "sin"))
    X = np.random.default_rng(3).uniform(-1, 1, (20, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match="shape"):
        counted_search(prims, X[:, 0], y, 3)
    with pytest.raises(ValueError, match="shape"):
        counted_search(prims, X, y[:-1], 3)
    bad = X.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        counted_search(prims, bad, y, 3)
    for n_probe in (0, 1, 21, 2.5, True):
        with pytest.raises(ValueError, match="n_probe"):
            counted_search(prims, X, y, 3, n_probe=n_probe)
    with pytest.raises(ValueError, match="bound must be an integer"):
        counted_search(prims, X, y, 3.5)
    with pytest.raises(ValueError, match="mode"):
        counted_search(prims, X, y, 3, mode="width")
    with pytest.raises(ValueError, match="max size"):
        counted_search(prims, X, y, 0)
