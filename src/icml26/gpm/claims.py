"""Claims of GPM (ICML 2026): fewer questions at equal accuracy, path vs global cost, well-specified sanity."""

from __future__ import annotations

import time

import numpy as np

from icml26.claims import ClaimResult, Scale, claim
from icml26.gpm.config import PRESETS, SCALING_BATCH, SCALING_SIZES
from icml26.gpm.data import load_swedish_sat, random_bank, simulate, simulate_misspecified
from icml26.gpm.experiment import compare_selectors, fewer_items, plot_curves
from icml26.gpm.policy import GPMSelector
from icml26.gpm.selectors import BECATSelector, MFISelector, TestState


def _swedish_sat_or_reason():
    try:
        return load_swedish_sat(), ""
    except OSError as exc:
        return None, str(exc)


@claim(
    "gpm/fewer-questions-v1",
    statement="GPM reaches BECAT's and MFI's accuracy (RMSE vs the full-pool estimate) at T = 20 with fewer "
    "items: on average over misspecified synthetic data and the real Swedish SAT at least 10 % fewer (paper: "
    "about 20 %), and on no data set more than 10 % more",
    paper="Abstract ('the same estimation accuracy using, on average, 20% fewer questions'); Experiments",
    control="GPM's policy left untrained (epochs = 0): it is then its initialisation, the information anchor "
    "alone, i.e. MFI, so it cannot need fewer questions than MFI",
)
def fewer_questions(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    gpm_kwargs = {"epochs": 0} if control else None  # the one line the control changes
    T = cfg.test_length
    rng = np.random.default_rng(seed)
    datasets = {"misspecified MIRT": simulate_misspecified(cfg.n_train + cfg.n_test, cfg.n_items, rng)}
    sat, why = _swedish_sat_or_reason()
    if sat is not None:
        datasets["Swedish SAT"] = sat
    results, measured, baselines = {}, {}, {}
    for label, data in datasets.items():
        curves, timings = compare_selectors(data, cfg, seed, gpm_kwargs=gpm_kwargs)
        results[label] = curves
        key = "misspec" if label.startswith("misspec") else "sat"
        for base in ("becat", "mfi"):
            measured[f"{key} % fewer vs {base}@{T}"] = 100 * fewer_items(curves, "gpm", base, T)
        if "bobcat" in curves:
            baselines[f"{key} bobcat % fewer vs becat@{T}"] = 100 * fewer_items(curves, "bobcat", "becat", T)
        for name, c in curves.items():
            baselines[f"{key} RMSE@{T} {name}"] = c.rmse_star[T]
        measured[f"{key} GPM train s"] = timings["train_gpm_s"]
    avg = {base: float(np.mean([v for k, v in measured.items() if f"vs {base}" in k])) for base in ("becat", "mfi")}
    worst = min(v for k, v in measured.items() if "% fewer" in k)
    measured.update({f"average % fewer vs {base}@{T}": v for base, v in avg.items()})
    # The paper's statement is an average over data sets: holds when GPM saves at least half of the paper's
    # 20 % on average against each baseline, and is nowhere clearly worse (no data set below -10 %).
    holds = min(avg.values()) >= 10.0 and worst >= -10.0
    per_set = ", ".join(f"{k}={v:.1f}" for k, v in measured.items() if "% fewer" in k and "average" not in k)
    reason = "" if holds else f"savings (%): {per_set}"
    if why:
        reason = (reason + "; " if reason else "") + f"Swedish SAT skipped: {why}"
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"% fewer questions (average)": 20.0},
        baselines=baselines,
        reason=reason,
        figures={"accuracy-vs-length": plot_curves(results, T)},
    )


