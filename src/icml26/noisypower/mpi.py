"""Real processes over MPI: one node per rank, neighbour-only exchange on a distributed graph topology.

:func:`run_mpi` writes the problem to a temporary ``.npz``, starts ``mpiexec -n <n_nodes> python -m
icml26.noisypower.mpi`` and reads back the result; each rank loads only its own ``A_i`` and runs the same
:func:`icml26.noisypower.decentralized.run_decentralized` loop as the simulated network, with
:class:`MPINetwork` in place of :class:`~icml26.noisypower.network.SimNetwork`. A gossip round is one
``Neighbor_allgather`` of the ``d x k`` block on the communicator from ``Create_dist_graph_adjacent``.
Diagnostics (worst ``sin theta``, consensus error) use ``allreduce`` and are not counted as communication.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from icml26.noisypower.decentralized import DecentralizedResult, run_decentralized

__all__ = ["MPINetwork", "find_mpiexec", "run_mpi"]


class MPINetwork:
    """This rank's node of the gossip network (``n_local = 1``).

    Parameters
    ----------
    comm : mpi4py communicator
        ``comm.size`` must equal the number of nodes.
    W : array (n, n)
        The (validated) gossip matrix; rank ``i`` uses row ``i``.
    """

    def __init__(self, comm, W: np.ndarray):
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = comm
        self.W = np.asarray(W, dtype=float)
        self.n_nodes = self.W.shape[0]
        if comm.size != self.n_nodes:
            raise ValueError(f"{comm.size} MPI ranks for {self.n_nodes} nodes; start one rank per node")
        rank = comm.rank
        self.node_ids = np.array([rank])
        self.neighbours = [j for j in range(self.n_nodes) if j != rank and self.W[rank, j] != 0]
        self.w_self = float(self.W[rank, rank])
        self.w_neighbours = self.W[rank, self.neighbours]  # (deg,)
        self.degrees = ((self.W != 0) & ~np.eye(self.n_nodes, dtype=bool)).sum(axis=1)  # neighbours; W_ii may be 0
        self.graph_comm = comm.Create_dist_graph_adjacent(self.neighbours, self.neighbours, reorder=False)

    def gossip(self, S: np.ndarray) -> np.ndarray:
        """One round on the local block ``S`` of shape (1, d, k): exchange with neighbours only."""
        send = np.ascontiguousarray(S[0])
        recv = np.empty((len(self.neighbours), *send.shape))  # (deg, d, k), in neighbour order
        self.graph_comm.Neighbor_allgather(send, recv)
        return (self.w_self * send + np.tensordot(self.w_neighbours, recv, axes=1))[None]

    def allsum(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=float)
        out = np.empty_like(x)
        self.comm.Allreduce(x, out, op=self.MPI.SUM)
        return out

    def allmax(self, x: float) -> float:
        return float(self.comm.allreduce(float(x), op=self.MPI.MAX))


def find_mpiexec() -> str | None:
    """``mpiexec`` next to the running Python (the ``mpich`` wheel installs it there), else on ``PATH``."""
    local = Path(sys.executable).parent / "mpiexec"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("mpiexec")


def run_mpi(
    A_local: np.ndarray,
    k: int,
    *,
    W: np.ndarray,
    method: str,
    K: int,
    beta: float,
    tol: float,
    max_iter: int,
    X0: np.ndarray,
    reference: np.ndarray,
    patience: int = 100,
    timeout: float = 300.0,
) -> DecentralizedResult:
    """Run :func:`run_decentralized` on ``n_nodes`` MPI processes and gather the result on this process.

    Arguments as :func:`run_decentralized` (inputs already validated, e.g. by
    :func:`icml26.noisypower.decentralized.decentralized_pca`'s checks). Tracking stalls are reported in
    ``status`` (non-strict). Raises ``OSError`` when ``mpiexec`` or ``mpi4py`` is missing.
    """
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise OSError("mpiexec not found: pip install mpi4py mpich (or the icml26[mpi] extra)")
    n = W.shape[0]
    with tempfile.TemporaryDirectory(prefix="noisypower-mpi-") as tmp:
        inp, out = Path(tmp) / "problem.npz", Path(tmp) / "result.npz"
        np.savez(
            inp,
            A_local=A_local,
            W=W,
            X0=X0,
            reference=reference,
            params=np.array([k, K, beta, tol, max_iter, patience], dtype=float),
            method=np.array(method),
        )
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        # oversubscribed ranks (more ranks than cores) must yield the CPU while they wait, or MPICH's busy
        # polling makes every round cost a scheduler time slice (measured 7x slower on 8 ranks / 2 cores)
        env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
        env.setdefault("MPIR_CVAR_POLLS_BEFORE_YIELD", "1")
        cmd = [mpiexec, "-n", str(n), sys.executable, "-m", "icml26.noisypower.mpi", str(inp), str(out)]
        returncode, stderr = _run_with_progress(cmd, env, max_iter, timeout)
        if returncode != 0 or not out.is_file():
            raise RuntimeError(f"mpiexec failed (exit {returncode}):\n{stderr[-2000:]}")
        with np.load(out, allow_pickle=False) as z:
            meta = z["meta"]
            hist = {name: list(z[f"hist_{name}"]) for name in ("sin_theta", "tan_theta", "consensus", "rounds")}
            return DecentralizedResult(
                z["bases"],
                np.arange(n),
                method,
                K,
                beta,
                int(meta[0]),
                int(meta[1]),
                int(meta[2]),
                bool(meta[3]),
                str(z["status"]),
                float(meta[4]),
                hist,
            )


PROGRESS = "icml26-progress"  # rank 0 writes "<PROGRESS> t sin_theta" lines to stderr


def _run_with_progress(cmd: list[str], env: dict[str, str], max_iter: int, timeout: float) -> tuple[int, str]:
    """Run ``mpiexec``; show rank 0's iterations as a progress bar on a terminal; return (exit code, stderr).

    The bar appears only when stderr is a terminal and tqdm is installed; progress lines never reach the
    returned stderr, so error messages stay readable. Raises ``TimeoutError`` after ``timeout`` seconds.
    """
    bar = None
    if sys.stderr.isatty():
        try:
            from tqdm.auto import tqdm

            bar = tqdm(total=max_iter, desc="mpi iterations", unit="it", leave=False)
        except ImportError:
            pass
    lines: list[str] = []

    def read(stream) -> None:
        for line in stream:
            if line.startswith(PROGRESS):
                _, t, err = line.split()
                if bar is not None:
                    bar.n = int(t)
                    bar.set_postfix_str(f"sin theta {float(err):.2e}", refresh=True)
            else:
                lines.append(line)

    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        streams = (proc.stderr, proc.stdout)
        readers = [threading.Thread(target=read, args=(stream,), daemon=True) for stream in streams]
        for reader in readers:
            reader.start()
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"mpiexec did not finish in {timeout:.0f} s") from None
        finally:
            for reader in readers:
                reader.join(timeout=5)
            if bar is not None:
                bar.close()
    return returncode, "".join(lines)


def _worker(inp: str, out: str) -> None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    with np.load(inp, allow_pickle=False) as z:
        A_i = z["A_local"][comm.rank][None]  # (1, d, d): this rank's local matrix only
        W, X0, reference = z["W"], z["X0"], z["reference"]
        k, K, beta, tol, max_iter, patience = z["params"]
        method = str(z["method"])
    net = MPINetwork(comm, W)
    res = run_decentralized(
        net,
        A_i,
        int(k),
        method=method,
        K=int(K),
        beta=float(beta),
        tol=float(tol),
        max_iter=int(max_iter),
        X0=X0,
        reference=reference,
        patience=int(patience),
        strict=False,
        progress=_report if comm.rank == 0 else None,
    )
    bases = comm.gather(res.bases[0], root=0)  # diagnostics only
    if comm.rank == 0:
        np.savez(
            out,
            bases=np.stack(bases),
            status=np.array(res.status),
            meta=np.array([res.n_iter, res.rounds, res.bytes_sent, res.converged, res.mixing_contraction]),
            **{f"hist_{name}": np.asarray(v) for name, v in res.history.items()},
        )


def _report(t: int, err: float) -> None:
    print(PROGRESS, t, f"{err:.6e}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        prog="python -m icml26.noisypower.mpi", description="MPI worker (one rank per node)"
    )
    parser.add_argument("problem")
    parser.add_argument("result")
    args = parser.parse_args()
    _worker(args.problem, args.result)
