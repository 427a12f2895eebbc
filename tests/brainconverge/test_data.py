"""Images, zoo training, the synthetic brain and the user-brain loader."""

import numpy as np
import pytest
import torch

from icml26.brainconverge.data import BrainData, load_brain, load_images, synthetic_brain, train_mlp

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def splits():
    return load_images("digits", seed=0, n_stim=80, n_test=200)


def test_splits_disjoint_and_training_learns(splits):
    assert len(set(splits.stim_ids)) == 80 and splits.X_stim.shape == (80, 64)
    m0 = train_mlp(splits, width=32, depth=1, epochs=0, seed=1)
    m = train_mlp(splits, width=32, depth=1, epochs=10, seed=1, checkpoint_every=5)
    assert m0.accuracy < 0.3 < 0.8 < m.accuracy
    assert [e for e, _, _ in m.checkpoints] == [0, 5, 10]
    noisy = train_mlp(splits, width=32, depth=1, epochs=10, seed=1, label_noise=1.0)
    assert noisy.accuracy < 0.5


def test_synthetic_brain_truth_and_id_matching(splits, tmp_path):
    ref = train_mlp(splits, width=32, depth=2, epochs=5, seed=2)
    brain = synthetic_brain(ref.net, splits.X_stim, splits.stim_ids, voxels=10, subjects=2)
    assert brain.truth == {"early": "hidden.1", "late": "hidden.3", "semantic": "head"}
    rev = splits.stim_ids[::-1]
    r = brain.roi_responses(rev)
    assert np.array_equal(r["sub01"]["early"], brain.betas["sub01"][::-1][:, :10])
    with pytest.raises(ValueError, match="do not match"):
        brain.roi_responses(splits.stim_ids + 100000)
    brain.save(tmp_path / "b.npz")
    back = load_brain(tmp_path / "b.npz")
    assert set(back.betas) == {"sub01", "sub02"} and np.array_equal(back.stim_ids, brain.stim_ids)


def test_brain_validation():
    ids = np.arange(5)
    B = np.zeros((5, 4))
    with pytest.raises(ValueError, match="shape"):
        BrainData({"s": B}, ids, {"s": {"v1": np.ones(3, bool)}})
    with pytest.raises(ValueError, match="boolean"):
        BrainData({"s": B}, ids, {"s": {"v1": np.ones(4)}})
    with pytest.raises(ValueError, match="no voxel"):
        BrainData({"s": B}, ids, {"s": {"v1": np.zeros(4, bool)}})
    with pytest.raises(ValueError, match="unique"):
        BrainData({"s": B}, np.array([0, 1, 1, 2, 3]), {"s": {"v1": np.ones(4, bool)}})
    with pytest.raises(ValueError, match="finite"):
        BrainData({"s": B * np.nan}, ids, {"s": {"v1": np.ones(4, bool)}})
