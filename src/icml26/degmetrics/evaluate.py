"""Scoring predictions held in AnnData: ``DEGReference`` (the observed data, summarised once) and ``evaluate``.

The observed AnnData has one row per cell, ``obs[perturbation_key]`` naming the perturbation and a control
label. The prediction has the same column and either cells or one row per perturbation (pseudobulk). Both
state their scale (``counts`` or ``log1p``); it is validated, never guessed (peers that guess compute fold
changes on the wrong scale: cell-eval #184, #198). Genes are aligned by ``var_names``; perturbations must
match exactly; the control of the observed data is the reference of the "Δ vs control" metrics.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from icml26.degmetrics.metrics import (
    benjamini_hochberg,
    check_scale,
    deg_weights,
    group_moments,
    score_pseudobulk,
    welch_t_vs_control_moments,
    welch_t_vs_rest_moments,
)

logger = logging.getLogger(__name__)

METRIC_COLUMNS = ("mse", "mae", "pearson_delta_ctrl", "pearson_delta_all", "wmse", "r2w_delta")
#: Higher is better for these metrics; lower is better for the others.
HIGHER_IS_BETTER = frozenset({"pearson_delta_ctrl", "pearson_delta_all", "r2w_delta"})


def check_anndata(adata, name: str) -> None:
    """Refuse a non-AnnData (e.g. a bare ndarray) at an entry point with a clear TypeError."""
    import anndata as ad

    if not isinstance(adata, ad.AnnData):
        hint = " (wrap it: anndata.AnnData(X, obs=...))" if hasattr(adata, "shape") else ""
        raise TypeError(f"{name} must be an anndata.AnnData; got {type(adata).__name__}{hint}")


def _matrix(adata, layer: str | None, name: str):
    if layer is None:
        return adata.X
    if layer not in adata.layers:
        raise ValueError(f"{name}: no layer {layer!r}; layers are {list(adata.layers)}")
    return adata.layers[layer]


def _labels(adata, key: str, name: str) -> np.ndarray:
    if key not in adata.obs.columns:
        raise ValueError(f"{name}: obs has no column {key!r}; columns are {list(adata.obs.columns)}")
    labels = adata.obs[key].astype(str).to_numpy()
    return labels


def _listing(items, n: int = 5) -> str:
    items = sorted(items)
    more = f" and {len(items) - n} more" if len(items) > n else ""
    return ", ".join(map(repr, items[:n])) + more


def group_codes(labels: np.ndarray, control: str, perturbation_key: str) -> tuple[list[str], np.ndarray]:
    """Sorted perturbation names and every cell's group code (perturbations ``0 .. P-1``, the control ``P``)."""
    is_ctrl = labels == control
    if not is_ctrl.any():
        found = _listing(set(labels))
        raise ValueError(f"real: no control cells labelled {control!r} in obs[{perturbation_key!r}] ({found})")
    if is_ctrl.sum() < 2:
        raise ValueError("real: at least 2 control cells are needed")
    perts = sorted(set(labels[~is_ctrl]))
    if len(perts) < 2:
        raise ValueError("real: at least 2 perturbations (besides the control) are needed for vs-rest weights")
    P = len(perts)
    uniques, inverse = np.unique(labels, return_inverse=True)  # one pass over the cells, not a dict per cell
    code_of = {p: i for i, p in enumerate(perts)} | {control: P}  # the control is group P
    codes = np.array([code_of[u] for u in uniques])[inverse]
    return perts, codes


