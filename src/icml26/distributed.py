"""Reproductions on a Ray cluster: every (claim, seed, arm) run is one Ray task.

``icml26 reproduce --all --scale paper --ray-address ADDR`` plans the same runs as the single-process runner
(:func:`icml26.reproduce.reproduce`), submits them all at once, and streams each finished run to a journal
(``<out>/ray-journal.jsonl``, one JSON line per run, figures included). A run that is interrupted — the
driver killed, the cluster lost — is resumed by the same command: runs already in the journal are not
submitted again (a crashed run is retried). The summaries are then built from the runs by
:func:`icml26.claims.summarize_claim`, the function the single-process runner uses, so both give the same
report. Delete the journal to start over, e.g. after changing a claim's code.

A claim declared with ``gpu=True`` asks Ray for one GPU per task at ``paper`` scale; every task asks for one
CPU. Workers must have icml26 installed with the extras of the systems they run (``pip install
'icml26[all]'`` on every node, or a Ray runtime environment that does it).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icml26.claims import Arm, Claim, SeedRun, run_seed
from icml26.registry import load_entry

JOURNAL_NAME = "ray-journal.jsonl"
# Environment variables passed on to every worker when the driver has them: the project's run environment.
_WORKER_ENV = ("MPLBACKEND", "HF_HUB_OFFLINE", "RAY_USAGE_STATS_ENABLED", "OMP_NUM_THREADS", "PYTHONPATH")


@dataclass(frozen=True)
class SeedTask:
    """One run to do: claim ``claim_id`` of the claims list at ``claims_entry`` ("module:attr"), one seed."""

    claims_entry: str
    claim_id: str
    scale: str
    seed: int
    arm: str = Arm.CLAIM.value  # claim, negative or positive
    render_figures: bool = False  # the first seed of a claim (not of its controls) keeps its figures
    gpu: bool = False  # reserve one GPU for the task

    @property
    def key(self) -> str:
        """What identifies the run in the journal."""
        return run_key(self.claim_id, self.scale, self.seed, self.arm)


def run_key(claim_id: str, scale: str, seed: int, arm: Arm | str) -> str:
    """The journal key of one run: the same for a planned task and the run it produced."""
    return f"{claim_id}|{scale}|{seed}|{Arm.parse(arm).value}"


def load_claims(entry: str) -> list[Claim]:
    """The claims list named by a registry entry point ``"module:attr"``."""
    return list(load_entry(entry))


def execute(task: SeedTask) -> dict[str, Any]:
    """Run one task in this process (what a Ray worker does); the run as JSON-ready data."""
    claim_obj = next((c for c in load_claims(task.claims_entry) if c.id == task.claim_id), None)
    if claim_obj is None:
        raise LookupError(f"{task.claims_entry} has no claim {task.claim_id}")
    run = run_seed(claim_obj, task.scale, task.seed, arm=task.arm, render_figures=task.render_figures)
    return run.to_dict()


def plan(
    claims: Sequence[Claim], claims_entry: str, scale: str, seeds: Callable[[Claim], list[int]], *, controls: bool
) -> list[SeedTask]:
    """The runs a reproduction needs, in the order the single-process runner does them."""
    tasks = []
    for claim_obj in claims:
        gpu = claim_obj.gpu and scale == "paper"
        chosen = seeds(claim_obj)
        for arm in claim_obj.arms if controls else (Arm.CLAIM,):
            tasks += [
                SeedTask(
                    claims_entry, claim_obj.id, scale, s, arm.value, render_figures=i == 0 and arm is Arm.CLAIM, gpu=gpu
                )
                for i, s in enumerate(chosen)
            ]
    return tasks


class Journal:
    """The runs finished so far, one JSON line each, appended as they arrive (a kill loses at most one line)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, SeedRun]:
        """Finished runs by key; crashed runs and a torn last line are left out, so they run again."""
        runs: dict[str, SeedRun] = {}
        if not self.path.is_file():
            return runs
        for line in self.path.read_text().splitlines():
            try:
                run = SeedRun.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError):  # a line cut short by a kill
                continue
            if run.result is not None:
                runs[run_key(run.claim_id, run.scale, run.seed, run.arm)] = run
        return runs

    def append(self, run: SeedRun) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            f.write(json.dumps(run.to_dict()) + "\n")
            f.flush()
            os.fsync(f.fileno())


#: seconds to wait for a TCP connection to a given Ray address before giving up
CONNECT_TIMEOUT = 5.0


def check_reachable(address: str) -> None:
    """Refuse a ``host:port`` / ``ray://host:port`` address nothing listens on, in seconds: :func:`ray.init`
    itself retries such an address for minutes. ``local`` and ``auto`` are Ray's own business."""
    if address in ("local", "auto"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise ValueError(f"cannot connect to Ray at {address!r}: nothing answers at {host}:{port} ({reason})") from None


def run_on_ray(
    tasks: Iterable[SeedTask],
    address: str,
    journal: Path,
    on_done: Callable[[SeedTask, SeedRun], None] | None = None,
    init_kwargs: Mapping[str, Any] | None = None,
) -> dict[str, SeedRun]:
    """Run every task not yet in ``journal`` as a Ray task; every run by :attr:`SeedTask.key`.

    Parameters
    ----------
    tasks : iterable of SeedTask
    address : str
        Passed to ``ray.init``: ``"auto"`` or ``"ray://host:10001"`` joins a running cluster, ``"local"``
        starts one on this machine.
    journal : Path
        The JSON-lines journal finished runs are streamed to and resumed from.
    on_done : callable, optional
        ``on_done(task, run)`` as each run arrives (progress).
    init_kwargs : mapping, optional
        More ``ray.init`` arguments (tests start a 2-CPU local cluster with ``{"num_cpus": 2}``).
    """
    tasks = list(tasks)
    book = Journal(journal)
    runs = book.load()
    todo = [t for t in tasks if t.key not in runs]
    if not todo:
        return runs
    try:
        import ray
    except ImportError as exc:
        raise ImportError("--ray-address needs Ray: pip install 'icml26[ray]'") from exc

    env = {k: os.environ[k] for k in _WORKER_ENV if k in os.environ}
    env.setdefault("MPLBACKEND", "Agg")
    kwargs = {"include_dashboard": False, "log_to_driver": False, **(init_kwargs or {})}
    check_reachable(address)
    ray.init(address=address, runtime_env={"env_vars": env}, **kwargs)
    try:
        remote = ray.remote(execute)
        pending = {remote.options(num_cpus=1, num_gpus=1 if t.gpu else 0, max_retries=0).remote(t): t for t in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    run = SeedRun.from_dict(ray.get(ref))
                except Exception as exc:  # the worker died (memory, node lost): reported as the run's crash
                    run = SeedRun(task.claim_id, task.scale, task.seed, task.arm, error=f"{type(exc).__name__}: {exc}")
                book.append(run)
                runs[task.key] = run
                if on_done is not None:
                    on_done(task, run)
    finally:
        ray.shutdown()
    return runs
