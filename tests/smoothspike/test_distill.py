"""Issue 48's training recipe: the non-spiking MiniLM teacher (checked against transformers' BertModel), the
distillation loss, dynamic padding, the learning-rate choice on a validation split, and the one handicap helper
of the positive controls."""

import numpy as np
import pytest
import torch

from icml26.smoothspike.claims import _handicapped
from icml26.smoothspike.data import TextTask, Tokenizer, glue_score, load_glue, task_metrics
from icml26.smoothspike.model import MiniLMClassifier, load_minilm, minilm_folder
from icml26.smoothspike.train import FinetuneConfig, _kd_loss, build_model, finetune, finetune_select, predict

torch.set_num_threads(1)


def test_minilm_teacher_matches_transformers_bert():
    transformers = pytest.importorskip("transformers")
    ref = transformers.BertModel.from_pretrained(str(minilm_folder()), add_pooling_layer=False).eval()
    ours = MiniLMClassifier(6, n_outputs=2, max_len=16).eval()
    texts = ["a fine film .", "dull , and far too long"]
    ids, mask = (torch.from_numpy(a) for a in Tokenizer().encode(texts, None, 12))
    with torch.no_grad():
        hidden = ref(input_ids=ids, attention_mask=mask.long()).last_hidden_state  # (B, L, D)
        want = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        torch.testing.assert_close(ours.features(ids, mask), want, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="MiniLM has 6 layers"):
        MiniLMClassifier(7)
    with pytest.raises(ValueError, match="exceeds the model's maximum 16"):
        ours(torch.zeros(1, 17, dtype=torch.long))


@pytest.mark.parametrize("rotation", ["none", "hadamard"])
def test_dynamic_padding_leaves_the_spiking_outputs_unchanged(rotation):
    """Padding keys get no attention and are left out of the pooled mean, so trimming the all-padding columns of a
    batch (the training loop's dynamic padding) changes no logit."""
    model = load_minilm(1, n_outputs=2, max_len=32, rotation=rotation).eval()
    texts = ["good .", "a long and rather tedious affair"]
    ids, mask = (torch.from_numpy(a) for a in Tokenizer().encode(texts, None, 32))
    L = int(mask.sum(1).max())
    with torch.no_grad():
        torch.testing.assert_close(model(ids, mask), model(ids[:, :L], mask[:, :L]), atol=1e-5, rtol=0)


def test_distillation_loss_is_hintons():
    gen = torch.Generator().manual_seed(0)
    out, teacher = torch.randn(6, 2, generator=gen), torch.randn(6, 2, generator=gen)
    y = torch.randint(0, 2, (6,), generator=gen)
    ce = torch.nn.functional.cross_entropy(out, y)
    torch.testing.assert_close(_kd_loss(out, y, teacher, FinetuneConfig(kd_weight=0.0)), ce)
    tau = 2.0
    p_t = torch.softmax(teacher / tau, -1)
    kl = (p_t * (p_t.log() - torch.log_softmax(out / tau, -1))).sum(-1).mean()
    got = _kd_loss(out, y, teacher, FinetuneConfig(kd_weight=0.5, kd_temperature=tau))
    torch.testing.assert_close(got, 0.5 * ce + 0.5 * tau**2 * kl)
    assert float(_kd_loss(teacher, y, teacher, FinetuneConfig(kd_weight=1.0))) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="kd_weight must be in"):
        FinetuneConfig(kd_weight=1.5)


def test_finetune_select_keeps_the_rate_best_on_validation_and_distils():
    train = load_glue("sst2", "train").subset(np.arange(48))
    val = load_glue("sst2", "train").subset(np.arange(48, 80))
    tok = Tokenizer()
    teacher = np.random.default_rng(0).normal(size=(48, 2))
    with pytest.raises(ValueError, match="teacher logits must be"):
        finetune(build_model("minilm", rotation="none", n_outputs=2, seed=0, max_len=12, layers=1), train, tok,
                 FinetuneConfig(steps=1, batch=4), 0, teacher[:5])  # fmt: skip

    def make():
        return build_model("minilm", rotation="none", n_outputs=2, seed=0, max_len=12, layers=1)

    model, lr, scores = finetune_select(make, train, val, tok, FinetuneConfig(steps=2, batch=4), (1e-5, 1e-3), 0,
                                        teacher)  # fmt: skip
    assert set(scores) == {1e-5, 1e-3} and lr == max(scores, key=scores.get)
    assert scores[lr] == task_metrics(val, predict(model, val, tok))["accuracy"]
    with pytest.raises(ValueError, match="grid is empty"):
        finetune_select(make, train, val, tok, FinetuneConfig(steps=1), (), 0)


