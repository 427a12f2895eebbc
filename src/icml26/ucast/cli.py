"""``icml26 ucast simulate | train | forecast | evaluate``: thin verbs over the library."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_int, nonnegative_int, seed_int
from icml26._util.device import add_device_arguments, apply_device_arguments
from icml26._util.io import atomic_output, check_json_output, check_output_path, write_json

#: Simulated trajectory frames in all (trajectories x frames): each costs ~25 spectral solver steps.
MAX_SIM_FRAMES = 200_000
#: Forecast values in all (members x steps x channels x lat x lon), float32: about 2 GB.
MAX_FORECAST_VALUES = 500_000_000
_STEPS = bounded_int(1, 10_000_000, what="training steps")
PRESETS = ["smoke", "small", "paper"]
_DATA_PRESET_HELP = (
    "size preset (default: 'era5', the library's preset for real fields, when the data have datetime times; "
    "'small' for the simulator's)"
)


def _distinct(output: str | None, flag: str, **inputs: str | None) -> None:
    """Refuse an output path that names one of the verb's inputs (it would be destroyed)."""
    if output is None:
        return
    out = Path(output).resolve()
    for what, path in inputs.items():
        if path is not None and Path(path).resolve() == out:
            raise ValueError(f"{flag} {output} is the --{what.replace('_', '-')} input; it would be overwritten")


#: ``--data era5-uk`` names the ERA5 2 m temperature sample shipped with icml26 (data/ATTRIBUTION.md).
SHIPPED = {"era5-uk": "ERA5_UK"}


def _data_path(name: str) -> str:
    from icml26.ucast import data

    return str(getattr(data, SHIPPED[name])) if name in SHIPPED else name


def _data_preset(name: str | None, ds) -> str:
    """The preset asked for, or the default for these data: ``era5`` for real (datetime) times, else ``small``."""
    if name is not None:
        return name
    return "era5" if np.issubdtype(np.asarray(ds.time.values).dtype, np.datetime64) else "small"


def _simulate(args) -> int:
    from icml26.ucast.config import get_preset
    from icml26.ucast.data import simulate_dataset

    check_output_path(args.out)
    d = get_preset(args.preset).data
    n_traj, frames = args.trajectories or d.n_train, args.frames or d.frames
    if n_traj * frames > MAX_SIM_FRAMES:
        raise ValueError(
            f"{n_traj} trajectories x {frames} frames = {n_traj * frames:,} frames; the simulator's limit is "
            f"{MAX_SIM_FRAMES:,} (each frame costs ~25 solver steps)"
        )
    ds = simulate_dataset(
        n_traj,
        frames,
        n_grid=d.n_grid,
        solver_n=d.solver_n,
        every=d.every,
        spin_up=d.spin_up,
        noise=d.noise,
        dt=d.dt,
        seed=args.seed,
    )
    _write_netcdf(ds, args.out)
    print(f"wrote {args.out}: {dict(ds.sizes)}")
    return 0


def _write_netcdf(ds, path: str) -> None:
    with atomic_output(path) as tmp:
        ds.to_netcdf(tmp)


def _pick_trajectory(ds, index: int | None, path: str):
    """Select one trajectory (checked against the file); None keeps a file without a trajectory dimension."""
    if "trajectory" not in ds.dims:
        if index not in (None, 0):
            raise ValueError(f"{path} has no trajectory dimension; --trajectory {index} does not apply")
        return ds
    n = ds.sizes["trajectory"]
    if index is None:
        raise ValueError(f"{path} holds {n} trajectories: pass --trajectory (0 to {n - 1})")
    if not 0 <= index < n:
        raise ValueError(f"--trajectory {index} but {path} holds trajectories 0 to {n - 1}")
    return ds.isel(trajectory=index)


def _load_training_data(path: str, variables: list[str] | None):
    """The data set opened lazily (each rank of a DDP run reads only its own windows), the variables, the
    static fields (read) and the time forcings (T, F)."""
    from icml26.ucast.data import load_wb2, time_forcings

    ds = load_wb2(path, variables, lazy=True)
    static_names = [v for v in ds.data_vars if "time" not in ds[v].dims]
    if variables is None:
        variables = [v for v in ds.data_vars if v not in static_names]
    if not variables:
        raise ValueError(f"{path}: no variable with a time dimension to train on")
    static = (
        np.stack([ds[v].values for v in static_names])
        if static_names
        else np.zeros((0, ds.sizes["lat"], ds.sizes["lon"]))
    )
    return ds, variables, static, time_forcings(ds.time.values)


