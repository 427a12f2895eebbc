"""CLI verbs end to end, and bad input: one line, exit 2, no traceback, no output file."""

import json
from pathlib import Path

import numpy as np
import pytest

from icml26.cli import main

DATA = Path(__file__).parent / "data"
CODES, THETA, DIST = (str(DATA / f) for f in ("codes.npy", "theta.npy", "distances.npy"))


def test_fit_then_score(tmp_path, capsys):
    out, js = tmp_path / "c.npz", tmp_path / "f.json"
    argv = ["coherence", "fit", "-n", "96", "--steps", "10", "--features", "6", "--out", str(out), "--json", str(js)]
    assert main(argv) == 0
    summary = json.loads(js.read_text())
    assert summary["penalty"] == "coh" and 0 <= summary["density"] <= 1
    with np.load(out) as z:
        np.save(tmp_path / "codes.npy", z["codes"])
        np.save(tmp_path / "theta.npy", z["theta"])
    capsys.readouterr()
    argv = ["coherence", "score", str(tmp_path / "codes.npy"), "--positions", str(tmp_path / "theta.npy")]
    assert main([*argv, "--geometry", "circular"]) == 0
    assert "score:" in capsys.readouterr().out


def test_score_fixture(tmp_path, capsys):
    js = tmp_path / "s.json"
    argv = ["coherence", "score", CODES, "--positions", THETA, "--geometry", "circular", "--r-col", "2"]
    assert main([*argv, "--json", str(js)]) == 0
    s = json.loads(js.read_text())
    assert s["coherent"] is True and s["score"] > 0.9 and s["dead_features"] == 0
    assert main(["coherence", "score", CODES, "--distances", DIST, "--topology"]) == 0
    assert "topology.bound" in capsys.readouterr().out


def test_dead_feature_is_a_coverage_report(tmp_path, capsys):
    A = np.load(CODES)
    A[:, 2] = 0
    np.save(tmp_path / "dead.npy", A)
    assert main(["coherence", "score", str(tmp_path / "dead.npy"), "--positions", THETA]) == 0
    out = capsys.readouterr().out
    assert "coverage failure: 1 feature(s) never active" in out and "dead_feature_indices: [2]" in out


def _bad(tmp_path, capsys, argv, needle, out_file=None):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and needle in err, err
    if out_file is not None:
        assert not Path(out_file).exists()
        assert not list(Path(out_file).parent.glob("*.part"))


def _save(tmp_path, name, arr):
    p = tmp_path / name
    np.save(p, arr)
    return str(p)


def test_bad_codes(tmp_path, capsys):
    js = str(tmp_path / "out.json")
    A = np.load(CODES)
    base = ["--positions", THETA, "--json", js]
    _bad(tmp_path, capsys, ["coherence", "score", _save(tmp_path, "neg.npy", A - 0.5), *base], "negative", js)
    assert main(["coherence", "score", str(tmp_path / "neg.npy"), *base, "--rectify"]) == 0
    Path(js).unlink()
    capsys.readouterr()
    nan = A.copy()
    nan[0, 0] = np.nan
    _bad(tmp_path, capsys, ["coherence", "score", _save(tmp_path, "nan.npy", nan), *base], "NaN", js)
    inf = A.copy()
    inf[0, 0] = np.inf
    _bad(tmp_path, capsys, ["coherence", "score", _save(tmp_path, "inf.npy", inf), *base], "NaN or inf", js)
    _bad(tmp_path, capsys, ["coherence", "score", _save(tmp_path, "1d.npy", A[0]), *base], "2-D", js)
    _bad(tmp_path, capsys, ["coherence", "score", str(tmp_path / "missing.npy"), *base], "does not exist", js)
    (tmp_path / "empty.npy").write_bytes(b"")
    _bad(tmp_path, capsys, ["coherence", "score", str(tmp_path / "empty.npy"), *base], "empty", js)
    (tmp_path / "junk.npy").write_bytes(b"\x00garbage\xff" * 10)
    _bad(tmp_path, capsys, ["coherence", "score", str(tmp_path / "junk.npy"), *base], "not a NumPy .npy", js)
    _bad(tmp_path, capsys, ["coherence", "score", str(tmp_path), *base], "directory", js)


def test_bad_distances_and_positions(tmp_path, capsys):
    D = np.load(DIST)
    asym = D.copy()
    asym[0, 1] += 1.0
    _bad(tmp_path, capsys, ["coherence", "score", CODES, "--distances", _save(tmp_path, "a.npy", asym)], "symmetric")
    _bad(tmp_path, capsys, ["coherence", "score", CODES, "--distances", _save(tmp_path, "n.npy", -D)], "negative")
    _bad(tmp_path, capsys, ["coherence", "score", CODES, "--distances", _save(tmp_path, "s.npy", D[:5, :5])], "5")
    _bad(tmp_path, capsys, ["coherence", "score", CODES, "--positions", _save(tmp_path, "p.npy", np.ones(7))], "n =")


