"""The paper's headline statements as executable checks (see README "Claims")."""

from __future__ import annotations

import time

import networkx as nx
import numpy as np

from icml26.claims import ClaimResult, Scale, claim
from icml26.srfpt.config import PRESETS
from icml26.srfpt.counting import count_trees_by_depth, count_trees_by_size, depth_count_bound
from icml26.srfpt.data import PROBLEMS, get_problem, sample, symbolic_match
from icml26.srfpt.enumerate import enumerate_library
from icml26.srfpt.primitives import parse_ops
from icml26.srfpt.reduction import clique_to_sr, excess_loss, has_clique_bruteforce, random_graph, solve_sr_instance
from icml26.srfpt.search import ExhaustiveSR

# The prototype's basis of the paper notes: 2 unary, 4 binary operators, constant 1.
PROTO_OPS = ("sin", "cos", "add", "sub", "mul", "div")
DEPTH_OPS_2VAR = ("add", "mul", "sin", "cos")  # smaller primitive set for two-variable depth-3 searches


def _slope(x, y) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _timed_fit(model: ExhaustiveSR, X, y, repeats: int) -> tuple[float, ExhaustiveSR]:
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        model.fit(X, y)
        best = min(best, time.perf_counter() - t)
    return best, model


@claim(
    "srfpt/fpt-in-size-v1",
    statement="SR is FPT in tree size: at fixed size k exhaustive search time is linear in n "
    "(log-log slope ~ 1), and at fixed n it grows exponentially in k, following the tree counts",
    paper="Abstract; theorem 'FPT parameterized by tree size' (f(k) poly(n) algorithm)",
    control="the data size is not applied in the n sweep (every fit gets the smallest n): search time then does "
    "not grow with n, its slope is ~0 and the claim must fail",
    by_construction="the search enumerates distinct functions on a fixed set of probe rows, so its exponential part "
    "is independent of n and time is O(n) in the scoring by construction; 'time follows the tree counts' is a "
    "correlation of two series that both grow with k - replaced by fpt-in-size-v2 (issue 14)",
)
def fpt_in_size(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    problem = get_problem("nguyen-5")
    ns, times_n = np.array(cfg.fpt_ns), []
    for n in ns:
        X, y = sample(problem, int(ns[0]) if control else int(n), seed=seed)  # the data size under test
        times_n.append(_timed_fit(ExhaustiveSR(max_size=cfg.fpt_size, seed=seed), X, y, cfg.repeats)[0])
    times_n = np.array(times_n)
    top = ns >= ns.max() / 100  # the top two decades, where the O(n) part dominates fixed costs
    slope_all, slope_top = _slope(ns, times_n), _slope(ns[top], times_n[top])

    sizes, times_k, distinct = np.array(cfg.fpt_sizes), [], []
    X, y = sample(problem, cfg.fpt_n, seed=seed)
    for k in sizes:
        t, model = _timed_fit(ExhaustiveSR(max_size=int(k), seed=seed), X, y, 1)
        times_k.append(t)
        distinct.append(model.n_distinct_)
    times_k = np.array(times_k)
    trees = np.array([_n_trees(int(k)) for k in sizes], dtype=float)  # labelled trees covered
    big = sizes >= 5
    corr_trees = float(np.corrcoef(np.log(times_k[big]), np.log(trees[big]))[0, 1])
    growth = float(np.exp(np.polyfit(sizes[big], np.log(times_k[big]), 1)[0]))
    tree_growth = float(np.exp(np.polyfit(sizes[big], np.log(trees[big]), 1)[0]))
    ok = 0.75 <= slope_top <= 1.25 and slope_all <= 1.25 and corr_trees >= 0.9 and growth > 2.0
    figs = _fpt_figures(ns, times_n, slope_top, cfg.fpt_size, sizes, times_k, trees, np.array(distinct), cfg.fpt_n)
    return ClaimResult(
        "holds" if ok else "fails",
        measured={
            "log-log slope time vs n (top 2 decades)": slope_top,
            "log-log slope time vs n (all n)": slope_all,
            "time growth per size step": growth,
            "corr(log time, log #trees)": corr_trees,
            f"time at k={int(sizes[-1])} (s)": float(times_k[-1]),
        },
        paper={"log-log slope time vs n": 1.0, "time vs k": "exponential (f(k))"},
        baselines={"#trees growth per size step": tree_growth},
        reason="" if ok else f"slope {slope_top:.2f} (all {slope_all:.2f}), corr {corr_trees:.2f}, growth {growth:.2f}",
        figures=figs,
    )


def _n_trees(k: int) -> int:
    ops = parse_ops(ExhaustiveSR().ops)
    n_unary = sum(p.arity == 1 for p in ops)
    return sum(count_trees_by_size(k, 2, n_unary, len(ops) - n_unary))


def _fpt_figures(ns, times_n, slope, k, sizes, times_k, trees, distinct, n_fixed):
    import matplotlib.pyplot as plt

    fig1, ax = plt.subplots(figsize=(5, 3.6))
    ax.loglog(ns, times_n, "o-", label=f"exhaustive search, size {k}")
    ref = times_n[-1] * ns / ns[-1]
    ax.loglog(ns, ref, "k--", lw=1, label="slope 1")
    ax.set(xlabel="data points n", ylabel="search time (s)", title=f"time vs n (top slope {slope:.2f})")
    ax.legend()
    fig2, ax = plt.subplots(figsize=(5, 3.6))
    ax.semilogy(sizes, times_k / times_k[-1], "o-", label="search time")
    ax.semilogy(sizes, trees / trees[-1], "s--", label="labelled trees (recurrence)")
    ax.semilogy(sizes, distinct / distinct[-1], "^:", label="distinct functions (enumerated)")
    ax.set(xlabel="max size k", ylabel="relative to largest k", title=f"time vs size (n = {n_fixed})")
    ax.legend()
    return {"time-vs-n": fig1, "time-vs-size": fig2}


@claim(
    "srfpt/fpt-in-depth-v1",
    statement="SR is FPT in depth: the number of trees of depth <= D is finite (<= (L+U+B)^(2^(D+1)-1)), "
    "equals its recurrence, and depth-bounded search recovers targets within the bound",
    paper="Abstract; theorem 'FPT parameterized by expression depth'",
    control="shuffled ground truth: y is permuted against X before the depth-3 searches, so no target can be "
    "recovered and the claim must fail",
    by_construction="the count check compares our enumeration with the recurrence it implements, and the "
    "two-variable searches use an operator set hand-picked to contain their targets (add, mul, sin, cos) - "
    "issue 14",
)
def fpt_in_depth(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    checks = []
    # (ops, n_vars, D): every labelled tree enumerated (no deduplication) vs Eq. C2
    for ops, n_vars, depth in ((PROTO_OPS, 1, 2), (("sin", "add", "mul"), 1, 3), (("add", "mul"), 2, 3)):
        prims = parse_ops(ops)
        u = sum(p.arity == 1 for p in prims)
        probes = rng.uniform(-1, 1, (4, n_vars))
        lib = enumerate_library(prims, probes, depth, mode="depth", dedup=False, max_nodes=10**7)
        enumerated = np.cumsum(lib.n_candidates).tolist()
        recurrence = count_trees_by_depth(depth, n_vars + 1, u, len(prims) - u)
        bound = depth_count_bound(depth, n_vars + 1, u, len(prims) - u)
        checks.append(enumerated == recurrence and recurrence[-1] <= bound)
    recovered = []
    for name in cfg.depth_targets:
        p = get_problem(name)
        X, y = sample(p, seed=seed)
        if control:  # shuffled ground truth
            y = np.random.default_rng(seed).permutation(y)
        ops = p.ops if len(p.variables) == 1 else DEPTH_OPS_2VAR
        model = ExhaustiveSR(max_depth=3, ops=ops, max_trees=1e9, seed=seed).fit(X, y, p.variables)
        recovered.append(symbolic_match(model.expression_, p.expression))
    ok = all(checks) and all(recovered)
    return ClaimResult(
        "holds" if ok else "fails",
        measured={
            "count checks passed": float(np.mean(checks)),
            "depth-3 targets recovered": float(np.mean(recovered)),
            "depth-3 trees covered (default ops, v=1)": float(count_trees_by_depth(3, 2, 4, 4)[-1]),
        },
        paper={"count": "finite for fixed D", "recurrence": "T(D) = L + U T(D-1) + B T(D-1)^2"},
        reason="" if ok else f"count checks {checks}, recovered {dict(zip(cfg.depth_targets, recovered, strict=True))}",
    )


@claim(
    "srfpt/w1-hardness-gadget-v1",
    statement="k-Clique reduces to SR with at most k variables (primitives {+}): on random graphs the SR "
    "instance is solvable iff a k-clique exists (brute force on both sides)",
    paper="Abstract; theorem 'W[1]-hard parameterized by the number of variables / primitives used'",
    control="the reduction does not encode the edges: the SR instance is built from the complete graph on the same "
    "vertices (no non-edge rows), so it is solvable whenever N >= k and the claim must fail on clique-free graphs",
)
def w1_hardness_gadget(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    rng = np.random.default_rng(seed)
    agree, has, excess_ok, gaps = [], [], [], {True: [], False: []}
    t0 = time.perf_counter()
    for i in range(cfg.n_graphs):
        k = cfg.clique_ks[i % len(cfg.clique_ks)]
        graph = random_graph(int(rng.integers(k + 1, 10)), float(rng.uniform(0.2, 0.75)), int(rng.integers(2**31)))
        clique = has_clique_bruteforce(graph, k)
        encoded = nx.complete_graph(graph.number_of_nodes()) if control else graph  # the graph the gadget encodes
        inst = clique_to_sr(encoded, k)
        solvable, best = solve_sr_instance(inst)
        agree.append(clique == solvable)
        has.append(clique)
        gaps[clique].append(best - inst.tau)
        sub = rng.choice(graph.number_of_nodes(), k, replace=False)
        missing = sum(not graph.has_edge(a, b) for j, a in enumerate(sub) for b in sub[j + 1 :])
        excess_ok.append(abs(excess_loss(graph, sub) - 2 * missing) < 1e-9)
    elapsed = time.perf_counter() - t0
    frac = float(np.mean(has))
    ok = all(agree) and all(excess_ok) and 0.1 <= frac <= 0.9

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for j, key in enumerate((True, False)):
        vals = np.array(gaps[key])
        ax.scatter(j + 0.15 * rng.standard_normal(len(vals)), vals, s=8, alpha=0.6)
    ax.axhline(0, color="k", lw=1)
    ax.set_xticks([0, 1], ["k-clique", "no k-clique"])
    ax.set(ylabel="min SSE - tau (brute-force SR)", title=f"clique gadget, {cfg.n_graphs} graphs")
    return ClaimResult(
        "holds" if ok else "fails",
        measured={
            "agreement (SR solvable == clique)": float(np.mean(agree)),
            "graphs": float(cfg.n_graphs),
            "fraction with a clique": frac,
            "excess = 2 x missing edges": float(np.mean(excess_ok)),
            "min gap without clique": float(min(gaps[False], default=np.nan)),
            "ms per instance": 1000 * elapsed / cfg.n_graphs,
        },
        paper={"agreement": 1.0},
        reason="" if ok else f"agreement {np.mean(agree):.3f}, clique fraction {frac:.2f}",
        figures={"gadget-gap": fig},
    )


@claim(
    "srfpt/variables-drive-blowup-v1",
    statement="at fixed size the search space grows steeply with the number of variables "
    "(labelled trees of size 9, 2 unary + 4 binary ops + 1 constant: ~470x from 1 to 8 variables)",
    paper="Abstract (W[1]-hard in the number of variables: selection as a source of intractability)",
    control="variable selection switched off: every variable count v is counted and enumerated with a single "
    "variable leaf, so there is no blow-up and the claim must fail",
    by_construction="pure counting: the tree ratio is the recurrence Eq. C1 evaluated at v + 1 leaves and the "
    "distinct-function ratio grows with any added leaf; its ~470x is the paper notes' prototype's number, not the "
    "paper's (issue 14)",
)
def variables_drive_blowup(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]

    def leaves(v: int) -> int:  # variables a tree can select, plus the constant 1
        return (1 if control else v) + 1

    vs = (1, 2, 4, 8)
    counts = {v: count_trees_by_size(11, leaves(v), 2, 4) for v in vs}
    ratio = counts[8][9] / counts[1][9]
    rng = np.random.default_rng(seed)
    prims = parse_ops(PROTO_OPS)
    k = cfg.blowup_enum_size
    distinct, enum_ok = {}, []
    for v in (1, 2, 3):
        probes = rng.uniform(-2, 2, (16, leaves(v) - 1))
        lib = enumerate_library(prims, probes, k, seed=seed)
        distinct[v] = np.cumsum(lib.distinct_per_grade(k))
        if v <= 2:  # every labelled tree, enumerated without deduplication, vs Eq. C1
            raw = enumerate_library(prims, probes[:4], min(k, 6), dedup=False)
            enum_ok.append(raw.n_candidates[1:] == count_trees_by_size(min(k, 6), leaves(v), 2, 4)[1:])
    distinct_ratio = float(distinct[3][k] / distinct[1][k])
    ok = ratio >= 100 and all(enum_ok) and distinct_ratio >= 5

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.6))
    sizes = np.arange(1, 12)
    for j, v in enumerate(vs):
        ax.semilogy(sizes, counts[v][1:], "o-", ms=3, color=f"C{j}", label=f"v={v} labelled trees (= k)")
    for j, v in enumerate((1, 2, 3)):
        ax.semilogy(np.arange(1, k + 1), distinct[v][1:], "^:", ms=3, color=f"C{j + 4}", label=f"v={v} distinct (<= k)")
    ax.set(xlabel="size k", ylabel="count", title="search space vs size and variables")
    ax.legend(fontsize=7)
    return ClaimResult(
        "holds" if ok else "fails",
        measured={
            "trees(size 9, v=8) / trees(size 9, v=1)": ratio,
            "trees size 9, v=1": counts[1][9],
            "trees size 9, v=8": counts[8][9],
            f"distinct functions size<={k}: v=3 / v=1": distinct_ratio,
            "enumeration == recurrence": float(np.mean(enum_ok)),
        },
        paper={"search space vs variables": "W[1]-hard in the number of variables (selection)"},
        elsewhere={
            "trees(size 9, v=8) / trees(size 9, v=1) [paper notes' prototype]": 470.0,
            "trees size 9, v=1 [paper notes' prototype]": 1.0e6,
            "trees size 9, v=8 [paper notes' prototype]": 473e6,
        },
        reason="" if ok else f"ratio {ratio:.0f}, distinct ratio {distinct_ratio:.1f}, enumeration checks {enum_ok}",
        figures={"count-vs-size": fig},
    )


@claim(
    "srfpt/exact-recovery-v1",
    statement="exhaustive search up to size 9 recovers noiseless Nguyen and Feynman-style targets of "
    "size <= 9 exactly (symbolically equivalent, constants within 1e-6)",
    paper="Abstract (bounded-complexity search is the tractable regime); issue's exact-recovery check",
    control="shuffled ground truth: y is permuted against X before every search, so no target can be recovered "
    "and the claim must fail",
    by_construction="each target is searched with a size bound equal to its own hand-written tree's size (with "
    "its family's operator set), so the search space is cut to just contain it - replaced by exact-recovery-v2 "
    "(issue 14)",
)
def exact_recovery(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    names = [n for n, p in PROBLEMS.items() if p.size <= cfg.recovery_max_size]
    recovered, times = [], []
    for name in names:
        p = PROBLEMS[name]
        X, y = sample(p, seed=seed)
        if control:  # shuffled ground truth
            y = np.random.default_rng(seed).permutation(y)
        t = time.perf_counter()
        model = ExhaustiveSR(max_size=p.size, ops=p.ops, seed=seed).fit(X, y, p.variables)
        times.append(time.perf_counter() - t)
        recovered.append(symbolic_match(model.expression_, p.expression))
    rate = float(np.mean(recovered))
    missed = [n for n, r in zip(names, recovered, strict=True) if not r]
    ok = rate >= 0.9
    return ClaimResult(
        "holds" if ok else "fails",
        measured={
            "exact recovery rate": rate,
            "problems": float(len(names)),
            "median time (s)": float(np.median(times)),
        },
        paper={"exact recovery rate": "all targets within the size bound"},
        reason=f"missed: {', '.join(missed)}" if missed else "",
    )


CLAIMS = [fpt_in_size, fpt_in_depth, w1_hardness_gadget, variables_drive_blowup, exact_recovery]
