"""Bottom-up enumeration of every expression tree up to a size (or depth) bound: the FPT algorithm.

The paper's tractable regime: with the primitive set P fixed, the number of trees of size <= k is a
function of k alone (:mod:`icml26.srfpt.counting`), and each tree is evaluated in O(n k) time, so exhaustive
search costs f(k) * poly(n). This module makes that search fast:

* **Grades.** Trees are built grade by grade (grade = size, or depth), every tree of grade g from the
  trees of smaller grades: a unary operator on grade g-1, a binary operator on grades (i, g-1-i) (size)
  or (i, j) with max(i, j) = g-1 (depth).
* **Shared subtrees.** Each distinct function is stored once, as a node ``(op, left, right)`` pointing to
  its children's nodes (a DAG), together with its values on a few probe points; a new tree costs one
  numpy operation on its children's stored values, never a re-evaluation of the subtrees.
* **Canonical forms.** Commutative operators build only one argument order; every candidate's values on
  the probe points are hashed and a candidate whose function was already seen (at this or a smaller
  grade) is dropped, which removes commutative, associative and algebraic duplicates (``x*(x+1)`` vs
  ``x*x+x``) at once. Constant sub-trees are folded: one that evaluates to something other than a small
  integer or half-integer is dropped (free constants come from linear scaling instead).
* **Protected domain errors.** A candidate that is not finite on a probe point is discarded.

Keeping only the first (smallest-grade) tree of every function does not lose any function: replacing the
children of a tree by smaller trees computing the same functions gives a tree of no larger grade that
computes the same function. The search is therefore exhaustive over functions up to the bound (up to
hash collisions between functions that coincide on every probe point).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from icml26.srfpt.primitives import Primitive

logger = logging.getLogger(__name__)

VAR, CONST = -1, -2  # op codes of the two kinds of leaves
_CHUNK = 1 << 17  # candidates per numpy call: (_CHUNK, n_probe) float64 blocks
_BIG = 1e12  # larger magnitudes are treated as overflow


class SearchSpaceTooLarge(ValueError):
    """The requested exhaustive search exceeds the node budget; the message carries the estimate."""


@dataclass
class Library:
    """Every distinct function found, as a DAG over its children (node ids grow with the grade).

    Attributes
    ----------
    op : ndarray of shape (M,)
        Index into ``ops``; ``VAR`` (-1) or ``CONST`` (-2) for leaves.
    left, right : ndarray of shape (M,)
        Child node ids (``-1`` when absent); for leaves ``left`` is the variable / constant index.
    grade, size, depth : ndarray of shape (M,)
    values : ndarray of shape (M, P)
        Values on the probe points.
    n_candidates : list of int
        Trees evaluated at each grade (before removing duplicates).
    """

    ops: tuple[Primitive, ...]
    constants: tuple[float, ...]
    mode: str
    op: np.ndarray
    left: np.ndarray
    right: np.ndarray
    grade: np.ndarray
    size: np.ndarray
    depth: np.ndarray
    values: np.ndarray
    n_candidates: list[int] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return len(self.op)

    def distinct_per_grade(self, max_grade: int) -> list[int]:
        """Number of distinct functions whose smallest grade is g, for g = 0 .. max_grade."""
        return np.bincount(self.grade, minlength=max_grade + 1)[: max_grade + 1].tolist()


def _hash_rows(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row, robust to last-digit floating-point noise (rounded to float32)."""
    q = values.astype(np.float32)
    q[np.abs(values) < 1e-10] = 0.0  # also maps -0.0 to 0.0
    return (q.view(np.uint32).astype(np.uint64) * weights).sum(axis=1)  # wraps modulo 2^64


def _is_simple_constant(v: np.ndarray) -> np.ndarray:
    """Small integers and half-integers survive constant folding (1+1, 1/(1+1) ...)."""
    return (np.abs(v) <= 10) & (np.abs(2 * v - np.round(2 * v)) < 1e-9)


