"""Array-level metrics against closed forms, slow obvious references, scipy, scikit-learn and scanpy."""

import numpy as np
import pytest
from scipy import stats

from icml26.degmetrics import metrics as M


def _groups(seed, n_groups=5, n_genes=40):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 15, n_groups)
    codes = np.repeat(np.arange(n_groups), sizes)
    X = rng.gamma(1.0, 1.0, (codes.size, n_genes)) * (rng.random((codes.size, n_genes)) < 0.7)
    X[:, 0] = 0.0  # a gene that is never expressed: t must be 0, not NaN
    return np.log1p(X), codes, n_groups


@pytest.mark.parametrize("seed", [0, 1])
def test_welch_matches_scipy_per_group(seed):
    X, codes, P = _groups(seed)
    t, p = M.welch_t_vs_rest(X, codes, P, method="welch")
    for k in range(P):
        ref_t, ref_p = stats.ttest_ind(X[codes == k][:, 1:], X[codes != k][:, 1:], equal_var=False)
        np.testing.assert_allclose(t[k, 1:], ref_t, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(p[k, 1:], ref_p, rtol=1e-7, atol=1e-12)
    assert np.all(t[:, 0] == 0)


def test_overestim_var_matches_its_definition():
    X, codes, P = _groups(2)
    t, p = M.welch_t_vs_rest(X, codes, P, method="overestim_var")
    for k in range(P):
        a, b = X[codes == k][:, 1:], X[codes != k][:, 1:]
        n = a.shape[0]  # the rest's variance is divided by n_k, and n_k is its df count too
        ref_t, ref_p = stats.ttest_ind_from_stats(
            a.mean(0), a.std(0, ddof=1), n, b.mean(0), b.std(0, ddof=1), n, equal_var=False
        )
        np.testing.assert_allclose(t[k, 1:], ref_t, rtol=1e-8)
        np.testing.assert_allclose(p[k, 1:], ref_p, rtol=1e-7, atol=1e-12)


def test_overestim_var_matches_scanpy(small_screen):
    sc = pytest.importorskip("scanpy", reason="scanpy cross-check needs scanpy installed")
    import anndata as ad

    labels = small_screen.obs["perturbation"].astype(str).to_numpy()
    keep = labels != "control"
    X = M.log1p_normalize(small_screen.X[keep])
    perts = sorted(set(labels[keep]))
    codes = np.searchsorted(perts, labels[keep])
    t, p = M.welch_t_vs_rest(X, codes, len(perts))
    adata = ad.AnnData(X=X, obs={"g": labels[keep]})
    adata.var_names = small_screen.var_names
    sc.tl.rank_genes_groups(adata, "g", method="t-test_overestim_var", reference="rest", n_genes=X.shape[1])
    res = adata.uns["rank_genes_groups"]
    for k, name in enumerate(perts):
        order = adata.var_names.get_indexer(res["names"][name])
        np.testing.assert_allclose(t[k, order], res["scores"][name], rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(p[k, order], res["pvals"][name], rtol=1e-3, atol=1e-6)


def test_vs_control_matches_scipy():
    X, codes, P = _groups(4)
    ctrl = codes == 0
    codes2 = np.where(ctrl, -1, codes - 1)
    t, _ = M.welch_t_vs_control(X, codes2, P - 1, ctrl)
    for k in range(P - 1):
        ref, _ = stats.ttest_ind(X[codes2 == k][:, 1:], X[ctrl][:, 1:], equal_var=False)
        np.testing.assert_allclose(t[k, 1:], ref, rtol=1e-8)


def test_group_moments_blocks_and_counts_scale():
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    counts = rng.poisson(2.0, (37, 9)).astype(float)
    codes = rng.integers(-1, 4, 37)
    n1, s1, q1 = M.group_moments(counts, codes, 4, "counts", chunk=5)  # several blocks
    X = M.log1p_normalize(counts)
    for k in range(4):  # slow obvious reference
        assert n1[k] == np.sum(codes == k)
        np.testing.assert_allclose(s1[k], X[codes == k].sum(0))
        np.testing.assert_allclose(q1[k], (X[codes == k] ** 2).sum(0))
    _, s2, q2 = M.group_moments(sp.csr_matrix(X), codes, 4, "log1p", chunk=1000)
    np.testing.assert_allclose(s2, s1)
    np.testing.assert_allclose(q2, q1)
    np.testing.assert_allclose(M.pseudobulk(counts, codes, 4, "counts"), s1 / n1[:, None])


def test_t_test_needs_two_cells_per_group():
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match="at least 2 cells"):
        M.welch_t_vs_rest(X, np.array([0, 1, 1]), 2)


def test_deg_weights_follow_minmax_square_normalise():
    rng = np.random.default_rng(0)
    t = rng.normal(size=(4, 30)) * 3
    w = M.deg_weights(t)
    for k in range(4):  # slow obvious reference
        a = np.abs(t[k])
        s = ((a - a.min()) / (a.max() - a.min())) ** 2
        np.testing.assert_allclose(w[k], s / s.sum())
    np.testing.assert_allclose(w.sum(1), 1)
    assert np.all(w[np.arange(4), np.abs(t).argmin(1)] == 0)  # the weakest gene gets no weight
    np.testing.assert_allclose(M.deg_weights(np.full((1, 5), 2.0)), 0.2)  # constant |t|: uniform


def test_weighted_delta_r2_matches_sklearn():
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(1)
    real, pred = rng.normal(size=(3, 50)), rng.normal(size=(3, 50))
    w = M.deg_weights(rng.normal(size=(3, 50)))
    mu_all = real.mean(0)
    got = M.weighted_delta_r2(pred, real, w, mu_all)
    for k in range(3):
        assert got[k] == pytest.approx(r2_score(real[k] - mu_all, pred[k] - mu_all, sample_weight=w[k]), abs=1e-12)


def test_mean_baseline_r2w_closed_form():
    rng = np.random.default_rng(2)
    real = rng.normal(size=(6, 80))
    w = M.deg_weights(rng.normal(size=(6, 80)))
    mu_all = real.mean(0)
    got = M.weighted_delta_r2(np.tile(mu_all, (6, 1)), real, w, mu_all)
    d = real - mu_all
    m = (w * d).sum(1)
    v = (w * (d - m[:, None]) ** 2).sum(1)
    np.testing.assert_allclose(got, -(m**2) / v)
    assert np.all(got <= 0)


def test_unweighted_metrics_and_pearson():
    rng = np.random.default_rng(3)
    real, pred = rng.normal(size=(4, 20)), rng.normal(size=(4, 20))
    ref = rng.normal(size=20)
    np.testing.assert_allclose(M.mse(pred, real), ((pred - real) ** 2).mean(1))
    np.testing.assert_allclose(M.mae(pred, real), np.abs(pred - real).mean(1))
    np.testing.assert_allclose(M.wmse(pred, real, np.full((4, 20), 1 / 20)), M.mse(pred, real))
    got = M.pearson_delta(pred, real, ref)
    for k in range(4):
        assert got[k] == pytest.approx(stats.pearsonr(pred[k] - ref, real[k] - ref).statistic)
    assert np.isnan(M.pearson_delta(np.tile(ref, (4, 1)), real, ref)).all()  # predicting the reference
    with pytest.raises(ValueError, match="shape"):
        M.mse(pred[:, :5], real)


def test_diversity_ratio():
    rng = np.random.default_rng(4)
    real = rng.normal(size=(8, 30))
    center = real.mean(0)
    for c in (0.25, 1.0, 2.0):
        assert M.diversity_ratio(center + c * (real - center), real) == pytest.approx(c)
    assert M.diversity_ratio(np.tile(center, (8, 1)), real) == 0.0
    w = M.deg_weights(rng.normal(size=(8, 30)))
    assert M.diversity_ratio(center + 0.5 * (real - center), real, w) == pytest.approx(0.5)


def test_log1p_normalize_closed_form():
    counts = np.array([[1.0, 3.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(M.log1p_normalize(counts), [[np.log1p(2500), np.log1p(7500), 0], [0, 0, 0]])


@pytest.mark.parametrize(
    ("values", "scale", "match"),
    [
        ([[0.5, 1.7]], "counts", "looks log1p"),
        ([[3.0, 40.0]], "log1p", "look like raw counts"),
        ([[2.0, 5.0]], "log1p", "all integers"),
        ([[25.5, 0.1]], "log1p", "look like raw counts"),
        ([[-0.1, 1.0]], "log1p", "negative"),
        ([[np.nan, 1.0]], "counts", "NaN/inf"),
        ([[np.inf, 1.0]], "log1p", "NaN/inf"),
        ([[1.0]], "tpm", "scale must be"),
    ],
)
def test_check_scale_rejects(values, scale, match):
    with pytest.raises(ValueError, match=match):
        M.check_scale(np.array(values), scale, "real")


def test_check_scale_accepts_sparse_and_valid():
    import scipy.sparse as sp

    M.check_scale(sp.csr_matrix(np.array([[0, 3.0], [1.0, 0]])), "counts")
    M.check_scale(np.array([[0.0, 1.0], [0.3, 2.2]]), "log1p")
    M.check_scale(np.array([[0.0, 1.0]]), "log1p")  # binary log data is allowed