#: Normalisation statistics of a new model come from at most this many trajectories x times (read once).
NORM_TRAJ, NORM_TIMES = 8, 200


def _train(args) -> int:
    import os
    from dataclasses import replace

    from icml26.ucast.config import get_preset
    from icml26.ucast.data import Normalizer, dataset_to_array
    from icml26.ucast.model import UCast
    from icml26.ucast.train import WindowDataset, load_checkpoint, train_stage

    args.data = _data_path(args.data)
    check_output_path(args.out)
    check_json_output(args.json)
    _distinct(args.out, "--out", data=args.data, init=args.init)
    device = apply_device_arguments(args)
    ds, variables, static, forcings = _load_training_data(args.data, args.variables)
    preset = get_preset(_data_preset(args.preset, ds))
    cfg = preset.det if args.stage == "det" else preset.prob
    if args.steps:
        cfg = replace(cfg, steps=args.steps)
    if ds.sizes["time"] < 3:
        raise ValueError(f"{args.data}: {ds.sizes['time']} times; training needs at least 3 per trajectory")
    grid = (ds.sizes["lat"], ds.sizes["lon"])
    if args.init is not None:
        model = load_checkpoint(args.init)
        if model.variables != variables or model.grid != grid:
            raise ValueError(
                f"--init checkpoint has variables {model.variables} on grid {model.grid}; the data "
                f"have {variables} on {grid}"
            )
    elif args.stage == "prob" and args.resume is None:
        raise ValueError("stage 'prob' warm-starts from a stage-1 checkpoint: pass --init")
    else:
        sub = ds.isel(trajectory=slice(0, NORM_TRAJ)) if "trajectory" in ds.dims else ds
        x = dataset_to_array(sub.isel(time=slice(0, NORM_TIMES)), variables)  # (n, t, C, H, W), a sample
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{args.data}: the training data contain NaN or inf")
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
    data = WindowDataset.from_xarray(ds, variables, model, forcings)
    _, history = train_stage(
        model,
        data,
        cfg,
        seed=args.seed,
        device=device,
        checkpoint=args.out,
        resume=args.resume,
        progress=True,
    )
    if int(os.environ.get("RANK", "0")) == 0:
        print(f"stage {args.stage}: {cfg.steps} steps, last loss {history[-1]['loss']:.4f}; wrote {args.out}")
        write_json(args.json, {"stage": args.stage, "steps": cfg.steps, "history": history})
    return 0


def _forecast(args) -> int:
    from icml26.ucast.data import load_wb2
    from icml26.ucast.forecast import forecast
    from icml26.ucast.train import load_checkpoint

    args.init = _data_path(args.init)
    check_output_path(args.out)
    _distinct(args.out, "--out", init=args.init, checkpoint=args.checkpoint)
    model = load_checkpoint(args.checkpoint, apply_device_arguments(args))
    values = args.members * args.steps * len(model.variables) * model.grid[0] * model.grid[1]
    if values > MAX_FORECAST_VALUES:
        raise ValueError(
            f"--members {args.members} x --steps {args.steps} on a {model.grid} grid = {values:.3g} values "
            f"(limit {MAX_FORECAST_VALUES:.0e}, about {MAX_FORECAST_VALUES * 4 / 2**30:.0f} GiB)"
        )
    init = load_wb2(args.init, model.variables)
    trajectory = args.trajectory if "trajectory" in init.dims else None
    init = _pick_trajectory(init, args.trajectory, args.init)
    n_times = init.sizes["time"]
    if args.time is not None:
        if not 1 <= args.time < n_times:
            raise ValueError(
                f"--time {args.time} but {args.init} has times 0 to {n_times - 1}; the forecast starts from "
                f"times t-1 and t, so t must be in [1, {n_times - 1}]"
            )
        init = init.isel(time=slice(None, args.time + 1))
    fc = forecast(model, init, members=args.members, steps=args.steps, progress=True, seed=args.seed)
    # say where the forecast came from, so evaluate can score it against the same trajectory
    fc.attrs["init_file"] = str(Path(args.init).resolve())
    fc.attrs["init_trajectory"] = -1 if trajectory is None else int(trajectory)
    fc.attrs["init_time_index"] = int(n_times - 1 if args.time is None else args.time)
    _write_netcdf(fc, args.out)
    print(f"wrote {args.out}: {dict(fc.sizes)}")
    return 0


