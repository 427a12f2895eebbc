"""The paper's headline statements as executable checks (see README "Claims").

Complexity claims are judged on **operation counts** (:mod:`icml26.srfpt.opcount`), not on seconds: the
machine is shared and the statements are about the number of operations.

Contract v3: every claim runs three arms (``Arm``): the negative control sabotages the input (copied
variable columns, shuffled y, the gadget of the complete graph) and the positive control plants the effect
(the theory's labelled-tree count; for the recovery claims a function drawn at random from the search's own
library, of each target's size or depth, at the claim's noise levels, searched and measured like the
targets; the answer key of Eq. R1). ``MECHANISMS`` probes the deduplication of the FPT search and the clique
gadget's non-edge rows; ``MEASURES`` validates the form-recovery measure both ways.
"""

from __future__ import annotations

import functools
import itertools
import time

import networkx as nx
import numpy as np

from icml26.claims import Arm, ClaimResult, MeasureCheck, Scale, claim, mechanism
from icml26.srfpt.config import PRESETS
from icml26.srfpt.counting import count_trees_by_depth, count_trees_by_size
from icml26.srfpt.data import get_problem, sample
from icml26.srfpt.fit import Tree, eval_tree, fit_tree, node_tree, parse_tree, tree_size
from icml26.srfpt.opcount import counted_search
from icml26.srfpt.primitives import DEFAULT_OPS, parse_ops
from icml26.srfpt.reduction import clique_to_sr, excess_loss, has_clique_bruteforce, solve_sr_witness
from icml26.srfpt.search import ExhaustiveSR

# The prototype's basis of the paper notes: 2 unary, 4 binary operators, constant 1.
PROTO_OPS = ("sin", "cos", "add", "sub", "mul", "div")

# Ground truth for the recovery claims: one hand-written tree per target over the *default* operator set
# (constant leaf 1, linear scaling a + b f free). Each is checked by the recovery measure itself on every
# run (the truth must count as recovered). SIZE_TREES are small in size, DEPTH_TREES small in depth.
SIZE_TREES = {
    "nguyen-1": "mul(x, add(mul(x, add(x, 1)), 1))",  # 9
    "nguyen-5": "mul(sin(mul(x, x)), cos(x))",  # 7
    "nguyen-6": "add(sin(x), sin(mul(x, add(x, 1))))",  # 9
    "nguyen-8": "exp(div(log(x), add(1, 1)))",  # 7: sqrt(x)
    "photon-energy": "div(1, lam)",  # 3
    "kepler-third-law": "mul(a, exp(div(log(a), add(1, 1))))",  # 9: a sqrt(a)
    "nguyen-9": "add(sin(x), sin(mul(y, y)))",  # 7
    "nguyen-10": "mul(sin(x), cos(y))",  # 5
    "nguyen-11": "exp(mul(y, log(x)))",  # 6
    "kinetic-energy": "mul(m, mul(v, v))",  # 5
    "ohm-power": "div(mul(V, V), R)",  # 5
    "spring-energy": "mul(k, mul(x, x))",  # 5
    "de-broglie": "div(1, mul(m, v))",  # 5
    "boltzmann-factor": "div(1, exp(div(E, T)))",  # 6
    "thin-lens": "div(mul(d1, d2), add(d1, d2))",  # 7
    "velocity-addition": "div(add(u, v), add(1, mul(u, v)))",  # 9
    "wave-speed": "exp(div(log(div(T, mu)), add(1, 1)))",  # 9
    "pendulum-period": "exp(div(log(div(L, g)), add(1, 1)))",  # 9
    "escape-velocity": "exp(div(log(div(M, r)), add(1, 1)))",  # 9
    "ideal-gas": "div(mul(n, T), V)",  # 5
    "gravitation": "div(mul(m1, m2), mul(r, r))",  # 7
    "coulomb": "div(mul(q1, q2), mul(r, r))",  # 7
    "centripetal-force": "div(mul(m, mul(v, v)), r)",  # 7
    "radioactive-decay": "div(N0, exp(mul(lam, t)))",  # 6
    "harmonic-oscillator": "mul(A, cos(mul(w, t)))",  # 6
    "doppler": "div(mul(f, c), sub(c, v))",  # 7
    "inverse-square-intensity": "div(P, mul(r, r))",  # 5
}
DEPTH_TREES = {
    "nguyen-1": "add(mul(mul(x, x), add(x, 1)), x)",  # depth 3
    "nguyen-5": "mul(sin(mul(x, x)), cos(x))",  # 3
    "nguyen-8": "exp(div(log(x), add(1, 1)))",  # 3
    "photon-energy": "div(1, lam)",  # 1
    "nguyen-9": "add(sin(x), sin(mul(y, y)))",  # 3
    "nguyen-10": "mul(sin(x), cos(y))",  # 2
    "nguyen-11": "exp(mul(y, log(x)))",  # 3
    "kinetic-energy": "mul(m, mul(v, v))",  # 2
    "boltzmann-factor": "div(1, exp(div(E, T)))",  # 3
}
HELDOUT_N, HELDOUT_SEED, HELDOUT_TOL = 2000, 12345, 1e-6


