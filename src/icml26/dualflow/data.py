"""Data for dualflow: seeded generators with known latent state, and validated loaders for user arrays.

Generators (reconstruction of the paper's toy settings, see ``papers/dualflow.md`` §7):

- :func:`make_spiking_dataset` — a low-dimensional chaotic or oscillatory system (Lorenz-63, Van der Pol,
  Rössler) embedded into ``n_neurons`` Poisson neurons, binned, then Gaussian-smoothed (the paper applies the
  method to smoothed counts only). Three embeddings of the latent z into rates: ``"tuning"`` (Gaussian tuning
  curves centred on random points of the attractor: linear methods fail, PCA(3) of the noise-free rates
  decodes the Lorenz state with R^2 ~0.3), ``"network"`` (a random 2-layer network with sine hidden units,
  also nonlinear) and ``"softplus"`` (``softplus(W z + c)``: almost linear, the v1 setting).
  ``regime="noisy"`` lowers the mean rate so that Poisson noise dominates the signal.
- :func:`make_rotating_video` — a small video of a rotating two-blob object; the ground truth is the angle.

Loaders: :func:`load_array` (``.npy`` / ``.npz``), :func:`load_nwb` (when ``pynwb`` is installed) and
:func:`load_basic_motions` (sktime's BasicMotions, when ``sktime`` is installed). Every loader returns either
an array of shape (n_trials, n_time, n_features) or a list of (n_time_i, n_features) arrays and says exactly
what is wrong with a bad file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.ndimage import gaussian_filter1d

from icml26._util.io import load_array as read_array

__all__ = [
    "SpikingDataset",
    "integrate_system",
    "load_array",
    "load_basic_motions",
    "load_nwb",
    "make_rotating_video",
    "make_spiking_dataset",
]

SYSTEMS = ("lorenz", "vanderpol", "rossler")
# (integration step, samples kept every `stride` steps, burn-in steps, latent dimension)
_SYSTEM_SETTINGS = {"lorenz": (0.01, 5, 1500, 3), "vanderpol": (0.02, 5, 1500, 2), "rossler": (0.05, 5, 2000, 3)}
# mean firing rate in Hz per regime (papers/dualflow.md §7: clean 20 Hz, noise-dominated 3 Hz)
REGIME_RATES = {"clean": 20.0, "noisy": 3.0}
EMBEDDINGS = ("tuning", "network", "softplus")
#: Width of the Gaussian tuning curves in units of the standardised latent (narrow: strongly nonlinear).
TUNING_WIDTH = 0.6


#: Most values a generated data set may hold per array (several float64 arrays of this size: ~2 GB in all).
MAX_GENERATED_VALUES = 50_000_000


def _check_size(values: int, what: str) -> None:
    if values > MAX_GENERATED_VALUES:
        raise ValueError(
            f"{what} = {values:.3g} values per array; the generator's limit is {MAX_GENERATED_VALUES:.0e} "
            f"(about {4 * 8 * MAX_GENERATED_VALUES / 2**30:.1f} GiB for its arrays)"
        )


def _vector_field(system: str, z: np.ndarray) -> np.ndarray:
    """dz/dt of the named system at states z of shape (n, d)."""
    if system == "lorenz":  # sigma = 10, rho = 28, beta = 8/3
        x, y, w = z.T
        return np.stack([10.0 * (y - x), x * (28.0 - w) - y, x * y - (8.0 / 3.0) * w], axis=1)
    if system == "vanderpol":  # mu = 1.5
        x, y = z.T
        return np.stack([y, 1.5 * (1.0 - x**2) * y - x], axis=1)
    if system == "rossler":  # a = b = 0.2, c = 5.7
        x, y, w = z.T
        return np.stack([-y - w, x + 0.2 * y, 0.2 + w * (x - 5.7)], axis=1)
    raise ValueError(f"system must be one of {SYSTEMS}; got {system!r}")


def integrate_system(system: str, n_trials: int, n_time: int, rng: np.random.Generator) -> np.ndarray:
    """Trajectories of a named system from random points on its attractor, by classical RK4.

    Returns
    -------
    array of shape (n_trials, n_time, d)
        States sampled every ``stride`` integration steps (Lorenz: dt = 0.01, every 5 steps).
    """
    if system not in _SYSTEM_SETTINGS:
        raise ValueError(f"system must be one of {SYSTEMS}; got {system!r}")
    h, stride, burn_in, d = _SYSTEM_SETTINGS[system]
    z = rng.normal(size=(n_trials, d)) + (np.array([0.0, 0.0, 25.0]) if system == "lorenz" else 0.0)

    def rk4(z: np.ndarray) -> np.ndarray:
        k1 = _vector_field(system, z)
        k2 = _vector_field(system, z + 0.5 * h * k1)
        k3 = _vector_field(system, z + 0.5 * h * k2)
        k4 = _vector_field(system, z + h * k3)
        return z + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    # a random burn-in per trial puts each start at a different point of the attractor
    extra = rng.integers(0, burn_in, size=n_trials)
    for step in range(burn_in * 2):
        z = np.where((step < burn_in + extra)[:, None], rk4(z), z)
    out = np.empty((n_trials, n_time, d))
    for t in range(n_time):
        out[:, t] = z
        for _ in range(stride):
            z = rk4(z)
    return out


@dataclass
class SpikingDataset:
    """Synthetic population recording with known latent state.

    Attributes
    ----------
    spikes : array of shape (n_trials, n_time, n_neurons)
        Poisson spike counts per bin.
    smoothed : array of shape (n_trials, n_time, n_neurons)
        Counts smoothed with a Gaussian kernel (what the model sees).
    rates : array of shape (n_trials, n_time, n_neurons)
        True expected counts per bin (noise-free signal).
    latents : array of shape (n_trials, n_time, d)
        True latent state (standardised per dimension).
    bin_size : float
        Bin width in seconds.
    smoothed_rates : array of shape (n_trials, n_time, n_neurons) or None
        The true rates smoothed with the same kernel as the counts: the expectation of ``smoothed``, the
        noise-free target a reconstruction of the smoothed counts should be scored against.
    """

    spikes: np.ndarray
    smoothed: np.ndarray
    rates: np.ndarray
    latents: np.ndarray
    bin_size: float
    smoothed_rates: np.ndarray | None = None


def make_spiking_dataset(
    system: str = "lorenz",
    n_trials: int = 200,
    n_time: int = 100,
    n_neurons: int = 60,
    regime: str = "noisy",
    bin_size: float = 0.02,
    smooth_bins: float = 2.0,
    seed: int = 0,
    embedding: str = "tuning",
) -> SpikingDataset:
    """Latent dynamics embedded into Poisson neurons through a known (nonlinear) map z -> rates.

    Parameters
    ----------
    system : {"lorenz", "vanderpol", "rossler"}
    n_trials, n_time, n_neurons : int
    regime : {"clean", "noisy"}
        Mean firing rate 20 Hz (clean) or 3 Hz (noise-dominated; SNR < 0 dB per neuron and bin).
    bin_size : float
        Seconds per bin (20 ms).
    smooth_bins : float
        Standard deviation of the Gaussian smoothing kernel, in bins.
    seed : int
    embedding : {"tuning", "network", "softplus"}
        How the standardised latent z drives the rates (before scaling to the regime's mean rate):

        - ``"tuning"``: ``exp(-|z - c_n|^2 / (2 w^2))`` with centres c_n drawn from the attractor's own states
          and w = ``TUNING_WIDTH`` (place-field-like; linear read-outs of the rates fail);
        - ``"network"``: ``softplus(2 sin(z W1 + b1) W2 + c)``, 64 random sine units, ``W1 ~ N(0, 4)``;
        - ``"softplus"``: ``softplus(W z + c)``, ``W ~ N(0, 1/3)`` (nearly linear; issue 16).
    """
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {EMBEDDINGS}; got {embedding!r}")
    if regime not in REGIME_RATES:
        raise ValueError(f"regime must be one of {tuple(REGIME_RATES)}; got {regime!r}")
    for name, value in (("n_trials", n_trials), ("n_time", n_time), ("n_neurons", n_neurons)):
        if int(value) < 1:
            raise ValueError(f"{name} must be positive; got {value}")
    _check_size(n_trials * n_time * n_neurons, f"{n_trials} trials x {n_time} bins x {n_neurons} neurons")
    rng = np.random.default_rng(seed)
    z = integrate_system(system, n_trials, n_time, rng)  # (n, T, d)
    z = (z - z.reshape(-1, z.shape[-1]).mean(0)) / z.reshape(-1, z.shape[-1]).std(0)
    drive = _embed(z, n_neurons, embedding, rng)  # (n, T, N), non-negative
    rates = drive / drive.mean() * REGIME_RATES[regime] * bin_size  # expected counts per bin
    spikes = rng.poisson(rates).astype(float)
    smooth = (lambda a: gaussian_filter1d(a, smooth_bins, axis=1, mode="nearest")) if smooth_bins > 0 else np.copy
    return SpikingDataset(
        spikes=spikes,
        smoothed=smooth(spikes),
        rates=rates,
        latents=z,
        bin_size=bin_size,
        smoothed_rates=smooth(rates),
    )


def _embed(z: np.ndarray, n_neurons: int, embedding: str, rng: np.random.Generator) -> np.ndarray:
    """Non-negative drive of each neuron from the standardised latent z (n, T, d); see make_spiking_dataset."""
    d = z.shape[-1]
    if embedding == "tuning":
        flat = z.reshape(-1, d)
        centres = flat[rng.choice(len(flat), size=n_neurons)]  # preferred states lie on the attractor
        sq = ((z[..., None, :] - centres) ** 2).sum(-1)
        return np.exp(-sq / (2 * TUNING_WIDTH**2)) + 1e-3  # a small floor: no neuron is exactly silent
    if embedding == "network":
        n_hidden = 64
        W1 = rng.normal(0.0, 2.0, size=(d, n_hidden))
        b1 = rng.uniform(0.0, 2 * np.pi, size=n_hidden)
        W2 = rng.normal(0.0, 1.0 / np.sqrt(n_hidden), size=(n_hidden, n_neurons))
        c = rng.normal(0.0, 0.5, size=n_neurons)
        return np.logaddexp(0.0, 2.0 * np.sin(z @ W1 + b1) @ W2 + c)
    W = rng.normal(0.0, np.sqrt(1.0 / 3.0), size=(d, n_neurons))
    c = rng.normal(0.0, 0.5, size=n_neurons)
    return np.logaddexp(0.0, z @ W + c)  # softplus


def make_rotating_video(
    n_videos: int = 10, n_frames: int = 50, size: int = 16, noise: float = 0.05, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Small videos of an object (a big and a small blob) rotating counter-clockwise about the centre.

    Returns
    -------
    frames : array of shape (n_videos, n_frames, size, size)
    angle : array of shape (n_videos, n_frames)
        The object's angle in radians (the ground-truth one-dimensional latent, on a circle).
    """
    if size < 8:
        raise ValueError(f"size must be at least 8 pixels; got {size}")
    if int(n_videos) < 1 or int(n_frames) < 1:
        raise ValueError(f"n_videos and n_frames must be positive; got {n_videos}, {n_frames}")
    _check_size(n_videos * n_frames * size * size, f"{n_videos} videos x {n_frames} frames x {size}x{size} pixels")
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, 2 * np.pi, size=(n_videos, 1))
    speed = rng.uniform(0.8, 1.2, size=(n_videos, 1)) * 2 * np.pi / 25  # about two turns per 50 frames
    angle = start + speed * np.arange(n_frames)
    grid = (np.arange(size) - (size - 1) / 2) / (size / 2)  # [-1, 1]
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    frames = np.zeros((n_videos, n_frames, size, size))
    for radius, width, brightness, offset in ((0.5, 0.18, 1.0, 0.0), (0.5, 0.1, 0.6, np.pi)):
        cx = radius * np.cos(angle + offset)[..., None, None]
        cy = radius * np.sin(angle + offset)[..., None, None]
        frames += brightness * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * width**2))
    frames += noise * rng.normal(size=frames.shape)
    return frames, np.mod(angle, 2 * np.pi)


