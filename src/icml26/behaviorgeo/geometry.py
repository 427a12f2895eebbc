"""Behavioural and hidden-state geometry and their comparison (the paper's Sec. 3-4, in numpy/scipy).

Pipeline, with the paper's names:

1. behaviour -> cue x response **count matrix** ``B`` (forced choice: the 2 picks of a trial; free association:
   the 5 associates of a run);
2. ``B`` -> **PPMI**: ``PPMI_ij = max(0, log p(i, j) / (p(i) p(j)))`` with probabilities from the counts;
3. PPMI rows -> **cosine similarity** between words (the behavioural geometry);
4. hidden states ``H`` (words x d) -> **mean-centred cosine** (the hidden-state geometry);
5. comparison: **RSA** = Pearson r over (sampled) upper-triangular pairs, **NN@k overlap**, and the
   **held-out-words ridge regression** (train on pairs among training words, test on all pairs among held-out
   words) with feature sets baseline / +FC / +FA / full.

Words whose behavioural row is empty (a cue never answered) are dropped from *both* geometries (``keep=``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "count_matrix",
    "heldout_ridge",
    "hidden_similarity",
    "nn_overlap",
    "pair_values",
    "ppmi",
    "ridge_cv",
    "row_cosine",
    "rsa",
    "sample_pairs",
]

ALPHAS = np.logspace(-2, 6, 15)  # the paper's RidgeCV grid


def _matrix(X, name: str, square: bool = False) -> np.ndarray:
    """``X`` as a finite, non-empty, numeric 2-D float array (square when asked); else one clear ValueError."""
    X = np.asarray(X)
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric; got dtype {X.dtype}")
    if X.ndim != 2 or X.size == 0 or (square and X.shape[0] != X.shape[1]):
        raise ValueError(f"{name} must be a non-empty {'square ' if square else ''}2-D array; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} holds NaN or infinite values")
    return X.astype(np.float64, copy=False)


def _keep_index(keep, n: int) -> np.ndarray:
    keep = np.asarray(keep)
    if keep.dtype != bool or keep.shape != (n,):
        raise ValueError(f"keep must be a boolean mask of length {n}; got dtype {keep.dtype}, shape {keep.shape}")
    return np.flatnonzero(keep)


def _indices(x, name: str) -> np.ndarray:
    x = np.asarray(x).ravel()
    if x.dtype.kind == "f" and not np.all(np.isfinite(x) & (x == np.round(x))):
        raise ValueError(f"{name} must be integer word indices; got non-integral or NaN values")
    if x.dtype.kind not in "iuf" and x.size:
        raise ValueError(f"{name} must be integer word indices; got dtype {x.dtype}")
    return x.astype(np.int64)


def count_matrix(
    cues: np.ndarray, responses: np.ndarray, n_words: int, n_responses: int | None = None
) -> sp.csr_matrix:
    """Cue x response counts ``B`` (n_words, n_responses; square by default) from parallel index arrays; negative
    responses are skipped (they mark unparsable or out-of-vocabulary answers, kept and counted elsewhere)."""
    n_responses = n_words if n_responses is None else n_responses
    cues, responses = _indices(cues, "cues"), _indices(responses, "responses")
    if cues.shape != responses.shape:
        raise ValueError(f"cues {cues.shape} and responses {responses.shape} differ in length")
    ok = responses >= 0
    if np.any(cues < 0) or np.any(cues >= n_words) or np.any(responses[ok] >= n_responses):
        raise ValueError(f"cue indices must lie in [0, {n_words}) and response indices below {n_responses}")
    data = np.ones(int(ok.sum()), dtype=np.float64)
    return sp.csr_matrix((data, (cues[ok], responses[ok])), shape=(n_words, n_responses))


def ppmi(counts: sp.spmatrix | np.ndarray) -> sp.csr_matrix:
    """Positive pointwise mutual information of a count matrix (sparse in, sparse out; no smoothing).

    ``p(i, j) = B_ij / N``, ``p(i) = sum_j B_ij / N``, ``p(j) = sum_i B_ij / N``; only non-zero counts are
    visited, so the cost is O(nnz)."""
    B = sp.csr_matrix(counts if sp.issparse(counts) else _matrix(counts, "counts"), dtype=np.float64)
    if not np.all(np.isfinite(B.data)) or np.any(B.data < 0):
        raise ValueError("counts must be finite and non-negative")
    B.eliminate_zeros()
    total = B.sum()
    if total <= 0:
        return sp.csr_matrix(B.shape, dtype=np.float64)
    row = np.asarray(B.sum(axis=1)).ravel()  # N p(i)
    col = np.asarray(B.sum(axis=0)).ravel()  # N p(j)
    coo = B.tocoo()
    pmi = np.log(coo.data * total / (row[coo.row] * col[coo.col]))  # log p(i,j) / (p(i) p(j))
    keep = pmi > 0
    return sp.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=B.shape)


def row_cosine(X: sp.spmatrix | np.ndarray) -> np.ndarray:
    """Cosine similarity between the rows of ``X`` (n, m) -> dense (n, n); an all-zero row has similarity 0."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if not np.all(np.isfinite(X.data)):
            raise ValueError("rows hold NaN or infinite values")
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        Xn = sp.diags(inv) @ X
        return np.asarray((Xn @ Xn.T).toarray())
    X = _matrix(X, "rows")
    norms = np.linalg.norm(X, axis=1)
    Xn = X * np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)[:, None]
    return Xn @ Xn.T


