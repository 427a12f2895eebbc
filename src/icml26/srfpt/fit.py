"""Scoring the enumerated library on the data, and fitting the constants of the best trees.

Constant model (the FPT claim needs one, see the paper notes): every tree ``f`` is scored as the
linearly-scaled model ``a + b f(x)`` whose two constants have the closed-form least-squares solution
(Keijzer's linear scaling)

    b = cov(f, y) / var(f),   a = mean(y) - b mean(f),   MSE = var(y) - cov(f, y)^2 / var(f)      (Eq. F1)

computed from running sums over the data in O(n) per tree. The constant leaves inside the best trees
are then refined by a few damped Gauss-Newton (Levenberg-Marquardt) steps on all parameters.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import sympy

from icml26.srfpt.enumerate import CONST, VAR, Library

Tree = tuple  # ("var", j) | ("const", value) | (op_index, child) | (op_index, left, right)


#: the rows are scored in this many groups, each summed on its own and the group sums added in order: a
#: distributed run (one task per group) then adds the same numbers in the same order as one process
SCORE_GROUPS = 16


def score_library(
    lib: Library,
    X: np.ndarray,
    y: np.ndarray,
    *,
    linear_scaling: bool = True,
    chunk_elements: int = 1 << 23,
    map_groups=None,
) -> np.ndarray:
    """Mean squared error of every library node on the full data (``inf`` for invalid trees).

    Streams over chunks of rows, so memory is ``O(M * chunk)`` and time ``O(M * n)``: linear in ``n``.

    Parameters
    ----------
    lib : Library
    X : ndarray of shape (n, v)
    y : ndarray of shape (n,)
    linear_scaling : bool
        Score ``a + b f`` with Eq. F1 (True) or ``f`` itself.
    map_groups : callable, optional
        ``map_groups(task, ranges) -> list`` evaluating ``task(range)`` for each row range (the Ray backend,
        :meth:`icml26.srfpt.distributed.RayMap.groups`); default: one after the other. Same result either way.

    Returns
    -------
    ndarray of shape (M,)
    """
    n, m = len(y), lib.n_nodes
    rows = int(max(1, min(n, max(16, chunk_elements // max(m, 1)))))
    chunk_starts = list(range(0, n, rows))
    per = -(-len(chunk_starts) // SCORE_GROUPS)
    cuts = [*chunk_starts[::per], n]
    task = ScoreTask(lib, X, y, linear_scaling, rows)
    ranges = list(itertools.pairwise(cuts))
    parts = [task.run(r) for r in ranges] if map_groups is None else map_groups(task, ranges)
    s2 = np.zeros(m)
    s1y = np.zeros((m, 2))  # columns: sum of (f - shift) * (y - mean y), sum of (f - shift)
    with np.errstate(all="ignore"):
        for p2, p1y in parts:  # in row order, whichever process computed them
            s2 += p2
            s1y += p1y
        bad = ~np.isfinite(s2) | ~np.isfinite(s1y).all(axis=1)
        if linear_scaling:
            yc = y - y.mean()
            mean_d = s1y[:, 1] / n
            var_f = s2 / n - mean_d**2
            cov = s1y[:, 0] / n
            var_y = float(np.mean(yc**2))
            flat = var_f <= 1e-12 * (s2 / n + 1e-300)
            mse = np.where(flat, var_y, var_y - cov**2 / np.where(flat, 1.0, var_f))
            mse = np.maximum(mse, 0.0)
        else:
            mse = s2 / n
    mse[bad | ~np.isfinite(mse)] = np.inf
    return mse


class ScoreTask:
    """Running sums of every library node over one range of rows (a picklable unit of :func:`score_library`)."""

    def __init__(self, lib: Library, X: np.ndarray, y: np.ndarray, linear_scaling: bool, rows: int):
        self.lib, self.X, self.y, self.linear_scaling, self.rows = lib, X, y, linear_scaling, rows

    def run(self, row_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """``(sum of squares (M,), [sum of products with centred y, sum] (M, 2))`` over ``row_range``."""
        lib, X, y = self.lib, self.X, self.y
        m = lib.n_nodes
        shift = lib.values.mean(axis=1)[:, None]  # (M, 1) conditioning of the running sums
        yc = y - y.mean()
        s2 = np.zeros(m)
        s1y = np.zeros((m, 2))
        blocks = _op_blocks(lib)
        var_nodes = np.flatnonzero(lib.op == VAR)
        const_nodes = np.flatnonzero(lib.op == CONST)
        consts = np.asarray(lib.constants)[lib.left[const_nodes]]
        with np.errstate(all="ignore"):
            for start in range(row_range[0], row_range[1], self.rows):
                xc = X[start : min(start + self.rows, row_range[1])]
                r = len(xc)
                vals = np.empty((m, r))  # (M, chunk): every function on these rows
                vals[var_nodes] = xc[:, lib.left[var_nodes]].T
                vals[const_nodes] = consts[:, None]
                for code, a, b in blocks:  # children first: blocks are in grade order
                    op = lib.ops[code]
                    if op.arity == 1:
                        op.fn(vals[lib.left[a:b]], out=vals[a:b])
                    else:
                        op.fn(vals[lib.left[a:b]], vals[lib.right[a:b]], out=vals[a:b])
                if self.linear_scaling:
                    vals -= shift
                    s1y += vals @ np.column_stack([yc[start : start + r], np.ones(r)])
                else:
                    vals -= y[None, start : start + r]
                s2 += np.einsum("ij,ij->i", vals, vals)  # non-finite when any value is
        return s2, s1y


def _op_blocks(lib: Library) -> list[tuple[int, int, int]]:
    """(op, start, stop): contiguous node ranges of one operator within one grade, in grade order."""
    op = lib.op
    change = np.flatnonzero((np.diff(op) != 0) | (np.diff(lib.grade) != 0)) + 1
    starts = np.r_[0, change]
    stops = np.r_[change, len(op)]
    return [(int(op[a]), int(a), int(b)) for a, b in zip(starts, stops, strict=True) if op[a] >= 0]


def node_tree(lib: Library, node: int) -> Tree:
    """Expand a DAG node into an explicit tree (nested tuples)."""
    code = int(lib.op[node])
    if code == VAR:
        return ("var", int(lib.left[node]))
    if code == CONST:
        return ("const", lib.constants[int(lib.left[node])])
    if lib.ops[code].arity == 1:
        return (code, node_tree(lib, int(lib.left[node])))
    return (code, node_tree(lib, int(lib.left[node])), node_tree(lib, int(lib.right[node])))


def tree_constants(tree: Tree) -> list[float]:
    """Constant leaves in depth-first order."""
    if tree[0] == "var":
        return []
    if tree[0] == "const":
        return [float(tree[1])]
    return [c for child in tree[1:] for c in tree_constants(child)]


def eval_tree(tree: Tree, ops, X: np.ndarray, consts: list[float] | None = None) -> np.ndarray:
    """Evaluate a tree on ``X`` of shape (n, v); ``consts`` replaces the constant leaves in DFS order."""
    it = iter(consts) if consts is not None else None

    def rec(t: Tree) -> np.ndarray:
        if t[0] == "var":
            return X[:, t[1]]
        if t[0] == "const":
            return np.full(len(X), next(it) if it is not None else t[1])
        args = [rec(c) for c in t[1:]]
        return ops[t[0]].fn(*args)

    with np.errstate(all="ignore"):
        return np.asarray(rec(tree), dtype=np.float64) * np.ones(len(X))


def parse_tree(text: str, ops, variables: Sequence[str]) -> Tree:
    """Read a tree written as nested calls, e.g. ``"mul(x, add(x, 1))"``, over ``ops`` and ``variables``.

    Names of ``ops`` are operators, names in ``variables`` are variable leaves, numbers are constant leaves.
    """
    op_index = {p.name: i for i, p in enumerate(ops)}
    var_index = {name: j for j, name in enumerate(variables)}
    tokens = text.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()
    pos = 0

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError(f"unexpected end of tree {text!r}")
        pos += 1
        return tokens[pos - 1]

    def rec() -> Tree:
        tok = take()
        if tok in var_index:
            return ("var", var_index[tok])
        if tok in op_index:
            if take() != "(":
                raise ValueError(f"expected '(' after {tok!r} in {text!r}")
            args = [rec()]
            while (sep := take()) == ",":
                args.append(rec())
            if sep != ")" or len(args) != ops[op_index[tok]].arity:
                raise ValueError(f"{tok!r} needs {ops[op_index[tok]].arity} argument(s) in {text!r}")
            return (op_index[tok], *args)
        try:
            return ("const", float(tok))
        except ValueError:
            raise ValueError(f"unknown symbol {tok!r} in {text!r}") from None

    tree = rec()
    if pos != len(tokens):
        raise ValueError(f"trailing tokens in {text!r}")
    return tree


def tree_size(tree: Tree) -> int:
    """Number of nodes."""
    return 1 if tree[0] in ("var", "const") else 1 + sum(tree_size(c) for c in tree[1:])


def fit_tree(tree: Tree, ops, X: np.ndarray, y: np.ndarray, *, linear_scaling: bool = True, gn_steps: int = 5):
    """Fit ``a + b f(x; c)``: closed form in (a, b) (Eq. F1), then damped Gauss-Newton on (a, b, c).

    Returns
    -------
    params : ndarray
        ``[a, b, c_1 .. c_m]`` (``a = 0, b = 1`` without linear scaling).
    mse : float
        ``inf`` when the tree is not finite on the data.
    """
    with np.errstate(all="ignore"):  # overflowing trials are rejected, not warned about
        return _fit_tree(tree, ops, X, y, linear_scaling, gn_steps)


def _fit_tree(tree, ops, X, y, linear_scaling, gn_steps):
    consts = tree_constants(tree)
    f = eval_tree(tree, ops, X)
    if not np.isfinite(f).all():
        return np.r_[0.0, 1.0, consts], np.inf
    a, b = _linear_fit(f, y) if linear_scaling else (0.0, 1.0)
    theta = np.r_[a, b, consts]
    loss = float(np.mean((a + b * f - y) ** 2))
    if not consts or gn_steps <= 0 or loss <= 1e-24 * (np.var(y) + 1e-300):
        return theta, loss
    lam = 1e-3
    for _ in range(gn_steps):  # Levenberg-Marquardt-damped Gauss-Newton on the residual a + b f - y
        r, jac = _residual_and_jacobian(tree, ops, X, y, theta, linear_scaling)
        if r is None:
            break
        free = slice(0, None) if linear_scaling else slice(2, None)
        J = jac[:, free]
        A = J.T @ J
        step = np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), -J.T @ r) if len(A) else np.zeros(0)
        trial = theta.copy()
        trial[free] += step
        f_t = eval_tree(tree, ops, X, list(trial[2:]))
        new = float(np.mean((trial[0] + trial[1] * f_t - y) ** 2))
        if np.isfinite(new) and new < loss:
            theta, loss, lam = trial, new, lam / 3
        else:
            lam *= 10
    return theta, loss


def _linear_fit(f: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    fc = f - f.mean()
    var = float(fc @ fc)
    b = float(fc @ (y - y.mean())) / var if var > 1e-300 else 0.0
    return float(y.mean() - b * f.mean()), b


def _residual_and_jacobian(tree, ops, X, y, theta, linear_scaling):
    a, b, c = theta[0], theta[1], theta[2:]
    f = eval_tree(tree, ops, X, list(c))
    if not np.isfinite(f).all():
        return None, None
    cols = [np.ones_like(f), f]
    for k in range(len(c)):  # central finite differences in the constants
        h = 1e-6 * max(1.0, abs(c[k]))
        up, dn = c.copy(), c.copy()
        up[k] += h
        dn[k] -= h
        cols.append(b * (eval_tree(tree, ops, X, list(up)) - eval_tree(tree, ops, X, list(dn))) / (2 * h))
    jac = np.column_stack(cols)
    if not np.isfinite(jac).all():
        return None, None
    return a + b * f - y, jac


def round_constant(v: float, max_den: int = 12, tol: float = 1e-7) -> sympy.Expr:
    """A sympy number: a simple rational when ``v`` is within ``tol`` (relative) of one, else a Float."""
    if not np.isfinite(v):
        return sympy.nan
    r = sympy.Rational(v).limit_denominator(max_den)
    if abs(float(r) - v) <= tol * abs(v):
        return r
    return sympy.Float(v, 10)


def tree_sympy(tree: Tree, ops, symbols, consts: list[float] | None = None) -> sympy.Expr:
    """The tree as a sympy expression (constants rounded by :func:`round_constant`)."""
    it = iter(consts) if consts is not None else None

    def rec(t: Tree) -> sympy.Expr:
        if t[0] == "var":
            return symbols[t[1]]
        if t[0] == "const":
            return round_constant(float(next(it) if it is not None else t[1]))
        return ops[t[0]].sym(*[rec(c) for c in t[1:]])

    return rec(tree)


def model_sympy(tree: Tree, ops, symbols, params: np.ndarray, y_scale: float = 1.0) -> sympy.Expr:
    """``a + b f(x; c)`` as sympy; an offset below ``1e-10 * y_scale`` is numerical zero."""
    body = tree_sympy(tree, ops, symbols, list(params[2:]))
    a = 0.0 if abs(params[0]) <= 1e-10 * y_scale else float(params[0])
    return round_constant(a) + round_constant(float(params[1])) * body