def _validate_trials(data: object, source: str) -> np.ndarray | list[np.ndarray]:
    arrays = data if isinstance(data, list) else [data]
    for i, a in enumerate(arrays):
        if not np.issubdtype(np.asarray(a).dtype, np.number):
            raise ValueError(f"{source}: array {i} has non-numeric dtype {np.asarray(a).dtype}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{source}: array {i} contains NaN or infinite values")
    return data


def load_array(path: str | Path, key: str | None = None) -> np.ndarray | list[np.ndarray]:
    """Load trials from ``.npy`` or ``.npz``.

    A ``.npy`` file holds one array of shape (n_trials, n_time, n_features) or (n_time, n_features) (one
    trial). A ``.npz`` file holds either the array under ``key`` (or its only array), or one 2-D array per
    trial (variable lengths allowed; returned as a list in the file's order).
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a .npy/.npz file")
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if path.suffix not in (".npy", ".npz"):
        raise ValueError(f"{path}: expected a .npy or .npz file, got {path.suffix or 'no suffix'!r}")
    if path.stat().st_size == 0:
        raise ValueError(f"{path}: the file is empty")
    try:
        loaded = read_array(path, what="trials file")  # NumPy's header checked first: no pickle advice
        if path.suffix == ".npy":
            return _validate_trials(_check_rank(_real(loaded, str(path)), str(path)), str(path))
        with loaded:
            names = list(loaded.files)
            if not names:
                raise ValueError(f"{path}: the .npz archive is empty")
            if key is not None:
                if key not in names:
                    raise ValueError(f"{path}: no array named {key!r}; the archive holds {names}")
                return _validate_trials(_check_rank(_real(loaded[key], f"{path}[{key}]"), str(path)), str(path))
            if len(names) == 1:
                return _validate_trials(_check_rank(_real(loaded[names[0]], str(path)), str(path)), str(path))
            trials = [_real(loaded[n], f"{path}[{n}]") for n in names]
    except Exception as exc:
        if isinstance(exc, ValueError | OSError) and str(exc).startswith(str(path)):
            raise  # our own message, naming the file
        if "NumPy's header" in str(exc):
            raise ValueError(f"{path}: not a NumPy .npy/.npz file (it lacks NumPy's header)") from None
        # numpy raises UnpicklingError / zipfile / EOF errors for foreign files
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable numpy file ({type(exc).__name__}: {first})") from None
    bad = [n for n, t in zip(names, trials, strict=True) if t.ndim != 2]
    if bad:
        raise ValueError(
            f"{path}: a multi-array .npz must hold one 2-D (time, features) array per trial; {bad} are not"
        )
    if len({t.shape[1] for t in trials}) > 1:
        raise ValueError(f"{path}: trials have different feature counts {sorted({t.shape[1] for t in trials})}")
    return _validate_trials(trials, str(path))


def _real(a, source: str) -> np.ndarray:
    """A loaded array as float64; complex or non-numeric data are refused, never truncated."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        raise ValueError(f"{source}: holds complex values ({a.dtype}); store real data (e.g. the modulus)")
    if not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise ValueError(f"{source}: non-numeric dtype {a.dtype}")
    return a.astype(float)


