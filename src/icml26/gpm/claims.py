"""Claims of GPM (ICML 2026), v2 (issue 15): fewer questions than the published BECAT, path vs end-point
matching, selection cost against the published (sampled) BECAT, a policy re-used with a re-calibrated bank,
and the untrained-policy-equals-MFI implementation check."""

from __future__ import annotations

import time

import numpy as np

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.gpm.calibrate import calibrate
from icml26.gpm.config import PRESETS, SCALING_BATCH, SCALING_SIZES
from icml26.gpm.data import random_bank, simulate
from icml26.gpm.evaluate import evaluate_selectors, run_cat, saving_with_interval, split_pool
from icml26.gpm.experiment import (
    _short,
    fewer_items,
    plot_curves,
    prepare,
    selector_curves,
    trained_policy,
    training_seconds,
)
from icml26.gpm.policy import GPMSelector
from icml26.gpm.selectors import BECATSelector, MFISelector, TestState


def _datasets(cfg) -> tuple[list[str], str]:
    """The configured data sets that are available here, and a note on any that is skipped."""
    from icml26.gpm.data import load_swedish_sat

    names, note = [], ""
    for name in cfg.datasets:
        if name == "Swedish SAT":
            try:
                load_swedish_sat()
            except OSError as exc:
                note = f"Swedish SAT skipped: {exc}"
                continue
        names.append(name)
    return names, note


def _savings(scale, seed, ours_kwargs, baseline, baseline_kwargs=None):
    """Per data set: % fewer items than ``baseline`` at its RMSE@T, with the paired-bootstrap 95 % interval."""
    cfg = PRESETS[scale.value]
    names, note = _datasets(cfg)
    out = {}
    for name in names:
        ours = selector_curves(name, cfg, seed, "gpm", **ours_kwargs)
        base = selector_curves(name, cfg, seed, baseline, **(baseline_kwargs or {}))
        rng = np.random.default_rng([seed, 7])
        out[name] = tuple(100 * v for v in saving_with_interval(ours, base, cfg.test_length, rng, cfg.n_boot))
    return out, note


def _savings_verdict(savings: dict, bar: float, note: str) -> tuple[float, bool, str]:
    """Average % fewer items over the data sets, whether it clears ``bar``, and the reason text.

    ``savings`` maps a data set to (% fewer items, bootstrap 2.5 %, bootstrap 97.5 %)."""
    avg = float(np.mean([v[0] for v in savings.values()]))
    holds = avg > bar
    per_set = ", ".join(f"{_short(n)} {v[0]:.1f} % [{v[1]:.1f}, {v[2]:.1f}]" for n, v in savings.items())
    reason = (
        ""
        if holds
        else f"average {avg:.1f} % <= {bar:g}{' %' if bar else ''}; per data set (bootstrap 95 %): {per_set}"
    )
    return avg, holds, reason + (f"; {note}" if note else "")


