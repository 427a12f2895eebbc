"""srfpt — exhaustive, parameterized symbolic regression and executable complexity results.

Implements the tractable side and an executable hardness gadget of "When Is Symbolic Regression
Tractable?" (ICML 2026): symbolic regression (SR) is fixed-parameter tractable in expression depth or tree
size -- :class:`ExhaustiveSR` enumerates every distinct function up to a size or depth bound (canonical
forms, shared sub-trees, vectorised evaluation, closed-form linear scaling, Gauss-Newton constants) and
returns the Pareto front as sympy expressions, in time f(k) * O(n) -- and W[1]-hard in the number of
variables or primitives used (:func:`clique_to_sr`, a parameterized reduction from k-Clique checked by
brute force). Exact tree counts by recurrence and enumeration are in :mod:`icml26.srfpt.counting`;
Nguyen and hand-written Feynman-style problems in :mod:`icml26.srfpt.data`.

Reference: "When Is Symbolic Regression Tractable?", ICML 2026 (poster 63583; abstract only).
"""

# Each public name and its module, imported on first use: sympy, scikit-learn and pandas load only when their parts
# are used, so the command line's parser (and --help) starts fast (PEP 562).
from icml26._util.lazy import lazy_exports

_LAZY = {
    "count_trees_by_depth": "counting",
    "count_trees_by_size": "counting",
    "PROBLEMS": "data",
    "get_problem": "data",
    "sample": "data",
    "SearchSpaceTooLarge": "enumerate",
    "SearchCost": "opcount",
    "counted_search": "opcount",
    "clique_to_sr": "reduction",
    "solve_sr_instance": "reduction",
    "solve_sr_witness": "reduction",
    "ExhaustiveSR": "search",
    "ParetoPoint": "search",
    "estimate_trees": "search",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "PROBLEMS",
    "ExhaustiveSR",
    "ParetoPoint",
    "SearchCost",
    "SearchSpaceTooLarge",
    "clique_to_sr",
    "count_trees_by_depth",
    "count_trees_by_size",
    "counted_search",
    "estimate_trees",
    "get_problem",
    "sample",
    "solve_sr_instance",
    "solve_sr_witness",
]