def _evaluate(args) -> int:
    from icml26.ucast.data import load_wb2
    from icml26.ucast.evaluate import evaluate_forecast

    args.truth = _data_path(args.truth)
    check_json_output(args.json)
    for what, path in (("forecast", args.forecast), ("truth", args.truth)):
        if not Path(path).exists():
            raise FileNotFoundError(f"no {what} file {path}")
    if Path(args.truth).is_dir():
        raise IsADirectoryError(f"truth file {args.truth} is a directory")
    with _open_forecast(args.forecast) as fc:  # lazy: evaluate_forecast reads one initial time at a time
        variables = [v for v in fc.data_vars if "number" in fc[v].dims or "member" in fc[v].dims]
        if not variables:
            raise ValueError(f"{args.forecast} is not a forecast (no variables with a number/member dimension)")
        # read the truth like --init (lat/lon names and order, levels split into z_500-style names, number),
        # lazily: evaluate_forecast matches WB2 long and short names and reads only the valid times it needs
        truth = load_wb2(args.truth, lazy=True)
        source = fc.attrs.get("init_trajectory")
        trajectory = args.trajectory
        if source is not None and int(source) >= 0:
            if trajectory is not None and trajectory != int(source):
                raise ValueError(
                    f"{args.forecast} was started from trajectory {int(source)}, not --trajectory {trajectory}"
                )
            trajectory = int(source)
        if "trajectory" in truth.dims:
            truth = _pick_trajectory(truth, trajectory, args.truth)
        try:
            scores = evaluate_forecast(fc, truth)
        except ValueError as exc:
            raise ValueError(f"{args.forecast}: {exc}") from None
    leads = [str(v) for v in scores.prediction_timedelta.values]
    if args.json:
        payload = {"variable": scores.variable.values.tolist(), "prediction_timedelta": leads}
        payload.update({k: v.values.tolist() for k, v in scores.data_vars.items()})
        write_json(args.json, payload)
        if args.json != "-":
            print(f"wrote {args.json}")
    else:
        print(f"{'variable':>12} {'lead':>20} " + " ".join(f"{k:>13}" for k in scores.data_vars))
        for v in scores.variable.values:
            for j, lead in enumerate(leads):
                row = scores.sel(variable=v).isel(prediction_timedelta=j)
                print(f"{v:>12} {lead:>20} " + " ".join(f"{float(row[k]):13.4g}" for k in scores.data_vars))
    return 0


def _experiment(args) -> int:
    from icml26.ucast.experiment import run_on_data

    args.data = _data_path(args.data)
    check_json_output(args.json)
    from icml26.ucast.data import load_wb2
    from icml26.ucast.experiment import run_time_split

    device = apply_device_arguments(args)
    ds = load_wb2(args.data, args.variables)
    if args.train_until is None:
        for flag in ("every", "lead_steps", "det_steps", "prob_steps"):
            if getattr(args, flag) is not None:
                raise ValueError(f"--{flag.replace('_', '-')} applies to a time split: pass --train-until too")
        res = run_on_data(ds, _data_preset(args.preset, ds), seed=args.seed, variables=args.variables, device=device)
        units = "normalised units"
    else:
        until = _parse_time(args.train_until, ds)
        res = run_time_split(
            ds,
            until,
            every=args.every or 6,
            preset=_data_preset(args.preset, ds),
            seed=args.seed,
            steps=args.lead_steps,
            det_steps=args.det_steps,
            prob_steps=args.prob_steps,
            variables=args.variables,
            device=device,
        )
        res["leads"] = res["leads_hours"]
        units = f"the variables' units ({', '.join(u or '?' for u in res['units'])})"
    write_json(args.json, res)
    print(f"{args.data}: {', '.join(res['variables'])}; split {res['split']}; {res['n_test_inits']} initial conditions")
    print(f"area-weighted scores in {units}, mean over variables (climatology: training-set mean)")
    print(f"{'model':>19} {'lead':>5} {'crps':>9} {'rmse':>9} {'ssr':>7}")
    for name, sc in res["scores"].items():
        for j, lead in enumerate(res["leads"]):
            ssr = f"{sc['ssr'][j]:7.3f}" if "ssr" in sc else f"{'-':>7}"
            print(f"{name:>19} {lead:>5} {sc['crps'][j]:9.4f} {sc['rmse'][j]:9.4f} {ssr}")
    if args.json not in (None, "-"):
        print(f"wrote {args.json}")
    return 0


