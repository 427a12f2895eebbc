"""``icml26 dualflow``: generate data, fit a model, embed trials, simulate forward.

Examples::

    icml26 dualflow generate lorenz --regime noisy --embedding tuning --out spikes.npz
    icml26 dualflow fit spikes.npz --key smoothed --budget 10 --out model.pt
    icml26 dualflow embed model.pt spikes.npz --key smoothed --components 3 --out latents.npy
    icml26 dualflow simulate model.pt spikes.npz --key smoothed --frames 20 --out forecast.npy
    icml26 dualflow generate video --trials 10 --time 50 --out video.npz
    icml26 dualflow fit video.npz --key frames --frame-shape 16 16 --budget 10 --out video.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icml26._util.cli import ArgumentParser, bounded_float, bounded_int, fraction, nonnegative_int
from icml26._util.io import check_output_path, save_npy, save_npz
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


def _load_model(path: str):
    from icml26.dualflow.estimator import DualFlow

    return DualFlow.load(path)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 dualflow", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)

    g = sub.add_parser("generate", help="write a synthetic data set with ground truth (.npz)")
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

    f = sub.add_parser("fit", help="fit DualFlow on trials in a .npy/.npz file; writes a checkpoint")
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

    e = sub.add_parser("embed", help="latent coordinates of every frame (flowed through u_phi)")
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

    s = sub.add_parser("simulate", help="forecast frames after the end of each trial with the dynamical flow")
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

    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from icml26.dualflow.data import load_array

    _check_out(args.out, {"generate": "npz", "fit": "pt"}.get(args.verb, "array"))

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
        from icml26.dualflow.config import preset
        from icml26.dualflow.estimator import DualFlow

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
        est = DualFlow(**kwargs, random_state=args.seed, verbose=show).fit(X)
        est.save(args.out)
        print(f"wrote {args.out}: K_eff = {est.effective_dim_}, final loss {est.loss_history_[-1, 0]:.4g}")
    elif args.verb == "embed":
        est = _load_model(args.model)
        if args.solver:
            est.solver = args.solver
        X = load_array(args.data, args.key)
        Z = est.transform(X, n_components=args.components, representation=args.representation)
        _save(args.out, Z)
        print(f"wrote {args.out} (function evaluations: {est.nfe_})")
    else:
        est = _load_model(args.model)
        X = load_array(args.data, args.key)
        _save(args.out, est.simulate(X, args.frames, tau=args.tau))
        print(f"wrote {args.out}")
    return 0