def _time_step(selector, bank, state, rng, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        selector.select(bank, state, rng)
        best = min(best, time.perf_counter() - start)
    return best


@claim(
    "gpm/path-vs-global-v1",
    statement="GPM's per-step selection cost is far below BECAT's global gradient alignment and grows "
    "linearly with the bank size (global alignment grows quadratically)",
    paper="Abstract ('global alignment on entire space is computationally expensive and difficult to scale'); "
    "scalability analysis",
    control="GPM replaced by the global BECAT it is compared with: its cost grows like the baseline's and the "
    "time ratio is ~1, so the claim must fail",
    by_construction="the quadratic 'global' selector is our own variant (ground set = every untested item); the "
    "published BECAT samples |S| + 5 items and scales linearly (slope 1.05 at small scale), so GPM only beats a "
    "straw man; a control that swaps in the published BECAT fails at small scale but not at smoke, where fixed "
    "overheads dominate — replaced by scales-v2 (issue 15)",
)
def path_vs_global(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    rng = np.random.default_rng(seed)
    sizes, B, t = SCALING_SIZES[scale.value], SCALING_BATCH[scale.value], 10
    times = {"gpm": [], "becat-global": [], "becat-sampled": [], "mfi": []}
    for J in sizes:
        bank = random_bank(J, rng)
        theta = rng.normal(size=B)
        x = bank.sample(theta, rng)
        asked = np.zeros((B, J), dtype=bool)
        asked[np.arange(B)[:, None], np.argsort(rng.random((B, J)), axis=1)[:, :t]] = True
        state = TestState(np.where(asked, x, np.nan), ~asked, theta, t)
        # The cost of a policy's forward pass does not depend on its weights: time an untrained one.
        gpm = GPMSelector(bank, epochs=0, test_length=t).fit(x[:2])
        global_becat = BECATSelector(extra=None)
        selectors = {"gpm": global_becat if control else gpm, "becat-global": global_becat,  # the control's line
                     "becat-sampled": BECATSelector(), "mfi": MFISelector()}  # fmt: skip
        for name, sel in selectors.items():
            times[name].append(_time_step(sel, bank, state, rng, repeats=3) / B)
    slopes = {name: float(np.polyfit(np.log(sizes), np.log(ts), 1)[0]) for name, ts in times.items()}
    ratio = times["becat-global"][-1] / times["gpm"][-1]
    # A log-log slope below 1.5 (the midpoint of linear and quadratic growth) counts as linear, above as quadratic.
    holds = slopes["gpm"] < 1.5 and slopes["becat-global"] > 1.5 and ratio > 10
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 4))
    ax = fig.subplots()
    for name, ts in times.items():
        ax.loglog(sizes, np.array(ts) * 1e3, "o-", label=f"{name} (slope {slopes[name]:.2f})")
    ax.set(xlabel="bank size J", ylabel="ms per examinee per selection step", title=f"selection cost at step t={t}")
    ax.legend(fontsize=8)
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"gpm log-log slope": slopes["gpm"], f"becat-global / gpm time at J={sizes[-1]}": ratio},
        paper={"global alignment (BECAT)": "computationally expensive and difficult to scale (abstract)"},
        baselines={
            "becat-global slope": slopes["becat-global"],
            "becat-sampled slope": slopes["becat-sampled"],
            "mfi slope": slopes["mfi"],
        },
        reason="" if holds else f"slopes {slopes}, time ratio {ratio:.1f}",
        figures={"cost-vs-bank-size": fig},
    )


@claim(
    "gpm/well-specified-sanity-v1",
    statement="on a correctly specified 2PL bank GPM is within a few percent of MFI (near-optimal there) "
    "and far ahead of random selection",
    paper="not in the paper: a sanity check implied by the method (MFI is asymptotically optimal for a known, "
    "correct IRT model)",
    control="GPM's policy untrained and without its information anchor (epochs = 0, beta = 0): an uninformed "
    "policy that asks the items in a fixed order, so it is no better than random",
    by_construction="an untrained GPM policy is exactly MFI (its information anchor is its initialisation), so "
    "the claim holds whether or not the path-matching training does anything (untrained: gpm / mfi = 1.000) "
    "— a v2 should judge trained against untrained GPM (no replacement filed yet)",
)
def well_specified_sanity(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    from dataclasses import replace

    cfg = replace(PRESETS[scale.value], selectors=("random", "mfi", "gpm"))
    gpm_kwargs = {"epochs": 0, "anchor": False} if control else None  # the one line the control changes
    T = cfg.test_length
    data = simulate(cfg.n_train + cfg.n_test, cfg.n_items, np.random.default_rng(seed), "2pl")
    curves, _ = compare_selectors(data, cfg, seed, use_true_bank=True, gpm_kwargs=gpm_kwargs)
    gpm, mfi, rnd = (curves[k].rmse_star[T] for k in ("gpm", "mfi", "random"))
    vs_mfi, vs_random = gpm / mfi, gpm / rnd
    holds = vs_mfi <= 1.05 and vs_random <= 0.8
    return ClaimResult(
        "holds" if holds else "fails",
        measured={f"RMSE@{T} gpm / mfi": vs_mfi, f"RMSE@{T} gpm / random": vs_random},
        paper={},
        baselines={f"RMSE@{T} mfi": mfi, f"RMSE@{T} random": rnd, f"RMSE@{T} gpm": gpm},
        reason="" if holds else f"gpm/mfi = {vs_mfi:.3f} (needs <= 1.05), gpm/random = {vs_random:.3f} (needs <= 0.8)",
        figures={"accuracy-vs-length": plot_curves({"well-specified 2PL": curves}, T)},
    )


CLAIMS = [fewer_questions, path_vs_global, well_specified_sanity]
