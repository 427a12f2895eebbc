"""Decentralized PCA on real processes: an SPMD program run under the user's ``mpiexec``, one rank per node.

::

    mpiexec -n 64 python -m icml26.noisypower.mpi --local 'data/rank{rank}.npy' -k 10 --graph ring \\
        --rounds 8 --tol 1e-8 --out result.npz

Every rank loads only its own local matrix (``{rank}`` in the path pattern, or a user callable in
:func:`spmd_pca`), talks to graph neighbours only (one ``Neighbor_allgather`` of the ``d x k`` block per gossip
round, on the communicator from ``Create_dist_graph_adjacent``) and runs the same
:func:`icml26.noisypower.decentralized.run_decentralized` loop as the simulated network, with
:class:`MPINetwork` in place of :class:`~icml26.noisypower.network.SimNetwork`. No rank knows the answer:
convergence is monitored by the consensus distance ``max_i ||X_i - mean X||_F`` and the relative residual
``||A Q - Q M||_2 / ||M||_2`` of the consensus basis (``allreduce`` of ``d x k`` blocks, not counted as gossip
communication). The momentum ``beta = lambda_{k+1}^2 / 4`` is given (``--beta``) or estimated by a loose
Lanczos run on ``A = mean_i A_i`` whose products are global reductions.

:func:`run_mpi` (``decentralized_pca(..., backend="mpi")``) is the convenience path for a problem already in
memory: it writes one file per rank and starts this program with ``mpiexec`` itself.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from icml26.noisypower.decentralized import METHODS, DecentralizedResult, InsufficientMixingError, run_decentralized
from icml26.noisypower.method import as_block_operator, estimate_momentum, qr_pos

__all__ = ["MPINetwork", "find_mpiexec", "main", "run_mpi", "spmd_pca"]

logger = logging.getLogger(__name__)


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
        """Sum over ranks, bit-identical on every rank (reduce, then broadcast): stopping decisions taken from
        it must agree everywhere, or some ranks would leave the loop while others wait for them."""
        x = np.ascontiguousarray(x, dtype=float)
        out = np.empty_like(x)
        self.comm.Reduce(x, out, op=self.MPI.SUM, root=0)
        self.comm.Bcast(out, root=0)
        return out

    def allmax(self, x: float) -> float:
        x = float(x)  # NaN -> inf: MPI's MAX need not propagate NaN, and a NaN must stop every rank
        return float(self.comm.allreduce(np.inf if np.isnan(x) else x, op=self.MPI.MAX))


def _collective(comm, fn: Callable[[], object]):
    """Run ``fn`` on every rank; if it raised a ``ValueError``/``OSError`` on any rank, raise it on all ranks
    (naming the first failing rank), so no rank waits forever for one that gave up."""
    try:
        value, error = fn(), None
    except (ValueError, OSError) as exc:
        value, error = None, str(exc)
    errors = comm.allgather(error)
    bad = [(r, e) for r, e in enumerate(errors) if e is not None]
    if bad:
        rank, message = bad[0]
        raise ValueError(f"rank {rank}: {message}" if comm.size > 1 else message)
    return value


def _load_local(local, rank: int, dim: int | None):
    """Rank ``rank``'s matrix or operator: ``local`` is a path pattern with ``{rank}`` or a callable of the rank."""
    if isinstance(local, (str, os.PathLike)):
        from icml26.noisypower.data import load_matrix

        pattern = str(local)
        if "{rank}" not in pattern:
            raise ValueError(f"local path pattern {pattern!r} must contain {{rank}} (one file per rank)")
        A = load_matrix(pattern.replace("{rank}", str(rank)))
        if not np.all(np.isfinite(A.data if hasattr(A, "nnz") else A)):
            raise ValueError(f"{pattern.replace('{rank}', str(rank))}: matrix has NaN or inf entries")
    elif callable(local):
        A = local(rank)
    else:
        raise ValueError(f"local must be a path pattern with {{rank}} or a callable of the rank; got {type(local)}")
    matmat, d, _ = as_block_operator(A, dim=dim)
    return matmat, d


