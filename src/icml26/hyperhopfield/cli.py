"""``icml26 hyperhopfield``: population geometry, memory capacity, and posterior-mean (MHN) decoding.

::

    icml26 hyperhopfield geometry --widths exponential [--cells 200] [--json OUT] [--out PLOT.png]
    icml26 hyperhopfield capacity --dims 2,3,4,6 --radius 2,4,6 [--noise 0.5] [--json OUT]
    icml26 hyperhopfield decode [--widths exponential] [--budget 20]            # simulate and score
    icml26 hyperhopfield decode --counts C.npy --rates F.npy --positions S.npy --out EST.npy   # your data
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from icml26._util.cli import ArgumentParser, DefaultsHelpFormatter, positive_float, positive_int, seed_int
from icml26._util.io import atomic_output, check_input_file, check_output_path, save_npy


def _list(conv):
    def parse(text: str):
        try:
            return [conv(t) for t in text.split(",") if t.strip()]
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"in list {text!r}: {exc}") from None

    return parse


def build_parser() -> argparse.ArgumentParser:
    fmt = DefaultsHelpFormatter
    parser = ArgumentParser(
        prog="icml26 hyperhopfield",
        description="Hyperbolic population geometry, MHN = MMSE decoding and Karcher-flow hyperbolic memory.",
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    g = sub.add_parser(
        "geometry", help="population distance vs separation, Gromov delta, MDS stress", formatter_class=fmt
    )
    g.add_argument(
        "--widths",
        choices=("exponential", "log-uniform", "constant"),
        default="exponential",
        help="receptive-field width distribution",
    )
    g.add_argument("--cells", type=positive_int, default=200, help="number of place cells")
    g.add_argument("--mean-width", type=positive_float, default=0.05, help="mean width (environment size 1)")
    g.add_argument("--dim", type=int, choices=(1, 2), default=1, help="environment dimension")
    g.add_argument("--pairs", type=positive_int, default=300, help="position pairs per separation")
    g.add_argument("--betti", action="store_true", help="also compute Betti curves (ripser) of 60 positions")
    g.add_argument("--seed", type=seed_int, default=0, help="random seed")
    g.add_argument("--json", type=Path, help="write the results as JSON here")
    g.add_argument("--out", type=Path, help="write a PNG plot of distance vs log separation here")

    c = sub.add_parser("capacity", help="capacity of hyperbolic / Euclidean / sphere memories", formatter_class=fmt)
    c.add_argument("--dims", type=_list(positive_int), default=[2, 3, 4], help="comma-separated dimensions")
    c.add_argument(
        "--radius",
        type=_list(positive_float),
        default=[2.0, 4.0, 6.0],
        help="comma-separated max norms R (hyperbolic radius <= 12 in float64)",
    )
    c.add_argument("--noise", type=positive_float, default=0.5, help="intrinsic query noise radius")
    c.add_argument("--models", default="hyperbolic,euclidean,sphere", help="comma-separated memories")
    c.add_argument("--p-max", type=positive_int, default=4096, help="largest number of patterns tried")
    c.add_argument("--queries", type=positive_int, default=400, help="queries per pattern count")
    c.add_argument("--seed", type=seed_int, default=0, help="random seed")
    c.add_argument("--json", type=Path, help="write the results as JSON here")

    d = sub.add_parser("decode", help="Poisson posterior-mean (MHN) decoding of position", formatter_class=fmt)
    d.add_argument("--counts", type=Path, help="(Q, N) spike counts .npy to decode (needs --rates, --positions)")
    d.add_argument("--rates", type=Path, help="(G, N) mean counts of the N cells at G candidate positions .npy")
    d.add_argument("--positions", type=Path, help="(G,) or (G, k) candidate positions .npy")
    d.add_argument(
        "--widths",
        choices=("exponential", "log-uniform", "constant"),
        default="exponential",
        help="width distribution of the simulated population (without --counts)",
    )
    d.add_argument("--cells", type=positive_int, default=50, help="simulated cells")
    d.add_argument("--mean-width", type=positive_float, default=0.05, help="simulated mean width")
    d.add_argument("--budget", type=positive_float, default=20.0, help="expected spikes per observation")
    d.add_argument("--queries", type=positive_int, default=2000, help="simulated observations")
    d.add_argument("--seed", type=seed_int, default=0, help="random seed")
    d.add_argument("--out", type=Path, help="write the decoded positions (.npy) here")
    d.add_argument("--json", type=Path, help="write a summary as JSON here")
    return parser


def _write_json(path: Path | None, payload: dict) -> None:
    if path is not None:
        with atomic_output(path) as tmp:
            tmp.write_text(json.dumps(payload, indent=2) + "\n")


def _geometry(args) -> int:
    from icml26.hyperhopfield.data import place_cells
    from icml26.hyperhopfield.geometry import (
        betti_curves,
        distance_scaling,
        gromov_delta,
        log_scaling_range,
        mds_stress,
    )

    for p in (args.json, args.out):
        if p is not None:
            check_output_path(p)
    if args.mean_width >= 1:
        raise ValueError(f"--mean-width must be below the environment size 1; got {args.mean_width}")
    if args.cells > 100_000 or args.pairs > 100_000:
        raise ValueError("--cells and --pairs are limited to 100000 each (memory)")
    rng = np.random.default_rng(args.seed)
    cells = place_cells(args.cells, args.widths, mean_width=args.mean_width, dim=args.dim, rng=rng)
    seps = np.logspace(-3.5, -0.5, 25)
    dpop = distance_scaling(cells, seps, args.pairs, rng)
    decades, _ = log_scaling_range(seps, dpop)
    s = rng.random((60, args.dim))
    F = cells.rates(s)
    D = np.linalg.norm(F[:, None] - F[None], axis=-1)
    res = {
        "widths": args.widths,
        "log_scaling_range_decades": decades,
        "gromov_delta_rel": gromov_delta(D, 20000, rng),
        "mds_stress_euclidean": mds_stress(D, "euclidean", rng=rng),
        "mds_stress_hyperbolic": mds_stress(D, "hyperbolic", rng=rng),
        "separations": seps.tolist(),
        "population_distance": dpop.tolist(),
    }
    if args.betti:
        res["betti_curves"] = betti_curves(F, maxdim=1).tolist()
    print(
        f"{args.widths} widths, {args.cells} cells, {args.dim}-D: log-distance scaling over {decades:.2f} decades; "
        f"delta_rel {res['gromov_delta_rel']:.3f}; MDS stress Euclidean {res['mds_stress_euclidean']:.3f}, "
        f"hyperbolic {res['mds_stress_hyperbolic']:.3f}"
    )
    if args.out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.semilogx(seps, dpop, "o-")
        ax.set_xlabel("physical separation")
        ax.set_ylabel("population distance")
        with atomic_output(args.out) as tmp:
            fig.savefig(tmp, format="png", dpi=100)
        plt.close(fig)
    _write_json(args.json, res)
    return 0


def _capacity(args) -> int:
    from icml26.hyperhopfield.capacity import SPACES, estimate_capacity, make_space

    if args.json is not None:
        check_output_path(args.json)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in SPACES]
    if bad or not models:
        raise ValueError(f"unknown model(s) {bad}; choose from {', '.join(SPACES)}")
    if not args.dims or not args.radius:
        raise ValueError("--dims and --radius need at least one value each")
    if max(args.dims) > 64:
        raise ValueError(f"dimensions are limited to 64; got {max(args.dims)}")
    if args.p_max > 2**16:
        raise ValueError(f"--p-max is limited to 65536; got {args.p_max}")
    spaces = [make_space(m, d, R) for d in args.dims for R in args.radius for m in models]  # validates radii first
    betas = tuple(b / args.noise**2 for b in (4.0, 16.0, 64.0))
    rng = np.random.default_rng(args.seed)
    rows = []
    from tqdm import tqdm

    for sp in tqdm(spaces, desc="capacity", disable=len(spaces) < 4, file=sys.stderr):
        r = estimate_capacity(sp, args.noise, betas=betas, p_max=args.p_max, n_queries=args.queries, rng=rng)
        rows.append(
            {
                "model": sp.name,
                "d": sp.d,
                "R": sp.R,
                "capacity": r.capacity,
                "censored": r.censored,
                "best_beta": r.best_beta,
                "nn_separation": r.separation,
            }
        )
        tqdm.write(
            f"{sp.name:>10} d={sp.d} R={sp.R:g}: capacity {r.capacity}{'+' if r.censored else ''} "
            f"(beta {r.best_beta:.3g}, NN separation {r.separation:.3f})"
        )
    _write_json(args.json, {"noise": args.noise, "p_max": args.p_max, "rows": rows})
    return 0


def _load(path: Path, what: str) -> np.ndarray:
    check_input_file(path, what=what)
    try:
        a = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise ValueError(f"{what} {path} is not a readable .npy array ({exc.__class__.__name__})") from None
    if not isinstance(a, np.ndarray) or a.size == 0:
        raise ValueError(f"{what} {path} holds no array")
    if not np.issubdtype(a.dtype, np.number) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} {path} must hold finite numbers")
    return a.astype(np.float64)


def _decode(args) -> int:
    from icml26.hyperhopfield.data import place_cells
    from icml26.hyperhopfield.memory import poisson_posterior_mean

    for p in (args.json, args.out):
        if p is not None:
            check_output_path(p, suffixes=(".npy",) if p is args.out else ())
    if args.counts is None and (args.rates is not None or args.positions is not None):
        raise ValueError("--rates and --positions are read only with --counts (the observations to decode)")
    if args.counts is not None:
        if args.rates is None or args.positions is None:
            raise ValueError("--counts needs --rates and --positions")
        counts, F, S = (
            _load(args.counts, "counts file"),
            _load(args.rates, "rates file"),
            _load(args.positions, "positions file"),
        )
        counts = counts.reshape(1, -1) if counts.ndim == 1 else counts
        if counts.ndim != 2 or F.ndim != 2 or counts.shape[1] != F.shape[1] or len(S) != len(F):
            raise ValueError(f"shapes do not match: counts {counts.shape}, rates {F.shape}, positions {S.shape}")
        if np.any(counts < 0) or np.any(F < 0):
            raise ValueError("spike counts and rates must be non-negative")
        est = poisson_posterior_mean(F, counts, S.reshape(len(S), -1))
        print(f"decoded {len(counts)} observations over {len(S)} candidate positions")
        summary = {"observations": len(counts)}
    else:
        if args.mean_width >= 1:
            raise ValueError(f"--mean-width must be below the environment size 1; got {args.mean_width}")
        if args.queries * args.cells > 5e7:
            raise ValueError("--queries x --cells exceeds 5e7 (memory)")
        rng = np.random.default_rng(args.seed)
        cells = place_cells(args.cells, args.widths, mean_width=args.mean_width, rng=rng).with_budget(args.budget)
        grid = np.linspace(0, 1, 400)
        s = rng.random(args.queries)
        est = poisson_posterior_mean(cells.rates(grid), cells.counts(s, rng), grid)
        rmse = float(np.sqrt(np.mean((est[:, 0] - s) ** 2)))
        print(
            f"{args.widths} widths, {args.cells} cells, budget {args.budget:g} spikes: RMSE {rmse:.4f} (track length 1)"
        )
        summary = {"widths": args.widths, "rmse": rmse, "budget": args.budget, "cells": args.cells}
    if args.out is not None:
        save_npy(args.out, est)
    _write_json(args.json, summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 hyperhopfield``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    return {"geometry": _geometry, "capacity": _capacity, "decode": _decode}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
