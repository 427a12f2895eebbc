"""U-Cast's two-stage recipe: MAE pre-training, then fair-CRPS fine-tuning with M MC-dropout members.

Both stages share one loop (:func:`train_stage`): AdamW (+ ``torch.optim.Muon`` for 2-D weights when asked),
linear warm-up then cosine decay, gradient clipping, an EMA copy of the weights (what is evaluated and
saved), bf16 autocast on CUDA, checkpoint/resume, and torch DDP when launched with ``torchrun`` (gloo on
CPU, NCCL on GPU). Every step reseeds from (seed, step, rank), so a resumed run repeats the uninterrupted
one exactly.

Losses, in the residual-std normalised space r = (z_{t+1} - z_t) / res_std:

* stage 1 (``det``):  L = mean_{b,c,i,j} w_i |r_hat - r|                   (latitude-weighted MAE)
* stage 2 (``prob``): L = mean_{b,c,i,j} w_i CRPS_fair({r_hat_m}_{m<=M}, r)  (M dropout members, Eq. fair CRPS)
"""

from __future__ import annotations

import copy
import logging
import math
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from icml26.ucast.config import TrainConfig
from icml26.ucast.data import latitude_weights
from icml26.ucast.metrics import fair_crps_torch, lat_weighted_mae_torch
from icml26.ucast.model import UCast

logger = logging.getLogger(__name__)

__all__ = ["StepBatches", "WindowDataset", "load_checkpoint", "train_stage"]


def _distributed(device: torch.device) -> tuple[int, int, torch.device]:
    """(rank, world size, this rank's device); initialises the process group when launched by torchrun.

    Under torchrun a CUDA run puts rank r on ``cuda:LOCAL_RANK`` (and makes it the current device), whatever
    ``device`` said, so N processes on one node use N GPUs instead of all sharing GPU 0.
    """
    if device.type == "cuda" and "LOCAL_RANK" in os.environ:  # launched by torchrun (any world size)
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or not torch.distributed.is_available():
        return 0, 1, device
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return torch.distributed.get_rank(), torch.distributed.get_world_size(), device


class WindowDataset(torch.utils.data.Dataset):
    """Training windows (z_{t-1}, z_t, z_{t+1}, forcing_t) of every trajectory, read one at a time.

    Built either from an in-memory array of normalised fields (:meth:`from_array`) or lazily from an
    xarray Dataset opened on a NetCDF file or Zarr store (:meth:`from_xarray`): then ``__getitem__`` reads
    and normalises only the three frames it returns, so with a ``DistributedSampler`` each rank reads its
    own samples and nothing holds the whole data set in memory.
    """

    def __init__(self, n_traj: int, t_len: int, n_channels: int, grid: tuple[int, int], reader, forcings) -> None:
        if t_len < 3:
            raise ValueError(f"training needs at least 3 times per trajectory, got {t_len}")
        self.n_traj, self.t_len, self.n_channels, self.grid = n_traj, t_len, n_channels, tuple(grid)
        self._read = reader  # (b, t) -> float32 array (3, C, H, W) of normalised frames t-1, t, t+1
        self.forcings = torch.as_tensor(np.array(forcings, dtype=np.float32))  # (N, T, F), a writable copy

    def __len__(self) -> int:
        return self.n_traj * (self.t_len - 2)

    def __getitem__(self, i: int):
        b, t = divmod(int(i), self.t_len - 2)
        t += 1
        frames = torch.as_tensor(self._read(b, t))
        return frames[0], frames[1], frames[2], self.forcings[b, t]

    @classmethod
    def from_array(cls, z: np.ndarray, forcings: np.ndarray | None = None) -> WindowDataset:
        """``z``: normalised fields (n_traj, T, C, H, W); ``forcings``: (n_traj, T, F) or None."""
        z = np.asarray(z, dtype=np.float32)
        if z.ndim != 5 or z.shape[1] < 3:
            raise ValueError(f"z must have shape (n_traj, T>=3, C, H, W), got {z.shape}")
        if not np.all(np.isfinite(z)):
            raise ValueError("training data contain NaN or inf")
        f = np.zeros((*z.shape[:2], 0), np.float32) if forcings is None else forcings
        return cls(z.shape[0], z.shape[1], z.shape[2], z.shape[3:], lambda b, t: z[b, t - 1 : t + 2], f)

    @classmethod
    def from_xarray(cls, ds, variables: list[str], model: UCast, forcings: np.ndarray | None = None) -> WindowDataset:
        """Lazy windows of ``variables`` of a (trajectory?, time, lat, lon) Dataset, normalised by ``model``.

        ``forcings``: (T, F) shared by every trajectory, or (n_traj, T, F). A window holding NaN or inf is
        refused when it is read (the file is not scanned up front).
        """
        das = []
        for v in variables:
            if v not in ds:
                raise ValueError(f"variable {v!r} is not in the data set (it has {sorted(ds.data_vars)})")
            da = ds[v] if "trajectory" in ds[v].dims else ds[v].expand_dims("trajectory")
            if set(da.dims) != {"trajectory", "time", "lat", "lon"}:
                raise ValueError(f"variable {v!r} has dims {da.dims}; expected (trajectory?, time, lat, lon)")
            das.append(da.transpose("trajectory", "time", "lat", "lon"))
        n_traj, t_len, h, w = das[0].shape
        mean = model.mean.reshape(-1, 1, 1).cpu().numpy()
        std = model.std.reshape(-1, 1, 1).cpu().numpy()

        def read(b: int, t: int) -> np.ndarray:
            x = np.stack([da.isel(trajectory=b, time=slice(t - 1, t + 2)).values for da in das], axis=1)
            if not np.all(np.isfinite(x)):
                raise ValueError(f"training data contain NaN or inf (trajectory {b}, times {t - 1}..{t + 1})")
            return ((x - mean) / std).astype(np.float32)  # (3, C, H, W)

        f = np.zeros((t_len, 0), np.float32) if forcings is None else np.asarray(forcings, np.float32)
        if f.ndim == 2:
            f = np.broadcast_to(f, (n_traj, *f.shape))
        return cls(n_traj, t_len, len(das), (h, w), read, f)


