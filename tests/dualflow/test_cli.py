"""The CLI verbs end to end on a tiny generated data set, and their errors on bad input."""

import numpy as np
import pytest

from icml26.dualflow.cli import main


def test_generate_fit_embed_simulate(tmp_path, capsys):
    data = tmp_path / "d.npz"
    assert main(["generate", "vanderpol", "--trials", "6", "--time", "20", "--neurons", "8", "--out", str(data)]) == 0
    model = tmp_path / "m.pt"
    assert (
        main(
            [
                "fit",
                str(data),
                "--key",
                "smoothed",
                "--preset",
                "smoke",
                "--steps",
                "10",
                "--budget",
                "3",
                "--out",
                str(model),
            ]
        )
        == 0
    )
    lat = tmp_path / "z.npy"
    assert (
        main(
            [
                "embed",
                str(model),
                str(data),
                "--key",
                "smoothed",
                "--components",
                "2",
                "--solver",
                "rk4",
                "--out",
                str(lat),
            ]
        )
        == 0
    )
    assert np.load(lat).shape == (6, 20, 2)
    fc = tmp_path / "f.npy"
    assert main(["simulate", str(model), str(data), "--key", "smoothed", "--frames", "3", "--out", str(fc)]) == 0
    assert np.load(fc).shape == (6, 3, 8)
    assert "K_eff" in capsys.readouterr().out


def test_video_and_errors(tmp_path):
    video = tmp_path / "v.npz"
    assert main(["generate", "video", "--trials", "2", "--time", "5", "--out", str(video)]) == 0
    assert np.load(video)["frames"].shape == (2, 5, 256)
    model = tmp_path / "m.pt"
    assert (
        main(
            [
                "fit",
                str(video),
                "--key",
                "frames",
                "--frame-shape",
                "16",
                "16",
                "--preset",
                "smoke",
                "--steps",
                "2",
                "--out",
                str(model),
            ]
        )
        == 0
    )
    other = tmp_path / "o.npy"
    np.save(other, np.random.default_rng(0).normal(size=(3, 6, 4)))
    assert main(["fit", str(other), "--preset", "smoke", "--steps", "3", "--budget", "2", "--out", str(model)]) == 0
    with pytest.raises(ValueError, match="expecting 4 features"):
        main(["embed", str(model), str(video), "--key", "frames", "--out", str(tmp_path / "z.npy")])
    with pytest.raises(ValueError, match="latent_budget"):
        main(["fit", str(other), "--preset", "smoke", "--budget", "9", "--out", str(model)])
    with pytest.raises(OSError, match="no such file"):
        main(["fit", str(tmp_path / "missing.npy"), "--out", str(model)])
    with pytest.raises(SystemExit):
        main(["fit"])
