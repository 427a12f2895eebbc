"""Ensemble inference to xarray, its input checks, scoring against truth, the real-grid smoke forecast."""

from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr

from icml26.ucast.config import ModelConfig
from icml26.ucast.data import Normalizer, dataset_to_array, latitude_weights, load_wb2, simulate_dataset
from icml26.ucast.evaluate import evaluate_forecast
from icml26.ucast.forecast import forecast, rollout
from icml26.ucast.metrics import ensemble_scores
from icml26.ucast.model import UCast

ERA5 = Path(__file__).resolve().parents[1] / "data" / "era5-sample" / "era5-levels-members.nc"
CFG = ModelConfig(channels=(8, 16), dropout=0.2)


@pytest.fixture(scope="module")
def sim():
    return simulate_dataset(1, 8, n_grid=8, solver_n=16, spin_up=2.0, seed=0)


def model_for(ds, variables=("vorticity", "tracer"), n_forcings=0, cfg=CFG) -> UCast:
    x = dataset_to_array(ds, list(variables))
    norm = Normalizer.fit(x)
    model = UCast(
        cfg,
        len(variables),
        norm.mean,
        norm.std,
        norm.res_std,
        np.zeros((1, ds.sizes["lat"], ds.sizes["lon"])),
        ds.lat.values,
        ds.lon.values,
        n_forcings,
        list(variables),
    )
    torch.nn.init.normal_(model.net.head[-1].weight, std=0.05)  # an "trained" model: not plain persistence
    return model


def test_forecast_returns_members_on_the_grid(sim):
    model = model_for(sim)
    init = sim.isel(trajectory=0, time=slice(0, 3))
    fc = forecast(model, init, members=4, steps=3)
    # WeatherBench2 names: number, prediction_timedelta, latitude, longitude; time = the initial time
    assert dict(fc["vorticity"].sizes) == {"number": 4, "prediction_timedelta": 3, "latitude": 8, "longitude": 8}
    np.testing.assert_allclose(fc.prediction_timedelta.values, [1.0, 2.0, 3.0])
    assert float(fc.time) == 2.0 and np.allclose(fc.valid_time, [3.0, 4.0, 5.0])
    v = fc["vorticity"].values
    assert np.all(np.isfinite(v)) and not np.allclose(v[0], v[1])  # MC dropout: members differ


def test_rollout_members_identical_without_dropout_and_one_call_per_step(sim):
    model = model_for(sim)
    z = model.normalise(torch.as_tensor(dataset_to_array(sim, ["vorticity", "tracer"])[0, :2]))
    calls = []
    model.net.register_forward_hook(lambda *a: calls.append(1))
    out = rollout(model, z[:1], z[1:], members=3, steps=4, dropout=False)
    assert out.shape == (3, 4, 1, 2, 8, 8) and len(calls) == 4
    torch.testing.assert_close(out[0], out[2])
    assert not model.training  # rollout leaves the model in eval mode


def test_forecast_bad_inputs(sim):
    model = model_for(sim)
    init = sim.isel(trajectory=0, time=slice(0, 2))
    with pytest.raises(ValueError, match="grid"):
        forecast(model, simulate_dataset(1, 2, n_grid=4, solver_n=16, spin_up=0.0).isel(trajectory=0), 2, 1)
    bad = init.copy(deep=True)
    bad["tracer"][1, 3, 5] = np.nan
    with pytest.raises(ValueError, match=r"'tracer'.*lat=.*lon=225"):
        forecast(model, bad, 2, 1)
    with pytest.raises(ValueError, match="lacks variables"):
        forecast(model, init.drop_vars("tracer"), 2, 1)
    with pytest.raises(ValueError, match="2 time"):
        forecast(model, init.isel(time=slice(0, 1)), 2, 1)
    shifted = init.assign_coords(lon=init.lon + 1.0)
    with pytest.raises(ValueError, match="coordinates"):
        forecast(model, shifted, 2, 1)


def test_evaluate_matches_ensemble_scores_and_checks_inputs(sim):
    model = model_for(sim)
    traj = sim.isel(trajectory=0)
    fc = forecast(model, traj.isel(time=slice(0, 2)), members=3, steps=4)
    scores = evaluate_forecast(fc, traj)
    truth = np.stack([traj[v].sel(time=fc.valid_time).values for v in ("vorticity", "tracer")], axis=1)
    arr = np.stack([fc[v].values for v in ("vorticity", "tracer")], axis=2)  # (M, S, C, H, W)
    ref = ensemble_scores(arr[:, None], truth[None], latitude_weights(traj.lat.values))
    np.testing.assert_allclose(scores["crps"].values, ref["crps"].T, rtol=1e-6)
    np.testing.assert_allclose(scores["ssr"].values, ref["ssr"].T, rtol=1e-6)
    with pytest.raises(ValueError, match="lat"):
        evaluate_forecast(fc, traj.assign_coords(lat=traj.lat + 0.5))
    with pytest.raises(ValueError, match="at least 2 members"):
        evaluate_forecast(fc.isel(number=slice(0, 1)), traj)
    with pytest.raises(ValueError, match="valid times"):
        evaluate_forecast(fc, traj.isel(time=slice(0, 4)))


