"""Ground truth for every measure: PPMI, cosine, centring, pair sampling, RSA, NN@k and held-out ridge."""

import numpy as np
import pytest
import scipy.sparse as sp

from icml26.behaviorgeo.geometry import (
    _triu_from_linear,
    count_matrix,
    heldout_ridge,
    hidden_similarity,
    nn_overlap,
    ppmi,
    row_cosine,
    rsa,
    sample_pairs,
)


def test_ppmi_matches_the_definition():
    rng = np.random.default_rng(0)
    B = rng.poisson(0.7, size=(9, 11)).astype(float)
    B[3] = 0  # a cue never answered
    N = B.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.log((B / N) / (B.sum(1, keepdims=True) / N * B.sum(0, keepdims=True) / N))
    ref = np.where(B > 0, np.maximum(ref, 0), 0)
    np.testing.assert_allclose(ppmi(sp.csr_matrix(B)).toarray(), ref, atol=1e-12)
    assert ppmi(np.zeros((3, 3))).nnz == 0


def test_count_matrix_counts_and_skips_negative_responses():
    B = count_matrix([0, 0, 1, 2, 2], [1, 1, 2, -1, 0], 3).toarray()
    np.testing.assert_array_equal(B, [[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="response indices"):
        count_matrix([0], [5], 3)


def test_row_cosine_sparse_equals_dense_and_zero_rows_are_zero():
    rng = np.random.default_rng(1)
    X = rng.random((6, 5)) * (rng.random((6, 5)) > 0.4)
    X[2] = 0
    S = row_cosine(X)
    np.testing.assert_allclose(row_cosine(sp.csr_matrix(X)), S, atol=1e-12)
    assert np.all(S[2] == 0)
    Xn = X[[0, 1]] / np.linalg.norm(X[[0, 1]], axis=1, keepdims=True)
    assert S[0, 1] == pytest.approx(Xn[0] @ Xn[1])


def test_mean_centring_removes_a_common_offset():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(40, 8))
    H = Z + 20.0  # anisotropic: one direction shared by every state
    raw, centred = hidden_similarity(H, centre=False), hidden_similarity(H)
    truth = hidden_similarity(Z)
    assert raw[np.triu_indices(40, 1)].min() > 0.9  # every pair looks alike without centring
    np.testing.assert_allclose(centred, truth, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 10, 257, 2001])
def test_triangular_index_map_is_exact(n):
    i, j = np.triu_indices(n, 1)
    a, b = _triu_from_linear(np.arange(len(i)), n)
    np.testing.assert_array_equal(a, i)
    np.testing.assert_array_equal(b, j)


def test_sample_pairs_distinct_upper_triangle_or_all():
    i, j = sample_pairs(300, 5000, seed=3)
    assert len(i) == 5000 and np.all(i < j) and np.all(j < 300)
    assert len(set(zip(i.tolist(), j.tolist(), strict=True))) == 5000
    a, _ = sample_pairs(10, 10**6)
    assert len(a) == 45
    np.testing.assert_array_equal(sample_pairs(300, 50, seed=4)[0], sample_pairs(300, 50, seed=4)[0])


def test_rsa_is_pearson_over_pairs_and_sampling_is_close():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 6))
    S1 = row_cosine(X)
    S2 = row_cosine(X + 0.8 * rng.normal(size=X.shape))
    iu = np.triu_indices(200, 1)
    full = np.corrcoef(S1[iu], S2[iu])[0, 1]
    assert rsa(S1, S2, n_pairs=None) == pytest.approx(full, abs=1e-12)
    assert rsa(S1, S1) == pytest.approx(1.0)
    assert abs(rsa(S1, S2, n_pairs=5000, seed=1) - full) < 0.03
    keep = np.arange(200) < 100
    assert rsa(S1, S2, keep=keep, n_pairs=None) == pytest.approx(rsa(S1[:100, :100], S2[:100, :100], n_pairs=None))
    with pytest.raises(ValueError, match="square"):
        rsa(S1, S2[:10, :10])


def test_nn_overlap_against_a_slow_reference():
    rng = np.random.default_rng(6)
    S1, S2 = row_cosine(rng.normal(size=(30, 4))), row_cosine(rng.normal(size=(30, 4)))
    assert nn_overlap(S1, S1, 5) == 1.0

    def top(S, w):
        return set(sorted((i for i in range(30) if i != w), key=lambda i: -S[w, i])[:5])

    ref = [len(top(S1, w) & top(S2, w)) / 5 for w in range(30)]
    assert nn_overlap(S1, S2, 5) == pytest.approx(np.mean(ref))
    with pytest.raises(ValueError, match="k must be"):
        nn_overlap(S1, S2, 30)


def test_heldout_ridge_scores_the_true_feature_best():
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(80, 5))
    target = row_cosine(Z)
    noisy = row_cosine(Z + 0.3 * rng.normal(size=Z.shape))
    noise = row_cosine(rng.normal(size=(80, 5)))
    feats = {"truth": target, "noisy": noisy, "noise": noise}
    r2 = heldout_ridge(target, feats, {"truth": ["truth"], "noisy": ["noisy"], "noise": ["noise"]}, seed=0)
    assert r2["truth"] > 0.999 > r2["noisy"] > 0.2 > 0.02 > r2["noise"]
    with pytest.raises(ValueError, match="too few"):
        heldout_ridge(target[:4, :4], {"t": target[:4, :4]}, {"t": ["t"]})


