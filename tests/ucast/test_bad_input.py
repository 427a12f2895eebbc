"""Issue 20 for ucast: --time checked, NaN forecasts refused, the forecast remembers its trajectory, outputs safe."""

import json

import numpy as np
import pytest
import torch
import xarray as xr

from icml26 import cli


def _run(capsys, *argv):
    code = cli.main(["ucast", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ucast")
    assert (
        cli.main(
            [
                "ucast",
                "simulate",
                "--out",
                str(tmp / "flow.nc"),
                "--preset",
                "smoke",
                "--trajectories",
                "2",
                "--frames",
                "6",
            ]
        )
        == 0
    )
    assert (
        cli.main(
            [
                "ucast",
                "train",
                "--stage",
                "det",
                "--data",
                str(tmp / "flow.nc"),
                "--preset",
                "smoke",
                "--steps",
                "2",
                "--out",
                str(tmp / "det.pt"),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    return tmp


def _forecast(work, out, *extra):
    return [
        "forecast",
        "--checkpoint",
        str(work / "det.pt"),
        "--init",
        str(work / "flow.nc"),
        "--members",
        "2",
        "--steps",
        "2",
        "--device",
        "cpu",
        "--out",
        str(out),
        *extra,
    ]


@pytest.mark.parametrize("time", ["100", "6", "0"])
def test_time_outside_the_file_is_refused_not_clamped(work, tmp_path, capsys, time):
    code, _, err = _run(capsys, *_forecast(work, tmp_path / "f.nc", "--time", time))
    assert code == 2 and "has times 0 to 5" in err and err.count("\n") == 1
    assert not (tmp_path / "f.nc").exists()


def test_trajectory_out_of_range_is_refused(work, tmp_path, capsys):
    code, _, err = _run(capsys, *_forecast(work, tmp_path / "f.nc", "--trajectory", "7"))
    assert code == 2 and "holds trajectories 0 to 1" in err


def test_forecast_remembers_its_trajectory_and_evaluate_uses_it(work, tmp_path, capsys):
    fc = tmp_path / "f.nc"
    code, _, _ = _run(capsys, *_forecast(work, fc, "--trajectory", "1", "--time", "3"))
    assert code == 0
    with xr.open_dataset(fc) as ds:
        assert ds.attrs["init_trajectory"] == 1 and ds.attrs["init_time_index"] == 3
    code, _, _ = _run(capsys, "evaluate", str(fc), "--truth", str(work / "flow.nc"), "--json", str(tmp_path / "a.json"))
    assert code == 0
    code, _, _ = _run(
        capsys,
        "evaluate",
        str(fc),
        "--truth",
        str(work / "flow.nc"),
        "--trajectory",
        "1",
        "--json",
        str(tmp_path / "b.json"),
    )
    assert code == 0
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads((tmp_path / "b.json").read_text())
    code, _, err = _run(capsys, "evaluate", str(fc), "--truth", str(work / "flow.nc"), "--trajectory", "0")
    assert code == 2 and "started from trajectory 1, not --trajectory 0" in err


def test_nan_forecast_is_refused_not_scored_as_nan(work, tmp_path, capsys):
    fc = tmp_path / "f.nc"
    assert _run(capsys, *_forecast(work, fc, "--time", "2"))[0] == 0  # valid times inside the truth
    with xr.open_dataset(fc) as ds:
        bad = ds.load()
    bad["vorticity"][0, 0, 0, 0] = np.nan
    bad.to_netcdf(tmp_path / "nan.nc")
    code, _, err = _run(
        capsys,
        "evaluate",
        str(tmp_path / "nan.nc"),
        "--truth",
        str(work / "flow.nc"),
        "--json",
        str(tmp_path / "s.json"),
    )
    assert code == 2 and "'vorticity', initial time" in err and "1 NaN/inf values" in err
    assert not (tmp_path / "s.json").exists()


def test_outputs_are_checked_before_training(work, tmp_path, capsys):
    code, _, err = _run(
        capsys,
        "train",
        "--stage",
        "det",
        "--data",
        str(work / "flow.nc"),
        "--preset",
        "smoke",
        "--steps",
        "2",
        "--out",
        str(tmp_path / "missing" / "c.pt"),
        "--device",
        "cpu",
    )
    assert code == 2 and "does not exist; create it first" in err
    code, _, err = _run(capsys, "simulate", "--out", str(tmp_path / "missing" / "x.nc"), "--preset", "smoke")
    assert code == 2 and "does not exist" in err and "Permission denied" not in err
    code, _, err = _run(
        capsys, "simulate", "--out", str(tmp_path / "x.nc"), "--trajectories", "100000", "--frames", "100000"
    )
    assert code == 2 and "limit" in err


def test_foreign_checkpoints_give_one_line(work, tmp_path, capsys):
    torch.save({"x": np.zeros(2)}, tmp_path / "evil.pt")
    (tmp_path / "garbage.pt").write_bytes(bytes(range(256)))
    for path in (tmp_path / "evil.pt", tmp_path / "garbage.pt", tmp_path):
        code, _, err = _run(
            capsys,
            "forecast",
            "--checkpoint",
            str(path),
            "--init",
            str(work / "flow.nc"),
            "--out",
            str(tmp_path / "f.nc"),
        )
        assert code == 2 and str(path) in err and err.count("\n") == 1 and "Traceback" not in err
        code, _, err = _run(
            capsys,
            "train",
            "--stage",
            "det",
            "--data",
            str(work / "flow.nc"),
            "--preset",
            "smoke",
            "--resume",
            str(path),
            "--out",
            str(tmp_path / "c.pt"),
            "--device",
            "cpu",
        )
        assert code == 2 and str(path) in err and err.count("\n") == 1
    assert not (tmp_path / "c.pt").exists()


def test_api_entry_points_check_types(work):
    from icml26.ucast.evaluate import evaluate_forecast
    from icml26.ucast.forecast import forecast
    from icml26.ucast.train import load_checkpoint

    model = load_checkpoint(work / "det.pt")
    with xr.open_dataset(work / "flow.nc") as ds:
        init = ds.isel(trajectory=0).load()
    with pytest.raises(TypeError, match=r"init must be an xarray\.Dataset"):
        forecast(model, init["vorticity"].values)
    with pytest.raises(TypeError, match="model must be a UCast"):
        forecast("det.pt", init)
    with pytest.raises(TypeError, match=r"truth must be an xarray\.Dataset"):
        evaluate_forecast(init, init["vorticity"].values)
