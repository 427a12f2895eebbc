"""scikit-learn's estimator checks over ExhaustiveSR, pickling of a fitted model, ``random_state``."""

import pickle

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from icml26.srfpt import ExhaustiveSR

#: By-design failures of scikit-learn's checks, each with its reason. Empty: at a small bound every check passes
#: (sklearn's checks fit on up to 10 features; the default bound k = 7 over 8 operators on 10 variables covers
#: more labelled trees than ``max_trees`` and is refused, which is the estimator's documented behaviour, so the
#: checks run at k = 4, the same code path).
EXPECTED_FAILED: dict[str, str] = {}


@parametrize_with_checks(
    [ExhaustiveSR(max_size=4), ExhaustiveSR(max_depth=1, ops="add,mul,sin")],
    expected_failed_checks=lambda est: EXPECTED_FAILED,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_fitted_model_round_trips_through_pickle():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, (40, 2))
    y = 1.5 * X[:, 0] * np.sin(X[:, 1]) + 0.3
    model = ExhaustiveSR(max_size=5, ops="add,mul,sin,sqrt,square,cube,neg,inv,pow,abs,sub,div").fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert str(back.expression_) == str(model.expression_)
    assert [p.name for p in back.ops_] == [p.name for p in model.ops_]
    assert back.mse_ < 1e-20  # the formula is inside the bound: the search found it


def test_random_state_and_the_deprecated_seed_alias():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (200, 1))
    y = np.sin(X[:, 0]) * X[:, 0]
    a = ExhaustiveSR(max_size=5, random_state=3).fit(X, y)
    with pytest.warns(FutureWarning, match="random_state"):
        b = ExhaustiveSR(max_size=5, seed=3).fit(X, y)
    assert a.random_state_ == b.random_state_ == 3
    np.testing.assert_array_equal(a.library_.values, b.library_.values)  # the same probe rows
    with pytest.raises(ValueError, match="random_state"):
        ExhaustiveSR(max_size=3, random_state=-1).fit(X, y)


def test_unfitted_predict_raises_not_fitted_error():
    with pytest.raises(NotFittedError):
        ExhaustiveSR().predict(np.ones((3, 1)))
