"""srfpt on real data (PMLB): exhaustive search vs pyoperon and gplearn at equal wall time, and where exhaustive
search stops being tractable as the number of features grows.

Part 1 (fronts). For each few-feature real set (vineyard 52 x 2, ESL 488 x 4, pollen 3848 x 4) one held-out split
(25 % of the rows, ``heldout_split(seed=0)``) is fixed before anything runs. ``ExhaustiveSR(max_size=K)`` (the
default 8 operators, constant 1, linear scaling) is fitted on the training rows and timed; pyoperon (NSGA-II on
R^2 and length, same operators) and gplearn (its protected operators, no exp) then get that wall time each
(pyoperon's ``max_time``, rounded up to whole seconds; gplearn grown one generation at a time with
``warm_start`` until the time is spent). Each method's accuracy-vs-complexity front is chosen on the training
rows (the best training MSE at each size, non-dominated) and every point is scored on the held-out rows
(test R^2). Sizes are in each tool's own convention: ours counts the nodes of f in a + b f; pyoperon's length
counts every node of its tree (each variable leaf carries a weight); gplearn counts nodes of its program.
No method is tuned on the held-out rows; every method gets its defaults apart from the operator set.

Part 2 (tractability in the number of variables). cpu_act (1000 rows, 21 real features, standardised) with
its first v features, v = 1, 2, ... 21, searched at sizes k = 3, 5, 7: labelled trees covered (exact, by
recurrence), distinct functions kept, seconds; a (k, v) cell is skipped once the previous v of that k took
more than ``--budget`` seconds or was refused (the node limit), which is where exhaustive search stops being
tractable here.

Usage: ``python benchmarks/srfpt_pmlb.py [--max-size 7] [--budget 60] [--quick]``; then ``--aa`` reruns each peer
with the next seed at the same wall times (A/A rows, ``srfpt_pmlb_aa.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np

from icml26.srfpt import ExhaustiveSR, SearchSpaceTooLarge, estimate_trees
from icml26.srfpt.data import heldout_split, load_pmlb
from icml26.srfpt.primitives import DEFAULT_OPS

SETS = ["vineyard", "esl", "pollen"]


def r2(pred: np.ndarray, y: np.ndarray) -> float:
    pred = np.asarray(pred, float)
    if not np.isfinite(pred).all():
        return float("nan")
    return float(1.0 - np.mean((pred - y) ** 2) / np.var(y))


def front(points):
    """Non-dominated (size, train MSE) points, smallest size first; each keeps its test R^2."""
    best = {}
    for size, mse, test in points:
        if np.isfinite(mse) and (size not in best or mse < best[size][0]):
            best[size] = (mse, test)
    out, last = [], math.inf
    for size in sorted(best):
        mse, test = best[size]
        if mse < last:
            out.append({"size": int(size), "train_mse": float(mse), "test_r2": test})
            last = mse
    return out


def run_ours(X, y, Xt, yt, names, k):
    t = time.perf_counter()
    model = ExhaustiveSR(max_size=k, max_trees=1e10, max_nodes=10**7).fit(X, y, names)
    dt = time.perf_counter() - t
    pts = []
    for p in model.pareto_:
        from icml26.srfpt.fit import eval_tree

        pred = p.params[0] + p.params[1] * eval_tree(p.tree, model.ops_, Xt, list(p.params[2:]))
        pts.append((p.size, p.mse, r2(pred, yt)))
    return {
        "time_s": dt,
        "front": front(pts),
        "selected": {"expression": str(model.expression_), "size": model.size_, "test_r2": r2(model.predict(Xt), yt)},
        "distinct_functions": model.n_distinct_,
        "trees_covered": model.n_trees_,
    }


def run_operon(X, y, Xt, yt, seconds, seed):
    from pyoperon.sklearn import SymbolicRegressor

    t = time.perf_counter()
    model = SymbolicRegressor(
        allowed_symbols="add,sub,mul,div,sin,cos,exp,log,constant,variable",
        objectives=["r2", "length"],
        max_time=max(1, math.ceil(seconds)),
        generations=10**6,
        max_evaluations=10**9,
        n_threads=1,
        random_state=seed,
    ).fit(X, y)
    dt = time.perf_counter() - t
    pts = [
        (
            p["length"],
            float(np.mean((model.evaluate_model(p["tree"], X) - y) ** 2)),
            r2(model.evaluate_model(p["tree"], Xt), yt),
        )
        for p in model.pareto_front_
    ]
    return {
        "time_s": dt,
        "front": front(pts),
        "selected": {"size": int(model.model_.Length), "test_r2": r2(model.predict(Xt), yt)},
    }


def run_gplearn(X, y, Xt, yt, seconds, seed):
    from gplearn.genetic import SymbolicRegressor

    model = SymbolicRegressor(
        population_size=1000,
        generations=1,
        function_set=("add", "sub", "mul", "div", "sin", "cos", "log"),
        warm_start=True,
        random_state=seed,
    )
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while True:
            model.fit(X, y)
            if time.perf_counter() - t >= seconds:
                break
            model.set_params(generations=model.generations + 1)
    dt = time.perf_counter() - t
    pts = [
        (prog.length_, float(np.mean((prog.execute(X) - y) ** 2)), r2(prog.execute(Xt), yt))
        for prog in model._programs[-1]
    ]
    return {
        "time_s": dt,
        "generations": model.generations,
        "front": front(pts),
        "selected": {"size": int(model._program.length_), "test_r2": r2(model.predict(Xt), yt)},
    }


def fronts(k: int, seed: int) -> dict:
    out = {}
    for name in SETS:
        X, y, names = load_pmlb(name)
        tr, te = heldout_split(len(y), 0.25, seed=seed)  # fixed before any method runs
        args = (X[tr], y[tr], X[te], y[te])
        ours = run_ours(*args, names, k)
        row = {"rows": len(y), "features": X.shape[1], "ours": ours}
        for peer, run in (("pyoperon", run_operon), ("gplearn", run_gplearn)):
            try:
                row[peer] = run(*args, ours["time_s"], seed)
            except ImportError as exc:
                row[peer] = {"error": f"not installed ({exc})"}
        out[name] = row
        print(
            name,
            json.dumps(
                {
                    m: {"time_s": round(v.get("time_s", float("nan")), 2), "selected": v.get("selected")}
                    for m, v in row.items()
                    if isinstance(v, dict)
                }
            ),
            flush=True,
        )
    return out


def tractability(budget: float, sizes=(3, 5, 7), max_v: int = 21) -> list[dict]:
    X, y, _ = load_pmlb("cpu_act")
    X = (X - X.mean(axis=0)) / X.std(axis=0)  # standardised: raw counters reach 1e6, squares would overflow _BIG
    rows = []
    for k in sizes:
        stopped = False
        for v in range(1, max_v + 1):
            trees = estimate_trees(v, DEFAULT_OPS, (1.0,), max_size=k)
            row = {"k": k, "v": v, "labelled_trees": trees}
            if stopped:
                row["status"] = "skipped (previous v over budget)"
            else:
                t = time.perf_counter()
                try:
                    m = ExhaustiveSR(max_size=k, max_trees=1e13, max_nodes=2 * 10**7).fit(X[:, :v], y)
                    row |= {"distinct_functions": m.n_distinct_, "seconds": time.perf_counter() - t, "status": "ok"}
                    stopped = row["seconds"] > budget
                except (SearchSpaceTooLarge, MemoryError) as exc:
                    row |= {"seconds": time.perf_counter() - t, "status": f"refused: {str(exc)[:120]}"}
                    stopped = True
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def aa_rows(results_path: str, seed: int) -> dict:
    """A/A rows: each peer rerun with seed + 1 at the same wall time as in ``results_path`` (ours is deterministic
    apart from its probe rows), so the spread of a one-seed comparison can be read beside it."""
    earlier = json.loads(Path(results_path).read_text())
    out = {}
    for name in SETS:
        X, y, _ = load_pmlb(name)
        tr, te = heldout_split(len(y), 0.25, seed=earlier["seed"])
        args = (X[tr], y[tr], X[te], y[te])
        seconds = earlier["fronts"][name]["ours"]["time_s"]
        row = {}
        for peer, run in (("pyoperon", run_operon), ("gplearn", run_gplearn)):
            first = earlier["fronts"][name][peer]["selected"]["test_r2"]
            second = run(*args, seconds, seed + 1)["selected"]["test_r2"]
            row[peer] = {"seed": first, "seed + 1": second, "difference": second - first}
        out[name] = row
        print(name, json.dumps(row), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-size", type=int, default=7)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per search after which a k stops growing v")
    ap.add_argument("--seed", type=int, default=0, help="seed of the held-out split and of the peers")
    ap.add_argument("--quick", action="store_true", help="k = 5 and a 5 s budget (a minute in all)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "srfpt_pmlb.json"))
    ap.add_argument(
        "--aa", action="store_true", help="only the peers' A/A rows (seed + 1) against the results in --out"
    )
    args = ap.parse_args()
    if args.aa:
        rows = aa_rows(args.out, args.seed)
        aa_path = Path(args.out).with_name(Path(args.out).stem + "_aa.json")
        aa_path.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"wrote {aa_path}")
        return
    k, budget = (5, 5.0) if args.quick else (args.max_size, args.budget)
    result = {
        "max_size": k,
        "seed": args.seed,
        "fronts": fronts(k, args.seed),
        "tractability": tractability(budget, sizes=(3, 5) if args.quick else (3, 5, 7)),
    }
    Path(args.out).write_text(json.dumps(result, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