@dataclass
class DEGReference:
    """The observed data summarised for scoring: pseudobulks, DEG weights, control and all-perturbation means.

    Build with :meth:`from_anndata`. Attributes (P perturbations, G genes):

    perturbations : list of str, length P (sorted)
    genes : pandas.Index, length G
    real : array (P, G) -- observed log1p pseudobulk per perturbation
    weights : array (P, G) -- DEG weights (rows sum to 1)
    t : array (P, G) -- t-scores the weights came from
    n_deg : array (P,) -- genes with BH-adjusted p < ``alpha`` (FDR per perturbation)
    mu_ctrl : array (G,) -- control mean; mu_all : array (G,) -- mean of the P pseudobulks
    n_cells : array (P,)
    """

    perturbations: list[str]
    genes: pd.Index
    real: np.ndarray
    weights: np.ndarray
    t: np.ndarray
    n_deg: np.ndarray
    mu_ctrl: np.ndarray
    mu_all: np.ndarray
    n_cells: np.ndarray
    settings: dict = field(default_factory=dict)

    @classmethod
    def from_anndata(
        cls,
        real,
        *,
        perturbation_key: str,
        control: str,
        scale: str,
        layer: str | None = None,
        deg_mode: str = "vsrest",
        ttest: str = "overestim_var",
        alpha: float = 0.05,
    ) -> DEGReference:
        """Summarise observed single-cell data.

        Parameters
        ----------
        real : anndata.AnnData, cells x genes
        perturbation_key : str -- ``obs`` column naming each cell's perturbation
        control : str -- label of the control cells in that column
        scale : {"counts", "log1p"} -- what ``X`` (or ``layer``) holds; validated
        layer : str, optional -- use this layer instead of ``X``
        deg_mode : {"vsrest", "vscontrol"} -- the paper's weights come from ``vsrest`` (control excluded)
        ttest : {"overestim_var", "welch"} -- see :func:`~icml26.degmetrics.metrics.welch_t_vs_rest`
        alpha : float -- BH level for the reported DEG counts
        """
        check_anndata(real, "real")
        if deg_mode not in ("vsrest", "vscontrol"):
            raise ValueError(f"deg_mode must be 'vsrest' or 'vscontrol'; got {deg_mode!r}")
        labels = _labels(real, perturbation_key, "real")
        perts, codes = group_codes(labels, control, perturbation_key)
        X = _matrix(real, layer, "real")  # (n_cells, G), counts or log1p
        check_scale(X, scale, "real")
        n, sums, sq = group_moments(X, codes, len(perts) + 1, scale)  # (P+1,), (P+1, G), (P+1, G)
        genes = pd.Index(real.var_names.astype(str))
        return cls.from_moments(
            perts, genes, n, sums, sq, scale=scale, deg_mode=deg_mode, ttest=ttest, alpha=alpha, control=control
        )

    @classmethod
    def from_moments(
        cls,
        perts: list[str],
        genes: pd.Index,
        n: np.ndarray,
        sums: np.ndarray,
        sq: np.ndarray,
        *,
        scale: str,
        control: str,
        deg_mode: str = "vsrest",
        ttest: str = "overestim_var",
        alpha: float = 0.05,
    ) -> DEGReference:
        """The reference from per-group cell counts, sums and sums of squares of log1p expression.

        ``n`` (P+1,), ``sums`` and ``sq`` (P+1, G), groups in the order of ``perts`` and the control last (as
        :func:`~icml26.degmetrics.metrics.group_moments` returns them for :func:`group_codes`); the in-memory
        path and the streaming one (:func:`icml26.degmetrics.stream.reference_from_file`) both end here.
        """
        if deg_mode not in ("vsrest", "vscontrol"):
            raise ValueError(f"deg_mode must be 'vsrest' or 'vscontrol'; got {deg_mode!r}")
        P = len(perts)
        if not np.any(sums):
            raise ValueError(
                "real: every expression value is 0, so no gene varies and every metric would be undefined (NaN)"
            )
        n_cells = n[:P].astype(int)
        single = [perts[i] for i in np.flatnonzero(n_cells < 2)]
        if single:
            raise ValueError(f"real: perturbations with a single cell cannot be tested: {_listing(single)}")
        bulk = sums[:P] / n[:P, None]  # (P, G) pseudobulks
        if deg_mode == "vsrest":  # control excluded: only the P perturbation groups enter the rest
            t, p = welch_t_vs_rest_moments(n[:P], sums[:P], sq[:P], method=ttest)
        else:
            t, p = welch_t_vs_control_moments(n[:P], sums[:P], sq[:P], n[P], sums[P], sq[P])
        n_deg = (benjamini_hochberg(p) < alpha).sum(axis=1)
        return cls(
            perturbations=perts,
            genes=genes,
            real=bulk,
            weights=deg_weights(t),
            t=t,
            n_deg=n_deg,
            mu_ctrl=sums[P] / n[P],
            mu_all=bulk.mean(axis=0),
            n_cells=n_cells,
            settings={"scale": scale, "deg_mode": deg_mode, "ttest": ttest, "alpha": alpha, "control": control},
        )

    def annotate(self, adata, key: str = "degmetrics") -> None:
        """Write the DEG weights and t-scores into ``adata`` as scanpy users expect, in place.

        ``varm[f"{key}_weights"]`` and ``varm[f"{key}_t"]``: DataFrames genes x perturbations;
        ``uns[key]``: ``perturbations``, ``n_deg``, ``n_cells`` and the settings they were computed with.
        ``adata`` must have the reference's genes in the same order (the data it was built from, or a copy).
        """
        check_anndata(adata, "adata")
        genes = pd.Index(adata.var_names.astype(str))
        if not genes.equals(self.genes):
            raise ValueError("adata's var_names differ from the reference's genes; annotate the data it was built from")
        for name, values in ((f"{key}_weights", self.weights), (f"{key}_t", self.t)):
            adata.varm[name] = pd.DataFrame(values.T, index=adata.var_names, columns=self.perturbations)
        adata.uns[key] = {
            "perturbations": np.array(self.perturbations),
            "n_deg": np.asarray(self.n_deg),
            "n_cells": np.asarray(self.n_cells),
            "settings": {k: v for k, v in self.settings.items() if isinstance(v, str | int | float)},
        }


