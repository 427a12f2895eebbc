"""DualFlow estimator: scikit-learn contract, round trips, nested-dropout ordering, persistence, bad input."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from icml26.dualflow.estimator import DualFlow, effective_dimension
from icml26.testing import check_estimator_like

TINY = {
    "latent_budget": 3,
    "hidden": 16,
    "depth": 1,
    "n_steps": 30,
    "batch_size": 32,
    "history": 1,
    "rtol": 1e-4,
    "atol": 1e-4,
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 4 * np.pi, 30)
    phase = rng.uniform(0, 2 * np.pi, size=(8, 1))
    latent = np.stack([np.cos(t + phase), np.sin(t + phase)], axis=-1)  # (8, 30, 2)
    W = rng.normal(size=(2, 6))
    return latent @ W + 0.05 * rng.normal(size=(8, 30, 6))


@pytest.fixture(scope="module")
def fitted(data):
    return DualFlow(**TINY, random_state=0).fit(data)


def test_estimator_contract(data):
    problems = check_estimator_like(DualFlow(**TINY), data, fitted=["model_", "d_", "effective_dim_", "loss_history_"])
    assert problems == []


def test_shapes_and_round_trip(fitted, data):
    Z = fitted.transform(data)
    assert Z.shape == (8, 30, 6)
    assert fitted.transform(data, n_components=2).shape == (8, 30, 2)
    assert fitted.transform(data, representation="encoder").shape == (8, 30, 6)
    rec = fitted.inverse_transform(Z)
    # invertible ODE: the full round trip returns the data up to solver tolerance
    assert np.abs(rec - data).max() < 0.05 * data.std()
    assert fitted.simulate(data[:3], n_frames=4).shape == (3, 4, 6)
    frames, latent = fitted.simulate(data[:3, :1], n_frames=2, return_latent=True)
    assert frames.shape == (3, 2, 6) and latent.shape == (3, 2, 6)


def test_variable_length_trials_as_list(fitted, data):
    trials = [data[0], data[1, :17], data[2, :2]]
    out = fitted.transform(trials, n_components=3)
    assert isinstance(out, list) and [o.shape for o in out] == [(30, 3), (17, 3), (2, 3)]
    # DOPRI5 shares its adaptive steps across the batch: equal up to the solver tolerance
    assert np.allclose(out[1], fitted.transform(data[1:2, :17], n_components=3)[0], atol=1e-3)


def test_nested_dropout_orders_the_latent():
    """Two latent dimensions in 10 features: d_1, d_2 carry the variance, K_eff stays small.

    Issue 40: with the authors' loss (flows on the unmasked coupling) the order of the 2nd and 3rd scales is
    not reliable after 600 steps (this seed: d_2 0.32 < d_3 0.38, others: d_2 > 4 d_3), so only the head and the
    share are asserted; the README's diagnosis reports the ordering on larger data."""
    rng = np.random.default_rng(2)
    z = np.cumsum(rng.normal(size=(20, 40, 2)), axis=1) / 5
    X = z @ rng.normal(size=(2, 10)) + 0.02 * rng.normal(size=(20, 40, 10))
    est = DualFlow(hidden=16, depth=1, n_steps=600, batch_size=32, history=0, latent_budget=3, random_state=1).fit(X)
    assert est.d_[:2].sum() > 0.7 * est.d_.sum()
    assert est.d_[0] == est.d_.max()
    assert effective_dimension(est.d_, 0.7) <= 2
    assert est.loss_history_[:20, 1].mean() > est.loss_history_[-20:, 1].mean()  # align loss decreased


def test_nested_dropout_can_be_switched_off(tmp_path, data):
    """nested_dropout=False trains with every coordinate kept (an ablation) and survives save / load."""
    est = DualFlow(**{**TINY, "nested_dropout": False}, random_state=0).fit(data)
    assert est.transform(data).shape == (8, 30, 6)
    est.save(tmp_path / "m.pt")
    assert DualFlow.load(tmp_path / "m.pt").nested_dropout is False


def test_effective_dimension_closed_form():
    assert effective_dimension(np.array([5.0, 3.0, 1.0, 0.5, 0.5])) == 4  # 9.5/10 reached at K = 4
    assert effective_dimension(np.array([1.0, 0.0, 0.0])) == 1
    assert effective_dimension(np.ones(10), threshold=0.5) == 5
    with pytest.raises(ValueError):
        effective_dimension(np.array([-1.0, 2.0]))


def test_save_load(tmp_path, fitted, data):
    path = tmp_path / "m.pt"
    fitted.save(path)
    loaded = DualFlow.load(path)
    assert np.allclose(loaded.transform(data), fitted.transform(data), atol=1e-6)
    assert loaded.effective_dim_ == fitted.effective_dim_
    with pytest.raises(ValueError, match="fitted on 6 features"):
        DualFlow.load(path, n_features=7)
    with pytest.raises(ValueError, match="expecting 6 features"):
        loaded.transform(np.zeros((1, 5, 7)))
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(ValueError, match="not a DualFlow checkpoint"):
        DualFlow.load(tmp_path / "junk.pt")
    with pytest.raises(OSError):
        DualFlow.load(tmp_path / "missing.pt")


