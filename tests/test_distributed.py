"""icml26 reproduce on Ray: the same report as the single-process run, streamed to a journal and resumable."""

import json
import os
from pathlib import Path

import pytest

from icml26 import cli, distributed
from icml26.claims import SeedRun, run_seed, summarize_claim
from icml26.registry import SYSTEMS

ROOT = Path(__file__).resolve().parents[1]


def _comparable(path: Path) -> list[dict]:
    """A claims.json without what differs between processes: wall times and the versions of loaded modules."""

    def strip(d):
        d = {k: v for k, v in d.items() if k not in ("wall_time_s", "versions")}
        for arm in ("control", "positive"):
            if isinstance(d.get(arm), dict):
                d[arm] = strip(d[arm])
        return d

    return [strip(c) for c in json.loads(path.read_text())["claims"]]


@pytest.fixture
def systems(fake_spec):
    return {**SYSTEMS, "fakesys": fake_spec}


def _fake_tasks(fake_spec, seeds=3):
    claims = distributed.load_claims(fake_spec.claims_entry)
    return claims, distributed.plan(
        claims, fake_spec.claims_entry, "smoke", lambda c: list(range(seeds)), controls=True
    )


def test_a_seed_run_round_trips_through_json_with_its_figures(fake_spec):
    claims, _ = _fake_tasks(fake_spec)
    run = run_seed(claims[0], "smoke", 4, render_figures=True)
    back = SeedRun.from_dict(json.loads(json.dumps(run.to_dict())))
    assert back == run and back.figures_png["error"].startswith(b"\x89PNG")


def test_summaries_from_runs_in_any_order_equal_the_sequential_runner(fake_spec, tmp_path):
    from icml26.claims import run_claim

    claims, tasks = _fake_tasks(fake_spec)
    runs = {t.key: SeedRun.from_dict(distributed.execute(t)) for t in reversed(tasks)}  # finished out of order
    for c in claims:
        keys = [t.key for t in tasks if t.claim_id == c.id and t.arm == "claim"]
        ours = summarize_claim(c, "smoke", [runs[k] for k in keys]).to_dict()
        ref = run_claim(c, "smoke", 3).to_dict()
        for d in (ours, ref):
            d.pop("wall_time_s"), d.pop("versions")
        assert ours == ref


def test_runs_after_a_crash_are_dropped_as_the_sequential_runner_stops_there(fake_spec):
    claims, _ = _fake_tasks(fake_spec)
    ok = [run_seed(claims[0], "smoke", s) for s in range(3)]
    crashed = SeedRun(claims[0].id, "smoke", 1, "claim", error="Traceback: boom")
    summary = summarize_claim(claims[0], "smoke", [ok[0], crashed, ok[2]])
    assert summary.verdict == "error" and summary.seeds == [0, 1] and "boom" in summary.error


def test_the_journal_skips_crashed_runs_and_a_torn_last_line(fake_spec, tmp_path):
    _, tasks = _fake_tasks(fake_spec)
    journal = distributed.Journal(tmp_path / "j.jsonl")
    journal.append(SeedRun.from_dict(distributed.execute(tasks[0])))
    journal.append(SeedRun(tasks[1].claim_id, "smoke", tasks[1].seed, "negative", error="boom"))
    with journal.path.open("a") as f:
        f.write('{"claim_id": "fakesys/mean-consis')  # the driver was killed mid-line
    assert list(journal.load()) == [tasks[0].key]


def test_a_finished_journal_reruns_nothing_and_needs_no_cluster(fake_spec, tmp_path, monkeypatch):
    _, tasks = _fake_tasks(fake_spec)
    journal = distributed.Journal(tmp_path / "j.jsonl")
    for t in tasks:
        journal.append(SeedRun.from_dict(distributed.execute(t)))
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # importing ray would fail
    runs = distributed.run_on_ray(tasks, "local", journal.path)
    assert set(runs) == {t.key for t in tasks}


def test_gpu_claims_reserve_a_gpu_only_at_paper_scale(fake_spec):
    import dataclasses

    claims, _ = _fake_tasks(fake_spec)
    gpu_claim = dataclasses.replace(claims[0], gpu=True)
    at = {s: distributed.plan([gpu_claim], "x:y", s, lambda c: [0, 1], controls=True) for s in ("small", "paper")}
    assert not any(t.gpu for t in at["small"]) and all(t.gpu for t in at["paper"])
    assert [t.render_figures for t in at["paper"]] == [True, False, False, False, False, False]  # 3 arms x 2 seeds
    assert [t.arm for t in at["paper"]] == ["claim"] * 2 + ["negative"] * 2 + ["positive"] * 2


def test_bad_ray_address_is_one_line_and_exit_2(systems, tmp_path, capsys):
    argv = ["reproduce", "fakesys", "--scale", "smoke", "--out", str(tmp_path), "--ray-address", " "]
    assert cli.main(argv, systems=systems) == 2
    assert capsys.readouterr().err.strip().startswith("icml26: --ray-address needs an address")


@pytest.mark.timeout(60)
def test_a_ray_address_nothing_answers_at_is_one_line_in_seconds(systems, tmp_path, capsys):
    pytest.importorskip("ray")  # ray.init alone would retry such an address for minutes
    argv = ["reproduce", "fakesys", "--scale", "smoke", "--out", str(tmp_path), "--ray-address", "127.0.0.1:1"]
    assert cli.main(argv, systems=systems) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot connect to Ray at '127.0.0.1:1'" in err[0], err
    assert not (tmp_path / distributed.JOURNAL_NAME).exists()


def test_reproduce_on_a_local_ray_equals_the_single_process_report_and_resumes(
    systems, fake_spec, tmp_path, monkeypatch, capsys
):
    pytest.importorskip("ray")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    base = ["reproduce", "fakesys", "--scale", "smoke", "--seeds", "3", "--controls"]
    assert cli.main([*base, "--out", str(tmp_path / "local")], systems=systems) == 0

    # half the runs are already in the journal (an interrupted run): only the rest go to the cluster
    _, tasks = _fake_tasks(fake_spec)
    out = tmp_path / "ray"
    journal = distributed.Journal(out / distributed.JOURNAL_NAME)
    for t in tasks[::2]:
        journal.append(SeedRun.from_dict(distributed.execute(t)))
    submitted = []
    real = distributed.run_on_ray

    def two_cpus(tasks, address, journal, on_done=None, init_kwargs=None):
        def seen(task, run):
            submitted.append(task.key)
            on_done(task, run)

        return real(tasks, address, journal, seen, {"num_cpus": 2})

    monkeypatch.setattr(distributed, "run_on_ray", two_cpus)
    assert cli.main([*base, "--out", str(out), "--ray-address", "local"], systems=systems) == 0
    assert sorted(submitted) == sorted(t.key for t in tasks[1::2])
    assert _comparable(out / "fakesys" / "claims.json") == _comparable(tmp_path / "local" / "fakesys" / "claims.json")
    png = "mean-consistent-v2-error.png"
    assert (out / "fakesys" / png).read_bytes() == (tmp_path / "local" / "fakesys" / png).read_bytes()
    assert len(journal.load()) == len(tasks)
