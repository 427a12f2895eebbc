"""The CLI verbs end to end on a tiny simulated data set, and their input errors."""

import pytest
import xarray as xr

from icml26.ucast.cli import main


def test_simulate_train_forecast_evaluate(tmp_path, capsys):
    data, det, prob = tmp_path / "traj.nc", tmp_path / "det.pt", tmp_path / "prob.pt"
    fc, scores = tmp_path / "fc.nc", tmp_path / "scores.json"
    assert main(["simulate", "--out", str(data), "--preset", "smoke", "--trajectories", "2", "--frames", "8"]) == 0
    base = ["train", "--data", str(data), "--preset", "smoke", "--steps", "2", "--device", "cpu"]
    assert main([*base, "--stage", "det", "--out", str(det)]) == 0
    with pytest.warns(FutureWarning, match="--checkpoint is deprecated.*use --out"):  # the old spelling still works
        assert main([*base, "--stage", "prob", "--init", str(det), "--checkpoint", str(prob)]) == 0
    assert (
        main(
            [
                "forecast",
                "--checkpoint",
                str(prob),
                "--init",
                str(data),
                "--time",
                "3",
                "--members",
                "3",
                "--steps",
                "4",
                "--out",
                str(fc),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    with xr.open_dataset(fc) as ds:
        assert dict(ds["vorticity"].sizes) == {"number": 3, "prediction_timedelta": 4, "latitude": 16, "longitude": 16}
    assert main(["evaluate", str(fc), "--truth", str(data)]) == 0
    assert "crps" in capsys.readouterr().out
    assert main(["evaluate", str(fc), "--truth", str(data), "--json", str(scores)]) == 0
    assert scores.is_file()
    with pytest.raises(ValueError, match="--init"):
        main([*base, "--stage", "prob", "--out", str(prob)])
    late = tmp_path / "late.nc"  # forecast from the last frame: the truth has no valid time for it
    main(
        [
            "forecast",
            "--checkpoint",
            str(prob),
            "--init",
            str(data),
            "--members",
            "2",
            "--steps",
            "2",
            "--out",
            str(late),
            "--device",
            "cpu",
        ]
    )
    with pytest.raises(ValueError, match="valid times"):
        main(["evaluate", str(late), "--truth", str(data)])


def test_cli_file_errors(tmp_path):
    with pytest.raises(OSError):
        main(["forecast", "--checkpoint", str(tmp_path / "none.pt"), "--init", "x.nc", "--out", "y.nc"])
    with pytest.raises(OSError):
        main(["evaluate", str(tmp_path / "none.nc"), "--truth", "t.nc"])
    with pytest.raises(SystemExit):
        main(["train", "--stage", "sideways", "--data", "x", "--out", "y"])


def test_evaluate_reads_the_truth_like_the_init_a_wb2_file(tmp_path):
    """A WeatherBench2/ERA5-style file (latitude/longitude, descending latitude, a level and an ensemble
    ``number`` dimension) used as --init must also be usable as --truth for the same forecast."""
    import numpy as np

    rng = np.random.default_rng(0)
    lat, lon = np.linspace(78.75, -78.75, 8), np.arange(16) * 22.5
    times = np.datetime64("2017-01-01T00") + np.arange(5) * np.timedelta64(12, "h")
    z = 5e4 + 1e3 * rng.standard_normal((2, 5, 2, 8, 16))  # (number, time, level, lat, lon)
    ds = xr.Dataset(
        {"z": (("number", "time", "level", "latitude", "longitude"), z)},
        coords={"number": [0, 1], "time": times, "level": [500, 850], "latitude": lat, "longitude": lon},
    )
    data, det, fc = tmp_path / "wb2.nc", tmp_path / "det.pt", tmp_path / "fc.nc"
    ds.to_netcdf(data)
    train = ["train", "--stage", "det", "--data", str(data), "--variables", "z_500", "--preset", "smoke"]
    assert main([*train, "--steps", "1", "--device", "cpu", "--out", str(det)]) == 0
    forecast = ["forecast", "--checkpoint", str(det), "--init", str(data), "--time", "1", "--members", "2"]
    assert main([*forecast, "--steps", "2", "--out", str(fc), "--device", "cpu"]) == 0
    assert main(["evaluate", str(fc), "--truth", str(data)]) == 0
    # two runs with the same --seed write the same ensemble (MC dropout seeded), another seed another one
    again, other = tmp_path / "again.nc", tmp_path / "other.nc"
    assert main([*forecast, "--steps", "2", "--out", str(again), "--device", "cpu"]) == 0
    assert main([*forecast, "--steps", "2", "--out", str(other), "--device", "cpu", "--seed", "5"]) == 0
    with xr.open_dataset(fc) as a, xr.open_dataset(again) as b, xr.open_dataset(other) as c:
        assert a["geopotential"].equals(b["geopotential"]) and not a["geopotential"].equals(c["geopotential"])
        # WeatherBench2 layout: long name, a level dimension (issue 53 item 5)
        assert a["geopotential"].dims == ("number", "prediction_timedelta", "level", "latitude", "longitude")
        assert a["level"].values.tolist() == [500] and "z_500" not in a


def test_experiment_verb_scores_against_baselines_and_refuses_short_data(tmp_path, capsys):
    import json

    import numpy as np

    from icml26 import cli

    data, out = tmp_path / "traj.nc", tmp_path / "exp.json"
    assert main(["simulate", "--out", str(data), "--preset", "smoke", "--trajectories", "2", "--frames", "6"]) == 0
    argv = ["experiment", "--data", str(data), "--preset", "smoke", "--device", "cpu", "--json", str(out)]
    assert main(argv) == 0
    res = json.loads(out.read_text())
    assert set(res["scores"]) == {"ucast", "mc_dropout", "det", "persistence", "climatology"}
    assert np.isfinite(res["scores"]["ucast"]["ssr"]).all() and "climatology" in capsys.readouterr().out
    xr.open_dataset(data).isel(trajectory=0, time=slice(0, 5)).to_netcdf(tmp_path / "short.nc")
    code = cli.main(["ucast", "experiment", "--data", str(tmp_path / "short.nc"), "--json", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "time split" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()