def _parse_time(text: str, ds):
    """``--train-until`` as a datetime strictly inside the data's time range."""
    try:
        until = np.datetime64(text, "ns")
    except ValueError:
        raise ValueError(f"--train-until {text!r} is not a date/time (e.g. 2019-03-22 or 2019-03-22T00)") from None
    times = np.asarray(ds.time.values)
    if not np.issubdtype(times.dtype, np.datetime64):
        raise ValueError("--train-until needs data with datetime times")
    if not times[0] < until <= times[-1]:
        raise ValueError(f"--train-until {text} lies outside the data's times ({times[0]} to {times[-1]})")
    return until


def _open_forecast(path: str):
    """Open a NetCDF file or a Zarr store lazily, with one line naming the file for every way that can fail."""
    import xarray as xr

    try:
        if Path(path).is_dir():
            return xr.open_zarr(path)
        return xr.open_dataset(path)
    except Exception as exc:  # netCDF / HDF5 / Zarr / decoding errors
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        kind = "Zarr store" if Path(path).is_dir() else "NetCDF forecast"
        raise ValueError(f"cannot read {path} as a {kind} ({type(exc).__name__}: {first})") from None


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 ucast", description="U-Cast probabilistic weather forecaster")
    parser.add_argument("-v", "--verbose", action="store_true", help="log training progress")
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser(
        "simulate",
        help="simulate Kolmogorov-flow trajectories (the ERA5 stand-in) to NetCDF",
        description="Reads nothing; simulates Kolmogorov-flow trajectories (sizes from --preset) and writes them "
        "as NetCDF (--out), printing its dimensions. Example: icml26 ucast simulate --preset smoke "
        "--trajectories 4 --out flow.nc",
    )
    p.add_argument("--out", required=True, help="NetCDF file to write")
    p.add_argument("--preset", default="small", choices=PRESETS, help="size preset")
    p.add_argument(
        "--trajectories",
        type=bounded_int(1, MAX_SIM_FRAMES, what="simulator limit"),
        default=None,
        help="trajectories (default: the preset's)",
    )
    p.add_argument(
        "--frames",
        type=bounded_int(2, MAX_SIM_FRAMES, what="simulator limit"),
        default=None,
        help="frames per trajectory (default: the preset's)",
    )
    p.add_argument("--seed", type=seed_int, default=0, help="random seed")
    p.set_defaults(func=_simulate)

    p = sub.add_parser(
        "train",
        help="train stage 1 (det, MAE) or stage 2 (prob, fair CRPS); torchrun for DDP",
        description="Reads gridded data (--data; stage 'prob' also the stage-1 checkpoint, --init), trains U-Cast "
        "and writes its checkpoint (--out), printing the last loss. Example: icml26 ucast train --stage det "
        "--data flow.nc --preset smoke --out det.pt",
    )
    p.add_argument("--stage", choices=["det", "prob"], required=True, help="training stage")
    p.add_argument(
        "--data", required=True, help="NetCDF/Zarr/GRIB with (trajectory?, time, lat, lon) variables, or 'era5-uk'"
    )
    p.add_argument("--variables", nargs="*", default=None, help="variables to model (default: all with time)")
    p.add_argument("--preset", default=None, choices=PRESETS, help=_DATA_PRESET_HELP)
    p.add_argument("--out", "--checkpoint", required=True, deprecated=("--checkpoint",), help="checkpoint to write")
    p.add_argument("--init", default=None, help="checkpoint to warm-start from (stage 1 for stage 2)")
    p.add_argument("--resume", default=None, help="checkpoint of this stage to continue from")
    p.add_argument("--steps", type=_STEPS, default=None, help="training steps (default: the preset's)")
    p.add_argument("--seed", type=seed_int, default=0, help="random seed")
    add_json_argument(p, "the loss history")
    add_device_arguments(p)
    p.set_defaults(func=_train)

    p = sub.add_parser(
        "forecast",
        help="MC-dropout ensemble forecast from the last two times of --init",
        description="Reads a checkpoint and the initial condition (times t-1 and t of --init), and writes an "
        "MC-dropout ensemble forecast as NetCDF (--out). Example: icml26 ucast forecast --checkpoint prob.pt "
        "--init flow.nc --trajectory 0 --members 10 --steps 30 --out fc.nc",
    )
    p.add_argument("--checkpoint", required=True, help="checkpoint from 'train'")
    p.add_argument("--init", required=True, help="NetCDF/Zarr/GRIB holding the initial condition, or 'era5-uk'")
    p.add_argument(
        "--trajectory", type=nonnegative_int, default=0, help="which trajectory/member of --init to start from"
    )
    p.add_argument(
        "--time",
        type=nonnegative_int,
        default=None,
        help="index t of the initial time, 1 <= t < number of times (default: the last)",
    )
    p.add_argument(
        "--members", type=bounded_int(1, 10_000, what="ensemble members"), default=10, help="ensemble members"
    )
    p.add_argument("--steps", type=bounded_int(1, 100_000, what="forecast steps"), default=30, help="lead times")
    p.add_argument("--out", required=True, help="NetCDF forecast to write")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the dropout masks (same seed, same ensemble)")
    add_device_arguments(p)
    p.set_defaults(func=_forecast)

    p = sub.add_parser(
        "evaluate",
        help="CRPS, RMSE (both conventions), SSR per lead time against a truth file",
        description="Reads a forecast of 'forecast' and the observed trajectories (--truth), and prints CRPS, "
        "RMSE and spread-skill ratio per variable and lead time, or writes them as JSON (--json). Example: "
        "icml26 ucast evaluate fc.nc --truth flow.nc --json scores.json",
    )
    p.add_argument("forecast", help="NetCDF forecast from 'forecast'")
    p.add_argument("--truth", required=True, help="NetCDF/Zarr with the observed trajectories")
    p.add_argument(
        "--trajectory",
        type=nonnegative_int,
        default=None,
        help="trajectory of --truth to score against (default: the one the forecast was started from)",
    )
    add_json_argument(p, "the scores")
    p.set_defaults(func=_evaluate)

    p = sub.add_parser(
        "experiment",
        help="train both stages on your data (e.g. ERA5 in WB2 NetCDF/Zarr) and score held-out forecasts "
        "against stage-1 MC dropout, persistence and climatology",
        description="Reads gridded data (--data), trains both stages on the training part, forecasts the held-out "
        "part, and prints CRPS, RMSE and SSR per lead time for U-Cast, stage-1 MC dropout, persistence and "
        "climatology (also as JSON, --json). Example: icml26 ucast experiment --data era5-uk --train-until "
        "2019-03-22 --json era5.json",
    )
    p.add_argument(
        "--data",
        required=True,
        help="NetCDF/Zarr/GRIB with (number|trajectory?, time, lat, lon) variables; 'era5-uk' reads the ERA5 2 m "
        "temperature sample shipped with icml26 (hourly, UK, March 2019)",
    )
    p.add_argument("--variables", nargs="*", default=None, help="variables to model (default: all with time)")
    p.add_argument("--preset", default=None, choices=PRESETS, help=_DATA_PRESET_HELP)
    p.add_argument(
        "--train-until",
        default=None,
        help="split one hourly series in time: train before this date/time, forecast from it (e.g. 2019-03-22)",
    )
    p.add_argument(
        "--every", type=bounded_int(1, 240, what="hours"), default=None, help="model step in hours (default 6)"
    )
    p.add_argument("--lead-steps", type=bounded_int(1, 1000, what="lead steps"), default=None, help="forecast steps")
    p.add_argument("--det-steps", type=_STEPS, default=None, help="stage-1 training steps (default: the preset's)")
    p.add_argument("--prob-steps", type=_STEPS, default=None, help="stage-2 training steps (default: the preset's)")
    p.add_argument("--seed", type=seed_int, default=0, help="random seed")
    add_device_arguments(p)
    add_json_argument(p, "the scores")
    p.set_defaults(func=_experiment)

    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    return args.func(args)


if __name__ == "__main__":  # torchrun --standalone --nproc_per_node 2 -m icml26.ucast.cli train ...
    raise SystemExit(main())