def test_ridge_cv_matches_scikit_learn_on_the_same_folds():
    linear_model = pytest.importorskip("sklearn.linear_model")  # a reference only: not in the behavior extra
    Ridge, RidgeCV = linear_model.Ridge, linear_model.RidgeCV
    from icml26.behaviorgeo.geometry import ALPHAS, ridge_cv

    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 3))
    y = X @ np.array([1.0, -0.5, 0.0]) + 2.0 + 1.5 * rng.normal(size=300)
    ours = ridge_cv(X, y, ALPHAS, folds=5, seed=3)
    fold = np.random.default_rng(3).permutation(300) % 5
    splits = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(5)]
    ref = RidgeCV(alphas=ALPHAS, cv=splits).fit(X, y)
    assert ours.alpha_ == pytest.approx(ref.alpha_)
    np.testing.assert_allclose(ours.coef_, Ridge(alpha=ref.alpha_).fit(X, y).coef_, atol=1e-10)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-10)


_S = np.eye(5)
_NAN = np.where(np.eye(5) > 0, np.nan, 0.0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rsa(_NAN, _S), "NaN"),
        (lambda: rsa(_S, np.eye(4)), "one shape"),
        (lambda: rsa(np.zeros((0, 0)), np.zeros((0, 0))), "non-empty"),
        (lambda: rsa(np.full((5, 5), "a"), _S), "numeric"),
        (lambda: rsa(_S, _S, keep=np.ones(3, bool)), "boolean mask of length 5"),
        (lambda: nn_overlap(_NAN, _S, 2), "NaN"),
        (lambda: nn_overlap(_S, np.eye(4), 2), "one shape"),
        (lambda: hidden_similarity(np.ones(4)), "2-D"),
        (lambda: hidden_similarity(np.array([[1.0, np.nan], [0.0, 1.0]])), "NaN"),
        (lambda: count_matrix([0.0, np.nan], [1, 2], 3), "integer word indices"),
        (lambda: count_matrix([-1, 1], [1, 2], 3), "cue indices"),
        (lambda: count_matrix([0, 1], [1], 3), "differ in length"),
        (lambda: ppmi(np.array([[1.0, -2.0], [3.0, 4.0]])), "non-negative"),
        (lambda: row_cosine(np.array([[1.0, np.nan], [3.0, 4.0]])), "NaN"),
        (lambda: heldout_ridge(np.eye(30), {"a": np.eye(20)}, {"b": ["a"]}), "shape"),
        (lambda: heldout_ridge(np.eye(30), {"a": np.eye(30)}, {"b": ["x"]}), "unknown feature"),
        (lambda: heldout_ridge(np.full((30, 30), np.nan), {"a": np.eye(30)}, {"b": ["a"]}), "NaN"),
        (lambda: sample_pairs(10, -5), "n_pairs"),
    ],
)
def test_bad_inputs_give_one_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert len(str(err.value).splitlines()) == 1


def test_crossfit_folds_swap_roles_and_never_evaluate_the_held_back_words():
    from icml26.behaviorgeo.lmexp import crossfit_folds

    (s1, e1), (s2, e2) = crossfit_folds(np.arange(0, 10), np.arange(10, 20), never_evaluated=[3, 12])
    assert list(e1) == [w for w in range(10, 20) if w != 12] and list(e2) == [w for w in range(10) if w != 3]
    assert 12 in s1 and 3 in s2 and not np.intersect1d(s1, e1).size and not np.intersect1d(s2, e2).size
    with pytest.raises(ValueError, match="overlap"):
        crossfit_folds([1, 2], [2, 3])


def test_crossfit_difference_finds_a_planted_gap_and_not_an_aa_one():
    from icml26.behaviorgeo.geometry import row_cosine
    from icml26.behaviorgeo.lmexp import crossfit_difference, crossfit_folds

    rng = np.random.default_rng(0)
    V = 120
    hidden = [row_cosine(rng.normal(size=(V, 8))) for _ in range(3)]  # (V, V) per layer
    noise = [row_cosine(rng.normal(size=(V, 8))) for _ in range(3)]
    strong = hidden[1] + 0.5 * noise[0]  # follows layer 1
    weak_a, weak_b = hidden[1] + 3.0 * noise[1], hidden[1] + 3.0 * noise[2]  # an A/A pair, weaker
    perm = rng.permutation(V)
    folds = crossfit_folds(perm[: V // 2], perm[V // 2 :], never_evaluated=perm[:5])
    gap = crossfit_difference(strong, weak_a, hidden, folds, n_boot=100, seed=1)
    assert gap["layers"][0][0] == gap["layers"][1][0] == 1
    assert np.quantile(gap["boot"], 0.025) > 0 and gap["diff"] == pytest.approx(np.mean(gap["fold_diffs"]))
    aa = crossfit_difference(weak_a, weak_b, hidden, folds, n_boot=100, seed=1)
    assert np.quantile(aa["boot"], 0.025) < 0 < np.quantile(aa["boot"], 0.975)
