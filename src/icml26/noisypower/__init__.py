"""noisypower — Improved Analysis of the Accelerated Noisy Power Method with Applications to Decentralized PCA.

Aguié, Even & Massoulié, ICML 2026 (arXiv:2602.03682). Top-``k`` PCA when only inexact products ``A X + G``
are available. The accelerated noisy power method (ANPM: heavy-ball momentum ``beta = lambda_{k+1}^2 / 4``
with the QR factor's inverse carrying the normalisation) needs ``O(sqrt(lambda_k / (lambda_k -
lambda_{k+1})) log(1/eps))`` iterations, against ``O(lambda_k / (lambda_k - lambda_{k+1}) log(1/eps))`` for
the noisy power method (NPM), and keeps that rate for noise of order ``eps (lambda_k - lambda_{k+1})`` — the
paper's milder condition, which it shows cannot be relaxed. Applied to decentralized PCA (nodes holding
local covariances, gossip with graph neighbours), tracking plus momentum gives an accelerated method with
DeEPCA's per-iteration communication.

Library::

    from icml26.noisypower import accelerated_noisy_power_method, decentralized_pca
    res = accelerated_noisy_power_method(A, k=10, tol=1e-8)         # dense, sparse, LinearOperator, callable
    res.basis, res.eigenvalues, res.n_matvecs

Command line: ``icml26 noisypower pca FILE -k K`` and ``icml26 noisypower decentralized --nodes 16``.
"""

from icml26.noisypower.decentralized import DecentralizedResult, InsufficientMixingError, decentralized_pca
from icml26.noisypower.method import PowerResult, accelerated_noisy_power_method, noisy_power_method, sin_theta
from icml26.noisypower.network import make_graph, metropolis_weights
from icml26.noisypower.noise import AdversarialNoise, BoundedNoise, GaussianNoise, NoNoise, noise_bound

__all__ = [
    "AdversarialNoise",
    "BoundedNoise",
    "DecentralizedResult",
    "GaussianNoise",
    "InsufficientMixingError",
    "NoNoise",
    "PowerResult",
    "accelerated_noisy_power_method",
    "decentralized_pca",
    "make_graph",
    "metropolis_weights",
    "noise_bound",
    "noisy_power_method",
    "sin_theta",
]
