"""SOP / energy counting on closed forms, accuracy on ground truth, pipeline, baselines and checkpoints."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

from icml26.spik4lite.data import check_images, load_data, load_npz
from icml26.spik4lite.measure import E_AC_PJ, E_MAC_PJ, count_ops, interleaved_latency, n_params
from icml26.spik4lite.model import SpikingCNN, mask_model
from icml26.spik4lite.train import (
    RefactorConfig,
    TrainConfig,
    baseline_keep,
    evaluate,
    firing_rates,
    load_checkpoint,
    save_checkpoint,
    spik4lite,
    train_dense,
)


def test_count_ops_closed_form_on_a_known_network():
    torch.manual_seed(0)
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5)).eval()
    img = torch.rand(3, 1, 8, 8) * 4
    ops = count_ops(net, img)
    names = {v: k for k, v in ops.names.items()}
    T = 2
    # dense MACs per image: conv0 1->4, conv1 4->6 at 8x8, conv2 6->5 at 4x4, fc 5->10 (all over T steps)
    expected = {"conv0.layer": 9 * 1 * 4 * 64, "conv1.layer": 9 * 4 * 6 * 64, "conv2.layer": 9 * 6 * 5 * 16, "fc": 50}
    for name, macs in expected.items():
        assert ops.macs[names[name]] == pytest.approx(T * macs)
    # SOPs = input firing rate x MACs; the rate measured independently by recording the spikes
    seen = {}
    h = net.conv1.layer.register_forward_hook(lambda m, i, o: seen.update(x=i[0]))  # returns None
    with torch.no_grad():
        net(img)
    h.remove()
    fr = float((seen["x"] != 0).float().mean())
    assert 0 < fr < 1
    assert ops.sops[names["conv1.layer"]] == pytest.approx(fr * T * 9 * 4 * 6 * 64)
    # pixels (conv0) are real-valued: MACs, not SOPs; spikes (conv1, conv2) are not
    assert names["conv0.layer"] in ops.real_macs and names["conv0.layer"] not in ops.sops
    assert names["conv1.layer"] not in ops.real_macs and names["conv2.layer"] not in ops.real_macs
    e = E_MAC_PJ * sum(ops.real_macs.values()) + E_AC_PJ * ops.total_sops
    assert ops.energy_pj == pytest.approx(e)


def test_masking_saves_sops_but_not_macs():
    torch.manual_seed(0)
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5)).eval()
    img = torch.rand(3, 1, 8, 8) * 4
    keep = {"conv0": torch.tensor([1, 1, 0, 0], dtype=torch.bool)}
    masked = mask_model(copy.deepcopy(net), keep)
    d, m = count_ops(net, img), count_ops(masked, img)
    assert m.total_macs == d.total_macs and m.total_sops < d.total_sops
    assert n_params(masked) == n_params(net)


def test_latency_sampler_interleaves_and_restores_threads():
    # timings themselves are judged in benchmarks/spik4lite_latency.py (tests never assert a duration)
    small = SpikingCNN(1, 10, T=2, widths=(4, 4, 4))
    x = torch.rand(2, 1, 8, 8)
    before = torch.get_num_threads()
    lat = interleaved_latency({"a": small, "b": copy.deepcopy(small)}, x, repeats=3, threads=1)
    assert set(lat) == {"a", "b"} and all(v > 0 for v in lat.values())
    assert torch.get_num_threads() == before


def test_accuracy_is_100_for_the_truth():
    class Oracle(nn.Module):  # reads the label planted in pixel (0, 0)
        def forward(self, x):
            return nn.functional.one_hot((x[:, 0, 0, 0] * 10).round().long(), 10).float()

    y = np.arange(20) % 10
    x = np.zeros((20, 1, 4, 4), np.float32)
    x[:, 0, 0, 0] = y / 10
    assert evaluate(Oracle(), x, y) == 100.0
    assert evaluate(Oracle(), x, (y + 1) % 10) == 0.0


@pytest.fixture(scope="module")
def trained():
    torch.manual_seed(0)
    split = load_data("digits", n_train=400, n_test=200, seed=0)
    model = train_dense("cnn", split, TrainConfig(steps=60, batch=32, lr=1e-2), 0, T=2, widths=(8, 12, 12))
    return split, model


def test_dense_training_learns(trained):
    split, model = trained
    assert evaluate(model, split.x_test, split.y_test) > 30  # chance is 10 %


def test_spik4lite_pipeline_removes_channels_and_drops_the_gates(trained):
    split, dense = trained
    rc = RefactorConfig(fraction=0.25, rounds=2, steps_per_round=5, finetune_steps=5)
    model, hist = spik4lite(copy.deepcopy(dense), split, rc, seed=1, batch=16)
    assert len(hist) == 2 and len(model.gates) == 0
    assert model.widths() == {"conv0": 4, "conv1": 7, "conv2": 7}  # 8 -> 6 -> 4, 12 -> 9 -> 7 (rounded)
    rnd, _ = spik4lite(copy.deepcopy(dense), split, rc, seed=1, batch=16, select="random")
    assert rnd.widths() == model.widths()
    with pytest.raises(ValueError, match="select"):
        spik4lite(copy.deepcopy(dense), split, rc, seed=1, select="best")


def test_baselines_keep_exact_counts_and_their_criteria(trained):
    split, dense = trained
    counts = {"conv0": 3, "conv1": 5, "conv2": 7}
    for method in ("random", "l1", "rate"):
        keep = baseline_keep(dense, method, counts, split.x_train[:64], seed=0)
        assert {k: int(v.sum()) for k, v in keep.items()} == counts
    keep = baseline_keep(dense, "l1", counts, split.x_train[:64], seed=0)
    norms = dense.conv1.layer.weight.detach().abs().flatten(1).sum(1)
    assert norms[keep["conv1"]].min() >= norms[~keep["conv1"]].max()
    rates = firing_rates(dense, split.x_train[:64])
    keep = baseline_keep(dense, "rate", counts, split.x_train[:64], seed=0)
    assert rates["conv2"][keep["conv2"]].min() >= rates["conv2"][~keep["conv2"]].max()
    with pytest.raises(ValueError, match="pruning method"):
        baseline_keep(dense, "oracle", counts, split.x_train[:64], seed=0)


def test_checkpoint_round_trip_and_bad_checkpoints(trained, tmp_path):
    split, dense = trained
    model, _ = spik4lite(copy.deepcopy(dense), split, RefactorConfig(fraction=0.5, steps_per_round=3,
                                                                      finetune_steps=0), seed=0)  # fmt: skip
    path = tmp_path / "c.pt"
    save_checkpoint(model, path, in_shape=split.shape, classes=10)
    back, ck = load_checkpoint(path)
    x = torch.from_numpy(split.x_test[:16])
    model.eval()
    with torch.no_grad():
        torch.testing.assert_close(back(x), model(x))
    assert back.widths() == model.widths() and ck["arch"] == "cnn"
    with pytest.raises(ValueError, match="not spikingformer-mini"):
        load_checkpoint(path, "spikingformer-mini")
    (tmp_path / "junk.pt").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ValueError, match="not a readable torch file"):
        load_checkpoint(tmp_path / "junk.pt")
    torch.save({"format": "other"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not an icml26 spik4lite checkpoint"):
        load_checkpoint(tmp_path / "other.pt")


def test_images_and_npz_validation(tmp_path):
    with pytest.raises(ValueError, match="expects"):
        check_images(np.zeros((2, 1, 8, 8)), shape=(1, 16, 16))
    with pytest.raises(ValueError, match="finite"):
        check_images(np.full((2, 8, 8), np.nan))
    with pytest.raises(ValueError, match="pixels a side"):
        check_images(np.zeros((2, 1, 2, 2)))
    x = check_images(np.full((3, 8, 8), 255.0))
    assert x.shape == (3, 1, 8, 8) and x.max() == 1.0
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "ok.npz", x=rng.integers(0, 255, (30, 8, 8)), y=rng.integers(0, 3, 30))
    split = load_npz(tmp_path / "ok.npz")
    assert split.x_train.shape == (24, 1, 8, 8) and split.x_test.shape == (6, 1, 8, 8)
    np.savez(tmp_path / "nolabel.npz", x=np.zeros((30, 8, 8)))
    with pytest.raises(ValueError, match="must hold arrays"):
        load_npz(tmp_path / "nolabel.npz")
    with pytest.raises(ValueError, match="unknown data"):
        load_data("cifar")


def test_library_entries_refuse_bad_inputs():
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5))
    with pytest.raises(ValueError, match=r"expects images of shape \(B, 1, H, W\)"):
        net(torch.rand(2, 3, 8, 8))  # wrong channel count
    with pytest.raises(ValueError, match="expects images"):
        net(torch.rand(8, 8))  # no batch / channel axes
    for bad in ({"threshold": 1.0}, {"threshold": 0.0}, {"fraction": 1.0}, {"fraction": -0.1}, {"max_drop": 0.0},
                {"mode": "sops"}, {"lam": float("nan")}, {"lam": -1.0}, {"rounds": 0}, {"tau1": 0.0}):  # fmt: skip
        with pytest.raises(ValueError):
            RefactorConfig(**bad)
    for bad in ({"steps": 0}, {"batch": 0}, {"lr": float("inf")}, {"lr": 0.0}, {"weight_decay": -1.0}):
        with pytest.raises(ValueError):
            TrainConfig(**bad)
    with pytest.raises(ValueError, match="every channel of layer 'conv1'"):
        from icml26.spik4lite.model import refactor

        refactor(net, {"conv1": torch.zeros(6, dtype=torch.bool)})
    with pytest.raises(ValueError, match="has 3 entries"):
        from icml26.spik4lite.model import refactor

        refactor(net, {"conv1": torch.ones(3, dtype=torch.bool)})


def test_paired_latency_ratio_returns_a_ratio_and_two_medians():
    from icml26.spik4lite.measure import paired_latency_ratio

    small = SpikingCNN(1, 10, T=2, widths=(4, 4, 4))
    ratio, t_a, t_b = paired_latency_ratio(small, copy.deepcopy(small), torch.rand(2, 1, 8, 8), repeats=3)
    assert ratio > 0 and t_a > 0 and t_b > 0


def test_labels_outside_the_class_bound_are_refused(tmp_path):
    from icml26.spik4lite.data import MAX_CLASSES

    np.savez(tmp_path / "big.npz", x=np.zeros((20, 8, 8)), y=np.arange(20) * 100_000_000)
    with pytest.raises(ValueError, match=f"K <= {MAX_CLASSES}"):
        load_npz(tmp_path / "big.npz")


def test_fashion_mnist_subset_and_idx_reader(tmp_path):
    import gzip

    from icml26.spik4lite.data import load_fashion_subset, read_idx

    split = load_fashion_subset(n_train=500, n_test=100, pool=2)
    assert split.x_train.shape == (500, 1, 14, 14) and split.x_test.shape == (100, 1, 14, 14)
    assert split.classes == 10 and 0 <= split.x_train.min() and split.x_train.max() <= 1
    full = load_fashion_subset()
    assert np.bincount(full.y_test).tolist() == [200] * 10 and len(full.y_train) == 8000
    # the IDX reader on a file written here: header parsed, not assumed
    imgs = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    header = bytes([0, 0, 8, 3]) + np.array([2, 3, 4], ">i4").tobytes()
    with gzip.open(tmp_path / "i.gz", "wb") as fh:
        fh.write(header + imgs.tobytes())
    assert np.array_equal(read_idx(tmp_path / "i.gz"), imgs)
    (tmp_path / "bad").write_bytes(header + imgs.tobytes()[:-1])
    with pytest.raises(ValueError, match="declares shape"):
        read_idx(tmp_path / "bad")
    (tmp_path / "junk").write_bytes(b"hello world")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "junk")
    # a folder of the four IDX files (the original format) is read as a split
    from icml26.spik4lite.data import IDX_FILES, load_data

    x28 = (np.arange(12 * 28 * 28) % 256).astype(np.uint8).reshape(12, 28, 28)
    for name in IDX_FILES:
        arr = x28 if "images" in name else (np.arange(12) % 3).astype(np.uint8)
        head = bytes([0, 0, 8, arr.ndim]) + np.array(arr.shape, ">i4").tobytes()
        with gzip.open(tmp_path / name, "wb") as fh:
            fh.write(head + arr.tobytes())
    s = load_data(str(tmp_path))
    assert s.x_train.shape == (12, 1, 28, 28) and s.classes == 3
    (tmp_path / IDX_FILES[1]).unlink()
    with pytest.raises(ValueError, match="lacks the IDX file"):
        load_data(str(tmp_path))
