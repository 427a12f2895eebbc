"""The exhaustive search as Ray tasks gives exactly the one-process library, scores and Pareto front."""

import contextlib
import json

import numpy as np
import pytest

from icml26 import cli
from icml26.srfpt.cli import main
from icml26.srfpt.distributed import RayMap
from icml26.srfpt.search import ExhaustiveSR

cloudpickle = pytest.importorskip("cloudpickle")


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.5, 2.0, size=(n, 2))
    return X, X[:, 0] ** 2 * np.sin(X[:, 1]) + 0.05 * rng.standard_normal(n)


def _csv(path, X, y):
    """Write (X, y) as the CSV the CLI reads: columns x0, x1, target."""
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="x0,x1,target", comments="")
    return path


def _same_search(a: ExhaustiveSR, b: ExhaustiveSR) -> None:
    for name in ("op", "left", "right", "grade", "size", "values"):
        assert np.array_equal(getattr(a.library_, name), getattr(b.library_, name)), name
    assert a.library_.n_candidates == b.library_.n_candidates
    assert np.array_equal(a.approx_mse_, b.approx_mse_)  # bit for bit: same additions in the same order
    front = [(p.size, p.mse, str(p.expression)) for p in a.pareto_]
    assert front == [(p.size, p.mse, str(p.expression)) for p in b.pareto_]


class InProcessMap(RayMap):
    """RayMap's partitioning and reassembly with the tasks run here, each through a cloudpickle round trip
    (what Ray does to a task's arguments)."""

    def __init__(self, n_cpus):
        self.n_cpus, self.n_tasks = n_cpus, 0

    def _map(self, task, items):
        self.n_tasks += len(items)
        task = cloudpickle.loads(cloudpickle.dumps(task))
        return [task.run(cloudpickle.loads(cloudpickle.dumps(item))) for item in items]


@pytest.mark.parametrize("n_cpus", [1, 3, 16])
def test_partitioned_search_equals_one_process(n_cpus, monkeypatch):
    """Blocks split by root operator, child sizes and left-row ranges, scored by row groups: same front."""
    import icml26.srfpt.distributed as distributed
    import icml26.srfpt.enumerate as enumerate_module

    X, y = _data(n=2000)
    kw = dict(max_size=6, ops="add,mul,sub,div,sin", n_probe=12)
    serial = ExhaustiveSR(**kw).fit(X, y)
    monkeypatch.setattr(enumerate_module, "_CHUNK", 512)  # many chunks per block, so the splits really cut
    small_chunks = ExhaustiveSR(**kw).fit(X, y)
    mapper = InProcessMap(n_cpus)
    monkeypatch.setattr(distributed, "ray_session", lambda address, num_cpus=None: contextlib.nullcontext(mapper))
    parted = ExhaustiveSR(**kw, ray_address="local").fit(X, y)
    _same_search(small_chunks, parted)
    assert [(p.size, p.mse) for p in serial.pareto_] == [(p.size, p.mse) for p in parted.pareto_]
    assert mapper.n_tasks > 2 * n_cpus  # the work was really cut into pieces


@pytest.mark.slow
def test_local_ray_with_two_cpus_gives_the_one_process_front(monkeypatch, tmp_path, capsys):
    """A real local Ray (2 CPUs): the library call and ``icml26 srfpt search --ray-address`` (~35 s, slow)."""
    ray = pytest.importorskip("ray")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    X, y = _data()
    kw = dict(max_size=6, ops="add,mul,sub,div,sin,exp")
    serial = ExhaustiveSR(**kw).fit(X, y)
    data = tmp_path / "d.csv"
    _csv(data, X, y)
    argv = ["search", str(data), "--target", "target", "--max-size", "5", "--json", "-"]
    assert main(argv) == 0
    one = json.loads(capsys.readouterr().out)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        on_ray = ExhaustiveSR(**kw, ray_address="local", n_workers=2).fit(X, y)  # uses the running instance
        assert main([*argv, "--ray-address", "local", "--workers", "2"]) == 0
        many = json.loads(capsys.readouterr().out)
    finally:
        ray.shutdown()
    _same_search(serial, on_ray)
    assert one["pareto"] == many["pareto"] and one["best"] == many["best"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ray-address", "/tmp/data.csv"], "is not a Ray address"),
        (["--ray-address", ""], "is not a Ray address"),
        (["--workers", "2"], "use it with --ray-address local"),
        (["--ray-address", "local", "--workers", "0"], "must be in [1, 1,024]"),
    ],
)
def test_cli_ray_arguments_are_checked_before_any_work(tmp_path, capsys, argv, message):
    data = tmp_path / "d.csv"
    X, y = _data(n=20)
    _csv(data, X, y)
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(cli.main(["srfpt", "search", str(data), "--target", "target", *argv]))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize(
    ("kw", "message"),
    [({"n_workers": 0}, "n_workers must be a positive integer"), ({"ray_address": " "}, "ray_address must be")],
)
def test_bad_ray_settings_are_refused(kw, message):
    X, y = _data(n=20)
    with pytest.raises(ValueError, match=message):
        ExhaustiveSR(max_size=3, **kw).fit(X, y)


@pytest.mark.timeout(60)
def test_unreachable_ray_address_is_one_line_in_seconds(tmp_path, capsys):
    """ray.init retries an address nothing listens on for minutes; the search refuses it at once, no output."""
    pytest.importorskip("ray")
    data, out = tmp_path / "d.csv", tmp_path / "front.json"
    X, y = _data(n=20)
    _csv(data, X, y)
    argv = ["srfpt", "search", str(data), "--target", "target", "--max-size", "3", "--json", str(out)]
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(cli.main([*argv, "--ray-address", "127.0.0.1:1"]))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot connect to Ray at '127.0.0.1:1'" in err[0], err
    assert not out.exists()


def test_a_lost_ray_worker_is_one_line(tmp_path, capsys, monkeypatch):
    """A worker (or node) dying mid-search becomes one ConnectionError line from the CLI, exit 2, no output."""
    ray = pytest.importorskip("ray")
    import icml26.srfpt.distributed as distributed

    class Crashing:  # the parts of the ray module RayMap touches; `get` reports a crashed worker
        exceptions = ray.exceptions

        @staticmethod
        def put(obj):
            return obj

        @staticmethod
        def get(refs):
            raise ray.exceptions.WorkerCrashedError()

    mapper = RayMap.__new__(RayMap)
    mapper.ray, mapper.n_cpus, mapper.n_tasks = Crashing, 2, 0
    mapper.remote = type("Remote", (), {"remote": staticmethod(lambda ref, item: None)})
    monkeypatch.setattr(distributed, "ray_session", lambda address, num_cpus=None: contextlib.nullcontext(mapper))
    data, out = tmp_path / "d.csv", tmp_path / "front.json"
    X, y = _data(n=20)
    _csv(data, X, y)
    argv = ["srfpt", "search", str(data), "--target", "target", "--max-size", "3", "--json", str(out)]
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(cli.main([*argv, "--ray-address", "auto"]))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Ray lost a search task (WorkerCrashedError" in err[0], err
    assert not out.exists()
