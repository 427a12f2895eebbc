"""Data: the negative-binomial perturb-seq simulator (ground truth), the PBMC fit, and a validated loader.

The simulator follows the paper's in-silico study: per-gene NB mean and dispersion fitted to real control
cells, log-normal library sizes (sigma = 0.1714), each perturbation changing each gene with probability
``p_effect`` by ``fold_change`` up or down, and a shared control-vs-perturbed shift of strength B (the
"control bias"). The real cells are the 700 PBMCs × 765 genes that ship inside the scanpy wheel
(``10x_pbmc68k_reduced.h5ad``, BSD-3); their raw counts are recovered exactly from the log-normalised
``raw.X`` and ``obs["n_counts"]``. Perturb-seq data (Norman, Replogle) are not redistributable offline:
users bring their own ``.h5ad`` through :func:`read_perturbation_h5ad`.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from icml26.degmetrics.config import SimConfig

logger = logging.getLogger(__name__)

CONTROL = "control"
PERTURBATION_KEY = "perturbation"
PBMC_FILE = ("datasets", "10x_pbmc68k_reduced.h5ad")
#: Largest expected count of one gene in one cell the simulator draws (numpy's Poisson fails near 1e18).
MAX_EXPECTED_COUNT = 1e9


def pbmc_path() -> Path | None:
    """Path of the PBMC file bundled with scanpy, or None when scanpy is not installed (never downloads)."""
    spec = importlib.util.find_spec("scanpy")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]).joinpath(*PBMC_FILE)
    return path if path.is_file() else None


#: The largest homogeneous PBMC population (240 cells) stands in for the control cells of a screen.
PBMC_CONTROL_TYPE = "Dendritic"


@functools.lru_cache(maxsize=4)
def load_pbmc_counts(cell_type: str | None = PBMC_CONTROL_TYPE) -> np.ndarray:
    """Raw UMI counts of scanpy's bundled PBMC cells, shape (n_cells, 765), float64, integer-valued.

    ``raw.X`` holds ``log1p(counts / n_counts * 1e4)``; inverting it with ``obs["n_counts"]`` gives the
    integer counts back (to < 1e-3).

    Parameters
    ----------
    cell_type : str or None
        Keep the cells of this ``obs["bulk_labels"]`` population (default: the 240 dendritic cells, one
        homogeneous population like the control cells of a screen); None keeps all 700 cells.

    Raises
    ------
    ImportError
        When scanpy (which carries the file) is not installed.
    """
    import anndata as ad

    path = pbmc_path()
    if path is None:
        raise ImportError("the PBMC cells ship inside scanpy: pip install scanpy==1.11.5 (or use gene_source='gamma')")
    with warnings.catch_warnings():  # the 2018 file triggers anndata's old-format and migration warnings
        warnings.simplefilter("ignore")
        adata = ad.read_h5ad(path)
    if cell_type is not None:
        types = adata.obs["bulk_labels"].astype(str)
        if cell_type not in set(types):
            raise ValueError(f"no PBMC population {cell_type!r}; populations are {sorted(set(types))}")
        adata = adata[(types == cell_type).to_numpy()]
    logx = adata.raw.X
    logx = logx.toarray() if hasattr(logx, "toarray") else np.asarray(logx)
    counts = np.expm1(logx.astype(np.float64)) * adata.obs["n_counts"].to_numpy()[:, None] / 1e4
    return np.round(counts)


def fit_negative_binomial(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-gene NB mean and dispersion by the method of moments on size-factor-normalised counts.

    Parameters
    ----------
    counts : array of shape (n_cells, G)

    Returns
    -------
    mean : array (G',) -- expected count per cell at average depth (genes never seen are dropped)
    theta : array (G',) -- NB size (variance = mean + mean**2 / theta), clipped to [0.01, 1000]
    """
    counts = np.asarray(counts, dtype=np.float64)
    totals = counts.sum(axis=1)
    if np.any(totals <= 0):
        counts, totals = counts[totals > 0], totals[totals > 0]
    norm = counts / (totals / totals.mean())[:, None]  # (n, G) at the average depth
    mean = norm.mean(axis=0)
    var = norm.var(axis=0, ddof=1)
    keep = mean > 0
    mean, var = mean[keep], var[keep]
    excess = var - mean
    theta = np.where(excess > 0, mean**2 / np.maximum(excess, 1e-12), 1e3)
    return mean, np.clip(theta, 1e-2, 1e3)


