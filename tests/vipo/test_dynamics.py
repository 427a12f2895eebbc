"""The VIPO maths: the score-function term, its stop-gradients, the ensemble, and the linear model class."""

import dataclasses

import numpy as np
import pytest
import torch

from icml26.vipo.claims import linear_parts, lqr_gain
from icml26.vipo.data import MisspecifiedSystem
from icml26.vipo.dynamics import DynamicsConfig, GaussianEnsemble, model_error, nll_loss, train_dynamics, vipo_loss

torch.set_num_threads(1)


def test_vipo_loss_gradient_is_the_likelihood_ratio_form():
    gen = torch.Generator().manual_seed(0)
    mu = torch.randn(3, 5, 2, generator=gen, requires_grad=True)
    logvar = (0.3 * torch.randn(3, 5, 2, generator=gen)).requires_grad_(True)
    s_hat = (mu + (0.5 * logvar).exp() * torch.randn(3, 5, 2, generator=gen)).detach()
    A = torch.randn(3, 5, generator=gen)
    vipo_loss(mu, logvar, s_hat, A).backward()
    var = logvar.detach().exp()
    expected_mu = -(A[..., None] * (s_hat - mu.detach()) / var) / 15  # d log N / d mu = (x - mu) / var
    expected_lv = -(A[..., None] * 0.5 * ((s_hat - mu.detach()) ** 2 / var - 1)) / 15
    torch.testing.assert_close(mu.grad, expected_mu)
    torch.testing.assert_close(logvar.grad, expected_lv)


def test_vipo_loss_refuses_gradient_through_the_sample_or_the_advantage():
    mu, lv = torch.zeros(1, 2, 1, requires_grad=True), torch.zeros(1, 2, 1)
    with pytest.raises(AssertionError):
        vipo_loss(mu, lv, mu * 1.0, torch.ones(1, 2))
    with pytest.raises(AssertionError):
        vipo_loss(mu, lv, torch.zeros(1, 2, 1), torch.ones(1, 2, requires_grad=True))


def test_score_function_estimate_matches_the_true_gradient():
    """-grad L_value with A = f(s_hat) estimates grad_mu E[f(x)], x ~ N(mu, sigma^2): for f = x^2 it is 2 mu."""
    gen = torch.Generator().manual_seed(1)
    mu = torch.full((1, 200_000, 1), 0.7, requires_grad=True)
    logvar = torch.full((1, 200_000, 1), np.log(0.25))
    s_hat = (mu + 0.5 * torch.randn(mu.shape, generator=gen)).detach()
    f = (s_hat**2).squeeze(-1)
    vipo_loss(mu, logvar, s_hat, f).backward()
    estimate = -mu.grad.sum()  # the mean over the batch of A (x - mu) / sigma^2
    assert abs(float(estimate) - 1.4) < 0.05


def test_logvar_stays_within_learned_bounds():
    model = GaussianEnsemble(3, 1, members=4, elites=2, hidden=(8,))
    with torch.no_grad():
        model.layers[-1].bias.fill_(50.0)
    _, logvar = model(torch.randn(6, 3), torch.randn(6, 1))
    assert logvar.shape == (4, 6, 4)
    assert (logvar <= model.max_logvar + 1e-3).all() and (logvar >= model.min_logvar - 1e-3).all()
    with pytest.raises(ValueError, match="elites"):
        GaussianEnsemble(3, 1, members=2, elites=3)


def _linear_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    A, B = np.array([[0.9, 0.1], [0.0, 0.8]]), np.array([[0.0], [0.5]])
    s, a = rng.normal(size=(n, 2)), rng.normal(size=(n, 1))
    s2 = s @ A.T + a @ B.T + 0.05 * rng.normal(size=(n, 2))
    data = {"observations": s, "actions": a, "rewards": -(s**2).sum(1), "next_observations": s2,
            "terminals": np.zeros(n)}  # fmt: skip
    return {k: v.astype(np.float32) for k, v in data.items()}, A, B


def _reward(s, a, s2):
    return MisspecifiedSystem.reward(s, a)


def test_nll_linear_ensemble_recovers_true_linear_dynamics():
    """Ground truth for the model class: on well-specified linear data the NLL fit finds A and B."""
    data, A, B = _linear_data()
    cfg = DynamicsConfig(members=3, elites=2, hidden=(), epochs=40, lr=1e-2, phi=0.0)
    model, log = train_dynamics(data, cfg, seed=0, reward_fn=_reward)
    A_hat, B_hat, b = linear_parts(model)
    assert np.abs(A_hat - A).max() < 0.03 and np.abs(B_hat - B).max() < 0.03 and np.abs(b).max() < 0.03
    assert log.holdout_mse[-1] < log.holdout_mse[0]
    assert model_error(model, data["observations"], data["actions"], data["next_observations"]) < 0.01


def test_phi_zero_is_the_plain_ensemble_and_vipo_changes_the_model():
    data, _, _ = _linear_data(600)
    cfg = DynamicsConfig(members=2, elites=1, hidden=(), epochs=4, lr=1e-2, phi=0.0, value_hidden=(8,), gamma=0.8)
    m0, log0 = train_dynamics(data, cfg, seed=3, reward_fn=_reward)
    m1, _ = train_dynamics(data, cfg, seed=3, reward_fn=_reward)
    mv, logv = train_dynamics(data, dataclasses.replace(cfg, phi=10.0, normalise_advantage=True), 3, _reward)
    for p0, p1 in zip(m0.parameters(), m1.parameters(), strict=True):
        assert torch.equal(p0, p1)  # deterministic per seed: a control arm equals its baseline
    assert not log0.value_gap and len(logv.value_gap) == 4
    assert any(not torch.allclose(p0, pv) for p0, pv in zip(m0.parameters(), mv.parameters(), strict=True))


