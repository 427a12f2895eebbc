"""Score xarray ensemble forecasts against a truth Dataset (WeatherBench2-style, per lead time and variable)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from icml26.ucast.data import latitude_weights
from icml26.ucast.metrics import ensemble_scores

__all__ = ["evaluate_forecast"]


def evaluate_forecast(fc: xr.Dataset, truth: xr.Dataset) -> xr.Dataset:
    """CRPS (fair), ensemble-mean RMSE (both conventions), spread and SSR per lead time and variable.

    Parameters
    ----------
    fc : xarray.Dataset
        As returned by :func:`icml26.ucast.forecast`: variables (member, lead_time, lat, lon), optionally
        with an ``init_time`` dimension (several forecasts), and ``valid_time`` = init_time + lead_time.
    truth : xarray.Dataset
        The same variables with dims (time, lat, lon), covering every valid time.

    Returns
    -------
    xarray.Dataset
        Variables ``crps``, ``rmse`` (WB2: mean MSE over inits, then sqrt), ``rmse_per_init``, ``spread``,
        ``ssr`` with dims (variable, lead_time).

    Raises
    ------
    ValueError
        Different lat/lon coordinates, missing variables or valid times, fewer than 2 members.
    """
    for name, ds in (("fc", fc), ("truth", truth)):
        if not isinstance(ds, xr.Dataset):
            raise TypeError(f"{name} must be an xarray.Dataset; got {type(ds).__name__}")
    for dim in ("lat", "lon"):
        if dim not in truth.dims or truth.sizes[dim] != fc.sizes[dim] or not np.allclose(truth[dim], fc[dim]):
            raise ValueError(f"truth and forecast have different {dim} coordinates")
    if fc.sizes.get("member", 0) < 2:
        raise ValueError(f"CRPS and SSR need at least 2 members; the forecast has {fc.sizes.get('member', 0)}")
    variables = [v for v in fc.data_vars if "member" in fc[v].dims]
    missing = [v for v in variables if v not in truth]
    if missing:
        raise ValueError(f"truth lacks variables {missing}")
    if "init_time" not in fc.dims:
        fc = fc.expand_dims("init_time")
        fc = fc.assign_coords(valid_time=fc.valid_time.expand_dims(init_time=fc.init_time.values))
    valid = fc.valid_time.transpose("init_time", "lead_time").values  # (N, S)
    absent = np.setdiff1d(valid.ravel(), truth.time.values)
    if absent.size:
        raise ValueError(f"truth lacks valid times {absent[:3].tolist()} (and {max(0, absent.size - 3)} more)")
    w = latitude_weights(fc.lat.values)
    out = {}
    for v in variables:
        f = fc[v].transpose("member", "init_time", "lead_time", "lat", "lon").values[:, :, :, None]
        t = truth[v].sel(time=xr.DataArray(valid, dims=("init_time", "lead_time")))
        t = t.transpose("init_time", "lead_time", "lat", "lon").values[:, :, None]
        out[v] = {k: a[:, 0] for k, a in ensemble_scores(f, t, w).items()}
    names = ["crps", "rmse", "rmse_per_init", "spread", "ssr"]
    return xr.Dataset(
        {k: (("variable", "lead_time"), np.stack([out[v][k] for v in variables])) for k in names},
        coords={"variable": variables, "lead_time": fc.lead_time.values},
        attrs={
            "rmse": "WeatherBench2 convention: sqrt of the mean over init times of the area-weighted MSE",
            "ssr": "sqrt((M+1)/M) * spread / rmse",
        },
    )