def spmd_pca(
    comm,
    local,
    k: int,
    *,
    W: np.ndarray | None = None,
    graph: str = "ring",
    method: str = "accelerated",
    K: int = 6,
    beta: float | None = None,
    tol: float = 1e-6,
    max_iter: int = 5000,
    patience: int = 200,
    seed: int = 0,
    X0: np.ndarray | None = None,
    reference: np.ndarray | None = None,
    dim: int | None = None,
    strict: bool = True,
    progress: Callable[[int, float], None] | None = None,
) -> DecentralizedResult:
    """Decentralized top-``k`` PCA of ``A = mean_i A_i``, called collectively by every rank of ``comm``.

    Parameters
    ----------
    comm : mpi4py communicator
        One rank per node.
    local : str or callable
        This rank's local matrix: a path pattern containing ``{rank}`` (``.npy``, ``.npz`` dense or scipy
        sparse, ``.mtx``), or a callable ``local(rank)`` returning an array, a scipy sparse matrix, a
        ``LinearOperator`` or a callable ``X (d, k) -> A_i X`` (then pass ``dim``). Only this rank's part is
        ever read.
    W : array (n, n), optional
        Gossip matrix; default Metropolis weights on ``graph`` (``ring``, ``grid``, ``erdos-renyi`` with
        ``seed``, ``complete``) over ``comm.size`` nodes.
    beta : float, optional
        Momentum of the accelerated method; default ``lambda_{k+1}^2 / 4`` from a Lanczos estimate on ``A``
        (its products are global reductions, counted in the log, not as gossip rounds).
    reference : array (d, k), optional
        True top-``k`` basis, for experiments only: stopping then uses ``sin theta`` instead of the residual.
    Others as :func:`icml26.noisypower.decentralized.decentralized_pca`.

    Raises
    ------
    ValueError
        Bad input on any rank (raised on every rank, naming the first bad one).
    InsufficientMixingError
        A stalled tracking method (``strict``), on every rank.
    Any other error raised on one rank only during the iterations (e.g. by the ``local`` operator) ends the whole
    job with ``MPI_Abort`` after one line on stderr naming the rank: the other ranks wait in a collective and
    could never return.

    Returns
    -------
    DecentralizedResult
        This rank's node only (``bases`` of shape (1, d, k)); ``eigenvalues`` are the Rayleigh-quotient
        estimates of the consensus basis (reference-free runs), identical on every rank.
    """
    from icml26.noisypower.network import make_graph, metropolis_weights, validate_mixing

    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {METHODS}")
    if not 0 < tol < 1:
        raise ValueError(f"tol must be in (0, 1); got {tol}")
    matmat, d = _collective(comm, lambda: _load_local(local, comm.rank, dim))
    dims = comm.allgather(d)
    if len(set(dims)) != 1:
        raise ValueError(f"ranks disagree on the dimension d: {sorted(set(dims))}")
    if not isinstance(k, (int, np.integer)) or not 1 <= k < d:
        raise ValueError(f"need 1 <= k < d; got k={k}, d={d}")
    W = metropolis_weights(make_graph(graph, comm.size, seed=seed)) if W is None else validate_mixing(W)
    n = W.shape[0]
    if n != comm.size:
        raise ValueError(f"mixing matrix is for {n} nodes but {comm.size} ranks are running; start one rank per node")
    net = MPINetwork(comm, W)

    def mean_product(X: np.ndarray) -> np.ndarray:  # (d, m) -> A X, the same bits on every rank
        return net.allsum(matmat(X)) / n

    def starts():  # validated collectively: a bad array on one rank stops every rank
        x0 = np.random.default_rng(seed).standard_normal((d, k)) if X0 is None else np.asarray(X0, dtype=float)
        if x0.shape != (d, k) or not np.all(np.isfinite(x0)):
            raise ValueError(f"X0 must be a finite ({d}, {k}) array; got shape {x0.shape}")
        ref = None
        if reference is not None:
            ref = np.asarray(reference, dtype=float)
            if ref.shape != (d, k) or not np.all(np.isfinite(ref)):
                raise ValueError(f"reference must be a finite ({d}, {k}) array; got shape {ref.shape}")
            ref = qr_pos(ref)[0]
        return qr_pos(x0)[0], ref

    X0, reference = _collective(comm, starts)
    try:
        if method == "accelerated" and beta is None:
            beta, n_products = estimate_momentum(mean_product, d, k, np.random.default_rng(seed))
            if comm.rank == 0:
                logger.info("momentum beta = %.6g from a Lanczos estimate (%d global products)", beta, n_products)
        beta = float(beta) if method == "accelerated" else 0.0
        return run_decentralized(
            net,
            lambda X: matmat(X[0])[None],  # (1, d, k): this rank's node
            k,
            method=method,
            K=K,
            beta=beta,
            tol=tol,
            max_iter=max_iter,
            X0=X0,
            reference=reference,
            patience=patience,
            strict=strict,
            progress=progress,
        )
    except InsufficientMixingError:  # decided from reduced values: raised on every rank alike
        raise
    except BaseException as exc:  # raised on this rank only (its operator failed, memory...): the others wait in
        _abort(comm, exc)  # a collective and could never return, so end the whole job rather than hang
        raise


