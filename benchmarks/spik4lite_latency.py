"""Spik4lite on a CPU, on real images: dense vs masked-only vs refactored Spikingformer-mini, the same dense model
built with SpikingJelly's LIF neurons, and the torch.export program of the compact model.

    python benchmarks/spik4lite_latency.py [--out benchmarks/results/spik4lite_latency.json] [--repeats 9]

Network: Spikingformer-mini (dim 128, 4 heads, MLP 512, T = 4) trained for ``--train-steps`` minibatches on the
shipped Fashion-MNIST subset (real 28 x 28 images, 2x2-pooled to 14 x 14), so that firing rates and SOPs are those
of a trained network. A Spik4lite round (gates + energy loss + compensation) chooses 50 % of the channels of every
prunable pair (stem and MLP hidden); they are either zeroed in place (masked-only: the paper's "computational
waste on 0 spikes") or removed physically (refactored). Variants timed, interleaved, on test images at batch 1
and 32 on 1 and 2 torch threads ('vs dense': the median of the ratios taken within each interleaved repeat):

- dense, masked, refactored (our LIF);
- dense-spikingjelly: the dense network with every LIF replaced by SpikingJelly 2.0's ``LIFNode`` (multi-step,
  torch backend, same tau / threshold / hard reset / surrogate); its logits are checked equal to ours;
- refactored-export: ``torch.export`` of the refactored network (``.module()`` of the exported program).

Also the timer's sanity check that used to be a unit test (issue 52: tests never time things): an identical copy
of a network reads a paired ratio near 1, and a 16x wider one is slower; reported, with the load average.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch
from torch import nn

from icml26.spik4lite.data import load_data
from icml26.spik4lite.measure import count_ops, interleaved_samples, n_params, paired_latency_ratio
from icml26.spik4lite.model import MultiStepLIF, SpikingCNN, mask_model
from icml26.spik4lite.train import RefactorConfig, TrainConfig, evaluate, spik4lite, train_dense


class SpikingJellyLIF(nn.Module):
    """SpikingJelly's multi-step ``LIFNode`` in place of our ``MultiStepLIF`` (state reset at every call)."""

    def __init__(self, ours: MultiStepLIF):
        super().__init__()
        from spikingjelly.activation_based import neuron, surrogate

        self.node = neuron.LIFNode(tau=ours.tau, decay_input=True, v_threshold=ours.v_threshold,
                                   v_reset=ours.v_reset, surrogate_function=surrogate.Sigmoid(alpha=ours.alpha),
                                   detach_reset=True, step_mode="m")  # fmt: skip

    def forward(self, x):  # (T, B, ...) -> (T, B, ...)
        self.node.reset()
        return self.node(x)


def with_spikingjelly(model: nn.Module) -> nn.Module:
    """A copy of ``model`` with every MultiStepLIF replaced by SpikingJelly's LIFNode."""
    model = copy.deepcopy(model)
    for name, mod in list(model.named_modules()):
        if isinstance(mod, MultiStepLIF):
            parent, _, attr = name.rpartition(".")
            setattr(model.get_submodule(parent) if parent else model, attr, SpikingJellyLIF(mod))
    return model


class Program(nn.Module):
    """An exported program's module behind a plain module (the exported module refuses ``.eval()``; it is
    already an inference graph), kept out of the module tree so that ``eval()`` does not reach it."""

    def __init__(self, module):
        super().__init__()
        self.__dict__["program"] = module

    def forward(self, img):
        return self.program(img)


def exported(model: nn.Module, x: torch.Tensor) -> tuple[nn.Module, int]:
    """``torch.export`` program of the model (dynamic batch), saved to bytes and loaded back; its size."""
    batch = torch.export.Dim("batch", min=1, max=4096)
    with torch.no_grad():
        program = torch.export.export(model.eval(), (x[:2].contiguous(),), dynamic_shapes={"img": {0: batch}})
    buf = io.BytesIO()
    torch.export.save(program, buf)
    size = len(buf.getvalue())
    buf.seek(0)
    return Program(torch.export.load(buf).module()), size


