"""Claims of GPM (ICML 2026), v2 (issue 15) on contract v3 (issue 39): fewer questions than the published
BECAT, path vs end-point matching, selection cost against the published (sampled) BECAT, a policy re-used
with a re-calibrated bank, and the untrained-policy-equals-MFI implementation check.

Every claim runs three arms on the same examinees, split and measure ("% fewer items": 1 - the items one
selector needs to reach another's RMSE at T, / T). The comparisons' negative controls are A/A runs: GPM
removed, the baseline's A/A partner in its place (a second BECAT on its own random stream, a second end-point
policy from its own initialisation, MFI with near-ties broken on its own stream); their positive controls put
that same partner against the baseline **handicapped by 1.5x the claim's bar** (:func:`handicapped`: the
baseline's error after ``(1 - margin) T`` items stands for its error at ``T``), so the measure must read the
margin back through the same verdict. The three accuracy claims are v3: the training preset (batch 8, up to 5
epochs) and the bars were fixed after v2's seeds had been seen, so v3 is judged on a fresh seed stream
(:data:`FRESH_SEEDS`). ``MECHANISMS`` probes the policy's training, and (in the same test states) whether the
trained policy departs from MFI and from the end-point policy by more than a retrained twin departs from it;
``MEASURES`` checks the saving measure on an oracle, an A/A pair and a planted saving.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import zlib

import numpy as np

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.gpm.calibrate import calibrate
from icml26.gpm.config import PRESETS, SCALING_BATCH, SCALING_SIZES
from icml26.gpm.data import random_bank, simulate
from icml26.gpm.evaluate import Curves, evaluate_selectors, run_cat, saving_with_interval, split_pool
from icml26.gpm.experiment import (
    _short,
    fewer_items,
    make_selector,
    plot_curves,
    prepare,
    selector_curves,
    trained_policy,
    training_seconds,
)
from icml26.gpm.irt import estimate_ability
from icml26.gpm.policy import GPMSelector
from icml26.gpm.selectors import BECATSelector, MFISelector, RandomSelector, Selector, TestState, _masked_argmax

#: Bars (in % of T) of the accuracy claims and the savings their positive controls plant: 1.5x each bar. The
#: paper's headline is about 20 % fewer questions (abstract); ``fewer-questions`` asks for half of it; the paper
#: gives no size for the path-vs-end-point ablation or the transfer to a re-calibrated bank, where a quarter
#: of it is asked (an A/A pair scatters around 0, so a bar at 0 would pass half of its A/A runs).
BARS = {"fewer-questions": 10.0, "path-matching": 5.0, "generalizes": 5.0}
PLANTED = {k: 1.5 * v for k, v in BARS.items()}
#: Seed offset of the A/A partners: a second policy's initialisation, a second BECAT's stream.
_PARTNER = 1000
#: The v3 accuracy claims and the probes run on seeds ``seed + FRESH_SEEDS``: their training preset and bars
#: were fixed after v2's seeds 0-4 had been seen, so they are judged on a fresh seed stream.
FRESH_SEEDS = 1000


def handicapped(curves: Curves, margin_pct: float) -> Curves:
    """The baseline handicapped by ``margin_pct`` % of its items: row t holds its per-examinee error after
    ``(1 - margin) t`` items (linear interpolation between test lengths), so a selector exactly as good as the
    baseline reaches the handicapped RMSE at T with ``margin`` % fewer items. Only ``sq_err`` and
    ``rmse_star`` are handicapped (the saving measure reads nothing else)."""
    keep = 1.0 - margin_pct / 100.0
    rows = curves.sq_err.shape[0]
    t = np.arange(rows) * keep  # (T + 1,) fractional test lengths
    lo = np.floor(t).astype(int)
    hi = np.minimum(lo + 1, rows - 1)
    frac = (t - lo)[:, None]
    sq_err = (1 - frac) * curves.sq_err[lo] + frac * curves.sq_err[hi]  # (T + 1, N)
    return Curves(np.sqrt(sq_err.mean(axis=1)), curves.acc, curves.auc, None, curves.seconds_per_step, sq_err=sq_err)


class _JitteredMFI(Selector):
    """MFI with near-ties broken at random: each item's information is multiplied by 1 + U(0, ``jitter``) on
    the selector's own stream. MFI itself is deterministic, so this is its A/A partner."""

    name = "mfi-jittered"

    def __init__(self, rng: np.random.Generator, jitter: float = 0.02):
        self.rng, self.jitter = rng, jitter

    def select(self, bank, state, rng):
        info = bank.information(state.theta)  # (B, J)
        return _masked_argmax(info * (1 + self.jitter * self.rng.random(info.shape)), state.available)


