import numpy as np
import pytest
import torch

from icml26.zolangevin.apmc import (
    BlurClip,
    BlurSubsample,
    FourierMagnitude,
    InverseProblem,
    coverage,
    make_forward,
    psnr,
    ssim,
    zo_apmc,
)
from icml26.zolangevin.data import synthetic_shapes
from icml26.zolangevin.estimators import Coordinatewise
from icml26.zolangevin.prior import ScorePrior, train_score_prior


class GaussianPrior:
    """x ~ N(m, I): p_sigma = N(m, (1 + sigma^2) I), exact score; stands in for a trained network."""

    def __init__(self, size, mean=0.3):
        self.size, self.dim, self.sigma_min, self.sigma_max, self.m = size, size * size, 0.01, 1.0, mean

    def score(self, x, sigma):
        return -(x - self.m) / (1 + sigma**2)


@pytest.mark.parametrize("name", ["blur-subsample", "blur-clip", "fourier-magnitude"])
def test_forward_models_are_batched_and_the_oracle_gradient_is_exact(name):
    fwd = make_forward(name, 8)
    x = np.random.default_rng(0).uniform(size=(3, 64))
    assert fwd(x).shape == (3, fwd.out_dim)
    problem = InverseProblem.simulate(fwd, x[0], 0.05, np.random.default_rng(1))
    # exact gradient of r(x) = ½|y - A(x)|² vs central differences through the black box
    g = problem.residual_grad(x[1:2])
    fd = Coordinatewise(mu=1e-6, central=True)(problem.residual_black_box(), x[1:2])
    assert np.allclose(g, fd, atol=1e-5)


def test_blur_subsample_is_linear_and_blur_clip_saturates():
    fwd = BlurSubsample(8)
    rng = np.random.default_rng(2)
    a, b = rng.uniform(size=(1, 64)), rng.uniform(size=(1, 64))
    assert np.allclose(fwd(2 * a + 3 * b), 2 * fwd(a) + 3 * fwd(b)) and fwd.out_dim == 16
    assert BlurClip(8, clip=0.5)(np.ones((1, 64))).max() <= 0.5
    assert FourierMagnitude(8, keep=0.25).out_dim == 64


def test_zo_apmc_agrees_with_oracle_apmc_and_moves_towards_the_exact_posterior_mean():
    # linear A, Gaussian prior N(m, I), noise sigma_y: posterior mean = m + (A^T A/s^2 + I)^-1 A^T (y - A m)/s^2.
    # Annealed PMC with a finite budget only approximates it; ZO-APMC must agree with the oracle.
    size, s = 4, 0.1
    fwd = BlurSubsample(size, factor=1)
    A = fwd(np.eye(size * size)).T  # (p, d)
    truth = np.random.default_rng(3).uniform(size=size * size)
    problem = InverseProblem.simulate(fwd, truth, s, np.random.default_rng(4))
    prior = GaussianPrior(size)
    prec = A.T @ A / s**2 + np.eye(16)
    post_mean = prior.m + np.linalg.solve(prec, A.T @ (problem.y - A @ np.full(16, prior.m)) / s**2)
    kw = dict(n_chains=300, n_levels=6, steps_per_level=40, step_scale=0.5, sigma_range=(1.0, 0.01))
    oracle = zo_apmc(problem, prior, method="oracle", rng=np.random.default_rng(5), **kw)
    vr = zo_apmc(problem, prior, method="vr-zo", rng=np.random.default_rng(6), q=5, **kw)
    assert np.abs(vr.mean - oracle.mean).mean() < 0.08
    prior_err = np.abs(prior.m - post_mean).mean()
    for res in (oracle, vr):
        assert np.abs(res.mean - post_mean).mean() < 0.5 * prior_err
    assert vr.queries == 48 * 17 + 192 * 9 and oracle.queries == 6 * 40


