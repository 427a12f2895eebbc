"""``icml26 degmetrics``: score predictions (``score``), DEG annotations (``degs``), simulate a screen, baselines."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from icml26._util.cli import (
    ArgumentParser,
    add_json_argument,
    bounded_int,
    finite_float,
    fraction,
    nonnegative_int,
    seed_int,
)
from icml26._util.io import atomic_output, check_json_output, check_output_path, write_json
from icml26.degmetrics.config import BYTES_PER_ENTRY, MAX_CONTROL_BIAS, MAX_FOLD_CHANGE, MAX_SIM_AXIS, SIM_PRESETS

_AXIS = bounded_int(1, MAX_SIM_AXIS, what="simulator limit; cells x genes is bounded separately by memory")
#: largest (perturbations + 1) x genes of the streaming path: two float64 running sums of this size (2 GB)
MAX_RUNNING_SUMS = 125_000_000
_DISK_CELLS = bounded_int(100, 20_000_000, what="cells written to disk; 1M x 8k is about 3 GB of sparse counts")
_DISK_GENES = bounded_int(2, 100_000, what="genes")
_DISK_PERTS = bounded_int(2, 100_000, what="perturbations")
_CHUNK = bounded_int(1, 100_000, what="cells per block; a block is held as float64 cells x genes")


def _library_scale(text: str) -> float:
    value = finite_float(text)
    if not 1e-3 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} must be in [0.001, 100]")
    return value


def _write_csv(table, path: str) -> None:
    with atomic_output(path) as tmp:
        table.to_csv(tmp)


def _note_undefined(table) -> None:
    """Say which metrics are undefined (NaN) for which perturbations instead of printing bare NaN rows."""
    from icml26.degmetrics.evaluate import METRIC_COLUMNS

    for col in METRIC_COLUMNS:
        if col in table.columns and table[col].isna().any():
            bad = table.index[table[col].isna()].astype(str).tolist()
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            print(
                f"note: {col} is undefined (NaN) for {len(bad)} of {len(table)} perturbations "
                f"({', '.join(bad[:5])}{more}): a constant profile has no correlation / variance; the summary "
                "averages the others"
            )


def _table_json(table) -> dict:
    """A metrics table as JSON: one object per row (perturbation or baseline), NaN as null."""
    return {str(idx): row.to_dict() for idx, row in table.iterrows()}


def _score(args: argparse.Namespace) -> int:
    if args.out:
        check_output_path(args.out, suffixes=(".csv",))
    check_json_output(args.json)
    from icml26.degmetrics.data import read_perturbation_h5ad
    from icml26.degmetrics.evaluate import evaluate

    pred = read_perturbation_h5ad(args.pred, perturbation_key=args.perturbation_key)  # small: fail before the stream
    if args.stream:  # the observed cells are read block by block; only their per-group sums stay in memory
        from icml26.degmetrics.stream import reference_from_file

        real = reference_from_file(
            args.real,
            perturbation_key=args.perturbation_key,
            control=args.control,
            scale=args.data_scale,
            layer=args.layer,
            deg_mode=args.deg_mode,
            chunk_cells=args.chunk_cells,
        )
    else:
        real = read_perturbation_h5ad(args.real, perturbation_key=args.perturbation_key, control=args.control)
    result = evaluate(
        pred,
        real,
        perturbation_key=args.perturbation_key,
        control=args.control,
        scale=args.data_scale,
        pred_scale=args.pred_scale,
        pred_layer=args.pred_layer,
        **({} if args.stream else {"layer": args.layer, "deg_mode": args.deg_mode}),  # streamed: in the reference
    )
    if args.out:
        _write_csv(result.table, args.out)
    print(result.summary.to_string(float_format=lambda v: f"{v:.4f}"))
    _note_undefined(result.table)
    write_json(args.json, {"summary": result.summary.to_dict(), "perturbations": _table_json(result.table)})
    return 0


def _degs(args: argparse.Namespace) -> int:
    check_output_path(args.out, suffixes=(".h5ad",))
    check_json_output(args.json)
    from icml26.degmetrics.data import read_perturbation_h5ad
    from icml26.degmetrics.evaluate import DEGReference

    real = read_perturbation_h5ad(args.real, perturbation_key=args.perturbation_key, control=args.control)
    ref = DEGReference.from_anndata(
        real,
        perturbation_key=args.perturbation_key,
        control=args.control,
        scale=args.data_scale,
        layer=args.layer,
        deg_mode=args.deg_mode,
    )
    ref.annotate(real)
    with atomic_output(args.out) as tmp:
        real.write_h5ad(tmp)
    print(
        f"{len(ref.perturbations)} perturbations, median {int(np.median(ref.n_deg))} DEGs "
        f"(BH < {ref.settings['alpha']}); "
        f"weights and t-scores in varm['degmetrics_weights'] / varm['degmetrics_t'], counts in uns['degmetrics'] "
        f"-> {args.out}"
    )
    counts = dict(zip(map(str, ref.perturbations), map(int, ref.n_deg)))
    write_json(args.json, {"alpha": ref.settings["alpha"], "n_deg": counts})
    return 0


def available_memory() -> int:
    """Bytes this process may still allocate: the system's available memory, or the address-space limit if lower."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    try:
        with open("/proc/meminfo") as fh:
            free = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return min(free, limit) if limit != resource.RLIM_INFINITY else free


