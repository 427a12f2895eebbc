"""Real processes: the SPMD program under ``mpiexec -n 4`` (oversubscribed on 2 cores) matches the simulated
network to 1e-12, with each rank reading only its own file and stopping without a reference."""

import subprocess
import sys

import numpy as np
import pytest

from icml26.noisypower import decentralized_pca, make_graph, metropolis_weights
from icml26.noisypower.data import dense_problem, local_covariances
from icml26.noisypower.method import sin_theta

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install 'icml26[mpi]')")
from icml26.noisypower.mpi import _mpi_env, find_mpiexec

pytestmark = pytest.mark.skipif(
    find_mpiexec() is None, reason="no mpiexec next to python or on PATH (pip install mpich)"
)


def _problem(n=4, d=20, k=2, seed=8):
    rng = np.random.default_rng(seed)
    P = dense_problem(d, k, 0.9, seed=rng)
    return P, local_covariances(P.A, n, heterogeneity=0.2, seed=rng)


def _spmd(n: int, args: list[str]) -> subprocess.CompletedProcess:
    cmd = [find_mpiexec(), "-n", str(n), sys.executable, "-m", "icml26.noisypower.mpi", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=_mpi_env(), timeout=120)


def test_spmd_per_rank_files_match_simulation_without_reference(tmp_path):
    """Each rank loads rank{r}.npy only, estimates beta by distributed Lanczos and stops on the residual and
    consensus distance; the simulated network with the same stopping rule agrees to 1e-12."""
    P, A_local = _problem()
    for r, A in enumerate(A_local):
        np.save(tmp_path / f"rank{r}.npy", A)
    out = tmp_path / "result.npz"
    proc = _spmd(
        4,
        [
            "--local",
            str(tmp_path / "rank{rank}.npy"),
            "-k",
            "2",
            "--graph",
            "ring",
            "--rounds",
            "4",
            "--tol",
            "1e-10",
            "--seed",
            "1",
            "--gather-bases",
            "--out",
            str(out),
        ],
    )
    assert proc.returncode == 0, proc.stderr
    assert "converged" in proc.stdout and proc.stdout.count("\n") == 1  # rank 0 reports, once
    W = metropolis_weights(make_graph("ring", 4))
    sim = decentralized_pca(A_local, 2, W=W, method="accelerated", K=4, tol=1e-10, seed=1, monitor="residual")
    assert sim.status == "converged" and "sin_theta" not in sim.history
    with np.load(out) as z:
        assert int(z["meta"][0]) == sim.n_iter
        assert abs(z["meta"][5] - sim.beta) < 1e-12  # distributed Lanczos estimate = the central lambda_3^2/4
        assert np.max(np.abs(z["bases"] - sim.bases)) < 1e-12
        np.testing.assert_allclose(z["hist_residual"], sim.history["residual"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(z["hist_consensus"], sim.history["consensus"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(z["eigenvalues"], P.eigvals[:2], atol=1e-9)
        assert sin_theta(z["basis"], P.U[:, :2]) < 1e-8  # the residual stop really found the eigenspace


def test_library_mpi_backend_matches_simulation():
    """``decentralized_pca(backend="mpi")`` starts mpiexec itself (per-rank files), here with a reference."""
    _, A_local = _problem(seed=3)
    W = metropolis_weights(make_graph("grid", 4))
    kw = dict(W=W, method="deepca", K=3, tol=1e-300, max_iter=25, seed=2, strict=False)
    sim = decentralized_pca(A_local, 2, **kw)
    mpi = decentralized_pca(A_local, 2, backend="mpi", **kw)
    assert mpi.n_iter == sim.n_iter == 25
    assert np.max(np.abs(mpi.bases - sim.bases)) < 1e-12
    np.testing.assert_allclose(mpi.history["sin_theta"], sim.history["sin_theta"], rtol=0, atol=1e-12)
    assert mpi.rounds == sim.rounds and mpi.bytes_sent == sim.bytes_sent
    assert sim.history["sin_theta"][-1] < 0.5 * sim.history["sin_theta"][0]  # it made progress


def test_spmd_missing_rank_file_is_one_line_on_every_rank(tmp_path):
    """A file missing on one rank stops all ranks (no hang), with one error line and no output."""
    _, A_local = _problem(n=2)
    np.save(tmp_path / "rank0.npy", A_local[0])
    out = tmp_path / "result.npz"
    proc = _spmd(2, ["--local", str(tmp_path / "rank{rank}.npy"), "-k", "2", "--out", str(out)])
    assert proc.returncode != 0 and not out.exists()
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "rank 1" in lines[0] and "rank1.npy does not exist" in lines[0], proc.stderr


def test_progress_lines_are_filtered_from_errors():
    """Rank 0's progress lines drive the bar and never reach the error text; other stderr is kept."""
    from icml26.noisypower.mpi import PROGRESS, _run_with_progress

    script = (
        f"import sys; print('{PROGRESS} 3 1e-2', file=sys.stderr); print('real error', file=sys.stderr); sys.exit(4)"
    )
    code, err = _run_with_progress([sys.executable, "-c", script], {}, max_iter=10, timeout=30)
    assert code == 4 and err == "real error\n"
    with pytest.raises(TimeoutError, match="did not finish"):
        _run_with_progress([sys.executable, "-c", "import time; time.sleep(30)"], {}, max_iter=1, timeout=0.5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tol", "2"], "must be in (0, 1)"),
        (["--local", "no_pattern.npy"], "must contain {rank}"),
        (["--mixing", "missing.npy"], "mixing matrix missing.npy does not exist"),
        (["--out", "result.txt"], "must end with .npz"),
        ([], "need at least 2 nodes"),  # a single process (no mpiexec) cannot form a gossip graph
    ],
)
def test_spmd_bad_input_is_one_line(tmp_path, capsys, monkeypatch, args, message):
    from icml26.noisypower.mpi import main

    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "rank0.npy", np.eye(5))
    argv = ["--local", "rank{rank}.npy", "-k", "2", "--out", "result.npz"]
    with pytest.raises(SystemExit) as exc:
        code = main([*argv, *args])
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "result.npz").exists()


_FAILING_RANK = """
import sys
import numpy as np
from mpi4py import MPI
from icml26.noisypower.mpi import spmd_pca

comm = MPI.COMM_WORLD
mode = sys.argv[1]
rng = np.random.default_rng(0)
B = rng.standard_normal((8, 8))
A = B @ B.T
calls = [0]

def local(rank):
    def op(X):
        calls[0] += 1
        if rank == 1 and calls[0] > 5:
            if mode == "raise":
                raise MemoryError("operator of rank 1 failed")
            return np.full_like(X, np.nan)
        return A @ X
    return op

res = spmd_pca(comm, local, 2, dim=8, K=1, beta=0.1, tol=1e-14, max_iter=200, strict=False)
rows = comm.gather((comm.rank, res.status, res.n_iter))  # rank 0 prints: output of 4 ranks would interleave
if comm.rank == 0:
    for row in rows:
        print(*row)
"""


@pytest.mark.parametrize("mode", ["raise", "nan"])
def test_one_rank_failing_mid_run_ends_every_rank(tmp_path, mode):
    """An operator that raises on one rank aborts the whole job with one line naming the rank; one that returns
    NaN on one rank makes every rank stop as "diverged" in the same iteration (ring, K=1 on 4 ranks: the NaN
    has not reached rank 3 yet, so a rank-local test would leave it waiting). Either way: no hang."""
    script = tmp_path / "failing.py"
    script.write_text(_FAILING_RANK)
    cmd = [find_mpiexec(), "-n", "2" if mode == "raise" else "4", sys.executable, str(script), mode]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mpi_env(), timeout=60)
    if mode == "raise":  # (2 ranks: rank 0 waits in a collective for the failed rank 1)
        assert proc.returncode != 0
        assert "error: rank 1: MemoryError: operator of rank 1 failed" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        lines = sorted(proc.stdout.split("\n")[:-1])
        assert len(lines) == 4 and len({line.split(" ", 1)[1] for line in lines}) == 1, lines
        assert all(" diverged " in line for line in lines), lines
