"""``icml26 noisypower``: top-k PCA of a matrix file, and a decentralized PCA run on a synthetic network.

::

    icml26 noisypower pca FILE -k K [--method npm|anpm|eigsh] [--tol 1e-8] [--symmetrize] [--json OUT]
    icml26 noisypower decentralized --nodes 16 --graph ring [--method accelerated|deepca|gossip]
                                    [--rounds K] [--backend sim|mpi] [--json OUT]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

from icml26._util.cli import (
    ArgumentParser,
    add_json_argument,
    bounded_int,
    finite_float,
    nonnegative_float,
    positive_int,
    seed_int,
)
from icml26._util.io import check_input_file, check_json_output, check_output_path, save_npy, write_json

logger = logging.getLogger(__name__)


#: nodes * dim^2 float64 entries of local matrices (and as many for the random split): about 2 GB in all
MAX_LOCAL_ENTRIES = 60_000_000
SEED = seed_int  # the shared 32-bit seed type
MAX_ITER = bounded_int(1, 1_000_000, what="iterations")


def _tolerance(text: str) -> float:
    """A relative tolerance in (0, 1): tol >= 1 (or inf) would stop at once with wrong eigenvalues."""
    value = finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be in (0, 1)")
    return value


def _open_fraction(text: str) -> float:
    value = finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be in (0, 1)")
    return value


def _edge_probability(text: str) -> float:
    value = finite_float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be in (0, 1]")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="icml26 noisypower",
        description="Accelerated noisy power method and accelerated decentralized PCA (Aguié, Even & Massoulié 2026).",
    )
    sub = parser.add_subparsers(dest="verb", required=True)

    p = sub.add_parser(
        "pca",
        help="top-k eigenspace of a symmetric PSD matrix in a file, or of a bundled SuiteSparse matrix",
        description="Reads a real symmetric matrix (.npy, .npz dense or scipy sparse, Matrix Market .mtx, or "
        "SuiteSparse's triplet text 'row col value'), or a bundled SuiteSparse matrix (--suitesparse), and computes "
        "its top-k eigenvectors with ANPM, NPM or ARPACK; prints the eigenvalues and counts, writes the basis with "
        "--out PATH (.npy; --basis is its deprecated spelling) and a summary with --json PATH. Complex matrices are "
        "refused. Example: "
        "icml26 noisypower pca --suitesparse bcsstk16 -k 2 --tol 1e-6 --json bcsstk16.json",
    )
    p.add_argument(
        "file",
        type=Path,
        nargs="?",
        help="real matrix: .npy, .npz (dense or scipy sparse), .mtx, or triplet text (row col value per line)",
    )
    p.add_argument(
        "--suitesparse",
        choices=("bcsstk16", "mbeacxc"),
        default=None,
        help="a bundled real matrix instead of FILE: bcsstk16 (symmetrised from its lower triangle) or mbeacxc "
        "(rectangular: use --gram)",
    )
    p.add_argument("--lower", action="store_true", help="FILE stores the lower triangle of a symmetric matrix")
    p.add_argument("--gram", action="store_true", help="use the Gram matrix M^T M of a (rectangular) data matrix M")
    p.add_argument("-k", type=positive_int, required=True, help="number of leading eigenvectors (< dimension)")
    p.add_argument("--method", choices=("anpm", "npm", "eigsh"), default="anpm", help="accelerated, plain or ARPACK")
    p.add_argument("--tol", type=_tolerance, default=1e-8, help="relative residual tolerance, in (0, 1)")
    p.add_argument("--max-iter", type=MAX_ITER, default=10_000, help="iteration limit (npm / anpm)")
    p.add_argument("--beta", type=nonnegative_float, default=None, help="ANPM momentum (default: Lanczos estimate)")
    p.add_argument("--symmetrize", action="store_true", help="use (A + A^T)/2 for a non-symmetric matrix")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the random start")
    add_json_argument(p, "eigenvalues and counts")
    p.add_argument("--out", "--basis", type=Path, deprecated=("--basis",),
                   help="write the (d, k) basis as .npy (to exactly this file)")  # fmt: skip

    q = sub.add_parser(
        "decentralized",
        help="decentralized PCA over a simulated gossip network (synthetic, or a real data matrix's rows split)",
        description="Builds local matrices on --nodes nodes — a synthetic spiked problem (--dim, --gap, "
        "--heterogeneity), or the rows of a real data matrix dealt out to the nodes (--data FILE or --suitesparse "
        "mbeacxc; node i holds n M_i^T M_i / m) — and runs accelerated decentralized PCA, DeEPCA or plain gossip "
        "on a ring, grid, Erdos-Renyi or complete graph; prints rounds and the worst node's sin theta, writes a "
        "summary with --json PATH. Example: icml26 noisypower decentralized --suitesparse mbeacxc --nodes 16 "
        "--graph grid -k 2 --rounds 6",
    )
    q.add_argument("--nodes", type=bounded_int(2, 4096, what="network nodes"), default=16, help="number of nodes")
    q.add_argument("--graph", choices=("ring", "grid", "erdos-renyi", "complete"), default="ring", help="topology")
    q.add_argument("--edge-prob", type=_edge_probability, default=0.3, help="edge probability of erdos-renyi graphs")
    q.add_argument("--dim", type=bounded_int(2, 8192, what="dimension"), default=100, help="dimension d (synthetic)")
    q.add_argument(
        "--data", type=Path, default=None, help="real data matrix M (m, d) whose rows are split over the nodes"
    )
    q.add_argument(
        "--suitesparse", choices=("mbeacxc",), default=None, help="the bundled mbeacxc (492 x 490) as the data matrix"
    )
    q.add_argument("-k", type=positive_int, default=3, help="number of leading eigenvectors (< dim)")
    q.add_argument("--gap", type=_open_fraction, default=0.98, help="lambda_{k+1}/lambda_k of the global matrix")
    q.add_argument("--heterogeneity", type=nonnegative_float, default=0.2, help="spread of the local matrices")
    q.add_argument("--method", choices=("accelerated", "deepca", "gossip"), default="accelerated", help="algorithm")
    q.add_argument(
        "--rounds", type=bounded_int(1, 10_000, what="rounds"), default=10, help="gossip rounds per iteration K"
    )
    q.add_argument("--tol", type=_tolerance, default=1e-6, help="sin theta tolerance, in (0, 1)")
    q.add_argument("--max-iter", type=MAX_ITER, default=5000, help="iteration limit")
    q.add_argument("--backend", choices=("sim", "mpi"), default="sim", help="in-process network or MPI ranks")
    q.add_argument("--seed", type=SEED, default=0, help="seed of the problem, the split and the graph")
    add_json_argument(q, "the run summary and history")
    return parser


def _pca(args) -> int:
    from icml26.noisypower.method import accelerated_noisy_power_method, as_block_operator, noisy_power_method

    check_json_output(args.json)
    if args.out is not None:
        check_output_path(args.out)
    A = _read_matrix(args)
    _, d, A = as_block_operator(A, symmetrize=args.symmetrize)  # validates: square, finite, symmetric
    if args.k >= d:
        raise ValueError(f"-k must be smaller than the dimension {d}; got {args.k}")
    if abs(A).max() == 0:
        raise ValueError(f"{args.file}: the matrix is zero; every vector is an eigenvector, so no top-k eigenspace")
    start = time.perf_counter()
    if args.method == "eigsh":
        from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

        try:
            vals, vecs = eigsh(
                A, k=args.k, which="LA", tol=args.tol, v0=np.random.default_rng(args.seed).standard_normal(d)
            )
        except (ArpackError, ArpackNoConvergence) as exc:
            raise ValueError(f"{args.file}: ARPACK failed: {exc}") from None
        order = np.argsort(vals)[::-1]
        vals, basis, n_iter, n_mv, converged = vals[order], vecs[:, order], None, None, True
    else:
        kw = dict(tol=args.tol, max_iter=args.max_iter, seed=args.seed)
        if args.method == "npm":
            res = noisy_power_method(A, args.k, **kw)
        else:
            res = accelerated_noisy_power_method(A, args.k, beta="auto" if args.beta is None else args.beta, **kw)
        vals, basis, n_iter, n_mv, converged = res.eigenvalues, res.basis, res.n_iter, res.n_matvecs, res.converged
    seconds = time.perf_counter() - start
    print(
        f"{args.method}: d={d}, k={args.k}, converged={converged}, iterations={n_iter}, matvecs={n_mv}, {seconds:.3f} s"
    )
    for i, v in enumerate(vals, 1):
        print(f"  lambda_{i} = {v:.12g}")
    if args.json:
        write_json(
            args.json,
            {
                "method": args.method,
                "d": d,
                "k": args.k,
                "eigenvalues": [float(v) for v in vals],
                "iterations": n_iter,
                "matvecs": n_mv,
                "converged": bool(converged),
                "seconds": seconds,
            },
        )
    if args.out:
        save_npy(args.out, basis)
    return 0 if converged else 1


def _read_matrix(args):
    """The matrix of ``pca``: a bundled SuiteSparse matrix or a file, with --lower / --gram applied."""
    from icml26.noisypower.data import load_matrix, load_suitesparse

    if (args.file is None) == (args.suitesparse is None):
        raise ValueError("give either a matrix FILE or --suitesparse NAME (exactly one)")
    if args.suitesparse is not None:
        if args.suitesparse == "mbeacxc" and not args.gram:
            raise ValueError("mbeacxc is rectangular (492 x 490): add --gram to use its Gram matrix M^T M")
        return load_suitesparse(args.suitesparse, gram=args.gram)
    return _read_data_file(args.file, lower=args.lower, gram=args.gram, square=load_matrix)


def _read_data_file(path: Path, *, lower: bool, gram: bool, square=None):
    """A matrix file in any supported format. ``square`` (``load_matrix``) reads and validates a square matrix
    when neither ``lower`` nor ``gram`` applies; otherwise the matrix may be rectangular (a data matrix)."""
    import scipy.sparse as sp

    from icml26._util.io import load_array
    from icml26.noisypower.data import load_matrix_any_shape, read_triplets, symmetrize_lower

    suffix = path.suffix.lower()
    if square is not None and not (lower or gram) and suffix in (".npy", ".npz", ".mtx"):
        return square(path)
    if suffix == ".npy":
        M = load_array(path, what="matrix file")
        if not np.issubdtype(M.dtype, np.number) or np.issubdtype(M.dtype, np.bool_):
            raise ValueError(f"{path}: matrix must be numeric; got dtype {M.dtype}")
        if np.iscomplexobj(M) and np.any(M.imag != 0):
            raise ValueError(f"{path}: matrix is complex; this PCA needs a real matrix")
        M = np.asarray(M.real, dtype=float)
        if M.ndim != 2 or M.size == 0 or not np.all(np.isfinite(M)):
            raise ValueError(f"{path}: a data matrix must be 2-D, non-empty and finite; got shape {M.shape}")
    elif suffix in (".mtx", ".npz"):
        M = load_matrix_any_shape(path)
    else:
        M = read_triplets(path)
        square_lower = M.shape[0] == M.shape[1] and M.nnz > M.shape[0]
        if not (lower or gram) and square_lower and sp.triu(M, 1).nnz == 0:
            raise ValueError(
                f"{path}: only the lower triangle is stored (as SuiteSparse's symmetric matrices are); add --lower"
            )
    if lower:
        M = symmetrize_lower(M)
    return M.T @ M if gram else M


def _decentralized(args) -> int:
    from icml26.noisypower.data import dense_problem, load_suitesparse, local_covariances, split_rows
    from icml26.noisypower.decentralized import InsufficientMixingError, decentralized_pca
    from icml26.noisypower.network import make_graph, metropolis_weights

    if args.data is not None and args.suitesparse is not None:
        raise ValueError("give --data FILE or --suitesparse NAME, not both")
    real = None
    if args.data is not None or args.suitesparse is not None:
        real = (
            load_suitesparse(args.suitesparse)
            if args.suitesparse
            else _read_data_file(check_input_file(args.data, what="data file"), lower=False, gram=False)
        )
        if real.ndim != 2 or real.shape[0] < args.nodes or real.shape[1] < 2:
            raise ValueError(f"the data matrix {real.shape} needs at least --nodes {args.nodes} rows and 2 columns")
        args.dim = real.shape[1]
    if not 1 <= args.k < args.dim:
        raise ValueError(f"need 1 <= k < dim; got k={args.k}, dim={args.dim}")
    if args.nodes < 2:
        raise ValueError(f"--nodes must be at least 2; got {args.nodes}")
    if args.nodes * args.dim**2 > MAX_LOCAL_ENTRIES:
        raise ValueError(
            f"--nodes {args.nodes} x --dim {args.dim}^2 = {args.nodes * args.dim**2:,} local matrix entries; "
            f"at most {MAX_LOCAL_ENTRIES:,} (about 2 GB)"
        )
    check_json_output(args.json)
    rng = np.random.default_rng(args.seed)
    if real is None:
        problem = dense_problem(args.dim, args.k, args.gap, seed=rng)
        A_local = local_covariances(problem.A, args.nodes, heterogeneity=args.heterogeneity, seed=rng)
        U = problem.U
    else:  # the rows dealt out to the nodes; the reference is the Gram matrix's top-k eigenvectors
        A_local = split_rows(real, args.nodes, seed=rng)
        U = np.linalg.eigh(A_local.mean(axis=0))[1][:, ::-1][:, : args.k]
    graph = make_graph(args.graph, args.nodes, p=args.edge_prob, seed=args.seed)
    W = metropolis_weights(graph)
    start = time.perf_counter()
    try:
        res = decentralized_pca(
            A_local,
            args.k,
            W=W,
            method=args.method,
            K=args.rounds,
            tol=args.tol,
            max_iter=args.max_iter,
            seed=rng,
            reference=U,
            graph=graph,
            backend=args.backend,
        )
    except InsufficientMixingError as exc:
        print(f"icml26 noisypower: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    print(
        f"{args.method} on a {args.graph} of {args.nodes} nodes ({args.backend}): {res.status} after "
        f"{res.n_iter} iterations, {res.rounds} rounds, {res.bytes_sent / 1e6:.3f} MB sent, worst sin theta "
        f"{res.history['sin_theta'][-1]:.3g}, consensus {res.history['consensus'][-1]:.3g}, {seconds:.2f} s"
    )
    if args.json:
        write_json(
            args.json,
            {
                "method": args.method,
                "graph": args.graph,
                "nodes": args.nodes,
                "backend": args.backend,
                "status": res.status,
                "iterations": res.n_iter,
                "rounds": res.rounds,
                "bytes": res.bytes_sent,
                "rounds_per_iteration": res.K,
                "mixing_contraction": res.mixing_contraction,
                "sin_theta": res.history["sin_theta"],
                "consensus": res.history["consensus"],
                "seconds": seconds,
            },
        )
    return 0 if res.converged else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 noisypower``; ``ValueError``/``OSError`` mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    return _pca(args) if args.verb == "pca" else _decentralized(args)


if __name__ == "__main__":
    sys.exit(main())
