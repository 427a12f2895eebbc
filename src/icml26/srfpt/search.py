"""``ExhaustiveSR``: exhaustive symbolic regression up to a size or depth bound (the FPT algorithm).

Pipeline (one ``fit``):

1. estimate the number of labelled trees by the recurrence of :mod:`icml26.srfpt.counting` and refuse
   when it exceeds ``max_trees`` (unless ``force``);
2. enumerate every distinct function up to the bound on a few probe rows (:mod:`icml26.srfpt.enumerate`);
3. score every function on all ``n`` rows with closed-form linear scaling (Eq. F1, O(n) per function);
4. refit the ``n_refine`` best trees of each size exactly, Gauss-Newton on their constant leaves;
5. return the Pareto front (size vs MSE) as sympy expressions and pick the model of minimum description
   length, ``DL = n/2 log(MSE) + size log(|alphabet|) + p/2 log(n)`` (two-part code, BIC-style parameter
   cost; ESR uses a Fisher-information parameter cost instead).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from icml26.srfpt.counting import count_trees_by_depth, count_trees_by_size
from icml26.srfpt.enumerate import _BIG, Library, SearchSpaceTooLarge, enumerate_library
from icml26.srfpt.fit import Tree, eval_tree, fit_tree, model_sympy, node_tree, score_library, tree_constants
from icml26.srfpt.primitives import DEFAULT_OPS, parse_ops

logger = logging.getLogger(__name__)


@dataclass
class ParetoPoint:
    """One model of the Pareto front: the best tree of its size."""

    size: int
    mse: float
    expression: sympy.Expr
    description_length: float
    tree: Tree
    params: np.ndarray


#: what ``force`` may spend: library values (float64 per probe row) and labelled trees covered
_FORCE_BYTES = 4 * 2**30
_FORCE_TREES = 1e16


def estimate_trees(
    n_vars: int, ops: str | Sequence[str], constants: Sequence[float], *, max_size=None, max_depth=None
) -> int:
    """Number of labelled trees the search covers (exact, by recurrence): sizes 1..k or depths 0..D."""
    prims = parse_ops(ops)
    n_unary = sum(p.arity == 1 for p in prims)
    n_leaves, n_binary = n_vars + len(constants), len(prims) - n_unary
    if max_depth is not None:
        return count_trees_by_depth(int(max_depth), n_leaves, n_unary, n_binary)[-1]
    return sum(count_trees_by_size(int(max_size), n_leaves, n_unary, n_binary))


class ExhaustiveSR(RegressorMixin, BaseEstimator):
    """Exhaustive symbolic regression by size or depth (a scikit-learn regressor: ``clone``, pipelines, ``score``).

    Parameters
    ----------
    max_size : int
        Size bound k (number of nodes) when ``max_depth`` is None.
    max_depth : int or None
        Depth bound D; switches to depth-graded enumeration.
    ops : str or sequence of str
        Primitive names (:data:`icml26.srfpt.primitives.PRIMITIVES`).
    constants : sequence of float
        Constant leaves.
    linear_scaling : bool
        Fit ``a + b f`` in closed form (Eq. F1).
    n_probe : int
        Rows used to tell functions apart (all rows when ``n <= 2 n_probe``).
    n_refine : int
        Trees per size refitted exactly, with Gauss-Newton on their constants.
    gn_steps : int
        Gauss-Newton steps per refitted tree.
    fold_constants : bool
        See :func:`icml26.srfpt.enumerate.enumerate_library`.
    max_trees : float
        Refuse a search covering more labelled trees than this unless ``force``.
    max_nodes : int
        Refuse when the distinct-function library grows past this unless ``force``.
    force : bool
    random_state : int
        Seed of the probe-row choice and the hash.
    ray_address : str or None
        Run the enumeration and the scoring as Ray tasks (:mod:`icml26.srfpt.distributed`): ``"local"``
        starts a local Ray instance with ``n_workers`` CPUs, ``"auto"`` or ``"ray://host:port"`` joins a
        cluster. The Pareto front is exactly the one-process front. None: one process.
    n_workers : int or None
        CPUs of a local Ray instance (default: all of this machine's).
    seed : int or None
        Deprecated alias of ``random_state`` (kept for one release; setting it warns with a FutureWarning and
        overrides ``random_state``).
    """

    def __init__(
        self,
        max_size: int = 7,
        max_depth: int | None = None,
        ops: str | Sequence[str] = DEFAULT_OPS,
        constants: Sequence[float] = (1.0,),
        linear_scaling: bool = True,
        n_probe: int = 16,
        n_refine: int = 8,
        gn_steps: int = 5,
        fold_constants: bool = True,
        max_trees: float = 2e8,
        max_nodes: int = 4_000_000,
        force: bool = False,
        random_state: int = 0,
        ray_address: str | None = None,
        n_workers: int | None = None,
        seed: int | None = None,
    ):
        self.max_size = max_size
        self.max_depth = max_depth
        self.ops = ops
        self.constants = constants
        self.linear_scaling = linear_scaling
        self.n_probe = n_probe
        self.n_refine = n_refine
        self.gn_steps = gn_steps
        self.fold_constants = fold_constants
        self.max_trees = max_trees
        self.max_nodes = max_nodes
        self.force = force
        self.random_state = random_state
        self.ray_address = ray_address
        self.n_workers = n_workers
        self.seed = seed

    def fit(self, X, y, variable_names: Sequence[str] | None = None, *, library: Library | None = None) -> ExhaustiveSR:
        """Search every tree up to the bound.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_vars)
        y : array-like of shape (n_samples,)
        variable_names : sequence of str, optional
            Names of the sympy symbols (default ``x0, x1, ...``).
        library : Library, optional
            The ``library_`` of an earlier fit on the same ``X`` with the same settings and seed. The
            enumeration depends on ``X`` (its probe rows), not on ``y``, so step 2 is skipped; useful to
            search several targets (noise levels) on one design. Rejected when its probe rows differ.

        Returns
        -------
        self, with ``pareto_`` (list of ParetoPoint), ``expression_`` (sympy), ``tree_``, ``params_``,
        ``mse_``, ``size_``, ``library_``, ``n_trees_`` (labelled trees covered), ``n_distinct_``,
        ``n_evaluated_`` (trees evaluated on the probes), ``timings_``.
        """
        columns = getattr(X, "columns", None)  # a DataFrame's column names become the variable names
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
        self.random_state_ = self._seed()
        n_vars = X.shape[1]
        if variable_names is None and columns is not None:
            variable_names = [str(c) for c in columns]
            if len(set(variable_names)) != n_vars or not all(s.isidentifier() for s in variable_names):
                variable_names = None  # e.g. integer column labels: the default names x0, x1, ...
        names = _check_names(variable_names, n_vars)
        prims = parse_ops(self.ops)
        consts = tuple(float(c) for c in self.constants)
        if not all(math.isfinite(c) for c in consts):
            raise ValueError(f"constants must be finite; got {consts}")
        if isinstance(self.n_probe, bool) or not isinstance(self.n_probe, (int, np.integer)) or self.n_probe < 2:
            # one probe row makes every non-leaf tree look constant: constant folding then drops them all
            raise ValueError(f"n_probe must be an integer >= 2; got {self.n_probe!r}")
        mode, bound = ("depth", self.max_depth) if self.max_depth is not None else ("size", self.max_size)
        if int(bound) != bound or bound < (1 if mode == "size" else 0):
            raise ValueError(f"max_{mode} must be a positive integer; got {bound!r}")
        kw = {"max_depth": bound} if mode == "depth" else {"max_size": bound}
        self.n_trees_ = estimate_trees(n_vars, self.ops, consts, **kw)
        if self.n_trees_ > self.max_trees and not self.force:
            raise SearchSpaceTooLarge(
                f"the search covers {self.n_trees_:.3g} labelled trees (> max_trees={self.max_trees:.3g}); "
                "lower the bound or the operator/variable count, or pass force"
            )
        if self.n_trees_ > _FORCE_TREES:
            raise SearchSpaceTooLarge(
                f"the search covers {self.n_trees_:.3g} labelled trees (> {_FORCE_TREES:.0e}, the limit even with "
                "force); lower the bound or the operator/variable count"
            )
        if self.n_workers is not None and (
            isinstance(self.n_workers, bool) or not isinstance(self.n_workers, (int, np.integer)) or self.n_workers < 1
        ):
            raise ValueError(f"n_workers must be a positive integer or None; got {self.n_workers!r}")
        if self.ray_address is not None and (not isinstance(self.ray_address, str) or not self.ray_address.strip()):
            raise ValueError(f"ray_address must be 'local', 'auto' or a cluster address; got {self.ray_address!r}")
        if self.ray_address is None:
            return self._search(X, y, names, prims, consts, mode, bound, library, columns, None)
        from icml26.srfpt.distributed import ray_session

        with ray_session(str(self.ray_address), num_cpus=self.n_workers) as mapper:
            return self._search(X, y, names, prims, consts, mode, bound, library, columns, mapper)

    def _seed(self) -> int:
        """The seed of this fit: ``random_state``, or the deprecated ``seed`` (with a FutureWarning) when set."""
        value = self.random_state
        if self.seed is not None:
            warnings.warn(
                "ExhaustiveSR(seed=...) is deprecated and will be removed in the next release; use random_state=",
                FutureWarning,
                stacklevel=3,
            )
            value = self.seed
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2**32:
            raise ValueError(f"random_state must be an integer in [0, 2**32) or None; got {value!r}")
        return int(value)

    def _search(self, X, y, names, prims, consts, mode, bound, library, columns, mapper) -> ExhaustiveSR:
        n, n_vars = X.shape
        rng = np.random.default_rng(self.random_state_)
        t0 = time.perf_counter()
        if n <= 2 * self.n_probe:
            probes = np.unique(X, axis=0)
        else:  # a random subset of the rows, without duplicate points
            probes = np.unique(X[rng.choice(n, min(n, 4 * self.n_probe), replace=False)], axis=0)
            probes = probes[rng.permutation(len(probes))[: self.n_probe]]
        if len(probes) < 2:
            raise ValueError(
                "fewer than 2 distinct probe rows (are all rows of X identical?): "
                "no function of X can be told from a constant"
            )
        if float(np.max(np.abs(probes))) ** 2 >= _BIG:
            warnings.warn(
                f"|X| reaches {float(np.max(np.abs(probes))):.3g}: values of magnitude >= {_BIG:.0e} are treated as "
                "overflow, so products such as x*x are discarded from the search; rescale the columns",
                UserWarning,
                stacklevel=3,
            )
        if library is not None:
            same = (
                library.values.shape == (library.n_nodes, len(probes))
                and library.mode == mode
                and library.constants == consts
                and [p.name for p in library.ops] == [p.name for p in prims]
                and np.array_equal(library.values[:n_vars], probes.T)
                and int(library.grade.max()) <= int(bound)
            )
            if not same:
                raise ValueError("library= was enumerated on other probe rows or settings than this fit's")
            lib = library
        else:
            lib = enumerate_library(
                prims,
                probes,
                int(bound),
                constants=consts,
                mode=mode,
                fold_constants=self.fold_constants,
                # force lifts the node budget only up to what fits in memory (values are float64 per probe)
                max_nodes=max(self.max_nodes, _FORCE_BYTES // (8 * len(probes))) if self.force else self.max_nodes,
                seed=self.random_state_,
                map_blocks=None if mapper is None else mapper.blocks,
            )
        t1 = time.perf_counter()
        mse = score_library(
            lib, X, y, linear_scaling=self.linear_scaling, map_groups=None if mapper is None else mapper.groups
        )
        t2 = time.perf_counter()
        self.pareto_ = self._pareto(lib, mse, prims, X, y, names)
        t3 = time.perf_counter()
        best = min(self.pareto_, key=lambda p: p.description_length)
        self.library_ = lib
        self.approx_mse_ = mse
        self.n_distinct_ = lib.n_nodes
        self.n_evaluated_ = int(sum(lib.n_candidates))
        self.tree_, self.params_, self.mse_, self.size_ = best.tree, best.params, best.mse, best.size
        self.expression_ = best.expression
        self.symbols_ = names
        self.n_features_in_ = n_vars
        self.ops_ = prims
        self.timings_ = {"enumerate_s": t1 - t0, "score_s": t2 - t1, "refine_s": t3 - t2, "total_s": t3 - t0}
        return self

    def _pareto(self, lib: Library, mse: np.ndarray, prims, X, y, names) -> list[ParetoPoint]:
        symbols = tuple(sympy.Symbol(name, real=True) for name in names)
        n = len(y)
        alphabet = len(prims) + X.shape[1] + len(lib.constants)
        floor = 1e-20 * float(np.var(y)) + 1e-300
        y_scale = float(np.max(np.abs(y)))
        best_by_size: dict[int, tuple[float, Tree, np.ndarray]] = {}
        for s in np.unique(lib.size):
            ids = np.flatnonzero((lib.size == s) & np.isfinite(mse))
            for node in ids[np.argsort(mse[ids], kind="stable")[: self.n_refine]]:
                tree = node_tree(lib, int(node))
                params, loss = fit_tree(tree, prims, X, y, linear_scaling=self.linear_scaling, gn_steps=self.gn_steps)
                if np.isfinite(loss) and (int(s) not in best_by_size or loss < best_by_size[int(s)][0]):
                    best_by_size[int(s)] = (loss, tree, params)
        if not best_by_size:
            raise ValueError("no tree is finite on the data (every candidate hit a domain error)")
        front: list[ParetoPoint] = []
        for s in sorted(best_by_size):
            loss, tree, params = best_by_size[s]
            if front and loss >= front[-1].mse * (1 - 1e-9) - 1e-300:
                continue  # dominated by a smaller tree
            moved = sum(abs(p - c) > 1e-9 for p, c in zip(params[2:], tree_constants(tree), strict=True))
            p = (2 if self.linear_scaling else 0) + moved
            dl = 0.5 * n * math.log(max(loss, floor)) + s * math.log(alphabet) + 0.5 * p * math.log(n)
            expr = model_sympy(tree, prims, symbols, params, y_scale)
            front.append(ParetoPoint(s, float(loss), expr, dl, tree, params))
        return front

    def predict(self, X) -> np.ndarray:
        """Predictions of the selected model, shape (n_samples,)."""
        check_is_fitted(self, "tree_")
        columns = getattr(X, "columns", None)
        fitted_on = list(map(str, getattr(self, "feature_names_in_", [])))
        if columns is not None and fitted_on and list(map(str, columns)) != fitted_on:
            raise ValueError(f"X has columns {list(map(str, columns))}; the model was fitted on {fitted_on}")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        f = eval_tree(self.tree_, self.ops_, X, list(self.params_[2:]))
        return self.params_[0] + self.params_[1] * f


def _check_names(names, n_vars: int) -> list[str]:
    if names is None:
        return [f"x{j}" for j in range(n_vars)]
    names = [str(s) for s in names]
    if len(names) != n_vars or len(set(names)) != n_vars or not all(s.isidentifier() for s in names):
        raise ValueError(f"need {n_vars} distinct identifier variable names; got {names}")
    return names
