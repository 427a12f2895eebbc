"""srfpt benchmark: the exhaustive search as Ray tasks, wall time vs workers, and the largest size reached.

One variable, the default eight operators, constant 1, 200 rows of ``x^3 - sin x`` (plus noise). Each size
is run in one process (the reference) and then on a local Ray instance with 1, 2, ... CPUs (started fresh
for each worker count; its start-up is timed separately and not in the search time). Every Ray run's
Pareto front is compared with the one-process front (sizes, MSEs and expressions must be identical).

The machine this ran on has 2 cores shared with other jobs: wall times are noisy, so the load average at
each run is recorded beside it, and a speed-up near 1 can mean the second core was busy elsewhere.

Usage: ``python benchmarks/srfpt_ray_scaling.py [--sizes 9 10] [--workers 1 2] [--budget 600]``
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from icml26.srfpt import ExhaustiveSR


def front(model: ExhaustiveSR) -> list[tuple[int, float, str]]:
    return [(p.size, p.mse, str(p.expression)) for p in model.pareto_]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 10])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--budget", type=float, default=600.0, help="stop growing the size past this many seconds")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "srfpt_ray_scaling.json"))
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, size=(args.rows, 1))
    y = X[:, 0] ** 3 - np.sin(X[:, 0]) + 0.01 * rng.standard_normal(args.rows)
    rows = []
    for size in args.sizes:
        t0 = time.perf_counter()
        ref = ExhaustiveSR(max_size=size, force=True).fit(X, y)
        one = time.perf_counter() - t0
        row = {
            "size": size,
            "distinct_functions": ref.n_distinct_,
            "trees_evaluated": ref.n_evaluated_,
            "one_process_s": one,
            "one_process_timings": ref.timings_,
            "load_average": os.getloadavg()[0],
            "ray": [],
        }
        print(f"size {size}: {ref.n_distinct_:,} functions, one process {one:.1f} s", flush=True)
        for w in args.workers:
            t0 = time.perf_counter()
            ray.init(num_cpus=w, include_dashboard=False, log_to_driver=False, configure_logging=False)
            ray.get([ray.remote(lambda: 0).remote() for _ in range(w)])  # workers up before the clock starts
            start = time.perf_counter() - t0
            try:
                t0 = time.perf_counter()
                model = ExhaustiveSR(max_size=size, force=True, ray_address="local").fit(X, y)
                wall = time.perf_counter() - t0
            finally:
                ray.shutdown()
            same = front(model) == front(ref)
            row["ray"].append(
                {
                    "workers": w,
                    "search_s": wall,
                    "ray_start_s": start,
                    "speedup_vs_one_process": one / wall,
                    "timings": model.timings_,
                    "front_identical": same,
                    "load_average": os.getloadavg()[0],
                }
            )
            print(f"  {w} workers: {wall:.1f} s (start {start:.1f} s), speed-up {one / wall:.2f}, same front {same}")
        rows.append(row)
        Path(args.out).write_text(json.dumps({"config": vars(args), "rows": rows}, indent=1))
        if one > args.budget:
            break
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