def _abort(comm, exc: BaseException) -> None:
    """One line naming the rank and the error, then ``MPI_Abort`` (mpiexec ends every rank, exit non-zero)."""
    if comm.size > 1:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"{PROG}: error: rank {comm.rank}: {type(exc).__name__}: {text}", file=sys.stderr, flush=True)
        time.sleep(0.5)  # let mpiexec forward the line: MPI_Abort kills the job before its I/O proxy drains the pipe
        comm.Abort(1)


def find_mpiexec() -> str | None:
    """``mpiexec`` next to the running Python (the ``mpich`` wheel installs it there), else on ``PATH``."""
    local = Path(sys.executable).parent / "mpiexec"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("mpiexec")


def _mpi_env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    # oversubscribed ranks (more ranks than cores) must yield the CPU while they wait, or MPICH's busy
    # polling makes every round cost a scheduler time slice (measured 7x slower on 8 ranks / 2 cores)
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    env.setdefault("MPIR_CVAR_POLLS_BEFORE_YIELD", "1")
    return env


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
    reference: np.ndarray | None,
    patience: int = 100,
    timeout: float = 300.0,
) -> DecentralizedResult:
    """Run the SPMD program on ``n_nodes`` MPI processes started here, and gather every node's basis.

    Writes ``A_local[i]`` to its own file ``rank{i}.npy`` (rank ``i`` reads only that one), the gossip matrix,
    start and (optional) reference to a temporary directory, then runs ``mpiexec -n <n_nodes> python -m
    icml26.noisypower.mpi``. Arguments as :func:`run_decentralized` (inputs already validated, e.g. by
    :func:`icml26.noisypower.decentralized.decentralized_pca`'s checks). Tracking stalls are reported in
    ``status`` (non-strict). Raises ``OSError`` when ``mpiexec`` or ``mpi4py`` is missing.
    """
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise OSError("mpiexec not found: pip install mpi4py mpich (or the icml26[mpi] extra)")
    n = W.shape[0]
    with tempfile.TemporaryDirectory(prefix="noisypower-mpi-") as tmp:
        tmp = Path(tmp)
        for i in range(n):
            np.save(tmp / f"rank{i}.npy", A_local[i])
        np.save(tmp / "W.npy", W)
        np.save(tmp / "X0.npy", X0)
        cmd = [mpiexec, "-n", str(n), sys.executable, "-m", "icml26.noisypower.mpi"]
        cmd += ["--local", str(tmp / "rank{rank}.npy"), "-k", str(k), "--mixing", str(tmp / "W.npy")]
        cmd += ["--x0", str(tmp / "X0.npy"), "--method", method, "--rounds", str(K), "--beta", repr(float(beta))]
        cmd += ["--tol", repr(float(tol)), "--max-iter", str(max_iter), "--patience", str(patience)]
        cmd += ["--gather-bases", "--no-strict", "--out", str(tmp / "result.npz"), "--progress-lines"]
        if reference is not None:
            np.save(tmp / "reference.npy", reference)
            cmd += ["--reference", str(tmp / "reference.npy")]
        returncode, stderr = _run_with_progress(cmd, _mpi_env(), max_iter, timeout)
        if returncode != 0 or not (tmp / "result.npz").is_file():
            raise RuntimeError(f"mpiexec failed (exit {returncode}):\n{stderr[-2000:]}")
        return _read_result(tmp / "result.npz", method, K)