@claim(
    "gpm/fewer-questions-v2",
    statement="To reach the accuracy (RMSE against the full-pool estimate) that the published BECAT reaches "
    "with T = 20 items, GPM needs at least 10 % fewer items on average over a misspecified MIRT bank and the "
    "real Swedish SAT (paper: about 20 % fewer on average)",
    paper="Abstract ('achieves the same estimation accuracy using, on average, 20% fewer questions'); Experiments",
    control="GPM's policy left untrained (epochs = 0): it starts uniform, so it asks random items and needs "
    "far more items than BECAT",
    judge=Interval("average % fewer items than BECAT", above=10.0),
)
def fewer_questions(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    gpm_kwargs = {"epochs": 0} if control else {}  # the one line the control changes
    T = cfg.test_length
    savings, note = _savings(scale, seed, gpm_kwargs, "becat")
    measured, baselines, results = {}, {}, {}
    for name, (point, low, high) in savings.items():
        k = _short(name)
        measured[f"{k} % fewer than BECAT"] = point
        measured[f"{k} % fewer than BECAT, bootstrap 2.5 %"] = low
        measured[f"{k} % fewer than BECAT, bootstrap 97.5 %"] = high
        curves = {s: selector_curves(name, cfg, seed, s, **(gpm_kwargs if s == "gpm" else {})) for s in cfg.selectors}
        results[name] = curves
        for s in ("mfi", "kli", "bobcat"):
            if s in curves:
                baselines[f"{k} GPM % fewer than {s}"] = 100 * fewer_items(curves, "gpm", s, T)
        for s, c in curves.items():
            baselines[f"{k} RMSE@{T} {s}"] = c.rmse_star[T]
        measured[f"{k} GPM updates"] = trained_policy(name, cfg, seed, "gpm", **gpm_kwargs).n_updates_
        measured[f"{k} GPM train s"] = training_seconds(name, cfg, seed, "gpm", **gpm_kwargs)
    avg, holds, reason = _savings_verdict(savings, 10.0, note)
    measured["average % fewer items than BECAT"] = avg
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"% fewer questions (average)": 20.0},
        baselines=baselines,
        elsewhere={"BECAT % fewer than its baselines [BECAT, NeurIPS 2023]": 15.0},
        reason=reason,
        figures={"accuracy-vs-length": plot_curves(results, T)},
    )


@claim(
    "gpm/path-matching-matters-v2",
    statement="Matching the subset's gradients to the full pool's along the whole inner optimisation path "
    "(GPM) beats matching them only at the path's end point (the same policy, training and data): GPM reaches "
    "the end-point policy's RMSE at T = 20 with fewer items on average over both data sets",
    paper="Abstract ('aligns gradients along possible optimization paths toward the final estimate ... leveraging "
    "intermediate gradients as supervision')",
    control="GPM's policy left untrained (epochs = 0, uniform choice) against the trained end-point policy: "
    "without the path supervision it needs far more items",
    judge=Interval("average % fewer items than the end-point ablation", above=0.0),
)
def path_matching_matters(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    gpm_kwargs = {"epochs": 0} if control else {}  # the one line the control changes
    T = cfg.test_length
    savings, note = _savings(scale, seed, gpm_kwargs, "gpm-endpoint")
    measured, baselines = {}, {}
    for name, (point, low, high) in savings.items():
        k = _short(name)
        measured[f"{k} % fewer than end-point"] = point
        measured[f"{k} % fewer than end-point, bootstrap 2.5 %"] = low
        measured[f"{k} % fewer than end-point, bootstrap 97.5 %"] = high
        for s, kw in (("gpm", gpm_kwargs), ("gpm-endpoint", {}), ("becat", {})):
            baselines[f"{k} RMSE@{T} {s}"] = selector_curves(name, cfg, seed, s, **kw).rmse_star[T]
        baselines[f"{k} end-point train s"] = training_seconds(name, cfg, seed, "gpm-endpoint")
    avg, holds, reason = _savings_verdict(savings, 0.0, note)
    measured["average % fewer items than the end-point ablation"] = avg
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"path vs global / end-point matching": "intermediate gradients as supervision (abstract)"},
        baselines=baselines,
        reason=reason,
    )


