"""``icml26 flip2 list | run | leaderboard | make-splits``: thin verbs over the library."""

from __future__ import annotations

import argparse
import logging

from icml26._util.cli import ArgumentParser, DefaultsHelpFormatter, add_json_argument, bounded_int
from icml26._util.device import add_device_arguments, apply_device_arguments
from icml26._util.io import atomic_output, check_json_output, check_output_path, write_json
from icml26.flip2.config import MODEL_NAMES

# written out so that the parser (and --help) loads no pandas; a test checks them against data.py
DATASETS = ("gb1", "gb1_double", "abeta42", "tdp43", "synthetic")  # = ("gb1", *data.MAVENN_SETS, "synthetic")
DEFAULT_MODELS = "ridge,zsridge,cnn,levenshtein,blosum62"


def build_parser() -> argparse.ArgumentParser:
    fmt = DefaultsHelpFormatter
    parser = ArgumentParser(
        prog="icml26 flip2",
        formatter_class=fmt,
        description="FLIP2 protein-fitness benchmark: datasets, splits, baselines, leaderboard.",
    )
    sub = parser.add_subparsers(dest="verb", required=True)
    sub.add_parser(
        "list",
        help="datasets, split families and models",
        formatter_class=fmt,
        description="Reads nothing; prints the built-in datasets, GB1's published splits, the split families and "
        "the models. Example: icml26 flip2 list",
    )

    def common(p):
        p.add_argument(
            "--models", default=DEFAULT_MODELS, help=f"comma-separated models; known: {','.join(MODEL_NAMES)}"
        )
        p.add_argument(
            "--max-variants",
            type=bounded_int(10, 10_000_000),
            default=20000,
            help="subsample larger datasets to this many variants",
        )
        p.add_argument(
            "--cnn-steps", type=bounded_int(1, 1_000_000), default=2000, help="optimiser steps of the CNN / transformer"
        )
        p.add_argument(
            "--seed", type=bounded_int(0, 2**32 - 1), default=0, help="seed of random splits, subsampling and training"
        )
        add_device_arguments(p, default_device="cpu")
        p.add_argument(
            "--bootstrap", type=bounded_int(0, 10_000), default=0, help="bootstrap resamples for Spearman CIs (0: none)"
        )
        p.add_argument(
            "--out", default=None, help="leaderboard CSV path; the .md table and .png plot are written beside it"
        )
        add_json_argument(p, "the leaderboard rows")

    r = sub.add_parser(
        "run",
        help="train/evaluate models on one dataset's splits",
        formatter_class=fmt,
        description="Reads one dataset (built-in, or a FLIP2 CSV with --wild-type), trains and evaluates the models "
        "on its splits, prints the results as a Markdown table and optionally writes the leaderboard CSV with a .md "
        "table and .png plot beside it (--out) and the rows as JSON (--json). Example: icml26 flip2 run --dataset "
        "gb1 --split one_vs_rest --models ridge,cnn --out gb1.csv",
    )
    r.add_argument("--dataset", default="gb1", help=f"one of {', '.join(DATASETS)}, or a FLIP2 CSV file")
    r.add_argument("--split", default="all", help="split name(s), comma-separated, or 'all'")
    r.add_argument("--wild-type", default=None, help="FASTA of the wild type(s) for a CSV dataset")
    r.add_argument(
        "--noncanonical", default="reject", choices=("reject", "map"), help="policy for non-canonical letters"
    )
    common(r)

    lb = sub.add_parser(
        "leaderboard",
        help="every model on every split of several datasets",
        formatter_class=fmt,
        description="Reads several built-in datasets, trains and evaluates every model on every split of each, "
        "prints the results as a Markdown table and optionally writes the leaderboard CSV with a .md table and .png "
        "plot beside it (--out) and the rows as JSON (--json). Example: icml26 flip2 leaderboard --datasets "
        "gb1,synthetic --models ridge,zsridge --out leaderboard.csv",
    )
    lb.add_argument("--datasets", default="gb1", help=f"comma-separated, from {', '.join(DATASETS)}")
    common(lb)

    m = sub.add_parser(
        "make-splits",
        help="FLIP2 split assignments for a variant CSV",
        formatter_class=fmt,
        description="Reads a variant CSV (sequence, target, optional wt) and a FASTA of the wild type(s), assigns "
        "every applicable FLIP2 split family, and writes a CSV (--out) with one column per split holding train, val, "
        "test or empty. Example: icml26 flip2 make-splits variants.csv --wild-type wt.fasta --out splits.csv",
    )
    m.add_argument("variants", help="CSV with columns sequence, target (optional wt)")
    m.add_argument("--wild-type", required=True, help="FASTA file with the wild type(s); record names match 'wt'")
    m.add_argument("--out", required=True, help="output CSV: sequence, target, one column per split")
    m.add_argument(
        "--noncanonical", default="reject", choices=("reject", "map"), help="policy for non-canonical letters"
    )
    m.add_argument(
        "--seed", type=bounded_int(0, 2**32 - 1), default=0, help="seed of the random / position / mutation splits"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 flip2``; bad input raises ``ValueError`` / ``OSError``."""
    args = build_parser().parse_args(argv)
    return {"list": _list, "run": _run, "leaderboard": _leaderboard, "make-splits": _make_splits}[args.verb](args)


def _list(args) -> int:
    from icml26.flip2.data import GB1_SPLITS

    print("datasets:", ", ".join(DATASETS), "(or a FLIP2 CSV file: sequence, target[, set, validation, wt])")
    print("GB1 published splits:", ", ".join(GB1_SPLITS))
    print(
        "split families: random, one/two/three_to_many, by_position, close_to_far, far_to_close, by_mutation, "
        "low_to_high, by_wt"
    )
    print("models:", ", ".join(MODEL_NAMES))
    return 0


def _check_common(args):
    if args.max_variants < 10:
        raise ValueError(f"--max-variants must be >= 10; got {args.max_variants}")
    if args.cnn_steps < 1:
        raise ValueError(f"--cnn-steps must be >= 1; got {args.cnn_steps}")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0; got {args.bootstrap}")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODEL_NAMES]
    if unknown or not models:
        raise ValueError(f"unknown model(s) {unknown or args.models!r}; known: {', '.join(MODEL_NAMES)}")
    if args.out is not None:
        out = check_output_path(args.out, suffixes=(".csv",))
        for suffix in (".md", ".png"):
            check_output_path(out.with_suffix(suffix))
    if getattr(args, "wild_type", None) is not None and getattr(args, "dataset", "") in DATASETS:
        raise ValueError(f"--wild-type applies to a CSV dataset only; {args.dataset!r} brings its own wild type")
    check_json_output(args.json)
    return models


def _dataset(name, args):
    """-> (table, splits, msa)."""
    from icml26.flip2.data import (
        GB1_SPLITS,
        MAVENN_SETS,
        load_flip2_csv,
        load_flip_gb1,
        load_mavenn,
        make_synthetic,
        read_fasta,
    )
    from icml26.flip2.splits import from_assignment, standard_splits

    if name == "gb1":
        t = load_flip_gb1()
        return t, {s: from_assignment(s, t.published[s]) for s in GB1_SPLITS}, None
    if name in MAVENN_SETS:
        t = load_mavenn(name, max_variants=args.max_variants, seed=args.seed)
        return t, standard_splits(t, seed=args.seed), None
    if name == "synthetic":
        land = make_synthetic(seed=args.seed)
        return land.table, standard_splits(land.table, seed=args.seed, site_distance=land.site_distance), land.msa
    wts = read_fasta(args.wild_type) if getattr(args, "wild_type", None) else None
    t = load_flip2_csv(name, wild_type=wts, noncanonical=args.noncanonical)
    splits = {"published": from_assignment("published", t.published["published"])} if t.published else {}
    if not splits:
        splits = standard_splits(t, seed=args.seed)
    return t, splits, None


def _go(args, names) -> int:
    import numpy as np
    import pandas as pd

    from icml26.flip2.harness import ModelFactory, run_leaderboard, to_markdown, write_leaderboard

    models = _check_common(args)
    device = str(apply_device_arguments(args))
    frames = []
    for name in names:
        t, splits, msa = _dataset(name, args)
        want = getattr(args, "split", "all")
        if want != "all":
            chosen = [s.strip() for s in want.split(",")]
            missing = [s for s in chosen if s not in splits]
            if missing:
                raise ValueError(f"split(s) {missing} not available for {t.name}; available: {', '.join(splits)}")
            splits = {s: splits[s] for s in chosen}
        f = ModelFactory(
            msa, seed=args.seed, cnn_epochs=10_000, tf_epochs=10_000, max_steps=args.cnn_steps, device=device
        )
        frames.append(run_leaderboard(t, splits, models, f, n_boot=args.bootstrap, progress=True))
    df = pd.concat(frames, ignore_index=True)
    print(to_markdown(df), end="")
    if args.out is not None:
        for p in write_leaderboard(df, args.out).values():
            print(f"wrote {p}")
    write_json(args.json, df.replace({np.nan: None}).to_dict(orient="records"))
    return 0


def _run(args) -> int:
    logging.basicConfig(level=logging.WARNING)
    return _go(args, [args.dataset])


def _leaderboard(args) -> int:
    names = [d.strip() for d in args.datasets.split(",") if d.strip()]
    bad = [d for d in names if d not in DATASETS]
    if bad or not names:
        raise ValueError(f"unknown dataset(s) {bad or args.datasets!r}; known: {', '.join(DATASETS)}")
    return _go(args, names)


def _make_splits(args) -> int:
    import pandas as pd

    from icml26.flip2.data import load_flip2_csv, read_fasta
    from icml26.flip2.splits import standard_splits

    out = check_output_path(args.out)
    wts = read_fasta(args.wild_type)
    t = load_flip2_csv(
        args.variants, wild_type=wts if len(wts) > 1 else next(iter(wts.values())), noncanonical=args.noncanonical
    )
    splits = standard_splits(t, seed=args.seed)
    if not splits:
        raise ValueError("no split family applies to these variants (every candidate had an empty side)")
    df = pd.DataFrame({"sequence": t.sequences, "target": t.targets, "wt": t.wt_of})
    for name, sp in splits.items():
        df[name] = sp.assignment(len(t))
    with atomic_output(out) as tmp:
        df.to_csv(tmp, index=False)
    print(f"wrote {out}: {len(t)} variants, splits {', '.join(splits)}")
    return 0
