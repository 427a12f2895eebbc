"""``icml26 dualflow``: generate data, fit a model, embed trials, simulate forward.

Examples::

    icml26 dualflow generate lorenz --regime noisy --out spikes.npz
    icml26 dualflow fit spikes.npz --key smoothed --budget 10 --out model.pt
    icml26 dualflow embed model.pt spikes.npz --key smoothed --components 3 --out latents.npy
    icml26 dualflow simulate model.pt spikes.npz --key smoothed --frames 20 --out forecast.npy
    icml26 dualflow generate video --trials 10 --time 50 --out video.npz
    icml26 dualflow fit video.npz --key frames --frame-shape 16 16 --budget 10 --out video.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def _save(path: str, data) -> None:
    out = Path(path)
    if isinstance(data, list):
        if out.suffix != ".npz":
            raise ValueError(f"variable-length trials are written as .npz; got {out}")
        np.savez(out, **{f"trial_{i:05d}": t for i, t in enumerate(data)})
    elif out.suffix == ".npz":
        np.savez(out, data=data)
    else:
        np.save(out, data)


def _load_model(path: str):
    from icml26.dualflow.estimator import DualFlow

    return DualFlow.load(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="icml26 dualflow", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)

    g = sub.add_parser("generate", help="write a synthetic data set with ground truth (.npz)")
    g.add_argument("system", choices=["lorenz", "vanderpol", "rossler", "video"])
    g.add_argument("--regime", choices=["clean", "noisy"], default="noisy")
    g.add_argument("--trials", type=int, default=200)
    g.add_argument("--time", type=int, default=100)
    g.add_argument("--neurons", type=int, default=60)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", required=True)

    f = sub.add_parser("fit", help="fit DualFlow on trials in a .npy/.npz file; writes a checkpoint")
    f.add_argument("data")
    f.add_argument("--key", help="array name inside a .npz file")
    f.add_argument("--budget", type=float, default=10.0, help="latent budget E[K] = 1/p of nested dropout")
    f.add_argument("--preset", choices=["smoke", "small", "paper"], default="small")
    f.add_argument("--steps", type=int, help="override the preset's number of Adam steps")
    f.add_argument("--history", type=int, help="override the preset's history length h")
    f.add_argument("--frame-shape", type=int, nargs=2, metavar=("H", "W"), help="video frames: convolutional flows")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", required=True)

    e = sub.add_parser("embed", help="latent coordinates of every frame (flowed through u_phi)")
    e.add_argument("model")
    e.add_argument("data")
    e.add_argument("--key")
    e.add_argument("--components", type=int, help="keep the first K coordinates")
    e.add_argument("--representation", choices=["flowed", "encoder"], default="flowed")
    e.add_argument("--solver", choices=["dopri5", "rk4"])
    e.add_argument("--out", required=True)

    s = sub.add_parser("simulate", help="forecast frames after the end of each trial with the dynamical flow")
    s.add_argument("model")
    s.add_argument("data")
    s.add_argument("--key")
    s.add_argument("--frames", type=int, default=20)
    s.add_argument("--tau", type=float, default=0.0, help="compression level at which time is integrated")
    s.add_argument("--out", required=True)

    args = parser.parse_args(argv)
    from icml26.dualflow.data import load_array

    if args.verb == "generate":
        from icml26.dualflow.data import make_rotating_video, make_spiking_dataset

        if args.system == "video":
            frames, angle = make_rotating_video(n_videos=args.trials, n_frames=args.time, seed=args.seed)
            np.savez(args.out, frames=frames.reshape(*frames.shape[:2], -1), angle=angle)
        else:
            ds = make_spiking_dataset(
                args.system,
                n_trials=args.trials,
                n_time=args.time,
                n_neurons=args.neurons,
                regime=args.regime,
                seed=args.seed,
            )
            np.savez(args.out, spikes=ds.spikes, smoothed=ds.smoothed, rates=ds.rates, latents=ds.latents)
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
        est = DualFlow(**kwargs, random_state=args.seed, verbose=True).fit(X)
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
