"""Baselines on the same trials: PCA (scikit-learn), GPFA (elephant), DMD (PyDMD), CEBRA (``cebra``, optional:
Apache-2.0 with an EPFL patent notice) and a frame VAE (torch).

Each baseline has ``fit(X)`` and ``transform(X) -> (n_trials, n_time, k)`` on arrays of shape
(n_trials, n_time, n_features); PCA and the VAE also have ``inverse_transform``. GPFA works on spike
counts (it bins and square-roots them itself), the others on smoothed counts, as in the paper's comparison.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import logging
import warnings

import numpy as np
import torch
from torch import nn

__all__ = ["CEBRABaseline", "DMDBaseline", "GPFABaseline", "PCABaseline", "VAEBaseline"]

logger = logging.getLogger(__name__)


def _require(package: str) -> None:
    """GPFA and DMD come from the ``baselines`` extra, which the DualFlow estimator itself does not need."""
    if importlib.util.find_spec(package) is None:
        raise ImportError(f"this baseline needs {package!r}: pip install 'icml26[baselines]'")


def _frames(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (n_trials, n_time, n_features); got {X.shape}")
    return X.reshape(-1, X.shape[-1])


class PCABaseline:
    """Principal components of the frames (``sklearn.decomposition.PCA``)."""

    def __init__(self, n_components: int = 3) -> None:
        self.n_components = n_components

    def fit(self, X: np.ndarray) -> PCABaseline:
        from sklearn.decomposition import PCA

        self.pca_ = PCA(self.n_components).fit(_frames(X))
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return self.pca_.transform(_frames(X)).reshape(*np.shape(X)[:2], -1)

    def inverse_transform(self, Z: np.ndarray) -> np.ndarray:
        return self.pca_.inverse_transform(Z.reshape(-1, Z.shape[-1])).reshape(*Z.shape[:2], -1)


class GPFABaseline:
    """Gaussian-process factor analysis (Yu et al. 2009) via ``elephant.gpfa.GPFA`` on spike counts.

    Counts per bin are turned into neo ``SpikeTrain`` objects (spikes spread uniformly inside their bin), so
    elephant re-bins them exactly; elephant square-roots the counts and fits by EM.
    """

    def __init__(self, n_components: int = 3, bin_size: float = 0.02, em_max_iters: int = 100, seed: int = 0):
        self.n_components = n_components
        self.bin_size = bin_size
        self.em_max_iters = em_max_iters
        self.seed = seed

    def _spiketrains(self, counts: np.ndarray) -> list:
        import neo
        import quantities as pq

        rng = np.random.default_rng(self.seed)
        _, T, N = counts.shape
        t_stop = T * self.bin_size
        trials = []
        for trial in np.asarray(counts, dtype=int):
            sts = []
            for n in range(N):
                bins = np.repeat(np.arange(T), trial[:, n])
                times = (bins + rng.uniform(0.05, 0.95, size=bins.size)) * self.bin_size
                sts.append(neo.SpikeTrain(np.sort(times) * pq.s, t_stop=t_stop * pq.s))
            trials.append(sts)
        return trials

    def fit(self, counts: np.ndarray) -> GPFABaseline:
        _require("elephant")
        import quantities as pq
        from elephant.gpfa import GPFA

        if np.asarray(counts).ndim != 3:
            raise ValueError("counts must have shape (n_trials, n_time, n_neurons)")
        self.gpfa_ = GPFA(
            bin_size=self.bin_size * 1000 * pq.ms,
            x_dim=self.n_components,
            em_max_iters=self.em_max_iters,
            verbose=False,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # elephant warns about silent neurons and EM convergence
            self.gpfa_.fit(self._spiketrains(counts))
        return self

    def transform(self, counts: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            latents = self.gpfa_.transform(self._spiketrains(counts))
        return np.stack([np.asarray(z).T for z in latents])  # (n_trials, T, k)


class DMDBaseline:
    """Dynamic mode decomposition (``pydmd.DMD``) fitted on consecutive frame pairs of all trials.

    The latent is the projection of the centred frames onto an orthonormal basis of the real span of the
    ``n_components`` DMD modes (real and imaginary parts), so it is real and ``n_components``-dimensional.
    """

    def __init__(self, n_components: int = 3) -> None:
        self.n_components = n_components

    def fit(self, X: np.ndarray) -> DMDBaseline:
        _require("pydmd")
        from pydmd import DMD

        X = np.asarray(X, dtype=float)
        self.mean_ = _frames(X).mean(0)
        Xc = X - self.mean_
        before = Xc[:, :-1].reshape(-1, X.shape[-1]).T  # (D, pairs)
        after = Xc[:, 1:].reshape(-1, X.shape[-1]).T
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dmd = DMD(svd_rank=self.n_components).fit(before, after)
        modes = np.asarray(dmd.modes)  # (D, r) complex
        # the real span of r complex modes has dimension r (conjugate pairs share it): its leading directions
        u, _, _ = np.linalg.svd(np.concatenate([modes.real, modes.imag], axis=1), full_matrices=False)
        self.basis_ = u[:, : self.n_components]
        self.eigs_ = np.asarray(dmd.eigs)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (np.asarray(X, dtype=float) - self.mean_) @ self.basis_


@contextlib.contextmanager
def _seeded_cebra_samplers(seed: int):
    """Make a CEBRA fit reproducible: its samplers (``cebra.distributions``) seed a private torch generator
    from fresh entropy (``torch.Generator().seed()``) and some draw from numpy's global generator, so seeding
    torch alone does not fix them (cebra 0.6.1 has no seed argument). While the context is open, every sampler
    created gets a generator seeded from ``seed`` (and a counter), and numpy's global state is seeded and
    restored afterwards."""
    from cebra.distributions.base import HasGenerator

    original = HasGenerator.__init__
    counter = itertools.count()

    def seeded_init(obj, *args, **kwargs):
        original(obj, *args, **kwargs)
        obj._seed = int(np.random.SeedSequence([seed, next(counter)]).generate_state(1)[0])
        obj._generator = torch.Generator(device=obj.device)
        obj._generator.manual_seed(obj._seed)

    state = np.random.get_state()  # noqa: NPY002 (cebra draws from the legacy global generator)
    HasGenerator.__init__ = seeded_init
    try:
        np.random.seed(seed % 2**32)  # noqa: NPY002
        yield
    finally:
        HasGenerator.__init__ = original
        np.random.set_state(state)  # noqa: NPY002


class CEBRABaseline:
    """CEBRA-Time (Schneider et al. 2023), the paper's comparator: self-supervised time-contrastive embedding.

    ``cebra.CEBRA`` with ``conditional="time_delta"`` (positive pairs ``time_offset`` frames apart), cosine
    distance, temperature 1, learning rate 3e-4, batch 512 (the settings CEBRA's documentation suggests),
    fitted on the standardised frames of all training trials concatenated. ``model_architecture``
    ``"offset1-model"`` embeds single frames (fast on a CPU); the paper-scale setting uses ``"offset10-model"``
    (a convolution over 10 frames). ``cebra`` (Apache-2.0 since 0.4, with an EPFL patent notice) is an optional extra.
    """

    def __init__(
        self,
        n_components: int = 3,
        max_iterations: int = 1000,
        model_architecture: str = "offset1-model",
        time_offset: int = 1,
        batch_size: int = 512,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        self.n_components, self.max_iterations = n_components, max_iterations
        self.model_architecture, self.time_offset = model_architecture, time_offset
        self.batch_size, self.seed, self.device = batch_size, seed, device

    def fit(self, X: np.ndarray) -> CEBRABaseline:
        _require("cebra")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # cebra's import calls torch.jit.script
            import cebra

        F = _frames(X)
        self.mean_, self.scale_ = F.mean(0), np.where(F.std(0) > 0, F.std(0), 1.0)
        self.model_ = cebra.CEBRA(
            model_architecture=self.model_architecture,
            batch_size=self.batch_size,
            learning_rate=3e-4,
            temperature=1.0,
            output_dimension=self.n_components,
            max_iterations=self.max_iterations,
            distance="cosine",
            conditional="time_delta",
            time_offsets=self.time_offset,
            device=self.device,
            verbose=False,
        )
        with torch.random.fork_rng(), _seeded_cebra_samplers(self.seed), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(self.seed)  # the network's initialisation draws from torch's global generator
            self.model_.fit(((F - self.mean_) / self.scale_).astype(np.float32))
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # trial by trial: the offset models pad each trial at its own edges
            z = [self.model_.transform(((t - self.mean_) / self.scale_).astype(np.float32)) for t in X]
        return np.stack(z).astype(float)


class _VAENet(nn.Module):
    def __init__(self, n_features: int, n_latent: int, hidden: int) -> None:
        super().__init__()
        self.enc = nn.Sequential(
            nn.Linear(n_features, hidden),
            nn.SiLU(),
            nn.Linear(hidden, hidden),
            nn.SiLU(),
            nn.Linear(hidden, 2 * n_latent),
        )
        self.dec = nn.Sequential(
            nn.Linear(n_latent, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, n_features)
        )
        self.log_sigma = nn.Parameter(torch.zeros(n_features))  # learned Gaussian observation noise


class VAEBaseline:
    """A per-frame Gaussian VAE (MLP encoder/decoder, learned observation noise) on standardised frames.

    Loss: -ELBO = E_q[-log N(x; dec(z), sigma^2)] + KL(q(z|x) || N(0, I)). Latent = posterior mean.
    """

    def __init__(
        self,
        n_components: int = 3,
        hidden: int = 128,
        n_steps: int = 2000,
        batch_size: int = 256,
        lr: float = 1e-3,
        seed: int = 0,
    ) -> None:
        self.n_components, self.hidden, self.n_steps = n_components, hidden, n_steps
        self.batch_size, self.lr, self.seed = batch_size, lr, seed

    def fit(self, X: np.ndarray) -> VAEBaseline:
        F = _frames(X)
        self.mean_, self.scale_ = F.mean(0), np.where(F.std(0) > 0, F.std(0), 1.0)
        Z = torch.as_tensor((F - self.mean_) / self.scale_, dtype=torch.float32)
        rng = np.random.default_rng(self.seed)
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            net = _VAENet(F.shape[1], self.n_components, self.hidden)
            opt = torch.optim.Adam(net.parameters(), lr=self.lr)
            for _ in range(self.n_steps):
                x = Z[torch.as_tensor(rng.integers(0, len(Z), size=self.batch_size))]
                mu, logvar = net.enc(x).chunk(2, dim=-1)
                z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
                nll = (0.5 * ((x - net.dec(z)) / net.log_sigma.exp()) ** 2 + net.log_sigma).sum(-1)
                kl = 0.5 * (mu**2 + logvar.exp() - 1 - logvar).sum(-1)
                loss = (nll + kl).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.net_ = net.eval()
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        x = torch.as_tensor((_frames(X) - self.mean_) / self.scale_, dtype=torch.float32)
        with torch.no_grad():
            mu = self.net_.enc(x).chunk(2, dim=-1)[0]
        return mu.double().numpy().reshape(*np.shape(X)[:2], -1)

    def inverse_transform(self, Z: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = self.net_.dec(torch.as_tensor(Z.reshape(-1, Z.shape[-1]), dtype=torch.float32)).double().numpy()
        return (x * self.scale_ + self.mean_).reshape(*Z.shape[:2], -1)
