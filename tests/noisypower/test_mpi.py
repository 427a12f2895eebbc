"""Real processes: ``mpiexec -n 8`` (oversubscribed on 2 cores) matches the simulated network to 1e-10."""

import numpy as np
import pytest

from icml26.noisypower import decentralized_pca, make_graph, metropolis_weights
from icml26.noisypower.data import dense_problem, local_covariances

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install 'icml26[mpi]')")
from icml26.noisypower.mpi import find_mpiexec

pytestmark = pytest.mark.skipif(
    find_mpiexec() is None, reason="no mpiexec next to python or on PATH (pip install mpich)"
)


@pytest.mark.parametrize(("method", "graph"), [("accelerated", "ring"), ("deepca", "grid")])
def test_mpi_8_ranks_matches_simulation(method, graph):
    rng = np.random.default_rng(8)
    P = dense_problem(20, 2, 0.9, seed=rng)
    A_local = local_covariances(P.A, 8, heterogeneity=0.2, seed=rng)
    W = metropolis_weights(make_graph(graph, 8))
    kw = dict(W=W, method=method, K=4, tol=1e-300, max_iter=25, seed=1, strict=False)
    sim = decentralized_pca(A_local, 2, **kw)
    mpi = decentralized_pca(A_local, 2, backend="mpi", **kw)
    assert mpi.n_iter == sim.n_iter == 25
    assert np.max(np.abs(mpi.bases - sim.bases)) < 1e-10
    np.testing.assert_allclose(mpi.history["sin_theta"], sim.history["sin_theta"], rtol=1e-8, atol=1e-12)
    assert mpi.rounds == sim.rounds and mpi.bytes_sent == sim.bytes_sent
    assert sim.history["sin_theta"][-1] < 0.5 * sim.history["sin_theta"][0]  # it made progress


def test_progress_lines_are_filtered_from_errors():
    """Rank 0's progress lines drive the bar and never reach the error text; other stderr is kept."""
    import sys

    from icml26.noisypower.mpi import PROGRESS, _run_with_progress

    script = (
        f"import sys; print('{PROGRESS} 3 1e-2', file=sys.stderr); print('real error', file=sys.stderr); sys.exit(4)"
    )
    code, err = _run_with_progress([sys.executable, "-c", script], {}, max_iter=10, timeout=30)
    assert code == 4 and err == "real error\n"
    with pytest.raises(TimeoutError, match="did not finish"):
        _run_with_progress([sys.executable, "-c", "import time; time.sleep(30)"], {}, max_iter=1, timeout=0.5)