def _slope(x, y) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def _tree_depth(tree: Tree) -> int:
    return 0 if tree[0] in ("var", "const") else 1 + max(_tree_depth(c) for c in tree[1:])


def form_recovered(tree: Tree, prims, problem) -> tuple[bool, float]:
    """Is ``tree`` the target's form? Refit its constants (a, b and the inner ones) on 2000 held-out noiseless
    points of the target's range; recovered when ``max |model - f| <= 1e-6 max |f|``. Also returns that
    relative max error."""
    X, y = sample(problem, HELDOUT_N, seed=HELDOUT_SEED)
    return _refit_recovered(tree, prims, X, y)


def _refit_recovered(tree: Tree, prims, X: np.ndarray, y: np.ndarray) -> tuple[bool, float]:
    """:func:`form_recovered` on given held-out points ``(X, y)`` (noiseless values of the target)."""
    params, _ = fit_tree(tree, prims, X, y, gn_steps=30)
    with np.errstate(all="ignore"):
        pred = params[0] + params[1] * eval_tree(tree, prims, X, list(params[2:]))
    err = float(np.max(np.abs(pred - y)) / np.max(np.abs(y))) if np.isfinite(pred).all() else np.inf
    return err <= HELDOUT_TOL, err


def _planted_function(lib, prims, grade: str, value: int, X: np.ndarray, Xh: np.ndarray, rng) -> Tree:
    """The positive controls' planted target: a function drawn at random from the search's own library (so a
    tree within the bound computes it) whose smallest tree has ``grade`` (``"size"`` or ``"depth"``) ``value``,
    like the target it stands in for. Drawn before any search on it, by rules fixed in advance: finite on the
    training rows ``X`` and the held-out rows ``Xh``, |f| < 1e6 there, and not constant on ``X`` (std > 1e-3 of
    max |f|); the first such function of a seeded random order."""
    nodes = np.flatnonzero(getattr(lib, grade) == value)
    for node in rng.permutation(nodes):
        tree = node_tree(lib, int(node))
        f, fh = eval_tree(tree, prims, X), eval_tree(tree, prims, Xh)
        if not (np.isfinite(f).all() and np.isfinite(fh).all()):
            continue
        top = max(np.max(np.abs(f)), np.max(np.abs(fh)))
        if top < 1e6 and np.std(f) > 1e-3 * top:
            return tree
    raise ValueError(f"no usable function of {grade} {value} in the library")


def _nrmse(pred: np.ndarray, y: np.ndarray) -> float:
    """RMSE of the model as fitted vs the noiseless truth on the held-out points, over std of the truth."""
    return float(np.sqrt(np.mean((pred - y) ** 2)) / np.std(y)) if np.isfinite(pred).all() else np.inf


