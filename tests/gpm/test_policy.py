import numpy as np
import pytest
import torch

from icml26.gpm.data import random_bank, simulate
from icml26.gpm.irt import ItemBank
from icml26.gpm.policy import BOBCATSelector, GPMSelector, SelectionPolicy, _TorchBank, inner_path, rollout
from icml26.gpm.selectors import TestState
from icml26.testing import check_estimator_like

torch.set_num_threads(1)


def reference_rollout(policy, tb, x, pool, heldout, n_steps, inner_steps, temperature, objective, match, gen,
                      inner, inner_lr):  # fmt: skip
    """The literal loss: every sum over the selected items runs over all J items (slow, kept as a reference)."""
    B, J = x.shape
    avail, selected, state = pool.clone(), torch.zeros(B, J, dtype=x.dtype), torch.zeros(B, J, dtype=x.dtype)
    poolf, n_pool, theta, terms = pool.to(x.dtype), pool.sum(1).clamp(min=1).to(x.dtype), policy.theta0.expand(B), []
    for t in range(n_steps):
        info = tb.terms(theta, x)[2]
        logits = policy(state, theta, torch.log(info + 1e-8)).masked_fill(~avail, float("-inf"))
        u = torch.rand(B, J, generator=gen, dtype=x.dtype).clamp(1e-10, 1 - 1e-10)
        soft = torch.softmax((logits - torch.log(-torch.log(u))) / temperature, dim=1)
        hard = torch.nn.functional.one_hot(soft.argmax(1), J).to(x.dtype)
        choice = hard + soft - soft.detach()
        selected, state, avail = selected + choice, state + choice * (2 * x - 1), avail & (hard == 0)
        th, n_s = policy.theta0.expand(B), float(t + 1)
        for k in range(inner_steps + 1):
            _, score, info_k = tb.terms(th, x)
            gs, is_ = (selected * score).sum(1), (selected * info_k).sum(1)
            if objective == "path" or (objective == "endpoint" and k == inner_steps):
                gq, iq = (poolf * score).sum(1), (poolf * info_k).sum(1)
                if match == "gradient":
                    terms.append((gs / n_s - gq / n_pool).abs())
                else:
                    terms.append(((gs - th) / (is_ + 1) - (gq - th) / (iq + 1)).abs())
            if k < inner_steps:
                step = inner_lr * gs / n_s if inner == "gradient" else ((gs - th) / (is_ + 1)).clamp(-1, 1)
                th = (th + step).clamp(-6, 6)
        theta = th
    if objective != "heldout":
        return torch.stack(terms).mean()
    p = tb.terms(theta, x)[0]
    bce = -(x * torch.log(p) + (1 - x) * torch.log1p(-p))
    return ((bce * heldout).sum(1) / heldout.sum(1)).mean()


@pytest.mark.parametrize("model", ["2pl", "3pl"])
@pytest.mark.parametrize(
    "objective, match, inner",
    [("path", "step", "gradient"), ("path", "gradient", "gradient"), ("path", "step", "fisher"),
     ("endpoint", "step", "gradient"), ("heldout", "step", "gradient")],
)  # fmt: skip
def test_fast_rollout_equals_the_literal_loss_and_its_gradients(model, objective, match, inner):
    rng = np.random.default_rng(0)
    bank = random_bank(25, rng, model)
    x = torch.as_tensor(bank.sample(rng.normal(size=6), rng))
    pool = torch.as_tensor(rng.random((6, 25)) < 0.8)
    held = (~pool).double()
    policy = SelectionPolicy(25, 12).double().eval()
    torch.nn.init.normal_(policy.mlp[-1].weight, std=0.5)
    tb = _TorchBank(bank, torch.float64)
    out = []
    for fn in (rollout, reference_rollout):
        policy.zero_grad()
        loss = fn(policy, tb, x, pool, held, 5, 4, 1.0, objective, match, torch.Generator().manual_seed(1), inner, 0.1)
        loss.backward()
        out.append((loss.item(), [p.grad.clone() for p in policy.parameters()]))
    assert out[0][0] == pytest.approx(out[1][0], rel=1e-12)
    for fast, slow in zip(out[0][1], out[1][1], strict=True):
        torch.testing.assert_close(fast, slow, rtol=1e-9, atol=1e-12)


def test_estimator_contract():
    d = simulate(40, 15, np.random.default_rng(0))
    sel = GPMSelector(d.bank, epochs=1, test_length=5, hidden=16)
    assert not check_estimator_like(sel, d.responses, fitted=["policy_", "history_"])


def test_fisher_inner_path_reaches_map_and_gradient_path_follows_the_paper():
    from icml26.gpm.irt import estimate_ability

    rng = np.random.default_rng(1)
    bank = random_bank(30, rng)
    x = bank.sample(rng.normal(size=8), rng)
    tb = _TorchBank(bank, dtype=torch.float64)
    w, xt, th0 = torch.ones(8, 30, dtype=torch.float64), torch.as_tensor(x), torch.tensor(0.0, dtype=torch.float64)
    path = inner_path(tb, th0, w, xt, steps=20, kind="fisher")
    np.testing.assert_allclose(path[-1].numpy(), estimate_ability(bank, x, "map")[0], atol=1e-6)
    path = inner_path(tb, th0, w, xt, steps=10, kind="gradient", lr=0.1)  # theta += 0.1 * mean score, 10 times
    theta = np.zeros(8)
    for _ in range(10):
        p = bank.prob(theta)
        theta = theta + 0.1 * np.mean(bank.a[:, 0] * (x - p), axis=1)
    np.testing.assert_allclose(path[-1].numpy(), theta, atol=1e-10)