class StepBatches(torch.utils.data.Sampler):
    """Batch sampler for step-based training: the epochs of a :class:`DistributedSampler`, back to back, cut
    into batches of ``per_rank`` windows, from global step ``start`` to ``end``.

    Epoch ``e`` is the sampler's shuffle with ``set_epoch(e)`` (seeded by the run's seed), so step k reads
    the same windows whether the run was interrupted or not; resuming with another world size continues the
    schedule at step k with the new partition of each epoch.
    """

    def __init__(self, sampler, per_rank: int, start: int, end: int) -> None:
        self.sampler, self.per_rank, self.start, self.end = sampler, per_rank, start, end

    def __len__(self) -> int:
        return max(0, self.end - self.start)

    def __iter__(self):
        n = len(self.sampler)
        pos = self.start * self.per_rank  # position in the endless stream of this rank's indices
        epoch, offset = divmod(pos, n)
        buffer: list[int] = []
        for _ in range(self.start, self.end):
            while len(buffer) < self.per_rank:
                self.sampler.set_epoch(epoch)
                buffer.extend(list(self.sampler)[offset:])
                epoch, offset = epoch + 1, 0
            yield buffer[: self.per_rank]
            buffer = buffer[self.per_rank :]


def make_optimizers(model: nn.Module, cfg: TrainConfig) -> list[torch.optim.Optimizer]:
    """AdamW for every parameter, or Muon for 2-D weight matrices + AdamW for the rest (paper recipe)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.muon and hasattr(torch.optim, "Muon"):
        matrices = [p for p in params if p.ndim == 2]
        rest = [p for p in params if p.ndim != 2]
        opts: list[torch.optim.Optimizer] = [
            torch.optim.AdamW(rest, lr=cfg.lr, weight_decay=cfg.weight_decay, betas=cfg.betas)
        ]
        if matrices:
            opts.append(torch.optim.Muon(matrices, lr=cfg.muon_lr, weight_decay=0.03, momentum=0.95))
        return opts
    return [torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay, betas=cfg.betas)]


def apply_update(loss, model: nn.Module, optimizers, schedulers, ema: AveragedModel, grad_clip: float) -> None:
    """One optimiser step on ``loss``: backward, clip the gradient norm (when ``grad_clip``), step the
    optimisers and their schedules, update the EMA copy."""
    for o in optimizers:
        o.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    for o in optimizers:
        o.step()
    for s in schedulers:
        s.step()
    ema.update_parameters(model)


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up over ``cfg.warmup`` steps, then cosine decay to ``cfg.min_lr`` (as a factor of lr)."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    floor = cfg.min_lr / cfg.lr
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def _progress(iterable, total: int, desc: str, enabled: bool):
    if not enabled:
        return iterable
    from icml26._util.progress import progress

    return progress(iterable, total=total, desc=desc)


def train_stage(
    model: UCast,
    z: np.ndarray,
    cfg: TrainConfig,
    *,
    forcings: np.ndarray | None = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    checkpoint: str | Path | None = None,
    resume: str | Path | None = None,
    stop_at: int | None = None,
    progress: bool = False,
    workers: int = 0,
) -> tuple[UCast, list[dict]]:
    """Train one stage of U-Cast in place and return (EMA model, history).

    Parameters
    ----------
    model : UCast
        Warm start (stage 2 starts from the stage-1 EMA weights).
    z : array of shape (n_traj, T, C, H, W), or WindowDataset
        *Normalised* training trajectories (``model.normalise`` applied), T >= 3; or a
        :class:`WindowDataset` (e.g. read lazily from Zarr). Under torchrun each rank reads only the windows
        its ``DistributedSampler`` gives it.
    cfg : TrainConfig
    forcings : array of shape (n_traj, T, n_forcings), optional
    checkpoint : path, optional
        Where rank 0 writes the checkpoint (every ``cfg.checkpoint_every`` steps and at the end).
    resume : path, optional
        A checkpoint of the same stage to continue from (model, EMA, optimiser, schedule, step).
    stop_at : int, optional
        Stop (and checkpoint) after this step of the ``cfg.steps`` schedule, e.g. to fit a job's time limit;
        a later call with ``resume`` continues exactly where this one stopped (with the same world size; with
        another one it continues the schedule from that step).
    workers : int
        ``DataLoader`` worker processes per rank (0: read in the training process).

    Returns
    -------
    ema_model : UCast
        The EMA weights (a copy, in eval mode).
    history : list of dict
        ``{"step", "loss", "lr"}`` every ``cfg.log_every`` steps.
    """
    device = torch.device(device)
    rank, world, device = _distributed(device)
    data = z if isinstance(z, WindowDataset) else WindowDataset.from_array(z, forcings)
    if data.n_channels != model.n_channels or data.grid != model.grid:
        raise ValueError(
            f"data (C, H, W) = {(data.n_channels, *data.grid)} do not match the model {(model.n_channels, *model.grid)}"
        )
    if data.forcings.shape[-1] != model.n_forcings:
        raise ValueError(f"{data.forcings.shape[-1]} forcings per time; the model takes {model.n_forcings}")

    model.to(device).train()
    weights = torch.as_tensor(latitude_weights(model.lat.cpu().numpy()), dtype=torch.float32, device=device)
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(cfg.ema_decay), use_buffers=True)
    net: nn.Module = model
    if world > 1:
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None
        )
    optimizers = make_optimizers(model, cfg)
    schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lambda s: lr_factor(s, cfg)) for o in optimizers]
    start, history = 0, []
    if resume is not None:
        state = _read_checkpoint(resume, device)
        if state.get("stage") != cfg.stage:
            raise ValueError(f"cannot resume stage {cfg.stage!r} from a {state.get('stage')!r} checkpoint")
        try:
            model.load_state_dict(state["model"])
            ema.load_state_dict(state["ema_full"])
            for o, s in zip(optimizers, state["optimizers"]):
                o.load_state_dict(s)
            for sch, s in zip(schedulers, state["schedulers"]):
                sch.load_state_dict(s)
            start, history = int(state["step"]), list(state["history"])
        except (KeyError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"{resume}: does not fit this model and data ({type(exc).__name__}: {first})") from None
        if start > cfg.steps:
            raise ValueError(f"{resume} is already at step {start}, past the {cfg.steps} steps asked for")
    autocast = device.type == "cuda" and cfg.amp
    per_rank = max(1, cfg.batch_size // world)
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=seed)

    def save(step: int) -> None:
        if checkpoint is None or rank != 0:
            return
        from icml26._util.io import atomic_output

        with atomic_output(checkpoint) as tmp:  # an interrupted save never leaves half a checkpoint
            _save_state(
                tmp,
                {
                    "stage": cfg.stage,
                    "step": step,
                    "train_cfg": asdict(cfg),
                    "model_config": model.config_dict(),
                    "model": model.state_dict(),
                    "ema": ema.module.state_dict(),
                    "ema_full": ema.state_dict(),
                    "optimizers": [o.state_dict() for o in optimizers],
                    "schedulers": [s.state_dict() for s in schedulers],
                    "history": history,
                },
            )

    end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
    loader = torch.utils.data.DataLoader(
        data, batch_sampler=StepBatches(sampler, per_rank, start, end), num_workers=workers
    )
    cuda = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):  # per-step dropout seeds; the caller's global RNG is restored
        batches = _progress(enumerate(loader, start), end - start, f"stage {cfg.stage}", progress and rank == 0)
        for step, (z_prev, z_cur, z_next, f_cur) in batches:
            torch.manual_seed(seed * 1_000_003 + step * 7919 + rank)  # dropout masks
            z_prev, z_cur, z_next, f_cur = (x.to(device) for x in (z_prev, z_cur, z_next, f_cur))  # (B, C, H, W)
            target = (z_next - z_cur) / model.res_std  # (B, C, H, W) residual-std space
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                if cfg.stage == "det":
                    pred = _call(net, z_prev, z_cur, f_cur)
                    loss = lat_weighted_mae_torch(pred.float(), target, weights)
                else:
                    m = cfg.members  # M dropout members share one batched forward pass
                    pred = _call(net, z_prev.repeat(m, 1, 1, 1), z_cur.repeat(m, 1, 1, 1), f_cur.repeat(m, 1))
                    loss = fair_crps_torch(pred.float().view(m, *target.shape), target, weights)
            apply_update(loss, model, optimizers, schedulers, ema, cfg.grad_clip)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"loss became {loss.item()} at step {step}")
            if step % cfg.log_every == 0 or step == end - 1:
                history.append({"step": step, "loss": float(loss.item()), "lr": schedulers[0].get_last_lr()[0]})
                logger.info("stage %s step %d loss %.4f", cfg.stage, step, history[-1]["loss"])
            if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < end:
                save(step + 1)
    save(end)
    if world > 1:
        torch.distributed.barrier()  # no rank moves on (e.g. to read the checkpoint) before rank 0 wrote it
    out = copy.deepcopy(ema.module).eval()
    return out, history


def _call(net: nn.Module, z_prev, z_cur, forcing) -> torch.Tensor:
    """The network's residual r_hat (works for a UCast and a DDP-wrapped UCast)."""
    if isinstance(net, torch.nn.parallel.DistributedDataParallel):
        return net(z_prev, z_cur, forcing, residual_only=True)
    return net.residual(z_prev, z_cur, forcing)


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu", ema: bool = True) -> UCast:
    """Rebuild a :class:`UCast` from a checkpoint written by :func:`train_stage` (EMA weights by default)."""
    state = _read_checkpoint(path, device)
    try:
        model = UCast.from_config_dict(state["model_config"])
        model.load_state_dict(state["ema" if ema else "model"])
    except (KeyError, TypeError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise OSError(f"{path} is not a usable U-Cast checkpoint ({type(exc).__name__}: {first})") from None
    return model.to(device).eval()


def _save_state(path, state: dict) -> None:
    torch.save(state, path)


def _read_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> dict:
    """Load a checkpoint dict (weights only), with one-line errors naming the file."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"checkpoint {path} is a directory, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # pickle / zip errors (multi-line weights_only dumps): not a checkpoint
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise OSError(f"{path} is not a U-Cast checkpoint ({type(exc).__name__}: {first})") from None
    if not isinstance(state, dict) or "model_config" not in state:
        raise OSError(f"{path} is not a U-Cast checkpoint (no model_config)")
    return state
