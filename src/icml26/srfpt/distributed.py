"""The exhaustive search on a Ray cluster: each grade's enumeration and the scoring pass as Ray tasks.

The search is embarrassingly parallel within a grade. Grade ``g``'s candidates are partitioned by root
operator and child grades (the :class:`~icml26.srfpt.enumerate.BlockSpec` of the serial loop), large blocks
further by ranges of left children cut where the serial loop cuts its numpy chunks; every task reads the
library so far and the hashes already seen from Ray's object store (put once per grade) and returns its new
candidates. The driver concatenates the results in the serial order and removes duplicates exactly as one
process does, so the library, hence the Pareto front, is the same. Scoring runs one task per fixed group
of rows (:data:`icml26.srfpt.fit.SCORE_GROUPS`); the driver adds the groups' running sums in row order, the
same additions one process makes. The grade barrier is the only synchronisation; Ray does the scheduling.

Use ``ExhaustiveSR(ray_address="local")`` (a local Ray instance, stopped afterwards), an address such as
``"auto"`` or ``"ray://head:10001"``, or call :func:`ray.init` yourself first (then that session is used and
left running). Every Ray worker needs ``icml26[sym]`` and ``ray`` installed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from icml26.distributed import check_reachable

__all__ = ["RayMap", "ray_session"]

#: tasks per CPU in a grade: enough pieces that the largest block does not leave CPUs idle
PIECES_PER_CPU = 4


def _run(task, item):
    return task.run(item)


class RayMap:
    """The two maps :func:`~icml26.srfpt.enumerate.enumerate_library` and
    :func:`~icml26.srfpt.fit.score_library` accept, running their units as Ray tasks."""

    def __init__(self, n_cpus: int):
        import ray

        self.ray = ray
        self.n_cpus = max(1, int(n_cpus))
        self.remote = ray.remote(num_cpus=1)(_run)
        self.n_tasks = 0

    def _map(self, task, items: list) -> list:
        if not items:
            return []
        ref = self.ray.put(task)  # the library so far: one copy in the object store, read zero-copy
        self.n_tasks += len(items)
        errors = self.ray.exceptions
        lost = (errors.WorkerCrashedError, errors.NodeDiedError, errors.ObjectLostError, errors.OutOfMemoryError)
        try:
            return self.ray.get([self.remote.remote(ref, item) for item in items])
        except lost as exc:  # the cluster lost a worker, node or object: one line, not Ray's page of log
            text = str(exc).strip()
            first = text.splitlines()[0][:200] if text else "no detail"
            raise ConnectionError(
                f"Ray lost a search task ({type(exc).__name__}: {first}); rerun, or drop --ray-address"
            ) from None

    def blocks(self, state, specs: list) -> list:
        """Run one grade's blocks; big blocks split into left-row pieces; results reassembled per block."""
        target = max(1, sum(s.work for s in specs) // (PIECES_PER_CPU * self.n_cpus))
        pieces = [spec.split(max(1, -(-spec.work // target))) for spec in specs]
        flat = self._map(state, [p for ps in pieces for p in ps])
        out, i = [], 0
        for ps in pieces:  # concatenated in the serial order: the pieces' chunks are the block's chunks
            done = flat[i : i + len(ps)]
            i += len(ps)
            out.append(([part for parts, _ in done for part in parts], sum(n for _, n in done)))
        return out

    def groups(self, task, ranges: list) -> list:
        """Score the row groups, one task each, results in row order."""
        return self._map(task, ranges)


@contextlib.contextmanager
def ray_session(address: str, *, num_cpus: int | None = None) -> Iterator[RayMap]:
    """Yield a :class:`RayMap` on Ray at ``address``.

    ``"local"`` starts a local instance with ``num_cpus`` CPUs (default: all) and stops it afterwards; any
    other address (``"auto"``, ``"ray://host:10001"``) is passed to :func:`ray.init` and disconnected
    afterwards. When Ray is already initialised in this process, that session is used and left running.
    Raises ``ImportError`` without Ray and ``ValueError`` when the address cannot be reached.
    """
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "the Ray backend needs `pip install 'icml26[sym,ray]'`; drop ray_address to search in one process"
        ) from exc
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    owned = not ray.is_initialized()
    if owned:
        check_reachable(address)
        kw = {"num_cpus": num_cpus} if address == "local" else {"address": address}
        try:
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, **kw)
        except ConnectionError as exc:
            raise ValueError(f"cannot connect to Ray at {address!r}: {str(exc).splitlines()[0]}") from None
    try:
        yield RayMap(int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if owned:
            ray.shutdown()
