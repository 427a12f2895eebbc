"""Metrics against scikit-learn, models on landscapes with known truth, the ESM-2 path."""

import numpy as np
import pytest
import torch

from icml26.flip2.data import make_synthetic
from icml26.flip2.harness import ModelFactory, evaluate, learning_curve, run_leaderboard, write_leaderboard
from icml26.flip2.metrics import bootstrap_ci, ndcg, spearman
from icml26.flip2.models import CNN, OneHotRidge, TinyTransformer, ZeroShot, blosum62
from icml26.flip2.splits import random_split

torch.set_num_threads(1)


def test_ndcg_matches_sklearn_and_truth_is_best():
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    p = np.round(y + rng.normal(size=200), 1)
    assert ndcg(y, p) == pytest.approx(ndcg_score([y - y.min()], [p]))
    assert ndcg(y, y) == pytest.approx(1.0) and spearman(y, y) == pytest.approx(1.0)
    assert ndcg(y, p) < 1.0
    lo, hi = bootstrap_ci(y, p, n_boot=50)
    assert lo < spearman(y, p) < hi


def test_blosum62_symmetric_with_known_entries():
    B = blosum62()
    assert np.array_equal(B, B.T) and B[19, 19] == 7 and B[18, 18] == 11  # Y-Y, W-W (AMINO_ACIDS order)


@pytest.fixture(scope="module")
def land():
    return make_synthetic(L=20, n_per_wt=250, n_msa=200, seed=4)


def test_ridge_and_zero_shot_learn_the_landscape(land):
    t = land.table
    sp = random_split(t, seed=0)
    r = evaluate(t, sp, OneHotRidge())
    assert r["spearman"] > 0.5 and np.isfinite(r["mse_scaled"])
    z = evaluate(t, sp, ZeroShot("pssm", land.msa))
    assert z["spearman"] > 0.3
    assert evaluate(t, sp, ZeroShot("levenshtein"))["spearman"] < r["spearman"]


def test_cnn_and_transformer_train(land):
    t = land.table
    sp = random_split(t, seed=0)
    assert evaluate(t, sp, CNN(epochs=100, max_steps=100))["spearman"] > 0.2
    tf = TinyTransformer(epochs=100, max_steps=30).pretrain(land.msa, steps=10)
    assert tf.pretrained_ and np.isfinite(evaluate(t, sp, tf)["spearman"])


def test_leaderboard_files_and_learning_curve(land, tmp_path):
    t = land.table
    f = ModelFactory(land.msa, max_steps=30, pretrain_steps=10)
    df = run_leaderboard(t, {"random": random_split(t, seed=0)}, ["ridge", "zsridge", "blosum62"], f, n_boot=20)
    paths = write_leaderboard(df, tmp_path / "lb.csv")
    assert all(p.exists() for p in paths.values())
    assert "zsridge" in paths["md"].read_text()
    lc = learning_curve(t, sizes=(50, 100), replicates=2)
    assert len(lc) == 4
    with pytest.raises(ValueError, match=">= 50"):
        learning_curve(t, sizes=(20,))


def test_esm2_zero_shot_code_path(land):
    pytest.importorskip("transformers")
    from transformers import EsmForMaskedLM

    from icml26.flip2.models import esm2_zero_shot, tiny_esm_config

    torch.manual_seed(0)
    model = EsmForMaskedLM(tiny_esm_config())
    t = land.table
    s = esm2_zero_shot(t, np.arange(20), model)
    assert s.shape == (20,) and np.all(np.isfinite(s))
    with pytest.raises(ValueError, match="EsmForMaskedLM"):
        esm2_zero_shot(t, np.arange(5), None)


def test_true_fitness_scores_best_and_inverted_ranking_scores_worst(land):
    """Ground truth: the noise-free fitness must beat every model on both metrics; reversed order must lose."""
    t = land.table
    sp = random_split(t, seed=0)
    y, truth = t.targets[sp.test], land.true_fitness[sp.test]
    rows = [evaluate(t, sp, m) for m in (OneHotRidge(), ZeroShot("pssm", land.msa), ZeroShot("blosum62"))]
    assert spearman(y, truth) > max(r["spearman"] for r in rows)
    assert ndcg(y, truth) > max(r["ndcg"] for r in rows)
    shuffled = np.random.default_rng(0).permutation(truth)
    assert spearman(y, -truth) < spearman(y, shuffled) < spearman(y, truth)
    assert ndcg(y, -truth) < ndcg(y, shuffled) < ndcg(y, truth)


def test_transformer_learning_rate_chosen_on_validation(land):
    t = land.table
    sp = random_split(t, seed=0)
    m = TinyTransformer(epochs=100, max_steps=20, lrs=(1e-4, 3e-3)).fit(t, sp.train, sp.val)
    assert m.lr_ in (1e-4, 3e-3) and np.isfinite(evaluate(t, sp, TinyTransformer(max_steps=5, lrs=(1e-3,)))["spearman"])