class _OracleMFI(Selector):
    """MFI at the examinee's full-pool estimate theta* instead of the running one: an oracle that knows where
    the test should end (the truth of the saving measure's check)."""

    name = "oracle"

    def __init__(self, theta_star: np.ndarray):
        self.theta_star = theta_star  # (N,)

    def select(self, bank, state, rng):
        return MFISelector().select(bank, TestState(state.responses, state.available, self.theta_star, state.step), rng)


class _Deviating(Selector):
    """MFI that asks a random available item instead, independently on each step with probability ``p``."""

    name = "mfi-deviating"

    def __init__(self, p: float, rng: np.random.Generator):
        self.p, self.rng = p, rng

    def select(self, bank, state, rng):
        items = MFISelector().select(bank, state, rng)
        other = RandomSelector().select(bank, state, self.rng)
        return np.where(self.rng.random(items.shape) < self.p, other, items)


@functools.lru_cache(maxsize=16)
def _partner_policy(dataset: str, cfg, seed: int, name: str) -> GPMSelector:
    """A second learned policy ``name`` trained the same way as the first, from its own initialisation."""
    prep = prepare(dataset, cfg, seed)
    return make_selector(name, prep.bank, cfg, seed + _PARTNER).fit(prep.x_train)


@functools.lru_cache(maxsize=64)
def _partner_curves(dataset: str, cfg, seed: int, name: str) -> Curves:
    """The A/A partner of a selector: a second BECAT on its own random stream (its sampled ground sets), or a
    second learned policy (``gpm``, ``gpm-endpoint``) trained the same way from its own initialisation (policy
    seed + 1000)."""
    prep = prepare(dataset, cfg, seed)
    if name in ("gpm", "gpm-endpoint"):
        sel = _partner_policy(dataset, cfg, seed, name)
    else:
        sel = BECATSelector()
    rng = np.random.default_rng([seed, zlib.crc32(name.encode()), _PARTNER])
    return evaluate_selectors(prep.bank, {name: sel}, prep.x_test, prep.split, cfg.max_length, rng,
                              prep.theta_true)[name]  # fmt: skip


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