def _check_fits_in_memory(cfg) -> None:
    """Refuse, before any allocation, a screen whose cells x genes product needs more memory than there is."""
    need = cfg.n_cells * cfg.n_genes * BYTES_PER_ENTRY
    have = available_memory()
    if need > 0.8 * have:
        raise ValueError(
            f"{cfg.n_cells:,} cells x {cfg.n_genes:,} genes need about {need / 2**30:.1f} GiB at the simulator's peak "
            f"but {have / 2**30:.1f} GiB is available: lower --genes, --cells, --control-cells or --perturbations, "
            "or use 'simulate-disk' (block by block)"
        )


def _simulate(args: argparse.Namespace) -> int:
    check_output_path(args.out, suffixes=(".h5ad",))
    from icml26.degmetrics.data import simulate

    changes = {
        k: v
        for k, v in {
            "n_genes": args.genes,
            "n_control": args.control_cells,
            "n_perturbations": args.perturbations,
            "cells_per_perturbation": args.cells,
            "p_effect": args.p_effect,
            "fold_change": args.fold_change,
            "control_bias": args.control_bias,
            "n_doubles": args.doubles,
            "gene_source": args.gene_source,
        }.items()
        if v is not None
    }
    cfg = SIM_PRESETS[args.preset].with_(**changes)  # validated: each axis and the product within their limits
    _check_fits_in_memory(cfg)
    adata = simulate(cfg, seed=args.seed)
    with atomic_output(args.out) as tmp:
        adata.write_h5ad(tmp)
    print(f"wrote {adata.n_obs} cells x {adata.n_vars} genes (raw counts, obs['perturbation']) to {args.out}")
    return 0


