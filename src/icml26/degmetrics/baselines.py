"""Calibration baselines (paper, Sec. "Calibrating metrics with baselines").

Each perturbation's cells (and the control cells) are split at random into two halves; the second half is
the observed data a metric scores against, the first half builds the baselines:

- positive: **technical duplicate** -- the first half's pseudobulk of the same perturbation;
- negative: **dataset mean** ``mu_all`` (mean of the first half's perturbation pseudobulks) and
  **control mean** (the first half's control cells);
- **interpolated duplicate** ``mu_all + alpha * (duplicate - mu_all)`` (companion paper; a positive control
  of known partial skill; the exact recipe is our reconstruction);
- **additive** for double perturbations "A+B": ``mu_all + (mu_A - mu_all) + (mu_B - mu_all)`` (clipped at 0).

:func:`calibrated_score` places a model on the 0 (negative) to 1 (positive) scale of any metric.
"""

from __future__ import annotations

import numpy as np

from icml26.degmetrics.evaluate import _labels, _listing, _matrix, check_anndata
from icml26.degmetrics.metrics import check_scale, group_moments


def split_halves(adata, *, perturbation_key: str, control: str, seed: int = 0):
    """Split every group's cells (control included) at random into two halves.

    Returns
    -------
    first, second : anndata.AnnData -- views copied into new objects; ``first`` gets ``floor(n / 2)`` cells.

    Raises
    ------
    ValueError -- a group with a single cell (no duplicate split possible) or no control cells.
    """
    labels = _labels(adata, perturbation_key, "data")
    groups, counts = np.unique(labels, return_counts=True)
    if control not in set(groups):
        raise ValueError(f"no control cells labelled {control!r} in obs[{perturbation_key!r}]")
    single = groups[counts < 2].tolist()
    if single:
        raise ValueError(f"cannot split into technical duplicates: single-cell perturbations {_listing(single)}")
    rng = np.random.default_rng(seed)
    first = np.zeros(labels.size, dtype=bool)
    for g in groups:
        idx = rng.permutation(np.flatnonzero(labels == g))
        first[idx[: idx.size // 2]] = True
    return adata[first].copy(), adata[~first].copy()


def _bulk_anndata(values: np.ndarray, names: list[str], var_names, perturbation_key: str):
    import anndata as ad
    import pandas as pd

    obs = pd.DataFrame({perturbation_key: names}, index=[f"{n}" for n in names])
    return ad.AnnData(X=np.asarray(values, dtype=np.float64), obs=obs, var=pd.DataFrame(index=var_names))


def additive_baseline(single_bulk: dict[str, np.ndarray], doubles: list[str], mu_all: np.ndarray, sep: str = "+"):
    """Additive prediction of double perturbations: ``mu_all + (mu_A - mu_all) + (mu_B - mu_all)``.

    Parameters
    ----------
    single_bulk : dict of name -> array (G,) -- pseudobulks of the single perturbations
    doubles : list of str -- names ``"A" + sep + "B"``
    mu_all : array (G,)

    Returns
    -------
    array of shape (len(doubles), G), clipped at 0 (log1p expression cannot be negative)
    """
    out = []
    for name in doubles:
        parts = name.split(sep)
        missing = [p for p in parts if p not in single_bulk]
        if len(parts) != 2 or missing:
            raise ValueError(f"double {name!r}: needs two singles joined by {sep!r}, missing {missing}")
        a, b = single_bulk[parts[0]], single_bulk[parts[1]]
        out.append(mu_all + (a - mu_all) + (b - mu_all))
    return np.maximum(np.array(out), 0.0)  # log1p expression is >= 0; the sum of two drops may undershoot


def calibration_baselines(
    adata,
    *,
    perturbation_key: str,
    control: str,
    scale: str,
    seed: int = 0,
    layer: str | None = None,
    alpha: float = 0.5,
    sep: str = "+",
):
    """Split the data and build every baseline from the first half.

    Parameters
    ----------
    adata : anndata.AnnData -- observed cells, ``obs[perturbation_key]`` with a control label
    scale : {"counts", "log1p"} -- scale of ``X`` (or ``layer``)
    alpha : float in [0, 1] -- strength of the interpolated duplicate
    sep : str -- separator of double-perturbation names; doubles get an ``additive`` prediction

    Returns
    -------
    real_half : anndata.AnnData -- the second half, on the input scale: score against it
    baselines : dict of str -> anndata.AnnData
        One row per perturbation, log1p scale: ``technical_duplicate``, ``interpolated_duplicate``,
        ``dataset_mean``, ``control_mean``; ``additive`` (doubles only, same rows) when doubles exist.
    """
    check_anndata(adata, "adata")
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1]; got {alpha}")
    first, second = split_halves(adata, perturbation_key=perturbation_key, control=control, seed=seed)
    labels = _labels(first, perturbation_key, "data")
    X = _matrix(first, layer, "data")
    check_scale(X, scale, "data")
    perts = sorted(set(labels) - {control})
    P = len(perts)
    code_of = {p: i for i, p in enumerate(perts)} | {control: P}
    n, sums, _ = group_moments(X, np.array([code_of[lab] for lab in labels]), P + 1, scale, squares=False)
    bulk, mu_ctrl = sums[:P] / n[:P, None], sums[P] / n[P]  # (P, G), (G,) log1p means of the first half
    mu_all = bulk.mean(axis=0)
    preds = {
        "technical_duplicate": bulk,
        "interpolated_duplicate": mu_all + alpha * (bulk - mu_all),
        "dataset_mean": np.tile(mu_all, (len(perts), 1)),
        "control_mean": np.tile(mu_ctrl, (len(perts), 1)),
    }
    out = {k: _bulk_anndata(v, perts, first.var_names, perturbation_key) for k, v in preds.items()}
    doubles = [p for p in perts if sep in p]
    if doubles:
        singles = {p: bulk[code_of[p]] for p in perts if sep not in p}
        out["additive"] = _bulk_anndata(
            additive_baseline(singles, doubles, mu_all, sep), doubles, first.var_names, perturbation_key
        )
    return second, out


def calibrated_score(model, negative, positive):
    """Place a metric value between a negative (0) and a positive (1) baseline: ``(m - neg) / (pos - neg)``.

    Works for lower-is-better and higher-is-better metrics alike (the sign of ``pos - neg`` carries the
    direction). Arrays broadcast; NaN where the two baselines coincide.
    """
    model, negative, positive = (np.asarray(v, dtype=np.float64) for v in (model, negative, positive))
    span = positive - negative
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(span != 0, (model - negative) / span, np.nan)
