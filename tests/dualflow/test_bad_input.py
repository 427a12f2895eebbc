"""Issue 20 for dualflow: complex data refused, history checked against the trials, sizes bounded, outputs safe."""

import numpy as np
import pytest
import torch

from icml26 import cli
from icml26.dualflow import DualFlow
from icml26.dualflow.data import load_array


def _run(capsys, *argv):
    code = cli.main(["dualflow", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dualflow")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3, 12, 4))
    np.save(tmp / "x.npy", X)
    est = DualFlow(hidden=16, depth=1, n_steps=5, batch_size=16, latent_budget=2, random_state=0).fit(X)
    est.save(tmp / "m.pt")
    return tmp, X


def test_complex_input_is_refused_not_truncated(tmp_path, capsys):
    X = (np.ones((2, 6, 3)) + 1j).astype(complex)
    np.save(tmp_path / "c.npy", X)
    with pytest.raises(ValueError, match="complex"):
        load_array(tmp_path / "c.npy")
    with pytest.raises(ValueError, match="complex"):
        DualFlow(n_steps=1).fit(X)
    code, _, err = _run(capsys, "fit", str(tmp_path / "c.npy"), "--preset", "smoke", "--out", str(tmp_path / "m.pt"))
    assert code == 2 and "complex" in err and err.count("\n") == 1
    assert not (tmp_path / "m.pt").exists()


def test_history_longer_than_the_trials_is_refused(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(size=(3, 5, 2)))
    with pytest.raises(ValueError, match="history=4 needs trials of at least history \\+ 2 = 6 frames"):
        DualFlow(history=4, n_steps=1, latent_budget=1).fit(np.load(tmp_path / "x.npy"))
    code, _, err = _run(
        capsys, "fit", str(tmp_path / "x.npy"), "--preset", "smoke", "--history", "40", "--out", str(tmp_path / "m.pt")
    )
    assert code == 2 and "longest trial has 5" in err and err.count("\n") == 1


def test_huge_sizes_are_refused_up_front(fitted, tmp_path, capsys):
    tmp, X = fitted
    code, _, err = _run(
        capsys,
        "simulate",
        str(tmp / "m.pt"),
        str(tmp / "x.npy"),
        "--frames",
        "100000000",
        "--out",
        str(tmp_path / "f.npy"),
    )
    assert code == 2 and "rollout limit" in err
    est = DualFlow.load(tmp / "m.pt")
    with pytest.raises(ValueError, match="n_frames must lie in"):
        est.simulate(X, 10**8)
    code, _, err = _run(
        capsys,
        "generate",
        "lorenz",
        "--trials",
        "100000",
        "--time",
        "1000",
        "--neurons",
        "1000",
        "--out",
        str(tmp_path / "d.npz"),
    )
    assert code == 2 and "limit" in err and "GiB" in err and not (tmp_path / "d.npz").exists()


def test_output_is_the_file_named_and_checked_first(fitted, tmp_path, capsys):
    tmp, _ = fitted
    code, _, err = _run(capsys, "embed", str(tmp / "m.pt"), str(tmp / "x.npy"), "--out", str(tmp_path / "b.txt"))
    assert code == 2 and "must end with .npy or .npz" in err
    assert list(tmp_path.iterdir()) == []
    code, _, err = _run(capsys, "generate", "lorenz", "--trials", "2", "--time", "5", "--out", str(tmp_path / "d"))
    assert code == 2 and ".npz" in err and list(tmp_path.iterdir()) == []
    code, _, err = _run(capsys, "fit", str(tmp / "x.npy"), "--out", str(tmp_path / "missing" / "m.pt"))
    assert code == 2 and "does not exist" in err
    code, _, _ = _run(capsys, "embed", str(tmp / "m.pt"), str(tmp / "x.npy"), "--out", str(tmp_path / "z.npy"))
    assert code == 0 and np.load(tmp_path / "z.npy").ndim == 3


def test_checkpoint_loads_with_weights_only_and_foreign_files_are_named(fitted, tmp_path, capsys):
    tmp, X = fitted
    state = torch.load(tmp / "m.pt", weights_only=True)  # plain tensors and Python types only
    assert isinstance(state["mean_"], torch.Tensor)
    est = DualFlow.load(tmp / "m.pt")
    assert est.transform(X).shape[:2] == X.shape[:2]
    torch.save({"x": np.zeros(3)}, tmp_path / "evil.pt")  # needs pickle of a numpy array
    for path in (tmp_path / "evil.pt", tmp_path):
        code, _, err = _run(capsys, "embed", str(path), str(tmp / "x.npy"), "--out", str(tmp_path / "z.npy"))
        assert code == 2 and str(path) in err and err.count("\n") == 1 and "Traceback" not in err
    assert "is a directory" in err


def test_unknown_embedding_and_bad_init_d_are_refused(tmp_path, capsys):
    code, _, err = _run(capsys, "generate", "lorenz", "--embedding", "linear", "--out", str(tmp_path / "s.npz"))
    assert code == 2 and "embedding" in err and err.count("\n") == 1
    assert not (tmp_path / "s.npz").exists()
    with pytest.raises(ValueError, match="init_d"):
        DualFlow(n_steps=1, init_d=0.0).fit(np.random.default_rng(0).normal(size=(2, 6, 3)))


def test_budget_is_bounded_and_help_loads_no_torch(tmp_path, capsys):
    """Issue 52: --budget beyond any data's features (or below 1) is refused at parse time; the parser (and
    --help) is built without importing torch (the package's names load lazily)."""
    import subprocess
    import sys

    for budget in ("1e300", "0.5"):
        code, _, err = _run(capsys, "fit", str(tmp_path / "x.npy"), "--budget", budget, "--out", str(tmp_path / "m.pt"))
        assert code == 2 and "--budget" in err and len(err.strip().splitlines()) == 1, err
    probe = (
        "import sys\nfrom icml26.dualflow.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'sklearn', 'pandas') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out
