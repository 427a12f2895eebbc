"""``icml26 coherence fit | score``: thin verbs over the library."""

from __future__ import annotations

import argparse

import numpy as np

from icml26._util.cli import (
    ArgumentParser,
    DefaultsHelpFormatter,
    add_json_argument,
    bounded_float,
    bounded_int,
    nonnegative_float,
    nonnegative_int,
    positive_int,
)
from icml26._util.device import add_device_arguments, apply_device_arguments
from icml26._util.io import check_output_path, save_npz, write_json

DATASETS = ("circle", "torus", "rotated-digits", "rotated-mnist", "sst2-tokens", "minilm-tokens")
#: Data sets whose samples are images through 36 rotation angles (-n counts images x 36).
ROTATED = ("rotated-digits", "rotated-mnist")
# A penalty weight beyond 1e3 swamps the reconstruction term: every code collapses to zero.
LAMBDA = bounded_float(0.0, 1e3, what="a heavier penalty collapses every code to zero")


def build_parser() -> argparse.ArgumentParser:
    fmt = DefaultsHelpFormatter
    parser = ArgumentParser(
        prog="icml26 coherence",
        description="Coherence of non-negative codes (Fréchet variances on a sample geometry) and the Coh "
        "objective in an autoencoder.",
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    f = sub.add_parser(
        "fit",
        help="train an autoencoder with recon + Coh / L1 / nothing",
        description="Reads nothing; makes a built-in data set (--data), trains an autoencoder with the chosen code "
        "penalty and prints reconstruction error, density, the codes' coherence and contiguity; writes the codes "
        "(--out .npz) and the summary (--json). Example: icml26 coherence fit --data circle --penalty coh "
        "--steps 500 --out codes.npz --json fit.json",
        formatter_class=fmt,
    )
    f.add_argument("--data", choices=DATASETS, default="circle", help="built-in data set")
    f.add_argument("--penalty", choices=("coh", "l1", "none"), default="coh", help="code regulariser")
    f.add_argument("--lam", type=LAMBDA, default=None, help="penalty weight (default: 0.1 Coh, 0.01 L1)")
    f.add_argument(
        "-n",
        type=bounded_int(8, 20_000, what="memory guard"),
        default=1000,
        help="samples (rotated-digits / rotated-mnist: images x 36 angles; rotated-mnist has 500 images)",
    )
    f.add_argument("--features", type=bounded_int(1, 4096, what="memory guard"), default=16, help="code width m")
    f.add_argument(
        "--hidden",
        type=bounded_int(0, 4096, what="memory guard"),
        default=64,
        help="hidden width of encoder and decoder; 0 = a sparse-autoencoder dictionary (one linear layer each way)",
    )
    f.add_argument(
        "--steps", type=bounded_int(1, 1_000_000, what="time guard"), default=1000, help="Adam steps (batch 256)"
    )
    f.add_argument(
        "--geometry",
        choices=("auto", "geodesic", "circular"),
        default="auto",
        help="Coh's sample geometry: kNN-geodesic on the inputs (joined by the minimum spanning tree when the "
        "graph falls apart), or the known angle (circular: side information); auto = circular for the rotated "
        "data sets, geodesic otherwise",
    )
    f.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (data and model)")
    add_device_arguments(f)
    f.add_argument("--out", default=None, help="write codes (and angles when known) to this .npz file")
    add_json_argument(f, "the summary")

    s = sub.add_parser(
        "score",
        help="coherence of a saved code matrix on a sample geometry",
        description="Reads a non-negative code matrix (.npy) and the samples' positions or distances (.npy), and "
        "prints the coherence scores (Fréchet variances of columns and rows, coverage, the mean per-feature "
        "coherence chance-corrected against shuffled samples; for angles on one circle, the circle's tiling by "
        "contiguous feature territories; optionally the coherence "
        "check and the topology check), also as JSON (--json). Example: icml26 coherence score codes.npy "
        "--positions theta.npy --geometry circular --json scores.json",
        formatter_class=fmt,
    )
    s.add_argument("codes", help=".npy file: non-negative (samples, features) matrix")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--positions", help=".npy file: sample positions (n,) or (n, k)")
    g.add_argument("--distances", help=".npy file: (n, n) symmetric non-negative distance matrix")
    s.add_argument(
        "--geometry",
        choices=("euclidean", "circular", "geodesic"),
        default="euclidean",
        help="how to read --positions: coordinates, angles in radians, or data points (kNN-geodesic)",
    )
    s.add_argument("--neighbors", type=positive_int, default=10, help="k of the kNN graph (geodesic)")
    s.add_argument("--rectify", action="store_true", help="clip negative activations at 0 instead of refusing")
    s.add_argument("--r-col", type=nonnegative_float, default=None, help="column radius for the coherence check")
    s.add_argument("--r-row", type=nonnegative_float, default=None, help="row radius for the coherence check")
    s.add_argument("--topology", action="store_true", help="also VR diagrams + bottleneck vs the bound 2r")
    add_json_argument(s, "the scores")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 coherence``; bad input raises ``ValueError`` / ``OSError``."""
    args = build_parser().parse_args(argv)
    return {"fit": _fit, "score": _score}[args.verb](args)


# Why a score is not a finite number, by its key (NaN/inf are not JSON: the file gets null and this reason).
_UNDEFINED = {
    "mean_column_variance": "no feature is ever active",
    "max_column_radius": "no feature is ever active",
    "mean_row_variance": "no sample has an active feature",
    "max_row_radius": "no sample has an active feature",
    "score": "no feature is ever active, or no sample has an active feature",
    "topology.bound": "a sample has no active feature, so the interleaving bound does not apply",
    "contiguity": "no feature is ever active",
    "components": "no feature is ever active",
    "tiling": "too few samples per feature to tell a tile from a flicker (arc_tiling needs n >= 12 m)",
}


def _tiling(A: np.ndarray, theta: np.ndarray) -> float:
    """The circle's tiling by contiguous territories (``measures.arc_tiling``); NaN when n < 12 m (undefined)."""
    from icml26.coherence.measures import arc_tiling

    n, m = A.shape
    return arc_tiling(A, theta)["tiling"] if n >= 12 * m else float("nan")


def json_ready(payload: dict) -> dict:
    """``payload`` with every NaN/inf number replaced by null and its reason listed under ``"undefined"``
    (``json.dumps`` would write the non-JSON tokens NaN and Infinity)."""
    reasons: dict[str, str] = {}

    def clean(value, key: str):
        if isinstance(value, dict):
            return {k: clean(v, f"{key}.{k}" if key else k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v, key) for v in value]
        if isinstance(value, float | np.floating) and not np.isfinite(value):
            base = key.split(" ")[0]
            reasons[key] = f"{value} ({_UNDEFINED.get(key, _UNDEFINED.get(base, 'not defined for this input'))})"
            return None
        return value

    out = clean(payload, "")
    if reasons:
        out["undefined"] = reasons
    return out


def _write_json(path: str | None, payload: dict) -> None:
    write_json(path, json_ready(payload))
    if path not in (None, "-"):
        print(f"wrote {path}")


def _topology(A, geometry) -> dict:
    """The interleaving check with a stage bar (the samples' VR diagrams run for minutes on a few thousand)."""
    import sys

    from icml26._util import progress as bars
    from icml26.coherence.topology import interleaving_check

    if not bars.QUIET:
        print(f"topology: Vietoris-Rips diagrams of {len(A)} samples (minutes for a few thousand) ...", file=sys.stderr)
    with bars.progress(total=3, desc="topology", unit="stage") as bar:
        started: list[str] = []

        def stage(name: str) -> None:  # called as each stage starts: the one before it is done
            if started:
                bar.update(1)
            started.append(name)
            bar.set_postfix_str(name)

        out = interleaving_check(A, geometry, progress=stage)
        bar.update(bar.total - bar.n)
    return out


def _fit(args) -> int:

    from icml26.coherence.config import PRESETS
    from icml26.coherence.data import make_dataset
    from icml26.coherence.experiment import fit_one
    from icml26.coherence.geometry import Geometry, coherence_report
    from icml26.coherence.measures import (
        feature_coherence,
        knn_adjacency,
        mean_live,
        support_contiguity,
        token_consistency,
    )
    from icml26.coherence.topology import arc_contiguity

    if args.out is not None:
        check_output_path(args.out, suffixes=(".npz",))
    if args.json not in (None, "-"):
        check_output_path(args.json, suffixes=(".json",))
    if args.data in ROTATED and args.n < 36:
        raise ValueError(f"{args.data} needs -n >= 36 (one image through 36 angles)")
    device = apply_device_arguments(args)
    data = make_dataset(args.data, args.n, seed=args.seed)
    kind = args.geometry
    if kind == "auto":
        kind = "circular" if args.data in ROTATED else "geodesic"
    if kind == "circular" and data.theta is None:
        raise ValueError(f"--geometry circular needs a known angle; {args.data} has none")
    if kind == "circular":
        geometry = Geometry.circular(data.theta)
    else:
        geometry = Geometry.geodesic(data.X, 10, 3, connect=True)
    cfg = PRESETS["small"]
    lam = args.lam if args.lam is not None else {"coh": cfg.lam_coh, "l1": 0.01, "none": 0.0}[args.penalty]
    cfg = type(cfg)(**{**cfg.__dict__, "n_features": args.features, "hidden": args.hidden})
    res = fit_one(data, geometry, args.penalty, cfg, args.seed, lam=lam, steps=args.steps, device=device, progress=None)
    rep = coherence_report(res.codes, geometry)
    summary = {
        "data": args.data,
        "penalty": args.penalty,
        "lam": lam,
        "mse": res.mse,
        "density": res.density,
        "geometry": kind,
        **{f"coherence_{k}": v for k, v in rep.summary().items()},
    }
    if data.theta is not None:  # the known angle: the paper's coherence on it, chance-corrected, and arcs
        theta = Geometry.circular(data.theta)
        summary["feature coherence (angle)"] = mean_live(feature_coherence(res.codes, theta), "coherence")
        ac = arc_contiguity(res.codes, data.theta[:, 0], bins=36 if args.data in ROTATED else 48)
        live = ac["live"]
        summary["contiguity"] = float(np.mean(ac["contiguity"][live])) if live.any() else float("nan")
        summary["components"] = float(np.mean(ac["components"][live])) if live.any() else float("nan")
        summary["tiling"] = _tiling(res.codes, data.theta[:, 0])  # contiguous territories (not v3's binned tiling)
    else:  # no known latent: support connectivity on the kNN graph of the inputs, chance-corrected
        sc = support_contiguity(res.codes, knn_adjacency(data.X, 10))
        summary["contiguity (kNN graph)"] = mean_live(sc, "contiguity")
        summary["components (kNN graph)"] = float(np.mean(sc["components"][sc["live"]])) if sc["live"].any() else 0.0
    if data.groups is not None and args.data == "sst2-tokens":
        summary["top-token consistency"] = mean_live(token_consistency(res.codes, data.groups), "consistency")
    summary = {k: (float(v) if isinstance(v, (np.floating, np.integer)) else v) for k, v in summary.items()}
    if args.out is not None:
        arrays = {"codes": res.codes}
        if data.theta is not None:
            arrays["theta"] = data.theta
        save_npz(args.out, **arrays)
    _write_json(args.json, summary)
    for k, v in summary.items():
        print(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}")
    return 0


def _score(args) -> int:
    from icml26.coherence.data import load_array
    from icml26.coherence.geometry import Geometry, check_codes, coherence_report, is_coherent
    from icml26.coherence.measures import feature_coherence, mean_live

    if args.json not in (None, "-"):
        check_output_path(args.json, suffixes=(".json",))
    A = check_codes(load_array(args.codes, what="codes file", ndim=2), rectify=args.rectify)
    if args.distances is not None:
        D = load_array(args.distances, what="distances file", ndim=2)
        if D.shape[0] != A.shape[0]:
            raise ValueError(f"distance matrix is {D.shape[0]} x {D.shape[1]} but the codes have {A.shape[0]} rows")
        geometry = Geometry.precomputed(D)
    else:
        P = load_array(args.positions, what="positions file")
        if P.ndim not in (1, 2) or P.shape[0] != A.shape[0]:
            raise ValueError(f"positions must be (n,) or (n, k) with n = {A.shape[0]} codes rows; got {P.shape}")
        if args.geometry == "circular":
            geometry = Geometry.circular(P)
        elif args.geometry == "geodesic":
            geometry = Geometry.geodesic(P.reshape(len(P), -1), args.neighbors)
        else:
            geometry = Geometry.euclidean(P)
    rep = coherence_report(A, geometry)
    out: dict = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in rep.summary().items()}
    # per feature 1 - V_col / V_total against its shuffled null: ~0 for a feature firing everywhere or at random
    out["feature_coherence"] = mean_live(feature_coherence(A, geometry), "coherence")
    if args.positions is not None and args.geometry == "circular" and P.size == len(A):  # angles on one circle
        out["tiling"] = _tiling(A, P.reshape(-1))
    if rep.dead_features.any():
        out["dead_feature_indices"] = np.flatnonzero(rep.dead_features).tolist()
    if args.r_col is not None:
        out["coherent"] = is_coherent(A, geometry, args.r_col, args.r_row)
    if args.topology:
        if len(A) > 3000:
            raise ValueError(f"--topology runs Vietoris-Rips on all {len(A)} samples; subsample to <= 3000")
        out["topology"] = _topology(A, geometry)
    _write_json(args.json, out)
    if out["dead_features"] or out["uncovered_samples"]:
        print(
            f"coverage failure: {out['dead_features']} feature(s) never active, "
            f"{out['uncovered_samples']} sample(s) with no active feature"
        )
    for k, v in out.items():
        if k != "topology":
            print(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}")
    for k, v in out.get("topology", {}).items():
        print(f"topology.{k}: {v:.4g}")
    return 0
