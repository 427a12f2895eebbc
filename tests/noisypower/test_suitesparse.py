"""Real matrices from SuiteSparse: loaders (bundled, triplet text, Matrix Market), row splits, smoke runs, CLI."""

import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from icml26.noisypower import (
    GaussianNoise,
    accelerated_noisy_power_method,
    decentralized_pca,
    make_graph,
    metropolis_weights,
    noisy_power_method,
    sin_theta,
)
from icml26.noisypower.cli import main
from icml26.noisypower.data import load_suitesparse, read_triplets, split_rows, symmetrize_lower


def test_bundled_matrices_load_as_distributed():
    A = load_suitesparse("bcsstk16")
    assert A.shape == (4884, 4884) and A.nnz == 2 * 147_631 - 4884  # lower triangle mirrored, diagonal once
    assert abs(A - A.T).max() == 0 and A.diagonal().min() > 0  # a stiffness matrix: symmetric, positive diagonal
    M = load_suitesparse("mbeacxc")
    assert M.shape == (492, 490) and M.nnz == 49_920
    G = load_suitesparse("mbeacxc", gram=True)
    np.testing.assert_allclose(G.toarray(), (M.T @ M).toarray())


def test_triplet_and_matrix_market_formats(tmp_path):
    tri = tmp_path / "small"
    tri.write_text("0 0 4.0\n1 0 1.0\n1 1 3.0\n2 1 0.5\n2 2 2.0\n")
    L = read_triplets(tri)
    A = load_suitesparse(tri, lower=True)
    np.testing.assert_array_equal(A.toarray(), [[4, 1, 0], [1, 3, 0.5], [0, 0.5, 2]])
    assert L.nnz == 5
    mtx = tmp_path / "small.mtx"
    scipy.io.mmwrite(mtx, sp.coo_matrix(A.toarray()), symmetry="symmetric")  # stores the lower triangle
    np.testing.assert_allclose(load_suitesparse(mtx).toarray(), A.toarray())
    with pytest.raises(ValueError, match="above the diagonal"):
        symmetrize_lower(A)


def test_complex_and_malformed_matrices_are_refused(tmp_path):
    cplx = tmp_path / "qc"
    cplx.write_text("0 0 1.0 0.5\n1 1 2.0 -0.1\n")
    with pytest.raises(ValueError, match="complex"):
        read_triplets(cplx)
    real_in_4 = tmp_path / "r4"
    real_in_4.write_text("0 0 1.0 0.0\n1 1 2.0 0.0\n")  # a zero imaginary column is a real matrix
    assert read_triplets(real_in_4).shape == (2, 2)
    for text, match in (
        ("0 0\n", "3 columns"),
        ("0 -1 2\n", "non-negative"),
        ("0 0 nan\n", "NaN"),
        ("a b c\n", "unsupported format"),
    ):
        bad = tmp_path / "bad"
        bad.write_text(text)
        with pytest.raises(ValueError, match=match):
            read_triplets(bad)
    with pytest.raises(ValueError, match="neither a bundled matrix"):
        load_suitesparse("bcsstk99")


def test_split_rows_mean_is_the_gram_matrix():
    M = load_suitesparse("mbeacxc")
    A_local = split_rows(M, 8, seed=0)
    assert A_local.shape == (8, 490, 490)
    np.testing.assert_allclose(A_local.mean(axis=0), (M.T @ M).toarray() / 492, atol=1e-15)
    with pytest.raises(ValueError, match="rows"):
        split_rows(np.ones((4, 3)), 8)


