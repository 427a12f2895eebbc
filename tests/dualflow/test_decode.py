"""Issue 40: a user's own binned counts with a behavioural variable — cross-validated decoding, CLI ``decode``."""

import json

import numpy as np
import pytest
import torch

from icml26 import cli
from icml26.dualflow.real import cross_validated_decoding

torch.set_num_threads(1)
TINY = {"hidden": 16, "depth": 1, "n_steps": 5, "batch_size": 16, "latent_budget": 2.0, "solver": "rk4"}


def _data(n=6, T=15, N=5, seed=0):
    rng = np.random.default_rng(seed)
    pos = np.cumsum(rng.normal(size=(n, T)), axis=1)
    counts = rng.poisson(np.exp(0.3 * pos[..., None] * rng.normal(size=N))).astype(float)
    return counts, pos


def test_every_trial_gets_a_held_out_latent_and_scores_are_finite():
    X, y = _data()
    scores, latents = cross_validated_decoding(X, y, n_folds=3, n_components=2, **TINY)
    assert len(latents) == 6 and all(z.shape == (15, 2) for z in latents)
    for m in ("DCF", "PCA"):
        assert len(scores[m]["kNN R2 per fold"]) == 3 and np.isfinite(scores[m]["linear R2"])


def test_pca_decodes_a_linearly_embedded_behaviour():
    """Known answer: the behaviour is a linear read-out of noiseless counts, so PCA(1) decodes it (R^2 ~ 1)."""
    rng = np.random.default_rng(1)
    y = np.cumsum(rng.normal(size=(8, 30)), axis=1)
    X = y[..., None] * rng.normal(size=4) + 10.0
    scores, _ = cross_validated_decoding(X, y, n_folds=4, n_components=1, smooth_bins=0.0, **TINY)
    assert scores["PCA"]["linear R2"] > 0.99


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n_folds": 1}, "folds"), ({"n_folds": 9}, "folds"), ({"n_components": 6}, "components"),
     ({"smooth_bins": -1.0}, "smooth")],
)  # fmt: skip
def test_bad_settings_are_refused(kwargs, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        cross_validated_decoding(X, y, **{**TINY, **kwargs})


def test_mismatched_behaviour_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="trials"):
        cross_validated_decoding(X, y[:4], **TINY)
    with pytest.raises(ValueError, match="time axis"):
        cross_validated_decoding(X, y[:, :10], **TINY)
    y_bad = y.copy()
    y_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cross_validated_decoding(X, y_bad, **TINY)


def test_cli_decode_writes_latents_and_json(tmp_path, capsys):
    X, y = _data()
    np.save(tmp_path / "c.npy", X)
    np.save(tmp_path / "y.npy", y)
    argv = ["dualflow", "decode", str(tmp_path / "c.npy"), "--behaviour", str(tmp_path / "y.npy"), "--folds", "2",
            "--preset", "smoke", "--steps", "3", "--out", str(tmp_path / "z.npz"),
            "--json", str(tmp_path / "s.json")]  # fmt: skip
    assert cli.main(argv) == 0
    with np.load(tmp_path / "z.npz") as z:
        assert len(z.files) == 6
    assert set(json.loads((tmp_path / "s.json").read_text())) >= {"DCF", "PCA", "folds"}


def test_cli_decode_refuses_bad_input_in_one_line(tmp_path, capsys):
    X, y = _data()
    np.save(tmp_path / "c.npy", X)
    np.save(tmp_path / "y.npy", y[:3])
    code = cli.main(["dualflow", "decode", str(tmp_path / "c.npy"), "--behaviour", str(tmp_path / "y.npy"),
                     "--out", str(tmp_path / "z.npz")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "trials" in err and err.count("\n") == 1
    assert not (tmp_path / "z.npz").exists()
    np.savez(tmp_path / "y.npz", y=y)
    before = (tmp_path / "y.npz").read_bytes()
    code = cli.main(["dualflow", "decode", str(tmp_path / "c.npy"), "--behaviour", str(tmp_path / "y.npz"),
                     "--behaviour-key", "y", "--out", str(tmp_path / "y.npz")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "overwrite" in err and (tmp_path / "y.npz").read_bytes() == before
