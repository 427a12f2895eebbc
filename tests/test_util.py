"""The small shared helpers."""

import random

import numpy as np
import pytest

from icml26._util import Timer, best_time, resolve_device, seed_everything


def test_seed_everything_is_reproducible_and_validates():
    g1 = seed_everything(7)
    a = (random.random(), np.random.rand(), g1.normal())  # noqa: NPY002
    g2 = seed_everything(7)
    assert a == (random.random(), np.random.rand(), g2.normal())  # noqa: NPY002
    with pytest.raises(TypeError, match="integer"):
        seed_everything(1.5)
    with pytest.raises(ValueError, match="non-negative"):
        seed_everything(-1)


def test_seed_everything_seeds_torch():
    torch = pytest.importorskip("torch")
    seed_everything(3)
    x = torch.rand(3)
    seed_everything(3)
    assert torch.equal(x, torch.rand(3))


def test_resolve_device():
    torch = pytest.importorskip("torch")
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="'auto', 'cpu' or 'cuda"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


def test_timers():
    with Timer() as t:
        sum(range(1000))
    assert t.seconds >= 0
    assert best_time(lambda: None, repeat=2) >= 0
    with pytest.raises(ValueError, match="repeat"):
        best_time(lambda: None, repeat=0)


# --- output safety (icml26._util.io) -----------------------------------------------------------------------


def test_check_output_path_refuses_before_any_work(tmp_path):
    from icml26._util.io import check_output_path

    assert check_output_path(tmp_path / "a.npy") == tmp_path / "a.npy"
    with pytest.raises(IsADirectoryError, match="is a directory"):
        check_output_path(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_output_path(tmp_path / "missing" / "a.npy")
    with pytest.raises(ValueError, match=r"must end with \.npz"):
        check_output_path(tmp_path / "a.txt", suffixes=(".npz",))
    with pytest.raises(ValueError, match="names no file"):
        check_output_path("")


def test_atomic_output_keeps_the_old_result_when_the_work_fails(tmp_path):
    from icml26._util.io import atomic_output

    target = tmp_path / "result.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("work failed")
    assert target.read_text() == "old"
    with pytest.raises(OSError, match="nothing was written"), atomic_output(target):
        pass  # an empty result never replaces a real one
    assert target.read_text() == "old"
    with atomic_output(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.txt"]  # no temporary left behind


def test_save_npy_and_npz_write_exactly_the_named_file(tmp_path):
    from icml26._util.io import save_npy, save_npz

    save_npy(tmp_path / "basis.txt", np.eye(2))
    save_npz(tmp_path / "arrays.bin", a=np.arange(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arrays.bin", "basis.txt"]
    assert np.array_equal(np.load(tmp_path / "basis.txt"), np.eye(2))
    assert np.array_equal(np.load(tmp_path / "arrays.bin")["a"], np.arange(3))


def test_check_input_file(tmp_path):
    from icml26._util.io import check_input_file

    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_input_file(tmp_path / "nope")
    with pytest.raises(IsADirectoryError):
        check_input_file(tmp_path)
    with pytest.raises(ValueError, match="is empty"):
        check_input_file(tmp_path / "empty")


# --- the CLI convention (icml26._util.cli) ------------------------------------------------------------------


def test_parser_errors_are_one_line_and_numbers_are_validated(capsys):
    from icml26._util.cli import ArgumentParser, bounded_int, finite_float, fraction, positive_int

    parser = ArgumentParser(prog="icml26 demo")
    parser.add_argument("--n", type=positive_int, default=3, help="count")
    parser.add_argument("--cells", type=bounded_int(1, 1000, what="memory"), default=10, help="cells")
    parser.add_argument("--noise", type=finite_float, default=0.1, help="noise")
    parser.add_argument("--p", type=fraction, default=0.5, help="probability")
    assert parser.parse_args(["--n", "1e3"]).n == 1000  # integral scientific notation is fine
    for bad in (
        ["--n", "0"],
        ["--n", "1.5"],
        ["--cells", "1e12"],
        ["--noise", "nan"],
        ["--noise", "inf"],
        ["--p", "1.5"],
        ["--n", "x"],
    ):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(bad)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith("icml26 demo: error: argument")
    with pytest.raises(SystemExit):
        parser.parse_args(["--cells", "5000"])
    assert "(memory)" in capsys.readouterr().err


def test_help_shows_defaults(capsys):
    from icml26._util.cli import ArgumentParser

    parser = ArgumentParser(prog="icml26 demo")
    parser.add_argument("--steps", type=int, default=7, help="number of steps")
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    assert "(default: 7)" in capsys.readouterr().out


def test_help_names_no_meaningless_default(capsys):
    from icml26._util.cli import ArgumentParser

    parser = ArgumentParser(prog="icml26 demo")
    parser.add_argument("data", help="input file")
    parser.add_argument("--out", required=True, help="output file")
    parser.add_argument("--seed", type=int, default=None, help="random seed; a fresh one when absent")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--rate", type=float, default=0.5, help="rate (default: one half)")
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    out = capsys.readouterr().out
    assert "default: None" not in out and "default: False" not in out
    assert out.count("default") == 1  # only the one the help text names itself
