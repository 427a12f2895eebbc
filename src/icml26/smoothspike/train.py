"""Sequence-classification (and regression) fine-tuning of the spiking encoder, evaluation, checkpoints."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from icml26.smoothspike.data import TextTask, Tokenizer, task_metrics
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, load_minilm, unfuse

__all__ = ["FinetuneConfig", "build_model", "evaluate", "finetune", "load_checkpoint", "predict", "save_checkpoint"]

log = logging.getLogger(__name__)
FORMAT = "icml26-smoothspike-v1"


@dataclass
class FinetuneConfig:
    steps: int = 300
    batch: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: int = 20
    freeze_embeddings: bool = False  # keep the word-embedding table fixed (a pretrained one: 30522 x 384 weights)

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch < 1 or not self.lr > 0 or self.weight_decay < 0 or self.warmup < 0:
            raise ValueError(f"invalid fine-tuning settings {self}")


def build_model(
    init: str,
    *,
    rotation: str,
    n_outputs: int,
    seed: int,
    max_len: int = 64,
    T: int = 4,
    dim: int = 64,
    heads: int = 4,
    layers: int = 2,
    ns_method: str = "quintic",
    vocab_size: int = 30522,
) -> SpikingEncoder:
    """A spiking encoder from ``scratch`` (seeded init) or from ``minilm`` (its first ``layers`` layers).

    Rotated and unrotated models of one seed start from the same un-rotated weights (:func:`unfuse`), so a
    comparison between them changes only the basis in which the spiking neurons see their inputs."""
    if init == "minilm":
        return load_minilm(layers, n_outputs=n_outputs, max_len=max_len, T=T, rotation=rotation,
                           ns_method=ns_method, seed=seed)  # fmt: skip
    if init != "scratch":
        raise ValueError(f"init must be 'scratch' or 'minilm'; got {init!r}")
    cfg = EncoderConfig(vocab_size=vocab_size, max_len=max_len, dim=dim, heads=heads, layers=layers, T=T,
                        n_outputs=n_outputs, rotation=rotation, ns_method=ns_method)  # fmt: skip
    base = SpikingEncoder(EncoderConfig(**{**asdict(cfg), "rotation": "none"}), seed=seed)
    return base if rotation == "none" else unfuse(base, rotation=rotation, ns_method=ns_method, seed=seed)


def _tensors(task: TextTask, tok: Tokenizer, max_len: int):
    ids, mask = tok.encode(task.texts, task.pairs, max_len)
    y = torch.from_numpy(task.labels.astype(np.float32 if task.regression else np.int64))
    return torch.from_numpy(ids), torch.from_numpy(mask), y


def _loss(out: torch.Tensor, y: torch.Tensor, regression: bool) -> torch.Tensor:
    if regression:
        return torch.nn.functional.mse_loss(out[:, 0], y)
    return torch.nn.functional.cross_entropy(out, y)


def finetune(model: SpikingEncoder, task: TextTask, tok: Tokenizer, cfg: FinetuneConfig, seed: int) -> list[float]:
    """AdamW with linear warm-up, ``cfg.steps`` minibatches drawn with a seeded generator; returns the losses."""
    if task.n_outputs != model.cfg.n_outputs:
        raise ValueError(
            f"task {task.name} has {task.n_outputs} outputs ({list(task.label_names) or 'regression'}); "
            f"the model has {model.cfg.n_outputs}"
        )
    if tok.vocab_size != model.cfg.vocab_size:
        raise ValueError(f"tokenizer has {tok.vocab_size} tokens but the model embeds {model.cfg.vocab_size}")
    ids, mask, y = _tensors(task, tok, model.cfg.max_len)
    params = [p for name, p in model.named_parameters() if not (cfg.freeze_embeddings and name == "word.weight")]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(cfg.warmup, 1)))
    gen = torch.Generator().manual_seed(seed)
    model.train()
    losses = []
    for step in range(cfg.steps):
        idx = torch.randint(0, len(y), (min(cfg.batch, len(y)),), generator=gen)
        loss = _loss(model(ids[idx], mask[idx]), y[idx], task.regression)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if step % 100 == 0:
            log.info("step %d loss %.4f", step, losses[-1])
    model.eval()
    return losses


@torch.no_grad()
def predict(
    model: SpikingEncoder, task: TextTask, tok: Tokenizer, batch: int = 128, max_len: int | None = None
) -> np.ndarray:
    """Class indices (classification) or scores (regression); texts cut to ``max_len`` tokens (default: the
    model's maximum)."""
    ids, mask, _ = _tensors(task, tok, max_len or model.cfg.max_len)
    model.eval()
    outs = [model(ids[i : i + batch], mask[i : i + batch]) for i in range(0, len(ids), batch)]
    out = torch.cat(outs)
    return out[:, 0].numpy() if task.regression else out.argmax(1).numpy()


def evaluate(model: SpikingEncoder, task: TextTask, tok: Tokenizer) -> dict[str, float]:
    return task_metrics(task, predict(model, task, tok))


def save_checkpoint(model: SpikingEncoder, path: str | Path, **meta) -> None:
    """Weights, config and metadata (task, label names, tokenizer vocabulary size) in one torch file, written
    atomically (``icml26._util.io.atomic_output``)."""
    from icml26._util.io import atomic_output

    payload = {"format": FORMAT, "config": asdict(model.cfg), "state": model.state_dict(), "meta": meta}
    with atomic_output(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path: str | Path) -> tuple[SpikingEncoder, dict]:
    """(model, meta); ValueError naming the file when it is not a smoothspike checkpoint."""
    from icml26._util.io import check_input_file

    p = check_input_file(path, what="checkpoint")
    try:
        ck = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a corrupt file
        raise ValueError(f"checkpoint {p} is not a readable torch file ({exc.__class__.__name__})") from None
    if not isinstance(ck, dict) or ck.get("format") != FORMAT:
        raise ValueError(f"{p} is not a smoothspike checkpoint (written by 'icml26 smoothspike finetune')")
    model = SpikingEncoder(EncoderConfig(**ck["config"]))
    state = ck["state"]
    if "r_in" in state:  # a fused model carries H1 at its two ends
        model.r_in, model.r_out = state["r_in"].clone(), state["r_out"].clone()
    model.load_state_dict(state)
    model.eval()
    return model, ck["meta"]
