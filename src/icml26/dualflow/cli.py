"""``icml26 dualflow``: generate data, fit a model, embed trials, simulate forward.

Examples::

    icml26 dualflow generate lorenz --regime noisy --embedding tuning --out spikes.npz
    icml26 dualflow fit spikes.npz --key smoothed --budget 10 --out model.pt
    icml26 dualflow embed model.pt spikes.npz --key smoothed --components 3 --out latents.npy
    icml26 dualflow simulate model.pt spikes.npz --key smoothed --frames 20 --out forecast.npy
    icml26 dualflow generate video --trials 10 --time 50 --out video.npz
    icml26 dualflow fit video.npz --key frames --frame-shape 16 16 --budget 10 --out video.pt
    icml26 dualflow decode counts.npy --behaviour position.npy --folds 4 --out latents.npz --json scores.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icml26._util.cli import (
    ArgumentParser,
    add_json_argument,
    bounded_float,
    bounded_int,
    fraction,
    nonnegative_int,
)
from icml26._util.device import add_device_arguments
from icml26._util.io import check_json_output, check_output_path, save_npy, save_npz, write_json
from icml26.dualflow.config import MAX_SIMULATE_FRAMES, MAX_STEPS

_AXIS = bounded_int(1, 1_000_000, what="generator limit; the product is bounded by memory too")


def _check_out(path: str, kind: str) -> None:
    """Check an output path before any work; ``kind`` is ``npz`` (archives), ``array`` (.npy/.npz) or ``pt``."""
    suffixes = {"npz": (".npz",), "array": (".npy", ".npz"), "pt": ()}[kind]
    check_output_path(path, suffixes=suffixes)


def _save(path: str, data) -> None:
    out = Path(path)
    if isinstance(data, list):
        if out.suffix != ".npz":
            raise ValueError(f"variable-length trials are written as .npz; got {out}")
        save_npz(out, **{f"trial_{i:05d}": t for i, t in enumerate(data)})
    elif out.suffix == ".npz":
        save_npz(out, data=data)
    else:
        save_npy(out, data)


def _load_model(args):
    from icml26._util.device import apply_device_arguments
    from icml26.dualflow.estimator import DualFlow

    apply_device_arguments(args)  # threads, and an unknown or absent device refused before loading
    return DualFlow.load(args.model, device=args.device)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 dualflow", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)

    g = sub.add_parser(
        "generate",
        help="write a synthetic data set with ground truth (.npz)",
        description="Reads nothing; simulates spiking trials driven by a Lorenz, Van der Pol or Rossler latent (or "
        "videos of a rotating object) and writes them with their ground truth (spikes, smoothed, rates, "
        "smoothed_rates, latents; or frames, angle) to --out (.npz). Example: icml26 dualflow generate lorenz "
        "--regime noisy --embedding tuning --trials 50 --out spikes.npz",
    )
    g.add_argument("system", choices=["lorenz", "vanderpol", "rossler", "video"], help="which data set")
    g.add_argument("--regime", choices=["clean", "noisy"], default="noisy", help="firing-rate regime (spiking)")
    g.add_argument(
        "--embedding",
        choices=["tuning", "network", "softplus"],
        default="tuning",
        help="latent -> rates (spiking): tuning curves, random 2-layer net (nonlinear), softplus (near-linear)",
    )
    g.add_argument("--trials", type=_AXIS, default=200, help="trials (videos)")
    g.add_argument("--time", type=_AXIS, default=100, help="time bins (frames) per trial")
    g.add_argument("--neurons", type=_AXIS, default=60, help="neurons (spiking data sets)")
    g.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    g.add_argument("--out", required=True, help="output .npz to write")

    f = sub.add_parser(
        "fit",
        help="fit DualFlow on trials in a .npy/.npz file; writes a checkpoint",
        description="Reads trials (.npy (trials, time, features) or an array of a .npz, --key), fits DualFlow with "
        "the preset's hyper-parameters and the latent budget, writes the checkpoint (--out, .pt) and prints the "
        "effective latent size and final loss. Example: icml26 dualflow fit spikes.npz --key smoothed --budget 10 "
        "--preset smoke --out model.pt",
    )
    f.add_argument("data", help="trials: .npy (trials, time, features) or .npz")
    f.add_argument("--key", help="array name inside a .npz file")
    f.add_argument(
        "--budget",
        type=bounded_float(1.0, 1e5, what="E[K] = 1/p is at least 1 latent and at most the data's features"),
        default=10.0,
        help="latent budget E[K] = 1/p of nested dropout",
    )
    f.add_argument("--preset", choices=["smoke", "small", "paper"], default="small", help="hyper-parameter preset")
    f.add_argument(
        "--steps", type=bounded_int(1, MAX_STEPS, what="step limit"), help="override the preset's number of Adam steps"
    )
    f.add_argument(
        "--history",
        type=bounded_int(0, 10_000, what="history limit"),
        help="override the preset's history length h (trials need at least h + 2 frames)",
    )
    f.add_argument(
        "--frame-shape",
        type=bounded_int(1, 4096, what="pixels per side"),
        nargs=2,
        metavar=("H", "W"),
        help="video frames: convolutional flows",
    )
    f.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    f.add_argument("--out", required=True, help="checkpoint (.pt) to write")
    add_json_argument(f, "the effective latent size and the loss history")
    add_device_arguments(f)

    e = sub.add_parser(
        "embed",
        help="latent coordinates of every frame (flowed through u_phi)",
        description="Reads a checkpoint of 'fit' and trials (.npy or .npz, --key), and writes the latent "
        "coordinates of every frame (flowed or encoder, the first --components) to --out (.npy or .npz). "
        "Example: icml26 dualflow embed model.pt spikes.npz --key smoothed --components 3 --out latents.npy",
    )
    e.add_argument("model", help="checkpoint written by 'fit'")
    e.add_argument("data", help="trials: .npy or .npz")
    e.add_argument("--key", help="array name inside a .npz file")
    e.add_argument(
        "--components",
        type=bounded_int(1, 100_000, what="at most the model's latent size"),
        help="keep the first K coordinates (default: all)",
    )
    e.add_argument("--representation", choices=["flowed", "encoder"], default="flowed", help="which latent")
    e.add_argument("--solver", choices=["dopri5", "rk4"], help="ODE solver (default: the checkpoint's)")
    e.add_argument("--out", required=True, help="output .npy or .npz")
    add_device_arguments(e)

    s = sub.add_parser(
        "simulate",
        help="forecast frames after the end of each trial with the dynamical flow",
        description="Reads a checkpoint of 'fit' and trials (.npy or .npz, --key), integrates the dynamical flow "
        "from the end of each trial and writes the forecast frames to --out (.npy or .npz). Example: icml26 "
        "dualflow simulate model.pt spikes.npz --key smoothed --frames 20 --out forecast.npy",
    )
    s.add_argument("model", help="checkpoint written by 'fit'")
    s.add_argument("data", help="trials whose ends start the forecast: .npy or .npz")
    s.add_argument("--key", help="array name inside a .npz file")
    s.add_argument(
        "--frames",
        type=bounded_int(1, MAX_SIMULATE_FRAMES, what="rollout limit"),
        default=20,
        help="frames to forecast after each trial",
    )
    s.add_argument("--tau", type=fraction, default=0.0, help="compression level in [0, 1] at which time is integrated")
    s.add_argument("--out", required=True, help="output .npy or .npz")
    add_device_arguments(s)

    c = sub.add_parser(
        "decode",
        help="your own binned counts: DCF vs PCA latents judged by decoding a behavioural variable on held-out trials",
        description="Read binned spike counts (.npy/.npz: (trials, time, units) or one 2-D array per trial) and a "
        "behavioural variable per bin (same trials and time, (time,) or (time, k)) — or an NWB file (units' spike "
        "times, a behavioural time series named by --series, trials — or, without a trials table, --blocks equal "
        "blocks of time; binned in --bin s bins; needs pynwb) — smooth "
        "the counts, fit DCF and "
        "PCA on all trials but one fold at a time, and decode the behaviour from each held-out latent (linear and "
        "kNN R^2). Writes DCF's held-out latents (--out, .npz, one array per trial) and the scores (--json). "
        "Example: icml26 dualflow decode counts.npy --behaviour position.npy --folds 4 --out latents.npz "
        "--json scores.json",
    )
    c.add_argument("data", help="binned counts: .npy (trials, time, units) or .npz; or an NWB file (.nwb)")
    c.add_argument("--key", help="array name inside a counts .npz")
    c.add_argument("--behaviour", help="behaviour per bin: .npy/.npz, the counts' trials and time (not with .nwb)")
    c.add_argument("--series", help="NWB only: the behavioural time series' name (default: the only SpatialSeries)")
    c.add_argument("--bin", type=bounded_float(1e-4, 100.0, what="seconds"), default=0.05, help="NWB only: bin (s)")
    c.add_argument(
        "--blocks",
        type=bounded_int(2, 10000, what="blocks"),
        default=4,
        help="NWB without a trials table only: cut the recording into this many equal blocks of time (the trials)",
    )
    c.add_argument("--behaviour-key", help="array name inside a behaviour .npz")
    c.add_argument("--folds", type=bounded_int(2, 1000, what="folds"), default=4, help="cross-validation folds")
    c.add_argument("--components", type=bounded_int(1, 1000, what="latent size"), default=3, help="latent size")
    c.add_argument("--smooth", type=bounded_float(0.0, 1000.0, what="bins"), default=2.0, help="Gaussian sigma (bins)")
    c.add_argument("--preset", choices=["smoke", "small", "paper"], default="small", help="DCF hyper-parameter preset")
    c.add_argument("--steps", type=bounded_int(1, MAX_STEPS, what="step limit"), help="override the preset's steps")
    c.add_argument(
        "--budget",
        type=bounded_float(1.0, 1e5, what="E[K] = 1/p is at least 1 latent and at most the data's units"),
        help="latent budget E[K] = 1/p (default: the preset's, at most the number of units)",
    )
    c.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    c.add_argument("--out", required=True, help="DCF's held-out latents (.npz)")
    add_json_argument(c, "the held-out decoding scores")
    add_device_arguments(c)

    return parser


def _decode(args) -> None:
    from icml26._util.device import apply_device_arguments
    from icml26._util.io import check_input_file
    from icml26.dualflow.config import preset
    from icml26.dualflow.data import load_array
    from icml26.dualflow.real import cross_validated_decoding

    apply_device_arguments(args)
    nwb = Path(args.data).suffix.lower() == ".nwb"
    if nwb and args.behaviour is not None:
        raise ValueError("an NWB file holds its own behaviour: name its series with --series, not --behaviour")
    if not nwb and args.behaviour is None:
        raise ValueError("--behaviour is required with .npy/.npz counts")
    inputs = {Path(check_input_file(args.data, what="counts file")).resolve()}
    if not nwb:
        inputs.add(Path(check_input_file(args.behaviour, what="behaviour file")).resolve())
    for out in (args.out, args.json):
        if out not in (None, "-") and Path(out).resolve() in inputs:
            raise ValueError(f"output {out} is one of the input files; choose another path")
    if args.json not in (None, "-"):
        check_output_path(args.json, suffixes=(".json",))
    kwargs = preset(args.preset).as_kwargs()
    if args.steps is not None:
        kwargs["n_steps"] = args.steps
    if nwb:
        from icml26.dualflow.nwb import read_nwb

        X, y = read_nwb(args.data, bin_s=args.bin, series=args.series, blocks=args.blocks)
    else:
        X, y = load_array(args.data, args.key), _load_behaviour(args.behaviour, args.behaviour_key)
    n_units = X[0].shape[-1]
    kwargs["latent_budget"] = min(kwargs["latent_budget"], n_units) if args.budget is None else args.budget
    scores, latents = cross_validated_decoding(
        X,
        y,
        n_folds=args.folds,
        n_components=args.components,
        smooth_bins=args.smooth,
        seed=args.seed,
        device=args.device,
        **kwargs,
    )
    save_npz(args.out, **{f"trial_{i:05d}": z for i, z in enumerate(latents)})
    write_json(args.json, {"folds": args.folds, "components": args.components, **scores})
    for name, s in scores.items():
        print(f"{name}: held-out linear R2 {s['linear R2']:.3f}, kNN R2 {s['kNN R2']:.3f}", file=sys.stderr)


def _load_behaviour(path: str, key: str | None):
    """The behaviour file: like the counts, but a 2-D .npy is (trials, time) of one variable."""
    import numpy as np

    from icml26._util.io import load_array as read

    p = Path(path)
    if p.suffix == ".npy":
        a = np.asarray(read(p, what="behaviour file"))
        if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
            raise ValueError(f"{path}: the behaviour must be real numbers; got dtype {a.dtype}")
        if a.ndim not in (2, 3):
            raise ValueError(f"{path}: the behaviour must be (trials, time) or (trials, time, k); got {a.shape}")
        return a
    from icml26.dualflow.data import load_array

    return load_array(path, key)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from icml26.dualflow.data import load_array

    _check_out(args.out, {"generate": "npz", "fit": "pt", "decode": "npz"}.get(args.verb, "array"))
    check_json_output(getattr(args, "json", None))
    if args.verb == "decode":
        _decode(args)
        return 0

    if args.verb == "generate":
        from icml26.dualflow.data import make_rotating_video, make_spiking_dataset

        if args.system == "video":
            frames, angle = make_rotating_video(n_videos=args.trials, n_frames=args.time, seed=args.seed)
            save_npz(args.out, frames=frames.reshape(*frames.shape[:2], -1), angle=angle)
        else:
            ds = make_spiking_dataset(
                args.system,
                n_trials=args.trials,
                n_time=args.time,
                n_neurons=args.neurons,
                regime=args.regime,
                embedding=args.embedding,
                seed=args.seed,
            )
            save_npz(
                args.out,
                spikes=ds.spikes,
                smoothed=ds.smoothed,
                rates=ds.rates,
                smoothed_rates=ds.smoothed_rates,
                latents=ds.latents,
            )
        print(f"wrote {args.out}")
    elif args.verb == "fit":
        from icml26._util.device import apply_device_arguments
        from icml26.dualflow.config import preset
        from icml26.dualflow.estimator import DualFlow

        apply_device_arguments(args)
        kwargs = preset(args.preset).as_kwargs()
        kwargs["latent_budget"] = args.budget
        if args.steps is not None:
            kwargs["n_steps"] = args.steps
        if args.history is not None:
            kwargs["history"] = args.history
        if args.frame_shape is not None:
            kwargs["frame_shape"] = tuple(args.frame_shape)
        X = load_array(args.data, args.key)
        from icml26._util.progress import QUIET

        show = sys.stderr.isatty() and not QUIET  # a bar on a terminal only: no carriage returns in a log file
        est = DualFlow(**kwargs, random_state=args.seed, verbose=show, device=args.device).fit(X)
        est.save(args.out)
        print(f"wrote {args.out}: K_eff = {est.effective_dim_}, final loss {est.loss_history_[-1, 0]:.4g}")
        write_json(args.json, {"effective_dim": est.effective_dim_, "loss_history": est.loss_history_})
    elif args.verb == "embed":
        est = _load_model(args)
        if args.solver:
            est.solver = args.solver
        X = load_array(args.data, args.key)
        Z = est.transform(X, n_components=args.components, representation=args.representation)
        _save(args.out, Z)
        print(f"wrote {args.out} (function evaluations: {est.nfe_})")
    else:
        est = _load_model(args)
        X = load_array(args.data, args.key)
        _save(args.out, est.simulate(X, args.frames, tau=args.tau))
        print(f"wrote {args.out}")
    return 0
