"""Screens larger than memory: read a backed ``.h5ad`` or a Zarr AnnData in blocks of cells, and write one.

:func:`reference_from_file` builds the :class:`~icml26.degmetrics.evaluate.DEGReference` (pseudobulk means,
control mean, Welch vs-rest or vs-control t-scores, DEG weights) from running per-group sums, sums of
squares and cell counts, reading ``chunk_cells`` rows of ``X`` at a time; only ``obs`` and the (P+1, G)
running sums are held in memory. The in-memory path (:meth:`DEGReference.from_anndata`) accumulates the same
sums over the same blocks with the same code (:func:`~icml26.degmetrics.metrics.group_moments`), so both
give the same numbers.

:func:`simulate_to_disk` draws a screen of any size with the simulator's negative-binomial model and writes
it block by block (CSR int32 counts appended to ``X``), so 1M cells x 8k genes never sits in memory.
"""

from __future__ import annotations

import contextlib
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from icml26.degmetrics.config import SimConfig
from icml26.degmetrics.metrics import SCALES, group_moments, judge_scale

__all__ = ["open_cells", "reference_from_file", "simulate_to_disk"]

SUFFIXES = (".h5ad", ".zarr")


class _ScaleCheck:
    """Wraps a row-sliceable matrix: every block read is checked on the fly for the declared scale."""

    def __init__(self, X, scale: str, name: str):
        self.X, self.scale, self.name = X, scale, name
        self.shape = X.shape
        self.bad, self.vmin, self.vmax, self.integer = 0, np.inf, -np.inf, True

    def __getitem__(self, rows: slice):
        try:
            block = self.X[rows]
        except Exception as exc:  # a damaged block (h5py / zarr decode errors of many types): one line, file and rows
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise OSError(f"{self.name}: cannot read cells {rows.start}..{rows.stop} ({first})") from None
        v = block.data if sp.issparse(block) else np.asarray(block)
        if v.size:
            if not np.issubdtype(v.dtype, np.number):
                raise ValueError(f"{self.name}: expression values must be numeric, got dtype {v.dtype}")
            finite = np.isfinite(v)
            self.bad += int(v.size - np.count_nonzero(finite))
            if not self.bad:
                self.vmin, self.vmax = min(self.vmin, float(v.min())), max(self.vmax, float(v.max()))
                self.integer = self.integer and bool(np.all(np.abs(v - np.round(v)) < 1e-6))
        if self.bad:  # stop at the first bad block: the sums would be NaN anyway
            raise ValueError(f"{self.name}: contains NaN/inf values (rows {rows.start}..{rows.stop})")
        return block

    def verdict(self) -> None:
        """The same judgement as :func:`~icml26.degmetrics.metrics.check_scale`, from the blocks' summaries."""
        judge_scale(self.name, self.scale, self.vmin, self.vmax, self.integer)


@contextlib.contextmanager
def open_cells(path, *, layer: str | None = None) -> Iterator[tuple[object, pd.DataFrame, pd.Index]]:
    """Open an AnnData on disk without reading ``X``: yield ``(X, obs, var_names)``.

    ``path``: an ``.h5ad`` file or a ``.zarr`` folder. ``X`` (or ``layers[layer]``) is row-sliceable
    (``X[a:b]`` reads those cells only): a CSR dataset or a dense array on disk. Raises ``OSError`` for a
    missing or unreadable file and ``ValueError`` for a missing layer or a CSC matrix (whose rows are not
    contiguous on disk: convert it to CSR once).
    """
    from anndata.io import read_elem, sparse_dataset

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: give an .h5ad file or a .zarr folder (got {suffix or 'no suffix'!r})")
    if not path.exists():
        raise FileNotFoundError(f"no such {'folder' if suffix == '.zarr' else 'file'}: {path}")
    if suffix == ".h5ad" and path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not an .h5ad file")
    handle = None
    try:
        if suffix == ".h5ad":
            import h5py

            handle = root = h5py.File(path, "r")
        else:
            import zarr

            root = zarr.open_group(str(path), mode="r")
        obs = read_elem(root["obs"])
        var = read_elem(root["var"])
        where = "X" if layer is None else f"layers/{layer}"
        if layer is not None and ("layers" not in root or layer not in root["layers"]):
            raise ValueError(f"{path}: no layer {layer!r}")
        node = root[where]
        kind = dict(node.attrs).get("encoding-type", "array")
        if kind == "csc_matrix":
            raise ValueError(f"{path}: {where} is CSC; streaming reads rows, convert it to CSR once")
        X = sparse_dataset(node) if kind == "csr_matrix" else node
    except ValueError:
        if handle is not None:
            handle.close()
        raise
    except Exception as exc:  # h5py / zarr / anndata raise many types (OSError, KeyError ...) for a bad file
        if handle is not None:
            handle.close()
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise OSError(f"{path}: not a readable AnnData ({type(exc).__name__}: {first})") from None
    try:
        if X.shape[0] != len(obs):
            raise ValueError(f"{path}: X has {X.shape[0]} rows but obs has {len(obs)} cells")
        yield X, obs, pd.Index(var.index.astype(str))
    finally:
        if handle is not None:
            handle.close()


