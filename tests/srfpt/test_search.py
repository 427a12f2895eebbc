"""ExhaustiveSR: recovery, closed-form linear scaling, Gauss-Newton constants, Pareto front, bad input."""

import itertools

import numpy as np
import pytest
import sympy
from sklearn.exceptions import NotFittedError

from icml26.srfpt import ExhaustiveSR, SearchSpaceTooLarge, estimate_trees
from icml26.srfpt.counting import count_trees_by_size
from icml26.srfpt.fit import fit_tree, score_library, tree_size
from icml26.srfpt.primitives import parse_ops
from icml26.testing import check_estimator_like


def test_recovers_a_polynomial_symbolically():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 50)
    y = 3 * x * (x + 1) - 0.5
    model = ExhaustiveSR(max_size=5, ops="add,sub,mul,div").fit(x[:, None], y, ["x"])
    X = sympy.Symbol("x", real=True)
    assert sympy.simplify(model.expression_ - (3 * X * (X + 1) - sympy.Rational(1, 2))) == 0
    assert model.size_ == 5 == tree_size(model.tree_)
    np.testing.assert_allclose(model.predict(x[:, None]), y, atol=1e-9)


def test_linear_scaling_score_matches_least_squares():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 2, (40, 2))
    y = np.sin(X[:, 0]) * 2 + X[:, 1] + 0.1 * rng.standard_normal(40)
    model = ExhaustiveSR(max_size=4, ops="add,mul,sin,log", n_probe=8).fit(X, y)
    lib = model.library_
    mse = score_library(lib, X, y)
    from icml26.srfpt.fit import eval_tree, node_tree

    for node in rng.choice(lib.n_nodes, 25, replace=False):
        f = eval_tree(node_tree(lib, int(node)), lib.ops, X)
        A = np.column_stack([np.ones(40), f])
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        ref = np.mean((A @ coef - y) ** 2)
        assert mse[node] == pytest.approx(ref, rel=1e-6, abs=1e-10)
    raw = score_library(lib, X, y, linear_scaling=False)
    f = eval_tree(node_tree(lib, 5), lib.ops, X)
    assert raw[5] == pytest.approx(np.mean((f - y) ** 2), rel=1e-9)


def test_gauss_newton_fits_an_inner_constant():
    x = np.linspace(-1, 1, 60)
    y = np.sin(2.5 * x)
    ops = parse_ops("mul,sin")
    tree = (1, (0, ("var", 0), ("const", 1.0)))  # sin(x * c), c starts at 1
    params, loss = fit_tree(tree, ops, x[:, None], y, gn_steps=30)
    assert loss < 1e-12
    assert abs(abs(params[2]) - 2.5) < 1e-5


def test_pareto_front_is_strictly_improving_and_covers_the_tree_count():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, 30)
    y = np.cos(x) * x + 0.01 * rng.standard_normal(30)
    model = ExhaustiveSR(max_size=6).fit(x[:, None], y)
    sizes = [p.size for p in model.pareto_]
    losses = [p.mse for p in model.pareto_]
    assert sizes == sorted(sizes) and all(a > b for a, b in itertools.pairwise(losses))
    assert model.n_trees_ == sum(count_trees_by_size(6, 2, 4, 4))
    assert model.n_distinct_ < model.n_evaluated_ < model.n_trees_


def test_depth_search_recovers_within_the_bound():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (40, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1])
    model = ExhaustiveSR(max_depth=2, ops="mul,sin,cos").fit(X, y)
    assert model.mse_ < 1e-20
    assert int(model.library_.depth.max()) <= 2


def test_estimator_contract():
    x = np.linspace(0.1, 1, 20)[:, None]
    assert not check_estimator_like(ExhaustiveSR(max_size=3), x, x[:, 0] ** 2, fitted=["expression_", "pareto_"])


def test_bad_input_gets_clear_errors():
    x = np.linspace(0, 1, 10)[:, None]
    y = x[:, 0].copy()
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ExhaustiveSR(max_size=3).fit(x, y)
    with pytest.raises(ValueError, match="unknown operator"):
        ExhaustiveSR(max_size=3, ops="add,warp").fit(x, x[:, 0])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ExhaustiveSR(max_size=3).fit(x, x[:5, 0])
    with pytest.raises(SearchSpaceTooLarge, match="labelled trees"):
        ExhaustiveSR(max_size=15).fit(x, x[:, 0])
    with pytest.raises(ValueError, match="max_size"):
        ExhaustiveSR(max_size=0).fit(x, x[:, 0])
    with pytest.raises(ValueError, match="names"):
        ExhaustiveSR(max_size=3).fit(x, x[:, 0], ["a", "b"])
    with pytest.raises(NotFittedError):
        ExhaustiveSR().predict(x)


