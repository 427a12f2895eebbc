"""The CLI verbs end to end, and bad input: exit 2, one line, no traceback, no output file."""

import json

import numpy as np
import pytest
import torch

from icml26.cli import main as icml26_main

from .cli_examples import DATA, EDF

torch.set_num_threads(1)


def run(argv, capsys):
    code = icml26_main(["eegmoce", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_simulate_train_explain(tmp_path, capsys):
    d, ck, js, ej = (tmp_path / n for n in ("d.npz", "m.pt", "m.json", "e.json"))
    assert run(["simulate", "--subjects", "3", "--trials", "5", "--out", str(d)], capsys)[0] == 0
    code, out, _ = run(
        ["train", "--data", str(d), "--cv", "loso", "--epochs", "1", "--json", str(js), "--out", str(ck)], capsys
    )
    assert code == 0 and "balanced accuracy" in out and "|K|" in out
    m = json.loads(js.read_text())
    assert len(m["balanced_accuracy"]) == 3 and m["cv"] == "loso"
    code, out, _ = run(
        ["explain", "--checkpoint", str(ck), "--data", str(d), "--quadruples", "300", "--json", str(ej)], capsys
    )
    e = json.loads(ej.read_text())
    assert code == 0 and set(e["curvature_abs_K"]) == {"eeg", "audio", "video"}
    assert sum(e["contribution"].values()) == pytest.approx(1.0)
    assert all(0 <= v <= 1 for v in e["delta_rel_features"].values())


def test_train_on_real_edf_recordings(tmp_path, capsys):
    pytest.importorskip("mne")
    js = tmp_path / "edf.json"
    code, out, _ = run(
        ["train", "--edf", str(EDF), "--seconds", "0", "--folds", "2", "--epochs", "1", "--json", str(js)], capsys
    )
    assert code == 0 and "read 8 windows of 2 subjects" in out and "hrv (2, 16)" in out
    m = json.loads(js.read_text())
    assert len(m["balanced_accuracy"]) == 2 and len(m["curvatures"][0]) == 3  # eeg, ecg, hrv experts


def _bad_files(tmp_path):
    arrays = dict(np.load(DATA / "tiny.npz"))
    variants = {
        "mismatch.npz": {**arrays, "video": arrays["video"][:-2]},
        "nosubject.npz": {k: v for k, v in arrays.items() if k != "subject"},
        "nan.npz": {**arrays, "eeg": np.where(np.arange(16)[:, None, None] == 5, np.nan, arrays["eeg"])},
        "fs_high.npz": {**arrays, "fs": np.float64(2000.0)},  # kernel of 501 samples > 64-sample trials
        "onesubject.npz": {**arrays, "subject": np.zeros_like(arrays["subject"])},
        "othershape.npz": {**arrays, "video": arrays["video"][:, :3]},
        "strlabels.npz": {**arrays, "y": arrays["y"].astype(str)},
    }
    for name, arr in variants.items():
        np.savez(tmp_path / name, **arr)
    (tmp_path / "junk.pt").write_bytes(b"\x00garbage")
    return variants


BAD = [
    (["train", "--data", "{tmp}/mismatch.npz"], "mismatched sample counts"),
    (["train", "--data", "{tmp}/nosubject.npz"], "subject"),
    (["train", "--data", "{tmp}/nan.npz"], "NaN"),
    (["train", "--data", "{tmp}/fs_high.npz"], "sampling-rate mismatch"),
    (["train", "--data", "{tmp}/onesubject.npz", "--cv", "loso"], "at least 2 subjects"),
    (["train", "--data", str(DATA / "tiny.npz"), "--folds", "9"], "9 folds need"),
    (["train", "--data", str(DATA / "tiny.npz"), "--curvature-init", "0"], "must be > 0"),
    (["train", "--data", str(DATA / "tiny.npz"), "--curvature-init", "-1"], "must be > 0"),
    (["train", "--data", str(DATA / "tiny.npz"), "--curvature-init", "0.005"], "curvature initialisation"),
    (["explain", "--checkpoint", "{tmp}/junk.pt"], "not an eegmoce checkpoint"),
    (["explain", "--checkpoint", str(DATA / "tiny.pt"), "--data", "{tmp}/fs_high.npz"], "sampling-rate mismatch"),
    (["simulate", "--subjects", "1000", "--out", "{tmp}/x.npz"], "memory"),
    (["train", "--data", "{tmp}/strlabels.npz"], "integers"),
    (["train", "--data", "{tmp}/missing.npz"], "missing.npz"),
    (["explain", "--checkpoint", str(DATA / "tiny.pt"), "--data", "{tmp}/othershape.npz"], "does not fit"),
    (["explain", "--checkpoint", str(DATA / "tiny.npz")], "not an eegmoce checkpoint"),
    (["train", "--data", str(DATA / "tiny.npz"), "--prior", "1e300"], "too large"),
    (["train", "--data", str(DATA / "tiny.npz"), "--prior", "1000"], "swamps"),
    (["train", "--data", str(DATA / "tiny.npz"), "--lr", "1e300"], "too large"),
    (["train", "--data", str(DATA / "tiny.npz"), "--lr", "100"], "learning rate"),
    (["train", "--edf", "{tmp}"], "holds no"),
    (["train", "--edf", "{tmp}/missing"], "not a directory"),
    (["train", "--edf", str(EDF)], "shorter than the 60"),
    (["train", "--edf", str(EDF), "--seconds", "0.001"], "less than one 4 s window"),
    (["train", "--edf", str(EDF), "--seconds", "3"], "less than one 4 s window"),
    (["train", "--edf", str(EDF), "--seconds", "9"], "shorter than the 9"),
    (["train", "--edf", str(EDF), "--data", str(DATA / "tiny.npz")], "not allowed with"),
    (["train", "--data", str(DATA / "tiny.npz"), "--out", "{tmp}/m.npz"], "must end with .pt"),
    (["train", "--data", str(DATA / "tiny.npz"), "--threads", "0"], "threads"),
    (["explain", "--checkpoint", str(DATA / "tiny.pt"), "--threads", "0"], "threads"),
]


def test_train_checkpoint_is_a_deprecated_alias_of_out():
    from icml26.eegmoce.cli import build_parser

    with pytest.warns(FutureWarning, match="--checkpoint is deprecated"):
        a = build_parser().parse_args(["train", "--data", "x.npz", "--checkpoint", "m.pt"])
    assert a.out == "m.pt" and a.threads is None and not hasattr(a, "device")


@pytest.mark.parametrize("argv,msg", BAD)
def test_bad_input_one_line_exit_2(tmp_path, capsys, argv, msg):
    _bad_files(tmp_path)
    out_json = tmp_path / "out.json"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] != "simulate":
        argv += ["--json", str(out_json)]
    code, _, err = run(argv, capsys)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and msg in lines[0] and "Traceback" not in err
    assert not out_json.exists() and not (tmp_path / "x.npz").exists()
    assert not list(tmp_path.glob(".*.part"))


def test_explain_on_a_text_file_says_not_an_eegmoce_checkpoint(tmp_path, capsys):
    """A text file (e.g. a README passed by mistake) gets our one line, not torch's weights_only advice."""
    md = tmp_path / "README.md"
    md.write_text("# eegmoce\n\nnot a checkpoint\n")
    code, _, err = run(["explain", "--checkpoint", str(md)], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1
    assert f"{md} is not an eegmoce checkpoint" in lines[0] and "weights_only" not in err


@pytest.mark.parametrize(
    "text",
    ["time,eeg\n0.0,1.5\n", "one line of text\n", ""],
    ids=["two-line-csv", "one-line-text", "empty"],
)
def test_explain_on_a_csv_or_text_checkpoint_exits_2_with_one_line(tmp_path, capsys, text):
    """torch's weights_only unpickler raises arbitrary errors on foreign files (IndexError on a 2-line CSV,
    KeyError on a one-line text): every one becomes our one line and exit 2, never a traceback."""
    bad = tmp_path / "some.csv"
    bad.write_text(text)
    code, _, err = run(["explain", "--checkpoint", str(bad)], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert "not an eegmoce checkpoint" in lines[0] or "empty" in lines[0]


def test_explain_on_a_foreign_dict_with_our_keys_exits_2(tmp_path, capsys):
    import torch

    keys = ("state", "arm", "model_config", "fs", "n_classes", "names", "shapes")
    bad = tmp_path / "foreign.pt"
    torch.save({k: {"no": 1} for k in keys}, bad)
    code, _, err = run(["explain", "--checkpoint", str(bad)], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "not an eegmoce checkpoint" in lines[0]


def test_cli_arms_are_the_models_arms():
    from icml26.eegmoce import cli, model

    assert cli.ARMS == model.ARMS


def test_json_dash_writes_only_json_to_stdout(capsys):
    code, out, err = run(["explain", "--checkpoint", str(DATA / "tiny.pt"), "--json", "-"], capsys)
    assert code == 0 and json.loads(out)["arm"] == "moce" and "curvature_abs_K" in err