def _counter_matches_recurrence(prims, n_vars: int, k: int, rng) -> bool:
    """Ground truth of the operation counter: without deduplication the enumeration evaluates every labelled
    tree of size 2..k once per probe row (Eq. C1), and scoring evaluates every non-leaf function once per row."""
    X = rng.uniform(-1, 1, (50, n_vars))
    u = sum(p.arity == 1 for p in prims)
    raw = counted_search(prims, X, X[:, 0], k, n_probe=4, dedup=False)
    eq_c1 = sum(count_trees_by_size(k, n_vars + 1, u, len(prims) - u)[2:]) * 4
    deduped = counted_search(prims, X, X[:, 0], k, n_probe=4)
    return raw.enumerate_ops == eq_c1 and deduped.score_ops == (deduped.n_distinct - deduped.n_leaves) * len(X)


@claim(
    "srfpt/fpt-in-size-v2",
    statement="SR is FPT in tree size but XP in the number of variables (operation counts): at fixed size k the "
    "exhaustive search finds exactly the same number of distinct functions for every data size n and its "
    "operation count grows at most linearly in n (log-log slope <= 1.01 for every k); at fixed n the exponent "
    "of its operation count in the number of variables v (log-log slope over v) grows with k, at every step "
    "and by >= 0.5 from the smallest to the largest k",
    paper="Abstract: FPT parameterized by tree size; W[1]-hard parameterized by the number of variables",
    control="variable selection switched off: the v variable columns are copies of one column, so the search "
    "tells apart a single variable whatever v is; the exponent of v then does not grow with k and the claim must "
    "fail",
    positive="the theory's count in the search's place: every labelled tree enumerated without deduplication "
    "(Eq. C1, the C_k (|P| + v)^k count of the FPT argument), same n and v sweeps, same slope fits and thresholds",
    mechanisms=("deduplication",),
    by_construction="review (referee, issue 14): both parts are structural properties of the exhaustive enumeration. "
    "(a) counted_search enumerates on the first 16 rows of nested data, so the library and E(k) are identical for "
    "every n and ops = E(k) + (M - L) n exactly (the claim's own counter check): a log-log slope <= 1 in n "
    "cannot fail - the reason fpt-in-size-v1 was retired, now on counts instead of seconds. (b) The degree in v "
    "of the number of distinct trees grows with the number of leaves a size-k tree holds, so the exponent of v "
    "rises with k for any correct enumeration; it describes this algorithm, not a lower bound",
)
def fpt_in_size(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    prims = parse_ops(PROTO_OPS)
    rng = np.random.default_rng(seed)
    dedup = arm is not Arm.POSITIVE  # the positive control counts every labelled tree (the theory's count)
    counter_ok = _counter_matches_recurrence(prims, 2, 5, rng)

    # (a) data size n at fixed k: nested data X[:n], so every n has the same probe rows
    ks, ns = cfg.size_ks, np.array(cfg.size_ns)
    X_all, y_all = sample(get_problem("nguyen-5"), int(ns.max()), seed=seed)
    ops_n, same_distinct, slope_n = {}, [], {}
    for k in ks:
        costs = [counted_search(prims, X_all[:n], y_all[:n], k, dedup=dedup) for n in ns]
        same_distinct.append(len({c.n_distinct for c in costs}) == 1)
        ops_n[k] = np.array([c.total_ops for c in costs], float)
        slope_n[k] = _slope(ns, ops_n[k])

    # (b) number of variables v at fixed n and k
    vs = np.array(cfg.size_vs)
    ops_v = {k: [] for k in ks}
    for v in vs:
        X = rng.uniform(-2, 2, (cfg.size_v_n, int(v)))
        if arm is Arm.NEGATIVE:  # variable selection off: every column is the first one
            X = np.repeat(X[:, :1], int(v), axis=1)
        for k in ks:
            ops_v[k].append(counted_search(prims, X, X[:, 0], k, dedup=dedup).total_ops)
    exp_v = np.array([_slope(vs, ops_v[k]) for k in ks])
    grows = bool(np.all(np.diff(exp_v) > 0))
    rise = float(exp_v[-1] - exp_v[0])
    ok = counter_ok and all(same_distinct) and max(slope_n.values()) <= 1.01 and grows and rise >= 0.5

    import matplotlib.pyplot as plt

    fig1, ax = plt.subplots(figsize=(5, 3.6))
    for k in ks:
        ax.loglog(ns, ops_n[k], "o-", ms=3, label=f"k={k} (slope {slope_n[k]:.2f})")
    ax.set(xlabel="data points n", ylabel="element operations", title="cost vs n at fixed size (v = 1)")
    ax.legend(fontsize=7)
    fig2, ax = plt.subplots(figsize=(5, 3.6))
    for k, e in zip(ks, exp_v, strict=True):
        ax.loglog(vs, ops_v[k], "o-", ms=3, label=f"k={k} (exponent {e:.2f})")
    ax.set(xlabel="variables v", ylabel="element operations", title=f"cost vs v at fixed size (n = {cfg.size_v_n})")
    ax.legend(fontsize=7)
    measured = {
        "op counter == Eq. C1 x probes": float(counter_ok),
        "distinct functions identical across n": float(np.mean(same_distinct)),
        "max over k of log-log slope ops vs n": max(slope_n.values()),
        f"exponent of v at k={ks[0]}": float(exp_v[0]),
        f"exponent of v at k={ks[-1]}": float(exp_v[-1]),
        "exponent rise (largest - smallest k)": rise,
        "exponent of v grows at every k step": float(grows),
    }
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        paper={"cost": "f(k) poly(n) in size k; no f(k) poly(n) in the number of variables unless FPT = W[1]"},
        reason=""
        if ok
        else f"counter {counter_ok}, same distinct {same_distinct}, slopes in n "
        f"{[round(s, 3) for s in slope_n.values()]}, exponents of v {np.round(exp_v, 2).tolist()}",
        figures={"ops-vs-n": fig1, "ops-vs-v": fig2},
    )