def test_force_overrides_the_estimate():
    x = np.linspace(0.1, 1, 10)[:, None]
    assert estimate_trees(1, "add,mul", (1.0,), max_size=9) > 100
    model = ExhaustiveSR(max_size=9, ops="add,mul", max_trees=100, force=True).fit(x, x[:, 0] ** 3)
    assert model.mse_ < 1e-20


def test_too_few_probe_rows_are_refused():
    # n_probe=1 made every non-leaf tree look constant (zero spread on one point), so constant folding
    # dropped the whole search space and a wrong linear model came back without any error
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (200, 1))
    y = np.sin(x[:, 0] ** 2) * np.cos(x[:, 0])
    for bad in (0, 1, 2.5, "16"):
        with pytest.raises(ValueError, match="n_probe"):
            ExhaustiveSR(max_size=5, n_probe=bad).fit(x, y)
    with pytest.raises(ValueError, match="identical"):
        ExhaustiveSR(max_size=3).fit(np.ones((10, 1)), np.arange(10.0))
    assert ExhaustiveSR(max_size=7, n_probe=2).fit(x, y).mse_ < 1e-20  # two probes already separate functions


def test_large_magnitude_data_warns_that_products_are_dropped():
    rng = np.random.default_rng(5)
    x = rng.uniform(1, 5, (50, 1))
    with pytest.warns(UserWarning, match="rescale"):
        model = ExhaustiveSR(max_size=5, ops="add,mul").fit(x * 1e7, (x[:, 0] * 1e7) ** 2)
    assert model.mse_ > 0  # x*x (about 1e15) is treated as overflow: the search cannot find it
    assert ExhaustiveSR(max_size=5, ops="add,mul").fit(x, x[:, 0] ** 2).mse_ < 1e-20


def test_library_reuse_gives_the_same_model_and_rejects_other_probes():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (60, 1))
    y1, y2 = np.sin(X[:, 0]) + X[:, 0], X[:, 0] ** 2
    first = ExhaustiveSR(max_size=5, random_state=1).fit(X, y1)
    fresh = ExhaustiveSR(max_size=5, random_state=1).fit(X, y2)
    reused = ExhaustiveSR(max_size=5, random_state=1).fit(X, y2, library=first.library_)
    assert str(reused.expression_) == str(fresh.expression_)
    assert reused.library_ is first.library_
    with pytest.raises(ValueError, match="other probe rows"):
        ExhaustiveSR(max_size=5, random_state=2).fit(X, y2, library=first.library_)
    with pytest.raises(ValueError, match="other probe rows"):
        ExhaustiveSR(max_size=5, ops="add,mul", random_state=1).fit(X, y2, library=first.library_)


def test_parse_tree_round_trip_and_errors():
    from icml26.srfpt.fit import eval_tree, parse_tree

    prims = parse_ops("add,mul,sin")
    tree = parse_tree("mul(x, add(sin(y), 1))", prims, ["x", "y"])
    assert tree_size(tree) == 6
    X = np.array([[2.0, 0.0], [1.0, np.pi / 2]])
    np.testing.assert_allclose(eval_tree(tree, prims, X), [2.0, 2.0])
    for bad in ("mul(x)", "foo(x, y)", "add(x, y) x", "sin(x, y)", "add(x"):
        with pytest.raises(ValueError):
            parse_tree(bad, prims, ["x", "y"])


def test_scikit_learn_clone_pipeline_and_dataframe_names():
    import pandas as pd
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"mass": rng.uniform(1, 2, 40), "speed": rng.uniform(-1, 1, 40)})
    y = 0.5 * X["mass"] * X["speed"] * X["speed"]
    est = ExhaustiveSR(max_size=5, ops="add,mul")
    assert clone(est).get_params() == est.get_params()
    fitted = clone(est).fit(X, y)
    assert list(fitted.feature_names_in_) == ["mass", "speed"] and fitted.n_features_in_ == 2
    assert {str(s) for s in fitted.expression_.free_symbols} == {"mass", "speed"}
    assert fitted.score(X, y) > 0.999  # R^2 from RegressorMixin
    assert cross_val_score(est, X, y, cv=2).min() > 0.99
    with pytest.raises(ValueError, match="fitted on"):
        fitted.predict(X[["speed", "mass"]])
