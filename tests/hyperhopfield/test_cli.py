"""The CLI verbs end to end, and bad input: exit 2, one line, no traceback, no output file."""

import json

import numpy as np
import pytest

from icml26.cli import main as icml26_main
from icml26.hyperhopfield.cli import main


def run(argv, capsys):
    code = icml26_main(["hyperhopfield", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_geometry_capacity_decode(tmp_path, capsys):
    js, png = tmp_path / "g.json", tmp_path / "g.png"
    code, out, _ = run(
        ["geometry", "--widths", "exponential", "--cells", "60", "--pairs", "40", "--json", str(js), "--out", str(png)],
        capsys,
    )
    assert code == 0 and "decades" in out
    assert json.loads(js.read_text())["log_scaling_range_decades"] > 0 and png.stat().st_size > 0
    cj = tmp_path / "c.json"
    code, out, _ = run(
        ["capacity", "--dims", "2", "--radius", "2,6", "--p-max", "64", "--queries", "100", "--json", str(cj)], capsys
    )
    assert code == 0
    rows = json.loads(cj.read_text())["rows"]
    assert len(rows) == 6 and all(r["capacity"] >= 1 for r in rows)
    est = tmp_path / "est.npy"
    code, out, _ = run(["decode", "--cells", "30", "--queries", "200", "--out", str(est)], capsys)
    assert code == 0 and "RMSE" in out and np.load(est).shape == (200, 1)


def test_decode_user_files(tmp_path, capsys):
    grid = np.linspace(0, 1, 50)
    F = np.exp(-((grid[:, None] - np.linspace(0, 1, 10)[None]) ** 2) / 0.02) * 5  # (G, N)
    counts = np.random.default_rng(0).poisson(F[[10, 40]])
    for name, a in (("F.npy", F), ("c.npy", counts), ("s.npy", grid)):
        np.save(tmp_path / name, a)
    est = tmp_path / "est.npy"
    code, _, _ = run(
        [
            "decode",
            "--counts",
            str(tmp_path / "c.npy"),
            "--rates",
            str(tmp_path / "F.npy"),
            "--positions",
            str(tmp_path / "s.npy"),
            "--out",
            str(est),
        ],
        capsys,
    )
    assert code == 0
    assert np.allclose(np.load(est)[:, 0], grid[[10, 40]], atol=0.1)


def _files(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.ones((3, 4)))
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.npy"
    garbage.write_text("not an array")
    nan = tmp_path / "nan.npy"
    np.save(nan, np.full((3, 4), np.nan))
    neg = tmp_path / "neg.npy"
    np.save(neg, -np.ones((3, 4)))
    return good, empty, garbage, nan, neg


BAD = [
    ["capacity", "--radius", "20"],  # beyond the float64 safe radius
    ["capacity", "--radius", "-1"],
    ["capacity", "--radius", "nan"],
    ["capacity", "--radius", "inf"],
    ["capacity", "--noise", "0"],
    ["capacity", "--dims", "0"],
    ["capacity", "--dims", "1000"],
    ["capacity", "--p-max", "100000000"],
    ["capacity", "--models", "poincare"],
    ["geometry", "--mean-width", "-0.1"],
    ["geometry", "--mean-width", "5"],
    ["geometry", "--cells", "0"],
    ["geometry", "--cells", "10000000"],
    ["decode", "--budget", "0"],
    ["decode", "--budget", "-3"],
    ["decode", "--queries", "100000000"],
    ["geometry", "--cells", "100000", "--pairs", "100000"],  # each within its limit, the product is 75 GiB
    ["geometry", "--cells", "400", "--betti"],
    ["fields", "--recording", "linear-track", "--bins", "100000"],
    ["fields"],  # no recording
    ["fields", "--recording", "linear-track", "--units", "x.mat"],  # both
    ["decode", "--recording", "w-maze", "--folds", "1"],
    ["decode", "--recording", "w-maze", "--window", "0"],
    ["geometry", "--recording", "w-maze", "--window", "nan"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a) for a in BAD])
def test_bad_arguments(argv, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, _, err = run([*argv, "--json", str(out)], capsys)
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_bad_files(tmp_path, capsys):
    good, empty, garbage, nan, neg = _files(tmp_path)
    out = tmp_path / "est.npy"
    for counts in (tmp_path / "missing.npy", empty, tmp_path, garbage, nan, neg):
        code, _, err = run(
            ["decode", "--counts", str(counts), "--rates", str(good), "--positions", str(good), "--out", str(out)],
            capsys,
        )
        assert code == 2, counts
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert not out.exists()
    code, _, err = run(["decode", "--counts", str(good), "--out", str(out)], capsys)  # missing --rates
    assert code == 2 and not out.exists()
    code, _, err = run(["decode", "--out", str(tmp_path / "nodir" / "x.npy")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = run(["decode", "--out", str(tmp_path / "x.txt")], capsys)
    assert code == 2
    for flag in ("--rates", "--positions"):  # without --counts these would be silently ignored
        code, _, err = run(["decode", flag, str(tmp_path / "missing.npy"), "--out", str(out)], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and not out.exists()


def test_help():
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0


def test_real_recording_verbs(tmp_path, capsys):
    fj, fz, png = tmp_path / "f.json", tmp_path / "f.npz", tmp_path / "maps.png"
    code, out, _ = run(
        ["fields", "--recording", "linear-track", "--out", str(fz), "--plot", str(png), "--json", str(fj)], capsys
    )
    assert code == 0 and "place cells" in out and png.stat().st_size > 0
    summary = json.loads(fj.read_text())
    with np.load(fz) as z:
        assert z["rate"].shape == (31, 50) and len(z["field_widths"]) == len(summary["field_widths"]) > 0
    code, out, err = run(["decode", "--recording", "linear-track", "--folds", "3", "--json", "-"], capsys)
    res = json.loads(out)  # --json -: stdout holds only the JSON, the messages go to stderr
    assert code == 0 and "median error" in err
    assert res["median_error_posterior_mean"] < res["median_error_chance"] / 2
    code, out, _ = run(
        [
            "geometry",
            "--recording",
            "w-maze",
            "--boot",
            "3",
            "--null",
            "3",
            "--out",
            str(tmp_path / "b.png"),
            "--json",
            str(tmp_path / "b.json"),
        ],
        capsys,
    )
    geo = json.loads((tmp_path / "b.json").read_text())
    assert code == 0 and "hyperbolic score" in out and 0 <= geo["score"] <= geo["gain"] <= 1 and geo["units"] >= 4
    assert geo["model"]


def test_user_spike_and_position_files(tmp_path, capsys):
    rng = np.random.default_rng(0)
    t = np.arange(0, 600, 1 / 30)
    s = np.abs(((t / 10.0) % 2.0) - 1.0)
    np.save(tmp_path / "pos.npy", np.stack([t, 100 + 300 * s], 1))
    units = {
        f"u{k}": t[rng.random(len(t)) < 10 / 30 * np.exp(-((s - c) ** 2) / 0.005)]
        for k, c in enumerate(np.linspace(0.1, 0.9, 6))
    }
    np.savez(tmp_path / "units.npz", **units)
    code, _, err = run(
        [
            "decode",
            "--units",
            str(tmp_path / "units.npz"),
            "--position",
            str(tmp_path / "pos.npy"),
            "--all-units",
            "--speed-min",
            "0",
        ],
        capsys,
    )
    assert code == 0, err
    # an output that names an input would destroy it: refused before any work
    code, _, err = run(
        [
            "fields",
            "--units",
            str(tmp_path / "units.npz"),
            "--position",
            str(tmp_path / "pos.npy"),
            "--out",
            str(tmp_path / "units.npz"),
        ],
        capsys,
    )
    assert code == 2 and "overwrite" in err


def test_issue52_decode_zero_rates_and_output_suffix(tmp_path, capsys):
    zero = tmp_path / "F.npy"
    np.save(zero, np.zeros((20, 5)))
    np.save(tmp_path / "s.npy", np.linspace(0, 1, 20))
    np.save(tmp_path / "c.npy", np.ones((3, 5)))
    out = tmp_path / "est.npy"
    code, _, err = run(
        [
            "decode",
            "--counts",
            str(tmp_path / "c.npy"),
            "--rates",
            str(zero),
            "--positions",
            str(tmp_path / "s.npy"),
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2 and "all zeros" in err and not out.exists()
    code, _, err = run(["geometry", "--cells", "20", "--pairs", "5", "--out", str(tmp_path / "x.npy")], capsys)
    assert code == 2 and ".png" in err and not (tmp_path / "x.npy").exists()


@pytest.mark.parametrize("argv", [["--cells", "3"], ["--env-dim", "2"]])
def test_betti_refused_before_any_work(argv, capsys):
    """A --betti request the test cannot serve is refused up front, before the scaling analysis prints."""
    code, out, err = run(["geometry", "--betti", *argv], capsys)
    assert code == 2 and out.strip() == ""
    assert len(err.strip().splitlines()) == 1 and "--betti" in err