#: ``fit_negative_binomial(load_pbmc_counts())`` stored once (753 genes; 12 kB), so the simulator needs no
#: scanpy: tests refit it from scanpy's file when scanpy is installed and check it is identical.
PBMC_FIT = Path(__file__).with_name("pbmc_nb_fit.npz")


@functools.lru_cache(maxsize=1)
def pbmc_fit() -> tuple[np.ndarray, np.ndarray]:
    """Per-gene NB (mean, theta) of the 240 dendritic PBMC cells, as shipped with icml26."""
    with np.load(PBMC_FIT) as fit:
        return fit["mean"], fit["theta"]


def gene_parameters(n_genes: int, source: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str]:
    """Per-gene (mean, theta) for ``n_genes`` genes, and the source actually used.

    ``pbmc`` resamples the NB fit to the PBMC control population (with replacement when more genes are
    asked for); ``gamma`` draws means from Gamma(0.5, scale 1) and theta from LogNormal(log 2, 0.5);
    ``auto`` is ``pbmc`` (kept for scripts written when the fit needed scanpy).
    """
    if source in ("pbmc", "auto"):
        mean, theta = pbmc_fit()
        idx = rng.choice(mean.size, size=n_genes, replace=n_genes > mean.size)
        return mean[idx], theta[idx], "pbmc"
    mean = rng.gamma(0.5, 1.0, size=n_genes) + 1e-3
    theta = np.exp(rng.normal(np.log(2.0), 0.5, size=n_genes))
    return mean, theta, "gamma"


def _effects(cfg: SimConfig, rng: np.random.Generator) -> np.ndarray:
    """Sparse log fold changes of the single perturbations, shape (P, G): ±log(fc) with prob. p_effect."""
    affected = rng.random((cfg.n_perturbations, cfg.n_genes)) < cfg.p_effect
    sign = rng.choice([-1.0, 1.0], size=affected.shape)
    return affected * sign * np.log(cfg.fold_change)