def _read_result(path: Path, method: str, K: int) -> DecentralizedResult:
    with np.load(path, allow_pickle=False) as z:
        meta = z["meta"]
        hist = {str(name[5:]): list(z[name]) for name in z.files if name.startswith("hist_")}
        return DecentralizedResult(
            z["bases"],
            np.arange(z["bases"].shape[0]),
            method,
            K,
            float(meta[5]),
            int(meta[0]),
            int(meta[1]),
            int(meta[2]),
            bool(meta[3]),
            str(z["status"]),
            float(meta[4]),
            hist,
            z["eigenvalues"] if "eigenvalues" in z.files else None,
        )


PROGRESS = "icml26-progress"  # rank 0 writes "<PROGRESS> t error" lines to stderr for run_mpi's progress bar


def _run_with_progress(cmd: list[str], env: dict[str, str], max_iter: int, timeout: float) -> tuple[int, str]:
    """Run ``mpiexec``; show rank 0's iterations as a progress bar on a terminal; return (exit code, stderr).

    The bar appears only when stderr is a terminal and tqdm is installed; progress lines never reach the
    returned stderr, so error messages stay readable. Raises ``TimeoutError`` after ``timeout`` seconds.
    """
    bar = None
    if sys.stderr.isatty():
        try:
            from icml26._util.progress import progress

            bar = progress(total=max_iter, desc="mpi iterations", unit="it")
        except ImportError:
            pass
    lines: list[str] = []

    def read(stream) -> None:
        for line in stream:
            if line.startswith(PROGRESS):
                _, t, err = line.split()
                if bar is not None:
                    bar.n = int(t)
                    bar.set_postfix_str(f"error {float(err):.2e}", refresh=True)
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


PROG = "python -m icml26.noisypower.mpi"


