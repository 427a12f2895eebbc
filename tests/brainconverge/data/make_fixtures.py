"""Regenerate the tiny fixtures of the CLI examples: ``python tests/brainconverge/data/make_fixtures.py``.

- ``zoo.pt``: 4 MLPs (width 8) on scikit-learn digits (split seed 0, 40 stimuli, 60 test images), two of them
  with a checkpoint after every epoch (12 epochs) for the Granger verb.
- ``brain.npz``: a synthetic brain (reference MLP, 10 voxels per ROI) on the same 40 stimuli.
"""

from pathlib import Path

import torch

from icml26.brainconverge.data import load_images, synthetic_brain, train_mlp

HERE = Path(__file__).parent
torch.set_num_threads(1)
sp = load_images("digits", seed=0, n_stim=40, n_test=60)
models = []
for i, (depth, epochs, ck) in enumerate(((2, 12, True), (1, 12, True), (2, 1, False), (3, 4, False))):
    m = train_mlp(sp, width=8, depth=depth, epochs=epochs, seed=i, lr=3e-3, checkpoint_every=1 if ck else None)
    ckpts = m.checkpoints or [(epochs, m.net.state_dict(), m.accuracy)]
    models.append({"name": m.name, "spec": m.spec, "checkpoints": [list(c) for c in ckpts]})
torch.save({"data": "digits", "seed": 0, "n_stim": 40, "n_test": 60, "n_in": 64, "models": models}, HERE / "zoo.pt")
ref = train_mlp(sp, width=32, depth=2, epochs=10, seed=99)
synthetic_brain(ref.net, sp.X_stim, sp.stim_ids, voxels=10, seed=0).save(HERE / "brain.npz")
