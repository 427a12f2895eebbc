"""Issue 51 item 3 / 52 / 53 item 5 for ucast: the shipped ERA5 GRIB, the hourly time split with its
climatological ensemble, xskillscore cross-checks, WB2 names, outputs that would overwrite an input."""

import hashlib
import json

import numpy as np
import pytest
import xarray as xr

from icml26 import cli
from icml26.ucast.data import ERA5_UK, load_wb2, wb2_name
from icml26.ucast.experiment import _diurnal_climatology, interleave, run_time_split
from icml26.ucast.metrics import ensemble_scores, rank_histogram


def _run(capsys, *argv):
    code = cli.main(["ucast", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def uk():
    pytest.importorskip("cfgrib")
    return load_wb2(ERA5_UK)


def test_shipped_grib_reads_as_hourly_uk_2m_temperature(uk):
    assert dict(uk.sizes) == {"time": 744, "lat": 33, "lon": 49} and list(uk.data_vars) == ["t2m"]
    assert uk["t2m"].attrs["units"] == "K" and np.all(np.diff(uk.lat.values) > 0)  # sorted ascending
    assert np.all(np.diff(uk.time.values) == np.timedelta64(1, "h"))
    t = uk["t2m"].values
    assert 255 < t.min() and t.max() < 295  # March over the UK, in kelvin
    # the diurnal cycle is there: over land (London, 51.5 N 0 E) 15 UTC is warmer than 06 UTC on average
    land = uk["t2m"].sel(lat=51.5, lon=0.0)
    hours = land.time.dt.hour
    assert float(land[hours == 15].mean()) > float(land[hours == 6].mean()) + 2


def test_grib_without_cfgrib_or_damaged_gives_one_line(tmp_path):
    bad = tmp_path / "bad.grib"
    bad.write_bytes(b"GRIB but not really" * 10)
    with pytest.raises(OSError, match=r"bad\.grib") as err:
        load_wb2(bad)
    assert "\n" not in str(err.value)
    assert not list(tmp_path.glob("*.idx"))  # no index file written beside the input


def test_wb2_names():
    assert wb2_name("z_500") == ("geopotential", 500) and wb2_name("t2m") == ("2m_temperature", None)
    assert wb2_name("geopotential_850") == ("geopotential", 850) and wb2_name("vorticity") == ("vorticity", None)
    assert wb2_name("2m_temperature") == ("2m_temperature", None)


def test_interleave_and_the_climatological_ensemble():
    times = np.datetime64("2019-03-01T00") + np.arange(72) * np.timedelta64(1, "h")
    x = np.arange(72, dtype=np.float32)[:, None, None] * np.ones((1, 2, 3), np.float32)
    ds = xr.Dataset({"t2m": (("time", "lat", "lon"), x)}, coords={"time": times, "lat": [50.0, 51], "lon": [0.0, 1, 2]})
    tr, t = interleave(ds, 6)
    assert tr.sizes["trajectory"] == 6 and tr.sizes["time"] == 12
    assert np.all(tr["t2m"].values[2, 3] == 2 + 3 * 6) and t[2, 3] == times[20]  # phase 2, frame 3 = hour 20
    x_tr = tr["t2m"].values[:, :, None]  # (N, T, C, H, W)
    valid = np.array([[np.datetime64("2019-03-04T05")]])
    clim = _diurnal_climatology(x_tr, t, valid)  # one member per training day at 05 UTC: hours 5, 29, 53
    assert clim.shape == (3, 1, 1, 1, 2, 3) and sorted(clim[:, 0, 0, 0, 0, 0]) == [5, 29, 53]


def test_time_split_smoke_on_the_real_series(uk):
    """Four days of the real series: three for training, one held out; every model scored, in kelvin."""
    short = uk.isel(time=slice(0, 96), lat=slice(0, 16), lon=slice(0, 16))
    res = run_time_split(short, "2019-03-04", every=6, steps=2, preset="smoke", det_steps=3, prob_steps=2, seed=1)
    want = {"ucast", "ucast_twin", "mc_dropout", "diurnal_climatology", "det", "persistence", "climatology"}
    assert set(res["scores"]) == want and res["leads_hours"] == [6, 12] and res["units"] == ["K"]
    assert res["members"]["diurnal_climatology"] == 3 and res["n_test_inits"] > 0
    for name, sc in res["scores"].items():
        assert np.all(np.isfinite(sc["crps"])) and np.all(np.asarray(sc["crps"]) > 0), name
    # persistence's CRPS is its MAE, in kelvin: a 6-hour change of 2 m temperature is O(1 K)
    assert 0.2 < res["scores"]["persistence"]["crps"][0] < 5
    with pytest.raises(ValueError, match="hours after"):
        run_time_split(short, "2019-03-04T20", every=6, steps=2, preset="smoke", det_steps=1, prob_steps=1)


def test_ssr_and_rank_histogram_agree_with_xskillscore():
    xs = pytest.importorskip("xskillscore")
    rng = np.random.default_rng(3)
    m, n, s, c, h, w = 6, 5, 2, 1, 4, 7
    lat = np.linspace(-60, 60, h)
    truth = rng.normal(size=(n, s, c, h, w))
    fc = truth + 0.3 * rng.normal(size=(1, n, s, c, h, w)) + 0.8 * rng.normal(size=(m, n, s, c, h, w))
    weights = np.cos(np.deg2rad(lat)) / np.cos(np.deg2rad(lat)).mean()
    ours = ensemble_scores(fc, truth, weights)
    dims = ("member", "init", "lead", "channel", "lat", "lon")
    f = xr.DataArray(fc, dims=dims, coords={"lat": lat})
    o = xr.DataArray(truth, dims=dims[1:], coords={"lat": lat})
    wgt = xr.DataArray(weights, dims="lat").broadcast_like(o.isel(init=0, lead=0, channel=0))
    mse = xs.mse(f.mean("member"), o, dim=["lat", "lon"], weights=wgt)  # (init, lead, channel)
    rmse = np.sqrt(mse.mean("init"))
    # unbiased member variance = M/(M-1) x mean squared deviation from the ensemble mean (xskillscore's mse)
    ens_mean = f.mean("member").broadcast_like(f)
    w_member = wgt.broadcast_like(f.isel(init=0, lead=0, channel=0))  # (member, lat, lon)
    var = xs.mse(f, ens_mean, dim=["member", "lat", "lon"], weights=w_member)
    spread = np.sqrt(var.mean("init") * m / (m - 1))
    ssr = np.sqrt((m + 1) / m) * spread / rmse
    np.testing.assert_allclose(ours["rmse"], rmse.values, rtol=1e-10)
    np.testing.assert_allclose(ours["spread"], spread.values, rtol=1e-10)
    np.testing.assert_allclose(ours["ssr"], ssr.values, rtol=1e-10)
    # rank histogram at the last lead (continuous values: no ties, so both count the same ranks)
    ref = xs.rank_histogram(
        o.isel(lead=-1), f.isel(lead=-1), dim=["init", "channel", "lat", "lon"], member_dim="member"
    )
    np.testing.assert_array_equal(rank_histogram(fc[:, :, -1], truth[:, -1]), ref.values)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_outputs_equal_to_an_input_are_refused(tmp_path, capsys):
    data = tmp_path / "traj.nc"
    assert (
        _run(capsys, "simulate", "--out", str(data), "--preset", "smoke", "--trajectories", "1", "--frames", "5")[0]
        == 0
    )
    before = _sha(data)
    train = ["train", "--stage", "det", "--data", str(data), "--preset", "smoke", "--steps", "1", "--device", "cpu"]
    code, _, err = _run(capsys, *train, "--out", str(data))
    assert code == 2 and "overwrit" in err and len(err.strip().splitlines()) == 1 and _sha(data) == before
    ckpt = tmp_path / "det.pt"
    assert _run(capsys, *train, "--out", str(ckpt))[0] == 0
    fc = [
        "forecast",
        "--checkpoint",
        str(ckpt),
        "--init",
        str(data),
        "--members",
        "2",
        "--steps",
        "1",
        "--device",
        "cpu",
    ]
    for target in (data, ckpt):
        kept = _sha(target)
        code, _, err = _run(capsys, *fc, "--out", str(target))
        assert code == 2 and "overwrit" in err and _sha(target) == kept
    assert _run(capsys, *fc, "--out", str(tmp_path / "fc.nc"))[0] == 0
    code, _, err = _run(capsys, "evaluate", str(tmp_path / "fc.nc"), "--truth", str(data), "--json", str(data))
    assert code == 2 and "overwrit" in err and _sha(data) == before


def test_experiment_time_split_flags_are_checked(tmp_path, capsys):
    data = tmp_path / "traj.nc"
    assert (
        _run(capsys, "simulate", "--out", str(data), "--preset", "smoke", "--trajectories", "1", "--frames", "8")[0]
        == 0
    )
    code, _, err = _run(capsys, "experiment", "--data", str(data), "--every", "3", "--preset", "smoke")
    assert code == 2 and "--train-until" in err
    code, _, err = _run(capsys, "experiment", "--data", str(data), "--train-until", "2019-03-22", "--preset", "smoke")
    assert code == 2 and "datetime" in err


def test_experiment_on_the_shipped_grib_from_the_cli(tmp_path, capsys):
    pytest.importorskip("cfgrib")
    out = tmp_path / "uk.json"
    argv = ["experiment", "--data", "era5-uk", "--train-until", "2019-03-30", "--lead-steps", "1", "--preset", "smoke"]
    code, stdout, err = _run(
        capsys, *argv, "--det-steps", "2", "--prob-steps", "1", "--device", "cpu", "--json", str(out)
    )
    assert code == 0, err
    res = json.loads(out.read_text())
    assert res["leads_hours"] == [6] and "diurnal_climatology" in res["scores"] and "kelvin" not in stdout
    assert "(K)" in stdout
    code, _, err = _run(capsys, "experiment", "--data", "era5-uk", "--train-until", "2020-01-01", "--preset", "smoke")
    assert code == 2 and "outside the data's times" in err
