"""One command-line convention for every system: the parser class and the value types its arguments use.

Every system's ``cli.py`` exposes ``build_parser() -> ArgumentParser`` (built with :class:`ArgumentParser`
below) and ``main(argv) -> int``. The parser

- shows every optional argument's default in ``--help`` (``DefaultsHelpFormatter``: not for required
  arguments, flags or a default of None);
- reports a bad argument on ONE line, ``icml26 <id> <verb>: error: ...``, and exits with status 2 (argparse
  prints the whole usage block first, which buries the message);
- rejects non-finite, negative or out-of-range numbers at parse time through the ``type=`` helpers here, so a
  verb never starts work on ``--noise nan`` or allocates for ``--cells 1e12``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

__all__ = [
    "ArgumentParser",
    "DefaultsHelpFormatter",
    "bounded_int",
    "finite_float",
    "fraction",
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


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with defaults in ``--help`` and one-line errors (exit status 2)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _number(text: str, kind: type, what: str) -> float | int:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        # allow integers written as 1e3 only when they are exactly integral
        if kind is int:
            try:
                as_float = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
            if math.isfinite(as_float) and as_float == int(as_float):
                return int(as_float)
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


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


def one_line(exc: BaseException) -> str:
    """The first line of an error's message (library messages can run to screens), named by its type if empty."""
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    first = text.splitlines()[0] if text else type(exc).__name__
    return first + (" (...)" if len(text.splitlines()) > 1 else "")