def test_zero_variance_features_are_dropped_with_a_warning(data):
    X = np.concatenate([data, np.full((8, 30, 1), 3.0)], axis=-1)
    with pytest.warns(UserWarning, match="zero-variance"):
        est = DualFlow(**{**TINY, "n_steps": 5}).fit(X)
    assert est.feature_mask_.tolist() == [True] * 6 + [False]
    assert est.transform(X).shape == (8, 30, 6)
    assert np.allclose(est.inverse_transform(est.transform(X))[..., -1], 3.0)


@pytest.mark.parametrize(
    ("X", "match"),
    [
        (np.zeros(6), "n_trials, n_time, n_features"),  # (T, D) is one trial (test_sklearn_api.py); 1-D is not
        (np.zeros((2, 3, 30, 6)), "n_trials, n_time, n_features"),
        (np.array([np.zeros((3, 6)), np.zeros((4, 6))], dtype=object), "different lengths"),
        ([np.zeros((3, 6)), np.zeros((4, 5))], "different feature counts"),
    ],
)
def test_bad_shapes(X, match):
    with pytest.raises(ValueError, match=match):
        DualFlow(**TINY).fit(X)


def test_empty_array_of_trials_is_refused():
    with pytest.raises(ValueError, match="no data"):
        DualFlow(**TINY).fit(np.zeros((0, 30, 6)))


def test_latent_budget_is_checked_against_the_features_kept(data):
    """6 informative + 2 constant features: a budget of 7 exceeds the 6 coordinates the model can have."""
    X = np.concatenate([data, np.full((8, 30, 2), 3.0)], axis=-1)
    with pytest.warns(UserWarning, match="zero-variance"), pytest.raises(ValueError, match="n_features=6"):
        DualFlow(**{**TINY, "latent_budget": 7}).fit(X)


def test_bad_values(data):
    bad = data.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DualFlow(**TINY).fit(bad)
    with pytest.raises(ValueError, match="latent_budget"):
        DualFlow(**{**TINY, "latent_budget": 7}).fit(data)
    with pytest.raises(ValueError, match="solver"):
        DualFlow(**{**TINY, "solver": "euler"}).fit(data)
    with pytest.raises(ValueError, match="single frame"):
        DualFlow(**TINY).fit(data[:, :1])
    with pytest.raises(NotFittedError, match="not fitted"):
        DualFlow().transform(data)


def test_bad_inference_arguments(fitted, data):
    with pytest.raises(ValueError, match="n_components"):
        fitted.transform(data, n_components=7)
    with pytest.raises(ValueError, match="representation"):
        fitted.transform(data, representation="both")
    with pytest.raises(ValueError, match="only 6"):
        fitted.inverse_transform(np.zeros((1, 3, 8)))
    with pytest.raises(ValueError, match="n_frames"):
        fitted.simulate(data, 0)
    with pytest.raises(ValueError, match="tau"):
        fitted.simulate(data, 2, tau=1.5)


def test_video_frames_with_convolutional_flows(tmp_path):
    from icml26.dualflow.data import make_rotating_video

    frames, _ = make_rotating_video(n_videos=3, n_frames=8, size=8, noise=0.0, seed=0)
    X = frames.reshape(3, 8, 64)
    X[..., 0] = 0.5  # a constant corner pixel: kept (a convolution needs whole frames), with a warning
    est = DualFlow(**{**TINY, "n_steps": 10, "hidden": 4}, frame_shape=(8, 8))
    with pytest.warns(UserWarning, match="kept as constants"):
        est.fit(X)
    assert type(est.model_.u_phi).__name__ == "FlowConv" and est.feature_mask_.all()
    Z = est.transform(X)
    assert Z.shape == (3, 8, 64)
    assert np.abs(est.inverse_transform(Z) - X).max() < 0.05
    assert np.allclose(est.inverse_transform(Z)[..., 0], 0.5, atol=1e-2)  # passes through the flow
    assert est.simulate(X, n_frames=2).shape == (3, 2, 64)
    est.save(tmp_path / "v.pt")
    assert np.allclose(DualFlow.load(tmp_path / "v.pt").transform(X), Z, atol=1e-6)
    with pytest.raises(ValueError, match="frame_shape"):
        DualFlow(**TINY, frame_shape=(7, 8)).fit(X)


def test_scikit_learn_clone_and_fit_transform(data):
    from sklearn.base import clone

    est = DualFlow(**TINY, random_state=0)
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params() and not hasattr(twin, "model_")
    Z = twin.fit_transform(data)
    assert Z.shape[:2] == data.shape[:2] and np.isfinite(Z).all()


def test_device_is_a_parameter_and_an_absent_one_is_refused_before_training(tmp_path):
    import torch

    X = np.random.default_rng(0).normal(size=(3, 20, 4))
    est = DualFlow(latent_budget=2, hidden=8, depth=1, n_steps=3, batch_size=8, random_state=0)
    assert est.get_params()["device"] == "cpu"
    est.fit(X)
    est.save(tmp_path / "m.pt")
    assert DualFlow.load(tmp_path / "m.pt").device == "cpu"
    with pytest.raises(ValueError, match="device must be"):
        est.set_params(device="tpu").transform(X)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            DualFlow(latent_budget=2, n_steps=3, device="cuda").fit(X)
