"""Real language fMRI (Alice): the bundle, the stimulus timing, the encoding model (validated both ways), the
language models' per-word features and the local zoo."""

import numpy as np
import pytest
import torch

from icml26.brainconverge.alice import (
    contiguous_folds,
    encode,
    load_alice,
    noise_ceiling,
    read_textgrid,
    to_trs,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def alice():
    return load_alice()


def test_the_bundle_holds_28_listeners_and_the_story(alice):
    assert len(alice.subjects) == 28 and alice.bold.shape == (28, 362, 6) and alice.nuisance.shape == (28, 362, 8)
    assert alice.words[:4] == ["Alice", "was", "beginning", "to"] and len(alice.words) > 2000
    assert np.all(np.diff(alice.onsets) >= 0) and np.allclose(alice.bold.mean(1), 0, atol=1e-6)


def test_word_timing_matches_the_authors_word_rate_regressor(alice):
    rate = np.load(load_alice.__globals__["BUNDLE"] / "alice.npz")["rate"][0]  # the authors' own regressor
    ours = to_trs(alice.onsets, np.ones(len(alice.onsets)))[:, 0]
    shifted = to_trs(alice.onsets, np.ones(len(alice.onsets)), t0=21.0)[:, 0]  # a 1 s timing error
    assert np.corrcoef(ours, rate)[0, 1] > 0.98 > np.corrcoef(shifted, rate)[0, 1]


def _planted_brain(alice, rng):
    """Random 6-d word features and the first 6 listeners' BOLD with a story-locked projection of them added at 0.4
    of the BOLD's s.d.: (words (W, 6), brain (6, T, R))."""
    W, (S, T, R) = len(alice.words), alice.bold[:6].shape
    words = rng.standard_normal((W, 6))
    signal = to_trs(alice.onsets, words) @ rng.standard_normal((6, S * R))
    brain = 0.4 * signal / signal.std(0) + alice.bold[:6].transpose(1, 0, 2).reshape(T, S * R)
    return words, brain.reshape(T, S, R).transpose(1, 0, 2)


def test_encoding_scores_the_truth_high_and_random_features_at_the_null(alice):
    rng = np.random.default_rng(0)
    W = len(alice.words)
    words, brain = _planted_brain(alice, rng)
    truth = encode(to_trs(alice.onsets, words), brain, alice.nuisance[:6])
    null = encode(to_trs(alice.onsets, rng.standard_normal((W, 6))), brain, alice.nuisance[:6])
    assert truth.r.mean() > 0.25 and abs(null.r.mean()) < 0.03
    # a dict of layers: each outer fold chooses on its training part; the truth layer wins every fold
    both = encode({"noise": to_trs(alice.onsets, rng.standard_normal((W, 6))), "truth": to_trs(alice.onsets, words)},
                  brain, alice.nuisance[:6])  # fmt: skip
    assert both.layers == ["truth"] * 4 and np.allclose(both.r, truth.r)


def test_contiguous_folds_leave_a_gap_and_cover_every_tr():
    folds = contiguous_folds(100, 4, gap=5)
    assert np.array_equal(np.sort(np.concatenate([te for _, te in folds])), np.arange(100))
    for train, test in folds:
        assert np.min(np.abs(train[:, None] - test[None, :])) > 5
    with pytest.raises(ValueError, match="contiguous blocks"):
        contiguous_folds(20, 4, gap=5)


def test_noise_ceiling_is_positive_in_the_language_rois(alice):
    ceiling = noise_ceiling(alice.bold, alice.nuisance)
    assert ceiling.shape == (28, 6) and ceiling.mean() > 0.1
    with pytest.raises(ValueError, match="two subjects"):
        noise_ceiling(alice.bold[:1])


def test_bad_inputs_are_refused(alice, tmp_path):
    with pytest.raises(ValueError, match=r"must be \(T=362"):
        encode(np.ones((10, 2)), alice.bold)
    with pytest.raises(ValueError, match="NaN"):
        encode(np.full((362, 2), np.nan), alice.bold)
    with pytest.raises(ValueError, match="roi_size"):
        load_alice(roi_size="8mm")
    with pytest.raises(FileNotFoundError, match="neither the Alice bundle"):
        load_alice(tmp_path)
    (tmp_path / "x.TextGrid").write_text('File type = "ooTextFile"\n')
    with pytest.raises(ValueError, match="no word intervals"):
        read_textgrid(tmp_path / "x.TextGrid")


def test_word_features_take_each_words_last_token_with_left_context():
    pytest.importorskip("transformers")
    from icml26.brainconverge.language import word_features, word_tokenizer

    tok = word_tokenizer("the cat sat on the mat . the dog sat on the cat .", min_count=1)
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    net = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=8, n_layer=1, n_head=1, n_positions=16)).eval()
    words = "the cat sat on the mat. the dog sat".split()
    feats = word_features(net, tok, words, context=8)
    assert list(feats) == ["hidden_0", "hidden_1"] and feats["hidden_1"].shape == (len(words), 8)
    ids = tok(" ".join(words))["input_ids"]  # 'mat.' is two tokens, 'mat' and '.': its feature is the '.' token's
    assert len(ids) == len(words) + 1
    with torch.no_grad():  # tokens 4..7 are read in the window [0, 8): the model's own states on that prefix
        ref = net(input_ids=torch.tensor([ids[:8]]), output_hidden_states=True).hidden_states[1][0]
    np.testing.assert_allclose(feats["hidden_1"][5], ref[6].double().numpy(), atol=1e-5)
    np.testing.assert_allclose(feats["hidden_1"][4], ref[4].double().numpy(), atol=1e-5)