@pytest.mark.parametrize("objective", ["path", "endpoint", "heldout"])
def test_loss_reaches_every_parameter(objective):
    rng = np.random.default_rng(2)
    d = simulate(16, 20, rng)
    sel = GPMSelector(d.bank, objective=objective, epochs=0, hidden=8, test_length=4).fit(d.responses)
    x = torch.as_tensor(d.responses, dtype=torch.float32)
    pool = torch.ones(16, 20, dtype=torch.bool)
    pool[:, :4] = False
    loss = rollout(sel.policy_, _TorchBank(d.bank), x, pool, (~pool).float(), 4, 3, 1.0, objective)
    loss.backward()
    assert torch.isfinite(loss)
    for name, p in sel.policy_.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert sel.policy_.mlp[-1].weight.grad.abs().sum() > 0  # the selection gets a learning signal


def test_untrained_mfi_initialised_policy_is_mfi_and_the_default_is_uniform():
    rng = np.random.default_rng(3)
    d = simulate(10, 25, rng)
    state = TestState(np.full((10, 25), np.nan), np.ones((10, 25), bool), np.zeros(10), 0)
    sel = GPMSelector(d.bank, epochs=0, hidden=8, test_length=5, init="mfi").fit(d.responses)
    assert np.array_equal(sel.select(d.bank, state, rng), np.argmax(d.bank.information(np.zeros(10)), axis=1))
    sel = GPMSelector(d.bank, epochs=0, hidden=8, test_length=5).fit(d.responses)  # beta = 0, zero head
    assert float(sel.policy_.beta.detach()) == 0.0
    assert np.array_equal(sel.select(d.bank, state, rng), np.zeros(10))  # all logits equal: the first item


def test_policy_without_information_term(tmp_path):
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


def test_early_stopping_keeps_the_best_validation_epoch():
    d = simulate(60, 20, np.random.default_rng(4))
    sel = GPMSelector(d.bank, epochs=6, patience=1, hidden=8, test_length=4, batch_size=16).fit(d.responses)
    assert 1 <= len(sel.val_history_) == len(sel.history_) <= 6
    assert sel.best_epoch_ == int(np.argmin(sel.val_history_)) + 1
    assert sel.n_updates_ == len(sel.history_) * 4  # 54 training examinees (6 validate) in batches of 16
    if len(sel.history_) < 6:  # stopped early: the last epoch did not improve on the best one
        assert sel.val_history_[-1] >= min(sel.val_history_)


def test_training_and_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(4)
    d = simulate(300, 40, rng)
    sel = BOBCATSelector(d.bank, epochs=1, hidden=32, test_length=8).fit(d.responses)
    assert sel.name == "bobcat" and len(sel.history_) == 1
    sel.save(tmp_path / "p.pt")
    back = GPMSelector.load(tmp_path / "p.pt")
    assert (back.objective, back.inner, back.match, back.init) == ("heldout", "gradient", "step", "uniform")
    x = d.bank.sample(rng.normal(size=20), rng)
    asked = rng.random((20, 40)) < 0.2
    state = TestState(np.where(asked, x, np.nan), ~asked, np.zeros(20), 3)
    np.testing.assert_array_equal(sel.select(d.bank, state, rng), back.select(d.bank, state, rng))


def test_with_bank_rebinds_a_trained_policy_to_a_recalibrated_bank():
    rng = np.random.default_rng(5)
    d = simulate(40, 20, rng)
    sel = GPMSelector(d.bank, epochs=0, hidden=8, test_length=4, init="mfi", inner="fisher").fit(d.responses)
    new = ItemBank(d.bank.a[:, 0] * 1.1, d.bank.b + 0.2)
    state = TestState(np.full((5, 20), np.nan), np.ones((5, 20), bool), np.zeros(5), 0)
    with pytest.raises(ValueError, match="with_bank"):
        sel.select(new, state, rng)
    moved = sel.with_bank(new)
    assert moved.policy_ is sel.policy_ and sel.bank is d.bank  # weights shared, the original untouched
    assert np.array_equal(moved.select(new, state, rng), np.argmax(new.information(np.zeros(5)), axis=1))
    with pytest.raises(ValueError, match="trained for 20 items"):
        sel.with_bank(random_bank(21, rng))


def test_bad_policy_input(tmp_path):
    bank = random_bank(10, np.random.default_rng(5))
    for kwargs, message in [({"test_length": 11}, "test_length"), ({"objective": "global"}, "objective"),
                            ({"match": "hessian"}, "match"), ({"inner": "newton"}, "inner"),
                            ({"init": "bobcat"}, "init"), ({"init": "mfi", "anchor": False}, "anchor"),
                            ({"inner_steps": 0}, "inner_steps"), ({"val_frac": 1.0}, "val_frac")]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            GPMSelector(bank, **{"test_length": 3, **kwargs})
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
        if not args[-1]:  # training rollouts (not the greedy validation ones)
            seen.append((xb.shape[0], args[2]))  # batch size, number of simulated selections
        return real_rollout(policy, tb, xb, *args, **kwargs)

    monkeypatch.setattr(policy_module, "rollout", spy)
    with pytest.warns(UserWarning, match="excluding 1 training examinee"):
        GPMSelector(d.bank, epochs=1, test_length=10, hidden=8, batch_size=64).fit(x)
    assert seen == [(44, 10)]  # 49 examinees, 5 of them validate
    x[:] = np.nan  # nobody has a query pool: a clear error, not a torch stack error
    with pytest.raises(ValueError, match="at least 2 observed responses"):
        GPMSelector(d.bank, epochs=1, test_length=10, hidden=8).fit(x)