def reference_from_file(
    path,
    *,
    perturbation_key: str,
    control: str,
    scale: str,
    layer: str | None = None,
    deg_mode: str = "vsrest",
    ttest: str = "overestim_var",
    alpha: float = 0.05,
    chunk_cells: int = 2048,
    progress=None,
):
    """:meth:`DEGReference.from_anndata` for a file on disk, reading ``chunk_cells`` cells at a time.

    Memory: ``obs``, two (P+1, G) float64 running sums and one block of cells as float64. Same arguments
    and result as the in-memory path (tested equal); ``progress(cells_done, n_cells)`` is called per block.
    """
    from icml26.degmetrics.evaluate import DEGReference, group_codes

    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
    if not isinstance(chunk_cells, (int, np.integer)) or chunk_cells < 1:
        raise ValueError(f"chunk_cells must be a positive integer; got {chunk_cells!r}")
    with open_cells(path, layer=layer) as (X, obs, genes):
        if perturbation_key not in obs.columns:
            raise ValueError(f"{path}: obs has no column {perturbation_key!r}; columns are {list(obs.columns)}")
        labels = obs[perturbation_key].astype(str).to_numpy()
        perts, codes = group_codes(labels, control, perturbation_key)
        checked = _ScaleCheck(X, scale, str(path))
        source = checked if progress is None else _Progress(checked, progress)
        n, sums, sq = group_moments(source, codes, len(perts) + 1, scale, chunk=int(chunk_cells))
        checked.verdict()
    return DEGReference.from_moments(
        perts, genes, n, sums, sq, scale=scale, control=control, deg_mode=deg_mode, ttest=ttest, alpha=alpha
    )


class _Progress:
    def __init__(self, X, report):
        self.X, self.report, self.shape = X, report, X.shape

    def __getitem__(self, rows: slice):
        block = self.X[rows]
        self.report(min(rows.stop, self.shape[0]), self.shape[0])
        return block


