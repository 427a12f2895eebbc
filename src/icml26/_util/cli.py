"""One command-line convention for every system: the parser class and the value types its arguments use.

Every system's ``cli.py`` exposes ``build_parser() -> ArgumentParser`` (built with :class:`ArgumentParser`
below) and ``main(argv) -> int``. The parser

- shows every optional argument's default in ``--help`` (``DefaultsHelpFormatter``: not for required
  arguments, flags or a default of None);
- reports a bad argument on ONE line, ``icml26 <id> <verb>: error: ...``, and exits with status 2 (argparse
  prints the whole usage block first, which buries the message);
- rejects non-finite, negative or out-of-range numbers at parse time through the ``type=`` helpers here, so a
  verb never starts work on ``--noise nan`` or allocates for ``--cells 1e12``; every float is also bounded in
  magnitude (``MAX_MAGNITUDE``), so ``--sigma 1e300`` cannot overflow the first ``sigma**2``;
- refuses an output path that names the same file as another path argument (``--data x.nc --out x.nc``) before
  any work, so a verb never destroys its own input. Outputs are the arguments whose ``dest`` is in
  ``OUTPUT_DESTS`` and those declared with ``add_argument(..., output=True)`` (``--checkpoint`` in a verb that
  writes one).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "MAX_MAGNITUDE",
    "OUTPUT_DESTS",
    "ArgumentParser",
    "DefaultsHelpFormatter",
    "add_json_argument",
    "bounded_float",
    "bounded_int",
    "finite_float",
    "fraction",
    "learning_rate",
    "nonnegative_float",
    "nonnegative_int",
    "positive_float",
    "positive_int",
]


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an optional argument's help, unless the argument is required, has no
    default (``None``: the help says what happens then), is a flag, or its help already names the default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = action.help or ""
        if (
            "default" in help_text.lower()
            or action.required
            or not action.option_strings
            or action.default is None
            or action.default is argparse.SUPPRESS
            or isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))
        ):
            return help_text
        return f"{help_text} (default: %(default)s)"


# No float setting of any verb is meaningful beyond this; 1e300 would overflow the first square it meets.
MAX_MAGNITUDE = 1e15

# Arguments that name a file a verb writes, by their dest (the output convention's names and the older ones).
OUTPUT_DESTS = frozenset({"out", "json", "csv", "md", "plot", "save", "export", "xyz_out", "output"})


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with defaults in ``--help``, one-line errors (exit status 2), and outputs
    that may not name the same file as any other path argument."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, output: bool = False, deprecated: tuple[str, ...] = (), **kwargs):
        """``argparse``'s ``add_argument``; ``output=True`` marks a file the verb writes (see ``OUTPUT_DESTS``);
        ``deprecated`` names option strings among ``args`` kept one release as old spellings: they still work and
        print a warning naming the new one."""
        unknown = set(deprecated) - set(args)
        if unknown:
            raise ValueError(f"deprecated aliases {sorted(unknown)} are not among the option strings {args}")
        if deprecated:
            current = [a for a in args if a not in deprecated]
            args = (*deprecated, *current)  # the current spelling last: it is the one messages and tools name
            kwargs.setdefault("dest", current[0].lstrip("-").replace("-", "_"))  # argparse would take the first
            kwargs["help"] = f"{kwargs.get('help', '')} ({', '.join(deprecated)}: old spelling, deprecated)".lstrip()
        action = super().add_argument(*args, **kwargs)
        if output:
            action.output = True
        if deprecated:
            action.__class__ = _deprecated_alias_class(type(action))
            action.deprecated = frozenset(deprecated)
            action.current = current[-1] if current else args[-1]
        return action

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        self._check_outputs_distinct(namespace)
        return namespace, extras

    def _check_outputs_distinct(self, namespace: argparse.Namespace) -> None:
        """Refuse an output path that is also another path argument (an input it would destroy)."""
        named: list[tuple[argparse.Action, Path]] = []
        for action in self._actions:
            if action.type not in (None, str, Path) or action.nargs == 0 or action.choices:
                continue  # numbers, flags and choice words name no file
            value = getattr(namespace, action.dest, None)
            for item in value if isinstance(value, list | tuple) else [value]:
                if isinstance(item, str | os.PathLike) and str(item) not in ("", "-"):
                    named.append((action, Path(os.path.realpath(item))))
        for i, (action, path) in enumerate(named):
            if not (getattr(action, "output", False) or action.dest in OUTPUT_DESTS):
                continue
            for other, other_path in named[:i] + named[i + 1 :]:
                if other is not action and other_path == path:
                    self.error(
                        f"{_flag(action)} {path.name} is also given as {_flag(other)}; writing it would overwrite "
                        "that file: choose another output path"
                    )

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _deprecated_alias_class(base: type) -> type:
    """``base`` whose call warns when the option was given by one of its deprecated spellings."""

    class DeprecatedAlias(base):
        def __call__(self, parser, namespace, values, option_string=None):
            if option_string in self.deprecated:
                warnings.warn(
                    f"{option_string} is deprecated and will be removed in the next release; use {self.current}",
                    FutureWarning,
                    stacklevel=2,
                )
            super().__call__(parser, namespace, values, option_string)

    DeprecatedAlias.__name__ = f"Deprecated{base.__name__}"
    return DeprecatedAlias


JSON_METAVAR = "PATH|-"


def add_json_argument(
    parser: argparse.ArgumentParser, what: str = "the numbers this command computes", *, required: bool = False
) -> argparse.Action:
    """The convention's ``--json PATH|-``: ``what`` as JSON to PATH, or to standard output with ``-`` (the
    command's other output then goes to standard error). Write it with ``icml26._util.io.write_json``."""
    action = parser.add_argument(
        "--json",
        metavar=JSON_METAVAR,
        default=None,
        required=required,
        help=f"write {what} as JSON to PATH ('-': standard output)",
    )
    action.json_output = True
    return action


