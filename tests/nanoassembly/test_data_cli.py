"""Structures, site loaders and the CLI verbs."""

import numpy as np
import pytest

from icml26.nanoassembly.cli import main
from icml26.nanoassembly.data import corral_sites, lieb_sites, load_sites_csv, make_instance, structure, text_sites


def test_structures():
    assert len(text_sites("I")) == 13
    assert len(text_sites("I", scale=2)) == 52
    lieb = lieb_sites(420)
    assert len(lieb) == 420 and len(np.unique(lieb, axis=0)) == 420
    d = np.linalg.norm(lieb[:, None] - lieb[None], axis=-1) + np.eye(420) * 99
    assert d.min() >= 2  # CO-like spacing
    ring = corral_sites(40)
    r = np.linalg.norm(ring - ring.mean(0), axis=1)
    assert r.std() < 0.1 * r.mean()
    assert len(structure("blob:50", np.random.default_rng(0))) == 50


def test_make_instance_ground_truth():
    starts, targets, shape = make_instance(lieb_sites(50), 60, seed=1)
    assert len(starts) == 60 and len(targets) == 50
    assert not {tuple(s) for s in starts.tolist()} & {tuple(t) for t in targets.tolist()}
    assert (starts >= 0).all() and (starts < shape).all() and (targets < shape).all()
    with pytest.raises(ValueError, match="more targets"):
        make_instance(lieb_sites(50), 10)


def test_csv_loader(tmp_path):
    f = tmp_path / "sites.csv"
    f.write_text("x,y\n1,2\n3,4\n")
    assert load_sites_csv(f).tolist() == [[1, 2], [3, 4]]
    f.write_text("1,2\n3.5,4\n")
    with pytest.raises(ValueError, match="off the lattice"):
        load_sites_csv(f)
    f.write_text("1,2,3\n")
    with pytest.raises(ValueError, match="2 columns"):
        load_sites_csv(f)
    with pytest.raises(OSError):
        load_sites_csv(tmp_path / "none.csv")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_csv_loader_rejects_non_finite_coordinates(tmp_path, bad):
    f = tmp_path / "sites.csv"
    f.write_text(f"x,y\n1,2\n{bad},4\n")
    with pytest.raises(ValueError, match=r"sites.csv:3: coordinates must be finite"):
        load_sites_csv(f)


@pytest.mark.parametrize("spec", ["text:", "text:I$", "lieb:x", "lieb:-3", "hexagon:3"])
def test_bad_structure_specs(spec):
    with pytest.raises(ValueError):
        structure(spec)


def test_cli_plan_verify_assemble(tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert main(["plan", "--target", "text:HI", "--molecules", "random:30", "--out", str(out)]) == 0
    assert main(["verify", str(out)]) == 0
    assert "valid" in capsys.readouterr().out
    gif = tmp_path / "a.gif"
    assert (
        main(["assemble", "--plan", str(out), "--agent", "scripted", "--physics", "calibrated", "--render", str(gif)])
        == 0
    )
    assert gif.stat().st_size > 0
    csv = tmp_path / "t.csv"
    csv.write_text("x,y\n5,5\n6,5\n")
    mol = tmp_path / "m.csv"
    mol.write_text("x,y\n0,0\n9,9\n")
    assert main(["plan", "--target", str(csv), "--molecules", str(mol), "--size", "10x10", "--out", str(out)]) == 0


def test_cli_bad_input(tmp_path):
    with pytest.raises(ValueError, match="more targets"):
        main(["plan", "--target", "text:HI", "--molecules", "random:5", "--out", str(tmp_path / "p.json")])
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(ValueError, match="not a nanoassembly plan"):
        main(["verify", str(bad)])
    with pytest.raises(ValueError, match="algo"):
        main(["train-agent", "--algo", "ppo", "--out", str(tmp_path / "a.npz")])
    with pytest.raises(SystemExit):
        main(["plan", "--target", "text:HI", "--size", "10by10"])


def test_cli_size_with_random_molecules_is_not_silently_ignored(tmp_path):
    out = tmp_path / "p.json"
    with pytest.raises(ValueError, match="--size applies only to a molecules CSV"):
        main(["plan", "--target", "text:HI", "--molecules", "random:30", "--size", "80x80", "--out", str(out)])
