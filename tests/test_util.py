"""The small shared helpers."""

import argparse
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
    with pytest.raises(ValueError, match="'auto', 'cpu', 'cuda"):
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
        ["--n", "1e300"],  # an integral float, but beyond any size a verb could take
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


def test_results_are_written_with_the_mode_any_new_file_gets(tmp_path):
    import os
    import stat

    from icml26._util.io import save_npy

    mask = os.umask(0o022)
    try:
        save_npy(tmp_path / "a.npy", np.zeros(2))
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "a.npy").stat().st_mode) == 0o644  # not mkstemp's 0600


def test_absurd_magnitudes_and_learning_rates_are_refused(capsys):
    from icml26._util.cli import ArgumentParser, bounded_float, finite_float, learning_rate, positive_float

    parser = ArgumentParser(prog="icml26 demo")
    parser.add_argument("--sigma", type=positive_float, default=1.0, help="width")
    parser.add_argument("--shift", type=finite_float, default=0.0, help="shift")
    parser.add_argument("--lr", type=learning_rate, default=1e-3, help="learning rate")
    parser.add_argument("--t", type=bounded_float(0.0, 5.0, open_low=True, what="physics"), default=1.0, help="t")
    assert parser.parse_args(["--sigma", "1e12", "--shift=-1e15", "--lr", "10", "--t", "5"]).sigma == 1e12
    for bad in (
        ["--sigma", "1e300"],
        ["--shift=-1e16"],
        ["--lr", "1e300"],
        ["--lr", "11"],
        ["--lr", "0"],
        ["--t", "0"],
        ["--t", "5.5"],
    ):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(bad)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "error: argument" in err, err


def test_an_output_may_not_name_an_input(tmp_path, capsys):
    from icml26._util.cli import ArgumentParser

    data = tmp_path / "traj.nc"
    data.write_bytes(b"precious")
    parser = ArgumentParser(prog="icml26 demo")
    verbs = parser.add_subparsers(dest="verb")
    train = verbs.add_parser("train")
    train.add_argument("--data", help="input")
    train.add_argument("--checkpoint", output=True, help="written")
    train.add_argument("--json", help="summary")
    ok = parser.parse_args(["train", "--data", str(data), "--checkpoint", str(tmp_path / "m.pt"), "--json", "-"])
    assert ok.checkpoint.endswith("m.pt")
    for argv in (
        ["train", "--data", str(data), "--checkpoint", str(data)],  # declared output=True
        ["train", "--data", str(data), "--json", str(tmp_path / "." / "traj.nc")],  # an OUTPUT_DESTS name
        ["train", "--data", "x", "--checkpoint", str(tmp_path / "o"), "--json", str(tmp_path / "o")],  # two outputs
    ):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "choose another output path" in err, err
    assert data.read_bytes() == b"precious"
    # a choice word is no file: `--paradigm fc --out fc` writes the file fc
    train.add_argument("--paradigm", choices=["fc", "fa"], default="fa", help="a choice")
    assert parser.parse_args(["train", "--paradigm", "fc", "--checkpoint", "fc"]).checkpoint == "fc"


def test_load_array_reads_npy_and_npz_and_names_anything_else(tmp_path):
    from icml26._util.cli import one_line
    from icml26._util.io import load_array, save_npy, save_npz

    save_npy(tmp_path / "a.npy", np.arange(3))
    save_npz(tmp_path / "b.npz", x=np.ones(2))
    assert np.array_equal(load_array(tmp_path / "a.npy"), np.arange(3))
    assert np.array_equal(load_array(tmp_path / "b.npz")["x"], np.ones(2))
    (tmp_path / "junk.npy").write_bytes(bytes(range(256)))
    with pytest.raises(ValueError, match="not a NumPy"):
        load_array(tmp_path / "junk.npy")
    with pytest.raises(ValueError) as exc:  # numpy's own message, as a system that calls np.load sees it
        np.load(tmp_path / "junk.npy", allow_pickle=False)
    assert one_line(exc.value).startswith("the file is not a NumPy .npy/.npz array")


def test_device_arguments_mean_the_same_in_every_verb(capsys):
    torch = pytest.importorskip("torch")
    from icml26._util.cli import ArgumentParser
    from icml26._util.device import add_device_arguments, apply_device_arguments

    parser = ArgumentParser(prog="icml26 demo")
    add_device_arguments(parser)
    args = parser.parse_args(["--device", "CPU", "--threads", "1"])
    before = torch.get_num_threads()
    try:
        assert apply_device_arguments(args) == torch.device("cpu") and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    assert parser.parse_args([]).device == "auto" and parser.parse_args(["--device", "cuda:1"]).device == "cuda:1"
    for bad in (["--device", "tpu"], ["--device", "cpu:1"], ["--threads", "0"], ["--threads", "1e6"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_threads_alone_for_cpu_only_verbs(capsys):
    torch = pytest.importorskip("torch")
    from icml26._util.cli import ArgumentParser
    from icml26._util.device import add_threads_argument, apply_threads

    parser = ArgumentParser(prog="icml26 demo")
    add_threads_argument(parser, default=1)
    assert parser.parse_args([]).threads == 1 and "default: 1" in parser.format_help()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        apply_threads(parser.parse_args(["--threads", "1"]))
        assert torch.get_num_threads() == 1
        apply_threads(argparse.Namespace())  # a verb without --threads: untouched
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(SystemExit):
        parser.parse_args(["--threads", "0"])
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_progress_bars_follow_the_terminal_and_quiet():
    pytest.importorskip("tqdm")
    from icml26._util import progress as prog

    try:
        assert prog.progress(range(3)).disable  # stderr is not a terminal under pytest: tqdm's auto rule
        prog.set_quiet(True)
        assert prog.progress(range(3), disable=False).disable  # --quiet wins over a verb's own choice
    finally:
        prog.set_quiet(False)


def test_lazy_exports_load_on_first_use_and_list_their_names(monkeypatch):
    import sys
    import types

    from icml26._util.lazy import lazy_exports

    pkg = types.ModuleType("icml26._util")  # a package whose submodule 'io' and full 'icml26._util.seed' exist
    getattr_, dir_ = lazy_exports("icml26._util", {"save_npy": "io", "seed_everything": "icml26._util.seed"})
    from icml26._util.io import save_npy
    from icml26._util.seed import seed_everything

    assert getattr_("save_npy") is save_npy and getattr_("seed_everything") is seed_everything
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        getattr_("nope")
    assert {"save_npy", "seed_everything"} <= set(dir_()) and pkg.__name__ in sys.modules
