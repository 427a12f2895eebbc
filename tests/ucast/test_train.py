"""Training recipe: both stages learn, schedule shape, exact resume, DDP on CPU with gloo."""

import json
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


def _write_pairs(path: Path, n=3, t=6) -> np.ndarray:
    """Two channels ``a``, ``b`` of n trajectories x t times on the 8 x 8 grid, written to NetCDF."""
    import xarray as xr

    z = np.random.default_rng(0).normal(size=(n, t, 2, H, W)).astype(np.float32)
    dims = ("trajectory", "time", "lat", "lon")
    coords = {"lat": np.linspace(-80, 80, H), "lon": np.arange(W) * 45.0}
    xr.Dataset({"a": (dims, z[:, :, 0]), "b": (dims, z[:, :, 1])}, coords=coords).to_netcdf(path)
    return z


def test_lazy_windows_equal_the_in_memory_ones(tmp_path):
    import xarray as xr

    from icml26.ucast.data import load_wb2
    from icml26.ucast.train import WindowDataset

    z = _write_pairs(tmp_path / "d.nc")
    ones = np.ones(2, np.float32)
    model = UCast(
        ModelConfig(channels=(4, 8)),
        2,
        0 * ones + 0.5,
        2 * ones,
        ones,
        np.zeros((0, H, W)),
        np.linspace(-80, 80, H),
        np.arange(W) * 45.0,
    )
    zn = model.normalise(torch.as_tensor(z)).numpy()
    with xr.open_dataset(tmp_path / "d.nc") as ds:
        ds.to_zarr(tmp_path / "d.zarr", zarr_format=2)
        lazy = WindowDataset.from_xarray(ds, ["a", "b"], model)
        eager = WindowDataset.from_array(zn)
        assert len(lazy) == len(eager) == 3 * 4
        for i in (0, 5, 11):
            for a, b in zip(lazy[i], eager[i]):
                torch.testing.assert_close(a, b)
    zarr = load_wb2(tmp_path / "d.zarr", lazy=True)  # WB2 loader, nothing read yet
    assert not zarr["a"].variable._in_memory
    for a, b in zip(WindowDataset.from_xarray(zarr, ["a", "b"], model)[7], eager[7]):
        torch.testing.assert_close(a, b)


def test_step_batches_split_each_epoch_between_ranks_and_resume_mid_epoch():
    from icml26.ucast.train import StepBatches

    data = list(range(10))
    sam = [torch.utils.data.DistributedSampler(data, num_replicas=2, rank=r, shuffle=True, seed=3) for r in (0, 1)]
    first = [next(iter(StepBatches(s, 5, 0, 1))) for s in sam]
    assert sorted(first[0] + first[1]) == data  # one epoch: each rank reads its own half
    full = list(StepBatches(sam[0], 2, 0, 6))  # 2.4 epochs of rank 0
    assert list(StepBatches(sam[0], 2, 3, 6)) == full[3:]  # resumed at step 3 (mid-epoch): same batches


def _torchrun(tmp_path, nproc: int, *args) -> subprocess.CompletedProcess:
    worker = Path(__file__).with_name("_ddp_worker.py")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", str(worker)]
    return subprocess.run([*cmd, *map(str, args)], env=env, capture_output=True, text=True, timeout=240)


# ~17 s (two torchrun processes import torch); the fast tests of the rank/sampler logic are
# test_step_batches_split_each_epoch_between_ranks_and_resume_mid_epoch and test_a_torchrun_rank_takes_the_gpu_*
@pytest.mark.slow
@pytest.mark.parametrize("stage", ["prob"])
def test_ddp_two_cpu_ranks_read_their_own_windows_and_resume_on_one(tmp_path, stage):
    _write_pairs(tmp_path / "d.nc")
    proc = _torchrun(tmp_path, 2, tmp_path, tmp_path / "d.nc", stage)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=True)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=True)
    for k in r0:
        torch.testing.assert_close(r0[k], r1[k], msg=k)  # all-reduced gradients keep replicas identical
    reads = [json.loads((tmp_path / f"read{r}.json").read_text()) for r in (0, 1)]
    w0, w1 = ({tuple(w) for w in r["windows"]} for r in reads)
    assert len(w0) == len(w1) == 4 and not w0 & w1  # 2 steps x 2 windows each, no window read twice
    assert all(r["device"] == "cpu" for r in reads)
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert ckpt["step"] == 2 and ckpt["stage"] == stage
    assert ckpt["model"]["net.head.2.weight"].abs().sum() > 0  # the zero-initialised head has been trained
    # resume across world sizes: the 2-rank checkpoint continues in one process, to the schedule's end
    ones = np.ones(2, np.float32)
    model = UCast(
        ModelConfig(channels=(4, 8)),
        2,
        0 * ones,
        ones,
        ones,
        np.zeros((1, H, W)),
        np.linspace(-80, 80, H),
        np.arange(W) * 45.0,
    )
    z = np.random.default_rng(1).normal(size=(2, 5, 2, H, W)).astype(np.float32)
    cfg = TrainConfig(stage=stage, steps=3, batch_size=4, warmup=1, log_every=1)
    _, hist = train_stage(model, z, cfg, resume=tmp_path / "ckpt.pt", checkpoint=tmp_path / "c3.pt")
    assert torch.load(tmp_path / "c3.pt", weights_only=True)["step"] == 3 and hist[-1]["step"] == 2


@pytest.mark.gpu
def test_torchrun_puts_the_rank_on_its_local_gpu(tmp_path):
    """One GPU: the rank's model lands on cuda:LOCAL_RANK (cuda:0), not on the bare 'cuda' device."""
    _write_pairs(tmp_path / "d.nc")
    worker = Path(__file__).with_name("_ddp_gpu_worker.py")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1", str(worker)]
    proc = subprocess.run(
        [*cmd, str(tmp_path), str(tmp_path / "d.nc")], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((tmp_path / "gpu.json").read_text()) == {"device": "cuda:0", "current": 0, "step": 2}


def test_a_torchrun_rank_takes_the_gpu_of_its_local_rank(monkeypatch):
    """Without a GPU: the device logic alone (torch.cuda.set_device recorded, not called)."""
    from icml26.ucast import train

    chosen = []
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    monkeypatch.setenv("LOCAL_RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert train._distributed(torch.device("cuda")) == (0, 1, torch.device("cuda", 3))
    assert chosen == [torch.device("cuda", 3)]
    assert train._distributed(torch.device("cpu")) == (0, 1, torch.device("cpu"))  # CPU ranks stay on CPU
    monkeypatch.delenv("LOCAL_RANK")
    assert train._distributed(torch.device("cuda")) == (0, 1, torch.device("cuda"))  # no torchrun: as asked


def test_the_mae_comparator_costs_what_the_crps_stage_costs():
    """Compute matching, counted: per step the M-member CRPS stage and its MAE twin (M times the batch) push
    the same number of samples through the U-Net, forward and backward."""
    from icml26.ucast.config import get_preset
    from icml26.ucast.experiment import stage2_config

    preset = get_preset("smoke", prob=TrainConfig(stage="prob", steps=3, batch_size=2, members=3, warmup=1))
    seen = {}
    for variant in ("crps", "mae"):
        cfg = stage2_config(preset, variant)
        model = tiny_model()
        seen[variant] = rows = []

        def count(mod, args, out, rows=rows):
            if mod.training:
                rows.append(out.shape[0])

        model.net.register_forward_hook(count)
        train_stage(model, advection_data(), cfg, seed=0)
    assert seen["crps"] == seen["mae"] == [2 * 3] * 3  # 3 steps of batch x members = 6 samples each