@pytest.mark.parametrize(("task", "seed"), [("sst2", 0), ("sst2", 5), ("cola", 1), ("cola", 4)])
def test_handicap_lowers_the_glue_score_by_the_planted_points(task, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 500)
    pred = np.where(rng.random(500) < 0.75, labels, 1 - labels)
    worse = _handicapped(task, pred, labels, 8.2, np.random.default_rng(seed + 1))

    def score(p):
        return glue_score(task, task_metrics(TextTask(task, ["x"] * 500, labels, ("0", "1")), p))

    drop = score(pred) - score(worse)
    if task == "sst2":  # accuracy: exactly round(8.2 % of the items) flips
        assert (pred == labels).sum() - (worse == labels).sum() == round(0.082 * 500)
    else:
        assert 8.2 <= drop < 8.2 + 3.0  # one flip past the mark at most
    assert np.all(worse[pred != labels] == pred[pred != labels])  # only correct answers are turned wrong


def test_homogenization_reads_an_evenly_spaced_sample_of_all_inputs():
    """Above ``max_inputs`` the pair statistics read inputs spread over all tokens (every sentence), not the first
    ones: the result equals the statistic of the evenly spaced rows."""
    from icml26.smoothspike.analysis import homogenization, spike_counts

    gen = torch.Generator().manual_seed(3)
    z = 3 * torch.rand(600, 8, generator=gen, dtype=torch.float64)
    z[300:] += 1.0  # the later inputs differ: a first-rows sample would miss them
    c = spike_counts(z, 4)
    idx = torch.linspace(0, 599, 200).round().long()
    assert homogenization(z, c, max_inputs=200) == homogenization(z[idx], c[idx], max_inputs=200)
    assert homogenization(z, c, max_inputs=200) != homogenization(z[:200], c[:200], max_inputs=200)
    with pytest.raises(ValueError, match="max_inputs must be >= 2"):
        homogenization(z, c, max_inputs=1)


def test_length_buckets_cover_each_example_once_per_epoch_in_similar_length_batches():
    from icml26.smoothspike.train import _length_buckets

    lengths = torch.from_numpy(np.random.default_rng(0).integers(1, 40, 100))
    it = _length_buckets(lengths, 8, torch.Generator().manual_seed(0), chunk=4)
    epoch = [next(it) for _ in range(12)]  # 100 // 32 = 3 full chunks of 4 batches, the 4 leftovers dropped
    seen = torch.cat(epoch)
    assert all(len(b) == 8 for b in epoch) and len(seen.unique()) == len(seen) == 96
    spread = np.mean([float(lengths[b].max() - lengths[b].min()) for b in epoch])
    assert spread < 20  # random batches of 8 from 1..39 span about 30 tokens
    assert len(next(_length_buckets(lengths[:5], 8, torch.Generator()))) == 5  # fewer than a batch: one batch


def test_length_sorted_prediction_returns_each_text_its_own_answer_in_input_order():
    """``predict`` scores texts in length-sorted batches (each padded to its own longest text): the answers come back
    in the input order and equal those of scoring every text alone."""
    from icml26.smoothspike.train import _forward_sorted

    model = load_minilm(1, n_outputs=2, max_len=24, rotation="hadamard").eval()
    texts = ["a long and rather tedious affair with no end", "good .", "bad", "an honest , moving film", "fine ."]
    ids, mask = (torch.from_numpy(a) for a in Tokenizer().encode(texts, None, 24))
    with torch.no_grad():
        alone = torch.cat([model(ids[i : i + 1, : int(mask[i].sum())], mask[i : i + 1, : int(mask[i].sum())])
                           for i in range(len(texts))])  # fmt: skip
        torch.testing.assert_close(_forward_sorted(model, ids, mask, batch=2), alone, atol=1e-5, rtol=0)
    task = TextTask("sst2", texts, np.zeros(len(texts), dtype=np.int64), ("0", "1"))
    assert predict(model, task, Tokenizer(), batch=2).tolist() == alone.argmax(1).tolist()


def test_balanced_class_weights_make_each_class_weigh_the_same():
    from icml26.smoothspike.train import _class_weights

    y = torch.tensor([0, 0, 0, 1])
    w = _class_weights(y, 3)  # class 2 absent: weight 0
    torch.testing.assert_close(w, torch.tensor([4 / 9, 4 / 3, 0.0]))
    assert float(w[0] * 3) == pytest.approx(float(w[1] * 1))  # each present class carries the same total weight
    with pytest.raises(ValueError, match="class_weight must be None or 'balanced'"):
        FinetuneConfig(class_weight="inverse")