@dataclass
class Evaluation:
    """Result of :func:`evaluate`: ``table`` (one row per perturbation) and ``summary`` (column means)."""

    table: pd.DataFrame
    summary: pd.Series


def _pred_pseudobulk(pred, ref: DEGReference, perturbation_key, control, scale, layer):
    labels = _labels(pred, perturbation_key, "pred")
    genes_pred = pd.Index(pred.var_names.astype(str))
    if genes_pred.equals(ref.genes):
        order = np.arange(len(ref.genes))  # same genes in the same order (duplicated names included)
    else:
        if genes_pred.has_duplicates or ref.genes.has_duplicates:
            dups = set(genes_pred[genes_pred.duplicated()]) | set(ref.genes[ref.genes.duplicated()])
            raise ValueError(f"cannot align pred and real by var_names: duplicated gene names [{_listing(dups)}]")
        missing, extra = set(ref.genes) - set(genes_pred), set(genes_pred) - set(ref.genes)
        if missing or extra:
            raise ValueError(
                "pred and real have different genes: "
                f"missing in pred: [{_listing(missing)}]; only in pred: [{_listing(extra)}]"
            )
        order = genes_pred.get_indexer(ref.genes)  # align by var_names
    X = _matrix(pred, layer, "pred")
    check_scale(X, scale, "pred")
    pred_perts = set(labels) - {control}
    missing, extra = set(ref.perturbations) - pred_perts, pred_perts - set(ref.perturbations)
    if missing or extra:
        raise ValueError(
            f"perturbations differ: missing in pred: [{_listing(missing)}]; only in pred: [{_listing(extra)}]"
        )
    P = len(ref.perturbations)
    code_of = {p: i for i, p in enumerate(ref.perturbations)} | {control: P}
    codes = np.array([code_of[lab] for lab in labels])
    n, sums, _ = group_moments(X, codes, P + 1, scale, squares=False)
    means = sums[:, order] / np.maximum(n, 1)[:, None]  # (P+1, G) in the reference's gene order
    return means[:P], (means[P] if n[P] > 0 else None)