def test_init_by_init_scoring_equals_the_batched_scores_and_reads_legacy_names(sim, tmp_path):
    model = model_for(sim)
    traj = sim.isel(trajectory=0)
    fcs = [forecast(model, traj.isel(time=slice(i, i + 2)), members=3, steps=2) for i in range(3)]
    stacked = xr.concat(
        fcs, dim="time", coords="different", compat="equals"
    )  # a WB2 archive: (time, number, prediction_timedelta, latitude, longitude)
    scores = evaluate_forecast(stacked, traj)
    names = list(scores.variable.values)
    arr = np.stack([np.stack([f[v].values for v in names], axis=2) for f in fcs], axis=1)  # (M, N, S, C, H, W)
    truth = np.stack([np.stack([traj[v].sel(time=f.valid_time).values for v in names], axis=1) for f in fcs])
    ref = ensemble_scores(arr, truth, latitude_weights(traj.lat.values))  # all inits at once
    for k in ("crps", "rmse", "rmse_per_init", "spread", "ssr"):
        np.testing.assert_allclose(scores[k].values, ref[k].T, rtol=1e-6, err_msg=k)
    assert not np.allclose(scores["rmse"].values, scores["rmse_per_init"].values)  # the two conventions differ
    legacy = stacked.rename(
        {"number": "member", "prediction_timedelta": "lead_time", "time": "init_time", "latitude": "lat",
         "longitude": "lon"}
    )  # fmt: skip
    np.testing.assert_allclose(evaluate_forecast(legacy, traj)["crps"].values, scores["crps"].values)
    pytest.importorskip("zarr")
    stacked.to_zarr(tmp_path / "fc.zarr")
    with xr.open_zarr(tmp_path / "fc.zarr") as lazy:
        assert lazy["vorticity"].variable._in_memory is False  # nothing loaded by opening
        got = evaluate_forecast(lazy, traj)["crps"].sel(variable=names)  # Zarr lists variables alphabetically
        np.testing.assert_allclose(got.values, scores["crps"].values, rtol=1e-6)


@pytest.mark.skipif(not ERA5.is_file(), reason="real ERA5 sample absent (tests/data/era5-sample)")
def test_smoke_forecast_on_the_real_era5_grid():
    ds = load_wb2(ERA5, ["z_500", "t_850"])
    model = model_for(ds, ("z_500", "t_850"), n_forcings=4)
    init = ds.isel(trajectory=0, time=slice(0, 2))
    fc = forecast(model, init, members=2, steps=2)
    # WeatherBench2 layout: long names, one shared level dimension, each variable's own levels in attrs
    sizes = {"number": 2, "prediction_timedelta": 2, "level": 2, "latitude": 61, "longitude": 120}
    assert dict(fc["geopotential"].sizes) == sizes and fc["level"].values.tolist() == [500, 850]
    assert list(fc["geopotential"].attrs["levels"]) == [500] and list(fc["temperature"].attrs["levels"]) == [850]
    assert fc.prediction_timedelta.values[0] == np.timedelta64(12, "h")
    z = fc["geopotential"].sel(level=500).values / 9.80665
    assert np.all(np.isfinite(z)) and 4000 < z.min() and z.max() < 6500  # stays a 500 hPa height field
    scores = evaluate_forecast(fc, ds.isel(trajectory=0))  # truth in short split names (z_500), read alike
    assert scores["crps"].shape == (2, 2) and np.all(scores["crps"].values > 0)
    assert scores["variable"].values.tolist() == ["geopotential_500", "temperature_850"]
    # a forecast in the short names icml26 wrote before (z_500, no level) scores the same
    legacy = xr.Dataset(
        {"z_500": fc["geopotential"].sel(level=500, drop=True), "t_850": fc["temperature"].sel(level=850, drop=True)}
    )
    assert evaluate_forecast(legacy, ds.isel(trajectory=0))["crps"].equals(scores["crps"])


@pytest.mark.gpu
def test_paper_latency_claim_runs_on_a_gpu():
    from icml26.claims import Scale
    from icml26.ucast.claims import paper_latency

    result = paper_latency(Scale.PAPER, 0)
    assert result.verdict in ("holds", "fails") and result.measured["seconds"] > 0
    assert result.measured["members"] == 10 and result.measured["steps"] == 30 and "device " in result.reason


def test_a_seeded_forecast_is_reproducible_and_leaves_the_global_rng_alone(sim):
    model = model_for(sim)
    init = sim.isel(trajectory=0, time=slice(0, 3))
    state = torch.get_rng_state()
    a, b = (forecast(model, init, members=3, steps=2, seed=1) for _ in range(2))
    assert torch.equal(torch.get_rng_state(), state)  # forked: the caller's RNG is untouched
    np.testing.assert_array_equal(a["vorticity"].values, b["vorticity"].values)
    assert a.attrs["seed"] == 1
    other = forecast(model, init, members=3, steps=2, seed=2)
    assert not np.allclose(a["vorticity"].values, other["vorticity"].values)  # the seed chooses the masks
