"""One progress-bar convention for every verb: tqdm on a terminal, silent in logs and under ``--quiet``.

``progress(iterable, desc=...)`` is ``tqdm`` with ``disable=None`` (tqdm's own rule: no bar when stderr is not a
terminal, so a log file gets no carriage-return spam) and ``leave=False``; ``icml26 --quiet`` (or ``-q``) sets
:data:`QUIET` and turns every bar off. A verb that passes its own ``disable=`` keeps it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

QUIET = False  # set by the command line's --quiet


def set_quiet(quiet: bool = True) -> None:
    """Turn every progress bar of this process off (``icml26 --quiet``)."""
    global QUIET
    QUIET = bool(quiet)


def progress(iterable: Iterable | None = None, **kwargs: Any):
    """``tqdm(iterable, **kwargs)`` with the convention's defaults (see the module docstring)."""
    from tqdm import tqdm

    kwargs.setdefault("leave", False)
    if QUIET:
        kwargs["disable"] = True
    else:
        kwargs.setdefault("disable", None)
    return tqdm(iterable, **kwargs)
