"""Datasets: the mechanism system's values, D4RL-format files, the validating loader, scores, terminations."""

import h5py
import numpy as np
import pytest
import torch

from icml26.vipo.data import (
    KEYS,
    MisspecifiedSystem,
    load_dataset,
    make_dataset,
    mc_value,
    normalised_score,
    save_dataset,
    termination_fn,
    validate_dataset,
)


def test_mc_value_matches_the_closed_form():
    """s' = 0.8 s, r = -s^2, no noise: V(s) = -s^2 / (1 - gamma 0.64)."""
    s = np.array([[1.0], [-2.0], [0.5]])
    v = mc_value(lambda x, a, rng: 0.8 * x, lambda x, rng: np.zeros((len(x), 1)),
                 lambda x, a: -(x**2).sum(-1), s, gamma=0.9, seed=0, rollouts=2, tol=1e-9)  # fmt: skip
    np.testing.assert_allclose(v, -(s[:, 0] ** 2) / (1 - 0.9 * 0.64), rtol=1e-6)


def test_true_dynamics_score_the_smallest_value_gap():
    """The measure of closes-value-gap: the true mean dynamics beat a wrong linear model on it."""
    sysm = MisspecifiedSystem()
    states = sysm.dataset(20, 10, seed=0)["observations"][:100].astype(float)
    kw = dict(policy=sysm.policy, reward=sysm.reward, states=states, gamma=sysm.gamma, seed=1, rollouts=32)
    v_true = mc_value(sysm.true_step, **kw)
    gap_truth = np.abs(mc_value(lambda s, a, rng: sysm.f(s, a), **kw) - v_true).mean()
    A, B = np.asarray(sysm.A), np.asarray(sysm.B)
    gap_linear = np.abs(mc_value(lambda s, a, rng: s @ A.T + a @ B.T, **kw) - v_true).mean()
    assert gap_truth < 0.2 * gap_linear


def test_normalised_score_uses_the_references():
    assert normalised_score(-1000.0, -1000.0, -200.0) == 0.0
    assert normalised_score(-200.0, -1000.0, -200.0) == 100.0
    with pytest.raises(ValueError, match="finite and distinct"):
        normalised_score(1.0, float("nan"), 2.0)


def test_termination_functions():
    healthy = np.array([[1.2, 0.0, *np.zeros(9)]])
    fallen = np.array([[0.5, 0.0, *np.zeros(9)]])
    tilted = np.array([[1.2, 0.3, *np.zeros(9)]])
    hop = termination_fn("Hopper-v5")
    assert hop(None, None, healthy).tolist() == [False]
    assert hop(None, None, fallen).tolist() == [True] and hop(None, None, tilted).tolist() == [True]
    walker = termination_fn("Walker2d-v5")
    assert walker(None, None, np.array([[1.2, 0.5, *np.zeros(15)]])).tolist() == [False]
    assert walker(None, None, np.array([[2.5, 0.0, *np.zeros(15)]])).tolist() == [True]
    never = termination_fn("Pendulum-v1")
    x = torch.tensor([[1.0, 0.0, float("nan")], [float("nan"), 1.0, 0.0]])
    assert not never(None, None, x).any() and not never(None, None, x.numpy()).any()
    with pytest.raises(ValueError, match="no termination function for environment 'Ant-v5'"):
        termination_fn("Ant-v5")


@pytest.fixture(scope="module")
def pendulum():
    return make_dataset("Pendulum-v1", "medium-expert", 500, seed=0)


def test_pendulum_dataset_and_references(pendulum):
    assert set(KEYS) <= set(pendulum) and len(pendulum["observations"]) == 500
    meta = pendulum["meta"]
    assert meta["ref_min_score"] < meta["behaviour_return_mean"] and meta["ref_min_score"] < meta["ref_max_score"]
    np.testing.assert_array_less(np.abs(pendulum["actions"]), 2.0 + 1e-6)
    ends = pendulum["timeouts"] | pendulum["terminals"]
    assert ends[-1] and ends.sum() >= 2


@pytest.mark.parametrize("suffix", [".npz", ".hdf5"])
def test_roundtrip(pendulum, tmp_path, suffix):
    path = save_dataset(tmp_path / f"d{suffix}", pendulum)
    back = load_dataset(path, "Pendulum-v1")
    for k in KEYS:
        np.testing.assert_array_equal(back[k], np.asarray(pendulum[k], back[k].dtype))
    assert back["meta"]["env"] == "Pendulum-v1"


def test_real_d4rl_layout_without_next_observations(tmp_path):
    n = 6
    with h5py.File(tmp_path / "d4rl.hdf5", "w") as fh:
        fh["observations"] = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        fh["actions"] = np.zeros((n, 1), np.float32)
        fh["rewards"] = np.ones(n, np.float32)
        fh["terminals"] = np.zeros(n, bool)
        fh["timeouts"] = np.array([0, 0, 1, 0, 0, 1], bool)
    d = load_dataset(tmp_path / "d4rl.hdf5", "Pendulum-v1")
    assert len(d["observations"]) == 4  # the transitions that end an episode have no successor
    np.testing.assert_array_equal(d["next_observations"][0], d["observations"][1])


def _good(n=4):
    return {"observations": np.zeros((n, 3)), "actions": np.zeros((n, 1)), "rewards": np.zeros(n),
            "next_observations": np.zeros((n, 3)), "terminals": np.zeros(n), "timeouts": np.zeros(n)}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("rewards"), "missing key"),
        (lambda d: d.__setitem__("actions", np.zeros((3, 1))), "mismatched lengths"),
        (lambda d: d["rewards"].__setitem__(2, np.nan), "rewards holds NaN or inf .first at transition 2"),
        (lambda d: d["actions"].__setitem__(1, 5.0), "outside Pendulum-v1's action space"),
        (lambda d: d.__setitem__("actions", np.zeros((4, 2))), "action space has 1"),
        (lambda d: d.update(observations=np.zeros((4, 5)), next_observations=np.zeros((4, 5))), "has 3"),
    ],
)
def test_validation_errors(change, message):
    d = _good()
    change(d)
    with pytest.raises(ValueError, match=message):
        validate_dataset(d, "Pendulum-v1")