def test_nll_loss_is_smallest_at_the_truth():
    model = GaussianEnsemble(1, 1, members=1, elites=1, hidden=(), learn_reward=False)
    y = torch.randn(1, 500, 1, generator=torch.Generator().manual_seed(0))
    true = nll_loss(model, torch.zeros_like(y), torch.zeros_like(y), y)
    for mu, lv in ((0.3, 0.0), (0.0, 0.5), (0.0, -0.5)):
        assert nll_loss(model, torch.full_like(y, mu), torch.full_like(y, lv), y) > true


def test_lqr_gain_solves_the_scalar_riccati_equation():
    A, B, g, R = np.array([[1.1]]), np.array([[1.0]]), 0.9, 0.1
    K = lqr_gain(A, B, g, R)
    # the scalar discounted Riccati fixed point P = 1 + g A^2 P - g^2 A^2 P^2 / (R + g P), K = -g A P / (R + g P)
    P = 1.0
    for _ in range(1000):
        P = 1 + g * 1.21 * P - g**2 * 1.21 * P**2 / (R + g * P)
    assert abs(K[0, 0] + g * 1.1 * P / (R + g * P)) < 1e-8
    assert abs(1.1 + K[0, 0]) < 1  # the closed loop is stable


def test_score_function_gradient_matches_closed_form_and_reparameterised_autograd():
    """1-D Gaussian x ~ N(mu, sigma^2), V(x) = c x + x^2: d/dmu E[V] = c + 2 mu, d/dlogvar E[V] = sigma^2.

    The likelihood-ratio gradient that ``vipo_loss`` produces (with A = V(x), a constant baseline subtracted)
    must match the closed form and autograd through a reparameterised sample ``mu + sigma * eps``.
    """
    n, mu0, lv0, c = 400_000, 0.7, float(np.log(0.25)), 1.5
    eps = torch.randn(1, n, 1, generator=torch.Generator().manual_seed(2))
    V = lambda x: c * x + x**2  # noqa: E731
    # reparameterised: E[V(mu + sigma eps)] differentiated by autograd
    mu_r, lv_r = torch.tensor(mu0, requires_grad=True), torch.tensor(lv0, requires_grad=True)
    V(mu_r + (0.5 * lv_r).exp() * eps).mean().backward()
    # score function: -grad of vipo_loss with A = V(x) - mean V(x)
    mu = torch.full((1, n, 1), mu0, requires_grad=True)
    logvar = torch.full((1, n, 1), lv0, requires_grad=True)
    x = (mu + (0.5 * logvar).exp() * eps).detach()
    A = V(x).squeeze(-1)
    vipo_loss(mu, logvar, x, A - A.mean()).backward()
    sf_mu, sf_lv = -float(mu.grad.sum()), -float(logvar.grad.sum())
    exact_mu, exact_lv = c + 2 * mu0, 0.25  # d/dlogvar (sigma^2) = sigma^2
    assert abs(float(mu_r.grad) - exact_mu) < 0.01 and abs(float(lv_r.grad) - exact_lv) < 0.01
    assert abs(sf_mu - exact_mu) < 0.03 and abs(sf_lv - exact_lv) < 0.03


class _FixedValues:
    """Stand-in for ``ValuePair``: ``V_D = v_data`` everywhere, ``V_theta(s) = w * s_0`` (linear), no learning."""

    def __init__(self, v_data: float, w: float):
        self.v_data, self.w = v_data, w

    def update(self, *batch) -> float:
        return 0.0

    def V_D(self, s):
        return torch.full(s.shape[:-1], self.v_data)

    def V_theta(self, s, target: bool = False):
        return self.w * s[..., 0] if s.dim() == 3 else (self.w * s[..., 0]).expand(1, -1)


@pytest.mark.parametrize("v_data", [5.0, -5.0])
def test_value_step_gradient_has_the_sign_that_closes_the_gap(v_data):
    """The whole ``_value_step`` (gap, advantage, stop-gradients, L_value) on a 1-D linear model with
    ``V(s') = w s'``, reward 0: ``-phi grad_b L_value`` must equal ``(V_D - V_theta(s)) * gamma * w`` (the gradient
    descent direction of ``(V_D - V_theta)^2 / 2``): with V_D above the model's value the model mean moves up."""
    from icml26.vipo.dynamics import _value_step

    model = GaussianEnsemble(1, 1, members=1, elites=1, hidden=(), learn_reward=False)
    with torch.no_grad():
        model.layers[0].weight.zero_()
        model.layers[0].bias.fill_(0.0)  # mu = 0 (a mean output) and raw logvar 0
    n, gamma, w = 200_000, 0.9, 2.0
    T = {"obs": torch.zeros(n, 1), "act": torch.zeros(n, 1), "rew": torch.zeros(n), "nxt": torch.zeros(n, 1),
         "done": torch.zeros(n)}  # fmt: skip
    cfg = DynamicsConfig(members=1, elites=1, hidden=(), phi=1.0, gamma=gamma)
    zero_reward = lambda s, a, s2: torch.zeros(s.shape[:-1])  # noqa: E731
    gap, l_value = _value_step(model, _FixedValues(v_data, w), T, torch.arange(n), torch.Generator().manual_seed(4),
                               zero_reward, None, cfg, epoch=0)  # fmt: skip
    assert gap == pytest.approx(abs(v_data))
    l_value.backward()
    step = -float(model.layers[0].bias.grad[0, 0, 0])  # descent direction on the mean of s' - s
    expected = (v_data - 0.0) * gamma * w  # V_theta(s = 0) = 0
    assert step == pytest.approx(expected, rel=0.05)
