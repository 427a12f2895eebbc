"""Bad input to every library entry: one clear ValueError (never a silent 0/NaN score, an IndexError or a
warning); on the command line, exit 2 with one line and no output file."""

import numpy as np
import pandas as pd
import pytest
import torch

from icml26.brainconverge.alignment import BrainCache, align_models, cka, extract_features, rbf_gram
from icml26.brainconverge.analysis import granger, performance_correlation
from icml26.brainconverge.data import BrainData, load_images, synthetic_brain, train_mlp
from icml26.cli import main as icml26_main

from .cli_examples import DATA

torch.set_num_threads(1)
RNG = np.random.default_rng(0)
B = RNG.standard_normal((20, 5))  # (stimuli, voxels)
F = RNG.standard_normal((20, 4))  # (stimuli, units)
MASK = {"s": {"v1": np.ones(3, bool)}}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: BrainCache({"r": B}).scores(F * np.nan), "NaN"),
        (lambda: BrainCache({"r": B * np.inf}), "NaN or infinite"),
        (lambda: BrainCache({"r": B}).scores(F[:, 0]), "matrix"),
        (lambda: BrainCache({"r": B}).scores(F[:, :, None]), "matrix"),
        (lambda: BrainCache({"r": B}).scores(F[:7]), "stimuli"),
        (lambda: BrainCache({"r": B[:, :0]}), "at least one"),
        (lambda: BrainCache({"r": np.ones((20, 5))}), "constant"),
        (lambda: BrainCache({"r": B.astype(str)}), "real numbers"),
        (lambda: BrainCache([B]), "dict"),
        (lambda: BrainCache({}), "dict"),
        (lambda: BrainCache({"r": B}, sigma=1e-200), "sigma"),
        (lambda: BrainCache({"r": B}, sigma=-1.0), "sigma"),
        (lambda: BrainCache({"r": B}, sigma=float("nan")), "sigma"),
        (lambda: BrainCache({"r": B}, "mutual-knn", k=20), "neighbours"),
        (lambda: BrainCache({"r": B}, "cosine"), "metric"),
        (lambda: rbf_gram(torch.full((4, 2), float("nan"))), "NaN"),
        (lambda: cka(torch.eye(3), torch.eye(4)), "same size"),
        (lambda: granger(np.arange(30.0) ** 1.5, np.sqrt(np.arange(30.0)), maxlag=0), "maxlag"),
        (lambda: granger(["a"] * 30, np.arange(30.0)), "numbers"),
        (lambda: granger(np.r_[np.nan, np.arange(29.0) ** 2], np.arange(30.0) ** 1.5), "finite"),
        (lambda: performance_correlation(np.r_[1.0, np.nan, 3, 4, 5], np.arange(5.0)), "NaN"),
        (lambda: performance_correlation(np.ones((5, 2)), np.arange(5.0)), "1-D"),
        (lambda: BrainData({"s": np.zeros((5, 3))}, np.array([0, 1, 2, 3, np.nan]), MASK), "integers"),
        (lambda: BrainData({"s": np.zeros((5, 3), complex)}, np.arange(5), MASK), "real"),
        (lambda: BrainData({"s": np.zeros((5, 3))}, np.arange(5), {**MASK, "t": MASK["s"]}), "without betas"),
        (lambda: load_images("digits", seed=-1), "seed"),
        (lambda: load_images("digits", n_stim=5000), "cannot split"),
        (lambda: load_images("cifar"), "unknown data set"),
    ],
)
def test_library_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.fixture(scope="module")
def small_world():
    sp = load_images("digits", seed=0, n_stim=30, n_test=30, n_train=200)
    m = train_mlp(sp, width=8, depth=2, epochs=1, seed=0)
    return sp, m, synthetic_brain(m.net, sp.X_stim, sp.stim_ids, voxels=4)


def test_training_brain_and_alignment_bad_input(small_world):
    sp, m, brain = small_world
    for kw, message in (
        ({"width": 0}, "width"),
        ({"epochs": -1}, "epochs"),
        ({"label_noise": 2.0}, "label_noise"),
        ({"lr": float("nan")}, "learning rate"),
    ):
        with pytest.raises(ValueError, match=message):
            train_mlp(sp, **{"width": 4, "depth": 1, "epochs": 1, **kw})
    for kw, message in (({"voxels": 0}, "voxels"), ({"snr": 0.0}, "snr"), ({"roi_layers": {"a": 7}}, "out of range")):
        with pytest.raises(ValueError, match=message):
            synthetic_brain(m.net, sp.X_stim, sp.stim_ids, **kw)
    with pytest.raises(ValueError, match="stimulus ids"):
        synthetic_brain(m.net, sp.X_stim, sp.stim_ids[:5])
    with pytest.raises(ValueError, match="cannot read stimuli"):
        extract_features(m.net, torch.zeros(5, 3))
    with pytest.raises(ValueError, match="unique"):
        brain.roi_responses(np.r_[sp.stim_ids[:-1], sp.stim_ids[0]])
    caches = {s: BrainCache(r) for s, r in brain.roi_responses(sp.stim_ids).items()}
    with pytest.raises(ValueError, match="stimulus images"):
        align_models([{"model": "m", "step": 0, "net": m.net}], sp.X_stim[:10], caches)
    with pytest.raises(ValueError, match="net"):
        align_models([{"model": "m", "step": 0}], sp.X_stim, caches)
    with pytest.raises(ValueError, match="caches"):
        align_models([{"model": "m", "step": 0, "net": m.net}], sp.X_stim, {})


def _run(argv, capsys):
    code = icml26_main(["brainconverge", *argv])
    out = capsys.readouterr()
    return code, out.err


def test_cli_bad_sigma_seed_and_resume(tmp_path, capsys):
    out = tmp_path / "t.csv"
    align = ["align", "--zoo", str(DATA / "zoo.pt"), "--brain", str(DATA / "brain.npz")]
    code, err = _run([*align, "--sigma", "1e-200", "--out", str(out)], capsys)
    assert code == 2 and "sigma" in err and len(err.strip().splitlines()) == 1 and not out.exists()
    code, err = _run(["zoo", "--seed", "-1", "--out", str(tmp_path / "z.pt")], capsys)
    assert code == 2 and "seed" in err and not (tmp_path / "z.pt").exists()
    pd.DataFrame({"a": [1, 2]}).to_csv(out, index=False)  # not an alignment table
    code, err = _run([*align, "--resume", "--out", str(out)], capsys)
    assert code == 2 and "cannot resume" in err and len(err.strip().splitlines()) == 1
    assert pd.read_csv(out).columns.tolist() == ["a"]  # untouched
    out.unlink()
    assert _run([*align, "--out", str(out)], capsys)[0] == 0
    before = out.read_bytes()
    code, err = _run([*align, "--metric", "rsa", "--resume", "--out", str(out)], capsys)
    assert code == 2 and "cannot resume" in err and "rbf-cka" in err and out.read_bytes() == before
