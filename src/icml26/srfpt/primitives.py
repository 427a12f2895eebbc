"""The primitive set P of a symbolic-regression instance: unary and binary operators.

Each primitive has a numpy implementation (applied to whole arrays of values: many trees times many
points at once) and a sympy counterpart (used only to report results). Domain errors are *not* patched
("protected division" returning 1 etc.): numpy produces ``nan``/``inf`` under ``np.errstate(all="ignore")``
and the engine discards every tree that is not finite on the data (a log of a negative number must never
count as a recovered formula).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy


@dataclass(frozen=True)
class Primitive:
    """One operator of the primitive set.

    Parameters
    ----------
    name : str
        The name used on the command line (``add``, ``sin`` ...).
    arity : int
        1 (unary) or 2 (binary).
    fn : callable
        numpy implementation, element-wise.
    sym : callable
        sympy implementation, for reporting.
    commutative : bool
        ``f(a, b) == f(b, a)``; the enumerator then builds only one of the two orders (a canonical form).
    """

    name: str
    arity: int
    fn: Callable[..., np.ndarray]
    sym: Callable[..., sympy.Expr]
    commutative: bool = False


# Module-level functions, not lambdas: a fitted ExhaustiveSR keeps its primitives (``ops_``), and pickle
# stores a function by its qualified name, which a lambda lacks.


def _cube(a, out=None):
    """x^3, element-wise; takes ``out=`` like a numpy ufunc (the scorer writes into preallocated rows)."""
    return np.multiply(np.multiply(a, a), a, out=out)


def _sym_square(a):
    return a**2


def _sym_cube(a):
    return a**3


def _sym_add(a, b):
    return a + b


def _sym_sub(a, b):
    return a - b


def _sym_mul(a, b):
    return a * b


def _sym_div(a, b):
    return a / b


def _sym_pow(a, b):
    return a**b


def _sym_neg(a):
    return -a


def _sym_inv(a):
    return 1 / a


PRIMITIVES: dict[str, Primitive] = {
    p.name: p
    for p in [
        Primitive("add", 2, np.add, _sym_add, commutative=True),
        Primitive("sub", 2, np.subtract, _sym_sub),
        Primitive("mul", 2, np.multiply, _sym_mul, commutative=True),
        Primitive("div", 2, np.divide, _sym_div),
        Primitive("pow", 2, np.power, _sym_pow),
        Primitive("sin", 1, np.sin, sympy.sin),
        Primitive("cos", 1, np.cos, sympy.cos),
        Primitive("tan", 1, np.tan, sympy.tan),
        Primitive("exp", 1, np.exp, sympy.exp),
        Primitive("log", 1, np.log, sympy.log),
        Primitive("sqrt", 1, np.sqrt, sympy.sqrt),
        Primitive("square", 1, np.square, _sym_square),
        Primitive("cube", 1, _cube, _sym_cube),
        Primitive("neg", 1, np.negative, _sym_neg),
        Primitive("inv", 1, np.reciprocal, _sym_inv),
        Primitive("abs", 1, np.abs, sympy.Abs),
    ]
}

#: The operator set of the issue's CLI example.
DEFAULT_OPS: tuple[str, ...] = ("add", "sub", "mul", "div", "sin", "cos", "exp", "log")


def parse_ops(ops: str | Sequence[str]) -> tuple[Primitive, ...]:
    """Turn ``"add,mul,sin"`` (or a list of names) into primitives; unknown names raise ``ValueError``.

    Parameters
    ----------
    ops : str or sequence of str
        Comma-separated names or a sequence of names; duplicates are removed, order kept.

    Returns
    -------
    tuple of Primitive
    """
    names = [s.strip() for s in ops.split(",")] if isinstance(ops, str) else [str(s).strip() for s in ops]
    names = [n for n in dict.fromkeys(names) if n]
    if not names:
        raise ValueError("the primitive set is empty: give at least one operator")
    unknown = [n for n in names if n not in PRIMITIVES]
    if unknown:
        raise ValueError(f"unknown operator(s) {', '.join(unknown)}; known: {', '.join(PRIMITIVES)}")
    return tuple(PRIMITIVES[n] for n in names)
