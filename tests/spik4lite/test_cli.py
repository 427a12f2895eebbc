"""``icml26 spik4lite`` verbs end to end, and the bad inputs the issue names: exit 2, one line, no output file."""

import json

import numpy as np
import pytest
import torch

from icml26.cli import main as icml26_main

DATA = ["--train-size", "64", "--test-size", "32"]


@pytest.fixture(scope="module")
def dense_ckpt(tmp_path_factory):
    d = tmp_path_factory.mktemp("s4l")
    argv = ["spik4lite", "train", "--model", "cnn", "--dim", "8", "--T", "2", "--steps", "5", *DATA]
    assert icml26_main([*argv, "--out", str(d / "dense.pt"), "--json", str(d / "t.json")]) == 0
    assert json.loads((d / "t.json").read_text())["widths"] == {"conv0": 4, "conv1": 8, "conv2": 8}
    return d / "dense.pt"


def _fails_cleanly(argv, capsys, must_not_exist=(), match=""):
    code = icml26_main(["spik4lite", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert match in err, err
    assert not any(p.exists() for p in must_not_exist)
    return err


def test_refactor_profile_and_export(dense_ckpt, tmp_path, capsys):
    out, ts, js = tmp_path / "c.pt", tmp_path / "c.pt2", tmp_path / "r.json"
    argv = ["spik4lite", "refactor", "--checkpoint", str(dense_ckpt), "--fraction", "0.5", "--steps", "3",
            "--finetune-steps", "2", *DATA, "--out", str(out), "--export", str(ts), "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    r = json.loads(js.read_text())
    assert r["widths_after"] == {"conv0": 2, "conv1": 4, "conv2": 4}
    # the torch.export artefact computes what the compact checkpoint computes
    from icml26.spik4lite.train import load_checkpoint

    model, _ = load_checkpoint(out)
    x = torch.rand(3, 1, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(torch.export.load(str(ts)).module()(x), model(x))
    pj = tmp_path / "p.json"
    argv = ["spik4lite", "profile", "--checkpoint", str(out), "--compare", str(dense_ckpt), "--batch-sizes", "1,2",
            "--threads", "1", "--repeats", "1", "--json", str(pj)]  # fmt: skip
    assert icml26_main(argv) == 0
    rows = json.loads(pj.read_text())
    assert rows["checkpoint"]["MMACs/image"] < rows["compare"]["MMACs/image"]
    assert rows["checkpoint"]["params"] < rows["compare"]["params"] and "latency ms b2 t1" in rows["compare"]
    assert "energy uJ/image" in capsys.readouterr().out


def test_bad_inputs_named_by_the_issue(dense_ckpt, tmp_path, capsys):
    out = tmp_path / "x.pt"
    base = ["refactor", "--checkpoint", str(dense_ckpt), *DATA, "--out", str(out)]
    _fails_cleanly([*base, "--threshold", "1.0"], capsys, [out], "strictly between 0 and 1")
    _fails_cleanly([*base, "--threshold", "0"], capsys, [out], "strictly between 0 and 1")
    _fails_cleanly([*base, "--fraction", "1.0"], capsys, [out], "every channel of layer 'conv0'")
    _fails_cleanly([*base, "--model", "spikingformer-mini"], capsys, [out], "not spikingformer-mini")
    _fails_cleanly([*base, "--method", "l1"], capsys, [out], "needs --fraction")
    big = tmp_path / "big.npy"
    np.save(big, np.zeros((4, 16, 16), np.float32))
    _fails_cleanly(["profile", "--checkpoint", str(dense_ckpt), "--images", str(big)], capsys, [], "expects (1, 8, 8)")
    rgb = tmp_path / "rgb.npz"
    np.savez(rgb, x=np.zeros((20, 3, 8, 8)), y=np.arange(20) % 3)
    _fails_cleanly([*base[:-4], "--data", str(rgb), "--out", str(out)], capsys, [out], "the checkpoint expects")
    other = tmp_path / "other.pt"
    torch.save({"state_dict": {}}, other)
    _fails_cleanly(["profile", "--checkpoint", str(other)], capsys, [], "not an icml26 spik4lite checkpoint")
    _fails_cleanly(["train", "--data", "cifar10", "--out", str(out)], capsys, [out], "unknown data")


def test_absurd_learning_rate_and_labels_are_refused(tmp_path, capsys):
    out = tmp_path / "x.pt"
    for lr in ("1e300", "100"):
        _fails_cleanly(["train", "--lr", lr, *DATA, "--out", str(out)], capsys, [out], "--lr")
    labels = tmp_path / "labels.npz"
    np.savez(labels, x=np.zeros((20, 8, 8)), y=np.arange(20) * 100_000_000)  # up to 1.9e9: a 128 GB head
    _fails_cleanly(["train", "--data", str(labels), "--out", str(out)], capsys, [out], "class indices 0..K-1")


def test_pool_is_refused_where_it_would_be_ignored(dense_ckpt, tmp_path, capsys):
    """--pool averages 28 x 28 IDX images; digits (8 x 8), .npz files and --images get a one-line error instead of a
    silently ignored option (issue 41)."""
    out = tmp_path / "x.pt"
    _fails_cleanly(["train", "--pool", "2", *DATA, "--out", str(out)], capsys, [out], "--pool 2 applies to")
    npz = tmp_path / "mine.npz"
    np.savez(npz, x=np.zeros((20, 8, 8)), y=np.arange(20) % 3)
    _fails_cleanly(["train", "--data", str(npz), "--pool", "2", "--out", str(out)], capsys, [out], "--pool 2")
    imgs = tmp_path / "imgs.npy"
    np.save(imgs, np.zeros((4, 8, 8), np.float32))
    argv = ["profile", "--checkpoint", str(dense_ckpt), "--images", str(imgs), "--pool", "2"]
    _fails_cleanly(argv, capsys, [], "--pool applies to --data")
    _fails_cleanly(["profile", "--checkpoint", str(dense_ckpt), "--pool", "2"], capsys, [], "--pool 2 applies to")


def test_json_to_stdout_and_outputs_that_name_an_input(dense_ckpt, tmp_path, capsys):
    argv = ["spik4lite", "profile", "--checkpoint", str(dense_ckpt), "--batch-sizes", "1", "--threads", "1",
            "--repeats", "1", "--json", "-"]  # fmt: skip
    assert icml26_main(argv) == 0
    rows = json.loads(capsys.readouterr().out)  # standard output holds the JSON alone
    assert rows["checkpoint"]["params"] > 0
    before = dense_ckpt.read_bytes()
    base = ["refactor", "--checkpoint", str(dense_ckpt), "--fraction", "0.5", *DATA]
    _fails_cleanly([*base, "--out", str(dense_ckpt)], capsys, match="--checkpoint")
    _fails_cleanly([*base, "--out", str(tmp_path / "c.pt"), "--json", str(dense_ckpt)], capsys, match="--checkpoint")
    prof = ["profile", "--checkpoint", str(dense_ckpt), "--json", str(dense_ckpt)]
    _fails_cleanly(prof, capsys, match="--checkpoint")
    assert dense_ckpt.read_bytes() == before
