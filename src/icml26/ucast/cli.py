"""``icml26 ucast simulate | train | forecast | evaluate``: thin verbs over the library."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np


def _simulate(args) -> int:
    from icml26.ucast.config import get_preset
    from icml26.ucast.data import simulate_dataset

    d = get_preset(args.preset).data
    ds = simulate_dataset(
        args.trajectories or d.n_train,
        args.frames or d.frames,
        n_grid=d.n_grid,
        solver_n=d.solver_n,
        every=d.every,
        spin_up=d.spin_up,
        noise=d.noise,
        dt=d.dt,
        seed=args.seed,
    )
    ds.to_netcdf(args.out)
    print(f"wrote {args.out}: {dict(ds.sizes)}")
    return 0


def _load_training_data(path: str, variables: list[str] | None):
    from icml26.ucast.data import dataset_to_array, load_wb2, time_forcings

    ds = load_wb2(path)
    static_names = [v for v in ds.data_vars if "time" not in ds[v].dims]
    if variables is None:
        variables = [v for v in ds.data_vars if v not in static_names]
    x = dataset_to_array(ds, variables)  # (N, T, C, H, W)
    static = np.stack([ds[v].values for v in static_names]) if static_names else np.zeros((0, *x.shape[-2:]))
    forc = time_forcings(ds.time.values)  # (T, F)
    forcings = np.broadcast_to(forc, (x.shape[0], *forc.shape)).copy()
    return ds, x, variables, static, forcings


def _train(args) -> int:
    import torch

    from icml26._util import resolve_device
    from icml26.ucast.config import get_preset
    from icml26.ucast.data import Normalizer
    from icml26.ucast.model import UCast
    from icml26.ucast.train import load_checkpoint, train_stage

    preset = get_preset(args.preset)
    cfg = preset.det if args.stage == "det" else preset.prob
    if args.steps:
        from dataclasses import replace

        cfg = replace(cfg, steps=args.steps)
    device = resolve_device(args.device)
    ds, x, variables, static, forcings = _load_training_data(args.data, args.variables)
    if args.init is not None:
        model = load_checkpoint(args.init)
        if model.variables != variables or model.grid != x.shape[-2:]:
            raise ValueError(
                f"--init checkpoint has variables {model.variables} on grid {model.grid}; the data "
                f"have {variables} on {x.shape[-2:]}"
            )
    elif args.stage == "prob" and args.resume is None:
        raise ValueError("stage 'prob' warm-starts from a stage-1 checkpoint: pass --init")
    else:
        norm = Normalizer.fit(x)
        s = static.astype(np.float32)
        s = (s - s.mean(axis=(1, 2), keepdims=True)) / (s.std(axis=(1, 2), keepdims=True) + 1e-6)
        model = UCast(
            preset.model,
            len(variables),
            norm.mean,
            norm.std,
            norm.res_std,
            s,
            ds.lat.values,
            ds.lon.values,
            forcings.shape[-1],
            variables,
        )
    z = model.normalise(torch.as_tensor(x)).numpy()
    _, history = train_stage(
        model,
        z,
        cfg,
        forcings=forcings,
        seed=args.seed,
        device=device,
        checkpoint=args.checkpoint,
        resume=args.resume,
        progress=True,
    )
    if int(__import__("os").environ.get("RANK", "0")) == 0:
        print(f"stage {args.stage}: {cfg.steps} steps, last loss {history[-1]['loss']:.4f}; wrote {args.checkpoint}")
    return 0


def _forecast(args) -> int:
    from icml26._util import resolve_device
    from icml26.ucast.data import load_wb2
    from icml26.ucast.forecast import forecast
    from icml26.ucast.train import load_checkpoint

    model = load_checkpoint(args.checkpoint, resolve_device(args.device))
    init = load_wb2(args.init, model.variables)
    if "trajectory" in init.dims:
        init = init.isel(trajectory=args.trajectory)
    if args.time is not None:
        init = init.isel(time=slice(None, args.time + 1))
    fc = forecast(model, init, members=args.members, steps=args.steps, progress=True)
    fc.to_netcdf(args.out)
    print(f"wrote {args.out}: {dict(fc.sizes)}")
    return 0


def _evaluate(args) -> int:
    import xarray as xr

    from icml26.ucast.data import load_wb2
    from icml26.ucast.evaluate import evaluate_forecast

    if not Path(args.forecast).is_file():
        raise OSError(f"no forecast file {args.forecast}")
    if not Path(args.truth).is_file():
        raise OSError(f"no truth file {args.truth}")
    with xr.open_dataset(args.forecast) as f:
        fc = f.load()
    # read the truth like --init (lat/lon names and order, levels split into z_500-style names, number)
    truth = load_wb2(args.truth, [v for v in fc.data_vars if "member" in fc[v].dims])
    if "trajectory" in truth.dims:
        truth = truth.isel(trajectory=args.trajectory)
    scores = evaluate_forecast(fc, truth)
    if args.json:
        payload = {"variable": scores.variable.values.tolist(), "lead_time": [str(v) for v in scores.lead_time.values]}
        payload.update({k: v.values.tolist() for k, v in scores.data_vars.items()})
        Path(args.json).write_text(json.dumps(payload, indent=1))
        print(f"wrote {args.json}")
    else:
        print(f"{'variable':>12} {'lead_time':>12} " + " ".join(f"{k:>13}" for k in scores.data_vars))
        for v in scores.variable.values:
            for lead in scores.lead_time.values:
                row = scores.sel(variable=v, lead_time=lead)
                print(f"{v:>12} {lead!s:>12} " + " ".join(f"{float(row[k]):13.4g}" for k in scores.data_vars))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="icml26 ucast", description="U-Cast probabilistic weather forecaster")
    parser.add_argument("-v", "--verbose", action="store_true", help="log training progress")
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser("simulate", help="simulate Kolmogorov-flow trajectories (the ERA5 stand-in) to NetCDF")
    p.add_argument("--out", required=True)
    p.add_argument("--preset", default="small", choices=["smoke", "small", "paper"])
    p.add_argument("--trajectories", type=int, default=None)
    p.add_argument("--frames", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_simulate)

    p = sub.add_parser("train", help="train stage 1 (det, MAE) or stage 2 (prob, fair CRPS); torchrun for DDP")
    p.add_argument("--stage", choices=["det", "prob"], required=True)
    p.add_argument("--data", required=True, help="NetCDF/Zarr with (trajectory?, time, lat, lon) variables")
    p.add_argument("--variables", nargs="*", default=None)
    p.add_argument("--preset", default="small", choices=["smoke", "small", "paper"])
    p.add_argument("--checkpoint", required=True, help="where to write the checkpoint")
    p.add_argument("--init", default=None, help="checkpoint to warm-start from (stage 1 for stage 2)")
    p.add_argument("--resume", default=None, help="checkpoint of this stage to continue from")
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto")
    p.set_defaults(func=_train)

    p = sub.add_parser("forecast", help="MC-dropout ensemble forecast from the last two times of --init")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--trajectory", type=int, default=0, help="which trajectory/member of --init to start from")
    p.add_argument("--time", type=int, default=None, help="index of the initial time (default: the last)")
    p.add_argument("--members", type=int, default=10)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="auto")
    p.set_defaults(func=_forecast)

    p = sub.add_parser("evaluate", help="CRPS, RMSE (both conventions), SSR per lead time against a truth file")
    p.add_argument("forecast")
    p.add_argument("--truth", required=True)
    p.add_argument("--trajectory", type=int, default=0)
    p.add_argument("--json", default=None)
    p.set_defaults(func=_evaluate)

    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    return args.func(args)


if __name__ == "__main__":  # torchrun --standalone --nproc_per_node 2 -m icml26.ucast.cli train ...
    raise SystemExit(main())
