"""``icml26 vipo`` verbs end to end, and the bad inputs the issue names: exit 2, one line, no output file."""

import json

import numpy as np
import pytest

from icml26.cli import main as icml26_main

TINY = ["--members", "2", "--elites", "1", "--hidden", "8", "--model-epochs", "1", "--steps", "4",
        "--policy-hidden", "8", "--batch", "16", "--rollout-batch", "20", "--rollout-every", "2",
        "--eval-every", "2", "--eval-episodes", "1", "--last-evals", "2"]  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    d = tmp_path_factory.mktemp("vipo")
    argv = ["vipo", "make-dataset", "--env", "Pendulum-v1", "--quality", "random", "--transitions", "250"]
    assert icml26_main([*argv, "--out", str(d / "pend.hdf5")]) == 0
    return d / "pend.hdf5"


def _fails_cleanly(argv, capsys, must_not_exist=(), match=""):
    code = icml26_main(["vipo", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert match in err, err
    assert not any(p.exists() for p in must_not_exist)
    return err


@pytest.mark.parametrize("algo", ["mopo", "mobile+vipo"])
def test_train_and_evaluate(dataset, tmp_path, capsys, algo):
    pol, js, ev = tmp_path / "p.pt", tmp_path / "t.json", tmp_path / "e.json"
    argv = ["vipo", "train", "--dataset", str(dataset), "--algo", algo, *TINY, "--out", str(pol), "--json", str(js)]
    assert icml26_main(argv) == 0
    t = json.loads(js.read_text())
    assert t["algo"] == algo and len(t["eval_returns"]) == 2 and (t["value_gap"] is None) == (algo == "mopo")
    assert np.isfinite(t["final_score"]) and t["final_return"] == pytest.approx(np.mean(t["eval_returns"]))
    assert icml26_main(["vipo", "evaluate", "--policy", str(pol), "--episodes", "1", "--json", str(ev)]) == 0
    e = json.loads(ev.read_text())
    assert e["env"] == "Pendulum-v1" and len(e["returns"]) == 1 and "normalised" in e
    assert "normalised score" in capsys.readouterr().out


def _save(path, **arrays):
    np.savez(path, **arrays)
    return path


def _arrays(n=20, act=None):
    rng = np.random.default_rng(0)
    return {"observations": rng.normal(size=(n, 3)), "actions": act if act is not None else np.zeros((n, 1)),
            "rewards": rng.normal(size=n), "next_observations": rng.normal(size=(n, 3)), "terminals": np.zeros(n),
            "timeouts": np.zeros(n)}  # fmt: skip


def test_bad_inputs_named_by_the_issue(dataset, tmp_path, capsys):
    out = tmp_path / "p.pt"
    base = ["train", *TINY, "--out", str(out), "--env", "Pendulum-v1", "--dataset"]
    a = _arrays()
    del a["rewards"]
    _fails_cleanly([*base, str(_save(tmp_path / "a.npz", **a))], capsys, [out], "missing key(s) rewards")
    a = _arrays()
    a["terminals"] = np.zeros(7)
    _fails_cleanly([*base, str(_save(tmp_path / "b.npz", **a))], capsys, [out], "mismatched lengths")
    a = _arrays()
    a["rewards"][5] = np.nan
    _fails_cleanly([*base, str(_save(tmp_path / "c.npz", **a))], capsys, [out], "rewards holds NaN")
    a = _arrays()
    a["rewards"] = np.zeros((20, 2))
    _fails_cleanly([*base, str(_save(tmp_path / "r.npz", **a))], capsys, [out], "rewards has shape (20, 2)")
    a = _arrays()
    a["observations"] = np.full((20, 3), "x")
    _fails_cleanly([*base, str(_save(tmp_path / "s.npz", **a))], capsys, [out], "observations is not numeric")
    a = _arrays(act=np.full((20, 1), 3.0))
    _fails_cleanly([*base, str(_save(tmp_path / "d.npz", **a))], capsys, [out], "outside Pendulum-v1's action space")
    a = _arrays(act=np.zeros((20, 2)))
    _fails_cleanly([*base, str(_save(tmp_path / "e.npz", **a))], capsys, [out], "action space has 1")
    good = str(_save(tmp_path / "f.npz", **_arrays()))
    _fails_cleanly([*base[:-3], "--dataset", good, "--out", str(out)], capsys, [out], "names no environment")
    _fails_cleanly([*base[:-3], "--env", "Ant-v5", "--dataset", good, "--out", str(out)], capsys, [out],
                   "no termination function for environment 'Ant-v5'")  # fmt: skip
    _fails_cleanly(["make-dataset", "--env", "InvertedPendulum-v5", "--out", str(tmp_path / "x.npz")], capsys,
                   [tmp_path / "x.npz"], "no termination function")  # fmt: skip
    _fails_cleanly(["make-dataset", "--env", "Hopper-v5", "--quality", "medium", "--out", str(tmp_path / "h.npz")],
                   capsys, [tmp_path / "h.npz"], "needs a behaviour policy")  # fmt: skip
    _fails_cleanly(["make-dataset", "--out", str(tmp_path / "x.csv")], capsys, [tmp_path / "x.csv"], "must end with")
    _fails_cleanly([*base, str(dataset), "--members", "2", "--elites", "3"], capsys, [out], "exceeds --members")
    _fails_cleanly(["evaluate", "--policy", str(dataset)], capsys, [], "not a readable torch file")


def test_a_torch_file_that_is_not_a_policy(tmp_path, capsys):
    import torch

    other = tmp_path / "other.pt"
    torch.save({"state_dict": {}}, other)
    _fails_cleanly(["evaluate", "--policy", str(other)], capsys, [], "not an icml26 vipo policy")


def test_too_little_data_and_absurd_weights_are_refused(dataset, tmp_path, capsys):
    """Issue 52: 'train' on 2 transitions reported a normalised score; data under the stated minimum (100: a 10 %
    holdout of at least 10 transitions chooses the elites) is refused, naming the minimum."""
    from icml26.vipo.cli import MIN_TRANSITIONS
    from icml26.vipo.data import load_dataset, save_dataset

    data = load_dataset(dataset)
    tiny = save_dataset(tmp_path / "tiny.npz", {k: v[:2] if isinstance(v, np.ndarray) else v for k, v in data.items()})
    out = tmp_path / "p.pt"
    _fails_cleanly(["train", "--dataset", str(tiny), "--out", str(out)], capsys, [out],
                   f"holds 2 transitions; train needs at least {MIN_TRANSITIONS}")  # fmt: skip
    for flag in ("--phi", "--penalty"):
        _fails_cleanly(["train", "--dataset", str(dataset), flag, "1e300", "--out", str(out)], capsys, [out], flag)


def test_speed_benchmark_skips_d3rlpy_without_an_environment_for_it():
    """benchmarks/vipo_speed.py no longer defaults to a fixed temporary virtualenv: without --d3rlpy-python and
    without d3rlpy here it skips the peer row and says how to provide one."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).parents[2] / "benchmarks" / "vipo_speed.py"
    spec = importlib.util.spec_from_file_location("vipo_speed_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    python, why = bench.d3rlpy_python(Path("/no/such/python"))
    assert python is None and "does not exist" in why
    python, why = bench.d3rlpy_python(None)
    if importlib.util.find_spec("d3rlpy") is None:
        assert python is None and "--d3rlpy-python" in why
    else:
        assert python == sys.executable
    assert bench.d3rlpy_python(Path(sys.executable)) == (sys.executable, "")


def test_help_loads_no_torch():
    import subprocess
    import sys

    probe = (
        "import sys\nfrom icml26.vipo.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'gymnasium') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out
