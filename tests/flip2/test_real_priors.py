"""Priors from real sources (BLOSUM62, the training-split PSSM) and a smoke run on real scans (mavenn's Aβ42)."""

import json

import numpy as np
import pytest
import torch

from icml26.claims import Arm, Scale
from icml26.flip2.data import VariantTable, load_mavenn, make_synthetic, mavenn_available
from icml26.flip2.harness import ModelFactory, run_leaderboard
from icml26.flip2.metrics import spearman
from icml26.flip2.models import ZeroShot, ZSRidge
from icml26.flip2.splits import random_split, standard_splits

torch.set_num_threads(1)
needs_mavenn = pytest.mark.skipif(not mavenn_available(), reason="mavenn (data wheel) not installed")


@pytest.fixture(scope="module")
def land():
    return make_synthetic(L=10, n_wild_types=1, n_per_wt=2000, n_msa=50, seed=3)  # ~1,660 variants


def test_training_split_pssm_reads_training_rows_only(land):
    t = land.table
    sp = random_split(t, 0.5, seed=0)
    a = ZeroShot("pssm-train").fit(t, sp.train).score(t, sp.test)
    y = t.targets.copy()
    y[sp.test] = np.random.default_rng(0).permutation(y[sp.test])  # test labels scrambled: nothing changes
    t2 = VariantTable(t.name, t.sequences, y, t.wild_types, t.wt_of)
    b = ZeroShot("pssm-train").fit(t2, sp.train).score(t2, sp.test)
    np.testing.assert_array_equal(a, b)
    # it ranks fitness: selection of the training variants carries over to held-out ones
    assert spearman(t.targets[sp.test], a) > 0.3
    # wild types score 0 (every site its own letter)
    wt_row = np.array([0])
    t_wt = VariantTable(t.name, np.array([t.wild_types["wt0"]]), [0.0], t.wild_types, ["wt0"])
    assert ZeroShot("pssm-train").fit(t, sp.train).score(t_wt, wt_row)[0] == 0.0


def test_training_split_pssm_refuses_unfitted_or_tiny_training(land):
    with pytest.raises(ValueError, match="must be fitted"):
        ZeroShot("pssm-train").score(land.table, [0, 1])
    with pytest.raises(ValueError, match="at least 2 training variants"):
        ZeroShot("pssm-train").fit(land.table, [0])
    with pytest.raises(ValueError, match="unknown zero-shot kind"):
        ZeroShot("esm-from-the-moon")


def test_zsridge_cross_fits_label_using_priors_on_the_training_side(land):
    t = land.table
    sp = random_split(t, 0.5, seed=1)
    m = ZSRidge([ZeroShot("blosum62"), ZeroShot("pssm-train")])
    train = np.asarray(sp.train)
    m.scorers[1].fit(t, train)
    Z = m._cross_fit(t, train)  # (n_train, 2)
    in_sample = m.scorers[1].score(t, train)
    np.testing.assert_array_equal(Z[:, 0], ZeroShot("blosum62").score(t, train))  # label-free: unchanged
    assert not np.allclose(Z[:, 1], in_sample)  # label-using: out of fold
    y = t.targets[train]
    # in-sample scores are optimistic (they saw each row's own label); out-of-fold ones are not
    assert spearman(y, in_sample) > spearman(y, Z[:, 1])
    m.fit(t, sp.train, sp.val)
    assert not hasattr(m, "_train_scores_")  # the cache does not outlive fit
    assert np.isfinite(m.predict(t, sp.test)).all()


@needs_mavenn
def test_real_scan_smoke_leaderboard_with_real_priors():
    t = load_mavenn("abeta42", max_variants=1500, seed=0)
    splits = standard_splits(t, seed=0)
    splits = {k: splits[k] for k in ("random", "by_position")}
    df = run_leaderboard(t, splits, ["ridge", "zsridge-blosum62", "blosum62", "pssm-train"], ModelFactory(None))
    rho = df.set_index(["split", "model"])["spearman"]
    assert rho["random", "ridge"] > 0.7  # a real, learnable landscape
    assert rho["random", "blosum62"] > 0.05  # BLOSUM62 alone ranks above chance
    assert rho["by_position", "pssm-train"] > 0.2  # the training-split PSSM transfers to held-out positions
    assert rho["by_position", "zsridge-blosum62"] > 0.3


@needs_mavenn
def test_real_prior_claim_and_probe_at_smoke():
    from icml26.flip2.claims import real_prior, real_prior_helps

    probe = real_prior(Scale.SMOKE, 0)
    assert probe["real-prior"] > 0.1
    assert all(abs(v) < 0.3 for k, v in probe.items() if "null-prior" in k)
    key = "zsRidge(BLOSUM62) - ridge Spearman (mean)"
    neg = real_prior_helps(Scale.SMOKE, 0, Arm.NEGATIVE)
    assert neg.verdict == "fails" and abs(neg.measured[key]) < 0.05


@needs_mavenn
def test_cli_runs_a_real_scan_with_real_priors(tmp_path, capsys):
    from icml26.flip2.cli import main

    out = tmp_path / "abeta.json"
    rc = main(
        [
            "run",
            "--dataset",
            "abeta42",
            "--split",
            "by_position",
            "--models",
            "ridge,zsridge-blosum62,pssm-train",
            "--max-variants",
            "1200",
            "--json",
            str(out),
        ]
    )
    assert rc == 0
    rows = json.loads(out.read_text())
    assert {r["model"] for r in rows} == {"ridge", "zsridge-blosum62", "pssm-train"}
    assert all(np.isfinite(r["spearman"]) for r in rows)
