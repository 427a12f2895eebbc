"""``icml26 smoothspike`` verbs end to end, and the bad inputs the issue names: exit 2, one line, no output file."""

import json

import numpy as np
import pytest
import torch

from icml26.cli import main as icml26_main

TINY = ["--dim", "16", "--heads", "2", "--layers", "1", "--T", "2", "--max-len", "16", "--steps", "2", "--batch", "8",
        "--train-size", "32", "--test-size", "16"]  # fmt: skip


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    d = tmp_path_factory.mktemp("ss")
    argv = ["smoothspike", "finetune", "--task", "synthetic-pair", "--rotation", "hadamard", *TINY]
    assert icml26_main([*argv, "--out", str(d / "m.pt"), "--json", str(d / "f.json")]) == 0
    meta = json.loads((d / "f.json").read_text())
    assert meta["task"] == "synthetic-pair" and set(meta["metrics"]) == {"accuracy", "f1", "matthews"}
    return d / "m.pt"


def _fails_cleanly(argv, capsys, must_not_exist=(), match=""):
    code = icml26_main(["smoothspike", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert match in err, err
    assert not any(p.exists() for p in must_not_exist)
    return err


def test_analyze_and_fuse(ckpt, tmp_path, capsys):
    js = tmp_path / "a.json"
    assert icml26_main(["smoothspike", "analyze", "--checkpoint", str(ckpt), "--sentences", "4", "--test-size", "16",
                        "--json", str(js)]) == 0  # fmt: skip
    rep = json.loads(js.read_text())
    assert rep["rotation"] == "hadamard" and {r["site"] for r in rep["layers"]} == {"attn_in", "v", "mlp_in", "hidden"}
    fused, fj = tmp_path / "fused.pt", tmp_path / "fuse.json"
    assert icml26_main(["smoothspike", "fuse", "--checkpoint", str(ckpt), "--out", str(fused), "--json", str(fj)]) == 0
    s = json.loads(fj.read_text())
    assert s["max |fused - unfused| float64"] < 1e-10 and s["params fused"] == s["params unfused"]
    assert s["block MACs per sample (0: spike-driven)"] == 0.0
    from icml26.smoothspike.train import load_checkpoint

    a, _ = load_checkpoint(ckpt)
    b, meta = load_checkpoint(fused)
    ids = torch.randint(0, a.cfg.vocab_size, (4, 16))
    with torch.no_grad():
        torch.testing.assert_close(a(ids), b(ids), atol=1e-4, rtol=0)
    assert meta["fused"] is True and b.cfg.rotation == "none"
    # a fused checkpoint analyses like any other, and cannot be fused twice
    assert (
        icml26_main(["smoothspike", "analyze", "--checkpoint", str(fused), "--sentences", "2", "--test-size", "8"]) == 0
    )
    capsys.readouterr()
    _fails_cleanly(["fuse", "--checkpoint", str(fused), "--out", str(tmp_path / "x.pt")], capsys,
                   [tmp_path / "x.pt"], "no rotation to fuse")  # fmt: skip


def test_bad_inputs_named_by_the_issue(ckpt, tmp_path, capsys):
    out = tmp_path / "x.pt"
    ft = ["finetune", "--task", "synthetic-pair", *TINY, "--out", str(out)]
    # a dimension with no Hadamard construction: the supported sizes are listed
    err = _fails_cleanly([*ft, "--dim", "100"], capsys, [out], "no Hadamard construction for size 100")
    assert "12*2^k" in err and "384" in err
    # a tokenizer that does not match the model
    from tokenizers import Tokenizer, models

    tiny = tmp_path / "tok.json"
    Tokenizer(models.WordLevel({"[PAD]": 0, "[UNK]": 1, "a": 2}, unk_token="[UNK]")).save(str(tiny))
    _fails_cleanly(
        ["analyze", "--checkpoint", str(ckpt), "--tokenizer", str(tiny)], capsys, [], "tokenizer has 3 tokens"
    )
    # sequences longer than the model supports
    _fails_cleanly(["analyze", "--checkpoint", str(ckpt), "--max-len", "64"], capsys, [], "exceeds the model's 16")
    # label sets that do not match the task
    _fails_cleanly(["analyze", "--checkpoint", str(ckpt), "--task", "tweets"], capsys, [], "the checkpoint predicts 2")
    tsv = tmp_path / "rte.tsv"
    tsv.write_text("index\tsentence1\tsentence2\tlabel\n0\ta b\tb\tentailment\n1\tc d\te\tmaybe\n")
    _fails_cleanly(
        [
            "finetune",
            "--task",
            "glue",
            "--glue-train",
            str(tsv),
            "--labels",
            "entailment,not_entailment",
            *TINY,
            "--out",
            str(out),
        ],
        capsys,
        [out],
        "row 3: label 'maybe' is not in the task's label set",
    )
    _fails_cleanly([*ft, "--labels", "yes,no"], capsys, [out], "do not match task synthetic-pair")
    # not a checkpoint
    other = tmp_path / "other.pt"
    torch.save({"weights": 1}, other)
    _fails_cleanly(
        ["fuse", "--checkpoint", str(other), "--out", str(out)], capsys, [out], "not a smoothspike checkpoint"
    )


def test_glue_tsv_finetune(tmp_path, capsys):
    tsv = tmp_path / "sst.tsv"
    rows = [f"{'good fine great' if i % 2 else 'bad awful poor'} movie {i}\t{i % 2}" for i in range(40)]
    tsv.write_text("sentence\tlabel\n" + "\n".join(rows) + "\n")
    js = tmp_path / "g.json"
    argv = ["smoothspike", "finetune", "--task", "glue", "--glue-train", str(tsv), "--rotation", "none", *TINY]
    assert icml26_main([*argv, "--out", str(tmp_path / "g.pt"), "--json", str(js)]) == 0
    assert json.loads(js.read_text())["label_names"] == ["0", "1"]


def test_empty_sentences_and_absurd_learning_rates_are_refused(tmp_path, capsys):
    """Issue 52: a GLUE file of empty sentences scored accuracy 1.0 (all padding, the bias alone decides);
    now refused with the first empty row. --lr 1e300 saved weights of 1e300; now refused at parse time."""
    tsv = tmp_path / "empty.tsv"
    tsv.write_text("sentence\tlabel\n" + "".join(f"\t{i % 2}\n" for i in range(20)))
    out = tmp_path / "m.pt"
    argv = ["finetune", "--task", "glue", "--glue-train", str(tsv), "--rotation", "none", *TINY, "--out", str(out)]
    _fails_cleanly(argv, capsys, [out], "20 of 20 rows have an empty sentence (first: row 2)")
    pair = tmp_path / "pair.tsv"
    pair.write_text(
        "sentence1\tsentence2\tlabel\n" + "".join(f"a {i}\t{'' if i == 3 else 'b'}\t{i % 2}\n" for i in range(9))
    )
    _fails_cleanly(["finetune", "--task", "glue", "--glue-train", str(pair), *TINY, "--out", str(out)], capsys, [out],
                   "1 of 9 rows have an empty sentence (first: row 5)")  # fmt: skip
    _fails_cleanly(["finetune", "--task", "polarity", "--lr", "1e300", *TINY, "--out", str(out)], capsys, [out], "--lr")
    from icml26.smoothspike.data import TextTask

    with pytest.raises(ValueError, match="empty text"):
        TextTask("t", ["a", "  "], np.array([0, 1]), ("x", "y"))


def test_help_loads_no_torch():
    import subprocess
    import sys

    probe = (
        "import sys\nfrom icml26.smoothspike.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'tokenizers') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out
