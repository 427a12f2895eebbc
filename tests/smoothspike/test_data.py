"""Loaders, the synthetic tasks' ground truth, the GLUE TSV reader and the local metrics against scikit-learn/SciPy."""

import numpy as np
import pytest
import scipy.stats
from sklearn import metrics as skm

from icml26.smoothspike.data import (
    Tokenizer,
    accuracy,
    f1,
    load_glue_tsv,
    load_task,
    matthews,
    pearson,
    spearman,
    synthetic_pairs,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_classification_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    for k in (2, 3):
        y, p = rng.integers(0, k, 200), rng.integers(0, k, 200)
        p[:120] = y[:120]
        assert accuracy(y, p) == pytest.approx(skm.accuracy_score(y, p))
        assert matthews(y, p) == pytest.approx(skm.matthews_corrcoef(y, p))
        avg = "binary" if k == 2 else "macro"
        assert f1(y, p) == pytest.approx(skm.f1_score(y, p, average=avg))
    assert matthews([1, 1, 1], [1, 1, 1]) == 0.0  # undefined -> 0, as scikit-learn


@pytest.mark.parametrize("seed", [0, 1])
def test_correlations_match_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=100)
    y = x + rng.normal(size=100)
    y[::7] = y[0]  # ties for the rank correlation
    assert pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y)[0])
    assert spearman(x, y) == pytest.approx(scipy.stats.spearmanr(x, y)[0])


def test_synthetic_pairs_ground_truth():
    t = synthetic_pairs(300, seed=3)
    stop = {"the", "near", "behind", "inside", "beside"}
    for a, b, y in zip(t.texts, t.pairs, t.labels, strict=True):
        assert y == int(set(b.split()) - stop <= set(a.split()) - stop)
    assert 0.3 < t.labels.mean() < 0.8
    r = synthetic_pairs(300, seed=3, regression=True)
    assert r.regression and r.n_outputs == 1 and 0 <= r.labels.min() and r.labels.max() <= 5


def test_offline_text_tasks():
    tw = load_task("tweets")
    assert len(tw) == 38158 and tw.label_names == ("negative", "neutral", "positive")
    assert np.bincount(tw.labels).tolist() == [16186, 15018, 6954]
    pol = load_task("polarity")
    assert len(pol) == 200 and pol.n_outputs == 2 and 0 < pol.labels.mean() < 1
    tr, te = pol.split(150, 50, seed=0)
    assert len(tr) == 150 and len(te) == 50 and not set(tr.texts) & set(te.texts) - set(tr.texts)
    with pytest.raises(ValueError, match="unknown task"):
        load_task("mnli")


def test_glue_tsv_loader(tmp_path):
    p = tmp_path / "mrpc.tsv"
    p.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\ta b\tb a\n0\t3\t4\tc\td\n")
    with pytest.raises(ValueError, match="no known sentence/label columns"):
        load_glue_tsv(p)  # MRPC's original column names are not GLUE's
    p.write_text("Quality\t#1 ID\t#2 ID\tsentence1\tsentence2\n1\t1\t2\ta b\tb a\n0\t3\t4\tc\td\n")
    assert load_glue_tsv(p).labels.tolist() == [1, 0]
    p.write_text("sentence1\tsentence2\tlabel\na b\tb a\t1\nc\td\t0\n")
    t = load_glue_tsv(p)
    assert t.pairs == ["b a", "d"] and t.labels.tolist() == [1, 0] and t.label_names == ("0", "1")
    with pytest.raises(ValueError, match=r"row 3: label '0' is not in the task's label set \['1', '2'\]"):
        load_glue_tsv(p, labels=("1", "2"))
    sts = tmp_path / "sts.tsv"
    sts.write_text("sentence1\tsentence2\tscore\n" + "".join(f"a{i}\tb\t{i * 0.3:.1f}\n" for i in range(15)))
    assert load_glue_tsv(sts).regression
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"sentence\tlabel\n\xff\xfe\t1\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        load_glue_tsv(bad)


def test_tokenizer_pads_truncates_and_pairs():
    tok = Tokenizer()
    ids, mask = tok.encode(["a short text", "word " * 50], max_len=10)
    assert ids.shape == (2, 10) and mask[0].sum() < 10 and mask[1].sum() == 10
    ids2, _ = tok.encode(["first"], ["second"], max_len=8)
    assert (ids2 == 102).sum() == 2  # [SEP] after each sentence
    assert tok.vocab_size == 30522