def _savings(scale, seed, arm: Arm, baseline: str, margin_pct: float):
    """Per data set: % fewer items than ``baseline`` at its RMSE@T, with the paired-bootstrap 95 % interval.

    The claim arm puts GPM against the baseline; the negative arm (A/A) the baseline's partner (its own random
    stream or initialisation) in GPM's place; the positive arm that partner against the baseline handicapped by
    ``margin_pct`` % of its items. Also returned, per data set: the A/A pair's saving (partner against the
    unhandicapped baseline), the measure's null scatter (in the negative arm: the judged value itself)."""
    cfg = PRESETS[scale.value]
    names, note = _datasets(cfg)
    out, null = {}, {}
    for name in names:
        base = selector_curves(name, cfg, seed, baseline)
        partner = _partner_curves(name, cfg, seed, baseline)
        # the arms' one line: GPM, or the baseline's A/A partner in its place (both controls)
        ours = selector_curves(name, cfg, seed, "gpm") if arm is Arm.CLAIM else partner
        target = handicapped(base, margin_pct) if arm is Arm.POSITIVE else base
        rng = np.random.default_rng([seed, 7])
        out[name] = tuple(100 * v for v in saving_with_interval(ours, target, cfg.test_length, rng, cfg.n_boot))
        null[name] = 100 * saving_with_interval(partner, base, cfg.test_length, rng, n_boot=1)[0]
    return out, null, note


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
    "gpm/fewer-questions-v3",
    statement="To reach the accuracy (RMSE against the full-pool estimate) that the published BECAT reaches "
    "with T = 20 items, GPM needs at least 10 % fewer items on average over a misspecified MIRT bank and the "
    "real Swedish SAT (paper: about 20 % fewer on average); training preset fixed from v2's seeds, judged on "
    "fresh seeds",
    paper="Abstract ('achieves the same estimation accuracy using, on average, 20% fewer questions'); Experiments",
    control="A/A: GPM removed, a second BECAT on its own random stream (its own sampled ground sets) in its "
    "place against BECAT: the saving scatters around 0",
    positive="that second BECAT against BECAT handicapped by 15 %, 1.5x the bar (its error after 0.85 T items "
    "stands for its error at T): the measure must read back a 15 % saving",
    mechanisms=("policy-training", "differs-from-mfi"),
    judge=Interval("average % fewer items than BECAT", above=BARS["fewer-questions"]),
)
def fewer_questions(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    T = cfg.test_length
    seed = seed + FRESH_SEEDS  # v3: a fresh seed stream
    savings, null, note = _savings(scale, seed, arm, "becat", PLANTED["fewer-questions"])
    measured, baselines, results = {}, {}, {}
    for name, (point, low, high) in savings.items():
        k = _short(name)
        measured[f"{k} % fewer than BECAT"] = point
        measured[f"{k} % fewer than BECAT, bootstrap 2.5 %"] = low
        measured[f"{k} % fewer than BECAT, bootstrap 97.5 %"] = high
        measured[f"{k} A/A: second BECAT % fewer than BECAT (reported)"] = null[name]
        curves = {s: selector_curves(name, cfg, seed, s) for s in cfg.selectors}
        results[name] = curves
        for s in ("mfi", "kli", "bobcat"):
            if s in curves:
                baselines[f"{k} GPM % fewer than {s}"] = 100 * fewer_items(curves, "gpm", s, T)
        for s, c in curves.items():
            baselines[f"{k} RMSE@{T} {s}"] = c.rmse_star[T]
        measured[f"{k} GPM updates"] = trained_policy(name, cfg, seed, "gpm").n_updates_
        measured[f"{k} GPM train s"] = training_seconds(name, cfg, seed, "gpm")
    avg, holds, reason = _savings_verdict(savings, BARS["fewer-questions"], note)
    measured["average % fewer items than BECAT"] = avg
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"% fewer questions (average)": 20.0},
        baselines=baselines,
        elsewhere={"BECAT % fewer than its baselines [BECAT, NeurIPS 2023]": 15.0},
        reason=reason,
        figures={"accuracy-vs-length": plot_curves(results, T)} if arm is Arm.CLAIM else {},
    )


@claim(
    "gpm/path-matching-matters-v3",
    statement="Matching the subset's gradients to the full pool's along the whole inner optimisation path "
    "(GPM) beats matching them only at the path's end point (the same policy, training and data): GPM reaches "
    "the end-point policy's RMSE at T = 20 with at least 5 % fewer items on average over both data sets (a quarter "
    "of the paper's 20 % headline; bar and training preset fixed from v2's seeds, judged on fresh seeds)",
    paper="Abstract ('aligns gradients along possible optimization paths toward the final estimate ... leveraging "
    "intermediate gradients as supervision')",
    control="A/A: path matching removed, a second end-point policy trained the same way from its own "
    "initialisation in GPM's place against the first: the saving scatters around 0 (the spread of retraining)",
    positive="that second end-point policy against the end-point policy handicapped by 7.5 % of its items "
    "(1.5x the bar)",
    mechanisms=("policy-training", "path-supervision"),
    judge=Interval("average % fewer items than the end-point ablation", above=BARS["path-matching"]),
)
def path_matching_matters(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    T = cfg.test_length
    seed = seed + FRESH_SEEDS  # v3: a fresh seed stream
    savings, null, note = _savings(scale, seed, arm, "gpm-endpoint", PLANTED["path-matching"])
    measured, baselines = {}, {}
    for name, (point, low, high) in savings.items():
        k = _short(name)
        measured[f"{k} % fewer than end-point"] = point
        measured[f"{k} % fewer than end-point, bootstrap 2.5 %"] = low
        measured[f"{k} % fewer than end-point, bootstrap 97.5 %"] = high
        measured[f"{k} A/A: second end-point % fewer than end-point (reported)"] = null[name]
        for s in ("gpm", "gpm-endpoint", "becat"):
            baselines[f"{k} RMSE@{T} {s}"] = selector_curves(name, cfg, seed, s).rmse_star[T]
        baselines[f"{k} RMSE@{T} gpm-endpoint, second init"] = _partner_curves(
            name, cfg, seed, "gpm-endpoint"
        ).rmse_star[T]
        baselines[f"{k} end-point train s"] = training_seconds(name, cfg, seed, "gpm-endpoint")
    avg, holds, reason = _savings_verdict(savings, BARS["path-matching"], note)
    measured["average % fewer items than the end-point ablation"] = avg
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"path vs global / end-point matching": "intermediate gradients as supervision (abstract)"},
        baselines=baselines,
        reason=reason,
    )