@pytest.mark.parametrize(
    "extra",
    [["-n", "0"], ["-n", "nan"], ["--steps", "-1"], ["--lam", "nan"], ["--lam", "inf"], ["--lam", "-1"],
     ["-n", "100000000"], ["--features", "1e12"], ["--seed", "-1"], ["--device", "tpu"]],
)  # fmt: skip
def test_bad_fit_numbers(tmp_path, capsys, extra):
    out = tmp_path / "c.npz"
    assert main(["coherence", "fit", "-n", "64", "--steps", "2", "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not out.exists()


def test_bad_output_paths(tmp_path, capsys):
    _bad(tmp_path, capsys, ["coherence", "fit", "--out", str(tmp_path / "no" / "c.npz")], "does not exist")
    _bad(tmp_path, capsys, ["coherence", "fit", "--out", str(tmp_path / "c.npy")], ".npz")
    _bad(tmp_path, capsys, ["coherence", "fit", "--out", str(tmp_path)], "directory")
    _bad(tmp_path, capsys, ["coherence", "fit", "--data", "circle", "--geometry", "circular", "--data", "torus",
                            "-n", "64", "--steps", "1", "--json", str(tmp_path / "x.txt")], ".json")  # fmt: skip


def test_json_has_no_nan_and_names_why_a_score_is_undefined(tmp_path, capsys):
    """Codes with a dead feature and an uncovered sample: NaN radii and an infinite bound become null in valid
    JSON, each with its reason (issue 52: the file used to hold the non-JSON tokens NaN and Infinity)."""
    import json

    A = np.load(CODES)
    A[:, 2] = 0
    A[0] = 0
    codes, out = _save(tmp_path, "dead.npy", A), tmp_path / "s.json"
    assert main(["coherence", "score", codes, "--distances", DIST, "--topology", "--json", str(out)]) == 0
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    assert data["topology"]["bound"] is None and "interleaving bound" in data["undefined"]["topology.bound"]
    assert data["max_column_radius"] == pytest.approx(1.0756, abs=1e-3)  # finite numbers stay numbers
    assert "topology" in capsys.readouterr().err  # the stage notice on stderr
    from icml26.coherence.cli import json_ready

    clean = json_ready({"score": float("nan"), "mean_row_variance": np.float64("nan"), "fit": {"x": -np.inf}})
    assert (
        clean["score"] is None and clean["fit"]["x"] is None and "no sample" in clean["undefined"]["mean_row_variance"]
    )
    assert clean["undefined"]["fit.x"].startswith("-inf (not defined")
    json.dumps(clean, allow_nan=False)


def test_penalty_weight_and_garbage_arrays_are_refused(tmp_path, capsys):
    _bad(tmp_path, capsys, ["coherence", "fit", "--lam", "1e9"], "--lam")
    junk = tmp_path / "junk.npy"
    junk.write_bytes(b"\x00garbage" * 20)
    _bad(tmp_path, capsys, ["coherence", "score", str(junk), "--positions", THETA], "NumPy's header")


def test_help_loads_no_torch_pandas_or_sklearn():
    import subprocess
    import sys

    code = (
        "import sys\nfrom icml26.coherence.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'pandas', 'sklearn') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize("n", ["20000", "50", "37"])
def test_rotated_mnist_sample_count_is_refused_not_floored_or_capped(tmp_path, capsys, n):
    """-n 20000 used to run 18,000 samples with exit 0; now every count that is not images x 36 (1 to 500 images)
    is refused with one line."""
    argv = ["coherence", "fit", "--data", "rotated-mnist", "-n", n, "--steps", "2", "--out", str(tmp_path / "c.npz")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "multiple of 36" in err and "Traceback" not in err and not (tmp_path / "c.npz").exists()


def test_score_reports_the_circles_tiling_or_says_why_it_is_undefined(tmp_path, capsys):
    from icml26.coherence.experiment import coherent_arc_codes

    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 400)
    codes, angles = _save(tmp_path, "arcs.npy", coherent_arc_codes(theta, 8, rng)), _save(tmp_path, "t.npy", theta)
    out = tmp_path / "s.json"
    assert main(["coherence", "score", codes, "--positions", angles, "--geometry", "circular", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["tiling"] > 0.8
    assert main(["coherence", "score", codes, "--positions", angles, "--json", str(out)]) == 0  # not on a circle
    assert "tiling" not in json.loads(out.read_text())
    # the 40-sample fixture has 6 features: fewer than 12 samples per feature, so the tiling is undefined
    assert main(["coherence", "score", CODES, "--positions", THETA, "--geometry", "circular", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["tiling"] is None and "flicker" in data["undefined"]["tiling"]