def evaluate(
    pred,
    real,
    *,
    perturbation_key: str,
    control: str,
    scale: str | None = None,
    pred_scale: str = "log1p",
    layer: str | None = None,
    pred_layer: str | None = None,
    control_reference: str = "real",
    **reference_kwargs,
) -> Evaluation:
    """Score a prediction against observed data with every metric, one row per perturbation.

    Parameters
    ----------
    pred : anndata.AnnData
        Predicted expression, cells or one row per perturbation, with ``obs[perturbation_key]``.
    real : anndata.AnnData or DEGReference
        Observed single cells (summarised here) or a reference built once with
        :meth:`DEGReference.from_anndata` (faster when scoring many predictions).
    perturbation_key, control : str
    scale : {"counts", "log1p"}
        Scale of ``real`` (required when ``real`` is an AnnData).
    pred_scale : {"log1p", "counts"}
        Scale of ``pred`` (default ``log1p``: models predict log-normalised expression).
    layer, pred_layer : str, optional -- layers to use instead of ``X``
    control_reference : {"real", "pred"}
        Control mean subtracted from the prediction in ``pearson_delta_ctrl``: the observed one (default)
        or the prediction's own control cells (cell-eval's convention; scaling them changes the score).
    **reference_kwargs
        ``deg_mode``, ``ttest``, ``alpha`` for :meth:`DEGReference.from_anndata`.

    Returns
    -------
    Evaluation
        ``table`` columns: ``mse, mae, pearson_delta_ctrl, pearson_delta_all, wmse, r2w_delta, n_deg,
        n_cells``; ``summary``: their means over perturbations (NaN-aware).
    """
    check_anndata(pred, "pred")
    if not isinstance(real, DEGReference):
        check_anndata(real, "real")
    if control_reference not in ("real", "pred"):
        raise ValueError(f"control_reference must be 'real' or 'pred'; got {control_reference!r}")
    if isinstance(real, DEGReference):
        ref = real
        # A reference is summarised once: options that would build it differently must not be dropped silently.
        ignored = sorted(reference_kwargs) + (["layer"] if layer is not None else [])
        if ignored:
            raise ValueError(
                f"{', '.join(ignored)} configure the reference; real is an already built DEGReference "
                "(build it with DEGReference.from_anndata(..., " + ", ".join(f"{k}=..." for k in ignored) + "))"
            )
        for name, value in (("scale", scale), ("control", control)):
            if name == "control" or value is not None:
                built = ref.settings.get(name, value)
                if value != built:
                    raise ValueError(f"{name}={value!r} but the DEGReference was built with {name}={built!r}")
    else:
        if scale is None:
            raise ValueError("state the scale of real: scale='counts' or scale='log1p'")
        ref = DEGReference.from_anndata(
            real, perturbation_key=perturbation_key, control=control, scale=scale, layer=layer, **reference_kwargs
        )
    bulk, pred_ctrl = _pred_pseudobulk(pred, ref, perturbation_key, control, pred_scale, pred_layer)
    if control_reference == "pred" and pred_ctrl is None:
        raise ValueError(f"control_reference='pred' needs control cells labelled {control!r} in pred")
    scores = score_pseudobulk(
        bulk, ref.real, ref.weights, ref.mu_ctrl, ref.mu_all, pred_ctrl if control_reference == "pred" else None
    )
    table = pd.DataFrame(scores, index=pd.Index(ref.perturbations, name=perturbation_key))
    table["n_deg"] = ref.n_deg
    table["n_cells"] = ref.n_cells
    summary = table[list(METRIC_COLUMNS)].mean(axis=0, skipna=True)
    return Evaluation(table=table, summary=summary)
