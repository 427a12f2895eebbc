"""Output safety for every CLI verb: check where a result goes before computing it, write it atomically.

Two rules (issue "bad input, big input and output safety"):

1. ``check_output_path(path)`` runs *before* any work: the parent directory must exist and be writable and
   the path must not be a directory, so a long run never ends with "permission denied".
2. ``atomic_output(path)`` yields a temporary path beside the target; the target is replaced only when the
   block finishes without an exception, so a failed or interrupted run never leaves a half-written file and
   never overwrites an existing result.

The file written is the file named: numpy adds ``.npy`` / ``.npz`` to names without them, so
:func:`save_npy` and :func:`save_npz` write through an open file handle instead.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = ["atomic_output", "check_input_file", "check_output_path", "load_array", "save_npy", "save_npz"]


def check_output_path(path: str | os.PathLike, *, suffixes: tuple[str, ...] = ()) -> Path:
    """Return ``path`` as a Path after checking a result can be written there; raise ``OSError``/``ValueError``.

    ``suffixes``, when given, lists the accepted file endings (``(".npy",)``); another ending is an error
    instead of a silently renamed file.
    """
    p = Path(path)
    if str(path) == "" or p.name == "":
        raise ValueError(f"output path {str(path)!r} names no file")
    if p.is_dir():
        raise IsADirectoryError(f"output path {p} is a directory; give a file name inside it")
    if suffixes and p.suffix.lower() not in suffixes:
        raise ValueError(f"output path {p} must end with {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise FileNotFoundError(f"output directory {parent} does not exist; create it first")
    if not parent.is_dir():
        raise NotADirectoryError(f"output directory {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"output directory {parent} is not writable")
    return p


def check_input_file(path: str | os.PathLike, *, what: str = "input file") -> Path:
    """Return ``path`` as a Path after checking it is an existing, non-empty regular file."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} {p} does not exist")
    if p.is_dir():
        raise IsADirectoryError(f"{what} {p} is a directory, not a file")
    if p.stat().st_size == 0:
        raise ValueError(f"{what} {p} is empty")
    return p


def load_array(path: str | os.PathLike, *, what: str = "input file"):
    """Read a ``.npy`` array or an ``.npz`` archive (never a pickle), after checking the file is one.

    A file that is neither gets one clear message instead of numpy's advice to load it as a pickle.
    """
    p = check_input_file(path, what=what)
    with open(p, "rb") as fh:
        head = fh.read(6)
    if head == b"\x93NUMPY":
        return np.load(p, allow_pickle=False)
    if head[:4] == b"PK\x03\x04":
        return np.load(p, allow_pickle=False)  # an .npz (a zip of .npy files)
    raise ValueError(f"{what} {p} is not a NumPy .npy or .npz file (it lacks NumPy's header)")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; rename it onto ``path`` only on success."""
    target = check_output_path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent or ".")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes the file 0600; a result gets the mode any new file gets
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if not tmp_path.exists() or tmp_path.stat().st_size == 0:
            raise OSError(f"nothing was written for {target}; the existing file (if any) is kept")
        os.replace(tmp_path, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it is to set it
    os.umask(mask)
    return mask


def save_npy(path: str | os.PathLike, array: np.ndarray) -> Path:
    """Write one array to exactly ``path`` (no suffix added), atomically."""
    with atomic_output(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, np.asarray(array), allow_pickle=False)
    return Path(path)


def save_npz(path: str | os.PathLike, **arrays: np.ndarray) -> Path:
    """Write named arrays to exactly ``path`` (no suffix added), compressed and atomically."""
    with atomic_output(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **{k: np.asarray(v) for k, v in arrays.items()})
    return Path(path)
