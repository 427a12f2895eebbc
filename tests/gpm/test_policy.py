import numpy as np
import pytest
import torch

from icml26.gpm.data import random_bank, simulate
from icml26.gpm.irt import ItemBank
from icml26.gpm.policy import BOBCATSelector, GPMSelector, _TorchBank, inner_path, rollout
from icml26.gpm.selectors import TestState
from icml26.testing import check_estimator_like


def test_estimator_contract():
    d = simulate(40, 15, np.random.default_rng(0))
    sel = GPMSelector(d.bank, epochs=1, test_length=5, hidden=16)
    assert not check_estimator_like(sel, d.responses, fitted=["policy_", "history_"])


def test_inner_path_reaches_map_estimate():
    from icml26.gpm.irt import estimate_ability

    rng = np.random.default_rng(1)
    bank = random_bank(30, rng)
    x = bank.sample(rng.normal(size=8), rng)
    tb = _TorchBank(bank, dtype=torch.float64)
    path = inner_path(tb, torch.tensor(0.0, dtype=torch.float64), torch.ones(8, 30, dtype=torch.float64),
                      torch.as_tensor(x), steps=20)  # fmt: skip
    ref, _ = estimate_ability(bank, x, "map")
    np.testing.assert_allclose(path[-1].numpy(), ref, atol=1e-6)


@pytest.mark.parametrize("objective, match", [("path", "step"), ("path", "gradient"), ("heldout", "step")])
def test_loss_reaches_every_parameter(objective, match):
    rng = np.random.default_rng(2)
    d = simulate(16, 20, rng)
    sel = GPMSelector(d.bank, epochs=0, hidden=8, test_length=4).fit(d.responses)
    x = torch.as_tensor(d.responses, dtype=torch.float32)
    pool = torch.ones(16, 20, dtype=torch.bool)
    pool[:, :4] = False
    held = (~pool).float()
    loss = rollout(sel.policy_, _TorchBank(d.bank), x, pool, held, 4, 3, 1.0, objective, match)
    loss.backward()
    assert torch.isfinite(loss)
    for name, p in sel.policy_.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert sel.policy_.mlp[-1].weight.grad.abs().sum() > 0  # the selection gets a learning signal


def test_untrained_policy_is_mfi_at_its_estimate():
    rng = np.random.default_rng(3)
    d = simulate(10, 25, rng)
    sel = GPMSelector(d.bank, epochs=0, hidden=8, test_length=5).fit(d.responses)
    state = TestState(np.full((10, 25), np.nan), np.ones((10, 25), bool), np.zeros(10), 0)
    items = sel.select(d.bank, state, rng)
    assert np.array_equal(items, np.argmax(d.bank.information(np.zeros(10)), axis=1))


def test_policy_without_information_anchor(tmp_path):
    """anchor=False: beta is a fixed 0 (not learned); untrained, the policy scores every item alike."""
    rng = np.random.default_rng(8)
    d = simulate(10, 25, rng)
    sel = GPMSelector(d.bank, epochs=0, hidden=8, test_length=5, anchor=False).fit(d.responses)
    assert "beta" not in dict(sel.policy_.named_parameters()) and float(sel.policy_.beta) == 0.0
    avail = np.ones((10, 25), bool)
    avail[:, :3] = False
    state = TestState(np.full((10, 25), np.nan), avail, np.zeros(10), 0)
    assert np.array_equal(sel.select(d.bank, state, rng), np.full(10, 3))  # all logits equal: first available
    sel.save(tmp_path / "p.pt")
    assert GPMSelector.load(tmp_path / "p.pt").anchor is False
    trained = GPMSelector(d.bank, epochs=1, hidden=8, test_length=5, anchor=False).fit(d.responses)
    assert float(trained.policy_.beta) == 0.0


def test_training_beats_random_and_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(4)
    d = simulate(300, 40, rng)
    sel = BOBCATSelector(d.bank, epochs=1, hidden=32, test_length=8).fit(d.responses)
    assert sel.name == "bobcat" and len(sel.history_) == 1
    sel.save(tmp_path / "p.pt")
    back = GPMSelector.load(tmp_path / "p.pt")
    x = d.bank.sample(rng.normal(size=20), rng)
    asked = rng.random((20, 40)) < 0.2
    state = TestState(np.where(asked, x, np.nan), ~asked, np.zeros(20), 3)
    np.testing.assert_array_equal(sel.select(d.bank, state, rng), back.select(d.bank, state, rng))


def test_bad_policy_input(tmp_path):
    bank = random_bank(10, np.random.default_rng(5))
    with pytest.raises(ValueError, match="test_length"):
        GPMSelector(bank, test_length=11)
    with pytest.raises(ValueError, match="objective"):
        GPMSelector(bank, objective="global")
    with pytest.raises(ValueError, match="match"):
        GPMSelector(bank, match="hessian")
    sel = GPMSelector(bank, test_length=3)
    state = TestState(np.full((1, 10), np.nan), np.ones((1, 10), bool), np.zeros(1), 0)
    with pytest.raises(RuntimeError, match="not trained"):
        sel.select(bank, state, np.random.default_rng(0))
    sel = GPMSelector(bank, epochs=0, test_length=3).fit(np.ones((2, 10)))
    with pytest.raises(ValueError, match="trained for 10 items"):
        sel.select(random_bank(12, np.random.default_rng(0)), state, np.random.default_rng(0))
    with pytest.raises(ValueError, match="another bank"):  # same size, other items: not silently used
        sel.select(random_bank(10, np.random.default_rng(6)), state, np.random.default_rng(0))
    same = ItemBank(bank.a[:, 0].copy(), bank.b.copy())  # an equal bank (e.g. re-read from CSV) is fine
    assert sel.select(same, state, np.random.default_rng(0)).shape == (1,)
    with pytest.raises(OSError):
        GPMSelector.load(tmp_path / "none.pt")


def test_sparse_training_examinees_do_not_shorten_the_simulated_tests(monkeypatch):
    import icml26.gpm.policy as policy_module

    d = simulate(50, 20, np.random.default_rng(7))
    x = d.responses.copy()
    x[0, 2:] = np.nan  # one examinee answered 2 items: a 1-item query pool
    seen = []
    real_rollout = policy_module.rollout

    def spy(policy, tb, xb, *args, **kwargs):
        seen.append((xb.shape[0], args[2]))  # batch size, number of simulated selections
        return real_rollout(policy, tb, xb, *args, **kwargs)

    monkeypatch.setattr(policy_module, "rollout", spy)
    with pytest.warns(UserWarning, match="excluding 1 training examinee"):
        GPMSelector(d.bank, epochs=1, test_length=10, hidden=8, batch_size=64).fit(x)
    assert seen == [(49, 10)]
    x[:] = np.nan  # nobody has a query pool: a clear error, not a torch stack error
    with pytest.raises(ValueError, match="at least 2 observed responses"):
        GPMSelector(d.bank, epochs=1, test_length=10, hidden=8).fit(x)