@claim(
    "gpm/generalizes-v2",
    statement="A GPM policy trained with one calibration of the bank, re-used unchanged with a re-calibration "
    "of the same items on other examinees, still reaches MFI's RMSE at T = 20 (both with the re-calibrated "
    "bank) with fewer items, on average over both data sets",
    paper="Abstract ('learns an explicit and generalizable selection algorithm from large-scale data')",
    control="the re-used policy left untrained (epochs = 0, uniform choice): it asks random items and needs "
    "more items than MFI",
    judge=Interval("average % fewer items than MFI, re-calibrated bank", above=0.0),
)
def generalizes(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    gpm_kwargs = {"epochs": 0} if control else {}  # the one line the control changes
    T = cfg.test_length
    names, note = _datasets(cfg)
    measured, baselines, savings = {}, {}, {}
    for name in names:
        k = _short(name)
        prep = prepare(name, cfg, seed)
        new_bank, kept = calibrate(prep.x_recal, "2pl")
        if kept.size != prep.bank.n_items:
            return ClaimResult("not-measured", reason=f"{name}: re-calibration dropped items {kept.tolist()[:5]}")
        policy = trained_policy(name, cfg, seed, "gpm", **gpm_kwargs).with_bank(new_bank)
        rng = np.random.default_rng([seed, 9])
        curves = evaluate_selectors(new_bank, {"gpm": policy, "mfi": MFISelector()}, prep.x_test, prep.split,
                                    cfg.max_length, rng, prep.theta_true)  # fmt: skip
        point, low, high = (100 * v for v in saving_with_interval(curves["gpm"], curves["mfi"], T, rng, cfg.n_boot))
        savings[name] = (point, low, high)
        measured[f"{k} % fewer than MFI, re-calibrated bank"] = point
        measured[f"{k} % fewer than MFI, re-calibrated, bootstrap 2.5 %"] = low
        measured[f"{k} % fewer than MFI, re-calibrated, bootstrap 97.5 %"] = high
        own = {s: selector_curves(name, cfg, seed, s, **(gpm_kwargs if s == "gpm" else {})) for s in ("gpm", "mfi")}
        baselines[f"{k} % fewer than MFI, own bank"] = 100 * fewer_items(own, "gpm", "mfi", T)
        baselines[f"{k} mean |b_new - b_old|"] = float(np.mean(np.abs(new_bank.b - prep.bank.b)))
        baselines[f"{k} RMSE@{T} gpm, re-calibrated bank"] = curves["gpm"].rmse_star[T]
        baselines[f"{k} RMSE@{T} mfi, re-calibrated bank"] = curves["mfi"].rmse_star[T]
    avg, holds, reason = _savings_verdict(savings, 0.0, note)
    measured["average % fewer items than MFI, re-calibrated bank"] = avg
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"generalizable": "learns an explicit and generalizable selection algorithm (abstract)"},
        baselines=baselines,
        reason=reason,
    )