def timer_sanity(repeats: int) -> dict:
    torch.manual_seed(0)
    small = SpikingCNN(1, 10, T=2, widths=(4, 4, 4))
    big = SpikingCNN(1, 10, T=2, widths=(64, 64, 64))
    x = torch.rand(8, 1, 12, 12)
    same, _, _ = paired_latency_ratio(big, copy.deepcopy(big), x, repeats=repeats)
    less, _, _ = paired_latency_ratio(small, big, x, repeats=repeats)
    return {"identical copy / original": same, "4-wide / 64-wide": less, "ok": bool(0.8 < same < 1.25 and less < 0.5)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "spik4lite_latency.json")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--train-steps", type=int, default=150)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    split = load_data("fashion-mnist", n_train=8000, n_test=256, seed=0, pool=2)
    t0 = time.perf_counter()
    dense = train_dense("spikingformer-mini", split, TrainConfig(steps=args.train_steps, batch=32), 0, T=4,
                        dim=128, heads=4).eval()  # fmt: skip
    rc = RefactorConfig(lam=1.5, fraction=0.5, steps_per_round=30, finetune_steps=0)
    refactored, hist = spik4lite(copy.deepcopy(dense), split, rc, 0, batch=32, finetune=False)
    refactored.eval()
    masked = mask_model(copy.deepcopy(dense), hist[0]).eval()
    train_s = time.perf_counter() - t0
    x = torch.from_numpy(split.x_test[:32])
    models = {"dense": dense, "masked": masked, "refactored": refactored}
    peer_note = ""
    try:
        models["dense-spikingjelly"] = with_spikingjelly(dense).eval()
        with torch.no_grad():
            peer_equal = bool(torch.allclose(models["dense-spikingjelly"](x), dense(x), atol=1e-5, rtol=0))
    except ImportError:
        peer_equal, peer_note = None, "spikingjelly is not installed: the peer variant was not run"
    models["refactored-export"], export_bytes = exported(refactored, x)
    with torch.no_grad():
        export_equal = bool(torch.allclose(models["refactored-export"](x), refactored(x), atol=1e-5, rtol=0))
    ops = {k: count_ops(models[k], x) for k in ("dense", "masked", "refactored")}
    rows = []
    for batch in (1, 32):
        for threads in (1, 2):
            samples = interleaved_samples(models, x[:batch], repeats=args.repeats, threads=threads)
            for k, t in samples.items():
                lat = statistics.median(t)
                ratio = statistics.median(a / b for a, b in zip(t, samples["dense"], strict=True))
                rows.append({"variant": k, "batch": batch, "threads": threads, "latency_ms": 1e3 * lat,
                             "images_per_s": batch / lat, "latency_vs_dense": ratio})  # fmt: skip
    flops = {k: ops[k].total_macs / ops["dense"].total_macs for k in ops}
    goal = {
        f"b{r['batch']} t{r['threads']}": (1 - r["latency_vs_dense"]) / (1 - flops["refactored"])
        for r in rows
        if r["variant"] == "refactored"
    }
    acc = [evaluate(dense, split.x_test, split.y_test), evaluate(refactored, split.x_test, split.y_test)]
    result = {
        "network": "SpikingformerMini(dim=128, heads=4, mlp 512, T=4), Fashion-MNIST 14x14, 50 % of each pair removed",
        "train_steps": args.train_steps,
        "train_and_refactor_s": train_s,
        "test_acc_dense_refactored_before_finetune": acc,
        "widths": {"dense": dense.widths(), "refactored": refactored.widths()},
        "params": {k: n_params(models[k]) for k in ("dense", "masked", "refactored")},
        "flops_vs_dense": flops,
        "sops_vs_dense": {k: ops[k].total_sops / ops["dense"].total_sops for k in ops},
        "energy_proxy_uJ_per_image": {k: ops[k].energy_pj * 1e-6 for k in ops},
        "spikingjelly_logits_equal_ours": peer_equal,
        "peer_note": peer_note,
        "export_logits_equal": export_equal,
        "export_bytes": export_bytes,
        "rows": rows,
        "latency_drop_over_flops_drop_refactored": goal,
        "timer_sanity": timer_sanity(args.repeats),
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "torch": torch.__version__,
            "load_avg_1min_at_end": os.getloadavg()[0],
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'variant':20}{'batch':>6}{'thr':>5}{'ms':>10}{'img/s':>10}{'vs dense':>10}")
    for r in rows:
        print(f"{r['variant']:20}{r['batch']:>6}{r['threads']:>5}{r['latency_ms']:>10.2f}{r['images_per_s']:>10.1f}"
              f"{r['latency_vs_dense']:>10.2f}")  # fmt: skip
    for k in ("flops_vs_dense", "sops_vs_dense", "energy_proxy_uJ_per_image", "latency_drop_over_flops_drop_refactored",
              "spikingjelly_logits_equal_ours", "export_logits_equal", "export_bytes", "timer_sanity",
              "test_acc_dense_refactored_before_finetune"):  # fmt: skip
        print(k, result[k])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
