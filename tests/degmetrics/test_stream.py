"""Streaming a backed .h5ad / Zarr AnnData in blocks of cells gives the in-memory reference exactly."""

import anndata as ad
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from icml26.degmetrics.cli import main
from icml26.degmetrics.evaluate import DEGReference
from icml26.degmetrics.stream import reference_from_file, simulate_to_disk

KEYS = dict(perturbation_key="perturbation", control="control")
FIELDS = ("real", "weights", "t", "n_deg", "mu_ctrl", "mu_all", "n_cells")


@pytest.fixture(scope="module")
def disk_screen(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stream")
    paths = {}
    for suffix in (".h5ad", ".zarr"):
        paths[suffix] = folder / f"screen{suffix}"
        simulate_to_disk(
            paths[suffix],
            n_cells=3000,
            n_genes=120,
            n_perturbations=12,
            chunk_cells=700,
            seed=4,
            p_effect=0.1,
            library_scale=1.0,
        )
    return paths


@pytest.mark.parametrize("suffix", [".h5ad", ".zarr"])
@pytest.mark.parametrize("deg_mode", ["vsrest", "vscontrol"])
def test_streamed_reference_equals_in_memory(disk_screen, suffix, deg_mode):
    path = disk_screen[suffix]
    adata = ad.read_h5ad(path) if suffix == ".h5ad" else ad.read_zarr(path)
    memory = DEGReference.from_anndata(adata, scale="counts", deg_mode=deg_mode, **KEYS)
    streamed = reference_from_file(path, scale="counts", deg_mode=deg_mode, **KEYS)
    assert streamed.perturbations == memory.perturbations and streamed.genes.equals(memory.genes)
    for name in FIELDS:  # same blocks, same sums: bit for bit
        assert np.array_equal(getattr(streamed, name), getattr(memory, name)), name
    small_blocks = reference_from_file(path, scale="counts", deg_mode=deg_mode, chunk_cells=333, **KEYS)
    for name in FIELDS:  # other blocks: the same sums up to rounding
        np.testing.assert_allclose(getattr(small_blocks, name), getattr(memory, name), rtol=1e-9, atol=1e-12)


def test_disk_simulation_has_its_ground_truth(disk_screen):
    """The written screen is what was asked for, and its true effects are what the DEG weights find."""
    adata = ad.read_h5ad(disk_screen[".h5ad"])
    assert adata.shape == (3000, 120) and sp.issparse(adata.X) and adata.X.dtype == np.int32
    counts = adata.obs["perturbation"].value_counts()
    assert counts["control"] == 150 and counts.drop("control").between(237, 238).all()
    ref = reference_from_file(disk_screen[".zarr"], scale="counts", **KEYS)
    lfc = adata.uns["truth"]["log_fold_change"]  # (P, G)
    top = np.argsort(-ref.weights, axis=1)[:, :3]  # the 3 most weighted genes of every perturbation
    assert np.mean(np.take_along_axis(lfc != 0, top, axis=1)) > 0.9


def test_simulate_disk_command_at_20k_cells_then_score_streamed(tmp_path, capsys):
    """The command writes 20k cells in blocks; `score --stream` gives the in-memory score table."""
    big = tmp_path / "screen.h5ad"
    argv = ["simulate-disk", "--out", str(big), "--cells", "20000", "--genes", "60", "--perturbations", "20"]
    assert main([*argv, "--chunk-cells", "3000", "--p-effect", "0.1"]) == 0
    assert "20,000 cells x 60 genes" in capsys.readouterr().out
    assert ad.read_h5ad(big, backed="r").shape == (20000, 60)
    score = [
        "score",
        "--pred",
        str(big),
        "--real",
        str(big),
        "--perturbation-key",
        "perturbation",
        "--control",
        "control",
        "--data-scale",
        "counts",
        "--pred-scale",
        "counts",
    ]
    assert main([*score, "--out", str(tmp_path / "memory.csv")]) == 0
    assert main([*score, "--stream", "--out", str(tmp_path / "stream.csv")]) == 0
    memory, stream = (pd.read_csv(tmp_path / f"{name}.csv", index_col=0) for name in ("memory", "stream"))
    pd.testing.assert_frame_equal(memory, stream)
    assert (memory["wmse"] < 1e-20).all()  # the data scored against themselves


def _write(path, X, labels):
    adata = ad.AnnData(X=X, obs=pd.DataFrame({"perturbation": labels}, index=[f"c{i}" for i in range(len(labels))]))
    adata.write_h5ad(path)
    return path


LABELS = ["control"] * 4 + ["A"] * 4 + ["B"] * 4


@pytest.mark.parametrize(
    ("make", "kwargs", "message"),
    [
        (lambda: sp.csr_matrix(np.full((12, 3), np.nan)), {}, "NaN/inf"),
        (lambda: sp.csr_matrix(np.full((12, 3), 0.5)), {}, "non-integer values"),
        (lambda: sp.csr_matrix(np.full((12, 3), 7.0)), {"scale": "log1p"}, "look like raw counts"),
        (lambda: sp.csc_matrix(np.ones((12, 3))), {}, "is CSC"),
        (lambda: np.ones((12, 3)), {"perturbation_key": "guide"}, "no column 'guide'"),
        (lambda: np.ones((12, 3)), {"control": "ntc"}, "no control cells labelled 'ntc'"),
        (lambda: np.ones((12, 3)), {"layer": "raw"}, "no layer 'raw'"),
    ],
)
def test_bad_files_are_refused_with_a_clear_error(tmp_path, make, kwargs, message):
    path = _write(tmp_path / "bad.h5ad", make(), LABELS)
    kw = {**KEYS, "scale": "counts", **kwargs}
    with pytest.raises(ValueError, match=message):
        reference_from_file(path, **kw)


def test_unreadable_or_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        reference_from_file(tmp_path / "none.h5ad", scale="counts", **KEYS)
    junk = tmp_path / "junk.h5ad"
    junk.write_bytes(b"not hdf5")
    with pytest.raises(OSError, match="not a readable AnnData"):
        reference_from_file(junk, scale="counts", **KEYS)
    with pytest.raises(ValueError, match=r"\.h5ad file or a \.zarr folder"):
        reference_from_file(tmp_path / "x.csv", scale="counts", **KEYS)


def test_simulate_disk_refuses_before_writing(tmp_path, capsys):
    out = tmp_path / "s.h5ad"
    with pytest.raises(ValueError, match=r"must end with \.h5ad or \.zarr"):
        main(["simulate-disk", "--out", str(tmp_path / "s.csv"), "--cells", "1000"])
    with pytest.raises(ValueError, match="running sums"):
        main(["simulate-disk", "--out", str(out), "--genes", "100000", "--perturbations", "5000"])
    with pytest.raises(SystemExit):
        main(["simulate-disk", "--out", str(out), "--cells", "1e12"])
    assert not out.exists() and not list(tmp_path.iterdir())


def test_damaged_block_mid_stream_is_one_line_and_no_output(disk_screen, tmp_path, capsys):
    """A gzip chunk of X damaged on disk (the file opens; one block fails to decode): `score --stream` stops with
    one line naming the file and the cells, exit 2, and writes no table."""
    import h5py

    from icml26 import cli

    damaged = tmp_path / "damaged.h5ad"
    ad.read_h5ad(disk_screen[".h5ad"]).write_h5ad(damaged, compression="gzip")
    with h5py.File(damaged, "r") as f:
        data = f["X/data"]
        chunk = data.id.get_chunk_info(data.id.get_num_chunks() // 2)
    with open(damaged, "r+b") as fh:
        fh.seek(chunk.byte_offset + 8)
        fh.write(b"\xff" * min(64, chunk.size - 8))
    out = tmp_path / "table.csv"
    argv = ["degmetrics", "score", "--pred", str(disk_screen[".h5ad"]), "--real", str(damaged)]
    argv += ["--perturbation-key", "perturbation", "--control", "control", "--data-scale", "counts"]
    argv += ["--pred-scale", "counts", "--stream", "--chunk-cells", "500", "--out", str(out)]
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(cli.main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "damaged.h5ad: cannot read cells" in err[0], err
    assert not out.exists()
