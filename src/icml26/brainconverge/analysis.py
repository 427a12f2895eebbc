"""Analyses of an alignment table: model-level scores, performance correlation with a confidence interval,
regional organisation (best layer per ROI), and bidirectional Granger tests on training trajectories.

Granger (the paper's analysis is not in the public code; this follows the notes' reconstruction):
both series are first-differenced (both trend upward during training), the lag is chosen by AIC on a common
sample (never by looking at p-values), and ``statsmodels.tsa.stattools.grangercausalitytests`` gives the
F-test p-value of "cause's past improves the prediction of effect beyond effect's own past". A permutation
null (the cause's increments shuffled in time) measures the false-positive rate of the whole pipeline.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "granger",
    "granger_bidirectional",
    "granger_null_fpr",
    "hierarchy_slope",
    "model_alignment",
    "performance_correlation",
    "planted_pair",
    "regional_organisation",
]


def model_alignment(table, *, by=("model", "step")):
    """One score per (model, step): max over layers per (subject, ROI), then the mean over ROIs and subjects."""
    best = table.groupby([*by, "subject", "roi"], sort=True)["score"].max()
    return best.groupby(list(by), sort=True).mean().rename("alignment").reset_index()


def performance_correlation(alignment: np.ndarray, performance: np.ndarray, *, covariates: np.ndarray | None = None):
    """Pearson r with p-value and the Fisher-z 95 % interval; Spearman rho; partial r given ``covariates``."""
    from scipy import stats

    a, p = np.asarray(alignment, float), np.asarray(performance, float)
    if a.ndim != 1 or p.ndim != 1:
        raise ValueError(f"alignment and performance must be 1-D (one value per model); got {a.shape}, {p.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(p))):
        raise ValueError("alignment or performance holds NaN or infinite values")
    if len(a) != len(p) or len(a) < 4:
        raise ValueError(f"need at least 4 models with both alignment and performance; got {len(a)}")
    if np.ptp(a) == 0 or np.ptp(p) == 0:
        raise ValueError("alignment or performance is constant across models: no correlation is defined")
    r, pval = stats.pearsonr(a, p)
    z, se = np.arctanh(np.clip(r, -0.999999, 0.999999)), 1.0 / np.sqrt(len(a) - 3)
    out = {
        "r": float(r),
        "p": float(pval),
        "ci_low": float(np.tanh(z - 1.96 * se)),
        "ci_high": float(np.tanh(z + 1.96 * se)),
        "spearman": float(stats.spearmanr(a, p)[0]),
        "n": len(a),
    }
    if covariates is not None:
        C = np.column_stack([np.ones(len(a)), np.asarray(covariates, float).reshape(len(a), -1)])
        ra = a - C @ np.linalg.lstsq(C, a, rcond=None)[0]
        rp = p - C @ np.linalg.lstsq(C, p, rcond=None)[0]
        out["partial_r"] = float(np.corrcoef(ra, rp)[0, 1]) if ra.std() > 0 and rp.std() > 0 else 0.0
    return out


def regional_organisation(table, *, min_layers: int = 3):
    """Best-matching layer depth (fraction of the model's hooked layers) per ROI.

    Returns ``(per_roi, layer_map)``: ``per_roi`` {roi: mean best depth over models with >= ``min_layers``
    hooked layers and subjects}; ``layer_map`` a DataFrame of mean score by (depth_frac rounded, roi).
    """
    t = table[table["n_layers"] >= min_layers]
    if t.empty:
        raise ValueError(f"no model with at least {min_layers} hooked layers: cannot rank layers")
    idx = t.groupby(["model", "step", "subject", "roi"])["score"].idxmax()
    best = t.loc[idx]
    per_roi = best.groupby("roi")["depth_frac"].mean().to_dict()
    lm = t.assign(depth=t["depth_frac"].round(2)).groupby(["depth", "roi"])["score"].mean().unstack("roi")
    return per_roi, lm


def hierarchy_slope(table, deep: str, shallow: str, *, min_layers: int = 3) -> float:
    """Mean over models (and subjects) of the least-squares slope, against layer depth (fraction of the model's
    layers), of score(``deep`` ROI) - score(``shallow`` ROI): > 0 when deeper layers favour the deeper ROI."""
    t = table[table["n_layers"] >= min_layers]
    if t.empty:
        raise ValueError(f"no model with at least {min_layers} hooked layers: cannot rank layers")
    w = t.pivot_table(index=["model", "step", "subject", "depth_frac"], columns="roi", values="score")
    missing = {deep, shallow} - set(w.columns)
    if missing:
        raise ValueError(f"ROI(s) {sorted(missing)} not in the table (ROIs: {sorted(w.columns)})")
    contrast = (w[deep] - w[shallow]).rename("c").reset_index()
    slopes = [
        np.polyfit(g["depth_frac"].to_numpy(), g["c"].to_numpy(), 1)[0]
        for _, g in contrast.groupby(["model", "step", "subject"])
    ]
    return float(np.mean(slopes))


# ----------------------------------------------------------------------------------------------------------
# Granger
# ----------------------------------------------------------------------------------------------------------


def _lagmat(v: np.ndarray, p: int, start: int) -> np.ndarray:
    return np.column_stack([v[start - k : len(v) - k] for k in range(1, p + 1)])


def select_lag(effect: np.ndarray, maxlag: int) -> int:
    """Lag 1..maxlag minimising AIC of the restricted model effect_t ~ 1 + effect_{t-1..t-p} on a common sample.

    The cause is not looked at: a lag chosen with the cause's lags in the model favours lags where the cause
    helps and inflates the false-positive rate of the F-test."""
    y = effect[maxlag:]
    best, best_aic = 1, np.inf
    for p in range(1, maxlag + 1):
        X = np.column_stack([np.ones(len(y)), _lagmat(effect, p, maxlag)])
        rss = float(np.sum((y - X @ np.linalg.lstsq(X, y, rcond=None)[0]) ** 2))
        aic = len(y) * np.log(max(rss, 1e-300) / len(y)) + 2 * X.shape[1]
        if aic < best_aic:
            best, best_aic = p, aic
    return best


def granger(cause, effect, *, maxlag: int = 2, difference: bool = True, robust: bool = False) -> dict:
    """F-test p-value that ``cause`` Granger-causes ``effect``, at the lag (1..``maxlag``) chosen by AIC of the
    effect's own autoregression (:func:`select_lag`). Raises ValueError on constant or too short series.

    ``robust=True`` replaces statsmodels' homoscedastic F-test by a Wald F-test of the cause's lags with HC3
    (heteroscedasticity-consistent) standard errors: training curves move fast early and slowly late, so their
    increments' variance is anything but constant.
    """
    from statsmodels.tsa.stattools import grangercausalitytests

    if isinstance(maxlag, bool) or not isinstance(maxlag, (int, np.integer)) or maxlag < 1:
        raise ValueError(f"maxlag must be an integer >= 1; got {maxlag!r}")
    try:
        x, y = np.asarray(cause, float), np.asarray(effect, float)
    except (TypeError, ValueError):
        raise ValueError("Granger series must be arrays of numbers") from None
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"cause and effect must be 1-D series of equal length; got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("Granger series must be finite")
    if difference:
        x, y = np.diff(x), np.diff(y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ValueError("a Granger series is constant (after differencing): the test is undefined; drop this model")
    if len(x) < 3 * maxlag + 5:
        raise ValueError(
            f"series of {len(x)} (differenced) points are too short for lag {maxlag}; need >= {3 * maxlag + 5}"
        )
    lag = select_lag(y, maxlag)
    if robust:
        import statsmodels.api as sm

        # effect_t ~ 1 + effect_{t-1..t-lag} + cause_{t-1..t-lag}; H0: every cause coefficient is 0
        X = np.column_stack([np.ones(len(y) - lag), _lagmat(y, lag, lag), _lagmat(x, lag, lag)])  # (T-lag, 1+2 lag)
        fit = sm.OLS(y[lag:], X).fit(cov_type="HC3")
        R = np.zeros((lag, X.shape[1]))
        R[np.arange(lag), 1 + lag + np.arange(lag)] = 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {"p": float(np.squeeze(fit.f_test(R).pvalue)), "lag": int(lag)}
    data = np.column_stack([y, x])  # statsmodels: does column 2 Granger-cause column 1?
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' FutureWarning about `verbose`; numerical notes
        res = grangercausalitytests(data, maxlag=[lag])
    return {"p": float(res[lag][0]["ssr_ftest"][1]), "lag": int(lag)}


def granger_bidirectional(alignment, performance, *, maxlag: int = 2, **kw) -> dict:
    """Both directions: alignment -> performance and performance -> alignment."""
    a2p = granger(alignment, performance, maxlag=maxlag, **kw)
    p2a = granger(performance, alignment, maxlag=maxlag, **kw)
    return {"p_align_to_perf": a2p["p"], "lag_a2p": a2p["lag"], "p_perf_to_align": p2a["p"], "lag_p2a": p2a["lag"]}


def granger_null_fpr(
    series: list[tuple[np.ndarray, np.ndarray]],
    *,
    n_perm: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    maxlag: int = 2,
    **kw,
) -> float:
    """False-positive rate of the pipeline under a permutation null: for each (cause, effect) pair the cause's
    increments are shuffled in time (no temporal link remains), re-integrated and tested (``kw`` go to
    :func:`granger`)."""
    hits = tests = 0
    for cause, effect in series:
        dc = np.diff(np.asarray(cause, float))
        for _ in range(n_perm):
            perm = np.concatenate([[cause[0]], cause[0] + np.cumsum(rng.permutation(dc))])
            hits += granger(perm, effect, maxlag=maxlag, **kw)["p"] < alpha
            tests += 1
    return hits / tests


def planted_pair(T: int, rng: np.random.Generator, *, coupling: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Trending series with a known direction: increments dx AR(1); dy_t = 0.3 dy_{t-1} + coupling dx_{t-1} + e.

    Returns levels (cumulative sums): (cause, effect)."""
    dx, dy = np.zeros(T), np.zeros(T)
    ex, ey = rng.standard_normal(T), rng.standard_normal(T)
    for t in range(1, T):
        dx[t] = 0.3 * dx[t - 1] + ex[t]
        dy[t] = 0.3 * dy[t - 1] + coupling * dx[t - 1] + ey[t]
    return np.cumsum(dx + 0.5), np.cumsum(dy + 0.5)