def _grade_plan(g: int, lo: int, mode: str, op: Primitive, dedup: bool) -> Iterator[tuple[int, int]]:
    """Child grades (i, j) of a binary operator at grade g (``j = -1`` for unary operators)."""
    if op.arity == 1:
        yield g - 1, -1
        return
    canonical = dedup and op.commutative
    if mode == "size":
        for i in range(lo, g - lo):
            j = g - 1 - i
            if j >= lo and (not canonical or i <= j):
                yield i, j
    else:
        top = g - 1
        for i in range(lo, top + 1):
            yield i, top
            if i < top and not canonical:
                yield top, i


def enumerate_library(
    ops: Sequence[Primitive],
    probes: np.ndarray,
    max_grade: int,
    *,
    constants: Sequence[float] = (1.0,),
    mode: str = "size",
    dedup: bool = True,
    fold_constants: bool = True,
    max_nodes: int = 5_000_000,
    seed: int = 0,
    map_blocks=None,
) -> Library:
    """Enumerate every function up to ``max_grade`` (size or depth) on the probe points.

    Parameters
    ----------
    ops : sequence of Primitive
    probes : ndarray of shape (P, v)
        Points on which functions are compared (a random subset of the data rows).
    max_grade : int
        Size bound k (nodes) or depth bound D.
    constants : sequence of float
        Constant leaves.
    mode : {"size", "depth"}
    dedup : bool
        Remove duplicate functions and invalid trees. ``False`` keeps every labelled tree (for counting).
    fold_constants : bool
        Drop constant-valued non-leaf sub-trees unless their value is a small (half-)integer.
    max_nodes : int
        Refuse (``SearchSpaceTooLarge``) when the library would exceed this many nodes.
    seed : int
        Seed of the hash weights.
    map_blocks : callable, optional
        ``map_blocks(task, specs) -> list of results`` evaluating ``task(spec)`` for every
        :class:`BlockSpec` of a grade, results in the order of ``specs`` (the Ray backend,
        :meth:`icml26.srfpt.distributed.RayMap.blocks`); default: one after the other in this process. The
        library is the same whichever map runs the blocks.

    Returns
    -------
    Library
    """
    if mode not in ("size", "depth"):
        raise ValueError(f"mode must be 'size' or 'depth'; got {mode!r}")
    probes = np.asarray(probes, dtype=np.float64)
    if probes.ndim != 2:
        raise ValueError(f"probes must have shape (P, v); got {probes.shape}")
    lo = 1 if mode == "size" else 0
    if max_grade < lo:
        raise ValueError(f"max {mode} must be >= {lo}; got {max_grade}")
    ops = tuple(ops)
    n_probe, n_vars = probes.shape
    weights = np.random.default_rng(seed).integers(1, 2**63, size=n_probe, dtype=np.uint64) | np.uint64(1)

    # leaves (grade lo): variables, then constants  -- values (L, P)
    leaf_vals = np.vstack([probes.T, np.repeat(np.asarray(constants, float)[:, None], n_probe, axis=1)])
    n_leaf = leaf_vals.shape[0]
    if n_leaf == 0:
        raise ValueError("no leaves: give at least one variable or constant")
    cols = {
        "op": [np.r_[np.full(n_vars, VAR), np.full(len(constants), CONST)]],
        "left": [np.r_[np.arange(n_vars), np.arange(len(constants))]],
        "right": [np.full(n_leaf, -1)],
        "grade": [np.full(n_leaf, lo)],
        "size": [np.ones(n_leaf, dtype=np.int64)],
        "depth": [np.zeros(n_leaf, dtype=np.int64)],
    }
    values = leaf_vals
    size_arr, depth_arr = cols["size"][0], cols["depth"][0]
    grade_ranges = {lo: (0, n_leaf)}
    seen = np.sort(_hash_rows(leaf_vals, weights))
    n_candidates = [0] * lo + [n_leaf]

    for g in range(lo + 1, max_grade + 1):
        # the grade's work, partitioned by root operator and child grades (and left-child row ranges)
        specs = [
            BlockSpec(code, grade_ranges[gi], grade_ranges.get(gj), gi == gj, rows)
            for code, op in enumerate(ops)
            for gi, gj in _grade_plan(g, lo, mode, op, dedup)
            if gi in grade_ranges and (gj < 0 or gj in grade_ranges)
            for rows in [grade_ranges[gi]]
        ]
        state = GradeState(ops, values, seen, weights, dedup, fold_constants)
        if map_blocks is None:
            results = [state.run(spec) for spec in specs]
        else:
            results = map_blocks(state, specs)
        parts = [part for block_parts, _ in results for part in block_parts]  # (hash, op, left, right)
        n_cand = sum(n for _, n in results)
        n_candidates.append(n_cand)
        if not parts:
            grade_ranges[g] = (len(values), len(values))
            continue
        h, op_c, left, right = (np.concatenate(p) for p in zip(*parts, strict=True))
        if dedup:  # one tree per function within the grade: the first generated
            _, first = np.unique(h, return_index=True)
            first = np.sort(first)
            first = first[np.argsort(op_c[first], kind="stable")]  # one contiguous block per operator
            h, op_c, left, right = h[first], op_c[first], left[first], right[first]
            new_vals = _apply(ops, op_c, left, right, values)
            seen = np.sort(np.concatenate([seen, h]))
        else:  # the candidate values themselves, in blocks per operator
            order = np.argsort(op_c, kind="stable")
            new_vals, op_c, left, right = h[order], op_c[order], left[order], right[order]
        if len(values) + len(op_c) > max_nodes:
            raise SearchSpaceTooLarge(
                f"the library would exceed max_nodes={max_nodes:,} distinct functions at {mode} {g} "
                f"({len(values) + len(op_c):,} so far); lower the bound or raise max_nodes / use force"
            )
        start = len(values)
        values = np.vstack([values, new_vals])
        grade_ranges[g] = (start, len(values))
        unary = right < 0
        r_size = np.where(unary, 0, size_arr[np.maximum(right, 0)])
        r_depth = np.where(unary, 0, depth_arr[np.maximum(right, 0)])
        new_size = 1 + size_arr[left] + r_size
        new_depth = 1 + np.maximum(depth_arr[left], r_depth)
        size_arr, depth_arr = np.r_[size_arr, new_size], np.r_[depth_arr, new_depth]
        for key, arr in (("op", op_c), ("left", left), ("right", right), ("grade", np.full(len(op_c), g))):
            cols[key].append(arr)
        logger.info("%s %d: %d candidates, %d new functions", mode, g, n_cand, len(op_c))

    return Library(
        ops=ops,
        constants=tuple(float(c) for c in constants),
        mode=mode,
        op=np.concatenate(cols["op"]).astype(np.int64),
        left=np.concatenate(cols["left"]).astype(np.int64),
        right=np.concatenate(cols["right"]).astype(np.int64),
        grade=np.concatenate(cols["grade"]).astype(np.int64),
        size=size_arr,
        depth=depth_arr,
        values=values,
        n_candidates=n_candidates,
    )


