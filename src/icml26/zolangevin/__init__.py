"""Zeroth-Order Non-Log-Concave Sampling with Variance Reduction and Applications to Inverse Problems.

Sahin, Sharif and Hashemi, ICML 2026 (arXiv:2605.30573). Langevin sampling from pi ∝ exp(-f) when only
evaluations of f are available: the batched Gaussian-smoothing gradient estimator needs a batch b ∝ d,
while the paper's variance-reduced recursive estimator (intermittent large-batch refresh, small-batch
corrections that reuse the same directions at consecutive iterates) works with a constant batch. ZO-APMC
applies the estimator to the data-fidelity term of annealed plug-and-play Monte Carlo with a score-based
prior, for inverse problems whose forward model is a black box.

Public names: the estimators (:class:`GaussianSmoothing`, :class:`Coordinatewise`, :class:`VarianceReduced`),
the samplers (:func:`langevin`, :func:`mala`, :func:`run_sampler`), the targets and the diagnostics.
ZO-APMC lives in :mod:`icml26.zolangevin.apmc` (``zo_apmc``) with the score prior in
:mod:`icml26.zolangevin.prior`; they import torch, so they are not loaded here. Real photographs as ground
truth (scikit-image's bundled public-domain / CC0 images) and the ZO-APMC / EnKG / gradient-APMC comparison at
equal forward queries are in :mod:`icml26.zolangevin.photos`.
"""

from .diagnostics import imq_ksd, mmd, mode_balance, relative_fisher, variance_bias
from .estimators import Coordinatewise, GaussianSmoothing, VarianceReduced
from .samplers import SampleResult, langevin, mala, run_sampler
from .targets import Banana, BlackBox, CallableTarget, DoubleWell, GaussianMixture, make_target

__all__ = [
    "Banana",
    "BlackBox",
    "CallableTarget",
    "Coordinatewise",
    "DoubleWell",
    "GaussianMixture",
    "GaussianSmoothing",
    "SampleResult",
    "VarianceReduced",
    "imq_ksd",
    "langevin",
    "make_target",
    "mala",
    "mmd",
    "mode_balance",
    "relative_fisher",
    "run_sampler",
    "variance_bias",
]