def test_the_zoo_learns_and_keeps_its_checkpoints():
    pytest.importorskip("transformers")
    from icml26.brainconverge.language import train_zoo

    _, zoo = train_zoo(widths=(16,), depths=(1,), steps=30, checkpoints=(0, 30), batch=8, context=32, seed=0)
    assert [(m.name, m.step) for m in zoo] == [("gpt-w16-d1", 0), ("gpt-w16-d1", 30)]
    assert zoo[1].loss < zoo[0].loss - 0.5  # 30 steps take a word-level model far below its initial loss
    with pytest.raises(ValueError, match="checkpoints"):
        train_zoo(widths=(16,), depths=(1,), steps=10, checkpoints=(20,))


def test_language_verb_end_to_end_and_its_refusals(tmp_path, capsys):
    pytest.importorskip("transformers")
    import json

    from icml26.cli import main

    out = tmp_path / "lang.json"
    argv = ["brainconverge", "language", "--model", "zoo", "--widths", "16", "--depths", "1", "--steps", "4"]
    assert main([*argv, "--subjects", "2", "--json", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["listeners"] == 2 and len(summary["models"]) == 4  # checkpoints 0, 1, 2, 4
    assert set(summary["models"][0]["per_roi"]) == {"LATL", "RATL", "LPTL", "LIPL", "LPreM", "LIFG"}
    for bad in (["--model", str(tmp_path)], ["--context", "7"], ["--context", "128"], ["--widths", "0"]):
        assert main([*argv, *bad]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("kind", ["llama", "gpt2", "bert"])
def test_a_users_own_model_folder_is_aligned_through_the_cli(kind, tmp_path, capsys):
    """issue 45's done-when: a config-built Llama and a GPT-2, saved as transformers folders with a tokenizer,
    are aligned to a few listeners' ROIs by `icml26 brainconverge language --model FOLDER`."""
    transformers = pytest.importorskip("transformers")
    import json

    import torch

    from icml26.brainconverge.language import book_chapters, word_tokenizer
    from icml26.cli import main

    tok = word_tokenizer(book_chapters()[0])
    torch.manual_seed(0)
    if kind == "llama":
        sizes = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
        cfg = transformers.LlamaConfig(vocab_size=len(tok), num_key_value_heads=2, max_position_embeddings=64, **sizes)
        net = transformers.LlamaForCausalLM(cfg)
    elif kind == "gpt2":
        net = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=2,
                                                                   n_head=2, n_positions=64))  # fmt: skip
    else:  # an encoder (MiniLM's architecture): no causal head, read through AutoModel
        net = transformers.BertModel(transformers.BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=2,
                                                             num_attention_heads=2, intermediate_size=32,
                                                             max_position_embeddings=64))  # fmt: skip
    folder = tmp_path / kind
    net.save_pretrained(folder)
    tok.save_pretrained(folder)
    argv = ["brainconverge", "language", "--model", str(folder), "--subjects", "2", "--context", "32"]
    assert main([*argv, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)  # --json -: the JSON alone on stdout, the verb's report on stderr
    (row,) = summary["models"]
    assert row["model"] == str(folder) and len(row["per_layer"]) == 3 and -1 < row["alignment"] < 1
    assert "noise ceiling" in err and (("an encoder" in err) == (kind == "bert"))
    if kind == "gpt2":  # the checkpoint's own dtype kept on request
        assert main([*argv, "--dtype", "auto", "--json", "-"]) == 0
        assert json.loads(capsys.readouterr().out)["models"][0]["alignment"] == pytest.approx(row["alignment"])


# ------------------------------------------------------------------------------ RSA / CKA over word-aligned TRs
@pytest.mark.parametrize("measure", ["cka", "rsa"])
def test_pattern_similarity_scores_the_truth_high_and_random_features_at_the_null(alice, measure):
    from icml26.brainconverge.alice import similarity

    rng = np.random.default_rng(1)
    W = len(alice.words)
    words, brain = _planted_brain(alice, rng)
    truth = similarity(to_trs(alice.onsets, words), brain, alice.nuisance[:6], measure=measure)
    nulls = [similarity(to_trs(alice.onsets, rng.standard_normal((W, 6))), brain, alice.nuisance[:6],
                        measure=measure).score.mean() for _ in range(4)]  # fmt: skip
    assert truth.score.mean() > 0.09 and max(abs(v) for v in nulls) < 0.04
    # wide features (a 576-wide LM layer) score at the null too: no offset shared by every Gram entry
    wide = similarity(to_trs(alice.onsets, rng.standard_normal((W, 576))), brain, alice.nuisance[:6], measure=measure)
    assert abs(wide.score.mean()) < 0.05
    layers = {"noise": to_trs(alice.onsets, rng.standard_normal((W, 6))), "truth": to_trs(alice.onsets, words)}
    both = similarity(layers, brain, alice.nuisance[:6], measure=measure)
    assert both.layers == ["truth"] * 4 and np.allclose(both.score, truth.score)
    with pytest.raises(ValueError, match="measure"):
        similarity(words, brain, measure="cca")


def test_the_listeners_shared_pattern_beats_its_time_shifted_copy(alice):
    """The real data both ways: each listener's ROI pattern is more like the others' mean (the ceiling) than like
    that mean shifted by 120 TRs (a known null with the same autocorrelation)."""
    from icml26.brainconverge.alice import similarity, similarity_ceiling

    ceiling = similarity_ceiling(alice.bold, alice.nuisance, measure="cka")
    shifted = []
    for s in range(len(alice.subjects)):
        others = np.roll(np.delete(alice.bold, s, 0).mean(0), 120, axis=0)
        shifted.append(similarity(others, alice.bold[s : s + 1], alice.nuisance[s : s + 1], measure="cka").score[0])
    se = ceiling.std() / np.sqrt(len(ceiling))
    assert ceiling.mean() > np.mean(shifted) + 3 * se and abs(np.mean(shifted)) < 0.03


# ------------------------------------------------------------------------------ a user's own recording
def _write_user_recording(alice, folder, listeners=3, header=True):
    folder.mkdir(exist_ok=True)
    files = []
    for s in range(listeners):
        path = folder / f"listener{s}.csv"
        rows = "\n".join(",".join(f"{v:.5f}" for v in row) for row in alice.bold[s])
        path.write_text((",".join(alice.rois) + "\n" if header else "") + rows + "\n")
        files.append(str(path))
    words = folder / "words.tsv"
    words.write_text("onset\tword\n" + "".join(f"{o:.6f}\t{w}\n" for o, w in zip(alice.onsets, alice.words)))
    return files, str(words)


def test_a_users_own_roi_files_load_like_the_bundle(alice, tmp_path):
    from icml26.brainconverge.alice import load_timecourses

    files, words = _write_user_recording(alice, tmp_path)
    data = load_timecourses(files, words, tr=2.0, t0=20.0)
    assert data.rois == alice.rois and data.bold.shape == (3, 362, 6) and data.nuisance is None
    np.testing.assert_allclose(data.bold, alice.bold[:3], atol=1e-4)
    np.testing.assert_allclose(data.to_trs(np.ones(len(data.words))), to_trs(alice.onsets, np.ones(len(alice.words))))
    assert data.subset(data.subjects[:2]).bold.shape == (2, 362, 6)
    # headerless tables get numbered ROI names; a clock that starts at 0 needs no padding trick from the caller
    files, words = _write_user_recording(alice, tmp_path / "plain", listeners=1, header=False)
    plain = load_timecourses(files, words, tr=2.0, t0=0.0)
    assert plain.rois == tuple(f"roi{i}" for i in range(6))
    assert np.isfinite(plain.to_trs(np.ones(len(plain.words)))).all()


def test_language_verb_reads_a_users_recording_with_pattern_measures(alice, tmp_path, capsys):
    pytest.importorskip("transformers")
    import json

    from icml26.cli import main

    files, words = _write_user_recording(alice, tmp_path)
    argv = ["brainconverge", "language", "--model", "zoo", "--widths", "16", "--depths", "1", "--steps", "2",
            "--bold", *files, "--words", words, "--tr", "2", "--t0", "20", "--measures", "r,cka,rsa"]  # fmt: skip
    assert main([*argv, "--json", "-"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["listeners"] == 3 and summary["rois"] == list(alice.rois)
    assert set(summary["pattern_ceiling"]) == {"cka", "rsa"}
    for row in summary["models"]:
        assert -1 < row["alignment"] < 1 and -1 < row["cka"]["score"] < 1 and len(row["rsa"]["layers_chosen"]) == 4


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f, w, d: ["--bold", *f, "--tr", "2"], "--words and --tr"),
        (lambda f, w, d: ["--words", w, "--tr", "2"], "with --bold"),
        (lambda f, w, d: ["--bold", *f, "--words", w, "--tr", "2", "--brain", str(d)], "not --brain"),
        (lambda f, w, d: ["--bold", *f, "--words", w, "--tr", "0"], "--tr"),
        (lambda f, w, d: ["--bold", *f, "--words", w, "--tr", "2", "--t0", "nan"], "t0"),
        (lambda f, w, d: ["--bold", *f, "--words", w, "--tr", "2", "--t0", "5000"], "no word falls inside"),
        (lambda f, w, d: ["--bold", *f, str(d / "missing.csv"), "--words", w, "--tr", "2"], "missing.csv"),
        (lambda f, w, d: ["--bold", *f, str(d / "short.csv"), "--words", w, "--tr", "2"], "differ in shape"),
        (lambda f, w, d: ["--bold", str(d / "short.csv"), "--words", w, "--tr", "2"], "at least 48 TRs"),
        (lambda f, w, d: ["--bold", str(d / "nan.csv"), "--words", w, "--tr", "2"], "finite"),
        (lambda f, w, d: ["--bold", str(d / "header.csv"), "--words", w, "--tr", "2"], "header names 2 ROIs"),
        (lambda f, w, d: ["--bold", *f, "--words", str(d / "bad.tsv"), "--tr", "2"], "'onset' and 'word'"),
        (lambda f, w, d: ["--bold", *f, "--words", w, "--tr", "2", "--measures", "r,cca"], "measures"),
    ],
)
def test_bad_user_recordings_are_refused_in_one_line(alice, tmp_path, capsys, change, message):
    from icml26.cli import main

    files, words = _write_user_recording(alice, tmp_path, listeners=2)
    (tmp_path / "short.csv").write_text("a,b,c,d,e,f\n" + "0,1,2,3,4,5\n1,0,1,0,1,0\n" * 10)
    (tmp_path / "nan.csv").write_text("\n".join(["0,1,nan"] + ["1,0,2"] * 60) + "\n")
    (tmp_path / "header.csv").write_text("a,b\n" + "0,1,2\n1,0,3\n" * 30)
    (tmp_path / "bad.tsv").write_text("time\ttoken\n1.0\thello\n")
    argv = ["brainconverge", "language", "--model", "zoo", "--widths", "16", "--depths", "1", "--steps", "1"]
    assert main([*argv, *change(files, words, tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err
