"""Measurement: SOPs by hooks (Spikingformer energy convention), parameters, FLOPs, CPU latency, export (torch.export).

Energy proxy (Spike-Driven Transformer / Attention-SNN convention, 45 nm):
``E = E_MAC * MACs(real-valued inputs) + E_AC * SOPs``, ``SOPs_l = fr_l * MACs_l`` where ``fr_l`` is the firing
rate of the layer's *input* (the fraction of non-zero input entries over all T time steps).
A layer whose input is not binary (the first conv reading pixels, the head reading averaged rates) costs MACs.
"""

from __future__ import annotations

import io
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

E_MAC_PJ = 4.6
E_AC_PJ = 0.9


@dataclass
class OpCount:
    """Per-sample counts of one forward pass (summed over the T time steps)."""

    macs: dict[int, float] = field(default_factory=dict)  # id(layer) -> dense MACs
    sops: dict[int, float] = field(default_factory=dict)  # id(layer) -> synaptic ops (binary inputs)
    real_macs: dict[int, float] = field(default_factory=dict)  # id(layer) -> MACs on real-valued inputs
    names: dict[int, str] = field(default_factory=dict)

    @property
    def total_macs(self) -> float:
        return sum(self.macs.values())

    @property
    def total_sops(self) -> float:
        return sum(self.sops.values())

    @property
    def energy_pj(self) -> float:
        return E_MAC_PJ * sum(self.real_macs.values()) + E_AC_PJ * self.total_sops


def _is_binary(x: torch.Tensor) -> bool:
    return bool(((x == 0) | (x == 1)).all())


def count_ops(model: nn.Module, images: torch.Tensor) -> OpCount:
    """Dense MACs, SOPs and real-valued MACs per sample, by forward hooks on Conv2d / Linear / SpikeMatMul."""
    from icml26.spik4lite.model import SpikeMatMul

    out = OpCount()
    B = images.shape[0]

    def hook(mod, inputs, output):
        x = inputs[0]
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1] * mod.in_channels // mod.groups
            macs = output.numel() * k
        elif isinstance(mod, nn.Linear):
            macs = output.numel() * mod.in_features
        else:  # SpikeMatMul a @ b: (..., n, m) @ (..., m, p)
            macs = output.numel() * x.shape[-1]
        key = id(mod)
        out.macs[key] = out.macs.get(key, 0.0) + macs / B
        if _is_binary(x):
            fr = float((x != 0).float().mean())
            out.sops[key] = out.sops.get(key, 0.0) + fr * macs / B
        else:
            out.real_macs[key] = out.real_macs.get(key, 0.0) + macs / B

    handles = []
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Conv2d | nn.Linear | SpikeMatMul):
            if name.startswith("gates."):
                continue  # the gates' own tiny Linear (C -> 2C on rates) is plug-in overhead, counted apart
            out.names[id(mod)] = name
            handles.append(mod.register_forward_hook(hook))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(images)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return out


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if not n.startswith("gates."))


def time_forward(model: nn.Module, x: torch.Tensor, repeats: int = 5, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of ``repeats`` eval forwards (after ``warmup``), no grad."""
    model.eval()
    times = []
    with torch.no_grad():
        for i in range(warmup + repeats):
            t0 = time.perf_counter()
            model(x)
            if i >= warmup:
                times.append(time.perf_counter() - t0)
    return times


def interleaved_samples(models: dict[str, nn.Module], x: torch.Tensor, repeats: int = 7, threads: int = 1) -> dict:
    """Latency samples (s) of each model, ``repeats`` per model, the variants interleaved repeat by repeat so
    that machine noise hits them alike; ``threads`` torch threads (restored afterwards)."""
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for m in models.values():
            time_forward(m, x, repeats=0, warmup=1)
        samples = {k: [] for k in models}
        for _ in range(repeats):
            for k, m in models.items():
                samples[k] += time_forward(m, x, repeats=1, warmup=0)
    finally:
        torch.set_num_threads(old)
    return samples


def interleaved_latency(models: dict[str, nn.Module], x: torch.Tensor, repeats: int = 7, threads: int = 1) -> dict:
    """Median latency (s) of each model over interleaved repeats (see ``interleaved_samples``)."""
    return {k: statistics.median(v) for k, v in interleaved_samples(models, x, repeats, threads).items()}


def paired_latency_ratio(model: nn.Module, reference: nn.Module, x: torch.Tensor, repeats: int = 7, threads: int = 1):
    """Median over repeats of latency(model) / latency(reference), each ratio taken within one repeat (the two
    forwards run back to back), so that load bursts on a shared machine cancel; also the two medians (s)."""
    s = interleaved_samples({"model": model, "reference": reference}, x, repeats, threads)
    ratio = statistics.median(a / b for a, b in zip(s["model"], s["reference"], strict=True))
    return ratio, statistics.median(s["model"]), statistics.median(s["reference"])


def export_program(model: nn.Module, example: torch.Tensor, path) -> None:
    """Export the (gate-free, compact) model in eval mode with ``torch.export`` (batch size dynamic) and save
    it as a ``.pt2`` edge artefact; load it back with ``torch.export.load(path).module()``.
    (``torch.jit.trace`` is deprecated in torch 2.13.)"""
    model.eval()
    x = example[:1].expand(2, *example.shape[1:]).contiguous()  # batch 2: a batch of 1 would be specialised
    batch = torch.export.Dim("batch", min=1, max=65536)
    with torch.no_grad():
        program = torch.export.export(model, (x,), dynamic_shapes={"img": {0: batch}})
    buf = io.BytesIO()  # a buffer: torch.export.save warns about paths not ending in .pt2 (atomic temp files)
    torch.export.save(program, buf)
    Path(path).write_bytes(buf.getvalue())
