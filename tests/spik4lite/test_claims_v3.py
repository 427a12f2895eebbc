"""Contract v3 pieces of spik4lite: the gates act at the claims' lambda, the planted workloads, the measures."""

import copy

import numpy as np
import pytest
import torch

from icml26.spik4lite.claims import MEASURES, _BatchSlice, _dense, _random_keep, _Repeated
from icml26.spik4lite.config import PRESETS
from icml26.spik4lite.measure import count_ops
from icml26.spik4lite.model import SpikingCNN
from icml26.spik4lite.train import RefactorConfig, spik4lite

torch.set_num_threads(1)


def _closed_fraction(lam: float, seed: int) -> float:
    """Fraction of channels whose mean keep-probability falls below 0.5 after the smoke gated round."""
    cfg = PRESETS["smoke"]
    split, dense = _dense("smoke", seed)
    probs: list = []
    rc = RefactorConfig(lam=lam, steps_per_round=cfg.acc_round_steps, finetune_steps=0)
    spik4lite(copy.deepcopy(dense), split, rc, seed, batch=cfg.acc_batch, finetune=False, keep_probs=probs)
    return float((torch.cat(list(probs[0].values())) < 0.5).float().mean())


@pytest.mark.parametrize("seed", [0, pytest.param(3, marks=pytest.mark.slow)])
def test_energy_loss_drives_the_gates_shut(seed):
    # lambda = 0: only the task's straight-through gradient acts, and the keep-biased gates stay open; the
    # claims' lambda makes the energy term close channels (the gates' probe is the same measurement)
    assert _closed_fraction(0.0, seed) < _closed_fraction(PRESETS["smoke"].acc_lam, seed)
    assert _closed_fraction(PRESETS["smoke"].acc_lam, seed) > 0.0


def test_batch_slice_is_exactly_the_planted_workload():
    torch.manual_seed(0)
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5)).eval()
    img = torch.rand(10, 1, 8, 8)
    sliced = _BatchSlice(net, 6)
    with torch.no_grad():
        assert torch.equal(sliced(img), net(img[:6]))
    # per-image MACs of the sliced network are 6/10 of the whole network's: the workload fraction
    assert count_ops(sliced, img).total_macs == pytest.approx(0.6 * count_ops(net, img).total_macs)


def test_random_keep_drops_the_asked_fraction():
    net = SpikingCNN(1, 10, T=2, widths=(10, 20, 30))
    keep = _random_keep(net, 0.4, np.random.default_rng(1))
    assert {k: int((~v).sum()) for k, v in keep.items()} == {"conv0": 4, "conv1": 8, "conv2": 12}


@pytest.mark.parametrize("name", ["test accuracy [%]", "log10 max |compact - masked|"])
@pytest.mark.parametrize("seed", [0, 1])
def test_measures_see_the_truth_and_the_null(name, seed):
    check = next(m for m in MEASURES if m.name == name)  # the latency measure is timed: checked by check_system
    assert check.check(seed) == []


def test_repeated_network_does_exactly_k_times_the_work():
    """The latency measure's planted-size check times a network run k times: the same output, k forwards."""
    torch.manual_seed(0)
    net = SpikingCNN(1, 10, T=2, widths=(4, 6, 5)).eval()
    calls = []
    net.register_forward_hook(lambda *_: calls.append(1))
    img = torch.rand(3, 1, 8, 8)
    with torch.no_grad():
        assert torch.equal(_Repeated(net, 3)(img), net(img))
    assert len(calls) == 3 + 1


def test_accuracy_positive_plants_the_bar_on_the_aa_arm():
    """The accuracy claim's positive arm is the negative arm's network (the A/A run) with its accuracy raised by
    the seed's dense - random gap less 2/3 of the bar, in whole test images: so it differs from the negative arm by
    the plant only, and its loss to dense is the A/A difference (twin vs random baseline) plus 2/3 of the bar."""
    from icml26.claims import Arm, Scale
    from icml26.spik4lite.claims import PLANTED_PT, accuracy_kept

    neg, pos = accuracy_kept(Scale.SMOKE, 0, Arm.NEGATIVE), accuracy_kept(Scale.SMOKE, 0, Arm.POSITIVE)
    n = PRESETS["smoke"].acc_test
    aa = neg.measured["acc Spik4lite - random [pt]"]
    assert aa == neg.measured["acc Spik4lite [%]"] - neg.baselines["acc random pruning [%]"]
    expected = aa - PLANTED_PT
    assert pos.measured["acc Spik4lite - dense [pt]"] == pytest.approx(expected, abs=100 / n / 2 + 1e-9)
    assert pos.measured["energy Spik4lite / dense"] == neg.measured["energy Spik4lite / dense"]


@pytest.mark.parametrize("method", ["spik4lite", "random", "dense"])
def test_equal_budget_arms_train_on_the_same_minibatches(method):
    """accuracy-kept-v5's fairness: every arm (Spik4lite, a pruning rule, the dense reference) sees exactly
    rounds * steps_per_round + finetune_steps training minibatches, and the same ones in the same order."""
    from icml26.spik4lite.data import Split
    from icml26.spik4lite.train import equal_budget_arm

    rng = np.random.default_rng(0)
    x = rng.random((40, 1, 8, 8), dtype=np.float32)
    x[:, 0, 0, 0] = np.arange(40)  # pixel (0, 0) names the image, so the batches drawn can be read back
    split = Split(x, np.arange(40) % 3, x[:8], np.arange(8) % 3)
    torch.manual_seed(0)
    net = SpikingCNN(1, 3, T=2, widths=(4, 6, 6))
    seen = []
    net.register_forward_pre_hook(lambda m, a: seen.append(a[0][:, 0, 0, 0].tolist()) if m.training else None)
    rc = RefactorConfig(lam=1.0, fraction=0.5, steps_per_round=3, finetune_steps=2)
    w0 = net.widths()
    counts = {k: v // 2 for k, v in w0.items()}
    equal_budget_arm(net, split, rc, 5, 4, method, counts)
    reference = np.random.default_rng(5 + 3)
    assert seen == [[float(i) for i in reference.integers(0, 40, 4)] for _ in range(5)]
    assert net.widths() == (w0 if method == "dense" else counts)


def test_equal_budget_aa_twin_differs_from_random_only_in_its_channels():
    """The negative control's twin and the random baseline draw their channels from different streams (an A/A pair
    with its own randomness, never the baseline reused)."""
    from icml26.spik4lite.train import baseline_keep

    torch.manual_seed(0)
    net = SpikingCNN(1, 3, T=2, widths=(10, 12, 12))
    counts = {k: v // 2 for k, v in net.widths().items()}
    x = np.random.default_rng(0).random((8, 1, 8, 8), dtype=np.float32)
    a, b = baseline_keep(net, "random", counts, x, 5), baseline_keep(net, "random", counts, x, 5 + 7)
    assert all(int(a[k].sum()) == int(b[k].sum()) == counts[k] for k in counts)
    assert any(not torch.equal(a[k], b[k]) for k in counts)