@claim(
    "gpm/generalizes-v3",
    statement="A GPM policy trained with one calibration of the bank, re-used unchanged with a re-calibration "
    "of the same items on other examinees, still reaches MFI's RMSE at T = 20 (both with the re-calibrated "
    "bank) with at least 5 % fewer items, on average over both data sets (bar and training preset fixed from v2's "
    "seeds, judged on fresh seeds)",
    paper="Abstract ('learns an explicit and generalizable selection algorithm from large-scale data')",
    control="A/A: the re-used policy removed, MFI's A/A partner in its place (MFI with the re-calibrated bank, "
    "near-ties broken at random on its own stream: each item's information jittered by up to 2 %; MFI itself "
    "is deterministic and would tie exactly) against MFI: the saving scatters around 0",
    positive="that A/A partner against MFI handicapped by 7.5 % of its items (1.5x the bar)",
    mechanisms=("policy-training", "differs-from-mfi"),
    judge=Interval("average % fewer items than MFI, re-calibrated bank", above=BARS["generalizes"]),
)
def generalizes(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    T = cfg.test_length
    seed = seed + FRESH_SEEDS  # v3: a fresh seed stream
    names, note = _datasets(cfg)
    measured, baselines, savings = {}, {}, {}
    for name in names:
        k = _short(name)
        prep = prepare(name, cfg, seed)
        new_bank, kept = calibrate(prep.x_recal, "2pl")
        if kept.size != prep.bank.n_items:
            return ClaimResult("not-measured", reason=f"{name}: re-calibration dropped items {kept.tolist()[:5]}")
        if arm is Arm.CLAIM:
            policy = trained_policy(name, cfg, seed, "gpm").with_bank(new_bank)
        else:  # the controls' line: MFI's A/A partner in the re-used policy's place
            policy = _JitteredMFI(np.random.default_rng([seed, _PARTNER]))
        rng = np.random.default_rng([seed, 9])
        curves = evaluate_selectors(new_bank, {"gpm": policy, "mfi": MFISelector()}, prep.x_test, prep.split,
                                    cfg.max_length, rng, prep.theta_true)  # fmt: skip
        base = handicapped(curves["mfi"], PLANTED["generalizes"]) if arm is Arm.POSITIVE else curves["mfi"]
        point, low, high = (100 * v for v in saving_with_interval(curves["gpm"], base, T, rng, cfg.n_boot))
        savings[name] = (point, low, high)
        measured[f"{k} % fewer than MFI, re-calibrated bank"] = point
        measured[f"{k} % fewer than MFI, re-calibrated, bootstrap 2.5 %"] = low
        measured[f"{k} % fewer than MFI, re-calibrated, bootstrap 97.5 %"] = high
        own = {s: selector_curves(name, cfg, seed, s) for s in ("gpm", "mfi")}
        baselines[f"{k} % fewer than MFI, own bank"] = 100 * fewer_items(own, "gpm", "mfi", T)
        baselines[f"{k} mean |b_new - b_old|"] = float(np.mean(np.abs(new_bank.b - prep.bank.b)))
        baselines[f"{k} RMSE@{T} gpm, re-calibrated bank"] = curves["gpm"].rmse_star[T]
        baselines[f"{k} RMSE@{T} mfi, re-calibrated bank"] = curves["mfi"].rmse_star[T]
    avg, holds, reason = _savings_verdict(savings, BARS["generalizes"], note)
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


#: The cost ratio ``scales``' positive control plants: the BECAT twin's time divided by 12.5 (1.25x the 10x bar).
SCALES_PLANT = 12.5


@claim(
    "gpm/scales-v2",
    statement="One GPM selection step (a policy forward pass, hidden 256, and the 10-step inner path) costs "
    "at least 10x less than one step of the published BECAT (ground set sampled: |S| + 5 untested items) at "
    "a bank of 2,000 items",
    paper="Abstract ('such global alignment on entire space is computationally expensive and difficult to "
    "scale'); scalability analysis",
    control="A/A: GPM's amortised policy removed, a second published BECAT on its own random stream (its own "
    "sampled ground sets) timed in its slot: the log10 ratio scatters around 0",
    positive="that second BECAT made 12.5x cheaper (its measured time divided by 12.5: 1.25x the 10x bar), "
    "through the same timing and ratio",
    judge=Interval("log10 time ratio BECAT / GPM at the largest bank", above=1.0),
)
def scales(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
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
        if arm is Arm.CLAIM:
            # The cost of a forward pass does not depend on the weights: time an untrained policy of the paper's size.
            gpm = GPMSelector(bank, epochs=0, hidden=256, test_length=t).fit(x[:2])
        else:  # the controls' line: BECAT's A/A twin in GPM's slot (the positive divides its time by the plant)
            gpm = BECATSelector()
        slot_rng = rng if arm is Arm.CLAIM else np.random.default_rng([seed, J, _PARTNER])  # the twin's own stream
        for name, sel in {"gpm": gpm, "becat": BECATSelector(), "mfi": MFISelector()}.items():
            step = _time_step(sel, bank, state, slot_rng if name == "gpm" else rng, repeats=3) / B
            times[name].append(step / SCALES_PLANT if name == "gpm" and arm is Arm.POSITIVE else step)
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
        figures={"cost-vs-bank-size": fig} if arm is Arm.CLAIM else {},
    )


@claim(
    "gpm/untrained-equals-mfi-v1",
    statement="Initialised as MFI (init='mfi', Fisher-scoring inner estimator) and untrained, the GPM policy "
    "asks the same items as maximum Fisher information on at least 99 % of the test steps, so what a trained "
    "policy does differently comes from its training",
    paper="not in the paper: an implementation check of the MFI-initialised variant (ours)",
    control="the default initialisation (init='uniform') untrained: every item scores alike, the policy asks "
    "items in bank order and agrees with MFI on few steps",
    positive="MFI that asks a random item instead on a planted share of steps, sized so that it agrees with MFI "
    "on about 99.5 % of the steps (half the 1 % the claim allows), through the same step-by-step comparison",
    by_construction="an implementation check, not a finding: with beta = 1, a zero output layer and the inner "
    "estimator converged to the MAP, the policy's logits are log I_j(theta_MAP) (its control shows the measure "
    "sees a policy that is not MFI)",
)
def untrained_equals_mfi(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    init = "uniform" if arm is Arm.NEGATIVE else "mfi"  # the negative control's line
    rng = np.random.default_rng(seed)
    data = simulate(cfg.n_test + 2, cfg.n_items, rng, "2pl")
    x = data.responses[2:]
    gpm = GPMSelector(data.bank, epochs=0, init=init, inner="fisher", test_length=cfg.test_length,
                      hidden=cfg.hidden).fit(data.responses[:2])  # fmt: skip
    if arm is Arm.POSITIVE:
        # a deviation on step t ends agreement for the rest of the test: mean_t (1 - p)^t ~ 1 - p (T + 1) / 2
        gpm = _Deviating(0.01 / (cfg.test_length + 1), np.random.default_rng([seed, 5]))
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


# --------------------------------------------------------------------------------------------- mechanisms

_PROBE_SET = "misspecified MIRT"  # always available (the SAT needs irtorch)


class _Shadow(Selector):
    """MFI's test, with the choices the shadowed policies would make in each of its states recorded (greedy
    policies: their choice depends on the state only). Comparing choices in the *same* states counts every
    disagreement once, instead of letting the first one change the rest of a test."""

    name = "mfi-shadowed"

    def __init__(self, policies: dict[str, Selector]):
        self.policies = policies
        self.choices: dict[str, list[np.ndarray]] = {k: [] for k in policies}

    def select(self, bank, state, rng):
        for k, policy in self.policies.items():
            self.choices[k].append(policy.select(bank, state, rng))
        return MFISelector().select(bank, state, rng)


@functools.lru_cache(maxsize=16)
def _choices(scale: Scale, seed: int) -> dict[str, np.ndarray]:
    """Items each selector would ask in the states of MFI's tests of the misspecified set's test examinees,
    (N, T) each: MFI, GPM and its A/A twin (own initialisation), the end-point policy and its A/A twin."""
    cfg = PRESETS[scale.value]
    seed = seed + FRESH_SEEDS  # the v3 claims' seed stream: the same trained policies
    prep = prepare(_PROBE_SET, cfg, seed)
    policies: dict[str, Selector] = {"mfi": MFISelector()}
    for name in ("gpm", "gpm-endpoint"):
        policies[name] = trained_policy(_PROBE_SET, cfg, seed, name)
        policies[f"{name} twin"] = _partner_policy(_PROBE_SET, cfg, seed, name)
    shadow = _Shadow(policies)
    run_cat(prep.bank, shadow, prep.x_test, prep.split.pool, cfg.test_length, np.random.default_rng(seed))
    return {k: np.stack(v, axis=1) for k, v in shadow.choices.items()}


def _disagreement(a: np.ndarray, b: np.ndarray) -> float:
    """Share of (examinee, step) states in which two selectors choose different items."""
    return float(np.mean(a != b))


def _prefix_disagreement(a: np.ndarray, b: np.ndarray) -> float:
    """Share of (examinee, step) pairs at which two selectors' tests have diverged: the first different item
    changes the rest of that examinee's test, so agreement is counted on common prefixes."""
    return float(1.0 - np.cumprod(a == b, axis=1).mean())


@mechanism(
    "policy-training",
    component="training the selection policy (GPM's learned, amortised selector; it starts uniform)",
    measures="% fewer items the trained policy needs than the untrained one to reach the untrained one's RMSE "
    "at T (misspecified bank)",
    above=10.0,
)
def policy_training(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    seed = seed + FRESH_SEEDS  # the v3 claims' seed stream
    curves = {
        "trained": selector_curves(_PROBE_SET, cfg, seed, "gpm"),
        "untrained": selector_curves(_PROBE_SET, cfg, seed, "gpm", epochs=0),
    }
    return {
        "policy-training": 100 * fewer_items(curves, "trained", "untrained", cfg.test_length),
        "updates": float(trained_policy(_PROBE_SET, cfg, seed, "gpm").n_updates_),
    }


@mechanism(
    "differs-from-mfi",
    component="what the trained policy learns beyond maximum Fisher information",
    measures="in the states of MFI's tests (misspecified bank): share of states where the trained GPM asks "
    "another item than MFI minus the share where it asks another item than its A/A twin (GPM retrained from "
    "its own initialisation); ~0 when GPM is MFI, and ~0 when its departures are retraining noise",
    above=0.05,
)
def differs_from_mfi(scale: Scale, seed: int) -> dict[str, float]:
    c = _choices(scale, seed)
    vs_mfi, vs_twin = _disagreement(c["gpm"], c["mfi"]), _disagreement(c["gpm"], c["gpm twin"])
    return {"differs-from-mfi": vs_mfi - vs_twin, "GPM vs MFI": vs_mfi, "GPM vs its A/A twin": vs_twin}


@mechanism(
    "path-supervision",
    component="the intermediate gradients of the inner path as supervision (GPM vs its end-point ablation)",
    measures="in the states of MFI's tests (misspecified bank): share of states where a path-trained and an "
    "end-point-trained policy of different initialisations ask different items (both crossings), minus the share "
    "where two policies of the same objective and different initialisations do (the A/A pairs): ~0 when the path "
    "changes the policy no more than retraining does",
    above=0.05,
)
def path_supervision(scale: Scale, seed: int) -> dict[str, float]:
    c = _choices(scale, seed)
    cross = 0.5 * (_disagreement(c["gpm"], c["gpm-endpoint twin"]) + _disagreement(c["gpm-endpoint"], c["gpm twin"]))
    aa = 0.5 * (_disagreement(c["gpm"], c["gpm twin"]) + _disagreement(c["gpm-endpoint"], c["gpm-endpoint twin"]))
    return {"path-supervision": cross - aa, "path vs end-point (crossed inits)": cross, "A/A pairs (mean)": aa}


# ------------------------------------------------------------------------------------------------ measures


#: The measure check's setting: the smoke bank, with enough test examinees and items for the saving to settle
#: (at 150 examinees and T = 8 one A/A pair alone scatters by +-10 points).
_CHECK = dataclasses.replace(PRESETS["smoke"], n_test=1000, test_length=12, max_length=16)


@functools.lru_cache(maxsize=4)
def _check_curves(seed: int) -> dict[str, Curves]:
    """Curves of MFI (the baseline), the oracle, MFI's A/A partner and random selection on the check's set."""
    cfg = _CHECK
    prep = prepare(_PROBE_SET, cfg, seed)
    theta_star, _ = estimate_ability(prep.bank, np.where(prep.split.pool, prep.x_test, np.nan), "map")
    selectors = {
        "baseline": MFISelector(),
        "truth": _OracleMFI(theta_star),
        "null": _JitteredMFI(np.random.default_rng([seed, _PARTNER])),
        "random": RandomSelector(),
    }
    rng = np.random.default_rng([seed, 13])
    return evaluate_selectors(prep.bank, selectors, prep.x_test, prep.split, cfg.max_length, rng, prep.theta_true)


def _saving_check(seed: int) -> dict[str, float]:
    """The claims' measure, % fewer items than a baseline (here MFI) at its RMSE@T, on the misspecified bank:
    the oracle (MFI at the full-pool estimate theta*) must save the most; MFI's A/A partner (near-ties broken
    on its own stream, the null) about nothing; random selection a lot less than nothing."""
    curves = dict(_check_curves(seed))
    base = curves.pop("baseline")
    rng = np.random.default_rng([seed, 14])
    return {k: 100 * saving_with_interval(c, base, _CHECK.test_length, rng, n_boot=1)[0] for k, c in curves.items()}


def _planted_check(seed: int) -> dict[str, float]:
    """|reading - planted| of the saving measure for a planted saving of 7.5 % (the positive controls' plant of
    the 5 % bars): MFI against itself handicapped by 7.5 % (the truth: exact up to the interpolation between
    lengths), MFI's A/A partner against the handicapped MFI (the null: the plant read through A/A noise, as
    the positive controls read it), and, as alternatives that must read worse, the partner against MFI
    unhandicapped (the plant missed) and against MFI handicapped twice as much."""
    c = _check_curves(seed)
    rng = np.random.default_rng([seed, 15])
    plant, T = PLANTED["generalizes"], _CHECK.test_length

    def error(ours: Curves, handicap: float) -> float:
        return abs(100 * saving_with_interval(ours, handicapped(c["baseline"], handicap), T, rng, n_boot=1)[0] - plant)

    return {"truth": error(c["baseline"], plant), "null": error(c["null"], plant),
            "plant missed": error(c["null"], 0.0), "twice the plant": error(c["null"], 2 * plant)}  # fmt: skip


MEASURES = [
    MeasureCheck("% fewer items than a baseline (MFI)", _saving_check, null_band=(-2.5, 2.5)),
    MeasureCheck(
        "|read - planted| of a planted 7.5 % saving", _planted_check, null_band=(0.0, 2.5), higher_is_better=False
    ),
]
MECHANISMS = [policy_training, differs_from_mfi, path_supervision]
CLAIMS = [fewer_questions, path_matching_matters, scales, generalizes, untrained_equals_mfi]
