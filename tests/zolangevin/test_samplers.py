import numpy as np
import pytest

from icml26.zolangevin import GaussianMixture, GaussianSmoothing, langevin, mala, run_sampler


def test_ula_on_a_gaussian_has_the_closed_form_stationary_variance():
    # x' = (1-h) x + sqrt(2h) xi  =>  Var = 1 / (1 - h/2)
    h, n = 0.2, 20000
    std = GaussianMixture(np.zeros((1, 2)), np.ones(1), np.ones(1))
    res = langevin(std, np.zeros((n, 2)), step=h, grad=std.grad, n_steps=60, rng=np.random.default_rng(0))
    assert np.allclose(res.final.var(0), 1 / (1 - h / 2), rtol=0.05)


def test_mala_removes_the_discretisation_bias():
    h, n = 0.2, 5000
    std = GaussianMixture(np.zeros((1, 2)), np.ones(1), np.ones(1))
    res = mala(std, np.zeros((n, 2)), step=h, n_steps=80, rng=np.random.default_rng(1))
    assert np.allclose(res.final.var(0), 1.0, rtol=0.06) and 0.5 < res.acceptance < 1.0
    assert res.queries == res.grad_evals == 81


def test_zo_with_small_batch_is_hotter_and_vr_fixes_it():
    # the paper's direction: Var_ZO(b=4) - 1 ~ h d / (2b) ; VR with small q much closer to 1
    d, n, h = 40, 300, 0.025
    target = GaussianMixture(np.zeros((1, d)), np.ones(1), np.ones(1))
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((n, d))
    zo = run_sampler("zo", target, x0, step=h, n_steps=300, b=4, rng=rng)
    vr = run_sampler("vr-zo", target, x0, step=h, n_steps=300, b=4, q=3, rng=rng)
    bias_zo, bias_vr = zo.final.var(0).mean() - 1, vr.final.var(0).mean() - 1
    assert bias_zo > 0.06 and bias_vr < 0.5 * bias_zo


def test_query_budget_is_respected_and_reported():
    target = GaussianMixture.two_modes(5)
    res = run_sampler(
        "vr-zo", target, np.zeros((3, 5)), step=0.1, query_budget=500, b=2, q=5, rng=np.random.default_rng(0)
    )
    assert 500 <= res.queries <= 500 + 6  # stops once the budget is spent (at most one step over)
    assert len(res.trace) == 20 and res.trace[-1][0] == res.queries


def test_thinning_and_burn_in_keep_the_right_states():
    target = GaussianMixture.two_modes(2)
    res = run_sampler(
        "ula", target, np.zeros((4, 2)), step=0.1, n_steps=20, burn_in=10, thin=5, rng=np.random.default_rng(0)
    )
    assert res.samples.shape == (3, 4, 2)  # steps 10, 15, 20


@pytest.mark.parametrize("step", [0.0, -1.0, float("nan"), lambda t: 0.1 if t < 3 else -0.1])
def test_non_positive_step_sizes_are_rejected(step):
    target = GaussianMixture.two_modes(2)
    with pytest.raises(ValueError, match="step size"):
        langevin(target, np.zeros((2, 2)), step=step, estimator=GaussianSmoothing(b=2), n_steps=10)


def test_bad_sampler_arguments():
    target = GaussianMixture.two_modes(2)
    with pytest.raises(ValueError, match="unknown sampler"):
        run_sampler("hmc", target, np.zeros((2, 2)), step=0.1, n_steps=2)
    with pytest.raises(ValueError, match="n_steps or query_budget"):
        langevin(target, np.zeros((2, 2)), step=0.1, grad=target.grad)
    with pytest.raises(ValueError, match="exactly one"):
        langevin(target, np.zeros((2, 2)), step=0.1, n_steps=2)
    with pytest.raises(ValueError, match="shape"):
        langevin(target, np.zeros(2), step=0.1, grad=target.grad, n_steps=2)


@pytest.mark.parametrize("name", ["mala", "ula", "vr-zo"])
def test_non_finite_start_is_rejected(name):
    # MALA used to carry a NaN chain silently (every proposal rejected) and report a normal acceptance rate
    target = GaussianMixture.two_modes(2)
    x0 = np.zeros((3, 2))
    x0[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"x0 contains NaN or inf.*chain 1"):
        run_sampler(name, target, x0, step=0.1, n_steps=3, rng=np.random.default_rng(0))


def test_a_log_density_target_samples_exactly_like_its_potential():
    from icml26.zolangevin import CallableTarget

    def potential(x):
        return 0.5 * (x**2).sum(-1)

    x0 = np.zeros((3, 2))
    as_f = CallableTarget(potential, 2)
    as_log_pi = CallableTarget(lambda x: -potential(x), 2, log_density=True)
    np.testing.assert_allclose(as_log_pi.potential(np.ones((4, 2))), potential(np.ones((4, 2))))
    runs = [
        run_sampler("vr-zo", t, x0, step=0.1, n_steps=30, rng=np.random.default_rng(5), thin=1)
        for t in (as_f, as_log_pi)
    ]
    np.testing.assert_array_equal(runs[0].samples, runs[1].samples)
    # a log density passed as a potential samples exp(+log pi): the chains run away
    wrong = CallableTarget(lambda x: -potential(x), 2)
    far = run_sampler(
        "ula",
        CallableTarget(wrong.potential, 2, grad=lambda x: -x),
        x0,
        step=0.1,
        n_steps=100,
        rng=np.random.default_rng(5),
    )
    assert np.abs(far.final).max() > 1e3
    with_grad = CallableTarget(lambda x: -potential(x), 2, grad=lambda x: -x, log_density=True)
    np.testing.assert_allclose(with_grad.grad(np.ones((1, 2))), np.ones((1, 2)))


def test_draws_are_chain_draw_dim_and_arviz_is_optional(monkeypatch):
    import builtins

    res = run_sampler(
        "ula",
        GaussianMixture.two_modes(2),
        np.zeros((4, 2)),
        step=0.1,
        n_steps=20,
        rng=np.random.default_rng(0),
        burn_in=10,
        thin=2,
    )
    draws = res.draws()
    assert draws.shape == (4, 6, 2)  # steps 10, 12, ..., 20
    np.testing.assert_array_equal(draws[1, 3], res.samples[3, 1])
    real_import = builtins.__import__
    monkeypatch.setattr(
        builtins,
        "__import__",
        lambda name, *a, **k: (
            (_ for _ in ()).throw(ImportError(name)) if name == "arviz" else real_import(name, *a, **k)
        ),
    )
    with pytest.raises(ImportError, match="pip install arviz"):
        res.to_inference_data()
