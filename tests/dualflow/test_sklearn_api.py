"""Issue 53 / issue 40 item 9: DualFlow against scikit-learn's estimator checks, 2-D input as one trial, and
NotFittedError before fit."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from icml26.dualflow import DualFlow
from icml26.dualflow.estimator import SKLEARN_EXPECTED_FAILURES

torch.set_num_threads(1)

#: A tiny DCF (a few Adam steps, RK4 with 2 steps): the checks test the API, not the fit's quality.
TINY = {"latent_budget": 1.0, "hidden": 8, "depth": 1, "n_steps": 3, "batch_size": 16, "history": 1,
        "solver": "rk4", "rk4_steps": 2, "random_state": 0}  # fmt: skip


# not slow: the done-when of issue 53 (about 50 checks x 0.3 s, 15 s on an idle 2-core machine)
@parametrize_with_checks([DualFlow(**TINY)], expected_failed_checks=lambda est: SKLEARN_EXPECTED_FAILURES)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_expected_failures_each_have_a_reason():
    assert all(isinstance(v, str) and len(v) > 20 for v in SKLEARN_EXPECTED_FAILURES.values())


def test_a_2d_array_is_one_trial():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    est = DualFlow(**TINY).fit(X)
    z = est.transform(X)
    assert z.shape == (40, est.model_.n_latent)  # (T, m): the same form as the input
    np.testing.assert_allclose(z, est.transform(X[None])[0])  # the same as the one-trial 3-D array
    assert est.inverse_transform(z).shape == X.shape
    with pytest.raises(ValueError, match="1 sample"):
        DualFlow(**TINY).fit(X[:1])
    with pytest.raises(ValueError, match="shape"):
        DualFlow(**TINY).fit(X[0])  # 1-D: not a trial


def test_not_fitted_error_before_fit():
    X = np.zeros((10, 3))
    for call in (lambda e: e.transform(X), lambda e: e.inverse_transform(X), lambda e: e.simulate(X, 2)):
        with pytest.raises(NotFittedError):
            call(DualFlow())
