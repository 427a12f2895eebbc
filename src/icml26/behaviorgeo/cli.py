"""``icml26 behaviorgeo``: run forced-choice / free-association experiments on a causal LM, compare the
behavioural geometry with its hidden states, and report.

::

    icml26 behaviorgeo run --model smollm2 --paradigm fc --vocab 40 --out runs/fc [--max-trials 60]
    icml26 behaviorgeo run --model smollm2 --paradigm fc --vocab 40 --resume runs/fc
    icml26 behaviorgeo run --model smollm2 --paradigm fa --vocab 40 --runs 2 --out runs/fa
    icml26 behaviorgeo compare --trials runs/fc runs/fa --model smollm2 --strategy task-fc --json cmp.json
    icml26 behaviorgeo report --compare cmp.json --md report.md --plot rsa.png
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_float, bounded_int
from icml26._util.device import add_device_arguments, apply_device_arguments
from icml26._util.io import atomic_output, check_input_file, check_json_output, check_output_path, write_json

MODEL_HELP = "smollm2 (SmolLM2-135M-Instruct, converted once to a user cache), tiny (random test model) or a folder"
STRATEGIES = ("averaged", "meaning", "task-fc", "task-fa")


def _word(text: str) -> str:
    """A choice word, not a file: typed so the parser's output-vs-input check leaves it alone (``--paradigm fc
    --out fc`` names the store folder 'fc', not the paradigm)."""
    return text


def _cue_range(text: str) -> tuple[int, int]:
    start, sep, stop = str(text).partition(":")
    if not sep or not start.strip().isdigit() or not stop.strip().isdigit() or int(start) >= int(stop):
        raise argparse.ArgumentTypeError(f"expected START:STOP with 0 <= START < STOP (cue indices); got {text!r}")
    return int(start), int(stop)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 behaviorgeo", description="Behavioural vs hidden-state semantic geometry.")
    sub = parser.add_subparsers(dest="verb", required=True)

    r = sub.add_parser(
        "run",
        help="run (or resume) forced-choice or free-association trials into a Parquet store",
        description="Reads a causal LM (--model) and a vocabulary (--vocab or --vocab-file), runs forced-choice "
        "trials (scored: every candidate's answer log-probability, one forward pass per batch on a cached prompt "
        "prefix) or free-association runs (batched sampling) and writes them to a new (--out) or resumed "
        "(--resume) Parquet trial store, prints the trial and response counts, the trials per second and the "
        "FLOPs per trial, and writes them as JSON (--json). Example: icml26 behaviorgeo run --model "
        "smollm2 --paradigm fc --vocab 40 --out runs/fc --max-trials 60",
    )
    r.add_argument("--model", default="smollm2", help=MODEL_HELP)
    r.add_argument(
        "--paradigm", type=_word, choices=("fc", "fa"), required=True, help="forced choice or free association"
    )
    r.add_argument(
        "--vocab",
        type=bounded_int(17, 20000, what="vocabulary size"),
        default=40,
        help="vocabulary size: the first N of the shipped 1,060 nouns, then frequent wordfreq words",
    )
    r.add_argument("--vocab-file", type=Path, help="one word per line (instead of --vocab)")
    r.add_argument("--vocab-v5", action="store_true",
                   help="the 2,110-noun v5 vocabulary: the shipped 1,060 nouns, then the 1,050 of "
                   "vocab/nouns_v5_new.txt (instead of --vocab)")  # fmt: skip
    r.add_argument("--cues", type=_cue_range, metavar="START:STOP",
                   help="run only the cues of index START..STOP-1 of the vocabulary (trial ids stay the whole "
                   "design's, so stores of disjoint ranges concatenate); e.g. --vocab-v5 --cues 1060:2110")  # fmt: skip
    r.add_argument("--shuffles", type=bounded_int(1, 100), default=1,
                   help="FC: candidate shuffles per cue (each shows every other word once)")  # fmt: skip
    r.add_argument(
        "--trials-per-cue",
        type=bounded_int(1, 10**6),
        default=None,
        help="FC: run only the first N trials of every cue's design (default: all; an N above the design's "
        "trials per cue runs them all)",
    )
    r.add_argument("--scoring", type=_word, choices=("sum", "word", "label"), default="sum",
                   help="FC: summed log-probability of all the candidate's tokens (sum), of its first token only "
                   "(word), or of the labels A..P of a labelled list (label)")  # fmt: skip
    r.add_argument(
        "--calibrate",
        action="store_true",
        help="FC: score log p(answer | cue) - log p(answer | the content-free cue 'thing'), read in the same forward "
        "pass (removes position, spelling and frequency preferences; ~1.4x the FLOPs)",
    )
    r.add_argument("--runs", type=bounded_int(1, 1000), default=2, help="FA: sampled runs per cue")
    r.add_argument("--max-new-tokens", type=bounded_int(4, 256, what="time"), default=16, help="FA: tokens sampled")
    r.add_argument("--temperature", type=bounded_float(0.0, 100.0, open_low=True, what="softmax temperature"),
                   default=1.0, help="FA: sampling temperature")  # fmt: skip
    r.add_argument("--top-p", type=bounded_float(0.0, 1.0, open_low=True, what="nucleus mass"), default=1.0,
                   help="FA: sample from the most probable tokens whose mass first reaches this (default 1: the "
                   "full softmax)")  # fmt: skip
    r.add_argument("--max-trials", type=bounded_int(1, 10**8), help="stop after this many trials (resume later)")
    r.add_argument("--batch", type=bounded_int(1, 512, what="memory"), default=32,
                   help="trials (FC) or runs (FA) per forward pass")  # fmt: skip
    r.add_argument("--seed", type=bounded_int(0, 2**31 - 1), default=0, help="shuffle / sampling seed")
    r.add_argument("--plain-prompt", action="store_true", help="prompt without the chat template")
    r.add_argument("--dtype", type=_word, choices=("auto", "float32", "bfloat16"), default="auto",
                   help="the weights' dtype for the trials; auto = bfloat16 on a CUDA GPU that supports it or a CPU "
                   "with AMX / AVX-512 BF16 (2-3x faster there; 86 %% of SmolLM2's forced-choice top picks match "
                   "float32's), else float32. A store remembers its dtype")  # fmt: skip
    where = r.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="new trial store folder to create (must not exist)")
    where.add_argument("--resume", type=Path, help="an existing trial store to continue (same configuration)")
    add_json_argument(r, "the trial and response counts")
    r.add_argument("--compile", action="store_true",
                   help="fuse each layer's element-wise work (RMSNorm, the SiLU-gated MLP) with torch.compile "
                   "(needs a C++ compiler; compiles for 10-60 s first; benchmarks/behaviorgeo_fused.py)")  # fmt: skip
    add_device_arguments(r, default_threads=1)  # the fastest on a small CPU

    c = sub.add_parser(
        "compare",
        help="RSA / NN@k of trial stores' geometry against the model's hidden states",
        description="Reads trial stores written by run, the model's hidden states and optional GloVe / MiniLM "
        "baselines, prints each geometry's peak RSA by layer and NN@k overlap, and writes the comparison as JSON "
        "(--json). Example: icml26 behaviorgeo compare --trials runs/fc runs/fa --model smollm2 --strategy task-fc "
        "--json cmp.json",
    )
    c.add_argument("--trials", type=Path, nargs="+", required=True, help="trial store folders written by run")
    c.add_argument("--model", default="smollm2", help=MODEL_HELP)
    c.add_argument(
        "--strategy", type=_word, choices=STRATEGIES, default="task-fc", help="hidden-state extraction strategy"
    )
    c.add_argument("--baselines", default="glove", help="comma-separated from glove, minilm, none")
    c.add_argument("--pairs", type=bounded_int(10, 10**8, what="memory"), default=500_000, help="RSA pairs sampled")
    c.add_argument("--k", type=bounded_int(1, 10000), default=5, help="neighbours for NN@k overlap")
    c.add_argument("--seed", type=bounded_int(0, 2**31 - 1), default=0, help="pair-sampling seed")
    add_json_argument(c, "the comparison (read by report)", required=True)
    add_device_arguments(c, default_threads=1)

    p = sub.add_parser(
        "report",
        help="print a comparison as a table; optionally Markdown and a plot",
        description="Reads a comparison JSON written by compare, prints its peak RSA and peak layer per geometry as "
        "a table, and optionally writes it as Markdown (--out; --md is its deprecated spelling) and RSA by layer as a "
        "PNG (--plot). Example: icml26 behaviorgeo report --compare cmp.json --out report.md --plot rsa.png",
    )
    p.add_argument("--compare", type=Path, required=True, help="a JSON written by compare")
    p.add_argument("--out", "--md", type=Path, deprecated=("--md",), help="write the table as Markdown here")
    p.add_argument("--plot", type=Path, help="write RSA by layer as a PNG here")
    return parser


def _run(args) -> int:
    from icml26.behaviorgeo.data import read_vocabulary, vocabulary

    check_json_output(args.json)
    if args.out is not None:
        if args.out.exists():
            raise FileExistsError(f"--out {args.out} exists; give a new folder, or --resume {args.out} to continue it")
        check_output_path(args.out)
    elif not (args.resume.is_dir() and (args.resume / "config.json").is_file()):
        raise ValueError(f"--resume {args.resume} is not a trial store written by 'icml26 behaviorgeo run'")
    store = args.out if args.out is not None else args.resume
    if args.vocab_file is not None and args.vocab_v5:
        raise ValueError("give --vocab-file or --vocab-v5, not both")
    if args.vocab_v5:
        from icml26.behaviorgeo.data import extended_nouns

        vocab = extended_nouns()
    else:
        vocab = read_vocabulary(args.vocab_file) if args.vocab_file is not None else vocabulary(args.vocab)
    if args.cues is not None and args.cues[1] > len(vocab):
        raise ValueError(f"--cues {args.cues[0]}:{args.cues[1]} reaches past the vocabulary's {len(vocab)} words")
    if args.paradigm == "fc" and len(vocab) < 17:
        raise ValueError(f"forced choice needs at least 17 words (cue + 16 candidates); got {len(vocab)}")

    from icml26.behaviorgeo.lm import load_lm, resolve_dtype, trial_counts
    from icml26.behaviorgeo.runner import run_fa_fast, run_fc_fast

    device = apply_device_arguments(args)  # one thread by default: the fastest on a small CPU
    dtype = resolve_dtype(args.dtype, device)
    model, tok = load_lm(args.model, vocab, dtype=dtype)
    model = model.to(device)
    if args.compile:
        from icml26.behaviorgeo.runner import compile_elementwise

        compile_elementwise(model)
    speed: dict = {}
    common = {"model_name": args.model, "batch": args.batch, "seed": args.seed, "max_trials": args.max_trials,
              "chat": not args.plain_prompt, "progress": None, "stats": speed, "cues": args.cues}  # fmt: skip
    t0 = time.perf_counter()
    if args.paradigm == "fc":
        df = run_fc_fast(model, tok, vocab, store, shuffles=args.shuffles, trials_per_cue=args.trials_per_cue,
                         scoring=args.scoring, calibrate=args.calibrate, **common)  # fmt: skip
    else:
        df = run_fa_fast(model, tok, vocab, store, runs=args.runs, max_new_tokens=args.max_new_tokens,
                         temperature=args.temperature, top_p=args.top_p, **common)  # fmt: skip
    seconds = time.perf_counter() - t0
    _, stats = trial_counts(df, vocab, args.paradigm, open_responses=args.paradigm == "fa")
    new = speed.get("trials", 0)
    rate = {"new_trials": new, "seconds": seconds, "trials_per_s": new / seconds if new else None,
            "gflop_per_trial": speed["flops"] / new / 1e9 if new else None}  # fmt: skip
    print(f"{args.paradigm}: {stats['trials']} trials in {store} ({len(vocab)} words); {stats['responses']} "
          f"responses counted, {stats['out_of_vocabulary']} out of vocabulary, {stats['unparsable']} unparsable "
          f"(kept in the store)")  # fmt: skip
    if new:
        print(f"{new} new trials in {seconds:.1f} s: {rate['trials_per_s']:.2f} trials/s, "
              f"{rate['gflop_per_trial']:.3f} GFLOP a trial")  # fmt: skip
    write_json(args.json, {"paradigm": args.paradigm, "store": str(store), "words": len(vocab),
                           "dtype": str(dtype).removeprefix("torch."), **stats, **rate})  # fmt: skip
    return 0


def _load_store(folder: Path):
    import pandas as pd

    from icml26.behaviorgeo.lm import TrialStore

    if not folder.is_dir() or not (folder / "config.json").is_file():
        raise ValueError(f"--trials {folder} is not a trial store written by 'icml26 behaviorgeo run'")
    try:
        config = json.loads((folder / "config.json").read_text())
        ts = TrialStore(folder, config)
        df = ts.read()
        vocab = ts.vocab()
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"trial store {folder} is unreadable ({str(exc).splitlines()[0]})") from None
    except Exception as exc:  # pyarrow errors on a damaged part
        raise ValueError(f"trial store {folder} holds an unreadable Parquet part ({type(exc).__name__})") from None
    if not isinstance(df, pd.DataFrame) or df.empty:
        raise ValueError(f"trial store {folder} holds no trials yet")
    return config, df, vocab


def _compare(args) -> int:
    import numpy as np

    from icml26.behaviorgeo.geometry import hidden_similarity, nn_overlap, ppmi, row_cosine, rsa
    from icml26.behaviorgeo.lm import hidden_states, load_lm, trial_counts

    check_json_output(args.json)
    baselines = [b.strip() for b in args.baselines.split(",") if b.strip() and b.strip() != "none"]
    bad = [b for b in baselines if b not in ("glove", "minilm")]
    if bad:
        raise ValueError(f"--baselines: unknown baseline {bad[0]!r} (glove, minilm or none)")
    stores = [_load_store(f) for f in args.trials]
    vocab = stores[0][2]
    for f, (_, _, v) in zip(args.trials, stores, strict=True):
        if v != vocab:
            raise ValueError(f"trial store {f} has another vocabulary than {args.trials[0]}")
    if args.k >= len(vocab):
        raise ValueError(f"--k {args.k} must be below the vocabulary size {len(vocab)}")
    behaviour, stats = {}, {}
    for f, (cfg, df, _) in zip(args.trials, stores, strict=True):
        name = f"{cfg.get('paradigm', 'fc')}:{f.name}"
        B, st = trial_counts(df, vocab, cfg.get("paradigm", "fc"), open_responses=cfg.get("paradigm") == "fa")
        behaviour[name], stats[name] = row_cosine(ppmi(B)), st
    device = apply_device_arguments(args)
    model, tok = load_lm(args.model, vocab)
    H = hidden_states(model.to(device), tok, vocab, args.strategy)  # (L+1, V, d)
    S_hidden = [hidden_similarity(h) for h in H]
    notes = []
    if "glove" in baselines:
        from icml26.behaviorgeo.data import glove_vectors

        X, missing = glove_vectors(vocab)
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            notes.append(f"GloVe: {len(missing)} of {len(vocab)} words out of vocabulary ({shown}); "
                         "their pairs are left out of the GloVe row")  # fmt: skip
        behaviour["glove"] = row_cosine(X)
    if "minilm" in baselines:
        from icml26.behaviorgeo.data import minilm_vectors

        behaviour["minilm"] = hidden_similarity(minilm_vectors(vocab))
    rows = {}
    for name, S in behaviour.items():
        k = np.abs(S).sum(1) > 0  # cues never answered (or words without a vector) leave both geometries
        if k.sum() < 3:
            notes.append(f"{name}: only {int(k.sum())} words have answers; left out (run more trials)")
            continue
        prof = [rsa(S, Sh, keep=k, n_pairs=args.pairs, seed=args.seed) for Sh in S_hidden]
        if np.all(np.isnan(prof)):
            notes.append(_undefined_rsa_note(name, int(k.sum()), stats.get(name)))
            continue
        best = int(np.nanargmax(prof))
        kk = min(args.k, int(k.sum()) - 1)
        rows[name] = {"rsa_by_layer": prof, "peak_layer": best, "peak_rsa": prof[best],
                      f"nn@{args.k}": nn_overlap(S, S_hidden[best], kk, keep=k), "words": int(k.sum())}  # fmt: skip
        print(f"{name:>24}: peak RSA {prof[best]:+.3f} at layer {best}/{len(prof) - 1}; "
              f"NN@{kk} {rows[name][f'nn@{args.k}']:.3f} ({int(k.sum())} words)")  # fmt: skip
    if not rows:
        raise ValueError("no geometry has an RSA: " + " | ".join(notes) if notes else "no geometry has answers")
    validation = _validate_geometries(behaviour, S_hidden, vocab, notes)
    for n in notes:
        print(n)
    write_json(args.json, {"model": args.model, "strategy": args.strategy, "vocab": vocab, "stats": stats,
                            "rows": rows, "validation": validation, "notes": notes})  # fmt: skip
    return 0


def _validate_geometries(behaviour: dict, S_hidden: list, vocab: list[str], notes: list[str]) -> dict:
    """Spearman rho of every geometry (and of the hidden states at every layer) with SimLex-999 and WordSim-353
    over the norm pairs inside the vocabulary; {} with a note when gensim (which ships the norms) is missing."""
    import numpy as np

    try:
        from icml26.behaviorgeo.data import validate_similarity

        found = {n: validate_similarity(np.zeros((len(vocab),) * 2), vocab, n)[1] for n in ("simlex999", "wordsim353")}
    except ImportError:
        notes.append("SimLex-999 / WordSim-353 validation skipped: gensim (which ships them) is not installed")
        return {}
    out = {}
    for norm, n_pairs in found.items():
        if n_pairs < 10:
            notes.append(f"{norm}: only {n_pairs} of its pairs lie inside the vocabulary; not validated")
            continue
        out[norm] = {name: validate_similarity(S, vocab, norm, keep=np.abs(S).sum(1) > 0)[0]
                     for name, S in behaviour.items()}  # fmt: skip
        out[norm]["hidden by layer"] = [validate_similarity(S, vocab, norm)[0] for S in S_hidden]
        out[norm]["pairs in vocabulary"] = n_pairs
        shown = ", ".join(f"{k} {v:+.3f}" for k, v in out[norm].items() if isinstance(v, float))
        print(f"{norm} ({n_pairs} pairs): Spearman rho {shown}; hidden states best layer "
              f"{np.nanmax(out[norm]['hidden by layer']):+.3f}")  # fmt: skip
    return out


def _undefined_rsa_note(name: str, words: int, stats: dict | None) -> str:
    """Why a geometry has no RSA (its similarities are constant over the answered words), with the answer counts."""
    why = f"{name}: RSA undefined (the similarities of its {words} answered words are all equal); left out"
    if stats and stats.get("responses") is not None:
        why += (
            f"; {stats.get('out_of_vocabulary', 0)} answers were out of vocabulary, {stats['responses']} "
            f"counted, {stats.get('unparsable', 0)} unparsable (run more trials or use a larger vocabulary)"
        )
    return why


def _report(args) -> int:
    for p in (args.out, args.plot):
        if p is not None:
            check_output_path(p)
    check_input_file(args.compare, what="comparison JSON")
    try:
        data = json.loads(args.compare.read_text(encoding="utf-8"))
        rows = data["rows"]
        table = [(n, float(r["peak_rsa"]), int(r["peak_layer"]), r["rsa_by_layer"]) for n, r in rows.items()]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
        raise ValueError(f"{args.compare} is not a JSON written by 'icml26 behaviorgeo compare'") from None
    lines = [f"model {data.get('model')}, strategy {data.get('strategy')}, {len(data.get('vocab', []))} words", "",
             "| geometry | peak RSA | peak layer |", "|---|---|---|"]  # fmt: skip
    lines += [f"| {n} | {r:+.3f} | {layer} |" for n, r, layer, _ in table]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out is not None:
        with atomic_output(args.out) as tmp:
            tmp.write_text(text)
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.8, 3.8))
        for n, _, _, prof in table:
            ax.plot(range(len(prof)), prof, label=n)
        ax.set_xlabel("layer")
        ax.set_ylabel("RSA with hidden states")
        ax.legend(fontsize=8)
        with atomic_output(args.plot) as tmp:
            fig.savefig(tmp, format="png", dpi=100)
        plt.close(fig)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 behaviorgeo``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    return {"run": _run, "compare": _compare, "report": _report}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