def hidden_similarity(H: np.ndarray, centre: bool = True) -> np.ndarray:
    """Cosine similarity of mean-centred hidden states ``H`` (n, d) -> (n, n).

    Centring removes the common direction that makes every pair of raw transformer states look similar
    (anisotropy); ``centre=False`` is kept for the test that shows why."""
    H = _matrix(H, "hidden states (words x dims)")
    if centre:
        H = H - H.mean(axis=0, keepdims=True)
    return row_cosine(H)


def _triu_from_linear(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Map linear indices of the strict upper triangle (row-major) to (i, j) with i < j."""
    k = np.asarray(k, dtype=np.int64)

    def start(i):  # linear index of (i, i + 1)
        return i * (2 * n - i - 1) // 2

    # invert the quadratic start(i) <= k, then repair floating-point rounding by one step either way
    i = np.floor((2 * n - 1 - np.sqrt((2 * n - 1) ** 2 - 8 * k.astype(np.float64))) / 2).astype(np.int64)
    i = np.clip(i, 0, n - 2)
    i[start(i) > k] -= 1
    i[start(i + 1) <= k] += 1
    j = k - start(i) + i + 1
    return i, j


def sample_pairs(n: int, n_pairs: int | None = 500_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Word pairs (i < j) for RSA: all ``n (n-1) / 2`` pairs when ``n_pairs`` is None or covers them, else
    ``n_pairs`` distinct pairs drawn uniformly without replacement (the paper samples 500k pairs); the same
    pairs must be used for both geometries."""
    if n_pairs is not None and n_pairs < 1:
        raise ValueError(f"n_pairs must be positive or None (all pairs); got {n_pairs}")
    total = n * (n - 1) // 2
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n_pairs is None or n_pairs >= total:
        return np.triu_indices(n, k=1)
    rng = np.random.default_rng(seed)
    k = np.sort(rng.choice(total, size=int(n_pairs), replace=False))
    return _triu_from_linear(k, n)


def pair_values(S: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The similarities of ``S`` at the given pairs (a vector)."""
    return np.asarray(S)[pairs[0], pairs[1]]


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    den = np.sqrt(np.dot(a, a) * np.dot(b, b))
    return float(np.dot(a, b) / den) if den > 0 else float("nan")


def rsa(
    S1: np.ndarray,
    S2: np.ndarray,
    *,
    keep: np.ndarray | None = None,
    n_pairs: int | None = 500_000,
    seed: int = 0,
) -> float:
    """Representational similarity: Pearson r between two similarity matrices over upper-triangular pairs.

    ``keep`` (bool, n) restricts both matrices to the same words (e.g. cues that were answered); pairs are
    sampled once (``sample_pairs``) and read from both matrices."""
    S1, S2 = _matrix(S1, "S1", square=True), _matrix(S2, "S2", square=True)
    if S1.shape != S2.shape:
        raise ValueError(f"RSA needs two square matrices of one shape; got {S1.shape} and {S2.shape}")
    if keep is not None:
        idx = _keep_index(keep, S1.shape[0])
        S1, S2 = S1[np.ix_(idx, idx)], S2[np.ix_(idx, idx)]
    pairs = sample_pairs(S1.shape[0], n_pairs, seed)
    if len(pairs[0]) < 3:
        return float("nan")
    return _pearson(pair_values(S1, pairs), pair_values(S2, pairs))


def nn_overlap(S1: np.ndarray, S2: np.ndarray, k: int, *, keep: np.ndarray | None = None) -> float:
    """Mean over words of |top-k neighbours in S1 and in S2| / k (the word itself excluded; ties by index)."""
    S1, S2 = _matrix(S1, "S1", square=True), _matrix(S2, "S2", square=True)
    if S1.shape != S2.shape:
        raise ValueError(f"NN@k needs two square matrices of one shape; got {S1.shape} and {S2.shape}")
    if keep is not None:
        idx = _keep_index(keep, S1.shape[0])
        S1, S2 = S1[np.ix_(idx, idx)], S2[np.ix_(idx, idx)]
    n = S1.shape[0]
    if not 1 <= k < n:
        raise ValueError(f"k must be in [1, {n - 1}] for {n} words; got {k}")

    def top(S):
        S = S.copy()
        np.fill_diagonal(S, -np.inf)
        # stable order: highest similarity first, lower index first among ties
        return np.argsort(-S, axis=1, kind="stable")[:, :k]

    a, b = top(S1), top(S2)
    hits = [len(np.intersect1d(a[i], b[i], assume_unique=True)) for i in range(n)]
    return float(np.mean(hits) / k)


class RidgeFit:
    """A fitted ridge regression ``y ~ b0 + X w`` (intercept not penalised) and the chosen ``alpha``."""

    def __init__(self, coef: np.ndarray, intercept: float, alpha: float):
        self.coef_, self.intercept_, self.alpha_ = coef, intercept, alpha

    def predict(self, X: np.ndarray) -> np.ndarray:
        return X @ self.coef_ + self.intercept_


def _ridge(X: np.ndarray, y: np.ndarray, alpha: float) -> RidgeFit:
    xm, ym = X.mean(axis=0), y.mean()
    Xc = X - xm
    w = np.linalg.solve(Xc.T @ Xc + alpha * np.eye(X.shape[1]), Xc.T @ (y - ym))
    return RidgeFit(w, float(ym - xm @ w), alpha)


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    ss_tot = np.sum((y - y.mean()) ** 2)
    return float(1 - np.sum((y - pred) ** 2) / ss_tot) if ss_tot > 0 else float("nan")


def ridge_cv(X: np.ndarray, y: np.ndarray, alphas: np.ndarray = ALPHAS, folds: int = 5, seed: int = 0) -> RidgeFit:
    """Ridge with ``alpha`` chosen by k-fold cross-validation (mean fold R^2, as scikit-learn's RidgeCV with
    ``cv=k`` scores it; shuffled folds, because pairs are ordered by word), refit on all rows. A closed form on
    few features: microseconds where RidgeCV's grid search takes a second."""
    fold = np.random.default_rng(seed).permutation(len(y)) % folds
    scores = []
    for a in alphas:
        r2 = [_r2(y[fold == f], _ridge(X[fold != f], y[fold != f], a).predict(X[fold == f])) for f in range(folds)]
        scores.append(np.mean(r2))
    return _ridge(X, y, float(alphas[int(np.argmax(scores))]))


def heldout_split(n_words: int, keep: np.ndarray | None, test_frac: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The held-out-words split of :func:`heldout_ridge`: (training words, test words), sorted indices."""
    idx = np.arange(n_words) if keep is None else _keep_index(keep, n_words)
    perm = np.random.default_rng(seed).permutation(idx)
    n_test = max(2, round(test_frac * len(idx)))
    if len(idx) - n_test < 3:
        raise ValueError(f"{len(idx)} words are too few for a held-out-words split")
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def heldout_ridge(
    target: np.ndarray,
    features: dict[str, np.ndarray],
    feature_sets: dict[str, list[str]],
    *,
    test_frac: float = 0.2,
    n_train_pairs: int | None = 100_000,
    seed: int = 0,
    alphas: np.ndarray = ALPHAS,
    keep: np.ndarray | None = None,
    predictions: bool = False,
) -> dict[str, float] | tuple[dict[str, float], dict]:
    """Held-out-words regression: test R^2 of RidgeCV predicting hidden-state similarity from feature sets.

    Words (not pairs: pairs would leak) are split into training and held-out words (:func:`heldout_split`); the
    model is fit on sampled pairs among training words (5-fold ridge CV over ``alphas``, :func:`ridge_cv`;
    features standardised on the training pairs) and scored on *all* pairs among held-out words. ``features``
    maps a name to an (n, n) similarity matrix; ``feature_sets`` maps a set name (``baseline``, ``+FC``, ...) to
    feature names. With ``predictions=True`` also returns the test pairs' words ``i``, ``j`` (indices into
    ``test_words``), ``test_words``, the target ``y`` and each set's prediction ``pred[name]``."""
    target = _matrix(target, "target", square=True)
    for name, cols in feature_sets.items():
        unknown = [c for c in cols if c not in features]
        if unknown:
            raise ValueError(f"feature set {name!r} names unknown feature {unknown[0]!r} (have {', '.join(features)})")
    features = {c: _matrix(F, f"feature {c!r}", square=True) for c, F in features.items()}
    for c, F in features.items():
        if F.shape != target.shape:
            raise ValueError(f"feature {c!r} has shape {F.shape}, the target {target.shape}")
    train_w, test_w = heldout_split(target.shape[0], keep, test_frac, seed)
    tr_i, tr_j = sample_pairs(len(train_w), n_train_pairs, seed)
    te_i, te_j = np.triu_indices(len(test_w), k=1)
    tr = (train_w[tr_i], train_w[tr_j])
    te = (test_w[te_i], test_w[te_j])
    y_tr, y_te = target[tr], target[te]
    scores, preds = {}, {}
    for name, cols in feature_sets.items():
        X_tr = np.column_stack([np.asarray(features[c])[tr] for c in cols])
        X_te = np.column_stack([np.asarray(features[c])[te] for c in cols])
        mu, sd = X_tr.mean(axis=0), X_tr.std(axis=0)
        sd[sd == 0] = 1.0
        fit = ridge_cv((X_tr - mu) / sd, y_tr, alphas, folds=5, seed=seed)
        preds[name] = fit.predict((X_te - mu) / sd)
        scores[name] = _r2(y_te, preds[name])
    if predictions:
        return scores, {"i": te_i, "j": te_j, "test_words": test_w, "y": y_te, "pred": preds}
    return scores


def bootstrap_r2(test: dict, C: np.ndarray) -> dict[str, np.ndarray]:
    """Each feature set's test R^2 on the test words resampled as the counts ``C`` (n_test, B) say (pair a < b
    weighted c_a c_b; :func:`~icml26.behaviorgeo.lmexp.bootstrap_counts`), from ``heldout_ridge(...,
    predictions=True)``'s second value: name -> (B,)."""
    W = C[test["i"]] * C[test["j"]]  # (n_pairs, B)
    y = test["y"][:, None]
    n = W.sum(0)
    ss_tot = (W * (y - (W * y).sum(0) / n) ** 2).sum(0)
    return {k: 1 - (W * (y - p[:, None]) ** 2).sum(0) / ss_tot for k, p in test["pred"].items()}
