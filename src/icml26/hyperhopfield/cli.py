"""``icml26 hyperhopfield``: place fields, population geometry, memory capacity, posterior-mean (MHN) decoding.

::

    icml26 hyperhopfield fields --recording linear-track [--out FIELDS.npz] [--plot MAPS.png] [--json OUT]
    icml26 hyperhopfield fields --units spikes.mat --position trajectory.videoPositionTracking   # your files
    icml26 hyperhopfield geometry --recording w-maze --out BETTI.png --json OUT   # the Betti-curve test
    icml26 hyperhopfield geometry --widths exponential [--cells 200] [--betti] [--json OUT] [--out PLOT.png]
    icml26 hyperhopfield capacity --dims 2,3,4,6 --radius 2,4,6 [--noise 0.5] [--json OUT]
    icml26 hyperhopfield decode --recording linear-track [--window 0.5] [--folds 5]   # cross-validated
    icml26 hyperhopfield decode [--widths exponential] [--budget 20]            # simulate and score
    icml26 hyperhopfield decode --counts C.npy --rates F.npy --positions S.npy --out EST.npy   # your arrays
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from icml26._util.cli import (
    ArgumentParser,
    DefaultsHelpFormatter,
    add_json_argument,
    bounded_float,
    bounded_int,
    positive_float,
    positive_int,
    seed_int,
)
from icml26._util.device import add_threads_argument, apply_threads
from icml26._util.io import atomic_output, check_input_file, check_output_path, save_npy


def _list(conv):
    def parse(text: str):
        try:
            return [conv(t) for t in text.split(",") if t.strip()]
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"in list {text!r}: {exc}") from None

    return parse


def _recording_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--recording",
        choices=("linear-track", "w-maze"),
        help="a shipped rat hippocampal recording (nelpy example data, MIT)",
    )
    p.add_argument(
        "--units",
        type=Path,
        help="your units: a MatClust spikes.mat, an .npz of one spike-time array (s) per unit, or a bundle .npz",
    )
    p.add_argument(
        "--position", type=Path, help="your position track: .videoPositionTracking, or .npy (T, 2|3) of t, x[, y]"
    )
    p.add_argument(
        "--speed-min",
        type=bounded_float(0.0, 100.0, what="extents per second"),
        default=0.05,
        help="run epochs: speed above this many environment extents per second",
    )
    p.add_argument(
        "--dim", type=int, choices=(1, 2), help="1: project on the track's axis; 2: keep x, y (default: auto)"
    )


def _load_recording(args):
    from icml26.hyperhopfield.recordings import load_recording, prepare_track

    if args.recording is not None and (args.units is not None or args.position is not None):
        raise ValueError("give either --recording or --units/--position, not both")
    if args.recording is None and args.units is None:
        raise ValueError("give --recording NAME or --units FILE (with --position FILE)")
    for path, what in ((args.units, "units file"), (args.position, "position file")):
        if path is not None:
            check_input_file(path, what=what)
    if args.position is not None and args.units is None:
        raise ValueError("--position needs --units")
    rec = load_recording(args.recording, units=args.units, position=args.position)
    return rec, prepare_track(rec, dim=args.dim, speed_min=args.speed_min)


def _distinct(outputs, inputs) -> None:
    """Refuse an output path that names an input file (it would be destroyed)."""
    ins = {Path(p).resolve() for p in inputs if p is not None}
    for out in outputs:
        if out is not None and Path(out).resolve() in ins:
            raise ValueError(f"output {out} is also an input; choose another path")


def build_parser() -> argparse.ArgumentParser:
    fmt = DefaultsHelpFormatter
    parser = ArgumentParser(
        prog="icml26 hyperhopfield",
        description="Hyperbolic population geometry, MHN = MMSE decoding and Karcher-flow hyperbolic memory.",
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    f = sub.add_parser(
        "fields",
        help="place fields of real units: rate maps, widths, spatial information",
        description="Reads a shipped recording (--recording) or your spike and position files (--units, "
        "--position); keeps run epochs; writes occupancy-normalised rate maps, field widths and Skaggs spatial "
        "information (--out .npz), a figure of the place cells' maps and the width histogram (--plot .png) and a "
        "summary (--json). Example: icml26 hyperhopfield fields --recording linear-track --plot maps.png",
        formatter_class=fmt,
    )
    _recording_args(f)
    f.add_argument("--bins", type=bounded_int(2, 200, what="bins per axis"), help="bins per axis (default 50 / 25)")
    f.add_argument(
        "--smooth", type=bounded_float(0.0, 20.0, what="bins"), default=1.5, help="Gaussian smoothing (bins)"
    )
    f.add_argument("--out", type=Path, help="write rate maps, occupancy, widths, information here (.npz)")
    f.add_argument("--plot", type=Path, help="write a PNG of the place cells' rate maps and the widths here")
    add_json_argument(f, "a summary")

    g = sub.add_parser(
        "geometry",
        help="population geometry: the Betti-curve test (real or simulated units), distance scaling",
        description="With --recording or --units/--position: the Betti-curve test of the units' correlations "
        "against a line, a circle and point clouds in R^d and H^d (fitted space, dimension and radius, "
        "block-bootstrap intervals, a null from the best zero-curvature model) "
        "and hyperbolic MDS as a second view. Without: a simulated place-cell population (distance vs "
        "separation, Gromov delta, MDS stress; --betti adds the Betti-curve test of its correlations). Writes a "
        "PNG (--out) and a JSON summary (--json). Example: icml26 hyperhopfield geometry --recording w-maze "
        "--out betti.png",
        formatter_class=fmt,
    )
    _recording_args(g)
    g.add_argument("--window", type=bounded_float(0.01, 60.0, what="seconds"), default=0.25, help="count window (s)")
    g.add_argument("--boot", type=bounded_int(0, 1000, what="time"), default=50, help="bootstrap replicates")
    g.add_argument("--null", type=bounded_int(0, 1000, what="time"), default=40, help="flat-null surrogates")
    g.add_argument(
        "--widths",
        choices=("exponential", "log-uniform", "constant"),
        default="exponential",
        help="receptive-field width distribution (simulated population)",
    )
    g.add_argument("--cells", type=bounded_int(1, 100_000, what="memory"), default=200, help="number of place cells")
    g.add_argument("--mean-width", type=positive_float, default=0.05, help="mean width (environment size 1)")
    g.add_argument("--env-dim", type=int, choices=(1, 2), default=1, help="simulated environment dimension")
    g.add_argument("--pairs", type=bounded_int(1, 100_000, what="memory"), default=300, help="pairs per separation")
    g.add_argument("--betti", action="store_true", help="also run the Betti-curve test on the simulated cells")
    g.add_argument("--seed", type=seed_int, default=0, help="random seed")
    add_json_argument(g, "the results")
    g.add_argument("--out", type=Path, help="write a PNG plot here (.png)")

    c = sub.add_parser(
        "capacity",
        help="capacity of hyperbolic / Euclidean / sphere memories",
        description="Reads nothing; for every memory, dimension and max norm R, stores random patterns and finds "
        "the largest pattern count (doubling up to --p-max) still retrieved from queries at intrinsic noise "
        "--noise, printing one line per memory and writing the table as JSON (--json). Example: icml26 "
        "hyperhopfield capacity --dims 2,4 --radius 2,6 --p-max 1024 --json capacity.json",
        formatter_class=fmt,
    )
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
    add_json_argument(c, "the results")
    add_threads_argument(c)  # CPU-only: Hopfield memories of a few hundred patterns

    d = sub.add_parser(
        "decode",
        help="Poisson posterior-mean (MHN) decoding of position",
        description="Three inputs: a recording (--recording, or --units/--position: cross-validated Bayesian "
        "decoding of the run windows, rate maps fitted on the other folds), your arrays (--counts, --rates, "
        "--positions), or a simulated population. Writes the decoded positions (--out .npy) and a summary "
        "(--json). Example: icml26 hyperhopfield decode --recording linear-track --json -",
        formatter_class=fmt,
    )
    _recording_args(d)
    d.add_argument("--window", type=bounded_float(0.01, 60.0, what="seconds"), default=0.5, help="decoding window (s)")
    d.add_argument("--folds", type=bounded_int(2, 100), default=5, help="cross-validation folds (blocks of time)")
    d.add_argument("--all-units", action="store_true", help="decode with every unit, not only the place cells")
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
    add_json_argument(d, "a summary")
    return parser


def _write_json(path: Path | None, payload: dict) -> None:
    """``--json PATH|-`` (with ``-`` the dispatcher ``icml26`` keeps standard output for the JSON alone)."""
    from icml26._util.io import write_json

    write_json(path, payload)
    if path is not None and str(path) != "-":
        print(f"wrote {path}")


def _check_outputs(args, suffixes: dict[str, tuple[str, ...]]) -> None:
    """Check every output before any work: writable, the right suffix, not an input file."""
    outs = []
    for name, suf in suffixes.items():
        p = getattr(args, name, None)
        if p is not None and not (name == "json" and str(p) == "-"):
            check_output_path(p, suffixes=suf)
            outs.append(p)
    ins = [getattr(args, k, None) for k in ("units", "position", "counts", "rates", "positions")]
    _distinct(outs, ins)


def _finite(x):
    """JSON-safe number (NaN and inf become null)."""
    x = float(x)
    return x if np.isfinite(x) else None


def _savefig(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    with atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
    print(f"wrote {path}")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _fields(args) -> int:
    from icml26.hyperhopfield.recordings import place_fields

    _check_outputs(args, {"out": (".npz",), "plot": (".png",), "json": (".json",)})
    rec, track = _load_recording(args)
    pf = place_fields(rec, track, n_bins=args.bins, smooth_bins=args.smooth)
    cells = pf.place_cells()
    widths = np.concatenate([pf.widths[i] for i in cells] or [np.zeros(0)])
    summary = {
        "recording": rec.name,
        "units": rec.n_units,
        "dim": track.dim,
        "run_seconds": float(np.gradient(track.t)[track.run].sum()),
        "place_cells": [int(i) for i in cells],
        "field_widths": widths.tolist(),
        "mean_rate_hz": [_finite(v) for v in pf.mean_rate],
        "peak_rate_hz": [_finite(v) for v in pf.peak_rate],
        "spatial_info_bits_per_spike": [_finite(v) for v in pf.spatial_info],
    }
    print(
        f"{rec.name}: {rec.n_units} units, {track.dim}-D, {summary['run_seconds']:.0f} s of running; "
        f"{len(cells)} place cells with {len(widths)} fields (median width "
        f"{np.median(widths) if len(widths) else 0:.3f} environment extents)"
    )
    if args.out is not None:
        from icml26._util.io import save_npz

        save_npz(
            args.out,
            rate=pf.rate,
            occupancy=pf.occupancy,
            spatial_info=pf.spatial_info,
            mean_rate=pf.mean_rate,
            peak_rate=pf.peak_rate,
            place_cells=cells,
            field_widths=widths,
            field_unit=np.concatenate([np.full(len(pf.widths[i]), i) for i in cells] or [np.zeros(0, int)]),
        )
        print(f"wrote {args.out}")
    if args.plot is not None:
        _savefig(fields_figure(pf, cells, widths, rec.name, track.dim), args.plot)
    _write_json(args.json, summary)
    return 0


def fields_figure(pf, cells, widths, name: str, dim: int):
    """Rate maps of the place cells (1-D: one row per cell, sorted by peak; 2-D: up to 8 maps) and the width
    histogram with its exponential, normal and log-normal maximum-likelihood fits."""
    from scipy import stats

    plt = _pyplot()
    fig = plt.figure(figsize=(10, 4))
    if dim == 1:
        ax = fig.add_subplot(1, 2, 1)
        maps = pf.rate[cells]
        order = np.argsort(np.nanargmax(np.nan_to_num(maps, nan=-1), axis=1)) if len(cells) else []
        norm = maps / np.nanmax(maps, axis=1, keepdims=True) if len(cells) else np.zeros((0, 1))
        ax.imshow(norm[order] if len(cells) else np.zeros((1, 1)), aspect="auto", extent=(0, 1, len(cells), 0))
        ax.set_xlabel("position (track extent)")
        ax.set_ylabel("place cell (sorted by peak)")
        ax.set_title(f"{name}: normalised rate maps")
    else:
        for k, i in enumerate(cells[:8]):
            ax = fig.add_subplot(2, 8, (k // 4) * 8 + k % 4 + 1)
            ax.imshow(pf.rate[i].T, origin="lower")
            ax.set_axis_off()
            ax.set_title(f"unit {i}", fontsize=7)
    ax = fig.add_subplot(1, 2, 2)
    if len(widths) >= 3:
        ax.hist(widths, bins=12, density=True, alpha=0.5, label=f"{len(widths)} fields")
        x = np.linspace(1e-3, widths.max() * 1.2, 200)
        ax.plot(x, stats.expon.pdf(x, scale=widths.mean()), label="exponential")
        ax.plot(x, stats.norm.pdf(x, widths.mean(), widths.std()), label="constant (normal)")
        lw = np.log(widths)
        ax.plot(x, stats.lognorm.pdf(x, max(lw.std(), 1e-6), scale=np.exp(lw.mean())), label="log-normal")
        ax.legend(fontsize=7)
    ax.set_xlabel("field width (environment extents)")
    ax.set_title("field widths, maximum-likelihood fits")
    fig.tight_layout()
    return fig


def _betti_payload(res: dict) -> dict:
    keys = ("score", "gain", "radius", "dim", "units", "null_q95", "excess_over_flat_null", "p_flat", "hyperbolic")
    out = {k: (res[k] if isinstance(res[k], bool | int) else _finite(res[k])) for k in keys if k in res}
    out["model"] = res["model"]
    out["score_interval"] = [_finite(v) for v in res["score_interval"]]
    out["radius_interval"] = [_finite(v) for v in res["radius_interval"]]
    out["betti_curves"] = res["curves"].tolist()
    return out


def betti_figure(res: dict, lib, title: str):
    """The data's Betti curves beside the reference curves of the best zero-curvature model (line, circle or R^d)
    and the best hyperbolic model."""
    from icml26.hyperhopfield.betti import DENSITIES, model_label

    plt = _pyplot()
    fit = res["fit"]
    flat = min(((m, v) for m, v in fit.losses.items() if m[0] != "hyperbolic"), key=lambda kv: kv[1])[0]
    best = min(((m, v) for m, v in fit.losses.items() if m[0] == "hyperbolic"), key=lambda kv: kv[1])[0]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for k, ax in enumerate(axes):
        ax.plot(DENSITIES, res["curves"][k], "k-", lw=2, label="data")
        for model, style in ((flat, "--"), (best, ":")):
            curve = lib.curves[lib.models.index(model)][k]
            ax.plot(DENSITIES, curve, style, label=model_label(model))
        ax.set_xlabel("edge density")
        ax.set_ylabel(f"beta_{k}")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{title}: best fit {res['model']}, hyperbolic score S = {res['score']:.2f}", fontsize=9)
    fig.tight_layout()
    return fig


def _geometry(args) -> int:
    _check_outputs(args, {"out": (".png",), "json": (".json",)})
    if args.recording is not None or args.units is not None or args.position is not None:
        return _geometry_recording(args)
    return _geometry_simulated(args)


def _geometry_recording(args) -> int:
    from icml26.hyperhopfield.betti import correlation_geometry, reference_library
    from icml26.hyperhopfield.geometry import hyperbolic_mds_radius
    from icml26.hyperhopfield.recordings import binned_counts

    rec, track = _load_recording(args)
    counts, _, _ = binned_counts(rec, track, args.window)
    rate = counts.mean(0) / args.window
    keep = (rate <= 10.0) & (counts.std(0) > 0)  # putative interneurons (> 10 Hz) and silent units out
    if keep.sum() < 4:
        raise ValueError(f"only {int(keep.sum())} units fire (<= 10 Hz) in the run windows; the test needs 4")
    counts = counts[:, keep]
    rng = np.random.default_rng(args.seed)
    lib = reference_library(counts.shape[1], rng)
    res = correlation_geometry(counts, rng, n_boot=args.boot, n_null=args.null, lib=lib)
    C = np.corrcoef(counts.T)
    hmds = hyperbolic_mds_radius(np.sqrt(np.maximum(2 * (1 - C), 0)))
    payload = {"recording": rec.name, "windows": len(counts), **_betti_payload(res)}
    payload["hyperbolic_mds_radius"] = _finite(hmds["R_hyp"])
    lo, hi = res["score_interval"]
    msg = f"{rec.name}: {res['units']} units, {len(counts)} windows: best fit {res['model']} "
    msg += f"(radius bootstrap {res['radius_interval'][0]:.2f}-{res['radius_interval'][1]:.2f}); hyperbolic score S "
    msg += f"{res['score']:.2f} ({lo:.2f}-{hi:.2f}; gain G {res['gain']:.2f})"
    if args.null:
        msg += f", flat null 95 % {res['null_q95']:.2f} (p = {res['p_flat']:.2f})"
    print(msg + f"; hyperbolic MDS radius {hmds['R_hyp']:.2f}")
    if args.out is not None:
        _savefig(betti_figure(res, lib, rec.name), args.out)
    _write_json(args.json, payload)
    return 0


def _geometry_simulated(args) -> int:
    from icml26.hyperhopfield.data import place_cells, run_session
    from icml26.hyperhopfield.geometry import distance_scaling, gromov_delta, log_scaling_range, mds_stress

    if args.mean_width >= 1:
        raise ValueError(f"--mean-width must be below the environment size 1; got {args.mean_width}")
    # the largest arrays are (pairs, cells) rate matrices (two at a time) and the Betti test's (windows, cells)
    need = 8 * 4 * args.cells * max(args.pairs, 60) + (8 * 2000 * args.cells if args.betti else 0)
    if need > 2e9:
        raise ValueError(
            f"--cells {args.cells} x --pairs {args.pairs} needs about {need / 2**30:.1f} GiB; the limit is 2 GB "
            "(lower either)"
        )
    if args.betti and args.cells > 300:
        raise ValueError(f"--betti takes at most 300 cells (Betti curves of a clique complex); got {args.cells}")
    if args.betti and (args.env_dim != 1 or args.cells < 4):  # before any work is done or printed
        raise ValueError("--betti simulates laps on a 1-D track (--env-dim 1) with at least 4 cells")
    rng = np.random.default_rng(args.seed)
    cells = place_cells(args.cells, args.widths, mean_width=args.mean_width, dim=args.env_dim, rng=rng)
    seps = np.logspace(-3.5, -0.5, 25)
    dpop = distance_scaling(cells, seps, args.pairs, rng)
    decades, _ = log_scaling_range(seps, dpop)
    s = rng.random((60, args.env_dim))
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
    print(
        f"{args.widths} widths, {args.cells} cells, {args.env_dim}-D: log-distance scaling over {decades:.2f} "
        f"decades; delta_rel {res['gromov_delta_rel']:.3f}; MDS stress Euclidean {res['mds_stress_euclidean']:.3f}, "
        f"hyperbolic {res['mds_stress_hyperbolic']:.3f}"
    )
    if args.betti:
        from icml26.hyperhopfield.betti import correlation_geometry

        counts, _ = run_session(cells, 2000, rng, window=0.25)
        b = correlation_geometry(counts, rng, n_boot=args.boot, n_null=args.null)
        res["betti"] = _betti_payload(b)
        print(
            f"Betti-curve test of the cells' correlations: best fit {b['model']}; hyperbolic score S "
            f"{b['score']:.2f} (gain G {b['gain']:.2f})"
        )
    if args.out is not None:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.semilogx(seps, dpop, "o-")
        ax.set_xlabel("physical separation")
        ax.set_ylabel("population distance")
        _savefig(fig, args.out)
    _write_json(args.json, res)
    return 0


def _capacity(args) -> int:
    from icml26.hyperhopfield.capacity import SPACES, estimate_capacity, make_space

    _check_outputs(args, {"json": (".json",)})
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
    from icml26._util.progress import progress

    bar = progress(spaces, desc="capacity", file=sys.stderr, **({"disable": True} if len(spaces) < 4 else {}))
    for sp in bar:
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
        bar.write(
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

    _check_outputs(args, {"out": (".npy",), "json": (".json",)})
    if args.recording is not None or args.units is not None or args.position is not None:
        if args.counts is not None or args.rates is not None or args.positions is not None:
            raise ValueError("give a recording (--recording or --units/--position) or arrays (--counts ...), not both")
        return _decode_recording(args)
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
        if not np.any(F > 0):
            raise ValueError(f"rates file {args.rates} is all zeros: no position can be told from another")
        if F.max() > 1e6 or counts.max() > 1e6:
            raise ValueError("rates and counts above 1e6 per window are not spike counts; check the units")
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
        print(f"wrote {args.out}")
    _write_json(args.json, summary)
    return 0


def _decode_recording(args) -> int:
    from icml26.hyperhopfield.recordings import decode_position

    rec, track = _load_recording(args)
    try:  # place cells are chosen on each fold's training blocks only
        res = decode_position(
            rec,
            track,
            window=args.window,
            folds=args.folds,
            place_cells_only=not args.all_units,
            rng=np.random.default_rng(args.seed),
        )
    except ValueError as exc:
        if "place-cell" in str(exc):
            raise ValueError(f"{exc}; decode with --all-units") from None
        raise
    summary = {"recording": rec.name, "units": round(res.units_used, 1), **res.summary()}
    print(
        f"{rec.name}: {summary['units']:g} units per fold, {summary['windows']} run windows of {args.window:g} s, "
        f"{args.folds}-fold: median error {summary['median_error_posterior_mean']:.3f} (posterior mean), "
        f"{summary['median_error_map']:.3f} (MAP), chance {summary['median_error_chance']:.3f} environment extents"
    )
    if args.out is not None:
        save_npy(args.out, np.concatenate([res.estimate, res.truth], 1))
        print(f"wrote {args.out} (columns: decoded position, tracked position)")
    _write_json(args.json, summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 hyperhopfield``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    apply_threads(args)
    verbs = {"fields": _fields, "geometry": _geometry, "capacity": _capacity, "decode": _decode}
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