def _flag(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def _number(text: str, kind: type, what: str) -> float | int:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        value = _integral_float(text) if kind is int else None  # integers written as 1e3, when exactly integral
        if value is None:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is too large in magnitude (> {MAX_MAGNITUDE:g}); no setting of this tool needs it"
        )
    return value


def _integral_float(text: str) -> int | None:
    try:
        as_float = float(text)
    except ValueError:
        return None
    return int(as_float) if math.isfinite(as_float) and as_float == int(as_float) else None


def finite_float(text: str) -> float:
    """A finite real number (rejects nan and inf)."""
    return float(_number(text, float, "a number"))


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return value


def fraction(text: str) -> float:
    """A number in [0, 1]."""
    value = finite_float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be in [0, 1]")
    return value


def bounded_float(low: float, high: float, *, what: str = "", open_low: bool = False) -> Callable[[str], float]:
    """A type for finite numbers in ``[low, high]`` (``(low, high]`` with ``open_low``); ``what`` says why."""

    def parse(text: str) -> float:
        value = finite_float(text)
        if value < low or (open_low and value == low) or value > high:
            bound = f"in {'(' if open_low else '['}{low:g}, {high:g}]"
            reason = f" ({what})" if what else ""
            raise argparse.ArgumentTypeError(f"{text!r} must be {bound}{reason}")
        return value

    parse.__name__ = "float"  # argparse names the type in its messages
    return parse


learning_rate = bounded_float(0.0, 10.0, open_low=True, what="a learning rate above 10 diverges every optimiser here")
learning_rate.__doc__ = "A learning rate: a number in (0, 10]."


def bounded_int(low: int, high: int | None = None, *, what: str = "") -> Callable[[str], int]:
    """A type for integers in ``[low, high]``; ``high`` names the limit a memory or time estimate sets."""

    def parse(text: str) -> int:
        value = int(_number(text, int, "an integer"))
        if value < low or (high is not None and value > high):
            bound = f">= {low}" if high is None else f"in [{low}, {high:,}]"
            reason = f" ({what})" if what else ""
            raise argparse.ArgumentTypeError(f"{text!r} must be {bound}{reason}")
        return value

    parse.__name__ = "int"  # argparse names the type in its messages
    return parse


positive_int = bounded_int(1)
positive_int.__doc__ = "An integer >= 1."
nonnegative_int = bounded_int(0)
nonnegative_int.__doc__ = "An integer >= 0."
seed_int = bounded_int(0, 2**32 - 1, what="numpy and torch take 32-bit seeds")
seed_int.__doc__ = "A random seed: an integer in [0, 2**32 - 1]."


# Third-party messages that send a user the wrong way, and what they mean when the user's file is at fault.
_MISLEADING = {
    "load it unsafely using the `allow_pickle=`": (
        "the file is not a NumPy .npy/.npz array (it lacks NumPy's header); numpy's advice to load it as a "
        "pickle does not apply"
    ),
    "xarray's currently installed IO backends": (
        "the file is not NetCDF, Zarr or another format xarray reads; installing IO packages will not help "
        "unless it really is one"
    ),
}


def one_line(exc: BaseException) -> str:
    """The first line of an error's message (library messages can run to screens), named by its type if empty;
    a known misleading third-party message is replaced by what it means (``_MISLEADING``)."""
    text = str(exc).strip()
    for marker, meaning in _MISLEADING.items():
        if marker in text:
            return meaning
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    first = text.splitlines()[0] if text else type(exc).__name__
    return first + (" (...)" if len(text.splitlines()) > 1 else "")
