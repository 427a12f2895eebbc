"""Datasets, validation policy and split builders."""

import numpy as np
import pytest

from icml26.flip2.data import (
    VariantTable,
    clean_sequences,
    load_flip_gb1,
    load_mavenn,
    make_synthetic,
    mavenn_available,
)
from icml26.flip2.metrics import spearman
from icml26.flip2.splits import (
    FLIP_GB1_RECIPES,
    by_distance,
    by_mutation,
    by_position,
    by_wild_type,
    from_assignment,
    standard_splits,
)


@pytest.fixture(scope="module")
def gb1():
    return load_flip_gb1()


def test_gb1_published_splits_reproduced_exactly(gb1):
    assert len(gb1) == 8733 and gb1.length == 265
    for name, make in FLIP_GB1_RECIPES.items():
        ours = make(gb1, val_fraction=0.1).assignment(len(gb1))
        pub = gb1.published[name]
        assert np.array_equal(np.where(ours == "val", "train", ours), np.where(pub == "val", "train", pub)), name
        assert abs((ours == "val").sum() - (pub == "val").sum()) <= 1  # FLIP v1: 10 % of train (rounding)


def test_gb1_full_landscape_and_wt():
    full = load_flip_gb1(keep_only=False)
    assert len(full) == 149361
    assert np.bincount(full.n_mutations()).tolist() == [1, 76, 2091, 26019, 121174]


def test_validation_is_15_percent_of_train_from_train_side():
    land = make_synthetic(L=20, n_per_wt=150, n_msa=50, seed=1)
    for sp in standard_splits(land.table, site_distance=land.site_distance).values():
        n_tr = len(sp.train) + len(sp.val)
        assert abs(len(sp.val) - 0.15 * n_tr) <= 1
        assert not set(sp.val) & set(sp.test) and not set(sp.train) & set(sp.test)


def test_position_and_mutation_splits_hold_out_what_they_say():
    t = make_synthetic(L=20, n_per_wt=150, n_msa=50, seed=2).table
    muts = t.mutations()
    sp = by_position(t, seed=0)
    train_pos = {i for k in sp.train for i, _, _ in muts[k]}
    assert all(any(i not in train_pos for i, _, _ in muts[k]) for k in sp.test)
    sm = by_mutation(t, seed=0)
    train_m = {(i, b) for k in sm.train for i, _, b in muts[k]}
    assert all(any((i, b) not in train_m for i, _, b in muts[k]) for k in sm.test)
    cf = by_distance(t, close_to_far=True)
    assert len(cf.test) and len(cf.train)
    bw = by_wild_type(t, "wt0")
    assert set(t.wt_of[bw.test]) == {"wt0"} and "wt0" not in set(t.wt_of[bw.train])


def test_synthetic_ground_truth_scores_best():
    land = make_synthetic(L=20, n_per_wt=200, n_msa=100, seed=3)
    truth = spearman(land.table.targets, land.true_fitness)
    assert truth > 0.8
    assert spearman(land.table.targets, np.random.default_rng(0).normal(size=len(land.table))) < truth


def _table(seqs, y, wt="ACDE"):
    return VariantTable("t", np.array(seqs), np.array(y, float), {"WT": wt}, np.full(len(seqs), "WT"))


def test_bad_tables_rejected():
    with pytest.raises(ValueError, match="non-canonical"):
        clean_sequences(["ACXE"])
    assert clean_sequences(["acxe"], policy="map", map_to="G")[0] == "ACGE"
    with pytest.raises(ValueError, match="inconsistent lengths"):
        _table(["ACDE", "ACD"], [1, 2])
    with pytest.raises(ValueError, match="conflicting targets"):
        _table(["ACDF", "ACDF"], [1, 2])
    with pytest.raises(ValueError, match="does not match"):
        _table(["WWWW", "YYWW"], [1, 2])
    with pytest.raises(ValueError, match="NaN or infinite"):
        _table(["ACDF", "ACDG"], [1, np.nan])
    with pytest.raises(ValueError, match="empty test set"):
        from_assignment("s", np.array(["train", "train", "val"]))


@pytest.mark.skipif(not mavenn_available(), reason="mavenn (data wheel) not installed")
def test_mavenn_scans_load_with_consensus_wild_type():
    t = load_mavenn("abeta42")
    assert t.wild_types["WT"].startswith("DAEFRHDSGYEVHHQK") and t.length == 42
    assert set(np.unique(t.n_mutations())) == {1, 2}
    splits = standard_splits(t)
    assert {"one_to_many", "low_to_high", "by_position"} <= set(splits)
