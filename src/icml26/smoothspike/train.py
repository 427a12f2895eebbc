"""Sequence-classification (and regression) fine-tuning of the spiking encoder, evaluation, checkpoints."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from icml26.smoothspike.data import TextTask, Tokenizer, task_metrics
from icml26.smoothspike.model import EncoderConfig, SpikingEncoder, load_minilm, unfuse

__all__ = [
    "FinetuneConfig",
    "build_model",
    "evaluate",
    "finetune",
    "finetune_select",
    "load_checkpoint",
    "predict",
    "save_checkpoint",
    "teacher_logits",
]

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
    # knowledge distillation (Hinton et al. 2015), used when teacher logits are given: the loss is
    # (1 - kd_weight) CE(y) + kd_weight tau^2 KL(softmax(teacher / tau) || softmax(student / tau))
    kd_weight: float = 0.5
    kd_temperature: float = 2.0
    # "balanced": the cross-entropy weights each class by n / (classes x n_class) of the training labels, so a
    # skewed task (CoLA: 70 % acceptable) does not settle on its majority class; None: plain cross-entropy
    class_weight: str | None = None

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch < 1 or not self.lr > 0 or self.weight_decay < 0 or self.warmup < 0:
            raise ValueError(f"invalid fine-tuning settings {self}")
        if not 0 <= self.kd_weight <= 1 or not self.kd_temperature > 0:
            raise ValueError(f"kd_weight must be in [0, 1] and kd_temperature > 0; got {self}")
        if self.class_weight not in (None, "balanced"):
            raise ValueError(f"class_weight must be None or 'balanced'; got {self.class_weight!r}")


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


def _max_len(model) -> int:
    return model.cfg.max_len if hasattr(model, "cfg") else model.max_len


def _tensors(task: TextTask, tok: Tokenizer, max_len: int):
    ids, mask = tok.encode(task.texts, task.pairs, max_len)
    y = torch.from_numpy(task.labels.astype(np.float32 if task.regression else np.int64))
    return torch.from_numpy(ids), torch.from_numpy(mask), y


def _trim(ids: torch.Tensor, mask: torch.Tensor):
    """Drop the padding columns every row of the batch has (dynamic padding: a batch of short sentences costs
    what its longest one costs, not ``max_len``)."""
    L = max(1, int(mask.sum(1).max()))
    return ids[:, :L], mask[:, :L]


def _length_buckets(lengths: torch.Tensor, batch: int, gen: torch.Generator, chunk: int = 8):
    """Endless seeded minibatches of indices: each epoch is a random permutation, cut into chunks of ``chunk``
    batches, sorted by length inside each chunk and cut into batches served in random order. Each example is seen
    once per epoch; batches hold texts of similar length, so dynamic padding (:func:`_trim`) keeps them short."""
    n = len(lengths)
    while True:
        perm = torch.randperm(n, generator=gen)
        out = []
        for c in range(0, n, batch * chunk):
            part = perm[c : c + batch * chunk]
            part = part[torch.argsort(lengths[part], stable=True)]
            out += [part[i : i + batch] for i in range(0, len(part), batch) if len(part[i : i + batch]) == batch]
        if not out:  # fewer than ``batch`` examples: the whole set is one batch
            out = [perm]
        for j in torch.randperm(len(out), generator=gen).tolist():
            yield out[j]


def _loss(out: torch.Tensor, y: torch.Tensor, regression: bool, weight: torch.Tensor | None = None) -> torch.Tensor:
    if regression:
        return torch.nn.functional.mse_loss(out[:, 0], y)
    return torch.nn.functional.cross_entropy(out, y, weight=weight)


def _class_weights(y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """n / (classes x n_c) per class c of the labels ``y`` (a class absent from ``y`` gets weight 0)."""
    counts = torch.bincount(y, minlength=n_classes).float()
    return torch.where(counts > 0, len(y) / (n_classes * counts.clamp(min=1)), torch.zeros_like(counts))


def _kd_loss(out: torch.Tensor, y: torch.Tensor, teacher: torch.Tensor, cfg: FinetuneConfig,
             weight: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    tau = cfg.kd_temperature
    kl = torch.nn.functional.kl_div(torch.log_softmax(out / tau, -1), torch.log_softmax(teacher / tau, -1),
                                    log_target=True, reduction="batchmean")  # fmt: skip
    ce = torch.nn.functional.cross_entropy(out, y, weight=weight)
    return (1 - cfg.kd_weight) * ce + cfg.kd_weight * tau**2 * kl


def finetune(
    model: torch.nn.Module,
    task: TextTask,
    tok: Tokenizer,
    cfg: FinetuneConfig,
    seed: int,
    teacher: np.ndarray | None = None,
) -> list[float]:
    """AdamW with linear warm-up, ``cfg.steps`` minibatches from a seeded length-bucketed sampler
    (:func:`_length_buckets`); with ``teacher``
    (N, classes) logits of a teacher on ``task``'s texts, the loss adds their distillation. Returns the losses."""
    n_out = model.cfg.n_outputs if hasattr(model, "cfg") else model.n_outputs
    vocab = model.cfg.vocab_size if hasattr(model, "cfg") else model.vocab_size
    if task.n_outputs != n_out:
        raise ValueError(
            f"task {task.name} has {task.n_outputs} outputs ({list(task.label_names) or 'regression'}); "
            f"the model has {n_out}"
        )
    if tok.vocab_size != vocab:
        raise ValueError(f"tokenizer has {tok.vocab_size} tokens but the model embeds {vocab}")
    if teacher is not None and (task.regression or tuple(teacher.shape) != (len(task), n_out)):
        raise ValueError(f"teacher logits must be ({len(task)}, {n_out}) for a classification task; "
                         f"got {tuple(teacher.shape)}")  # fmt: skip
    ids, mask, y = _tensors(task, tok, _max_len(model))
    t_logits = None if teacher is None else torch.as_tensor(teacher, dtype=torch.float32)
    weight = _class_weights(y, n_out) if cfg.class_weight == "balanced" and not task.regression else None
    params = [p for name, p in model.named_parameters() if not (cfg.freeze_embeddings and name == "word.weight")]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(cfg.warmup, 1)))
    batches = _length_buckets(mask.sum(1), min(cfg.batch, len(y)), torch.Generator().manual_seed(seed))
    model.train()
    losses = []
    for step in range(cfg.steps):
        idx = next(batches)
        out = model(*_trim(ids[idx], mask[idx]))
        if t_logits is None:
            loss = _loss(out, y[idx], task.regression, weight)
        else:
            loss = _kd_loss(out, y[idx], t_logits[idx], cfg, weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if step % 100 == 0:
            log.info("step %d loss %.4f", step, losses[-1])
    model.eval()
    return losses


def finetune_select(
    make_model,
    train: TextTask,
    val: TextTask,
    tok: Tokenizer,
    cfg: FinetuneConfig,
    lrs: tuple[float, ...],
    seed: int,
    teacher: np.ndarray | None = None,
):
    """Fine-tune ``make_model()`` once per learning rate of the grid ``lrs`` (same seed, batches and budget) and
    keep the model scoring best on ``val`` (carved from the training data; never the test set).
    Returns (model, chosen lr, {lr: validation score}); the score is the task's first metric (accuracy, or
    Matthews for CoLA-like tasks when ``val.name == "cola"``)."""
    from dataclasses import replace

    from icml26.smoothspike.data import GLUE_TASKS

    if not lrs:
        raise ValueError("the learning-rate grid is empty")
    key = GLUE_TASKS[val.name][2] if val.name in GLUE_TASKS else ("pearson" if val.regression else "accuracy")
    best, scores = None, {}
    for lr in lrs:
        model = make_model()
        finetune(model, train, tok, replace(cfg, lr=lr), seed, teacher)
        scores[lr] = task_metrics(val, predict(model, val, tok))[key]
        if best is None or scores[lr] > scores[best[1]]:
            best = (model, lr)
    return best[0], best[1], scores


@torch.no_grad()
def teacher_logits(model: torch.nn.Module, task: TextTask, tok: Tokenizer, batch: int = 128) -> np.ndarray:
    """(N, classes) logits of a (teacher) model on the task's texts."""
    ids, mask, _ = _tensors(task, tok, _max_len(model))
    model.eval()  # in the texts' own order (not length-sorted): the distillation targets of the judged runs
    return torch.cat([model(*_trim(ids[i : i + batch], mask[i : i + batch]))
                      for i in range(0, len(ids), batch)]).numpy()  # fmt: skip


@torch.no_grad()
def predict(
    model: torch.nn.Module, task: TextTask, tok: Tokenizer, batch: int = 32, max_len: int | None = None
) -> np.ndarray:
    """Class indices (classification) or scores (regression); texts cut to ``max_len`` tokens (default: the
    model's maximum)."""
    ids, mask, _ = _tensors(task, tok, max_len or _max_len(model))
    out = _forward_sorted(model, ids, mask, batch)
    return out[:, 0].numpy() if task.regression else out.argmax(1).numpy()


def _forward_sorted(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor, batch: int) -> torch.Tensor:
    """(N, outputs) of ``model`` on (N, L) ids and mask, in batches of texts sorted by length (each batch padded
    to its own longest text, :func:`_trim`, so a corpus of mixed lengths such as RTE's pairs is not padded to its
    longest one), returned in the input order."""
    model.eval()
    order = torch.argsort(mask.sum(1), stable=True)
    out = torch.cat([model(*_trim(ids[idx], mask[idx])) for idx in order.split(batch)])  # sorted order
    return out[torch.argsort(order)]


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