def test_smoke_anpm_on_bcsstk16_matches_eigsh_with_fewer_iterations_than_npm():
    """bcsstk16, k = 2 (lambda_3 / lambda_2 = 0.915): both methods reach the ARPACK eigenspace to 1e-6 under noise of
    norm 0.1 eps (lambda_2 - lambda_3), ANPM in fewer iterations (acceleration on a real spectrum)."""
    A = load_suitesparse("bcsstk16")
    vals, vecs = eigsh(A, k=3, which="LA", tol=1e-12, v0=np.ones(A.shape[0]))
    order = np.argsort(vals)[::-1]
    vals, U = vals[order], vecs[:, order[:2]]
    noise = GaussianNoise(0.1 * 1e-6 * (vals[1] - vals[2]))
    npm = noisy_power_method(A, 2, tol=1e-6, max_iter=2000, noise=noise, seed=0, reference=U)
    anpm = accelerated_noisy_power_method(A, 2, tol=1e-6, max_iter=2000, noise=noise, seed=0, reference=U)
    assert sin_theta(anpm.basis, U) <= 2e-6 and sin_theta(npm.basis, U) <= 2e-6
    assert anpm.iterations_to(1e-6) < 0.7 * npm.iterations_to(1e-6)


def test_smoke_decentralized_pca_on_mbeacxc_rows():
    """mbeacxc's rows split over 8 nodes on a ring: accelerated decentralized PCA and DeEPCA reach the Gram matrix's
    top eigenvector to 1e-6 on every node."""
    A_local = split_rows(load_suitesparse("mbeacxc"), 8, seed=0)
    W = metropolis_weights(make_graph("ring", 8))
    for method in ("accelerated", "deepca"):
        res = decentralized_pca(A_local, 1, W=W, method=method, K=6, tol=1e-6, max_iter=300, seed=0)
        assert res.converged and res.history["sin_theta"][-1] <= 1e-6


def test_cli_pca_and_decentralized_on_bundled_matrices(tmp_path, capsys):
    out = tmp_path / "b.json"
    assert main(["pca", "--suitesparse", "mbeacxc", "--gram", "-k", "2", "--tol", "1e-6", "--json", str(out)]) == 0
    lam = json.loads(out.read_text())["eigenvalues"]
    np.testing.assert_allclose(lam, [2.85689862, 1.53828546], rtol=1e-6)
    assert (
        main(
            [
                "decentralized",
                "--suitesparse",
                "mbeacxc",
                "--nodes",
                "8",
                "--graph",
                "ring",
                "-k",
                "1",
                "--rounds",
                "6",
                "--max-iter",
                "300",
            ]
        )
        == 0
    )
    assert "converged" in capsys.readouterr().out
    with pytest.raises(ValueError, match="--gram"):
        main(["pca", "--suitesparse", "mbeacxc", "-k", "2"])
    with pytest.raises(ValueError, match="exactly one"):
        main(["pca", "-k", "2"])


def test_cli_refuses_complex_lower_triangles_huge_entries_and_basis_over_input(tmp_path, capsys):
    cplx = tmp_path / "young"
    cplx.write_text("0 0 1.0 0.5\n1 1 2.0 -0.1\n")
    with pytest.raises(ValueError, match="complex"):
        main(["pca", str(cplx), "-k", "1"])
    lower = tmp_path / "lower"
    lower.write_text("0 0 4.0\n1 0 1.0\n1 1 3.0\n2 1 0.5\n2 2 2.0\n")
    with pytest.raises(ValueError, match="--lower"):
        main(["pca", str(lower), "-k", "1"])
    assert main(["pca", str(lower), "--lower", "-k", "1", "--tol", "1e-6"]) == 0
    huge = tmp_path / "huge.npy"
    np.save(huge, np.diag([3e300, 2e300, 1e300]))
    with pytest.raises(ValueError, match="rescale"):
        main(["pca", str(huge), "-k", "1"])
    before = huge.read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["pca", str(huge), "-k", "1", "--basis", str(huge)])
    assert exc.value.code == 2 and "overwrite" in capsys.readouterr().err and huge.read_bytes() == before
    with pytest.raises(SystemExit) as exc:
        main(["decentralized", "--heterogeneity", "1e300"])
    assert exc.value.code == 2
    with pytest.raises(ValueError, match="1e100"):
        decentralized_pca(np.stack([np.diag([3e300, 1.0])] * 2), 1, W=np.full((2, 2), 0.5))
