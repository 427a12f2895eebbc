"""``icml26 eegmoce simulate|train|explain``: synthetic data, subject-grouped CV + checkpoint, explanation."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from icml26._util.cli import (
    ArgumentParser,
    add_json_argument,
    bounded_float,
    bounded_int,
    learning_rate,
    nonnegative_float,
    positive_float,
)
from icml26._util.device import add_threads_argument, apply_threads
from icml26._util.io import atomic_output, check_input_file, check_output_path, write_json
from icml26.eegmoce.config import ARMS

MAX_TRIALS_TOTAL = 50_000  # ~0.4 GB of float64 EEG at 8 x 128


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="icml26 eegmoce",
        description="Hyperbolic mixture-of-curvature experts for EEG-based multimodal learning (EEG-MoCE).",
    )
    sub = p.add_subparsers(dest="verb", required=True, metavar="{simulate,train,explain}")

    s = sub.add_parser(
        "simulate",
        help="write synthetic EEG + audio + video trials with a latent hierarchy (.npz)",
        description="Reads nothing; writes synthetic trials (eeg, audio, video, y, subject, fs) with a known latent "
        "tree to --out. Example: icml26 eegmoce simulate --subjects 6 --trials 16 --out eeg.npz",
    )
    s.add_argument("--subjects", type=bounded_int(2, 64, what="memory"), default=8, help="number of subjects")
    s.add_argument("--trials", type=bounded_int(1, 400, what="memory"), default=32, help="trials per subject")
    s.add_argument("--depth", type=bounded_int(1, 6), default=3, help="depth of the latent tree")
    s.add_argument("--branching", type=bounded_int(2, 6), default=3, help="children per node (classes = branching)")
    s.add_argument("--noise", type=nonnegative_float, default=1.0, help="noise scale of every modality")
    s.add_argument("--stream-signal", type=nonnegative_float, default=0.12, help="amplitude of audio/video codes")
    s.add_argument("--subject-shift", type=nonnegative_float, default=0.5, help="per-subject mixing/gain/offset scale")
    s.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0, help="random seed")
    s.add_argument("--out", required=True, help="output .npz (eeg, audio, video, y, subject, fs)")

    t = sub.add_parser(
        "train",
        help="subject-grouped cross-validation of one arm; optional final checkpoint",
        description="Reads trials (--data .npz) or EEG + ECG recordings (--edf DIR of <subject>_1.edf rest / "
        "<subject>_2.edf task files, EEGMAT naming), runs subject-grouped cross-validation of one arm and prints "
        "the held-out balanced accuracy; writes per-fold metrics (--json) and a model trained on all subjects "
        "(--out .pt). Example: icml26 eegmoce train --edf eegmat/ --cv loso --epochs 12 --json cv.json --out moce.pt",
    )
    src = t.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", help=".npz with eeg (N,C,T), y, subject, fs and other (N,F,T) modalities")
    src.add_argument(
        "--edf",
        help="directory of EDF recordings <subject>_1.edf (rest) and <subject>_2.edf (task), EEG + ECG channels "
        "(EEGMAT / PhysioNet naming); windows of 4 s, EEG + ECG + HRV modalities, per-subject z-scoring",
    )
    t.add_argument(
        "--seconds",
        type=bounded_float(0, 3600, what="per recording"),
        default=60.0,
        help="with --edf: seconds kept per recording (the end of rest, the start of the task), at least one 4 s "
        "window; 0 keeps all",
    )
    t.add_argument(
        "--label", choices=("task", "count-quality"), default="task", help="with --edf: rest vs task, or counters"
    )
    t.add_argument("--cv", choices=("loso", "kfold"), default="kfold", help="leave-one-subject-out or GroupKFold")
    t.add_argument("--folds", type=bounded_int(2, 100), default=4, help="folds of kfold (ignored by loso)")
    t.add_argument("--arm", choices=ARMS, default="moce", help="model: MoCE, its ablations or a Euclidean baseline")
    t.add_argument("--epochs", type=bounded_int(1, 1000, what="time"), default=12, help="training epochs per fold")
    t.add_argument("--lr", type=learning_rate, default=3e-3, help="Adam learning rate")
    t.add_argument("--curvature-init", type=positive_float, default=1.0, help="initial |K| of every expert (> 0)")
    t.add_argument(
        "--prior",
        type=bounded_float(0, 100, open_low=True, what="lambda log|K| beyond 100 swamps every attention score"),
        default=0.3,
        help="initial lambda of the curvature prior",
    )
    t.add_argument("--seed", type=bounded_int(0, 2**31 - 1), default=0, help="seed of folds, init and batches")
    add_json_argument(t, "the per-fold metrics")
    t.add_argument(
        "--out",
        "--checkpoint",
        default=None,
        output=True,
        deprecated=("--checkpoint",),
        help="train a final model on all subjects and save it here (.pt)",
    )
    add_threads_argument(t)  # CPU only: the Lorentz model runs in float64

    e = sub.add_parser(
        "explain",
        help="curvatures, attention contributions and delta_rel per modality",
        description="Reads a checkpoint of 'train --out' (and optionally trials, --data); prints and writes "
        "(--json) the learned |K|, attention contributions and Gromov delta_rel per modality. Example: icml26 "
        "eegmoce explain --checkpoint moce.pt --data eeg.npz --json explain.json",
    )
    e.add_argument("--checkpoint", required=True, help="a .pt written by 'train --out'")
    e.add_argument("--data", default=None, help="trials (.npz) for contributions and delta_rel (optional)")
    e.add_argument(
        "--quadruples",
        type=bounded_int(100, 1_000_000, what="time"),
        default=20000,
        help="sampled quadruples of the 4-point condition",
    )
    e.add_argument(
        "--points", type=bounded_int(4, 5000, what="memory"), default=200, help="trials sampled for delta_rel"
    )
    add_json_argument(e, "the explanation")
    add_threads_argument(e)
    return p


def _cpu_only(a) -> None:
    """Apply --threads (the Lorentz model runs in float64 on the CPU: the verbs take no --device)."""
    apply_threads(a)


def _check_json(path: str | None) -> None:
    if path is not None and path != "-":
        check_output_path(path, suffixes=(".json",))


def _load_data(path: str):
    from icml26.eegmoce.data import load_npz

    d = load_npz(path)
    if d.n > MAX_TRIALS_TOTAL:
        raise ValueError(f"{path} holds {d.n} trials; at most {MAX_TRIALS_TOTAL:,} are accepted (memory)")
    return d


def _simulate(a) -> int:
    from icml26.eegmoce.data import simulate

    check_output_path(a.out, suffixes=(".npz",))
    d = simulate(
        a.subjects,
        a.trials,
        depth=a.depth,
        branching=a.branching,
        noise=a.noise,
        stream_signal=a.stream_signal,
        subject_shift=a.subject_shift,
        seed=a.seed,
    )
    d.save(a.out)
    print(
        f"wrote {d.n} trials of {a.subjects} subjects, {d.n_classes} classes, modalities "
        f"{', '.join(f'{m} {d.modalities[m].shape[1:]}' for m in d.names)} to {a.out}"
    )
    return 0


def _train(a) -> int:
    import torch

    from icml26.eegmoce.model import ModelConfig, TrainConfig, build_model, cross_validate, train

    _check_json(a.json)
    if a.out is not None:
        check_output_path(a.out, suffixes=(".pt",))
    _cpu_only(a)
    if a.edf is not None:
        from pathlib import Path

        from icml26.eegmoce.eegmat import load_eegmat

        if not Path(a.edf).is_dir():
            raise ValueError(f"--edf {a.edf} is not a directory of EDF recordings")
        seconds = a.seconds or None
        if seconds is not None and seconds < 4.0:  # before any EDF is read
            raise ValueError(f"--seconds {a.seconds:g} keeps less than one 4 s window per recording; use >= 4 or 0")
        d, subjects = load_eegmat(a.edf, label=a.label, rest_seconds=seconds, task_seconds=seconds)
        print(
            f"read {d.n} windows of {len(subjects)} subjects from {a.edf}: "
            + ", ".join(f"{m} {d.modalities[m].shape[1:]}" for m in d.names)
        )
    else:
        check_input_file(a.data, what="data file")
        d = _load_data(a.data)
    mcfg = ModelConfig(curvature_init=a.curvature_init, prior_init=a.prior)
    tcfg = TrainConfig(epochs=a.epochs, lr=a.lr)
    shapes = {m: x.shape[1:] for m, x in d.modalities.items()}
    build_model(a.arm, shapes, d.fs, d.n_classes, mcfg)  # shape / sampling-rate checks before any training
    res = cross_validate(d, a.arm, mcfg, tcfg, cv=a.cv, n_folds=a.folds, seed=a.seed)
    s = res.summary()
    print(
        f"{a.arm}: cross-subject balanced accuracy {s['balanced_accuracy_mean']:.3f} +- "
        f"{s['balanced_accuracy_sd']:.3f} over {len(res.balanced_accuracy)} folds, macro-F1 {s['macro_f1_mean']:.3f}"
    )
    if res.curvatures and res.curvatures[0]:
        print(
            "learned |K| per modality (mean over folds): "
            + ", ".join(f"{m} {k:.3f}" for m, k in zip(d.names, np.mean(res.curvatures, axis=0), strict=True))
        )
    if a.out is not None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(a.seed)
            model = build_model(a.arm, shapes, d.fs, d.n_classes, mcfg).double()
            train(model, d, tcfg, a.seed)
        ckpt = {
            "state": model.state_dict(),
            "arm": a.arm,
            "model_config": asdict(mcfg),
            "fs": d.fs,
            "n_classes": d.n_classes,
            "names": d.names,
            "shapes": {m: list(v) for m, v in shapes.items()},
        }
        with atomic_output(a.out) as tmp:
            torch.save(ckpt, tmp)
        print(f"wrote the model trained on all {d.n} trials to {a.out}")
    write_json(a.json, {**s, "data": str(a.data or a.edf), "cv": a.cv, "epochs": a.epochs, "seed": a.seed})
    return 0


def load_checkpoint(path: str):
    """Rebuild the model of a checkpoint; ValueError naming the file on anything unreadable."""
    import torch

    from icml26.eegmoce.model import ModelConfig, build_model

    p = check_input_file(path, what="checkpoint")
    try:
        ck = torch.load(p, map_location="cpu", weights_only=True)
    except Exception:  # torch's weights_only unpickler raises anything (IndexError on a CSV, KeyError, ...)
        # torch's own text (e.g. the weights_only advice) would mislead here: the file is simply not ours
        raise ValueError(
            f"{p} is not an eegmoce checkpoint (a .pt written by 'eegmoce train --out'; torch cannot read it as one)"
        ) from None
    keys = {"state", "arm", "model_config", "fs", "n_classes", "names", "shapes"}
    if not isinstance(ck, dict) or not keys <= set(ck):
        raise ValueError(f"{p} is not an eegmoce checkpoint (needs {sorted(keys)})")
    try:
        model = build_model(
            ck["arm"],
            {m: tuple(v) for m, v in ck["shapes"].items()},
            ck["fs"],
            ck["n_classes"],
            ModelConfig(**ck["model_config"]),
        ).double()
    except Exception as exc:  # a hand-edited or foreign dict with our keys
        raise ValueError(f"{p} is not an eegmoce checkpoint (its model cannot be rebuilt: {exc!s:.200})") from None
    try:
        model.load_state_dict(ck["state"])
    except RuntimeError as exc:
        raise ValueError(f"checkpoint {p} does not match its model: {str(exc).splitlines()[0][:200]}") from None
    return model, ck


def _explain(a) -> int:
    from icml26.eegmoce.data import gromov_delta, hierarchy_features
    from icml26.eegmoce.model import MoCE, check_data, embeddings, predict

    _check_json(a.json)
    _cpu_only(a)
    model, ck = load_checkpoint(a.checkpoint)
    out: dict = {"arm": ck["arm"], "modalities": ck["names"]}
    if isinstance(model, MoCE):
        out["curvature_abs_K"] = dict(zip(ck["names"], model.curvatures.detach().numpy().tolist(), strict=True))
    if a.data is not None:
        d = _load_data(a.data)
        try:
            check_data(model, d)
        except ValueError as exc:
            raise ValueError(f"{a.data} does not fit the checkpoint {a.checkpoint}: {exc}") from None
        _, contrib = predict(model, d)
        out["contribution"] = dict(zip(model.names, np.asarray(contrib).tolist(), strict=True))
        rng = np.random.default_rng(0)
        pick = rng.choice(d.n, min(a.points, d.n), replace=False)
        if pick.size < 4:
            raise ValueError(f"delta_rel needs at least 4 trials; {a.data} holds {d.n}")
        emb = embeddings(model, d)
        out["delta_rel_features"] = {
            m: gromov_delta(hierarchy_features(d, m)[pick], a.quadruples, np.random.default_rng(1))[1]
            for m in model.names
        }
        out["delta_rel_embedded"] = {
            m: gromov_delta(emb[m][pick], a.quadruples, np.random.default_rng(1))[1] for m in model.names
        }
    for k, v in out.items():
        print(f"{k}: " + (", ".join(f"{m} {x:.3f}" for m, x in v.items()) if isinstance(v, dict) else str(v)))
    write_json(a.json, out)
    return 0


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    return {"simulate": _simulate, "train": _train, "explain": _explain}[a.verb](a)
