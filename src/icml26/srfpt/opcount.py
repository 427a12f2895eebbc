"""Operation counts of the exhaustive search: how many primitive evaluations it really performs.

Complexity statements (FPT in size or depth, XP in the number of variables) are about the number of
operations, not about seconds on a shared CPU. This module wraps every primitive of a primitive set in a
counter that adds the number of elements each call produces, then runs the search pipeline of
:class:`icml26.srfpt.search.ExhaustiveSR` (enumerate on probe rows, score every distinct function on all
``n`` rows) with those primitives. The counts are measured, not computed from a formula; the tests check
them against the formulas on cases where the formulas are exact:

* enumeration without deduplication evaluates every labelled tree of size ``2 .. k`` once on each of the
  ``P`` probe rows: ``sum_{s=2..k} N(s) * P`` element operations (Eq. C1);
* scoring evaluates every distinct non-leaf function once on every data row: ``(M - L) * n``.

So the cost of one search is ``ops(k, n) = E(k) + (M(k) - L) n``: the exponential part ``E(k)``, ``M(k)``
does not depend on ``n`` (FPT), while at fixed ``k`` the number of distinct functions grows like a
polynomial in the number of variables whose degree grows with ``k`` (XP, not FPT, in the variables).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml26.srfpt.enumerate import enumerate_library
from icml26.srfpt.fit import score_library
from icml26.srfpt.primitives import Primitive


@dataclass
class OpCounter:
    """Running count of element operations (one per output element of a primitive call)."""

    count: int = 0


def counting_primitives(prims: Sequence[Primitive]) -> tuple[tuple[Primitive, ...], OpCounter]:
    """Copies of ``prims`` whose numpy functions add their output size to a shared counter."""
    counter = OpCounter()

    def wrap(fn):
        def counted(*args, **kwargs):
            out = fn(*args, **kwargs)
            counter.count += int(np.size(out))
            return out

        return counted

    return tuple(dataclasses.replace(p, fn=wrap(p.fn)) for p in prims), counter


@dataclass
class SearchCost:
    """Measured cost of one exhaustive search.

    Attributes
    ----------
    n_distinct : int
        Distinct functions in the library (M, leaves included).
    n_leaves : int
    n_candidates : int
        Trees evaluated on the probe rows before removing duplicates.
    enumerate_ops, score_ops : int
        Element operations of the enumeration (on the probe rows) and of the scoring (on all n rows).
    n : int
        Data rows scored.
    """

    n_distinct: int
    n_leaves: int
    n_candidates: int
    enumerate_ops: int
    score_ops: int
    n: int

    @property
    def total_ops(self) -> int:
        return self.enumerate_ops + self.score_ops


def counted_search(
    prims: Sequence[Primitive],
    X: np.ndarray,
    y: np.ndarray,
    bound: int,
    *,
    mode: str = "size",
    n_probe: int = 16,
    constants: Sequence[float] = (1.0,),
    dedup: bool = True,
) -> SearchCost:
    """Enumerate every function up to ``bound`` on the first ``n_probe`` rows, score all on ``X``; count ops.

    Parameters
    ----------
    prims : sequence of Primitive
    X : ndarray of shape (n, v)
    y : ndarray of shape (n,)
    bound : int
        Size bound k or depth bound D.
    mode : {"size", "depth"}
    n_probe : int
        The first ``n_probe`` rows are the probe rows (``ExhaustiveSR`` draws them at random; taking the
        first rows makes nested data sets ``X[:n]`` share one probe set, so the enumeration is the same).
    dedup : bool
        ``False`` enumerates every labelled tree (to check the counter against Eq. C1).

    Returns
    -------
    SearchCost

    Raises
    ------
    ValueError
        ``X`` not 2-D, ``y`` not of shape ``(n,)``, non-finite data, ``n_probe`` not an integer in
        ``2 .. n`` (one probe row makes every tree look constant), a bound that is not an integer, or a bad
        ``mode`` / bound (from :func:`~icml26.srfpt.enumerate.enumerate_library`).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
        raise ValueError(f"X must have shape (n, v) and y shape (n,); got {X.shape} and {y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise ValueError("X and y must be finite (found NaN or inf)")
    if isinstance(n_probe, bool) or not isinstance(n_probe, (int, np.integer)) or not 2 <= n_probe <= len(X):
        raise ValueError(f"n_probe must be an integer in 2 .. n = {len(X)}; got {n_probe!r}")
    if isinstance(bound, bool) or int(bound) != bound:
        raise ValueError(f"bound must be an integer; got {bound!r}")
    counted, counter = counting_primitives(prims)
    lib = enumerate_library(
        counted, X[:n_probe], int(bound), constants=constants, mode=mode, dedup=dedup, max_nodes=10**8
    )
    enumerate_ops = counter.count
    n_leaves = X.shape[1] + len(constants)
    if dedup:
        score_library(lib, X, y)
        score_ops = counter.count - enumerate_ops
    else:  # the library holds every labelled tree, most of them invalid or duplicates: not scored
        score_ops = 0
    return SearchCost(lib.n_nodes, n_leaves, int(sum(lib.n_candidates[1:])), enumerate_ops, score_ops, len(y))