def test_apmc_rejects_bad_inputs():
    prior = GaussianPrior(4)
    problem = InverseProblem.simulate(BlurSubsample(8), np.zeros(64), 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="do not match the prior"):
        zo_apmc(problem, prior)
    ok = InverseProblem.simulate(BlurSubsample(4), np.zeros(16), 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown method"):
        zo_apmc(ok, prior, method="dps")
    with pytest.raises(ValueError, match="positive"):
        zo_apmc(ok, prior, step_scale=0.0)
    not_batched = InverseProblem(lambda x: np.array([float(x[0, 0])]), np.zeros(1), 0.1, 16)
    with pytest.raises(ValueError, match="accept a batch"):
        zo_apmc(not_batched, prior, n_levels=2, steps_per_level=2)


def test_enkg_runs_and_uses_one_query_per_chain_and_step():
    prior = GaussianPrior(4)
    problem = InverseProblem.simulate(BlurSubsample(4), np.full(16, 0.5), 0.1, np.random.default_rng(0))
    res = zo_apmc(
        problem, prior, method="enkg", n_chains=8, n_levels=3, steps_per_level=4, rng=np.random.default_rng(1)
    )
    assert res.samples.shape == (8, 16) and res.queries == 12


def test_metrics():
    img = synthetic_shapes(1, 8, np.random.default_rng(0))[0]
    assert psnr(img.ravel(), img.ravel()) > 100 and np.isclose(ssim(img, img, 8), 1.0)
    assert ssim(img + 0.3 * np.random.default_rng(1).standard_normal(img.shape), img, 8) < 0.9
    samples = img.ravel() + 0.1 * np.random.default_rng(2).standard_normal((2000, 64))
    assert abs(coverage(samples, img) - 0.9) < 0.1


def test_score_prior_learns_and_round_trips(tmp_path):
    images = synthetic_shapes(256, 8, np.random.default_rng(0))
    prior = train_score_prior(images, n_steps=60, width=32, batch_size=32)
    x = np.random.default_rng(1).uniform(size=(3, 64))
    # at a large noise level the score points from x towards the data (about -(x - mean)/sigma^2)
    s = prior.score(x, 1.0)
    assert s.shape == (3, 64) and np.isfinite(s).all()
    path = tmp_path / "prior.pt"
    prior.save(path)
    again = ScorePrior.load(path)
    assert np.allclose(again.score(x, 0.3), prior.score(x, 0.3))
    with pytest.raises(ValueError, match="trained on 8x8"):
        prior.score(np.zeros((2, 100)), 0.1)
    with pytest.raises(ValueError, match="device must be"):
        ScorePrior.load(path, device="tpu")


@pytest.mark.gpu
def test_score_prior_on_cuda_matches_the_cpu(tmp_path):
    """The same seed draws the same minibatches and noise on every device; the trained priors agree."""
    images = synthetic_shapes(64, 8, np.random.default_rng(0))
    cpu = train_score_prior(images, n_steps=20, width=16, batch_size=16)
    gpu = train_score_prior(images, n_steps=20, width=16, batch_size=16, device="cuda")
    x = np.random.default_rng(1).uniform(size=(3, 64))
    assert np.allclose(gpu.score(x, 0.5), cpu.score(x, 0.5), atol=1e-3)
    gpu.save(tmp_path / "p.pt")
    assert np.allclose(ScorePrior.load(tmp_path / "p.pt").score(x, 0.5), gpu.score(x, 0.5), atol=1e-5)
    with pytest.raises(OSError):
        ScorePrior.load(tmp_path / "missing.pt")
    torch.save({"nothing": 1}, tmp_path / "bad.pt")
    with pytest.raises(OSError, match="not a zolangevin prior"):
        ScorePrior.load(tmp_path / "bad.pt")


def test_kalman_direction_matches_the_dense_formula():
    from icml26.zolangevin.apmc import _kalman_direction

    rng = np.random.default_rng(0)
    fwd = FourierMagnitude(8)
    problem = InverseProblem.simulate(fwd, rng.uniform(size=64), 0.05, rng)
    x, weight = rng.uniform(size=(10, 64)), 30.0
    got = _kalman_direction(problem.residual_black_box(), x, problem.y, weight)
    a = fwd(x)
    xc, ac = x - x.mean(0), a - a.mean(0)
    c_xa, c_aa = xc.T @ ac / 9, ac.T @ ac / 9
    dense = (c_xa @ np.linalg.solve(c_aa + np.eye(len(c_aa)) / weight, (a - problem.y).T)).T
    assert np.allclose(got, dense, atol=1e-10)


def test_fourier_black_box_and_its_torch_twin_agree():
    fwd = FourierMagnitude(8)
    x = np.random.default_rng(1).uniform(size=(4, 64))
    assert np.allclose(fwd(x), fwd.torch(torch.as_tensor(x)).numpy(), atol=1e-12)


def test_planted_apmc_uses_the_exact_gradient_with_smoothing_noise():
    """method="planted" (the inverse-problem claim's positive control) counts gradient evaluations like the
    oracle and, with many directions, agrees with the oracle's posterior mean; with few it is further away."""
    size, s = 4, 0.1
    fwd = BlurSubsample(size, factor=1)
    problem = InverseProblem.simulate(fwd, np.random.default_rng(3).uniform(size=16), s, np.random.default_rng(4))
    prior = GaussianPrior(size)
    kw = dict(n_chains=300, n_levels=6, steps_per_level=40, step_scale=0.5, sigma_range=(1.0, 0.01))
    oracle = zo_apmc(problem, prior, method="oracle", rng=np.random.default_rng(5), **kw)
    many = zo_apmc(problem, prior, method="planted", b=400, rng=np.random.default_rng(6), **kw)
    few = zo_apmc(problem, prior, method="planted", b=1, rng=np.random.default_rng(6), **kw)
    assert many.queries == few.queries == oracle.queries == 6 * 40
    assert np.abs(many.mean - oracle.mean).mean() < 0.08
    assert np.abs(many.mean - oracle.mean).mean() < np.abs(few.mean - oracle.mean).mean()