@claim(
    "srfpt/fpt-in-depth-v3",
    statement="SR is FPT in depth, the regime bounded-depth search exploits: depth-3 exhaustive search with the full "
    "default operator set (8 operators) recovers the form of every target that has a tree of depth <= 3 over it "
    "(constants refit on 2000 held-out noiseless points, max error <= 1e-6 max |f|). The number of labelled trees "
    "of depth <= 3 (Eq. C2, finite whatever n) and the distinct functions the search keeps are reported, not "
    "judged: fpt-in-depth-v2's n sweep restated that count (ops = E(D) + (M - L) n)",
    paper="Abstract; theorem 'FPT parameterized by expression depth'",
    control="shuffled ground truth: y is permuted against X before the depth-3 searches, so no target can be "
    "recovered and the claim must fail",
    positive="each target replaced by a function planted from the depth-3 search's own library (drawn at random on "
    "its own seed stream, of the target's depth, finite and non-constant on the data: a tree of depth <= 3 computes "
    "it), then the same search, recovery measure and threshold; it fails if selection or the measure miss a form "
    "that is in the search space",
    mechanisms=("deduplication",),
)
def fpt_in_depth(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    prims = parse_ops(DEFAULT_OPS)
    u = sum(p.arity == 1 for p in prims)
    labelled = count_trees_by_depth(3, 2, u, len(prims) - u)[3]  # Eq. C2: one variable + constant 1 (counted)
    planting = np.random.default_rng([seed, 1000])  # the positive control's own stream
    recovered, truth_ok, errors, distinct = [], [], {}, []
    for name in cfg.depth_targets:
        p = get_problem(name)
        truth = parse_tree(DEPTH_TREES[name], prims, p.variables)
        truth_ok.append(_tree_depth(truth) <= 3 and form_recovered(truth, prims, p)[0])  # measure on ground truth
        X, y = sample(p, seed=seed)
        Xh, yh = sample(p, HELDOUT_N, seed=HELDOUT_SEED)
        model = ExhaustiveSR(max_depth=3, ops=DEFAULT_OPS, max_trees=1e10, max_nodes=10**7, random_state=seed)
        if arm is Arm.NEGATIVE:  # shuffled ground truth
            y = np.random.default_rng(seed).permutation(y)
        if arm is Arm.POSITIVE:  # plant a function of the library (the enumeration depends on X only)
            library = model.fit(X, y, p.variables).library_
            planted = _planted_function(library, prims, "depth", _tree_depth(truth), X, Xh, planting)
            y, yh = eval_tree(planted, prims, X), eval_tree(planted, prims, Xh)
            model.fit(X, y, p.variables, library=library)
        else:
            model.fit(X, y, p.variables)
        distinct.append(model.n_distinct_)
        hit, errors[name] = _refit_recovered(model.tree_, prims, Xh, yh)
        recovered.append(hit)
    ok = all(truth_ok) and all(recovered)
    return ClaimResult(
        "holds" if ok else "fails",
        measured={
            "hand trees recognised by the measure": float(np.mean(truth_ok)),
            "depth-3 targets recovered (default ops)": float(np.mean(recovered)),
            "largest held-out error after the refit (relative max)": max(errors.values()),
            "labelled trees of depth <= 3 (Eq. C2, not judged)": float(labelled),
            "distinct functions the depth-3 search keeps, mean over targets (not judged)": float(np.mean(distinct)),
        },
        paper={"cost": "f(D) poly(n)"},
        reason=""
        if ok
        else f"truth {truth_ok}, recovered {dict(zip(cfg.depth_targets, recovered, strict=True))}, "
        f"held-out errors {', '.join(f'{k}: {v:.3g}' for k, v in errors.items())}",
    )


def _turan_plus_edge(graph: nx.Graph) -> nx.Graph:
    """Turan graph with one edge added inside a part: by Turan's theorem it has a k-clique."""
    plus = graph.copy()
    u, w = next(iter(nx.non_edges(graph)))
    plus.add_edge(u, w)
    return plus


def _planted(rng, k: int, max_vertices: int) -> nx.Graph:
    n = int(rng.integers(k + 2, max_vertices + 1))
    graph = nx.gnp_random_graph(n, float(rng.uniform(0.1, 0.4)), seed=int(rng.integers(2**31)))
    members = rng.choice(n, k, replace=False)
    graph.add_edges_from((int(a), int(b)) for j, a in enumerate(members) for b in members[j + 1 :])
    return graph


def _closed_form_witness(graph: nx.Graph, k: int) -> tuple[bool, np.ndarray]:
    """SR solvability by Eq. R1's closed form: the k-subset of least excess loss (2 x its missing edges); solvable
    iff that excess is 0, with the subset's indicator as the witness (no k-subset: unsolvable, no witness)."""
    n = graph.number_of_nodes()
    uses = np.zeros(n, dtype=np.int64)
    subsets = list(itertools.combinations(range(n), k))
    if not subsets:
        return False, uses
    missing = [sum(not graph.has_edge(a, b) for a, b in itertools.combinations(sub, 2)) for sub in subsets]
    best = subsets[int(np.argmin(missing))]
    if min(missing) > 0:
        return False, uses
    uses[list(best)] = 1
    return True, uses


@claim(
    "srfpt/w1-hardness-gadget-v2",
    statement="k-Clique reduces to SR with at most k variables (primitives {+}): for k = 3, 4, 5, on every graph "
    "with <= 6 vertices, on Turan graphs T(N, k-1) (densest graphs without a k-clique), on them plus one edge, and "
    "on random graphs with a planted k-clique, brute-force SR finds SSE <= tau iff brute-force search finds a "
    "k-clique, and every witness uses exactly k variables, once each, forming a k-clique",
    paper="Abstract; theorem 'W[1]-hard parameterized by the number of variables / primitives used'",
    control="the reduction does not encode the edges: the SR instance is built from the complete graph on the same "
    "vertices (no non-edge rows), so it is solvable whenever N >= k and the claim must fail on clique-free graphs",
    positive="the answer key in the SR solver's place: the best k-subset's SSE from Eq. R1's closed form (SSE - tau = "
    "2 x missing edges, evaluated on every k-subset), solvable iff it is tau, witness = that subset; same "
    "instances, agreement and witness checks",
    mechanisms=("gadget",),
)
def w1_hardness_gadget(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    instances = []  # (family, graph, k)
    small_graphs = [g for g in nx.graph_atlas_g() if 1 <= g.number_of_nodes() <= cfg.gadget_max_vertices]
    for k in cfg.gadget_ks:
        instances += [("all small graphs", g, k) for g in small_graphs]
        for n in range(k, cfg.turan_max_vertices + 1):
            turan = nx.turan_graph(n, k - 1)
            instances += [("Turan", turan, k), ("Turan + edge", _turan_plus_edge(turan), k)]
        instances += [("planted", _planted(rng, k, cfg.planted_max_vertices), k) for _ in range(cfg.planted_per_k)]

    agree, witness_ok, has, excess_ok, families = [], [], [], [], {}
    t0 = time.perf_counter()
    for family, graph, k in instances:
        clique = has_clique_bruteforce(graph, k)
        encoded = nx.complete_graph(graph.number_of_nodes()) if arm is Arm.NEGATIVE else graph  # the gadget's graph
        if arm is Arm.POSITIVE:
            solvable, uses = _closed_form_witness(encoded, k)
        else:
            solvable, _, uses = solve_sr_witness(clique_to_sr(encoded, k))
        agree.append(clique == solvable)
        has.append(clique)
        families.setdefault(family, []).append(clique == solvable)
        if solvable:  # the witness: exactly k variables, each once, pairwise adjacent in the input graph
            chosen = np.flatnonzero(uses)
            witness_ok.append(
                len(chosen) == k
                and bool(np.all(uses[chosen] == 1))
                and all(graph.has_edge(int(a), int(b)) for j, a in enumerate(chosen) for b in chosen[j + 1 :])
            )
        if graph.number_of_nodes() >= k:  # Eq. R1 identity on a random k-subset
            sub = rng.choice(graph.number_of_nodes(), k, replace=False)
            missing = sum(not graph.has_edge(int(a), int(b)) for j, a in enumerate(sub) for b in sub[j + 1 :])
            excess_ok.append(abs(excess_loss(graph, sub) - 2 * missing) < 1e-9)
    elapsed = time.perf_counter() - t0
    ok = all(agree) and all(witness_ok) and all(excess_ok) and 0 < np.mean(has) < 1
    measured = {
        "agreement (SR solvable == clique)": float(np.mean(agree)),
        "instances": float(len(instances)),
        "fraction with a clique": float(np.mean(has)),
        "witnesses with exactly k variables forming a clique": float(np.mean(witness_ok)) if witness_ok else 0.0,
        "excess = 2 x missing edges": float(np.mean(excess_ok)),
        "ms per instance": 1000 * elapsed / len(instances),
    }
    measured.update({f"agreement on {f}": float(np.mean(v)) for f, v in families.items()})
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        paper={"hardness": "W[1]-hard parameterized by the number of variables or primitives used"},
        elsewhere={"agreement SR solvable == clique, our reduction [reduction.py proof]": 1.0},
        reason=""
        if ok
        else f"agreement {np.mean(agree):.3f} "
        f"({', '.join(f'{f}: {np.mean(v):.3f}' for f, v in families.items())}), "
        f"witnesses {np.mean(witness_ok) if witness_ok else float('nan'):.3f}",
    )


@claim(
    "srfpt/exact-recovery-v2",
    statement="with one size bound for every target (9) and the default 8-operator set, exhaustive search "
    "recovers the form of every catalogue target that has a tree within the bound over that set at 0 % noise, "
    "and of >= 80 % of them at 1 % noise (constants refit on 2000 held-out noiseless points, max error <= 1e-6 "
    "max |f|); 10 % noise and the targets without such a tree are reported, not judged",
    paper="Abstract ('the tractable regime exploited by bounded-complexity search'); the recovery check itself is "
    "issue 14's, not the paper's",
    control="shuffled ground truth: y is permuted against X before every search, so no target can be recovered "
    "and the claim must fail",
    positive="each within-bound target replaced by a function planted from the search's own size-9 library (drawn "
    "at random on its own seed stream, of the target's hand-tree size, finite and non-constant on the data: a tree "
    "within the bound computes it), with noise of the same relative levels on its own stream; same search, "
    "recovery measure and thresholds (other targets keep the search's answer). It fails when selection at 1 % "
    "noise or the measure miss forms that are in the search space",
    mechanisms=("deduplication",),
)
def exact_recovery(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    prims = parse_ops(DEFAULT_OPS)
    bound = cfg.recovery_max_size
    within = []  # targets with a hand tree of size <= bound, each checked by the measure
    truth_ok = []
    for name in cfg.recovery_targets:
        if name in SIZE_TREES:
            p = get_problem(name)
            tree = parse_tree(SIZE_TREES[name], prims, p.variables)
            if tree_size(tree) <= bound:
                within.append(name)
                truth_ok.append(form_recovered(tree, prims, p)[0])  # the measure on ground truth
    hits = {noise: {} for noise in cfg.recovery_noises}
    nrmse = {noise: [] for noise in cfg.recovery_noises}
    planting = np.random.default_rng([seed, 1000])  # the positive control's own stream (function and noise)
    for name in cfg.recovery_targets:
        p = get_problem(name)
        Xh, yh = sample(p, HELDOUT_N, seed=HELDOUT_SEED)
        library, planted = None, None  # the enumeration depends on X only: shared by the noise levels
        for noise in cfg.recovery_noises:
            X, y = sample(p, noise=noise, seed=seed)  # same X for every noise level
            if arm is Arm.NEGATIVE:  # shuffled ground truth
                y = np.random.default_rng(seed).permutation(y)
            model = ExhaustiveSR(max_size=bound, ops=DEFAULT_OPS, max_trees=1e12, max_nodes=10**8, random_state=seed)
            if arm is Arm.POSITIVE and name in within:  # plant a function of the library, of the target's size
                if planted is None:
                    library = model.fit(X, y, p.variables).library_
                    size = tree_size(parse_tree(SIZE_TREES[name], prims, p.variables))
                    planted = _planted_function(library, prims, "size", size, X, Xh, planting)
                    yh = eval_tree(planted, prims, Xh)
                f = eval_tree(planted, prims, X)
                y = f + noise * np.std(f) * planting.standard_normal(len(f))
            model.fit(X, y, p.variables, library=library)
            library = model.library_
            hits[noise][name] = _refit_recovered(model.tree_, prims, Xh, yh)[0]
            with np.errstate(all="ignore"):
                pred = model.predict(Xh)
            nrmse[noise].append(_nrmse(pred, yh))
    rate = {noise: float(np.mean([hits[noise][n] for n in within])) for noise in cfg.recovery_noises}
    other = [n for n in cfg.recovery_targets if n not in within]
    ok = all(truth_ok) and rate[0.0] >= 1.0 and rate[0.01] >= 0.8
    measured = {
        "targets within the bound": float(len(within)),
        "hand trees recognised by the measure": float(np.mean(truth_ok)),
    }
    for noise in cfg.recovery_noises:
        tag = f"{100 * noise:g} % noise"
        measured[f"recovery within the bound, {tag}"] = rate[noise]
        if other:
            measured[f"recovery of other targets, {tag}"] = float(np.mean([hits[noise][n] for n in other]))
        measured[f"median held-out NRMSE, {tag}"] = float(np.median(nrmse[noise]))
    missed = {f"{100 * noise:g}%": [n for n in within if not hits[noise][n]] for noise in cfg.recovery_noises}
    return ClaimResult(
        "holds" if ok else "fails",
        measured=measured,
        paper={"tractable regime": "FPT in tree size, exploited by bounded-complexity search"},
        elsewhere={"exact recovery [issue 14]": "all targets within the size bound (bounded search is exhaustive)"},
        reason=f"missed within the bound: {missed}" if any(missed.values()) else "",
    )


# --- credited mechanisms and their probes ---------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _dedup_share(scale: Scale, seed: int) -> dict[str, float]:
    """Distinct functions over labelled trees enumerated, at the largest size of fpt-in-size's sweep (v = 1)."""
    cfg = PRESETS[scale.value]
    prims = parse_ops(PROTO_OPS)
    X, y = sample(get_problem("nguyen-5"), 200, seed=seed)
    k = cfg.size_ks[-1]
    raw = counted_search(prims, X, y, k, dedup=False)
    kept = counted_search(prims, X, y, k)
    return {
        "deduplication": 1.0 - kept.n_distinct / raw.n_distinct,
        "labelled trees (Eq. C1)": float(raw.n_distinct),
        "distinct functions": float(kept.n_distinct),
    }


@mechanism(
    "deduplication",
    component="the FPT search's enumeration of distinct functions: every tree of the bound is built on the probe "
    "rows from already-distinct children and kept only when its values are new",
    measures="1 - distinct functions / labelled trees at the largest size of fpt-in-size's sweep (one variable, "
    "2 unary + 4 binary operators)",
    above=0.5,
)
def deduplication(scale: Scale, seed: int) -> dict[str, float]:
    return _dedup_share(scale, seed)


@mechanism(
    "gadget",
    component="the clique gadget's non-edge rows: each pair of chosen variables that is not an edge costs 2 in SSE "
    "(Eq. R1)",
    measures="least SSE - tau brute-force SR reaches on the Turan graph T(7, 3) with k = 4 (no 4-clique; 1 by "
    "Eq. R1, a triangle short of k): 0 when the rows do not act",
    above=0.5,
)
def gadget(scale: Scale, seed: int) -> float:
    _, best_sse, _ = solve_sr_witness(inst := clique_to_sr(nx.turan_graph(7, 3), 4))
    return best_sse - inst.tau


# --- measures, validated both ways ---------------------------------------------------------------------------


#: Size of the deviation the measure check plants (relative to max |f|): ten times the recovery bar, 1e-6.
PLANTED_DEVIATION = 1e-5


def _form_recovery_check(seed: int) -> dict[str, float]:
    """The recovery measure's relative max held-out error (lower is better; recovered below 1e-6) on Nguyen-5,
    sin(x^2) cos(x) - 1: the truth, near misses (sin for cos; x^3 for x^2), what the size-7 search selects at
    10 % noise, the null (the constant tree: no form at all), and a planted deviation of known size: the truth
    tree measured against f + PLANTED_DEVIATION max |f| T_7(x) (a degree-7 Chebyshev wiggle outside the tree's
    span), which must read about PLANTED_DEVIATION (the refit absorbs a little of it)."""
    prims = parse_ops(DEFAULT_OPS)
    p = get_problem("nguyen-5")
    X, y = sample(p, noise=0.1, seed=seed)
    noisy = ExhaustiveSR(max_size=7, ops=DEFAULT_OPS, max_trees=1e12, max_nodes=10**8, random_state=seed).fit(
        X, y, p.variables
    )
    truth = parse_tree(SIZE_TREES["nguyen-5"], prims, p.variables)
    trees = {
        "truth": truth,
        "sin for cos": parse_tree("mul(sin(mul(x, x)), sin(x))", prims, p.variables),
        "x^3 for x^2": parse_tree("mul(sin(mul(x, mul(x, x))), cos(x))", prims, p.variables),
        "search at 10 % noise": noisy.tree_,
        "null": parse_tree("1", prims, p.variables),
    }
    scores = {label: form_recovered(tree, prims, p)[1] for label, tree in trees.items()}
    Xh, yh = sample(p, HELDOUT_N, seed=HELDOUT_SEED)
    wiggle = np.polynomial.chebyshev.chebval(Xh[:, 0], [0] * 7 + [1])  # T_7 on [-1, 1], max |T_7| = 1
    planted = yh + PLANTED_DEVIATION * np.max(np.abs(yh)) * wiggle
    scores["planted deviation"] = _refit_recovered(truth, prims, Xh, planted)[1]
    return scores


MEASURES = [
    MeasureCheck(
        "form recovery: relative max held-out error after refitting the constants",
        _form_recovery_check,
        null_band=(0.2, 0.3),  # the best constant: 0.237 of max |f| on Nguyen-5's held-out points
        higher_is_better=False,
        margin=1e-6,
    )
]
MECHANISMS = [deduplication, gadget]
CLAIMS = [fpt_in_size, fpt_in_depth, w1_hardness_gadget, exact_recovery]
