"""Score xarray ensemble forecasts against a truth Dataset (WeatherBench2-style, per lead time and variable).

Forecasts use WeatherBench2's names: dims ``number`` (member), ``prediction_timedelta``, ``latitude``,
``longitude``, and ``time`` for the initial time (a dimension when the file holds several forecasts).
Files written before icml26 adopted them (``member``, ``lead_time``, ``init_time``, ``lat``, ``lon``) are
read too. Scoring walks the initial times one by one, so an archive opened lazily with
``xarray.open_dataset`` / ``open_zarr`` is never loaded whole: memory is one initial time of one variable.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from icml26.ucast.data import latitude_weights, wb2_name
from icml26.ucast.metrics import ensemble_scores

__all__ = ["evaluate_forecast", "split_levels", "to_wb2_names"]

#: names icml26 forecasts had before WeatherBench2's, and the truth's lat/lon
_LEGACY = {"member": "number", "lead_time": "prediction_timedelta", "init_time": "time", "lat": "latitude",
           "lon": "longitude"}  # fmt: skip


def to_wb2_names(ds: xr.Dataset) -> xr.Dataset:
    """Rename legacy icml26 dims/coords (``member``, ``lead_time``, ``init_time``, ``lat``, ``lon``) to WB2's."""
    present = {old: new for old, new in _LEGACY.items() if old in ds.variables or old in ds.dims}
    clash = [new for new in present.values() if new in ds.variables or new in ds.dims]
    if clash:
        raise ValueError(f"the dataset has both legacy and WeatherBench2 names for {clash}")
    return ds.rename(present)


def split_levels(ds: xr.Dataset) -> xr.Dataset:
    """One variable per (WB2 long name, level): ``geopotential`` with ``level`` 500 -> ``geopotential_500``.

    Reads both spellings: long names with a ``level`` (or ``isobaricInhPa``) dimension, as icml26 writes
    forecasts and WeatherBench2 stores data, and the short split names of earlier icml26 forecasts and of
    :func:`icml26.ucast.data.load_wb2` (``z_500``, ``t2m``). A variable's ``levels`` attribute, when present,
    names the levels it has (a forecast of ``z_500`` and ``t_850`` shares one ``level`` coordinate). Lazy
    arrays stay lazy.
    """
    ds = ds.rename({k: "level" for k in ("isobaricInhPa", "pressure_level") if k in ds.dims})
    out = {}
    for name, da in ds.data_vars.items():
        long, level = wb2_name(str(name))
        if "level" in da.dims:
            if level is not None:
                raise ValueError(f"variable {name!r} has both a level suffix and a level dimension")
            have = [int(v) for v in np.atleast_1d(da.attrs.get("levels", da["level"].values))]
            parts = {f"{long}_{lev}": da.sel(level=lev).drop_vars("level") for lev in have}
        else:
            parts = {long if level is None else f"{long}_{level}": da}
        for key, part in parts.items():
            if key in out:
                raise ValueError(f"the dataset holds {key!r} twice (under two spellings)")
            out[key] = part
    return xr.Dataset(out, attrs=ds.attrs)


