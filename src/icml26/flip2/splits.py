"""FLIP2 split families as functions of any :class:`~icml26.flip2.data.VariantTable`.

Each builder returns a :class:`Split` of index arrays (train / val / test). Validation is drawn from the
training side only: ``val_fraction`` (FLIP2: 15 %) of train, chosen with a fixed seed (FLIP2: 0). Families
(paper Sec. "splits"; FLIP v1 names in brackets): number of mutations ``one_to_many`` / ``two_to_many`` /
``three_to_many`` [``one_vs_rest`` ...], position ``close_to_far`` / ``far_to_close`` / ``by_position``,
``by_mutation``, wild type ``by_wt``, fitness ``low_to_high`` [``low_vs_high``], and ``random`` [``sampled``].
A split with an empty train or test side raises ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.flip2.data import VariantTable

VAL_FRACTION = 0.15
VAL_SEED = 0


@dataclass(frozen=True)
class Split:
    """Index arrays into a table: ``train``, ``val`` (from the training side) and ``test``."""

    name: str
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray

    def assignment(self, n: int) -> np.ndarray:
        """Per-variant labels ``"train"``, ``"val"``, ``"test"`` or ``""`` (not in the split), shape (n,)."""
        out = np.full(n, "", dtype=object)
        out[self.train], out[self.val], out[self.test] = "train", "val", "test"
        return out.astype(str)


def _finish(name: str, train_mask, test_mask, *, val_fraction: float, val_seed: int) -> Split:
    train_idx, test_idx = np.flatnonzero(train_mask), np.flatnonzero(test_mask)
    if len(test_idx) == 0:
        raise ValueError(f"split {name!r} has an empty test set")
    if len(train_idx) < 2:
        raise ValueError(f"split {name!r} has {len(train_idx)} training variants; need at least 2")
    if not 0 <= val_fraction < 1:
        raise ValueError(f"val_fraction must be in [0, 1); got {val_fraction}")
    rng = np.random.default_rng(val_seed)
    n_val = round(val_fraction * len(train_idx))
    perm = rng.permutation(train_idx)
    return Split(name, np.sort(perm[n_val:]), np.sort(perm[:n_val]), test_idx)


def by_n_mutations(t: VariantTable, k: int, *, name: str | None = None, val_fraction=VAL_FRACTION, val_seed=VAL_SEED):
    """Train on variants with <= ``k`` mutations (wild type included), test on those with more."""
    if k < 0:
        raise ValueError(f"k must be >= 0; got {k}")
    n = t.n_mutations()
    word = {0: "zero", 1: "one", 2: "two", 3: "three"}.get(k, str(k))
    return _finish(name or f"{word}_to_many", n <= k, n > k, val_fraction=val_fraction, val_seed=val_seed)


def low_to_high(t: VariantTable, threshold: float | None = None, *, val_fraction=VAL_FRACTION, val_seed=VAL_SEED):
    """Train below ``threshold`` (default: the wild type's measured fitness, else the median), test at/above."""
    if threshold is None:
        wt_rows = np.flatnonzero(t.n_mutations() == 0)
        threshold = float(t.targets[wt_rows].mean()) if len(wt_rows) else float(np.median(t.targets))
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite; got {threshold}")
    y = t.targets
    return _finish("low_to_high", y < threshold, y >= threshold, val_fraction=val_fraction, val_seed=val_seed)


def random_split(t: VariantTable, test_fraction: float = 0.2, *, seed: int = 0, val_fraction=VAL_FRACTION):
    """A uniformly random train/test split (FLIP's ``sampled``)."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    rng = np.random.default_rng(seed)
    test = np.zeros(len(t), bool)
    test[rng.choice(len(t), size=max(1, round(test_fraction * len(t))), replace=False)] = True
    return _finish("random", ~test, test, val_fraction=val_fraction, val_seed=seed)


def _touch(t: VariantTable, held: np.ndarray) -> np.ndarray:
    """(N,) whether each variant mutates any position in the boolean mask ``held`` (L,)."""
    return np.array([any(held[i] for i, _, _ in m) for m in t.mutations()], dtype=bool)


def by_position(t: VariantTable, test_fraction: float = 0.3, *, seed: int = 0, val_fraction=VAL_FRACTION):
    """Hold out a random set of positions: test = variants touching one, train = variants touching none."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    rng = np.random.default_rng(seed)
    mutated = np.unique([i for m in t.mutations() for i, _, _ in m])
    held = np.zeros(t.length, bool)
    held[rng.choice(mutated, size=max(1, round(test_fraction * len(mutated))), replace=False)] = True
    touch = _touch(t, held)
    return _finish("by_position", ~touch, touch, val_fraction=val_fraction, val_seed=seed)


def by_distance(
    t: VariantTable,
    site_distance=None,
    *,
    close_to_far: bool = True,
    quantile: float = 0.5,
    val_fraction=VAL_FRACTION,
    val_seed=VAL_SEED,
):
    """Positions ordered by distance to an active site (default: sequence index). ``close_to_far`` trains on
    variants whose mutations all lie in the closest ``quantile`` of mutated positions and tests on variants
    touching the far ones; ``far_to_close`` the reverse."""
    d = np.arange(t.length, dtype=float) if site_distance is None else np.asarray(site_distance, float)
    if d.shape != (t.length,) or not np.all(np.isfinite(d)):
        raise ValueError(f"site_distance must be {t.length} finite numbers")
    mutated = np.unique([i for m in t.mutations() for i, _, _ in m])
    cut = np.quantile(d[mutated], quantile)
    far = d > cut
    touch_far, touch_close = _touch(t, far), _touch(t, ~far)
    if close_to_far:
        return _finish("close_to_far", ~touch_far, touch_far, val_fraction=val_fraction, val_seed=val_seed)
    return _finish("far_to_close", ~touch_close, touch_close, val_fraction=val_fraction, val_seed=val_seed)


def by_mutation(t: VariantTable, test_fraction: float = 0.2, *, seed: int = 0, val_fraction=VAL_FRACTION):
    """Hold out a random set of substitutions (position, letter): test = variants carrying one."""
    rng = np.random.default_rng(seed)
    muts = t.mutations()
    distinct = sorted({(i, b) for m in muts for i, _, b in m})
    k = max(1, round(test_fraction * len(distinct)))
    held = {distinct[j] for j in rng.choice(len(distinct), size=k, replace=False)}
    touch = np.array([any((i, b) in held for i, _, b in m) for m in muts], dtype=bool)
    return _finish("by_mutation", ~touch, touch, val_fraction=val_fraction, val_seed=seed)


def by_wild_type(t: VariantTable, test_wt: str, *, val_fraction=VAL_FRACTION, val_seed=VAL_SEED):
    """Train on the variants of every other wild type, test on those of ``test_wt`` (FLIP2 ``to_<WT>``)."""
    if test_wt not in t.wild_types:
        raise ValueError(f"unknown wild type {test_wt!r}; the table has {', '.join(t.wild_types)}")
    test = t.wt_of == test_wt
    return _finish(f"to_{test_wt}", ~test, test, val_fraction=val_fraction, val_seed=val_seed)


def from_assignment(name: str, labels: np.ndarray) -> Split:
    """A split from per-variant labels (``train``/``val``/``test``/empty), e.g. a published FLIP file."""
    labels = np.asarray(labels, dtype=str)
    bad = set(np.unique(labels)) - {"train", "val", "test", ""}
    if bad:
        raise ValueError(f"split {name!r}: unknown set labels {sorted(bad)[:3]} (use train, val, test)")
    tr, va, te = (np.flatnonzero(labels == s) for s in ("train", "val", "test"))
    if len(te) == 0:
        raise ValueError(f"split {name!r} has an empty test set")
    if len(tr) < 2:
        raise ValueError(f"split {name!r} has {len(tr)} training variants; need at least 2")
    return Split(name, tr, va, te)


#: FLIP v1 GB1 split name -> how our builders make it (validation 10 % as in FLIP v1, seed irrelevant).
FLIP_GB1_RECIPES = {
    "one_vs_rest": lambda t, **kw: by_n_mutations(t, 1, name="one_vs_rest", **kw),
    "two_vs_rest": lambda t, **kw: by_n_mutations(t, 2, name="two_vs_rest", **kw),
    "three_vs_rest": lambda t, **kw: by_n_mutations(t, 3, name="three_vs_rest", **kw),
    "low_vs_high": lambda t, **kw: low_to_high(t, **kw),
}


def standard_splits(t: VariantTable, *, seed: int = 0, site_distance=None) -> dict[str, Split]:
    """Every FLIP2 family that applies to ``t`` (skips those that would be empty, e.g. by_wt with one WT)."""
    makers = {
        "random": lambda: random_split(t, seed=seed),
        "one_to_many": lambda: by_n_mutations(t, 1),
        "two_to_many": lambda: by_n_mutations(t, 2),
        "three_to_many": lambda: by_n_mutations(t, 3),
        "by_position": lambda: by_position(t, seed=seed),
        "close_to_far": lambda: by_distance(t, site_distance, close_to_far=True),
        "far_to_close": lambda: by_distance(t, site_distance, close_to_far=False),
        "by_mutation": lambda: by_mutation(t, seed=seed),
        "low_to_high": lambda: low_to_high(t),
    }
    out = {}
    for name, make in makers.items():
        try:
            out[name] = make()
        except ValueError:
            continue  # the family does not apply (e.g. doubles only: no one_to_many)
    if len(t.wild_types) > 1:
        out["by_wt"] = by_wild_type(t, sorted(t.wild_types)[-1])
    return out
