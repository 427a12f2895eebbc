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

__all__ = ["load_checkpoint", "train_stage"]


def _distributed(device: torch.device) -> tuple[int, int]:
    """(rank, world size); initialises the process group when launched by torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or not torch.distributed.is_available():
        return 0, 1
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return torch.distributed.get_rank(), torch.distributed.get_world_size()


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
    from tqdm.auto import tqdm  # the progress library of every icml26 system (the weather extra declares it)

    return tqdm(iterable, total=total, desc=desc, leave=False)


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
) -> tuple[UCast, list[dict]]:
    """Train one stage of U-Cast in place and return (EMA model, history).

    Parameters
    ----------
    model : UCast
        Warm start (stage 2 starts from the stage-1 EMA weights).
    z : array of shape (n_traj, T, C, H, W)
        *Normalised* training trajectories (``model.normalise`` applied), T >= 3.
    cfg : TrainConfig
    forcings : array of shape (n_traj, T, n_forcings), optional
    checkpoint : path, optional
        Where rank 0 writes the checkpoint (every ``cfg.checkpoint_every`` steps and at the end).
    resume : path, optional
        A checkpoint of the same stage to continue from (model, EMA, optimiser, schedule, step).
    stop_at : int, optional
        Stop (and checkpoint) after this step of the ``cfg.steps`` schedule, e.g. to fit a job's time limit;
        a later call with ``resume`` continues exactly where this one stopped.

    Returns
    -------
    ema_model : UCast
        The EMA weights (a copy, in eval mode).
    history : list of dict
        ``{"step", "loss", "lr"}`` every ``cfg.log_every`` steps.
    """
    device = torch.device(device)
    rank, world = _distributed(device)
    z = np.asarray(z, dtype=np.float32)
    if z.ndim != 5 or z.shape[1] < 3:
        raise ValueError(f"z must have shape (n_traj, T>=3, C, H, W), got {z.shape}")
    if z.shape[2] != model.n_channels or z.shape[3:] != model.grid:
        raise ValueError(f"data (C, H, W) = {z.shape[2:]} do not match the model {(model.n_channels, *model.grid)}")
    if not np.all(np.isfinite(z)):
        raise ValueError("training data contain NaN or inf")
    n_traj, t_len = z.shape[:2]
    if forcings is None:
        forcings = np.zeros((n_traj, t_len, model.n_forcings), dtype=np.float32)
    data = torch.as_tensor(z)
    forc = torch.as_tensor(np.asarray(forcings, dtype=np.float32))
    # every (trajectory, t) with t-1, t, t+1 available
    windows = torch.stack(torch.meshgrid(torch.arange(n_traj), torch.arange(1, t_len - 1), indexing="ij"), -1)
    windows = windows.reshape(-1, 2)

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
    cuda = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):  # per-step dropout seeds; the caller's global RNG is restored
        for step in _progress(range(start, end), end - start, f"stage {cfg.stage}", progress and rank == 0):
            gen = torch.Generator().manual_seed(seed * 1_000_003 + step * 7919 + rank)
            torch.manual_seed(seed * 1_000_003 + step * 7919 + rank)  # dropout masks
            idx = windows[torch.randint(len(windows), (per_rank,), generator=gen)]
            b, t = idx[:, 0], idx[:, 1]
            z_prev, z_cur, z_next = (data[b, t + k].to(device) for k in (-1, 0, 1))  # (B, C, H, W) each
            f_cur = forc[b, t].to(device)
            target = (z_next - z_cur) / model.res_std  # (B, C, H, W) residual-std space
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                if cfg.stage == "det":
                    pred = _call(net, z_prev, z_cur, f_cur)
                    loss = lat_weighted_mae_torch(pred.float(), target, weights)
                else:
                    m = cfg.members  # M dropout members share one batched forward pass
                    pred = _call(net, z_prev.repeat(m, 1, 1, 1), z_cur.repeat(m, 1, 1, 1), f_cur.repeat(m, 1))
                    loss = fair_crps_torch(pred.float().view(m, *target.shape), target, weights)
            for o in optimizers:
                o.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            for o in optimizers:
                o.step()
            for s in schedulers:
                s.step()
            ema.update_parameters(model)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"loss became {loss.item()} at step {step}")
            if step % cfg.log_every == 0 or step == end - 1:
                history.append({"step": step, "loss": float(loss.item()), "lr": schedulers[0].get_last_lr()[0]})
                logger.info("stage %s step %d loss %.4f", cfg.stage, step, history[-1]["loss"])
            if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < end:
                save(step + 1)
    save(end)
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