def _time_step(selector, bank, state, rng, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        selector.select(bank, state, rng)
        best = min(best, time.perf_counter() - start)
    return best


@claim(
    "gpm/scales-v2",
    statement="One GPM selection step (a policy forward pass, hidden 256, and the 10-step inner path) costs "
    "at least 10x less than one step of the published BECAT (ground set sampled: |S| + 5 untested items) at "
    "a bank of 2,000 items",
    paper="Abstract ('such global alignment on entire space is computationally expensive and difficult to "
    "scale'); scalability analysis",
    control="the credited component off: GPM's learned policy replaced by the global gradient alignment it "
    "avoids (every untested item in the ground set, all J^2 item pairs scored per step; timed on 2 examinees): "
    "it costs ~100x more than the sampled BECAT (log10 ratio ~ -2), far below the 10x bar",
    judge=Interval("log10 time ratio BECAT / GPM at the largest bank", above=1.0),
)
def scales(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    sizes, B, t = SCALING_SIZES[scale.value], SCALING_BATCH[scale.value], 10
    times = {"gpm": [], "becat": [], "mfi": []}
    for J in sizes:
        bank = random_bank(J, rng)
        theta = rng.normal(size=B)
        x = bank.sample(theta, rng)
        asked = np.zeros((B, J), dtype=bool)
        asked[np.arange(B)[:, None], np.argsort(rng.random((B, J)), axis=1)[:, :t]] = True
        state = TestState(np.where(asked, x, np.nan), ~asked, theta, t)
        # The cost of a forward pass does not depend on the weights: time an untrained policy of the paper's size.
        gpm = GPMSelector(bank, epochs=0, hidden=256, test_length=t).fit(x[:2])
        if control:  # the control's line: all J^2 pairs per step (~1 s per examinee at J = 2,000: 2 examinees, once)
            gpm, few = BECATSelector(extra=None), TestState(state.responses[:2], state.available[:2], theta[:2], t)
        selectors = {"gpm": gpm, "becat": BECATSelector(), "mfi": MFISelector()}
        for name, sel in selectors.items():
            if control and name == "gpm":
                times[name].append(_time_step(sel, bank, few, rng, repeats=1) / 2)
            else:
                times[name].append(_time_step(sel, bank, state, rng, repeats=3) / B)
    slopes = {name: float(np.polyfit(np.log(sizes), np.log(ts), 1)[0]) for name, ts in times.items()}
    log_ratio = float(np.log10(times["becat"][-1] / times["gpm"][-1]))
    holds = log_ratio > 1.0
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 4))
    ax = fig.subplots()
    for name, ts in times.items():
        ax.loglog(sizes, np.array(ts) * 1e3, "o-", label=f"{name} (slope {slopes[name]:.2f})")
    ax.set(xlabel="bank size J", ylabel="ms per examinee per selection step", title=f"selection cost at step t={t}")
    ax.legend(fontsize=8)
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "log10 time ratio BECAT / GPM at the largest bank": log_ratio,
            f"BECAT / GPM time at J={sizes[-1]}": 10**log_ratio,
            "gpm log-log slope": slopes["gpm"],
        },
        paper={"global alignment (BECAT)": "computationally expensive and difficult to scale (abstract)"},
        baselines={
            "becat (sampled) log-log slope": slopes["becat"],
            "mfi log-log slope": slopes["mfi"],
            f"becat ms per examinee-step at J={sizes[-1]}": 1e3 * times["becat"][-1],
            f"gpm ms per examinee-step at J={sizes[-1]}": 1e3 * times["gpm"][-1],
        },
        reason="" if holds else f"BECAT / GPM = {10**log_ratio:.1f}x at J = {sizes[-1]} (bar 10x)",
        figures={"cost-vs-bank-size": fig},
    )


@claim(
    "gpm/untrained-equals-mfi-v1",
    statement="Initialised as MFI (init='mfi', Fisher-scoring inner estimator) and untrained, the GPM policy "
    "asks the same items as maximum Fisher information on at least 99 % of the test steps, so what a trained "
    "policy does differently comes from its training",
    paper="not in the paper: an implementation check of the MFI-initialised variant (ours)",
    control="the default initialisation (init='uniform') untrained: every item scores alike, the policy asks "
    "items in bank order and agrees with MFI on few steps",
    by_construction="an implementation check, not a finding: with beta = 1, a zero output layer and the inner "
    "estimator converged to the MAP, the policy's logits are log I_j(theta_MAP) (its control shows the measure "
    "sees a policy that is not MFI)",
)
def untrained_equals_mfi(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    init = "uniform" if control else "mfi"  # the one line the control changes
    rng = np.random.default_rng(seed)
    data = simulate(cfg.n_test + 2, cfg.n_items, rng, "2pl")
    x = data.responses[2:]
    gpm = GPMSelector(data.bank, epochs=0, init=init, inner="fisher", test_length=cfg.test_length,
                      hidden=cfg.hidden).fit(data.responses[:2])  # fmt: skip
    pool = split_pool(x, rng).pool
    _, asked_gpm, _ = run_cat(data.bank, gpm, x, pool, cfg.test_length, np.random.default_rng(seed))
    _, asked_mfi, _ = run_cat(data.bank, MFISelector(), x, pool, cfg.test_length, np.random.default_rng(seed))
    # step by step: the first disagreement changes the rest of that examinee's test, so compare the prefixes
    same_prefix = np.cumprod(asked_gpm == asked_mfi, axis=1).astype(bool)
    agree = float(same_prefix.mean())
    holds = agree >= 0.99
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"share of test steps where GPM asks MFI's item": agree},
        reason="" if holds else f"agreement {agree:.3f} < 0.99",
    )


CLAIMS = [fewer_questions, path_matching_matters, scales, generalizes, untrained_equals_mfi]
