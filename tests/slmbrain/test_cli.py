"""CLI end to end on tiny fixtures, and bad input: exit 2, one line, no output file."""

import json

import numpy as np
import pytest

from icml26.cli import main as icml26_main

from .cli_examples import CSV, F, W


def run(argv, capsys):
    code = icml26_main(["slmbrain", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_encode_npz(tmp_path, capsys):
    js = tmp_path / "e.json"
    code, out, _ = run(["encode", "--features", F, "--fmri", W, "--json", str(js)], capsys)
    assert code == 0 and "roi_semantic" in out
    assert len(json.loads(js.read_text())["layers"]) == 3


def test_npz_repeats_are_used_only_for_the_story_they_belong_to(tmp_path, capsys):
    # simulate records repeats of its last story; scoring another story of the same length against them was
    # silently wrong (scores of 0.37 where the right ones are 0.13)
    with np.load(W) as z:
        sid = z["story_ids"]
    stories = list(dict.fromkeys(sid.tolist()))
    n_tr = {s: int((sid == s).sum()) for s in stories}
    same_length = [i for i, s in enumerate(stories[:-1]) if n_tr[s] == n_tr[stories[-1]]]
    assert same_length, "the fixture needs a story as long as the last one"
    js = tmp_path / "e.json"
    code, _, err = run(
        ["encode", "--features", F, "--fmri", W, "--test-story", str(same_length[0]), "--json", str(js)], capsys
    )
    assert code == 0 and "repeats" in err and "last story" in err
    code, _, err = run(["encode", "--features", F, "--fmri", W, "--json", str(tmp_path / "last.json")], capsys)
    assert code == 0 and "last story" not in err  # the default test story is the one the repeats are of


def _npy_inputs(tmp_path, nan=False, n_tr=None):
    with np.load(W) as z:
        Y, sid, rep = z["fmri"].copy(), z["story_ids"], z["repeats"].copy()
    if nan:
        Y[:, 0] = np.nan
        rep[:, :, 0] = np.nan
    if n_tr is not None:
        Y = Y[:n_tr]
    for name, a in (("y.npy", Y), ("s.npy", sid), ("r.npy", rep)):
        np.save(tmp_path / name, a)
    return [str(tmp_path / n) for n in ("y.npy", "s.npy", "r.npy")]


def test_encode_masks_nan_voxels(tmp_path, capsys):
    y, s, r = _npy_inputs(tmp_path, nan=True)
    out = tmp_path / "r_norm.npy"
    code, _, err = run(
        ["encode", "--features", F, "--fmri", y, "--story-ids", s, "--repeats", r, "--out", str(out)], capsys
    )
    assert code == 0 and "masked 1 NaN voxel" in err and np.load(out).shape == (19,)


def test_tr_mismatch_is_one_line(tmp_path, capsys):
    y, s, _ = _npy_inputs(tmp_path, n_tr=50)
    out = tmp_path / "x.npy"
    code, _, err = run(["encode", "--features", F, "--fmri", y, "--story-ids", s, "--out", str(out)], capsys)
    assert code == 2 and "TRs" in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_word_timings_out_of_order(tmp_path, capsys):
    bad = tmp_path / "w.csv"
    bad.write_text("word,onset\nthe,1.0\nn0_1,0.5\n")
    out = tmp_path / "f.npy"
    code, _, err = run(
        [
            "features",
            "--scale",
            "tiny",
            "--model",
            "student:4",
            "--timings",
            str(bad),
            "--tr-times",
            W,
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2 and "out of order" in err and not out.exists()


def test_unknown_word_and_bad_model(tmp_path, capsys):
    bad = tmp_path / "w.csv"
    bad.write_text("hello,11.0\nworld,11.5\n")
    code, _, err = run(
        [
            "features",
            "--scale",
            "tiny",
            "--model",
            "student:4",
            "--timings",
            str(bad),
            "--tr-times",
            W,
            "--out",
            str(tmp_path / "f.npy"),
        ],
        capsys,
    )
    assert code == 2 and "vocabulary" in err
    code, _, err = run(
        ["features", "--model", str(tmp_path), "--timings", CSV, "--tr-times", W, "--out", str(tmp_path / "f.npy")],
        capsys,
    )
    assert code == 2 and "config.json" in err


def test_compress_and_save_hf_model(tmp_path, capsys):
    transformers = __import__("pytest").importorskip("transformers")
    import torch

    cfg = transformers.GPT2Config(vocab_size=300, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    src = tmp_path / "gpt2"
    model.save_pretrained(src)
    tok_dir = tmp_path / "tok"
    tok_dir.mkdir()
    vocab = {chr(97 + i): i for i in range(26)} | {"<unk>": 26}
    (tok_dir / "vocab.json").write_text(json.dumps(vocab))
    from tokenizers import Tokenizer, models, pre_tokenizers

    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>")
    fast.save_pretrained(src)
    out = tmp_path / "q"
    code, text, err = run(
        ["compress", "--model", str(src), "--method", "gptq", "--bits", "4", "--out", str(out)], capsys
    )
    assert code == 0, err
    assert (out / "config.json").is_file() and "gptq" in text
    code, _, err = run(["compress", "--model", str(src), "--method", "rtn", "--out", str(out)], capsys)
    assert code == 2 and "exists" in err


def test_seeds_out_of_range_name_the_argument(tmp_path, capsys):
    for bad in ("-1", "99999999999999999999"):
        code, _, err = run(["simulate", "--seed", bad, "--out", str(tmp_path / "w.npz")], capsys)
        assert code == 2 and "--seed" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "w.npz").exists()


def test_odd_student_width_runs_and_all_nan_roi_is_nan_with_a_warning(tmp_path, capsys):
    code, out, err = run(["probe", "--scale", "tiny", "--model", "student:5"], capsys)
    assert code == 0 and "agreement" in out  # an odd width gets one attention head
    code, _, err = run(["probe", "--scale", "tiny", "--model", "student:0"], capsys)
    assert code == 2 and "width" in err
    js = tmp_path / "e.json"  # every voxel under the ceiling threshold: NaN scores, a warning, no crash
    with np.load(W) as z:
        d = {k: z[k] for k in z.files}
    d["repeats"] = d["repeats"].copy()
    d["repeats"][1] = -d["repeats"][0]  # anti-correlated repeats: noise ceiling 0 at every voxel
    np.savez(tmp_path / "w.npz", **d)
    code, _, err = run(["encode", "--features", F, "--fmri", str(tmp_path / "w.npz"), "--json", str(js)], capsys)
    assert code == 0 and "no voxel with a finite score" in err
    assert all(row["roi_semantic"] is None for row in json.loads(js.read_text())["layers"])  # NaN is written as null


def test_encode_chooses_the_layer_on_the_training_stories_not_the_test_story(tmp_path, capsys):
    """Issue 44: a test story that favours another layer must not change the layer the CLI chooses (and saves).
    Training stories are driven by layer 1, the test story by layer 2: the test story scores layer 2 best, the
    leave-stories-out CV on the training stories scores layer 1 best, and layer 1 is what is chosen."""
    rng = np.random.default_rng(0)
    n_tr, p, V, n_stories = 80, 6, 30, 5
    X = rng.standard_normal((3, n_stories * n_tr, p))  # (L, n_TR, p): three unrelated layers
    sid = np.repeat(np.arange(n_stories), n_tr)
    W = rng.standard_normal((p, V))
    driver = np.where(sid[:, None] == n_stories - 1, X[2] @ W, X[1] @ W)  # the test story follows layer 2
    Y = driver + 0.5 * rng.standard_normal((n_stories * n_tr, V))
    for name, a in (("f.npy", X), ("y.npy", Y), ("s.npy", sid)):
        np.save(tmp_path / name, a)
    js, out = tmp_path / "e.json", tmp_path / "r.npy"
    argv = ["encode", "--features", str(tmp_path / "f.npy"), "--fmri", str(tmp_path / "y.npy"), "--story-ids",
            str(tmp_path / "s.npy"), "--delays", "0", "--json", str(js), "--out", str(out)]  # fmt: skip
    code, _, _ = run(argv, capsys)
    assert code == 0
    report = json.loads(js.read_text())
    scores = [row["mean_score"] for row in report["layers"]]
    cv = [row["cv_score"] for row in report["layers"]]
    assert int(np.argmax(scores)) == 2  # the test story favours layer 2 ...
    assert int(np.argmax(cv)) == 1 and report["best_layer"] == 1  # ... the training stories choose layer 1
    assert np.nanmean(np.load(out)) == pytest.approx(scores[1])  # the saved map is the chosen layer's


def _one_line_error(code, err, needle):
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err and needle in err, err


def test_issue_52_encode_inputs(tmp_path, capsys):
    """--repeats / --story-ids beside a simulate .npz were silently ignored; all-zero (constant) features gave r = 0
    with exit 0; the help's own '--alphas -1,6,15' was rejected (the = form it now shows parses)."""
    rep = tmp_path / "rep.npy"
    np.save(rep, np.zeros((2, 3, 4)))
    code, _, err = run(["encode", "--features", F, "--fmri", W, "--repeats", str(rep)], capsys)
    _one_line_error(code, err, "--repeats apply to a .npy --fmri")
    zero = tmp_path / "zero.npy"
    np.save(zero, np.zeros_like(np.load(F)))
    code, _, err = run(["encode", "--features", str(zero), "--fmri", W], capsys)
    _one_line_error(code, err, "constant over TRs")
    js = tmp_path / "e.json"
    code, _, _ = run(["encode", "--features", F, "--fmri", W, "--alphas=-1,6,15", "--json", str(js)], capsys)
    assert code == 0 and js.exists()
    code, _, err = run(["simulate", "--snr", "1e300", "--out", str(tmp_path / "w.npz")], capsys)
    _one_line_error(code, err, "--snr")


def test_help_loads_no_torch():
    import subprocess
    import sys

    probe = (
        "import sys\nfrom icml26.slmbrain.cli import build_parser\nbuild_parser()\n"
        "print([m for m in ('torch', 'transformers', 'himalaya') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize("verb", ["features", "compress"])
def test_an_absent_device_is_refused_in_one_line_before_any_work(tmp_path, capsys, verb):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is present: nothing to refuse")
    argv = {
        "features": ["features", "--scale", "tiny", "--model", "student:4", "--timings", CSV, "--tr-times", W,
                     "--out", str(tmp_path / "f.npy")],
        "compress": ["compress", "--scale", "tiny", "--model", "student:4", "--method", "rtn"],
    }[verb]  # fmt: skip
    code, _, err = run([*argv, "--device", "cuda"], capsys)
    assert code == 2 and "CUDA is not available" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "f.npy").exists()


@pytest.mark.gpu
def test_features_and_gptq_on_cuda_match_the_cpu(tmp_path, capsys):
    for device in ("cpu", "cuda"):
        argv = ["features", "--scale", "tiny", "--model", "student:4", "--timings", CSV, "--tr-times", W,
                "--out", str(tmp_path / f"f-{device}.npy"), "--device", device]  # fmt: skip
        assert run(argv, capsys)[0] == 0
        argv = ["compress", "--scale", "tiny", "--model", "student:4", "--method", "gptq", "--device", device,
                "--json", str(tmp_path / f"c-{device}.json")]  # fmt: skip
        assert run(argv, capsys)[0] == 0
    assert np.allclose(np.load(tmp_path / "f-cpu.npy"), np.load(tmp_path / "f-cuda.npy"), atol=1e-4)
    cpu, gpu = (json.loads((tmp_path / f"c-{d}.json").read_text()) for d in ("cpu", "cuda"))
    assert abs(cpu["loss_after"] - gpu["loss_after"]) < 1e-3 * max(1.0, abs(cpu["loss_after"]))
