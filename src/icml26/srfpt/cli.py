"""``icml26 srfpt search | count | reduce-clique | sample``: thin verbs over the library."""

from __future__ import annotations

import argparse
import re

import numpy as np

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_int, finite_float, nonnegative_float, seed_int
from icml26._util.io import atomic_output, check_input_file, check_output_path, write_json
from icml26.srfpt.data import PMLB_SETS, PROBLEMS  # data.py imports sympy only where a formula is used

# the operator names (= tuple(primitives.PRIMITIVES)) and the default set (= primitives.DEFAULT_OPS), written out so
# that the parser (and --help) loads no sympy; a test checks them
OPS = tuple("add sub mul div pow sin cos tan exp log sqrt square cube neg inv abs".split())
DEFAULT_OPS = ("add", "sub", "mul", "div", "sin", "cos", "exp", "log")


def _constants(text: str) -> tuple[float, ...]:
    if not text.strip():
        return ()
    try:
        return tuple(float(c) for c in text.split(","))
    except ValueError:
        raise ValueError(f"--constants must be comma-separated numbers; got {text!r}") from None


SEED = seed_int  # the shared 32-bit seed type


def _open_fraction(text: str) -> float:
    """A held-out fraction strictly between 0 and 1."""
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction strictly between 0 and 1")
    return value


RAY_ADDRESS = re.compile(r"^(local|auto|(ray://)?[A-Za-z0-9._-]+:[0-9]{1,5})$")


def _ray_address(text: str) -> str:
    """``local`` (start a local Ray instance), ``auto`` (the cluster this machine belongs to) or host:port."""
    if not RAY_ADDRESS.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Ray address: use local, auto, host:port or ray://host:port"
        )
    return text


def _emit_json(payload, path: str | None) -> bool:
    """Write ``payload`` as JSON to ``path`` ('-': standard output). True when stdout took it (no table)."""
    write_json(path, payload)
    return path == "-"


