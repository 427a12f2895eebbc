"""Issue 20 for nanoassembly: invalid plans are refused or reported, sizes bounded, outputs written safely."""

import json

import pytest

from icml26.nanoassembly.cli import main
from icml26.nanoassembly.data import MAX_SITES


@pytest.fixture
def plan_file(tmp_path):
    out = tmp_path / "plan.json"
    assert main(["plan", "--target", "block:4", "--molecules", "random:6", "--seed", "1", "--out", str(out)]) == 0
    return out


def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    bad = path.with_name("bad.json")
    bad.write_text(json.dumps(data))
    return bad


def test_assemble_refuses_a_plan_that_verify_rejects(plan_file, capsys):
    def collide(d):  # every move starts from the wrong site: the replay finds violations
        for m in d["moves"]:
            m["path"][0] = [0, 0]

    bad = _edit(plan_file, collide)
    assert main(["verify", str(bad)]) == 1
    with pytest.raises(ValueError, match="fails verification"):
        main(["assemble", "--plan", str(bad)])


def test_verify_reports_a_molecule_off_the_surface_and_a_negative_step(plan_file, capsys):
    def off(d):
        d["starts"][-1] = [d["shape"][0] + 5, 0]  # a surplus molecule that never moves

    def negative(d):
        for m in d["moves"]:
            m["step"] -= 5

    assert main(["verify", str(_edit(plan_file, off))]) == 1
    assert "off the" in capsys.readouterr().out
    assert main(["verify", str(_edit(plan_file, negative))]) == 1
    assert "negative layer index" in capsys.readouterr().out


def test_sizes_are_bounded_before_allocation(tmp_path):
    out = str(tmp_path / "p.json")
    with pytest.raises(ValueError, match="at most"):
        main(["plan", "--target", f"lieb:{MAX_SITES + 1}", "--out", out])
    with pytest.raises(ValueError, match="count must be in"):
        main(["plan", "--target", "block:4", "--molecules", "random:100000000", "--out", out])
    csv = tmp_path / "t.csv"
    csv.write_text("x,y\n0,0\n100000000,0\n")
    with pytest.raises(ValueError, match="far outside"):
        main(["plan", "--target", str(csv), "--out", out])
    with pytest.raises(SystemExit):
        main(["train-agent", "--episodes", "1e10", "--out", str(tmp_path / "a.npz")])
    assert not list(tmp_path.glob("*.json")) and not list(tmp_path.glob("*.npz"))


def test_outputs_are_the_files_named_and_checked_first(tmp_path, plan_file):
    agent = tmp_path / "agent.bin"
    assert main(["train-agent", "--episodes", "5", "--out", str(agent)]) == 0
    assert agent.exists() and not (tmp_path / "agent.bin.npz").exists()
    with pytest.raises(OSError, match="does not exist"):
        main(["train-agent", "--episodes", "5", "--out", str(tmp_path / "missing" / "a.npz")])
    with pytest.raises(ValueError, match=r"\.gif or \.png"):
        main(["assemble", "--plan", str(plan_file), "--render", str(tmp_path / "frames.mp4")])


def test_loaders_name_the_file_and_the_cause(tmp_path, plan_file):
    latin = tmp_path / "latin.json"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        main(["verify", str(latin)])
    with pytest.raises(IsADirectoryError, match="is a directory"):
        main(["verify", str(tmp_path)])
    npy = tmp_path / "agent.npy"
    npy.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(ValueError, match="not a saved Q-learning agent"):
        main(["assemble", "--plan", str(plan_file), "--agent", str(npy)])


def test_documented_maximum_is_what_plans_in_about_a_minute(tmp_path):
    """Issue 52: 'plan --target blob:5000' (the old documented maximum) ran for hours in silence; the maximum is
    now 1,000 (about a minute on one core), 5,000 is refused at once, and planning reports every stage."""
    assert MAX_SITES == 1_000
    with pytest.raises(ValueError, match="at most 1,000"):
        main(["plan", "--target", "blob:5000", "--out", str(tmp_path / "p.json")])
    from icml26.nanoassembly.assembly import plan_assembly
    from icml26.nanoassembly.data import make_instance, structure

    starts, targets, shape = make_instance(structure("block:9"), 12, seed=0)
    stages: list[str] = []
    plan_assembly(starts, targets, shape, progress=stages.append)
    assert stages[0].startswith("assignment of 9 targets") and stages[-1].startswith("sat schedule")
    assert any(s.startswith("repair round 1:") for s in stages)


def test_render_is_an_output_and_half_width_is_bounded(plan_file, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["assemble", "--plan", str(plan_file), "--render", str(plan_file)])
    assert exc.value.code == 2 and "would overwrite" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plan", "--target", "block:4", "--half-width", "1e300", "--out", str(plan_file)])


def test_a_garbage_agent_file_gets_no_pickle_advice(plan_file, tmp_path):
    from icml26.nanoassembly.agents import QLearningAgent
    from icml26.nanoassembly.config import preset

    junk = tmp_path / "agent.npz"
    junk.write_bytes(b"not an agent" * 30)
    with pytest.raises(ValueError, match="lacks NumPy") as exc:
        QLearningAgent.load(junk, preset("tip-changes"))
    assert "allow_pickle" not in str(exc.value)
