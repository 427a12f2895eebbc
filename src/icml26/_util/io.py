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
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "atomic_output",
    "check_input_file",
    "check_json_output",
    "check_output_path",
    "json_ready",
    "load_array",
    "save_npy",
    "save_npz",
    "stdout_reserved_for_json",
    "write_json",
]


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


# --- ``--json PATH|-``: a verb's numbers, machine-readable --------------------------------------------------------
#
# ``-`` sends the JSON to standard output. The top-level CLI then sends everything else the verb prints to standard
# error (``stdout_reserved_for_json``), so ``icml26 ID VERB ... --json - | jq .`` always reads one JSON document.

_json_stream = None  # the real standard output while a verb runs with ``--json -``; None otherwise


@contextlib.contextmanager
def stdout_reserved_for_json() -> Iterator[None]:
    """Route the verb's other prints to standard error; :func:`write_json` ``("-", ...)`` keeps standard output."""
    global _json_stream
    previous, _json_stream = _json_stream, sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _json_stream = previous


def check_json_output(dest: str | os.PathLike | None) -> None:
    """Check a ``--json`` destination before any work: None (no JSON) and ``-`` (standard output) always pass."""
    if dest is not None and str(dest) != "-":
        check_output_path(dest)


def json_ready(value):
    """``value`` with numpy scalars/arrays as Python numbers/lists, paths as strings, and NaN/inf as None (JSON
    has no NaN; ``json.dumps`` would write an invalid ``NaN`` token)."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_ready(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, np.generic):
        return json_ready(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def write_json(dest: str | os.PathLike | None, payload) -> None:
    """Write ``payload`` as indented JSON to ``dest``: nothing for None, standard output for ``-``, else a file
    replaced atomically."""
    if dest is None:
        return
    text = json.dumps(json_ready(payload), indent=2, allow_nan=False) + "\n"
    if str(dest) == "-":
        stream = _json_stream or sys.stdout
        stream.write(text)
        stream.flush()
        return
    with atomic_output(dest) as tmp:
        tmp.write_text(text)
