"""The measures on ground truth.

- Model level (the claims' measure, RBF-CKA sigma = 12, max over layers, mean over ROIs): the network the
  synthetic brain reads must align best, and a same-recipe network better than a small or an untrained one.
- Layer level, on a noise-free brain: each ROI's best-matching reference layer must be the layer it reads. The
  linear and unbiased CKA and the median-heuristic RBF-CKA pass; the paper's fixed sigma = 12 does NOT for the
  ROI read from the 10 logits (it prefers the 128-unit layer below: a fixed bandwidth favours layers whose
  distance scale matches the ROI's). This is pinned here because the README states it.
"""

import numpy as np
import pytest
import torch

from icml26.brainconverge.alignment import BrainCache, align_models
from icml26.brainconverge.analysis import hierarchy_slope, model_alignment
from icml26.brainconverge.data import load_images, synthetic_brain, train_mlp

torch.set_num_threads(1)


def _caches(brain, ids, metric="rbf-cka", sigma=12.0):
    return {s: BrainCache(r, metric, sigma=sigma) for s, r in brain.roi_responses(ids).items()}


def _best_layers(net, sp, caches):
    tab = align_models([{"model": "reference", "step": 0, "net": net}], sp.X_stim, caches)
    return tab.loc[tab.groupby("roi")["score"].idxmax()].set_index("roi")["layer"].to_dict(), tab


def test_the_network_the_brain_reads_aligns_best():
    sp = load_images("digits", seed=1, n_stim=150, n_test=150)
    ref = train_mlp(sp, width=64, depth=2, epochs=15, seed=11, name="reference")
    brain = synthetic_brain(ref.net, sp.X_stim, sp.stim_ids, voxels=60, snr=0.5, seed=1)
    others = [
        train_mlp(sp, width=64, depth=2, epochs=15, seed=12, name="same-recipe-other-seed"),
        train_mlp(sp, width=16, depth=1, epochs=3, seed=13, name="small-short"),
        train_mlp(sp, width=64, depth=2, epochs=0, seed=14, name="untrained"),
    ]
    items = [{"model": m.name, "step": 0, "net": m.net} for m in (ref, *others)]
    ma = model_alignment(align_models(items, sp.X_stim, _caches(brain, sp.stim_ids))).set_index("model")
    ma = ma["alignment"]
    assert ma.idxmax() == "reference"
    assert ma["same-recipe-other-seed"] > max(ma["small-short"], ma["untrained"])
    # the truth is lost when the brain's stimuli are shuffled
    perm = np.random.default_rng(0).permutation(len(sp.stim_ids))
    shuffled = {s: BrainCache({k: v[perm] for k, v in r.items()}) for s, r in brain.roi_responses(sp.stim_ids).items()}
    assert model_alignment(align_models(items[:1], sp.X_stim, shuffled))["alignment"].item() < ma["reference"] - 0.3


@pytest.mark.parametrize("seed", [0, 1])
def test_source_layer_of_each_roi_on_a_noise_free_brain(seed):
    sp = load_images("digits", seed=seed, n_stim=200, n_test=100)
    ref = train_mlp(sp, width=128, depth=2, epochs=10, seed=11)
    brain = synthetic_brain(ref.net, sp.X_stim, sp.stim_ids, voxels=100, snr=1e6, seed=seed)
    for metric, sigma in (("linear-cka", 12.0), ("unbiased-cka", 12.0), ("rbf-cka", None)):
        best, tab = _best_layers(ref.net, sp, _caches(brain, sp.stim_ids, metric, sigma))
        assert best == brain.truth, (metric, sigma)
        assert hierarchy_slope(tab, "semantic", "early") > 0.05
    best, _ = _best_layers(ref.net, sp, _caches(brain, sp.stim_ids))  # the paper's sigma = 12
    assert best["early"] == brain.truth["early"] and best["semantic"] != brain.truth["semantic"]
