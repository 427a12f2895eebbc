"""Training recipe: both stages learn, schedule shape, exact resume, DDP on CPU with gloo."""

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26.ucast.config import ModelConfig, TrainConfig
from icml26.ucast.model import UCast
from icml26.ucast.train import load_checkpoint, lr_factor, make_optimizers, train_stage

H, W = 8, 8


def tiny_model(dropout=0.1) -> UCast:
    ones = np.ones(1, np.float32)
    return UCast(
        ModelConfig(channels=(8, 16), dropout=dropout),
        1,
        0 * ones,
        ones,
        ones,
        np.zeros((1, H, W)),
        np.linspace(-80, 80, H),
        np.arange(W) * 45.0,
    )


def advection_data(seed=0, n=4, t=8) -> np.ndarray:
    """Fields shifted by one cell east per step plus noise: a learnable residual, (n, t, 1, H, W)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 1, 1, H, W))
    frames = [np.roll(base, k, axis=-1) for k in range(t)]
    return (np.concatenate(frames, axis=1) + 0.05 * rng.normal(size=(n, t, 1, H, W))).astype(np.float32)


def test_lr_schedule_warms_up_then_decays_to_min():
    cfg = TrainConfig(steps=100, warmup=10, lr=1e-3, min_lr=1e-6)
    f = [lr_factor(s, cfg) for s in range(100)]
    assert np.isclose(f[0], 0.1) and np.isclose(f[9], 1.0)
    assert np.all(np.diff(f[10:]) <= 1e-12) and np.isclose(lr_factor(100, cfg), 1e-3)


def test_muon_takes_the_matrices():
    if not hasattr(torch.optim, "Muon"):
        pytest.skip("torch.optim.Muon not available")
    model = UCast(
        ModelConfig(channels=(8, 16), attn_levels=(1,)),
        1,
        [0.0],
        [1.0],
        [1.0],
        np.zeros((0, H, W)),
        np.linspace(-80, 80, H),
        np.arange(W) * 45.0,
    )
    opts = make_optimizers(model, TrainConfig(muon=True))
    assert isinstance(opts[1], torch.optim.Muon)
    assert all(p.ndim == 2 for g in opts[1].param_groups for p in g["params"])
    n_params = sum(len(g["params"]) for o in opts for g in o.param_groups)
    assert n_params == len(list(model.parameters()))


def test_stage1_then_stage2_learn():
    z = advection_data()
    cfg = TrainConfig(steps=60, batch_size=8, lr=3e-3, warmup=5, ema_decay=0.8, log_every=10)
    model, hist = train_stage(tiny_model(), z, cfg, seed=1)
    first, last = hist[0]["loss"], np.mean([h["loss"] for h in hist[-2:]])
    assert last < 0.7 * first
    prob_cfg = replace(cfg, stage="prob", steps=20, lr=5e-4)
    _, hist2 = train_stage(model, z, prob_cfg, seed=2)
    # the CRPS of an ensemble is at most its members' mean absolute error, so it starts below stage-1 MAE
    assert hist2[0]["loss"] <= last * 1.5 and np.isfinite(hist2[-1]["loss"])


def test_resume_repeats_the_uninterrupted_run(tmp_path):
    z = advection_data(1)
    cfg = TrainConfig(steps=6, batch_size=4, warmup=2, log_every=1)
    torch.manual_seed(0)
    init = tiny_model().state_dict()
    full = tiny_model()
    full.load_state_dict(init)
    ema_full, _ = train_stage(full, z, cfg, seed=3)
    part = tiny_model()
    part.load_state_dict(init)
    train_stage(part, z, replace(cfg, checkpoint_every=3), seed=3, checkpoint=tmp_path / "a.pt")
    # an interrupted run: 3 steps, then a fresh process resumes from the step-3 checkpoint
    half = tiny_model()
    half.load_state_dict(init)
    train_stage(half, z, cfg, seed=3, checkpoint=tmp_path / "b.pt", stop_at=3)
    state = torch.load(tmp_path / "b.pt", weights_only=True)
    assert state["step"] == 3
    resumed = tiny_model()
    ema_res, _ = train_stage(resumed, z, cfg, seed=3, resume=tmp_path / "b.pt")
    for (k, a), b in zip(full.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, msg=k)
    for a, b in zip(ema_full.state_dict().values(), ema_res.state_dict().values()):
        torch.testing.assert_close(a, b)
    loaded = load_checkpoint(tmp_path / "a.pt")
    assert loaded.grid == (H, W) and loaded.variables == full.variables


def test_resume_checks_stage(tmp_path):
    z = advection_data()
    train_stage(tiny_model(), z, TrainConfig(steps=1, batch_size=2), checkpoint=tmp_path / "d.pt")
    with pytest.raises(ValueError, match="cannot resume"):
        train_stage(tiny_model(), z, TrainConfig(stage="prob", steps=2, batch_size=2), resume=tmp_path / "d.pt")


def test_bad_training_inputs(tmp_path):
    model = tiny_model()
    with pytest.raises(ValueError, match="do not match"):
        train_stage(model, np.zeros((2, 5, 1, H, W + 1), np.float32), TrainConfig(steps=1))
    z = advection_data()
    z[0, 2, 0, 3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        train_stage(model, z, TrainConfig(steps=1))
    with pytest.raises(ValueError, match="members"):
        TrainConfig(stage="prob", members=1)
    with pytest.raises(OSError):
        load_checkpoint(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(OSError):
        load_checkpoint(tmp_path / "junk.pt")


@pytest.mark.parametrize("stage", ["prob"])
def test_ddp_two_cpu_processes_stay_in_sync(tmp_path, stage):
    worker = Path(__file__).with_name("_ddp_worker.py")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        str(worker),
        str(tmp_path),
        stage,
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    for k in r0:
        torch.testing.assert_close(r0[k], r1[k], msg=k)  # all-reduced gradients keep replicas identical
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert ckpt["step"] == 2 and ckpt["stage"] == stage
    assert ckpt["model"]["net.head.2.weight"].abs().sum() > 0  # the zero-initialised head has been trained
