"""The CLI verbs end to end, and bad input: exit 2, one line, no traceback, no output file."""

import json

import numpy as np
import pandas as pd
import pytest

from icml26.cli import main as icml26_main

from .cli_examples import DATA


def run(argv, capsys):
    code = icml26_main(["brainconverge", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_align_resume_report_granger(tmp_path, capsys):
    t = tmp_path / "t.parquet"
    code, out, _ = run(
        ["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--out", str(t)], capsys
    )
    assert code == 0 and "216 alignment measurements" in out
    df = pd.read_parquet(t)
    assert set(df["roi"]) == {"early", "late", "semantic"} and df["score"].between(-1, 1).all()
    code, out, _ = run(
        ["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--resume", "--out", str(t)],
        capsys,
    )
    assert code == 0 and "28 checkpoints resumed" in out and pd.read_parquet(t).equals(df)
    js = tmp_path / "r.json"
    code, out, _ = run(["report", "--table", str(t), "--json", str(js)], capsys)
    assert code == 0 and json.loads(js.read_text())["correlation"]["n"] == 4
    g = tmp_path / "g.json"
    code, out, _ = run(["granger", "--trajectories", str(t), "--maxlag", "1", "--json", str(g)], capsys)
    res = json.loads(g.read_text())
    assert code == 0 and len(res["models"]) == 2 and all(0 <= m["p_align_to_perf"] <= 1 for m in res["models"])


def test_granger_simple_table_and_constant_series(tmp_path, capsys):
    rng = np.random.default_rng(0)
    x = np.cumsum(rng.random(20))
    csv = tmp_path / "traj.csv"
    pd.DataFrame({"model": "m", "step": range(20), "alignment": x, "performance": np.cumsum(rng.random(20))}).to_csv(
        csv
    )
    assert run(["granger", "--trajectories", str(csv), "--maxlag", "2"], capsys)[0] == 0
    pd.DataFrame({"model": "m", "step": range(20), "alignment": x, "performance": 0.5}).to_csv(csv)
    out_json = tmp_path / "g.json"
    code, _, err = run(["granger", "--trajectories", str(csv), "--json", str(out_json)], capsys)
    assert code == 2 and "constant" in err and len(err.strip().splitlines()) == 1 and not out_json.exists()


def _brain_variant(tmp_path, **change):
    with np.load(DATA / "brain.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays.update(change)
    p = tmp_path / "bad.npz"
    np.savez(p, **arrays)
    return p


@pytest.mark.parametrize(
    "change, message",
    [
        ({"stimulus_ids": np.arange(40) + 5000}, "do not match"),
        ({"roi__sub01__early": np.ones(7, bool)}, "shape"),
        ({"roi__sub01__early": np.ones(30)}, "boolean"),
        ({"betas__sub01": np.full((40, 30), np.nan)}, "finite"),
    ],
)
def test_bad_brain_files(tmp_path, capsys, change, message):
    out = tmp_path / "t.csv"
    bad = _brain_variant(tmp_path, **change)
    code, _, err = run(["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(bad), "--out", str(out)], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_shuffled_stimulus_order_is_matched_by_id(tmp_path, capsys):
    with np.load(DATA / "brain.npz") as z:
        arrays = {k: z[k] for k in z.files}
    perm = np.random.default_rng(1).permutation(40)
    arrays["stimulus_ids"] = arrays["stimulus_ids"][perm]
    arrays["betas__sub01"] = arrays["betas__sub01"][perm]
    np.savez(tmp_path / "perm.npz", **arrays)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    run(["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--out", str(a)], capsys)
    run(["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(tmp_path / "perm.npz"), "--out", str(b)], capsys)
    assert np.allclose(pd.read_csv(a)["score"], pd.read_csv(b)["score"], atol=1e-12)


def test_garbage_files_and_conflicting_flags(tmp_path, capsys):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a zoo")
    out = tmp_path / "t.csv"
    code, _, err = run(["align", "--zoo", str(junk), "--brain", str(DATA / "brain.npz"), "--out", str(out)], capsys)
    assert code == 2 and "zoo" in err and not out.exists()
    code, _, err = run(["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(junk), "--out", str(out)], capsys)
    assert code == 2 and "brain file" in err and not out.exists()
    code, _, err = run(
        [
            "align",
            "--zoo",
            str(DATA / "zoo.pt"),
            "--brain",
            str(DATA / "brain.npz"),
            "--ray",
            "--ray-address",
            "auto",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2 and "not both" in err
    code, _, err = run(
        ["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--out", str(tmp_path / "t.txt")],
        capsys,
    )
    assert code == 2 and ".parquet" in err


@pytest.mark.slow
def test_ray_table_equals_single_process(tmp_path, capsys):
    pytest.importorskip("ray")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    run(["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--out", str(a)], capsys)
    assert (
        run(
            ["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz"), "--ray", "--out", str(b)],
            capsys,
        )[0]
        == 0
    )
    assert pd.read_parquet(a).equals(pd.read_parquet(b))


def test_help_loads_no_torch_and_absurd_bandwidths_are_refused(tmp_path):
    """``--help`` builds the parser without torch or pandas (the package imports its modules lazily); --sigma and
    --snr are bounded where a wider value makes the kernel constant or the voxels noise-free (issue 52)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom icml26.brainconverge.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'pandas', 'sklearn') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out
    from icml26.brainconverge.cli import build_parser

    for argv in (["align", "--zoo", "z.pt", "--brain", "b.npz", "--sigma", "1e300", "--out", "t.csv"],
                 ["align", "--zoo", "z.pt", "--brain", "b.npz", "--sigma", "1e5", "--out", "t.csv"],
                 ["brain", "--snr", "1e9", "--out", str(tmp_path / "b.npz")]):  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(argv)
        assert exc.value.code == 2


def test_a_garbage_brain_file_is_named_without_pickle_advice(tmp_path):
    from icml26.brainconverge.data import load_brain

    junk = tmp_path / "brain.npz"
    junk.write_bytes(b"garbage" * 40)
    with pytest.raises(ValueError, match="is not a readable") as exc:
        load_brain(junk)
    assert "allow_pickle" not in str(exc.value)
