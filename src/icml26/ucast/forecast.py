"""Ensemble inference: MC-dropout members rolled out autoregressively, returned as an xarray.Dataset.

All members start from the same initial condition and diverge through their own dropout masks and their own
autoregressive feedback (the paper's inference). Members are batched: one network evaluation per
member-step, ``members * steps`` in all.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
import xarray as xr

from icml26.ucast.data import time_forcings, wb2_name
from icml26.ucast.model import UCast, set_mc_dropout
from icml26.ucast.train import _progress

logger = logging.getLogger(__name__)

__all__ = ["forecast", "rollout"]


@torch.no_grad()
def rollout(
    model: UCast,
    z_prev: torch.Tensor,
    z_cur: torch.Tensor,
    members: int,
    steps: int,
    *,
    dropout: bool = True,
    forcings: torch.Tensor | None = None,
    init_noise: float = 0.0,
    member_batch: int | None = None,
    progress: bool = False,
) -> torch.Tensor:
    """Autoregressive ensemble rollout in normalised space.

    Parameters
    ----------
    z_prev, z_cur : tensor of shape (N, C, H, W)
        The two normalised initial frames of N initial conditions.
    members, steps : int
    dropout : bool
        MC dropout on (U-Cast) or off (a deterministic model: all members identical unless ``init_noise``).
    forcings : tensor of shape (steps, N, n_forcings), optional
        Forcings at the *input* time of each step.
    init_noise : float
        Std of Gaussian perturbations added to both initial frames of each member (the
        initial-condition-perturbed baseline); 0 for U-Cast.
    member_batch : int, optional
        Members evaluated per forward pass (default: all).

    Returns
    -------
    tensor of shape (members, steps, N, C, H, W)
        Normalised forecasts at leads 1..steps, on the model's device.
    """
    if members < 1 or steps < 1:
        raise ValueError("members and steps must be >= 1")
    n = z_cur.shape[0]
    set_mc_dropout(model, dropout)
    device = next(model.parameters()).device
    chunk = member_batch or members
    out = torch.empty((members, steps, *z_cur.shape), dtype=z_cur.dtype, device=device)
    for m0 in range(0, members, chunk):
        k = min(chunk, members - m0)
        a = z_prev.to(device).repeat(k, 1, 1, 1)  # (k*N, C, H, W), member-major
        b = z_cur.to(device).repeat(k, 1, 1, 1)
        if init_noise > 0:
            a = a + init_noise * torch.randn_like(a)
            b = b + init_noise * torch.randn_like(b)
        for s in _progress(range(steps), steps, f"rollout, members {m0}-{m0 + k - 1}", progress):
            f = None if forcings is None else forcings[s].to(device).repeat(k, 1)
            a, b = b, model.step_normalised(a, b, f)
            out[m0 : m0 + k, s] = b.view(k, n, *b.shape[1:])
    model.eval()
    return out


def _check_init(model: UCast, init: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Validate an initial-condition Dataset; return (fields (2, C, H, W), times (2,))."""
    missing = [v for v in model.variables if v not in init]
    if missing:
        raise ValueError(f"initial condition lacks variables {missing}; the checkpoint needs {model.variables}")
    for dim in ("time", "lat", "lon"):
        if dim not in init.dims:
            raise ValueError(f"initial condition needs a {dim!r} dimension (has {tuple(init.dims)})")
    if init.sizes["time"] < 2:
        raise ValueError("the initial condition needs at least 2 time steps (t - dt and t)")
    grid = (init.sizes["lat"], init.sizes["lon"])
    if grid != model.grid:
        raise ValueError(f"initial-condition grid {grid} does not match the checkpoint's grid {model.grid}")
    if not (np.allclose(init.lat.values, model.lat.numpy()) and np.allclose(init.lon.values, model.lon.numpy())):
        raise ValueError("initial-condition lat/lon coordinates differ from the checkpoint's grid")
    fields = []
    for v in model.variables:
        da = init[v].isel(time=slice(-2, None)).transpose("time", "lat", "lon")
        vals = da.values.astype(np.float32)
        bad = np.argwhere(~np.isfinite(vals))
        if bad.size:
            t, i, j = bad[0]
            raise ValueError(
                f"initial condition variable {v!r} has {len(bad)} NaN/inf values, first at "
                f"time={da.time.values[t]}, lat={float(da.lat.values[i]):.2f}, lon={float(da.lon.values[j]):.2f}"
            )
        fields.append(vals)
    return np.stack(fields, axis=1), init.time.values[-2:]