def simulate_to_disk(
    path,
    *,
    n_cells: int,
    n_genes: int,
    n_perturbations: int,
    control_fraction: float = 0.05,
    chunk_cells: int = 4096,
    seed: int = 0,
    progress=None,
    **overrides,
) -> dict:
    """Simulate a screen of ``n_cells`` cells x ``n_genes`` genes and write it block by block.

    The model is :func:`~icml26.degmetrics.data.simulate`'s (per-gene negative binomial, log-normal library
    sizes, sparse ±log(fold change) effects, the shared control-vs-perturbed shift; ``overrides`` set
    :class:`SimConfig` fields such as ``p_effect``); cells are split evenly over the perturbations after
    ``control_fraction`` control cells, in blocks of consecutive cells. ``path``: ``.h5ad`` (HDF5) or
    ``.zarr``; written under a temporary name and renamed on success. ``X`` holds CSR int32 counts,
    ``obs["perturbation"]``, ``uns["truth"]`` the log fold changes.

    Returns a summary: cells, genes, non-zeros, bytes on disk.
    """
    from icml26.degmetrics.data import CONTROL, MAX_EXPECTED_COUNT, PERTURBATION_KEY, _effects, gene_parameters

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: the output must end with .h5ad or .zarr")
    for name, value in (
        ("n_cells", n_cells),
        ("n_genes", n_genes),
        ("n_perturbations", n_perturbations),
        ("chunk_cells", chunk_cells),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if not 0 < control_fraction < 1:
        raise ValueError(f"control_fraction must be in (0, 1); got {control_fraction}")
    n_ctrl = max(2, round(control_fraction * n_cells))
    if n_cells - n_ctrl < 2 * n_perturbations:
        raise ValueError(f"{n_cells} cells leave fewer than 2 per perturbation for {n_perturbations} perturbations")
    # the model's parameters; its in-memory size fields are not used here (2 cells each keeps its memory check quiet)
    cfg = SimConfig(
        n_genes=n_genes, n_perturbations=n_perturbations, n_control=2, cells_per_perturbation=2, **overrides
    )
    rng = np.random.default_rng(seed)
    mean, theta, source = gene_parameters(n_genes, cfg.gene_source, rng)
    generic = rng.normal(0.0, cfg.generic_sigma, n_genes) * (rng.random(n_genes) < cfg.generic_fraction)
    lfc = _effects(cfg, rng)  # (P, G)
    names = [f"P{i:05d}" for i in range(n_perturbations)]
    with np.errstate(over="ignore"):
        group_means = np.vstack([mean, mean * np.exp(cfg.control_bias * generic + lfc)])  # (1 + P, G)
    per = np.diff(np.linspace(0, n_cells - n_ctrl, n_perturbations + 1).round().astype(int))
    group = np.repeat(np.arange(n_perturbations + 1), np.r_[n_ctrl, per])  # (n_cells,)
    if float(np.max(group_means)) * cfg.library_scale * np.exp(5 * cfg.library_sigma) > MAX_EXPECTED_COUNT:
        raise ValueError("expected counts are too large: lower the fold change, control bias or library scale")
    obs = pd.DataFrame(
        {PERTURBATION_KEY: pd.Categorical.from_codes(group, [CONTROL, *names])},
        index=pd.Index([f"cell{i}" for i in range(n_cells)]),
    )
    var = pd.DataFrame(index=[f"gene{g}" for g in range(n_genes)])
    truth = {"perturbations": np.array(names), "log_fold_change": lfc, "generic_shift": generic, "gene_source": source}
    tmp = path.with_name(f".{path.name}.part")
    _remove(tmp)
    nnz, handle = 0, None
    try:
        root, handle = _create(tmp, suffix)
        from anndata.io import sparse_dataset, write_elem

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*autosharding.*")  # zarr's notice, not a user problem
            write_elem(root, "obs", obs)
            write_elem(root, "var", var)
            write_elem(root, "uns", {"truth": truth})
            X = None
            for lo in range(0, n_cells, chunk_cells):
                g = group[lo : lo + chunk_cells]
                library = cfg.library_scale * np.exp(rng.normal(0.0, cfg.library_sigma, g.size))  # (c,)
                m = group_means[g] * library[:, None]  # (c, G) NB means
                counts = sp.csr_matrix(rng.poisson(rng.gamma(theta, m / theta)).astype(np.int32))
                nnz += counts.nnz
                if X is None:
                    write_elem(root, "X", counts)
                    X = sparse_dataset(root["X"])
                else:
                    X.append(counts)
                if progress is not None:
                    progress(min(lo + chunk_cells, n_cells), n_cells)
            root.attrs["encoding-type"] = "anndata"
            root.attrs["encoding-version"] = "0.1.0"
        if handle is not None:
            handle.close()
            handle = None
        _remove(path)
        tmp.rename(path)
    except BaseException:
        if handle is not None:
            handle.close()
        _remove(tmp)
        raise
    size = sum(f.stat().st_size for f in path.rglob("*")) if path.is_dir() else path.stat().st_size
    return {
        "cells": n_cells,
        "genes": n_genes,
        "perturbations": n_perturbations,
        "control_cells": n_ctrl,
        "nonzeros": nnz,
        "bytes": size,
    }


def _create(tmp: Path, suffix: str):
    if suffix == ".h5ad":
        import h5py

        handle = h5py.File(tmp, "w")
        return handle, handle
    import zarr

    return zarr.open_group(str(tmp), mode="w"), None


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
