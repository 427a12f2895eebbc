"""Simulator against closed forms and invariants; normalisation; the WeatherBench2-style loader."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from icml26.ucast.data import KolmogorovFlow, Normalizer, dataset_to_array, load_wb2, simulate_dataset, time_forcings

ERA5 = Path(__file__).resolve().parents[1] / "data" / "era5-sample" / "era5-levels-members.nc"


def test_weak_forcing_converges_to_the_laminar_kolmogorov_solution():
    """Stable regime: omega -> A sin(k y) / (nu k^2 + drag) (closed form of the steady linear balance)."""
    sim = KolmogorovFlow(n=16, forcing_amplitude=0.05, noise=0.0, dt=0.1)
    out = sim.run(1, 1, 1.0, 80.0, np.random.default_rng(0))[0, 0, 0]
    laminar = 0.05 * np.sin(4 * sim.y) / (4**2 / sim.reynolds + sim.drag)
    np.testing.assert_allclose(out, laminar, atol=2e-3 * np.abs(laminar).max() + 1e-5)


def test_simulator_is_seeded_keeps_zero_mean_vorticity_and_is_stochastic():
    a = simulate_dataset(2, 3, n_grid=8, solver_n=16, spin_up=1.0, seed=5)
    b = simulate_dataset(2, 3, n_grid=8, solver_n=16, spin_up=1.0, seed=5)
    c = simulate_dataset(2, 3, n_grid=8, solver_n=16, spin_up=1.0, seed=6)
    xr.testing.assert_identical(a, b)
    assert not np.allclose(a.vorticity, c.vorticity)
    assert a.vorticity.dims == ("trajectory", "time", "lat", "lon") and a.sizes["lat"] == 8
    # the forcing and the noise have no k = 0 mode, and neither does advection: the mean stays 0
    assert np.abs(a.vorticity.mean(("lat", "lon"))).max() < 1e-4
    assert np.all(np.abs(a.lat) < 90)


def test_simulator_bad_inputs():
    with pytest.raises(ValueError, match="multiple"):
        simulate_dataset(1, 2, n_grid=12, solver_n=16)
    with pytest.raises(ValueError):
        KolmogorovFlow(n=7)


def test_normalizer_statistics():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=(4, 50, 2, 3, 3))
    norm = Normalizer.fit(x)
    np.testing.assert_allclose(norm.mean, 3.0, atol=0.1)
    np.testing.assert_allclose(norm.std, 2.0, atol=0.1)
    np.testing.assert_allclose(norm.res_std, np.sqrt(2), atol=0.1)  # increments of iid N(0,1): var 2
    assert Normalizer.from_dict(norm.to_dict()).res_std.tolist() == norm.res_std.tolist()
    with pytest.raises(ValueError):
        Normalizer.fit(np.ones((1, 3, 1, 2, 2)))


def test_time_forcings():
    t = np.array(["2020-01-01T00", "2020-07-02T12"], dtype="datetime64[h]")
    f = time_forcings(t)
    assert f.shape == (2, 4) and np.allclose(f[:, 0] ** 2 + f[:, 1] ** 2, 1)
    assert np.isclose(f[1, 3], -1, atol=1e-6)  # 12 UTC: cos(day progress) = -1
    assert time_forcings(np.arange(3.0)).shape == (3, 0)


def test_loader_validates(tmp_path):
    with pytest.raises(OSError, match="no such"):
        load_wb2(tmp_path / "none.nc")
    bad = tmp_path / "bad.nc"
    bad.write_text("garbage")
    with pytest.raises(OSError):
        load_wb2(bad)
    ds = xr.Dataset({"x": (("time", "lat"), np.zeros((2, 3)))}, coords={"lat": [0.0, 1, 2]})
    ds.to_netcdf(tmp_path / "nolon.nc")
    with pytest.raises(ValueError, match="lon"):
        load_wb2(tmp_path / "nolon.nc")
    grid = {"latitude": [10.0, 0.0, -10.0], "longitude": [0.0, 120, 240]}
    arr = np.zeros((2, 3, 3))
    arr[1, 2, 0] = np.nan
    xr.Dataset({"t2m": (("time", "latitude", "longitude"), arr)}, coords=grid).to_netcdf(tmp_path / "nan.nc")
    with pytest.raises(ValueError, match="NaN"):
        load_wb2(tmp_path / "nan.nc")
    with pytest.raises(ValueError, match="dims"):
        dataset_to_array(xr.Dataset({"x": (("time", "lat"), np.zeros((2, 3)))}), ["x"])


@pytest.mark.skipif(not ERA5.is_file(), reason="real ERA5 sample absent (tests/data/era5-sample)")
def test_real_era5_sample_loads_with_levels_and_members():
    ds = load_wb2(ERA5)
    assert sorted(ds.data_vars) == ["t_500", "t_850", "z_500", "z_850"]
    assert dict(ds["z_500"].sizes) == {"trajectory": 10, "time": 4, "lat": 61, "lon": 120}
    x = dataset_to_array(ds, ["z_500", "t_850"])
    assert x.shape == (10, 4, 2, 61, 120)
    z500 = x[:, :, 0] / 9.80665
    assert 4500 < z500.min() and z500.max() < 6000  # 500 hPa heights in metres
    norm = Normalizer.fit(x)
    assert np.all(norm.res_std > 0) and np.all(norm.std > 0)
    with pytest.raises(ValueError, match="level"):
        load_wb2(ERA5, ["z_700"])