@dataclass(frozen=True)
class BlockSpec:
    """One unit of a grade's work: operator ``code`` on children of grades spanning node ranges ``range_i``
    (left) and ``range_j`` (right; None for unary), restricted to left children ``rows = (start, stop)``."""

    code: int
    range_i: tuple[int, int]
    range_j: tuple[int, int] | None
    same_grade: bool
    rows: tuple[int, int]

    def split(self, pieces: int) -> list[BlockSpec]:
        """At most ``pieces`` specs over consecutive left-row ranges, cut where :func:`_candidates` cuts its
        chunks, so the pieces' candidates, concatenated, are this spec's exactly."""
        step = _chunk_rows(self.range_j)
        starts = list(range(self.rows[0], self.rows[1], step))
        if pieces <= 1 or len(starts) <= 1:
            return [self]
        per = -(-len(starts) // pieces)
        cuts = [*starts[::per], self.rows[1]]
        return [
            BlockSpec(self.code, self.range_i, self.range_j, self.same_grade, (a, b))
            for a, b in itertools.pairwise(cuts)
        ]

    @property
    def work(self) -> int:
        """Candidates this spec generates (before the triangle cut of commutative operators)."""
        mj = 1 if self.range_j is None else self.range_j[1] - self.range_j[0]
        return (self.rows[1] - self.rows[0]) * mj


@dataclass
class GradeState:
    """What every block of a grade reads: the library's values so far and the hashes already seen."""

    ops: tuple[Primitive, ...]
    values: np.ndarray
    seen: np.ndarray
    weights: np.ndarray
    dedup: bool
    fold_constants: bool

    def run(self, spec: BlockSpec) -> tuple[list[tuple[np.ndarray, ...]], int]:
        """New candidates ``[(hash or values, op, left, right), ...]`` of one block and how many it tried."""
        op, code = self.ops[spec.code], spec.code
        parts, n_cand = [], 0
        blocks = _candidates(op, self.values, spec.range_i, spec.range_j, spec.same_grade, self.dedup, spec.rows)
        for left, right, cand in blocks:
            n_cand += len(left)
            if not self.dedup:
                parts.append((cand, np.full(len(left), code), left, right))
                continue
            ok = np.isfinite(cand).all(axis=1) & (np.abs(cand) < _BIG).all(axis=1)
            if self.fold_constants:
                flat = np.ptp(cand, axis=1) <= 1e-9 * (1 + np.abs(cand[:, 0]))
                ok &= ~flat | _is_simple_constant(cand[:, 0])
            h = _hash_rows(cand[ok], self.weights)
            left, right = left[ok], right[ok]
            pos = np.minimum(np.searchsorted(self.seen, h), len(self.seen) - 1)
            fresh = self.seen[pos] != h
            h, first = np.unique(h[fresh], return_index=True)
            parts.append((h, np.full(len(h), code), left[fresh][first], right[fresh][first]))
        return parts, n_cand


def _chunk_rows(range_j) -> int:
    """Left children per numpy call of :func:`_candidates`."""
    if range_j is None:
        return _CHUNK
    return max(1, _CHUNK // max(1, range_j[1] - range_j[0]))


def _candidates(op, values, range_i, range_j, same_grade, dedup, rows=None):
    """Yield blocks ``(left ids, right ids, candidate values (K, P))`` of one operator on two grades
    (left children restricted to ``rows = (start, stop)`` within ``range_i``)."""
    i0, i1 = range_i if rows is None else rows
    with np.errstate(all="ignore"):
        if op.arity == 1:
            for s in range(i0, i1, _chunk_rows(None)):
                ids = np.arange(s, min(i1, s + _CHUNK))
                yield ids, np.full(len(ids), -1), op.fn(values[ids])
            return
        j0, j1 = range_j
        mj = j1 - j0
        if mj == 0 or i1 == i0:
            return
        step = _chunk_rows(range_j)
        triangular = same_grade and dedup and op.commutative
        for s in range(i0, i1, step):
            a = np.repeat(np.arange(s, min(i1, s + step)), mj)
            b = np.tile(np.arange(j0, j1), min(i1, s + step) - s)
            if triangular:
                keep = b >= a
                a, b = a[keep], b[keep]
            yield a, b, op.fn(values[a], values[b])


def _apply(ops, op_c, left, right, values) -> np.ndarray:
    """Values of new nodes from their children's values, one numpy call per operator."""
    out = np.empty((len(op_c), values.shape[1]))
    with np.errstate(all="ignore"):
        for code in np.unique(op_c):
            m = op_c == code
            op = ops[code]
            out[m] = op.fn(values[left[m]]) if op.arity == 1 else op.fn(values[left[m]], values[right[m]])
    return out
