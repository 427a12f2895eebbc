"""Layerwise linguistic probes: logistic regression from word states to ground-truth labels of the grammar.

Properties (synthetic grammar labels): ``agreement`` (the number the pending verb must agree with; syntax /
morphology), ``depth`` (tree depth, capped at 3; syntax), ``topic`` (semantics), ``pos`` (part of speech).
Train on all stories but the last, test on the last (split by story, never by word).
"""

from __future__ import annotations

import numpy as np

PROPERTIES = ("agreement", "depth", "topic", "pos")


def labels(corpus, prop: str) -> np.ndarray:
    if prop == "agreement":
        return corpus.number
    if prop == "depth":
        return np.minimum(corpus.depth, 3)
    if prop == "topic":
        return corpus.topic
    if prop == "pos":
        return corpus.pos
    raise ValueError(f"unknown probe property {prop!r}; choose from {', '.join(PROPERTIES)}")


def probe_accuracy(
    train_X: np.ndarray, train_y: np.ndarray, test_X: np.ndarray, test_y: np.ndarray, C: float = 1.0
) -> float:
    """Held-out accuracy of a standardised L2 logistic-regression probe (words with label -1 are dropped)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if train_X.shape[0] != train_y.shape[0] or test_X.shape[0] != test_y.shape[0]:
        raise ValueError(f"probe: {train_X.shape[0]}/{test_X.shape[0]} states but {len(train_y)}/{len(test_y)} labels")
    keep_tr, keep_te = train_y >= 0, test_y >= 0
    if len(np.unique(train_y[keep_tr])) < 2:
        raise ValueError("a probe needs at least two classes in the training labels")
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=500))
    with warnings.catch_warnings():  # a probe stopped at 500 lbfgs steps is still a probe; the accuracy says how good
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(train_X[keep_tr], train_y[keep_tr])
    return float(clf.score(test_X[keep_te], test_y[keep_te]))


def probe_layers(states: list[np.ndarray], corpora: list, props=PROPERTIES) -> dict[str, list[float]]:
    """Per property, held-out accuracy at every layer; ``states`` per story ``(L, N, d)``, last story = test."""
    out = {}
    for prop in props:
        ytr = np.concatenate([labels(c, prop) for c in corpora[:-1]])
        yte = labels(corpora[-1], prop)
        out[prop] = [
            probe_accuracy(np.concatenate([s[layer] for s in states[:-1]]), ytr, states[-1][layer], yte)
            for layer in range(states[0].shape[0])
        ]
    return out
