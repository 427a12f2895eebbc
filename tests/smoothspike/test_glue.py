"""The shipped GLUE subsets (SST-2, CoLA, RTE), the loader of GLUE's own layout, the GLUE score, and
``icml26 smoothspike finetune --task sst2|cola|rte`` end to end from MiniLM (a few steps)."""

import gzip
import json

import numpy as np
import pytest
import torch

from icml26.cli import main as icml26_main
from icml26.smoothspike.data import GLUE_DIR, glue_score, load_glue, load_task

torch.set_num_threads(1)


@pytest.mark.parametrize(
    ("task", "n_train", "n_dev", "labels"),
    [("sst2", 4000, 872, ("0", "1")), ("cola", 4000, 1301, ("0", "1")),
     ("rte", 2127, 363, ("entailment", "not_entailment"))],
)  # fmt: skip
def test_shipped_glue_subsets(task, n_train, n_dev, labels):
    train, dev = load_glue(task, "train"), load_glue(task, "dev")
    assert (len(train), len(dev)) == (n_train, n_dev)
    assert train.label_names == labels and dev.label_names == labels and train.name == task
    assert set(np.unique(dev.labels)) == {0, 1}  # both classes present
    assert (train.pairs is not None) == (task == "rte") == (dev.pairs is not None)
    assert load_task(task).texts == train.texts
    assert (GLUE_DIR / "README.md").is_file()


def test_sst2_dev_is_glue_dev_set():
    dev = load_glue("sst2", "dev")
    assert dev.texts[0].startswith("it 's a charming and often affecting journey")
    assert np.bincount(dev.labels).tolist() == [428, 444]  # GLUE's SST-2 dev: 428 negative, 444 positive


def test_load_glue_reads_a_full_glue_download(tmp_path):
    """GLUE's own uncompressed layout: SST-2 / RTE with a header, CoLA without one (4 columns)."""
    (tmp_path / "CoLA").mkdir()
    (tmp_path / "CoLA" / "train.tsv").write_text("gj04\t1\t\tThe dog barked.\ngj04\t0\t*\tDog the barked.\n")
    cola = load_glue("cola", "train", tmp_path)
    assert cola.texts == ["The dog barked.", "Dog the barked."] and cola.labels.tolist() == [1, 0]
    (tmp_path / "RTE").mkdir()
    with gzip.open(tmp_path / "RTE" / "dev.tsv.gz", "wt") as fh:
        fh.write("index\tsentence1\tsentence2\tlabel\n0\tA b.\tB.\tnot_entailment\n1\tC d.\tC.\tentailment\n")
    rte = load_glue("rte", "dev", tmp_path)
    assert rte.pairs == ["B.", "C."] and rte.labels.tolist() == [1, 0]
    with pytest.raises(FileNotFoundError, match=r"no SST-2/train\.tsv"):
        load_glue("sst2", "train", tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_glue("sst2", "train", tmp_path / "nope")
    (tmp_path / "CoLA" / "dev.tsv").write_text("gj04\t2\t\tA sentence.\n")
    with pytest.raises(ValueError, match="row 1: label '2' is not 0 or 1"):
        load_glue("cola", "dev", tmp_path)
    (tmp_path / "CoLA" / "dev.tsv").write_text("sentence\tlabel\nA sentence.\t1\n")
    with pytest.raises(ValueError, match="row 1: 2 columns; CoLA has 4"):
        load_glue("cola", "dev", tmp_path)
    (tmp_path / "SST-2").mkdir()
    (tmp_path / "SST-2" / "dev.tsv.gz").write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="not a readable gzip file"):
        load_glue("sst2", "dev", tmp_path)
    with pytest.raises(ValueError, match="unknown GLUE task"):
        load_glue("mnli")
    with pytest.raises(ValueError, match="split must be"):
        load_glue("sst2", "test")


def test_glue_score_uses_each_tasks_metric():
    m = {"accuracy": 0.8, "matthews": 0.3, "f1": 0.7}
    assert glue_score("sst2", m) == pytest.approx(80.0)
    assert glue_score("cola", m) == pytest.approx(30.0)
    assert glue_score("rte", m) == pytest.approx(80.0)


@pytest.mark.parametrize("task", ["sst2", "cola", "rte"])
def test_finetune_glue_task_from_minilm_runs_a_few_steps(task, tmp_path):
    out, js = tmp_path / "m.pt", tmp_path / "m.json"
    argv = ["smoothspike", "finetune", "--task", task, "--rotation", "learnable" if task == "rte" else "hadamard",
            "--layers", "1", "--steps", "2", "--batch", "4", "--max-len", "16", "--train-size", "32",
            "--val-size", "8", "--test-size", "16", "--out", str(out), "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    rep = json.loads(js.read_text())
    assert rep["task"] == task and rep["init"] == "minilm" and rep["steps"] == 2
    metric = rep["metrics"]["matthews" if task == "cola" else "accuracy"]
    assert rep["metrics"]["GLUE score"] == pytest.approx(100 * metric)
    # the claims' recipe by default: the rate chosen from the claims' grid on validation, a distilled teacher
    assert set(rep["validation scores"]) == {"0.001"} and rep["lr"] == 1e-3
    assert rep["teacher metrics"]["GLUE score"] == pytest.approx(100 * rep["teacher metrics"][
        "matthews" if task == "cola" else "accuracy"])  # fmt: skip
    from icml26.smoothspike.train import load_checkpoint

    model, meta = load_checkpoint(out)
    assert model.cfg.dim == 384 and model.cfg.layers == 1 and meta["task"] == task


def test_finetune_glue_bad_inputs(tmp_path, capsys):
    out = tmp_path / "m.pt"
    base = ["smoothspike", "finetune", "--layers", "1", "--steps", "1", "--out", str(out)]
    for argv, match in (
        ([*base, "--task", "tweets", "--glue-dir", str(tmp_path)], "--glue-dir needs --task sst2, cola or rte"),
        ([*base, "--task", "sst2", "--glue-dir", str(tmp_path / "none")], "is not a folder"),
        ([*base, "--task", "sst2", "--glue-dir", str(tmp_path)], "no SST-2/train.tsv"),
        ([*base, "--task", "rte", "--labels", "yes,no"], "do not match rte's labels"),
        ([*base, "--task", "cola", "--glue-train", str(tmp_path / "x.tsv")], "use --glue-dir"),
        ([*base, "--task", "sst2", "--lr", "1e-4", "--lr-grid", "1e-4,1e-3"], "not both"),
        ([*base, "--task", "sst2", "--train-size", "50", "--val-size", "49"], "leaves fewer than 2"),
        ([*base, "--task", "tweets", "--distill"], "--distill needs --init minilm"),
        ([*base, "--task", "sst2", "--lr-grid", "1e-4,nan"], "--lr-grid"),
        ([*base, "--task", "sst2", "--lr-grid", ","], "--lr-grid"),
    ):
        assert icml26_main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and match in err, err
        assert not out.exists()