def wb2_variables(names: list[str], x: np.ndarray) -> tuple[dict, list[int]]:
    """WeatherBench2 variables from model channels: ``x`` (M, S, C, H, W) with ``names`` (C,).

    Returns ``{long name: (dims, array)}`` and the sorted pressure levels (empty when no channel has one).
    A variable with levels gets dims (number, prediction_timedelta, level, latitude, longitude), its levels in
    the attribute ``levels`` and NaN at the shared ``level`` values it lacks (``z_500`` beside ``t_850``).
    """
    parsed = [wb2_name(v) for v in names]
    if len(set(parsed)) != len(parsed):
        raise ValueError(f"variables {names} map to the same WeatherBench2 name twice")
    levels = sorted({lev for _, lev in parsed if lev is not None})
    dims = ("number", "prediction_timedelta", "latitude", "longitude")
    data: dict = {}
    for i, (long, lev) in enumerate(parsed):
        if lev is None:
            if long in data:
                raise ValueError(f"{long!r} appears both with and without a pressure level")
            data[long] = (dims, x[:, :, i])
            continue
        if long not in data:
            shape = (*x.shape[:2], len(levels), *x.shape[3:])
            data[long] = ((*dims[:2], "level", *dims[2:]), np.full(shape, np.nan, x.dtype), {"levels": []})
        elif len(data[long]) == 2:
            raise ValueError(f"{long!r} appears both with and without a pressure level")
        data[long][1][:, :, levels.index(lev)] = x[:, :, i]
        data[long][2]["levels"].append(lev)  # the levels this variable has (the others are NaN)
    return data, levels


def forecast(
    model: UCast,
    init: xr.Dataset,
    members: int = 10,
    steps: int = 30,
    *,
    step: np.timedelta64 | float | None = None,
    member_batch: int | None = None,
    progress: bool = False,
    seed: int | None = None,
) -> xr.Dataset:
    """MC-dropout ensemble forecast from the last two frames of ``init``.

    Parameters
    ----------
    model : UCast
    init : xarray.Dataset
        The model's variables with dims (time, lat, lon), at least 2 times, on the model's grid.
    members, steps : int
    step : timedelta64 or float, optional
        Model time step (default: the spacing of the last two ``init`` times).
    seed : int, optional
        Seed of the dropout masks: the same seed gives the same ensemble (the global torch RNG is left as it
        was). Without it the masks come from the global torch RNG.

    Returns
    -------
    xarray.Dataset
        WeatherBench2 layout: each variable with dims (number, prediction_timedelta, latitude, longitude),
        coordinates ``time`` (the initial time), ``prediction_timedelta`` (multiples of ``step``),
        ``valid_time`` = time + prediction_timedelta, ``latitude``, ``longitude``. Variables get WB2's long
        names (``2m_temperature`` for ``t2m``); the pressure levels of a variable (``z_500``, ``z_850``) become
        one variable with a ``level`` dimension, (number, prediction_timedelta, level, latitude, longitude).
        Names WB2 lacks (the simulator's ``vorticity``) are kept.

    Raises
    ------
    ValueError
        Missing variables, a grid other than the checkpoint's, NaNs (naming variable and location).
    """
    if not isinstance(model, UCast):
        raise TypeError(f"model must be a UCast (icml26.ucast.train.load_checkpoint(path)); got {type(model).__name__}")
    if not isinstance(init, xr.Dataset):
        raise TypeError(f"init must be an xarray.Dataset (icml26.ucast.data.load_wb2(path)); got {type(init).__name__}")
    fields, times = _check_init(model, init)
    x = torch.as_tensor(fields)  # (2, C, H, W)
    z = model.normalise(x)
    dt = step if step is not None else times[1] - times[0]
    leads = np.arange(1, steps + 1) * dt
    forcings = None
    if model.n_forcings:
        valid_in = times[-1] + np.arange(steps) * dt  # input time of each step
        forcings = torch.as_tensor(time_forcings(valid_in))[:, None, :]  # (steps, 1, F)
    device = next(model.parameters()).device
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else [], enabled=seed is not None):
        if seed is not None:
            torch.manual_seed(seed)
        z_fc = rollout(
            model, z[:1], z[1:], members, steps, forcings=forcings, member_batch=member_batch, progress=progress
        )
    x_fc = model.denormalise(z_fc[:, :, 0]).cpu().numpy()  # (M, S, C, H, W)
    data, levels = wb2_variables(model.variables, x_fc)
    return xr.Dataset(
        data,
        coords=({"level": levels} if levels else {})
        | {
            "number": np.arange(members),
            "prediction_timedelta": leads,
            "time": times[-1],
            "valid_time": ("prediction_timedelta", times[-1] + leads),
            "latitude": init.lat.values,
            "longitude": init.lon.values,
        },
        attrs={"model": "U-Cast (icml26.ucast)", "stochasticity": "MC dropout"}
        | ({} if seed is None else {"seed": int(seed)}),
    )
