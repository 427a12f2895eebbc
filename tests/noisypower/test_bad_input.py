"""Issue 20 for noisypower: no silently wrong results, bounded sizes, loaders and outputs that name the cause."""

import json

import numpy as np
import pytest

from icml26.noisypower import accelerated_noisy_power_method, decentralized_pca, make_graph, metropolis_weights
from icml26.noisypower.cli import main
from icml26.noisypower.data import dense_problem, load_matrix, local_covariances


@pytest.fixture
def matrix(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, dense_problem(12, 2, 0.5, seed=0).A)
    return path


@pytest.mark.parametrize("tol", ["inf", "1", "2", "0", "nan"])
def test_tolerance_outside_0_1_is_refused(matrix, tol):
    with pytest.raises(SystemExit) as exc:
        main(["pca", str(matrix), "-k", "2", "--tol", tol])
    assert exc.value.code == 2
    with pytest.raises(ValueError, match="tol"):
        accelerated_noisy_power_method(np.eye(5), 1, tol=float(tol) if tol != "1" else 1.0)


def test_zero_matrix_is_refused_for_every_method(tmp_path):
    path = tmp_path / "zero.npy"
    np.save(path, np.zeros((40, 40)))
    for method in ("anpm", "npm", "eigsh"):
        with pytest.raises(ValueError, match="matrix is zero"):
            main(["pca", str(path), "-k", "2", "--method", method])


def test_complex_matrix_is_refused_not_truncated(tmp_path):
    path = tmp_path / "c.npy"
    np.save(path, np.eye(6) * (1 + 1j))
    with pytest.raises(ValueError, match="complex"):
        load_matrix(path)
    real = tmp_path / "r.npy"
    np.save(real, np.eye(6).astype(complex))  # a zero imaginary part loses nothing
    assert load_matrix(real).dtype == float


def test_loader_names_the_file_and_the_cause(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        load_matrix(tmp_path)
    garbage = tmp_path / "g.npz"
    garbage.write_bytes(bytes(range(256)))
    with pytest.raises(ValueError, match=r"g\.npz: cannot read"):
        load_matrix(garbage)


def test_basis_is_written_to_the_named_file_and_outputs_checked_first(matrix, tmp_path):
    basis = tmp_path / "b.txt"
    assert main(["pca", str(matrix), "-k", "2", "--basis", str(basis)]) == 0
    assert basis.exists() and not (tmp_path / "b.txt.npy").exists()
    assert np.load(basis).shape == (12, 2)
    with pytest.raises(IsADirectoryError):
        main(["pca", str(matrix), "-k", "2", "--json", str(tmp_path)])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        main(["decentralized", "--json", str(tmp_path / "no" / "d.json")])


def test_decentralized_sizes_are_bounded_up_front(tmp_path):
    with pytest.raises(ValueError, match="local matrix entries"):
        main(["decentralized", "--nodes", "4096", "--dim", "8192"])
    with pytest.raises(SystemExit):
        main(["decentralized", "--nodes", "1e12"])
    with pytest.raises(SystemExit):
        main(["decentralized", "--heterogeneity", "inf"])


def test_mixing_matrix_of_the_wrong_shape_is_named_as_such():
    P = dense_problem(8, 2, 0.5, seed=0)
    A_local = local_covariances(P.A, 5, heterogeneity=0.1, seed=1)
    W = metropolis_weights(make_graph("ring", 4))
    with pytest.raises(ValueError, match=r"shape \(5, 5\)"):
        decentralized_pca(A_local, 2, W=W, K=4)


def test_json_report_is_complete(matrix, tmp_path):
    out = tmp_path / "r.json"
    assert main(["pca", str(matrix), "-k", "2", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["converged"] is True
