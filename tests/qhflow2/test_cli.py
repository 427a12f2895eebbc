"""``icml26 qhflow2`` verbs end to end, and the bad inputs the issue names: exit 2, one line, no output file."""

import json

import numpy as np
import pytest

from icml26.cli import main as icml26_main


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("qh")
    argv = ["qhflow2", "build-dataset", "--molecule", "water", "--frames", "4", "--basis", "sto-3g", "--xc", "hf",
            "--out", str(d / "w.npz"), "--xyz-out", str(d / "w.xyz")]  # fmt: skip
    assert icml26_main(argv) == 0
    for kind in ("so2", "mlp", "mlip"):
        argv = ["qhflow2", "train", "--data", str(d / "w.npz"), "--model", kind, "--steps", "2", "--batch", "2",
                "--channels", "4", "--lmax", "1", "--layers", "1", "--out", str(d / f"{kind}.pt")]  # fmt: skip
        assert icml26_main(argv) == 0
    return d


def _fails_cleanly(argv, capsys, must_not_exist=(), match=""):
    code = icml26_main(["qhflow2", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert match in err, err
    assert not any(p.exists() for p in must_not_exist)
    return err


def test_evaluate_and_predict(work, capsys):
    js = work / "e.json"
    argv = ["qhflow2", "evaluate", "--checkpoint", str(work / "so2.pt"), "--data", str(work / "w.npz"), "--frames",
            "2", "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    res = json.loads(js.read_text())
    assert res["frames"] == 2 and res["E MAE [meV]"] > 0 and "F MAE [meV/A]" in res
    assert (
        icml26_main(["qhflow2", "evaluate", "--checkpoint", str(work / "mlip.pt"), "--data", str(work / "w.npz")]) == 0
    )
    out, pj = work / "p.npz", work / "p.json"
    argv = ["qhflow2", "predict", str(work / "w.xyz"), "--checkpoint", str(work / "so2.pt"), "--out", str(out),
            "--json", str(pj)]  # fmt: skip
    assert icml26_main(argv) == 0
    with np.load(out) as z:
        assert z["H"].shape == (7, 7) and z["F"].shape == (3, 3)
        np.testing.assert_allclose(z["H"], z["H"].T, atol=1e-12)
    assert "E = " in capsys.readouterr().out
    assert icml26_main(["qhflow2", "predict", str(work / "w.xyz"), "--checkpoint", str(work / "mlip.pt")]) == 0


def test_bad_inputs_named_by_the_issue(work, tmp_path, capsys):
    out = tmp_path / "x.npz"
    ck = str(work / "so2.pt")
    # unknown element for the basis / unknown basis / unknown functional
    hexyz = tmp_path / "ar.xyz"
    hexyz.write_text("2\n\nAr 0 0 0\nAr 0 0 1.9\n")
    _fails_cleanly(["build-dataset", "--xyz", str(hexyz), "--basis", "def2-svpxx", "--out", str(out)], capsys,
                   [out], "cannot be built")  # fmt: skip
    _fails_cleanly(["build-dataset", "--xc", "nonsense", "--out", str(out)], capsys, [out], "unknown exchange")
    _fails_cleanly(["predict", str(hexyz), "--checkpoint", ck], capsys, [], "never saw")
    # overlapping atoms
    ov = tmp_path / "ov.xyz"
    ov.write_text("3\n\nO 0 0 0\nH 0.1 0 0\nH -0.24 0.93 0\n")
    _fails_cleanly(["build-dataset", "--xyz", str(ov), "--out", str(out)], capsys, [out], "overlap")
    # charged / open-shell
    _fails_cleanly(["predict", str(work / "w.xyz"), "--checkpoint", ck, "--charge", "1"], capsys, [], "closed-shell")
    oh = tmp_path / "oh.xyz"
    oh.write_text("2\n\nO 0 0 0\nH 0.97 0 0\n")
    _fails_cleanly(["build-dataset", "--xyz", str(oh), "--out", str(out)], capsys, [out], "open-shell")
    # a checkpoint for another basis
    svp = tmp_path / "svp.npz"
    assert icml26_main(["qhflow2", "build-dataset", "--frames", "1", "--basis", "def2-svp", "--xc", "hf", "--out",
                        str(svp)]) == 0  # fmt: skip
    _fails_cleanly(["evaluate", "--checkpoint", ck, "--data", str(svp)], capsys, [], "for basis 'sto-3g'")
    # geometries in the wrong unit: Angstrom read as Bohr (squeezed), Bohr read as Angstrom (stretched)
    _fails_cleanly(["predict", str(work / "w.xyz"), "--checkpoint", ck, "--unit", "bohr"], capsys, [], "wrong unit")
    bohr = tmp_path / "bohr.xyz"
    bohr.write_text("3\n\nO 0 0 0\nH 1.8088 0 0\nH -0.4535 1.7510 0\n")
    _fails_cleanly(["predict", str(bohr), "--checkpoint", ck], capsys, [], "--unit bohr")
    assert icml26_main(["qhflow2", "predict", str(bohr), "--checkpoint", ck, "--unit", "bohr"]) == 0
    # not a checkpoint; an MLP checkpoint for another atom count
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    _fails_cleanly(["evaluate", "--checkpoint", str(junk), "--data", str(svp)], capsys, [], "cannot be read")
    eth = tmp_path / "eth.xyz"
    from icml26.qhflow2.data import get_molecule, write_xyz

    write_xyz(eth, get_molecule("ethanol"))
    _fails_cleanly(["predict", str(eth), "--checkpoint", str(work / "mlp.pt")], capsys, [], "never saw")
    _fails_cleanly(["build-dataset", "--temperature", "1e6", "--out", str(out)], capsys, [out], "(0, 3000]")


def test_untrained_models_and_nan_labels_are_refused(work, tmp_path, capsys):
    """Issue 52: --steps 0 saved an untrained model; a NaN in H read as 'training diverged; lower the learning
    rate'. Both are refused before any training, naming what is wrong."""
    out = tmp_path / "m.pt"
    _fails_cleanly(
        ["train", "--data", str(work / "w.npz"), "--steps", "0", "--out", str(out)], capsys, [out], "--steps"
    )
    _fails_cleanly(["train", "--data", str(work / "w.npz"), "--lr", "1e300", "--out", str(out)], capsys, [out], "--lr")
    with np.load(work / "w.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays["H"] = arrays["H"].copy()
    arrays["H"][1, 0, 0] = np.nan
    bad = tmp_path / "nan.npz"
    np.savez(bad, **arrays)
    err = _fails_cleanly(["train", "--data", str(bad), "--out", str(out)], capsys, [out], "H has NaN")
    assert "1 of 4 frame(s)" in err and "frame 1" in err and "learning rate" not in err
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not numpy" * 50)
    _fails_cleanly(["train", "--data", str(junk), "--out", str(out)], capsys, [out], "NumPy's header")


def test_flags_for_other_models_are_refused(work, capsys):
    data = str(work / "w.npz")
    out = work / "x.pt"
    _fails_cleanly(["train", "--data", data, "--model", "so2", "--matched", "--out", str(out)], capsys, [out],
                   "--matched applies to --model tp")  # fmt: skip
    _fails_cleanly(["train", "--data", data, "--model", "mlip", "--eps-weight", "1", "--out", str(out)], capsys,
                   [out], "--eps-weight applies to Hamiltonian models")  # fmt: skip
    _fails_cleanly(["train", "--data", data, "--model", "tp", "--edge-update", "tp", "--out", str(out)], capsys, [out],
                   "--edge-update applies to --model so2")  # fmt: skip
    for flags, named in ((["--lmax", "3"], "--lmax"), (["--layers", "2", "--eps-from", "0.5"], "--layers, --eps-from")):
        _fails_cleanly(["train", "--data", data, "--model", "mace", *flags, "--out", str(out)], capsys, [out],
                       f"--model mace takes no {named}")  # fmt: skip


def test_matched_tp_with_orbital_energy_loss_trains_and_evaluates(work):
    argv = ["qhflow2", "train", "--data", str(work / "w.npz"), "--model", "tp", "--matched", "--eps-weight", "1",
            "--steps", "2", "--batch", "2", "--channels", "4", "--lmax", "1", "--layers", "1", "--out",
            str(work / "tpm.pt")]  # fmt: skip
    assert icml26_main(argv) == 0
    js = work / "tpm.json"
    argv = ["qhflow2", "evaluate", "--checkpoint", str(work / "tpm.pt"), "--data", str(work / "w.npz"), "--frames",
            "1", "--no-forces", "--json", str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    assert json.loads(js.read_text())["H MAE [uHa]"] > 0


def test_mace_trains_evaluates_and_predicts(work):
    pytest.importorskip("mace")
    argv = ["qhflow2", "train", "--data", str(work / "w.npz"), "--model", "mace", "--steps", "2", "--batch", "2",
            "--channels", "4", "--out", str(work / "mace.pt")]  # fmt: skip
    assert icml26_main(argv) == 0
    js = work / "mace.json"
    argv = ["qhflow2", "evaluate", "--checkpoint", str(work / "mace.pt"), "--data", str(work / "w.npz"), "--json",
            str(js)]  # fmt: skip
    assert icml26_main(argv) == 0
    res = json.loads(js.read_text())
    assert res["model"] == "mace" and res["E MAE [meV]"] > 0 and res["F MAE [meV/A]"] > 0
    pj = work / "mace-p.json"
    argv = ["qhflow2", "predict", str(work / "w.xyz"), "--checkpoint", str(work / "mace.pt"), "--json", str(pj)]
    assert icml26_main(argv) == 0
    pred = json.loads(pj.read_text())
    assert np.asarray(pred["F_hartree_per_bohr"]).shape == (3, 3) and np.isfinite(pred["E_hartree"])