def _check_rank(a: np.ndarray, source: str) -> np.ndarray:
    if a.ndim == 2:
        return a[None]
    if a.ndim != 3:
        raise ValueError(
            f"{source}: expected shape (n_trials, n_time, n_features) or (n_time, n_features); got {a.shape}"
        )
    return a


def load_nwb(path: str | Path, series: str | None = None) -> np.ndarray:
    """Load a time series from an NWB file's acquisition or processing modules (needs ``pynwb``).

    Returns the data of the named ``TimeSeries`` (or the only one) as one trial of shape (1, n_time, n_features).
    """
    try:
        from pynwb import NWBHDF5IO, TimeSeries
    except ImportError:
        raise ImportError("reading NWB files needs pynwb: pip install pynwb") from None
    path = Path(path)
    if not path.is_file():
        raise OSError(f"no such file: {path}")
    with NWBHDF5IO(str(path), "r") as io:
        nwb = io.read()
        found = {k: v for k, v in nwb.acquisition.items() if isinstance(v, TimeSeries)}
        for module in nwb.processing.values():
            found.update({k: v for k, v in module.data_interfaces.items() if isinstance(v, TimeSeries)})
        if not found:
            raise ValueError(f"{path}: holds no TimeSeries")
        if series is None:
            if len(found) > 1:
                raise ValueError(f"{path}: holds several time series {sorted(found)}; name one")
            series = next(iter(found))
        if series not in found:
            raise ValueError(f"{path}: no time series {series!r}; it holds {sorted(found)}")
        data = np.asarray(found[series].data[:], dtype=float)
    if data.ndim == 1:
        data = data[:, None]
    return _validate_trials(_check_rank(data, str(path)), str(path))


def load_basic_motions() -> tuple[np.ndarray, np.ndarray]:
    """sktime's BasicMotions (accelerometer + gyroscope, 4 activities; needs ``sktime``).

    Returns
    -------
    X : array of shape (80, 100, 6)
        Trials in (n_trials, n_time, n_features) order.
    y : array of shape (80,)
        Activity labels (standing, walking, running, badminton).
    """
    try:
        from sktime.datasets import load_basic_motions as _load
    except ImportError:
        raise ImportError("BasicMotions ships with sktime: pip install sktime") from None
    X, y = _load(return_type="numpy3D")
    return np.transpose(np.asarray(X, dtype=float), (0, 2, 1)), np.asarray(y)