def build_parser() -> argparse.ArgumentParser:
    from icml26._util.cli import ArgumentParser, bounded_int, finite_float, nonnegative_float, positive_int, seed_int

    def tolerance(text: str) -> float:
        value = finite_float(text)
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"{text!r} must be in (0, 1)")
        return value

    p = ArgumentParser(
        prog=PROG,
        description="Decentralized top-k PCA, one MPI rank per node: run under mpiexec "
        "(mpiexec -n N python -m icml26.noisypower.mpi --local 'data/rank{rank}.npy' -k 10 --out result.npz).",
    )
    p.add_argument("--local", required=True, help="path pattern of each rank's local matrix, with {rank}")
    p.add_argument("-k", type=bounded_int(1, 10_000, what="subspace dimension"), required=True, help="subspace dim")
    topo = p.add_mutually_exclusive_group()
    topo.add_argument(
        "--graph",
        choices=("ring", "grid", "erdos-renyi", "complete"),
        default="ring",
        help="communication graph over the ranks (Metropolis weights)",
    )
    topo.add_argument("--mixing", default=None, help=".npy gossip matrix (n_ranks, n_ranks) instead of --graph")
    p.add_argument("--method", choices=METHODS, default="accelerated", help="decentralized method")
    p.add_argument(
        "--rounds",
        type=bounded_int(1, 10_000, what="gossip rounds per iteration"),
        default=8,
        help="FastMix gossip rounds K per iteration",
    )
    p.add_argument(
        "--beta",
        type=nonnegative_float,
        default=None,
        help="momentum (accelerated); default lambda_{k+1}^2/4 from a distributed Lanczos estimate",
    )
    p.add_argument("--tol", type=tolerance, default=1e-6, help="target residual and consensus distance")
    p.add_argument(
        "--max-iter", type=bounded_int(1, 10_000_000, what="iterations"), default=5000, help="iteration limit"
    )
    p.add_argument("--patience", type=positive_int, default=200, help="stall window (iterations)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the common start (and erdos-renyi graph)")
    p.add_argument("--x0", default=None, help=".npy common start (d, k) instead of a seeded Gaussian")
    p.add_argument("--reference", default=None, help=".npy true basis (d, k): stop on sin theta (experiments)")
    p.add_argument(
        "--no-strict",
        dest="strict",
        action="store_false",
        help="report a stalled tracking method in the result instead of failing",
    )
    p.add_argument("--gather-bases", action="store_true", help="also write every rank's basis (n, d, k)")
    p.add_argument("--log-every", type=positive_int, default=50, help="rank 0 logs every this many iterations")
    p.add_argument("--progress-lines", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", required=True, help="result .npz written by rank 0 (basis, eigenvalues, history)")
    return p


def _load_array(path: str, what: str) -> np.ndarray:
    from icml26._util.io import check_input_file

    check_input_file(path, what=what)
    try:
        return np.load(path, allow_pickle=False)
    except Exception as exc:  # decoding errors of numpy: one line naming the file
        raise ValueError(f"{path}: cannot read {what} as .npy: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    """The SPMD program: every rank parses the same arguments; rank 0 reports and writes ``--out``."""
    from mpi4py import MPI

    from icml26._util.io import atomic_output, check_output_path, save_npz

    comm = MPI.COMM_WORLD
    args = build_parser().parse_args(argv)  # identical argv on every rank: all fail alike
    if comm.rank == 0:
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    else:  # one voice: rank 0 reports (every rank takes the same decisions, so it has nothing to add)
        logging.getLogger("icml26").setLevel(logging.ERROR)
    try:

        def inputs():
            if comm.rank == 0:
                check_output_path(args.out, suffixes=(".npz",))
            W = _load_array(args.mixing, "mixing matrix") if args.mixing else None
            X0 = _load_array(args.x0, "start basis") if args.x0 else None
            ref = _load_array(args.reference, "reference basis") if args.reference else None
            return W, X0, ref

        W, X0, reference = _collective(comm, inputs)

        def progress(t: int, err: float) -> None:
            if args.progress_lines:
                print(PROGRESS, t, f"{err:.6e}", file=sys.stderr, flush=True)
            elif t % args.log_every == 0:
                logger.info("iteration %d: error %.3e", t, err)

        res = spmd_pca(
            comm,
            args.local,
            args.k,
            W=W,
            graph=args.graph,
            method=args.method,
            K=args.rounds,
            beta=args.beta,
            tol=args.tol,
            max_iter=args.max_iter,
            patience=args.patience,
            seed=args.seed,
            X0=X0,
            reference=reference,
            strict=args.strict,
            progress=progress if comm.rank == 0 else None,
        )
    except (ValueError, OSError, RuntimeError) as exc:  # RuntimeError: InsufficientMixingError
        if comm.rank == 0:
            print(f"{PROG}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2 if not isinstance(exc, RuntimeError) else 1
    net_mean = np.empty_like(res.bases[0])
    comm.Reduce(np.ascontiguousarray(res.bases[0]), net_mean, op=MPI.SUM, root=0)
    bases = comm.gather(res.bases[0], root=0) if args.gather_bases else None
    if comm.rank == 0:
        basis = qr_pos(net_mean / comm.size)[0]  # the consensus basis (d, k)
        arrays = {f"hist_{name}": np.asarray(v) for name, v in res.history.items()}
        if bases is not None:
            arrays["bases"] = np.stack(bases)
        if res.eigenvalues is not None:
            arrays["eigenvalues"] = res.eigenvalues
        meta = [res.n_iter, res.rounds, res.bytes_sent, res.converged, res.mixing_contraction, res.beta]
        with atomic_output(args.out) as tmp:
            save_npz(tmp, basis=basis, status=np.array(res.status), meta=np.array(meta, dtype=float), **arrays)
        last = {name: v[-1] for name, v in res.history.items() if name != "rounds" and v}
        print(
            f"{res.method} on {comm.size} ranks: {res.status} after {res.n_iter} iterations ({res.rounds} gossip "
            f"rounds, {res.bytes_sent:,} bytes); "
            + ", ".join(f"{name} {value:.3g}" for name, value in last.items())
            + f"; wrote {args.out}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
