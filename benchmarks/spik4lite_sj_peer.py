"""A full SpikingJelly network as the peer: the accuracy claim's spiking CNN built from SpikingJelly 2.0 layers,
trained at the same budget as ours, against our dense network and our Spik4lite-refactored one (issue 41).

    python benchmarks/spik4lite_sj_peer.py [--out benchmarks/results/spik4lite_sj_peer.json] [--steps 1000]

The peer is not our network with its LIF swapped: every layer is SpikingJelly's (``layer.Conv2d``,
``layer.BatchNorm2d``, ``layer.MaxPool2d`` in multi-step mode, ``neuron.LIFNode`` with tau 2, threshold 1, hard reset
to 0, detached reset, sigmoid surrogate alpha 4, state cleared by ``functional.reset_net``), wired as ours: conv
BN LIF | conv BN LIF maxpool | conv BN LIF | spatial mean | Linear | mean over T, widths 16/32/32, T = 2, direct
encoding. It starts from the same initial weights as our dense network and trains on the same minibatches with
the same optimiser and schedule (AdamW 5e-3, weight decay 0.01, cosine to 0, ``--steps`` steps, batch 32): the
accuracy claim's dense budget. Then both dense networks get the claim's further 300 steps (the dense reference of
``accuracy-kept-v5``) and ours a Spik4lite run at 40 % (lambda 1.5, compensation; SpikingJelly has no channel
refactoring, which is why the peer stays dense). Reported: test accuracy on the shipped 2,000 Fashion-MNIST test
images, and one-thread CPU latency at batch 1 and 32 (interleaved medians; 'vs ours' is the median per-repeat
ratio against our dense network).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from icml26.spik4lite.data import load_data
from icml26.spik4lite.measure import interleaved_samples, n_params
from icml26.spik4lite.model import SpikingCNN
from icml26.spik4lite.train import RefactorConfig, equal_budget_arm, evaluate, fit


def adamw(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """The optimiser of our dense training (``train.py``) for a network without gates: one AdamW group."""
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)


class SpikingJellyCNN(nn.Module):
    """Our ``SpikingCNN`` built from SpikingJelly layers (multi-step), initialised from one of ours."""

    def __init__(self, ours: SpikingCNN):
        super().__init__()
        from spikingjelly.activation_based import layer, neuron, surrogate

        c1, c2, c3 = ours.model_kw["widths"]
        self.T = ours.T

        def lif():
            return neuron.LIFNode(tau=2.0, decay_input=True, v_threshold=1.0, v_reset=0.0, detach_reset=True,
                                  surrogate_function=surrogate.Sigmoid(alpha=4.0), step_mode="m")  # fmt: skip

        def conv(a, b):
            return layer.Conv2d(a, b, 3, padding=1, bias=False, step_mode="m")

        self.features = nn.Sequential(
            conv(ours.in_channels, c1), layer.BatchNorm2d(c1, step_mode="m"), lif(),
            conv(c1, c2), layer.BatchNorm2d(c2, step_mode="m"), lif(), layer.MaxPool2d(2, step_mode="m"),
            conv(c2, c3), layer.BatchNorm2d(c3, step_mode="m"), lif(),
        )  # fmt: skip
        self.fc = nn.Linear(c3, ours.fc.out_features)
        with torch.no_grad():  # the same initial weights as ours
            for i, src in zip((0, 3, 7), (ours.conv0, ours.conv1, ours.conv2), strict=True):
                self.features[i].weight.copy_(src.layer.weight)
                self.features[i + 1].load_state_dict(src.bn.state_dict())
            self.fc.load_state_dict(ours.fc.state_dict())

    def forward(self, img):  # (B, C, H, W) -> (B, classes)
        from spikingjelly.activation_based import functional

        functional.reset_net(self)
        x = self.features(img.unsqueeze(0).repeat(self.T, 1, 1, 1, 1))  # (T, B, c3, H/2, W/2) spikes
        return self.fc(x.mean(dim=(3, 4))).mean(0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "spik4lite_sj_peer.json")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    seed = args.seed
    split = load_data("fashion-mnist", seed=seed, pool=2)
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):  # the initialisation train_dense() draws
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=g)))
        ours = SpikingCNN(1, 10, T=2, widths=(16, 32, 32))
    peer = SpikingJellyCNN(ours)
    x = torch.from_numpy(split.x_test[:32])
    with torch.no_grad():
        init_equal = bool(torch.allclose(peer.eval()(x), ours.eval()(x), atol=1e-5, rtol=0))
    t0, wall = time.perf_counter(), {}
    for name, net in (("ours", ours), ("spikingjelly", peer)):  # same minibatches, optimiser and schedule
        t = time.perf_counter()
        fit(net, split, args.steps, 32, np.random.default_rng(seed), adamw(net, 5e-3, 0.01), cosine=True)
        wall[name] = time.perf_counter() - t
    rc = RefactorConfig(mode="energy", lam=1.5, fraction=0.4, rounds=1, steps_per_round=100, finetune_steps=200)
    counts = {k: v - round(0.4 * v) for k, v in ours.widths().items()}
    acc = {"ours, dense": evaluate(ours, split.x_test, split.y_test),
           "spikingjelly, dense": evaluate(peer, split.x_test, split.y_test)}  # fmt: skip
    ours_ref = equal_budget_arm(copy.deepcopy(ours), split, rc, seed, 32, "dense")
    peer_ref = copy.deepcopy(peer)  # the same further 300 steps (100 constant, 200 cosine) on the same minibatches
    rng = np.random.default_rng(seed + 3)
    fit(peer_ref, split, 100, 32, rng, adamw(peer_ref, rc.lr, 0.01))
    fit(peer_ref, split, 200, 32, rng, adamw(peer_ref, rc.lr, 0.01), cosine=True)
    compact = equal_budget_arm(copy.deepcopy(ours), split, rc, seed, 32, "spik4lite", counts)
    acc |= {"ours, dense + 300 steps": evaluate(ours_ref, split.x_test, split.y_test),
            "spikingjelly, dense + 300 steps": evaluate(peer_ref, split.x_test, split.y_test),
            "ours, Spik4lite 40 % removed": evaluate(compact, split.x_test, split.y_test)}  # fmt: skip
    models = {"ours, dense": ours_ref.eval(), "spikingjelly, dense": peer_ref.eval(), "ours, Spik4lite": compact.eval()}
    latency = {}
    for b in (1, 32):
        s = interleaved_samples(models, x[:b], repeats=args.repeats, threads=1)
        for k, v in s.items():
            latency[f"{k}, batch {b} [ms]"] = 1e3 * statistics.median(v)
            ratios = [a / r for a, r in zip(v, s["ours, dense"], strict=True)]
            latency[f"{k}, batch {b}, vs ours dense"] = statistics.median(ratios)
    result = {
        "what": "full SpikingJelly 2.0 CNN vs ours at the same budget (shipped Fashion-MNIST, 14 x 14, seed "
        f"{seed}); 1 CPU thread",
        "initial logits equal (same init)": init_equal,
        "train_steps": args.steps,
        "train wall [s] (1 thread, shared machine)": wall,
        "test accuracy [%]": acc,
        "params": {k: n_params(m) for k, m in models.items()},
        "latency": latency,
        "repeats": args.repeats,
        "load_average": os.getloadavg()[0],
        "wall_s": time.perf_counter() - t0,
        "torch": torch.__version__,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
