"""Generators with exact spectra, file loaders and the CLI verbs (including every bad input of the issue)."""

import dataclasses
import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from icml26 import cli as top_cli
from icml26.noisypower.cli import main
from icml26.noisypower.data import (
    covariances_from_samples,
    dense_problem,
    load_matrix,
    local_covariances,
    sparse_problem,
    spiked_spectrum,
)
from icml26.registry import SYSTEMS


def test_spectrum_and_dense_problem():
    lam = spiked_spectrum(50, 4, 0.97)
    assert lam[4] / lam[3] == pytest.approx(0.97)
    assert np.all(np.diff(lam) <= 0)
    P = dense_problem(50, 4, 0.97, seed=0)
    np.testing.assert_allclose(P.A @ P.top, P.top * P.eigvals[:5], atol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(P.A)[::-1], P.eigvals, atol=1e-12)
    with pytest.raises(ValueError, match="gap_ratio"):
        spiked_spectrum(10, 2, 1.2)


def test_sparse_problem_exact_eigenpairs():
    P = sparse_problem(500, 3, gap_ratio=0.9, block=4, seed=1)
    assert sp.issparse(P.A) and P.A.nnz <= 500 * 4**4 and P.A.nnz < 0.15 * 500**2
    np.testing.assert_allclose(P.A @ P.top, P.top * P.eigvals[:4], atol=1e-12)
    assert P.gap_ratio == pytest.approx(0.9)


def test_local_covariances_mean_is_exact():
    P = dense_problem(20, 2, 0.9, seed=2)
    local = local_covariances(P.A, 5, heterogeneity=0.5, seed=3)
    np.testing.assert_allclose(local.mean(axis=0), P.A, atol=1e-14)
    assert np.linalg.norm(local[0] - P.A, 2) > 0.1 * np.linalg.norm(P.A, 2)  # nodes genuinely differ


@pytest.fixture
def matrix_files(tmp_path):
    P = dense_problem(30, 2, 0.8, seed=4)
    files = {
        "npy": tmp_path / "a.npy",
        "npz": tmp_path / "a.npz",
        "sparse": tmp_path / "s.npz",
        "mtx": tmp_path / "a.mtx",
    }
    np.save(files["npy"], P.A)
    np.savez(files["npz"], A=P.A)
    sp.save_npz(files["sparse"], sp.csr_matrix(P.A))
    scipy.io.mmwrite(files["mtx"], sp.coo_matrix(P.A))
    return P, files


def test_loaders_roundtrip(matrix_files):
    P, files = matrix_files
    for path in files.values():
        M = load_matrix(path)
        np.testing.assert_allclose(M.toarray() if sp.issparse(M) else M, P.A, atol=1e-12)


@pytest.mark.parametrize("kind", ["npy", "npz", "sparse", "mtx"])
@pytest.mark.parametrize("method", ["anpm", "npm", "eigsh"])
def test_cli_pca(matrix_files, tmp_path, kind, method, capsys):
    P, files = matrix_files
    out = tmp_path / "out.json"
    assert main(["pca", str(files[kind]), "-k", "2", "--method", method, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    np.testing.assert_allclose(result["eigenvalues"], P.eigvals[:2], rtol=1e-8)
    assert "lambda_1" in capsys.readouterr().out


def test_cli_pca_bad_inputs(tmp_path, matrix_files):
    P, files = matrix_files
    empty = tmp_path / "e.npy"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        main(["pca", str(empty), "-k", "1"])
    garbage = tmp_path / "g.npy"
    garbage.write_text("not a numpy file")
    with pytest.raises(ValueError, match="cannot read"):
        main(["pca", str(garbage), "-k", "1"])
    with pytest.raises(ValueError, match="unsupported format"):
        main(["pca", str(_write(tmp_path / "x.csv", "1,2")), "-k", "1"])
    with pytest.raises(OSError, match="does not exist"):
        main(["pca", str(tmp_path / "missing.npy"), "-k", "1"])
    rect = tmp_path / "r.npy"
    np.save(rect, np.ones((3, 4)))
    with pytest.raises(ValueError, match="square"):
        main(["pca", str(rect), "-k", "1"])
    nonsym = tmp_path / "n.npy"
    B = P.A.copy()
    B[0, 1] += 1
    np.save(nonsym, B)
    with pytest.raises(ValueError, match="--symmetrize"):
        main(["pca", str(nonsym), "-k", "2"])
    assert main(["pca", str(nonsym), "-k", "2", "--symmetrize"]) == 0
    with pytest.raises(ValueError, match="smaller than the dimension"):
        main(["pca", str(files["npy"]), "-k", "30"])
    nan = tmp_path / "nan.npy"
    B = P.A.copy()
    B[1, 1] = np.nan
    np.save(nan, B)
    with pytest.raises(ValueError, match="NaN"):
        main(["pca", str(nan), "-k", "2"])


def _write(path, text):
    path.write_text(text)
    return path


def test_cli_decentralized(tmp_path, capsys):
    out = tmp_path / "d.json"
    code = main(
        [
            "decentralized",
            "--nodes",
            "8",
            "--graph",
            "grid",
            "--dim",
            "30",
            "-k",
            "2",
            "--gap",
            "0.9",
            "--rounds",
            "8",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    result = json.loads(out.read_text())
    assert result["status"] == "converged" and result["rounds"] == 8 * result["iterations"]
    assert "converged" in capsys.readouterr().out


def test_cli_too_few_rounds_and_bad_graph(capsys):
    code = main(
        [
            "decentralized",
            "--nodes",
            "16",
            "--dim",
            "30",
            "-k",
            "2",
            "--gap",
            "0.9",
            "--heterogeneity",
            "0.5",
            "--rounds",
            "1",
        ]
    )
    assert code == 1
    assert "use more rounds" in capsys.readouterr().err
    with pytest.raises(ValueError, match="disconnected"):
        main(["decentralized", "--nodes", "30", "--graph", "erdos-renyi", "--edge-prob", "0.01"])


def test_dispatcher_turns_bad_input_into_exit_2(tmp_path, capsys):
    systems = dict(SYSTEMS)
    systems["noisypower"] = dataclasses.replace(systems["noisypower"], status="implemented")
    code = top_cli.main(["noisypower", "pca", str(tmp_path / "missing.npy"), "-k", "1"], systems)
    assert code == 2
    assert "does not exist" in capsys.readouterr().err


def test_covariances_from_samples_pool_exactly():
    rng = np.random.default_rng(6)
    parts = [rng.standard_normal((m, 5)) + 3.0 for m in (10, 25, 7)]
    local = covariances_from_samples(parts)
    pooled = np.vstack(parts)
    np.testing.assert_allclose(local.mean(axis=0), np.cov(pooled.T, bias=True), atol=1e-12)
    with pytest.raises(ValueError, match="dimension"):
        covariances_from_samples([np.ones((3, 2)), np.ones((3, 4))])
    with pytest.raises(ValueError, match="NaN"):
        covariances_from_samples([np.full((3, 2), np.nan), np.ones((3, 2))])