def _simulate_disk(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.suffix.lower() not in (".h5ad", ".zarr"):
        raise ValueError(f"--out {args.out}: must end with .h5ad or .zarr")
    if out.suffix.lower() == ".zarr":
        if out.exists():
            raise ValueError(f"--out {args.out}: exists; remove it or choose another name")
        check_output_path(out.with_suffix(".check"))  # the folder it goes in exists and is writable
    else:
        check_output_path(out)
    if (args.perturbations + 1) * args.genes > MAX_RUNNING_SUMS:
        raise ValueError(
            f"--perturbations x --genes = {args.perturbations * args.genes:,} per-group sums: scoring would need more "
            f"than {MAX_RUNNING_SUMS * 16 / 2**30:.0f} GB of running sums; lower one of them"
        )
    from icml26._util.progress import progress
    from icml26.degmetrics.stream import simulate_to_disk

    overrides = {"library_scale": args.library_scale}
    if args.p_effect is not None:
        overrides["p_effect"] = args.p_effect
    with progress(total=args.cells, desc="simulate-disk", unit="cell", unit_scale=True) as bar:  # tqdm auto
        info = simulate_to_disk(
            out,
            n_cells=args.cells,
            n_genes=args.genes,
            n_perturbations=args.perturbations,
            chunk_cells=args.chunk_cells,
            seed=args.seed,
            progress=lambda done, total: bar.update(done - bar.n),
            **overrides,
        )
    print(
        f"wrote {info['cells']:,} cells x {info['genes']:,} genes ({info['perturbations']:,} perturbations, "
        f"{info['control_cells']:,} control cells; {info['nonzeros']:,} non-zero counts, "
        f"{info['bytes'] / 2**20:.1f} MiB) to {args.out}"
    )
    return 0


def _check_save_dir(folder: str) -> None:
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--save {folder}: exists and is not a folder")
    path.mkdir(parents=True, exist_ok=True)
    check_output_path(path / "real_half.h5ad")


def _baselines(args: argparse.Namespace) -> int:
    if args.out:
        check_output_path(args.out, suffixes=(".csv",))
    check_json_output(args.json)
    if args.save:
        _check_save_dir(args.save)
    from icml26.degmetrics.baselines import calibration_baselines
    from icml26.degmetrics.data import read_perturbation_h5ad
    from icml26.degmetrics.evaluate import DEGReference, evaluate

    adata = read_perturbation_h5ad(args.real, perturbation_key=args.perturbation_key, control=args.control)
    key, ctrl = args.perturbation_key, args.control
    half, preds = calibration_baselines(
        adata, perturbation_key=key, control=ctrl, scale=args.data_scale, seed=args.seed
    )
    ref = DEGReference.from_anndata(half, perturbation_key=key, control=ctrl, scale=args.data_scale)
    import pandas as pd

    rows = {}
    for name, pred in preds.items():
        if name == "additive":  # scored on the doubles only, against a reference of doubles
            continue
        rows[name] = evaluate(pred, ref, perturbation_key=key, control=ctrl).summary
    table = pd.DataFrame(rows).T
    if args.out:
        _write_csv(table, args.out)
    if args.save:
        for name, data in {"real_half": half, **preds}.items():
            with atomic_output(Path(args.save) / f"{name}.h5ad") as tmp:
                data.write_h5ad(tmp)
        print(f"wrote real_half.h5ad and {', '.join(f'{n}.h5ad' for n in preds)} to {args.save}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    _note_undefined(table)
    write_json(args.json, {"baselines": _table_json(table)})
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 degmetrics",
        description="DEG-aware metrics (WMSE, weighted ΔR²) and calibration baselines for perturbation models.",
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser(
        "score",
        help="score predicted against observed expression, one row per perturbation",
        description="Reads predicted (--pred) and observed (--real, loaded or with --stream read in blocks) .h5ad "
        "files, scores each perturbation with the DEG-aware metrics (WMSE, weighted delta R2) and MSE, MAE and "
        "Pearson delta, prints the summary and writes the per-perturbation table (--out, .csv). Example: icml26 "
        "degmetrics score --pred pred.h5ad --real screen.h5ad --perturbation-key perturbation --control control "
        "--data-scale counts --out scores.csv",
    )
    p.add_argument("--pred", required=True, help="predicted .h5ad (cells or one row per perturbation)")
    p.add_argument("--real", required=True, help="observed single-cell .h5ad with control cells")
    p.add_argument("--perturbation-key", required=True, help="obs column naming the perturbation")
    p.add_argument("--control", required=True, help="label of the control cells")
    p.add_argument("--data-scale", required=True, choices=["counts", "log1p"], help="what the observed matrix holds")
    p.add_argument("--pred-scale", default="log1p", choices=["counts", "log1p"], help="scale of the prediction")
    p.add_argument("--layer", default=None, help="layer of the observed data to use instead of X")
    p.add_argument("--pred-layer", default=None, help="layer of the prediction to use instead of X")
    p.add_argument("--deg-mode", default="vsrest", choices=["vsrest", "vscontrol"], help="DEG weights (vsrest)")
    p.add_argument("--out", default=None, help="write the per-perturbation table to this CSV")
    add_json_argument(p, "the summary and the per-perturbation metrics")
    p.add_argument(
        "--stream",
        action="store_true",
        help="read --real (.h5ad or .zarr) in blocks of cells instead of loading it: screens larger than memory",
    )
    p.add_argument("--chunk-cells", type=_CHUNK, default=2048, help="cells per block with --stream")
    p.set_defaults(func=_score)

    p = sub.add_parser(
        "degs",
        help="DEG weights and t-scores of an observed screen, written into its .h5ad",
        description="Reads an observed screen (--real, .h5ad), computes each perturbation's DEG weights and t-scores "
        "and writes the input with them in varm['degmetrics_weights'] / varm['degmetrics_t'] and DEG counts in "
        "uns['degmetrics'] (--out, .h5ad); prints the median number of DEGs. Example: icml26 degmetrics degs --real "
        "screen.h5ad --perturbation-key perturbation --control control --data-scale counts --out annotated.h5ad",
    )
    p.add_argument("--real", required=True, help="observed single-cell .h5ad with control cells")
    p.add_argument("--perturbation-key", required=True, help="obs column naming the perturbation")
    p.add_argument("--control", required=True, help="label of the control cells")
    p.add_argument("--data-scale", required=True, choices=["counts", "log1p"], help="what the observed matrix holds")
    p.add_argument("--layer", default=None, help="layer of the observed data to use instead of X")
    p.add_argument("--deg-mode", default="vsrest", choices=["vsrest", "vscontrol"], help="DEG weights (vsrest)")
    p.add_argument("--out", required=True, help="output .h5ad: the input plus varm/uns annotations")
    add_json_argument(p, "the DEG count of each perturbation")
    p.set_defaults(func=_degs)

    p = sub.add_parser(
        "simulate",
        help="simulate a perturb-seq screen (NB counts) into an .h5ad",
        description="Reads nothing; simulates a perturb-seq screen in memory (negative-binomial counts, control "
        "cells, single and optionally double perturbations, a control bias) from a preset and writes raw counts "
        "with obs['perturbation'] (control label 'control') to --out (.h5ad). Example: icml26 degmetrics simulate "
        "--preset small --control-bias 0.5 --seed 1 --out screen.h5ad",
    )
    p.add_argument("--out", required=True, help="output .h5ad")
    p.add_argument("--preset", default="small", choices=sorted(SIM_PRESETS), help="simulator preset to start from")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    p.add_argument("--genes", type=_AXIS, default=None, help="genes G (default: the preset's)")
    p.add_argument("--control-cells", type=_AXIS, default=None, help="control cells N0 (default: the preset's)")
    p.add_argument("--perturbations", type=_AXIS, default=None, help="single perturbations P (default: preset)")
    p.add_argument("--cells", type=_AXIS, default=None, help="cells per perturbation (default: the preset's)")
    p.add_argument("--p-effect", type=fraction, default=None, help="probability a perturbation changes a gene")
    p.add_argument(
        "--fold-change",
        type=finite_float,
        default=None,
        help=f"fold change of affected genes, in [1, {MAX_FOLD_CHANGE:g}]",
    )
    p.add_argument(
        "--control-bias", type=finite_float, default=None, help=f"control bias B, in [0, {MAX_CONTROL_BIAS:g}]"
    )
    p.add_argument(
        "--doubles", type=nonnegative_int, default=None, help="double perturbations A+B (at most P(P-1)/2; default 0)"
    )
    p.add_argument("--gene-source", default=None, choices=["pbmc", "gamma", "auto"], help="per-gene NB parameters")
    p.set_defaults(func=_simulate)

    p = sub.add_parser(
        "simulate-disk",
        help="simulate a screen of any size, written to .h5ad or .zarr block by block",
        description="Reads nothing; simulates a screen too large for memory block by block of cells and writes "
        "sparse int32 counts to --out (an .h5ad file or a .zarr folder), ready for 'score --stream'; prints its "
        "size. Example: icml26 degmetrics simulate-disk --cells 100000 --genes 2000 --perturbations 200 "
        "--out big.zarr",
    )
    p.add_argument("--out", required=True, help="output .h5ad file or .zarr folder (CSR int32 counts)")
    p.add_argument("--cells", type=_DISK_CELLS, default=1_000_000, help="cells in all (5%% of them control)")
    p.add_argument("--genes", type=_DISK_GENES, default=8000, help="genes G")
    p.add_argument("--perturbations", type=_DISK_PERTS, default=1000, help="perturbations P")
    p.add_argument("--p-effect", type=fraction, default=None, help="probability a perturbation changes a gene")
    p.add_argument(
        "--library-scale",
        type=_library_scale,
        default=0.25,
        help="mean library size factor; 0.25 gives about 15%% non-zero counts at 8k genes (sparse, "
        "like a screen's count matrix), the in-memory simulator's 5 about 60%%",
    )
    p.add_argument("--chunk-cells", type=_CHUNK, default=4096, help="cells drawn and written per block")
    p.add_argument("--seed", type=seed_int, default=0, help="random seed")
    p.set_defaults(func=_simulate_disk)

    p = sub.add_parser(
        "baselines",
        help="score the calibration baselines of an observed screen",
        description="Reads an observed screen (--real, .h5ad), splits its cells in halves, builds the calibration "
        "baselines (technical and interpolated duplicate, dataset and control mean) from one half and scores them "
        "against the other; prints the table and writes it (--out, .csv), and with --save the half and the "
        "baselines' predictions (.h5ad). Example: icml26 degmetrics baselines --real screen.h5ad --perturbation-key "
        "perturbation --control control --data-scale counts --out baselines.csv",
    )
    p.add_argument("--real", required=True, help="observed single-cell .h5ad with control cells")
    p.add_argument("--perturbation-key", required=True, help="obs column naming the perturbation")
    p.add_argument("--control", required=True, help="label of the control cells")
    p.add_argument("--data-scale", required=True, choices=["counts", "log1p"], help="what the observed matrix holds")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed of the half split")
    p.add_argument("--out", default=None, help="write the table to this CSV")
    add_json_argument(p, "each baseline's metrics")
    p.add_argument(
        "--save",
        default=None,
        metavar="DIR",
        help="also write the scored half (real_half.h5ad) and each baseline's prediction (<name>.h5ad, one "
        "log1p row per perturbation) into DIR, ready for 'score --pred DIR/<name>.h5ad --real DIR/real_half.h5ad'",
    )
    p.set_defaults(func=_baselines)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return int(args.func(args) or 0)
