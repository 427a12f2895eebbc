"""Issue 51 item 4 / issue 52 for zolangevin: real photographs as ground truth, the photo-patch prior, the
ZO-APMC / EnKG / gradient-APMC comparison at equal forward queries, and absurd --step / --sigma-y refused."""

import json

import numpy as np
import pytest

from icml26.zolangevin.cli import main
from icml26.zolangevin.data import PRIOR_PHOTOS, TEST_PHOTOS, _resize, load_images, load_photo

pytest.importorskip("skimage")


def test_resize_is_an_area_average():
    np.testing.assert_allclose(_resize(np.arange(12.0).reshape(3, 4), 2), [[2.5, 4.5], [8.5, 10.5]])
    img = np.random.default_rng(0).random((37, 53))
    small = _resize(img, 5)
    assert small.shape == (5, 5) and np.isclose(small.mean(), img.mean(), atol=0.02)


def test_photos_are_grey_in_unit_range_and_disjoint_from_the_prior_photos():
    assert not set(TEST_PHOTOS) & set(PRIOR_PHOTOS)
    cam = load_photo("camera", 28)
    assert cam.shape == (28, 28) and 0 <= cam.min() and cam.max() <= 1 and cam.std() > 0.1
    test = load_images("photos", split="test", size=16)
    assert test.shape == (len(TEST_PHOTOS), 16, 16)
    np.testing.assert_allclose(test[0], load_photo(next(iter(TEST_PHOTOS)), 16))
    patches = load_images("photos", size=16, n=50, rng=np.random.default_rng(1))
    assert patches.shape == (50, 16, 16) and 0 <= patches.min() and patches.max() <= 1
    assert not any(np.allclose(p, t) for p in patches for t in test)  # crops of other photographs
    with pytest.raises(ValueError, match="unknown photo"):
        load_photo("lena", 16)


def test_smoke_comparison_on_a_real_photo_at_equal_queries():
    """An 8x8 photo-patch prior (seconds), deblurring and phase retrieval of the camera photograph."""
    from icml26.zolangevin.photos import compare_on_photos, planted_mean
    from icml26.zolangevin.prior import train_score_prior

    prior = train_score_prior(load_images("photos", size=8, n=500), n_steps=60, width=32, seed=0, data="photos")
    out = compare_on_photos(prior, photos=("camera",), n_chains=4, n_levels=3, steps_per_level=4, seed=0)
    assert len(out["runs"]) == 2
    for row in out["runs"]:
        for m in ("ZO-APMC", "EnKG", "gradient APMC", "EnKG twin"):
            assert np.isfinite(row[m]["psnr"]) and -1 <= row[m]["ssim"] <= 1, m
        # equal forward-model queries per chain (within one step's cost)
        q = row["ZO-APMC"]["queries"]
        assert abs(row["EnKG"]["queries"] - q) <= 3 * 4 and abs(row["gradient APMC"]["queries"] - q) <= 2 * 3 * 4
        assert row["EnKG"]["steps"] > row["gradient APMC"]["steps"] > row["ZO-APMC"]["steps"]
        # the positive control's plant raises the twin's PSNR by exactly the planted 0.375 dB
        assert row["planted"]["psnr"] - row["EnKG twin"]["psnr"] == pytest.approx(0.375, abs=1e-9)
    truth = load_photo("camera", 8).ravel()
    mean = np.random.default_rng(0).random(64) * 1.4 - 0.2
    assert np.all((planted_mean(mean, truth, 3.0) >= 0) & (planted_mean(mean, truth, 3.0) <= 1))


def test_invert_a_photo_from_the_cli(tmp_path, capsys):
    prior = tmp_path / "p.pt"
    assert (
        main(["train-prior", "--data", "photos", "--size", "8", "--steps", "20", "--width", "16", "--out", str(prior)])
        == 0
    )
    capsys.readouterr()
    argv = ["invert", "--prior", str(prior), "--photo", "coins", "--chains", "2", "--method", "enkg"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["truth"] == "coins" and np.isfinite(report["psnr_db"])
    with pytest.raises(ValueError, match="not both"):
        main([*argv, "--image", str(tmp_path / "x.npy")])


@pytest.mark.parametrize(
    "argv",
    [
        ["sample", "--step", "1e10", "--queries", "1000"],
        ["sample", "--step", "1e300", "--queries", "1000"],
        ["invert", "--prior", "p.pt", "--sigma-y", "1e300"],
        ["invert", "--prior", "p.pt", "--sigma-y", "11"],
    ],
)
def test_absurd_step_and_noise_are_refused_at_parse_time(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    # ours ("must be at most 10") below the shared layer's magnitude guard (> 1e15 "too large in magnitude")
    assert exc.value.code == 2 and ("must be at most" in err or "too large" in err)
    assert len(err.strip().splitlines()) <= 2


def test_a_step_that_diverges_is_caught_at_a_sane_magnitude(tmp_path):
    """h = 9 is under the parse-time bound but diverges: the CLI refuses chains beyond 1e6, not 1e30."""
    out = tmp_path / "x.npy"
    with pytest.raises(ValueError, match="diverged"):
        main(
            [
                "sample",
                "--target",
                "gmm:d=3",
                "--sampler",
                "zo",
                "--step",
                "9",
                "--queries",
                "300",
                "--chains",
                "3",
                "--out",
                str(out),
            ]
        )
    assert not out.exists()