def simulate(config: SimConfig | None = None, *, seed: int = 0, latent_effects: np.ndarray | None = None, **overrides):
    """Simulate a perturb-seq experiment with known ground truth.

    Parameters
    ----------
    config : SimConfig, optional
        Defaults to ``SimConfig()``; keyword ``overrides`` replace its fields.
    seed : int
    latent_effects : array of shape (P, G), optional
        Log fold changes to use instead of the random sparse ones (the loss experiment derives them from
        perturbation embeddings).

    Returns
    -------
    anndata.AnnData
        ``X``: raw counts (CSR, int32), cells × genes; ``obs["perturbation"]`` (``"control"``,
        ``"P000"`` …, doubles ``"P003+P017"``); ``uns["truth"]``: ``perturbations`` (P,),
        ``log_fold_change`` (P, G, natural log, perturbation-specific), ``generic_shift`` (G,),
        ``gene_source``, and the config.
    """
    import anndata as ad
    import pandas as pd

    cfg = (config or SimConfig()).with_(**overrides)
    rng = np.random.default_rng(seed)
    mean, theta, source = gene_parameters(cfg.n_genes, cfg.gene_source, rng)  # (G,), (G,)
    G, P = cfg.n_genes, cfg.n_perturbations
    generic = rng.normal(0.0, cfg.generic_sigma, G) * (rng.random(G) < cfg.generic_fraction)  # delta_g
    lfc = _effects(cfg, rng) if latent_effects is None else np.asarray(latent_effects, dtype=np.float64)
    if lfc.shape != (P, G):
        raise ValueError(f"latent_effects must have shape {(P, G)}; got {lfc.shape}")
    names = [f"P{i:03d}" for i in range(P)]
    if cfg.n_doubles:
        pairs = {tuple(sorted(rng.choice(P, size=2, replace=False))) for _ in range(4 * cfg.n_doubles)}
        while len(pairs) < cfg.n_doubles:  # rare (n_doubles near P(P-1)/2): draw until exactly n_doubles
            pairs.add(tuple(sorted(rng.choice(P, size=2, replace=False))))
        pairs = sorted(pairs)[: cfg.n_doubles]
        lfc = np.vstack([lfc, [lfc[a] + lfc[b] for a, b in pairs]])  # doubles add in log space
        names += [f"{names[a]}+{names[b]}" for a, b in pairs]
    mu_ctrl = mean  # (G,)
    with np.errstate(over="ignore"):
        mu_pert = mean * np.exp(cfg.control_bias * generic + lfc)  # (P', G): shared shift (B) + specific effect
    group_means = np.vstack([mu_ctrl, mu_pert])  # (1 + P', G)
    sizes = [cfg.n_control] + [cfg.cells_per_perturbation] * len(names)
    group = np.repeat(np.arange(len(sizes)), sizes)  # (n_cells,)
    with np.errstate(over="ignore"):
        library = cfg.library_scale * np.exp(rng.normal(0.0, cfg.library_sigma, group.size))  # (n_cells,)
    top = float(np.max(group_means)) * float(np.max(library))
    if not np.isfinite(top) or top > MAX_EXPECTED_COUNT:
        raise ValueError(
            f"expected counts reach {top:.3g} per gene and cell (limit {MAX_EXPECTED_COUNT:.0e}): lower the fold "
            "change, control bias, library scale or latent effects"
        )
    m = group_means[group] * library[:, None]  # (n_cells, G) NB means
    counts = rng.poisson(rng.gamma(theta, m / theta))  # NB as a gamma-Poisson mixture, (n_cells, G) int64
    labels = np.array([CONTROL, *names])[group]
    obs = pd.DataFrame({PERTURBATION_KEY: pd.Categorical(labels)}, index=[f"cell{i}" for i in range(group.size)])
    var = pd.DataFrame(index=[f"gene{g}" for g in range(G)])
    # raw counts as the field stores them: sparse CSR, integer dtype (as read from a 10x/Cell Ranger matrix)
    dtype = np.int32 if counts.max(initial=0) < np.iinfo(np.int32).max else np.int64
    adata = ad.AnnData(X=sp.csr_matrix(counts.astype(dtype)), obs=obs, var=var)
    adata.uns["truth"] = {
        "perturbations": np.array(names),
        "log_fold_change": lfc,
        "generic_shift": generic,
        "gene_source": source,
        "config": {k: v for k, v in vars(cfg).items() if isinstance(v, int | float | str)},
    }
    return adata


def read_perturbation_h5ad(path, *, perturbation_key: str, control: str | None = None):
    """Read and validate a user ``.h5ad`` of a perturbation experiment.

    Parameters
    ----------
    path : str or Path
    perturbation_key : str -- ``obs`` column naming each cell's perturbation
    control : str, optional -- when given, control cells with this label must be present

    Raises
    ------
    OSError -- the file is missing, a directory, empty or not readable as AnnData
    ValueError -- the ``obs`` column or the control label is missing
    """
    import anndata as ad

    if not isinstance(perturbation_key, str):
        raise TypeError(f"perturbation_key must be a str; got {type(perturbation_key).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not an .h5ad file")
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    if path.stat().st_size == 0:
        raise OSError(f"{path}: not a readable .h5ad file (the file is empty)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # old-format / migration warnings are not errors of the user's file
            adata = ad.read_h5ad(path)
    except Exception as exc:  # h5py and anndata raise many types for a bad file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise OSError(f"{path}: not a readable .h5ad file ({type(exc).__name__}: {first[:200]})") from None
    if perturbation_key not in adata.obs.columns:
        raise ValueError(f"{path}: obs has no column {perturbation_key!r}; columns are {list(adata.obs.columns)}")
    if control is not None and not (adata.obs[perturbation_key].astype(str) == control).any():
        labels = sorted(set(adata.obs[perturbation_key].astype(str)))[:5]
        raise ValueError(f"{path}: no control cells labelled {control!r} in obs[{perturbation_key!r}] (e.g. {labels})")
    return adata