def evaluate_forecast(fc: xr.Dataset, truth: xr.Dataset) -> xr.Dataset:
    """CRPS (fair), ensemble-mean RMSE (both conventions), spread and SSR per lead time and variable.

    Parameters
    ----------
    fc : xarray.Dataset
        WB2 long names with a ``level`` dimension, or the short split names (``z_500``) of earlier files. As
        returned by :func:`icml26.ucast.forecast` or stored by WeatherBench2: variables (number,
        prediction_timedelta, latitude, longitude), optionally with a ``time`` dimension (several forecasts),
        and ``valid_time`` = time + prediction_timedelta (computed when absent). May be lazy.
    truth : xarray.Dataset
        The same variables with dims (time, latitude, longitude) (or lat, lon), covering every valid time.

    Returns
    -------
    xarray.Dataset
        Variables ``crps``, ``rmse`` (WB2: mean MSE over inits, then sqrt), ``rmse_per_init``, ``spread``,
        ``ssr`` with dims (variable, prediction_timedelta); ``variable`` holds WB2 long names with the level
        appended (``geopotential_500``, ``2m_temperature``), whichever spelling the inputs used.

    Raises
    ------
    ValueError
        Different latitude/longitude coordinates, missing variables or valid times, fewer than 2 members,
        NaN/inf in the forecast (naming the variable and initial time).
    """
    for name, ds in (("fc", fc), ("truth", truth)):
        if not isinstance(ds, xr.Dataset):
            raise TypeError(f"{name} must be an xarray.Dataset; got {type(ds).__name__}")
    fc, truth = split_levels(to_wb2_names(fc)), split_levels(to_wb2_names(truth))
    for dim in ("latitude", "longitude"):
        if dim not in fc.dims:
            raise ValueError(f"the forecast has no {dim} dimension")
        if dim not in truth.dims or truth.sizes[dim] != fc.sizes[dim] or not np.allclose(truth[dim], fc[dim]):
            raise ValueError(f"truth and forecast have different {dim} coordinates")
    m = fc.sizes.get("number", 0)
    if m < 2:
        raise ValueError(f"CRPS and SSR need at least 2 members; the forecast has {m}")
    variables = [v for v in fc.data_vars if {"number", "prediction_timedelta"} <= set(fc[v].dims)]
    if not variables:
        raise ValueError("the forecast has no variable with number and prediction_timedelta dims")
    missing = [v for v in variables if v not in truth]
    if missing:
        raise ValueError(f"truth lacks variables {missing}")
    if "time" not in fc.dims:
        fc = fc.expand_dims("time")
    valid = fc["time"].values[:, None] + fc["prediction_timedelta"].values[None, :]  # (N, S)
    absent = np.setdiff1d(valid.ravel(), truth.time.values)
    if absent.size:
        raise ValueError(f"truth lacks valid times {absent[:3].tolist()} (and {max(0, absent.size - 3)} more)")
    w = latitude_weights(fc.latitude.values)
    dims = ("number", "prediction_timedelta", "latitude", "longitude")
    n = fc.sizes["time"]
    sums = {}  # per variable, per score: sum over initial times of (S,) arrays
    for v in variables:
        acc = {k: 0.0 for k in ("crps", "mse", "rmse", "var", "mae_mean")}
        for i in range(n):  # one initial time in memory at a time
            f = np.asarray(fc[v].isel(time=i).transpose(*dims).values, dtype=np.float64)  # (M, S, H, W)
            bad = int((~np.isfinite(f)).sum())
            if bad:
                raise ValueError(f"variable {v!r}, initial time {fc['time'].values[i]}: {bad} NaN/inf values")
            t = truth[v].sel(time=valid[i]).transpose("time", "latitude", "longitude").values  # (S, H, W)
            if not np.all(np.isfinite(t)):
                init = fc["time"].values[i]
                raise ValueError(f"truth variable {v!r} has NaN/inf values at the valid times of {init}")
            s = ensemble_scores(f[:, None, :, None], t[None, :, None], w)  # (S, 1) each
            acc["crps"] += s["crps"][:, 0]
            acc["mse"] += s["rmse"][:, 0] ** 2
            acc["rmse"] += s["rmse"][:, 0]
            acc["var"] += s["spread"][:, 0] ** 2
            acc["mae_mean"] += s["mae_mean"][:, 0]
        sums[v] = acc
    rows = {k: np.stack([sums[v][k] / n for v in variables]) for k in ("crps", "mse", "rmse", "var")}
    rmse, spread = np.sqrt(rows["mse"]), np.sqrt(rows["var"])
    scores = {
        "crps": rows["crps"],
        "rmse": rmse,
        "rmse_per_init": rows["rmse"],
        "spread": spread,
        "ssr": np.sqrt((m + 1) / m) * spread / np.where(rmse > 0, rmse, np.nan),
    }
    return xr.Dataset(
        {k: (("variable", "prediction_timedelta"), a) for k, a in scores.items()},
        coords={"variable": variables, "prediction_timedelta": fc.prediction_timedelta.values},
        attrs={
            "rmse": "WeatherBench2 convention: sqrt of the mean over init times of the area-weighted MSE",
            "ssr": "sqrt((M+1)/M) * spread / rmse",
        },
    )