#: counting is exact big-integer arithmetic: O(k^2) products for sizes, numbers of ~2^D digits for depths
COUNT_SIZE = bounded_int(1, 1000, what="exact counts take O(k^2) big-integer products")
COUNT_DEPTH = bounded_int(0, 20, what="counts of depth D have about 2^D digits")
#: far beyond any feasible exhaustive search; the tree-count estimate refuses long before
SEARCH_SIZE = bounded_int(1, 100, what="search size bound")
SEARCH_DEPTH = bounded_int(0, 12, what="search depth bound")
#: reduce-clique enumerates every tree of size 2k-1 over N variables: refused above this many
MAX_REDUCTION_TREES = 2_000_000
#: sample writes n rows: 10 million rows of a few columns is a few hundred MB of CSV
MAX_SAMPLE_ROWS = 10_000_000


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 srfpt",
        description="Exhaustive (FPT) symbolic regression, exact tree counts and the clique -> SR reduction.",
    )
    sub = parser.add_subparsers(dest="verb", required=True)
    ops_help = f"comma-separated operators (default {','.join(DEFAULT_OPS)}); known: {','.join(OPS)}"

    s = sub.add_parser(
        "search",
        help="exhaustive search on a CSV or PMLB .tsv.gz file; prints the Pareto front",
        description="Reads a numeric CSV (or PMLB's tab-separated .tsv / .tsv.gz) with a header row, searches every "
        "expression tree up to the size or depth bound and prints the Pareto front (size, MSE, description length, "
        "expression); with --test-fraction the rows are split once (seeded by --seed) before the search and every "
        "front point is also scored by R^2 on the held-out rows. Writes nothing unless --json PATH. Example: "
        "icml26 srfpt sample pmlb-esl --out esl.csv && icml26 srfpt search esl.csv --max-size 5 --test-fraction 0.25",
    )
    s.add_argument("data", help="CSV file with a header row, or a PMLB .tsv / .tsv.gz file")
    s.add_argument("--target", default="target", help="name of the target column (PMLB's and sample's: target)")
    s.add_argument(
        "--test-fraction",
        type=_open_fraction,
        default=None,
        help="hold this fraction of the rows out (split fixed by --seed before the search) and report test R^2",
    )
    s.add_argument("--max-size", type=SEARCH_SIZE, default=7, help="size bound k (nodes)")
    s.add_argument("--max-depth", type=SEARCH_DEPTH, default=None, help="depth bound D (instead of a size bound)")
    s.add_argument("--ops", default=",".join(DEFAULT_OPS), help=ops_help)
    s.add_argument("--constants", default="1", help="comma-separated constant leaves (default 1; '' for none)")
    s.add_argument("--no-linear-scaling", action="store_true", help="do not fit a + b*f in closed form")
    s.add_argument("--force", action="store_true", help="run even when the search-space estimate is too large")
    s.add_argument("--seed", type=SEED, default=0, help="seed of the probe-row choice")
    s.add_argument(
        "--ray-address",
        type=_ray_address,
        default=None,
        help="run the search as Ray tasks: local (start a local instance), auto, or ray://host:port; "
        "the Pareto front is the one-process front",
    )
    s.add_argument(
        "--workers",
        type=bounded_int(1, 1024, what="CPUs of a local Ray instance"),
        default=None,
        help="CPUs of the local Ray instance (--ray-address local; default all)",
    )
    add_json_argument(s, "the results")

    c = sub.add_parser(
        "count",
        help="number of labelled trees (recurrence) and, optionally, distinct functions",
        description="Reads nothing; prints the exact number of labelled expression trees per size (or up to each "
        "depth) for the given operators, variables and constants, and with --distinct the number of distinct "
        "functions the search keeps on random points. Writes JSON with --json PATH ('-': standard output). "
        "Example: icml26 srfpt count --max-size 9 --ops add,mul,sin --vars 2 --distinct",
    )
    c.add_argument("--max-size", type=COUNT_SIZE, default=9, help="count trees of size 1 .. k")
    c.add_argument("--max-depth", type=COUNT_DEPTH, default=None, help="count by depth (trees of depth <= D)")
    c.add_argument("--ops", default=",".join(DEFAULT_OPS), help=ops_help)
    c.add_argument("--vars", type=bounded_int(0, 10_000, what="variables"), default=1, help="number of variables")
    c.add_argument("--constants", default="1", help="comma-separated constant leaves (default 1)")
    c.add_argument("--distinct", action="store_true", help="also enumerate distinct functions on random points")
    c.add_argument("--force", action="store_true", help="enumerate even when the estimate is large")
    add_json_argument(c, "the results")

    r = sub.add_parser(
        "reduce-clique",
        help="build the SR instance of a graph and solve both sides by brute force",
        description="Reads an edge list (one 'u v' per line), builds the k-Clique -> symbolic-regression instance "
        "of the W[1]-hardness reduction, solves both sides by brute force and prints whether they agree (exit 1 "
        "if not); writes the instance with --out PATH (.csv; --csv is its deprecated spelling) and the results "
        "with --json PATH. Example: "
        "icml26 srfpt reduce-clique --graph edges.txt -k 3 --out instance.csv --json -",
    )
    r.add_argument("--graph", required=True, help="edge list file: one 'u v' per line")
    r.add_argument("-k", type=bounded_int(1, 50, what="clique size"), required=True, help="clique size")
    r.add_argument("--out", "--csv", default=None, deprecated=("--csv",),
                   help="write the SR instance (columns x0.., y) to this CSV file")  # fmt: skip
    add_json_argument(r, "the results")

    p = sub.add_parser(
        "sample",
        help="write data of a benchmark problem, or a bundled real PMLB set, to CSV",
        description="Writes a CSV (columns: the variables, then 'target'): points drawn from a ground-truth problem, "
        "or the rows of a bundled real PMLB regression set (pmlb-vineyard, pmlb-esl, pmlb-pollen, pmlb-cpu_act; "
        "-n then draws that many rows without replacement, and --noise must be 0). Example: "
        "icml26 srfpt sample pmlb-vineyard --out vineyard.csv",
    )
    p.add_argument(
        "problem", help=f"one of {', '.join(PROBLEMS)}, or pmlb-<{'|'.join(PMLB_SETS)}>; the output column is 'target'"
    )
    p.add_argument("--out", required=True, help="output .csv path")
    p.add_argument(
        "-n",
        type=bounded_int(2, MAX_SAMPLE_ROWS, what="rows"),
        default=None,
        help="number of points (default: the problem's)",
    )
    p.add_argument("--noise", type=nonnegative_float, default=0.0, help="relative noise level (e.g. 0.01)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 srfpt``; bad input raises ``ValueError`` / ``OSError``."""
    args = build_parser().parse_args(argv)
    return {"search": _search, "count": _count, "reduce-clique": _reduce, "sample": _sample}[args.verb](args)


def _search(args) -> int:
    from icml26.srfpt.data import heldout_split, load_csv
    from icml26.srfpt.fit import eval_tree
    from icml26.srfpt.search import ExhaustiveSR

    if args.json not in (None, "-"):
        check_output_path(args.json)
    if args.workers is not None and args.ray_address != "local":
        raise ValueError("--workers sets the CPUs of a local Ray instance: use it with --ray-address local")
    X, y, names = load_csv(check_input_file(args.data, what="data file"), args.target)
    test = None
    if args.test_fraction is not None:
        train, test = heldout_split(len(y), args.test_fraction, seed=args.seed)
        X, y, Xt, yt = X[train], y[train], X[test], y[test]
    model = ExhaustiveSR(
        max_size=args.max_size,
        max_depth=args.max_depth,
        ops=args.ops,
        constants=_constants(args.constants),
        linear_scaling=not args.no_linear_scaling,
        force=args.force,
        random_state=args.seed,
        ray_address=args.ray_address,
        n_workers=args.workers,
    ).fit(X, y, names)
    front = [
        {"size": p.size, "mse": p.mse, "description_length": p.description_length, "expression": str(p.expression)}
        for p in model.pareto_
    ]
    if test is not None:  # every front point scored on the held-out rows
        for row, p in zip(front, model.pareto_, strict=True):
            pred = p.params[0] + p.params[1] * eval_tree(p.tree, model.ops_, Xt, list(p.params[2:]))
            row["test_r2"] = _r2(pred, yt)
    out = {
        "best": str(model.expression_),
        "best_size": model.size_,
        "best_mse": model.mse_,
        "pareto": front,
        "trees_covered": model.n_trees_,
        "distinct_functions": model.n_distinct_,
        "trees_evaluated": model.n_evaluated_,
        "seconds": model.timings_["total_s"],
    }
    if test is not None:
        out |= {"train_rows": len(y), "test_rows": len(yt), "best_test_r2": _r2(model.predict(Xt), yt)}
    if _emit_json(out, args.json):
        return 0
    print(f"{model.n_trees_:,} labelled trees covered; {model.n_distinct_:,} distinct functions", end="")
    print(f"; {out['seconds']:.2f} s")
    r2_col = f"  {'test R2':>8}" if test is not None else ""
    print(f"{'size':>4}  {'mse':>12}  {'DL':>10}{r2_col}  expression")
    for p in front:
        r2 = f"  {p['test_r2']:8.4f}" if test is not None else ""
        print(f"{p['size']:>4}  {p['mse']:12.4g}  {p['description_length']:10.1f}{r2}  {p['expression']}")
    print(f"best (minimum description length): {out['best']}")
    if test is not None:
        print(f"held-out R2 of the best: {out['best_test_r2']:.4f} ({len(yt)} of {len(yt) + len(y)} rows held out)")
    return 0


def _r2(pred: np.ndarray, y: np.ndarray) -> float | None:
    """Coefficient of determination on held-out rows; None (JSON null) when the model is not finite there."""
    if not np.isfinite(pred).all():
        return None
    return float(1.0 - np.mean((pred - y) ** 2) / max(float(np.var(y)), 1e-300))


def _count(args) -> int:
    from icml26.srfpt.counting import count_trees_by_depth, count_trees_by_size
    from icml26.srfpt.enumerate import enumerate_library
    from icml26.srfpt.primitives import parse_ops
    from icml26.srfpt.search import estimate_trees

    if args.json not in (None, "-"):
        check_output_path(args.json)
    ops = parse_ops(args.ops)
    consts = _constants(args.constants)
    if args.vars < 0:
        raise ValueError(f"--vars must be >= 0; got {args.vars}")
    n_unary = sum(p.arity == 1 for p in ops)
    leaves, n_binary = args.vars + len(consts), len(ops) - n_unary
    by_depth = args.max_depth is not None
    if by_depth:
        counts = count_trees_by_depth(args.max_depth, leaves, n_unary, n_binary)  # depth <= D
        grades = list(range(args.max_depth + 1))
    else:
        counts = count_trees_by_size(args.max_size, leaves, n_unary, n_binary)[1:]  # size exactly k
        grades = list(range(1, args.max_size + 1))
    distinct = None
    if args.distinct:
        kw = {"max_depth": args.max_depth} if by_depth else {"max_size": args.max_size}
        total = estimate_trees(args.vars, args.ops, consts, **kw)
        if total > 2e8 and not args.force:
            raise ValueError(f"enumerating {total:.3g} labelled trees is too large; pass --force to try anyway")
        if args.vars > 1000:
            raise ValueError(f"--distinct enumerates on {args.vars} variables; at most 1000")
        probes = np.random.default_rng(0).uniform(0.1, 2.0, size=(16, max(args.vars, 0)))
        bound = args.max_depth if by_depth else args.max_size
        lib = enumerate_library(ops, probes, bound, constants=consts, mode="depth" if by_depth else "size")
        per = lib.distinct_per_grade(bound)
        distinct = np.cumsum(per).tolist() if by_depth else per[1:]
    key = "depth<=" if by_depth else "size"
    rows = [
        {key: g, "trees": t} | ({"distinct": d} if distinct else {})
        for g, t, d in zip(grades, counts, distinct or counts, strict=True)
    ]
    if _emit_json(rows, args.json):
        return 0
    print(f"{key:>7}  {'labelled trees':>16}" + (f"  {'distinct functions':>18}" if distinct else ""))
    for row in rows:
        print(f"{row[key]:>7}  {row['trees']:>16,}" + (f"  {row['distinct']:>18,}" if distinct else ""))
    return 0


def _reduce(args) -> int:
    from icml26.srfpt.reduction import clique_to_sr, has_clique_bruteforce, read_edge_list, solve_sr_instance
    from icml26.srfpt.search import estimate_trees

    if args.json not in (None, "-"):
        check_output_path(args.json)
    if args.out:
        check_output_path(args.out, suffixes=(".csv",))
    graph = read_edge_list(check_input_file(args.graph, what="edge list"))
    if args.k > graph.number_of_nodes():
        raise ValueError(f"-k {args.k} is larger than the {graph.number_of_nodes()} vertices of {args.graph}")
    trees = estimate_trees(graph.number_of_nodes(), "add", (), max_size=2 * args.k - 1)
    if trees > MAX_REDUCTION_TREES:
        raise ValueError(
            f"brute force over {trees:.3g} trees (N={graph.number_of_nodes()} variables, size {2 * args.k - 1}); "
            f"at most {MAX_REDUCTION_TREES:,}: use a smaller graph or k"
        )
    inst = clique_to_sr(graph, args.k)
    solvable, best = solve_sr_instance(inst)
    clique = has_clique_bruteforce(graph, args.k)
    if args.out:
        header = ",".join([f"x{j}" for j in range(inst.X.shape[1])] + ["y"])
        _write_csv(args.out, np.column_stack([inst.X, inst.y]), header)
    out = {
        "vertices": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "k": args.k,
        "rows": len(inst.y),
        "variables": inst.X.shape[1],
        "max_size": inst.max_size,
        "tau": inst.tau,
        "min_sse": best,
        "sr_solvable": solvable,
        "clique_exists": clique,
        "agree": solvable == clique,
    }
    if not _emit_json(out, args.json):
        for key, value in out.items():
            print(f"{key:>13}: {value}")
    return 0 if solvable == clique else 1


def _write_csv(path, table: np.ndarray, header: str) -> None:
    with atomic_output(path) as tmp:
        np.savetxt(tmp, table, delimiter=",", header=header, comments="")


def _sample(args) -> int:
    from icml26.srfpt.data import get_problem, load_pmlb, sample

    check_output_path(args.out, suffixes=(".csv",))  # sample writes CSV: refuse a.npy rather than mislabel it
    if args.problem.startswith("pmlb-"):
        name = args.problem.removeprefix("pmlb-")
        if name not in PMLB_SETS:
            raise ValueError(f"unknown PMLB set {name!r}; bundled: {', '.join(PMLB_SETS)}")
        if args.noise:
            raise ValueError("--noise applies to ground-truth problems; a real PMLB set is written as it is")
        X, y, names = load_pmlb(name)
        if args.n is not None:
            if args.n > len(y):
                raise ValueError(f"-n {args.n} is more than the {len(y)} rows of {name}")
            rows = np.sort(np.random.default_rng(args.seed).choice(len(y), args.n, replace=False))
            X, y = X[rows], y[rows]
        _write_csv(args.out, np.column_stack([X, y]), ",".join([*names, "target"]))
        print(f"wrote {len(y)} rows of the PMLB set {name} ({X.shape[1]} features) to {args.out}")
        return 0
    problem = get_problem(args.problem)
    X, y = sample(problem, args.n, noise=args.noise, seed=args.seed)
    header = ",".join([*problem.variables, "target"])
    _write_csv(args.out, np.column_stack([X, y]), header)
    print(f"wrote {len(y)} rows of {problem.name} ({problem.formula}) to {args.out}")
    return 0
