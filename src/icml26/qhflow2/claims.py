"""The paper's headline claims at laptop scale (see README "Claims").

- ``energy-error-is-second-order-v1``: noise on a converged H -> E error slope ~2, F error slope ~1, dE >= 0;
- ``equivariant-v1``: rotating the molecule rotates every predicted H block by its Wigner-D (float64);
- ``so2-matches-tp-cheaper-v3``: the SO(2) model reaches the tensor-product baseline's H error, fewer parameters,
  faster per step;
- ``hamiltonian-beats-mlip-on-energy-v3``: E from the predicted H at least 2x more accurate than the MLIP's direct
  E, same training frames;
- ``scaling-v3``: H error falls by more than 11 % with twice the width and with four times the data, and lower H
  error gives lower E error;
- ``so2-beats-tuned-tp-v3`` (issue 50): with the same lr x width tuning grid, chosen on validation frames, the SO(2)
  model's H error is > 11 % below the matched tensor-product baseline's, at no more parameters; v3: learning rates
  3e-3, 1e-2, 3e-2, 1e-1 (v2's grid chose its top rate 3e-2 for both models on every seed), the A/A replicate
  tuned again, fresh seeds;
- ``energy-vs-mace-v4`` / ``forces-match-mace-v4`` (issue 50): E from the predicted H at least 2x more accurate than
  MACE's (mace-torch, same frames, same tuning budget, MACE chosen on the validation error of the judged
  quantity), and F within 1.5x of MACE's; v3: the energy claim's negative is an A/A pair (the H route against its
  independently re-tuned replicate in MACE's place), the forces claim's the untrained Hamiltonian on its own seed
  stream (an A/A pair sits inside "within 1.5x"); v4: learning rates 3e-3, 1e-2, 3e-2, 1e-1, fresh seeds;
- ``scaling-tuned-v3`` (issue 50): H error > 11 % lower with twice the width and with four times the data, every
  model's learning rate tuned on the same four-point grid.

Every tuned claim reports, per model, where its chosen learning rate sits on the grid (``... tuned lr at grid edge``:
-1 the lowest rate, +1 the highest, 0 interior; :func:`grid_edge`), so a grid that does not bracket an optimum shows.

Contract v3: every claim runs three arms on the same seeds and measurement. The comparisons' negative controls are
A/A runs (the baseline's recipe trained again on its own seed stream, ``stream=1`` in :func:`_trained`; in the
tuned comparisons the whole tuning repeated on that stream) except where an A/A pair would satisfy the claim:
``forces-match-mace`` ("within 1.5x") takes the learned Hamiltonian away instead, ``equivariant`` uses the
non-equivariant MLP and ``energy-error-is-second-order`` a non-converged centre. Positive controls plant the
claimed effect at 1.25-1.5x the claim's bar on the A/A pair: the baseline's errors, parameter
count or step time inflated by a known factor (``inflate=`` of the evaluators). The first three comparison claims
(``so2-matches-tp-cheaper``, ``hamiltonian-beats-mlip-on-energy``, ``scaling``) are v3:
their bars were set in v2 after v1's seeds had been seen, so v3 keeps the bars and is judged on a fresh seed stream
(:data:`FRESH_SEEDS`). :data:`MECHANISMS` probes the SO(2) convolutions' |m| >= 1 mixing (ablated), the learning of
the geometry -> H map (against the untrained model) and the energy's stationarity at the trained model's own H
error (against the non-converged core Hamiltonian); :data:`MEASURES` checks the claims' measures on exact, null and
planted inputs.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from icml26.claims import Arm, ClaimResult, Interval, MeasureCheck, Scale, claim, mechanism
from icml26.qhflow2.config import PRESETS
from icml26.qhflow2.data import cached_dataset, get_molecule, label, make_mf, make_mol
from icml26.qhflow2.energy import HamiltonianEvaluator, noise_response
from icml26.qhflow2.model import build_model, n_params, wigner_D64
from icml26.qhflow2.train import (
    TrainConfig,
    evaluate_h_model,
    evaluate_mlip,
    layout_for,
    predict_h,
    time_per_step,
    train_h_model,
    train_mlip,
)


def _figure():
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(5.5, 3.8))


def _slope(x, y) -> float:
    return float(np.polyfit(np.log10(x), np.log10(y), 1)[0])


#: Seed offset of a twin's training stream: the same recipe, another initialisation and minibatch order.
_STREAM = 10_000
#: The v3 comparison claims and the probes run on seeds ``seed + FRESH_SEEDS`` (another split, initialisation
#: and minibatch order): their bars were fixed after the earlier versions' seeds 0-4 had been seen.
FRESH_SEEDS = 1000


@functools.lru_cache(maxsize=8)
def _noise_centre(scale_value: str, seed: int, centre: str):
    """(Z, R, H0) of the noise claim: ``converged`` (the SCF Hamiltonian of the preset's molecule), ``hcore`` (the
    core Hamiltonian, not converged) or ``displaced`` (the SCF Hamiltonian of the molecule with every atom moved
    by 0.05 A Gaussian noise drawn from the seed: another converged density)."""
    cfg = PRESETS[scale_value]
    g = get_molecule(cfg.noise_molecule)
    R = g.R
    if centre == "displaced":
        R = R + 0.05 * np.random.default_rng([seed, 17]).standard_normal(R.shape)
    if centre == "hcore":
        return g.Z, R, make_mf(make_mol(g.Z, R, cfg.noise_basis), cfg.noise_xc).get_hcore()
    return g.Z, R, label(g.Z, R, cfg.noise_basis, cfg.noise_xc)["H"]


@functools.lru_cache(maxsize=8)
def _noise(scale_value: str, seed: int, centre: str):
    """Noise response around a centre (see :func:`_noise_centre`): sigmas, |dE| and F error per sigma, min dE."""
    cfg = PRESETS[scale_value]
    Z, R, H0 = _noise_centre(scale_value, seed, centre)
    sig = np.array(cfg.noise_sigmas)
    stream = {"converged": 0, "hcore": 0, "displaced": 1}[centre]  # the positive arm draws its own noise
    res = noise_response(Z, R, H0, basis=cfg.noise_basis, xc=cfg.noise_xc, sigmas=sig, draws=cfg.noise_draws,
                         rng=np.random.default_rng(seed + _STREAM * stream))  # fmt: skip
    dE, dF = res["dE"], res["dF"]
    return sig, np.abs(dE).mean(1), dF.mean(1), float(dE.min())


@claim(
    "qhflow2/energy-error-is-second-order-v1",
    statement="Symmetric Gaussian noise of size sigma added to the converged Hamiltonian of water gives an energy "
    "error (E[D(H + noise)] - E[D(H)]) growing with log-log slope in [1.7, 2.3] and a force error (PySCF gradient at "
    "the perturbed orbitals) with slope in [0.7, 1.3], and dE >= 0 for every draw (variational)",
    paper="abstract: up to 20x lower energy MAE at NequIP-level forces - the mechanism: the SCF energy is "
    "stationary at the converged density, the non-SCF forces are not",
    control="the same noise around a NON-converged Hamiltonian (the core Hamiltonian, the usual initial guess): the "
    "energy is not stationary there, its error is first order (slope ~1) and of either sign, so the claim must fail",
    positive="a known-good centre: the converged Hamiltonian of the molecule displaced by 0.05 A per atom (another "
    "SCF solution, where the variational principle holds as well), noise from its own seed stream",
    mechanisms=("energy-stationarity",),
    judge=[
        Interval("log-log slope of |dE|", above=1.7, below=2.3),
        Interval("log-log slope of F error", above=0.7, below=1.3),
        Interval("min dE over draws [meV]", above=-1e-6),
    ],
    by_construction="the variational principle, not a finding: the SCF energy functional is stationary and minimal at "
    "the converged density, so dE >= 0 and dE = O(sigma^2) are theorems, and F = O(sigma) follows from the missing "
    "orbital-response term; what it checks is that the benchmark pipeline (energy.HamiltonianEvaluator, the code "
    "that scores every model) realises them, and how large the constants are",
)
def energy_error_is_second_order(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    # the one line the arms change: the centre of the noise (converged, not converged, another converged density)
    centre = {Arm.CLAIM: "converged", Arm.NEGATIVE: "hcore", Arm.POSITIVE: "displaced"}[arm]
    sig, mE, mF, minE = _noise(scale.value, seed, centre)
    sE, sF = _slope(sig, mE), _slope(sig, mF)
    holds = 1.7 < sE < 2.3 and 0.7 < sF < 1.3 and minE > -1e-6
    fig, ax = _figure()
    ax.loglog(sig, mE, "o-", label=f"|dE| [meV], slope {sE:.2f}")
    ax.loglog(sig, mF, "s-", label=f"F MAE [meV/A], slope {sF:.2f}")
    ax.set_xlabel("noise sigma on H [Ha]")
    ax.set_title(f"{cfg.noise_molecule} {cfg.noise_xc}/{cfg.noise_basis}; centre: {centre}")
    ax.legend()
    measured = {"log-log slope of |dE|": sE, "log-log slope of F error": sF, "min dE over draws [meV]": minE}
    for s, e, f in zip(sig, mE, mF, strict=True):
        measured[f"|dE| at sigma={s:g} [meV]"] = float(e)
        measured[f"F MAE at sigma={s:g} [meV/A]"] = float(f)
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"energy MAE vs MLIPs": "up to 20x lower (abstract)"},
        elsewhere={
            "|dE| at sigma=1e-3, water B3LYP/def2-SVP [prototype]": 2.2,
            "F MAE at sigma=1e-3 [meV/A] [prototype]": 22.9,
        },
        reason="" if holds else f"slopes E {sE:.2f}, F {sF:.2f}; min dE {minE:.2e} meV",
        figures={"noise-loglog": fig},
    )


# ----------------------------------------------------------------------------------------------- shared training
@functools.lru_cache(maxsize=4)
def _dataset(scale_value: str):
    cfg = PRESETS[scale_value]
    return cached_dataset(cfg.molecule, cfg.n_train + cfg.n_test, basis=cfg.basis, xc=cfg.xc,
                          temperature=cfg.temperature, seed=0)  # fmt: skip


def _split(scale_value: str, seed: int):
    cfg = PRESETS[scale_value]
    ds = _dataset(scale_value)
    perm = np.random.default_rng(seed).permutation(len(ds))
    return ds.subset(perm[: cfg.n_train]), ds.subset(perm[cfg.n_train : cfg.n_train + cfg.n_test])


@functools.lru_cache(maxsize=64)  # the runner does every seed, then every control seed
def _trained(scale_value: str, seed: int, kind: str, steps: int | None = None, stream: int = 0):
    """A model of ``kind`` trained on the seed's split; ``stream`` > 0 is an independent twin of the same recipe
    (initialisation and minibatches from seed + 10,000 x stream)."""
    cfg = PRESETS[scale_value]
    train, _ = _split(scale_value, seed)
    tc = TrainConfig(steps=cfg.steps if steps is None else steps, batch=cfg.batch, lr=cfg.lr)
    kw = {"channels": cfg.channels, "lmax": cfg.lmax, "layers": cfg.layers}
    train_seed = seed + _STREAM * stream
    if kind == "mlip":
        return train_mlip(train, tc, train_seed, **kw)[0]
    if kind == "mlp":
        kw = {}
    return train_h_model(kind, train, tc, train_seed, **kw)[0]


@claim(
    "qhflow2/equivariant-v1",
    statement="Rotating the molecule rotates every predicted Hamiltonian block H_ij by its Wigner-D matrices "
    "(D_i H_ij D_j^T per orbital shell) to max |error| < 1e-6 Ha, float64, trained SO(2) model, 3 random rotations",
    paper="SO(2)-equivariant backbone (eSCN convolutions in the edge frame)",
    control="the non-equivariant MLP baseline in the SO(2) model's place: its blocks do not co-rotate",
    positive="a known-equivariant model: the SO(2) model freshly initialised on its own seed stream, untrained "
    "(equivariance is a property of the architecture, so it must co-rotate as well)",
    mechanisms=("so2-reduction",),
    judge=Interval("log10 max block error [Ha]", below=-6.0),
    by_construction="an implementation check of the architecture, not a finding: equivariance holds whenever the "
    "edge-frame rotations and the per-|m| mixing are right (its control shows the measure sees a model that is not)",
)
def equivariant(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    import copy

    torch.set_num_threads(1)
    _, test = _split(scale.value, seed)
    if arm is Arm.POSITIVE:  # an untrained SO(2) model of its own initialisation
        trained = _trained(scale.value, seed, "so2", 0, stream=1)
    else:  # the negative control's one line: the MLP in the SO(2) model's place
        trained = _trained(scale.value, seed, "mlp" if arm is Arm.NEGATIVE else "so2")
    model = copy.deepcopy(trained).double()
    layout = layout_for(test)
    pos = torch.tensor(test.R[:3])
    gen = torch.Generator().manual_seed(seed)
    worst = 0.0
    with torch.no_grad():
        out = model(test.Z, pos)
        for _ in range(3):
            R = _rand_rot(gen)
            D = torch.block_diag(*[wigner_D64(l, R) for l in layout.slot_ls])
            rotated = model(test.Z, pos @ R.T)
            worst = max(worst, float((rotated - D @ out @ D.T).abs().max()))
    scale_h = float(out.abs().max())
    val = float(np.log10(worst + 1e-300))
    holds = val < -6.0
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"log10 max block error [Ha]": val, "max |H| [Ha]": scale_h},
        paper={"backbone": "SO(2)-equivariant (eSCN)"},
        reason="" if holds else f"blocks of rotated molecules differ by up to {worst:.2e} Ha",
    )


def _rand_rot(gen: torch.Generator) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    return q if torch.det(q) > 0 else -q


@claim(
    "qhflow2/so2-matches-tp-cheaper-v3",
    statement="Trained with the same data, steps, width and l_max, the SO(2) model's test H MAE is within 1.25x of "
    "the e3nn tensor-product (QHNet-style) baseline's, with < 0.7x its parameters at l_max = 4, while one training "
    "step at l_max = 4 costs < 0.7x the baseline's time (median of interleaved paired ratios; every l_max reported); "
    "bars fixed from v2's seeds, judged on fresh seeds",
    paper="abstract: 40 % lower Hamiltonian error than the previous best model with fewer parameters; eSCN: "
    "O(L^6) -> O(L^3)",
    control="A/A: the SO(2) convolutions replaced by the full tensor-product model trained and initialised on its own "
    "seed stream: H MAE and step-time ratios scatter around 1 and the parameter ratio is exactly 1, so the claim "
    "must fail (on the parameter count whatever the timing noise)",
    positive="that A/A pair with the claimed savings planted at 1.33x the bars: the baseline twin's parameter count "
    "and step times inflated by 1 / 0.6 (ratios 0.6 against the bars' 0.7: 40 % cheaper where 30 % is claimed), "
    "its H error untouched (the claimed 'matches': ratio ~1 against 1.25)",
    mechanisms=("so2-reduction", "hamiltonian-learning"),
    judge=[
        Interval("H MAE SO(2) / TP", below=1.25),
        Interval("params SO(2) / TP, l_max 4", below=0.7, discrete=True),  # a count ratio: exactly 1 in an A/A run
        Interval("step time SO(2) / TP, l_max 4", below=0.7),
    ],
)
def so2_matches_tp_cheaper(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    seed = seed + FRESH_SEEDS  # v3: a fresh seed stream
    # the arms' lines: "ours" is SO(2) (claim) or a tensor-product twin of its own seed stream (both controls);
    # the positive control inflates the baseline's parameter count and step time by 1 / COST_PLANT
    ours, twin = ("so2", 0) if arm is Arm.CLAIM else ("tp", 1)
    cost = COST_PLANT if arm is Arm.POSITIVE else 1.0
    _, test = _split(scale.value, seed)
    layout = layout_for(test)
    ours_model = _trained(scale.value, seed, ours, stream=twin)
    base_model = _trained(scale.value, seed, "tp")
    mae = {}
    for name, model in (("ours", ours_model), ("tp", base_model)):
        H = predict_h(model, layout, test.Z, test.R)
        mae[name] = float(np.abs(H - test.H).mean() * 1e6)
    g = get_molecule(cfg.timing_molecule)
    gen = np.random.default_rng(seed)
    pos = torch.tensor(g.R[None] + 0.02 * gen.standard_normal((cfg.timing_batch, *g.R.shape)), dtype=torch.float32)
    measured = {"H MAE SO(2) / TP": mae["ours"] / mae["tp"]}
    baselines = {"H MAE TP [uHa]": mae["tp"]}
    times = {}

    def untrained(kind: str, L: int, stream: int) -> torch.nn.Module:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + _STREAM * stream)
            return build_model(kind, layout.slot_ls, len(g.Z), channels=cfg.channels, lmax=L, layers=cfg.layers)

    for L in cfg.timing_lmax:
        models = {"ours": untrained(ours, L, twin), "tp": untrained("tp", L, 0)}
        t = {k: [] for k in models}
        for _ in range(cfg.timing_repeats):  # interleaved, so shared-core load hits both alike
            for k, m in models.items():
                t[k].append(time_per_step(m, g.Z, pos, repeats=1) / (cost if k == "tp" else 1.0))
        times[L] = (float(np.median(t["ours"])), float(np.median(t["tp"])))
        # the median of per-repeat ratios: the two steps of a repeat run back to back, so load bursts cancel
        paired = np.array(t["ours"]) / np.array(t["tp"])
        measured[f"step time SO(2) / TP, l_max {L}"] = float(np.median(paired))
        measured[f"params SO(2) / TP, l_max {L}"] = n_params(models["ours"]) / (n_params(models["tp"]) / cost)
        baselines[f"step time TP, l_max {L} [ms]"] = 1e3 * times[L][1]
    measured["H MAE SO(2) [uHa]"] = mae["ours"]
    r_mae, r_t = measured["H MAE SO(2) / TP"], measured["step time SO(2) / TP, l_max 4"]
    r_p = measured["params SO(2) / TP, l_max 4"]
    holds = r_mae < 1.25 and r_p < 0.7 and r_t < 0.7
    fig, ax = _figure()
    Ls = list(times)
    ax.semilogy(Ls, [1e3 * times[L][0] for L in Ls], "o-", label="SO(2)" if arm is Arm.CLAIM else f"TP ({arm})")
    ax.semilogy(Ls, [1e3 * times[L][1] for L in Ls], "s-", label="e3nn tensor product")
    ax.set_xlabel("l_max")
    ax.set_ylabel(f"train step, {cfg.timing_molecule} x{cfg.timing_batch} [ms]")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines=baselines,
        paper={"H error vs previous best": "-40 % with fewer parameters (abstract)"},
        reason="" if holds else f"H MAE ratio {r_mae:.2f}, params ratio {r_p:.2f}, step ratio {r_t:.2f} at l_max 4",
        figures={"step-time-vs-lmax": fig},
    )


#: The cost ratio ``so2-matches-tp-cheaper``'s positive control plants: the baseline twin's parameter count and
#: step time inflated by 1 / 0.6, so 40 % cheaper (1.33x the claimed 30 %, ratio 0.6 against the bars' 0.7).
COST_PLANT = 0.6

#: The MLIP's error inflation in ``hamiltonian-beats-mlip-on-energy``'s positive control: a 10^0.4 = 2.5x lower
#: E MAE (log10 -0.4, 1.33x the claim's bar of -0.3 in log) planted on an A/A pair of MLIPs.
MLIP_HANDICAP = 10**0.4


@claim(
    "qhflow2/hamiltonian-beats-mlip-on-energy-v3",
    statement="Trained on the same frames (energies and forces for the MLIP, Hamiltonians for the SO(2) model), the "
    "energy computed from the predicted Hamiltonian (PySCF energy_tot at its density) has a test MAE at least 2x "
    "lower than the MLIP's direct energy: log10(E MAE H-model / E MAE MLIP) < -0.3, paired over seeds (force ratio "
    "reported); bar fixed from v1's seeds, judged on fresh seeds",
    paper="abstract: up to 20x lower energy MAE than MLIPs (MD17/rMD17, QH9 vs MACE) at NequIP-level forces",
    control="A/A: the Hamiltonian route removed, a second MLIP trained on its own seed stream in the H model's place: "
    "the log ratio scatters around 0",
    positive="that A/A pair with the reference MLIP's energy and force errors inflated 10^0.4 = 2.5x (e -> e_true + "
    "2.5 (e - e_true)): a 2.5x lower E MAE (log10 -0.4, 1.33x the bar) planted",
    mechanisms=("hamiltonian-learning", "energy-stationarity"),
    judge=Interval("log10 E MAE ratio (H model / MLIP)", below=-0.3),
)
def hamiltonian_beats_mlip(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    torch.set_num_threads(1)
    seed = seed + FRESH_SEEDS  # v3: a fresh seed stream
    _, test = _split(scale.value, seed)
    baselines = {}
    if arm is Arm.CLAIM:
        h = evaluate_h_model(_trained(scale.value, seed, "so2"), test)
        baselines.update({f"H model {k}": v for k, v in h.items() if k not in ("E MAE [meV]", "F MAE [meV/A]")})
    else:  # the arms' one line: an MLIP twin of its own seed stream in the H model's place
        h = evaluate_mlip(_trained(scale.value, seed, "mlip", stream=1), test)
    inflate = MLIP_HANDICAP if arm is Arm.POSITIVE else 1.0  # the positive control's one line
    m = evaluate_mlip(_trained(scale.value, seed, "mlip"), test, inflate=inflate)
    baselines.update({f"MLIP {k}": v for k, v in m.items()})
    r_e = float(np.log10(h["E MAE [meV]"] / m["E MAE [meV]"]))
    r_f = float(h["F MAE [meV/A]"] / m["F MAE [meV/A]"])
    holds = r_e < -0.3
    label = {Arm.CLAIM: "from predicted H (SO(2))", Arm.NEGATIVE: "MLIP twin", Arm.POSITIVE: "MLIP twin"}[arm]
    fig, ax = _figure()
    x = np.arange(2)
    ax.bar(x - 0.2, [h["E MAE [meV]"], h["F MAE [meV/A]"]], 0.4, label=label)
    ax.bar(x + 0.2, [m["E MAE [meV]"], m["F MAE [meV/A]"]], 0.4, label="MLIP direct")
    ax.set_xticks(x, ["E MAE [meV]", "F MAE [meV/A]"])
    ax.set_yscale("log")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "log10 E MAE ratio (H model / MLIP)": r_e,
            "F MAE ratio (H model / MLIP)": r_f,
            "H model E MAE [meV]": h["E MAE [meV]"],
            "H model F MAE [meV/A]": h["F MAE [meV/A]"],
        },
        baselines=baselines,
        paper={
            "energy MAE, Hamiltonian model vs MLIP": "up to 20x lower (abstract)",
            "forces": "NequIP-level (abstract)",
        },
        reason="" if holds else f"E MAE {label} {h['E MAE [meV]']:.3g} meV vs MLIP {m['E MAE [meV]']:.3g} meV",
        figures={"E-F-bars": fig},
    )


def _spearman(a, b) -> float:
    """Spearman rank correlation of two short vectors (no ties expected: real-valued errors)."""
    ra, rb = np.argsort(np.argsort(a)).astype(float), np.argsort(np.argsort(b)).astype(float)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / np.sqrt((ra**2).sum() * (rb**2).sum()))


@functools.lru_cache(maxsize=32)
def _scaling_model(scale_value: str, seed: int, channels: int, frames: int, stream: int = 0):
    """The SO(2) model of width ``channels`` trained on the first ``frames`` train frames (``stream`` > 0: an
    independent twin, initialisation and minibatches from seed + 10,000 x stream)."""
    cfg = PRESETS[scale_value]
    train, _ = _split(scale_value, seed)
    train = train.subset(np.arange(frames))
    tc = TrainConfig(steps=cfg.steps, batch=cfg.batch, lr=cfg.lr)
    return train_h_model("so2", train, tc, seed + _STREAM * stream, channels=channels, lmax=cfg.lmax,
                         layers=cfg.layers)[0]  # fmt: skip


@functools.lru_cache(maxsize=64)
def _scaling_errors(scale_value: str, seed: int, channels: int, frames: int, stream: int = 0,
                    inflate: float = 1.0) -> dict[str, float]:  # fmt: skip
    """Test H / E / F MAE of :func:`_scaling_model`, its H error inflated by ``inflate`` before E / F are computed."""
    _, test = _split(scale_value, seed)
    return evaluate_h_model(_scaling_model(scale_value, seed, channels, frames, stream), test, inflate=inflate)


#: The scaling planted by ``scaling``'s positive control: each missing factor (half the width, a quarter of the
#: data) inflates the H error by 10^0.065 (log10 ratio -0.065, 1.3x the claim's bar of -0.05).
SCALING_PLANT = 0.065


@claim(
    "qhflow2/scaling-v3",
    statement="Trained with the same steps, the SO(2) model's test H MAE falls by more than 11 % with twice the "
    "width (16 vs 8 channels: log10 ratio big / small < -0.05, averaged over both data sizes) and with four times "
    "the training set (100 vs 25 frames: log10 ratio more / less < -0.05, averaged over both widths), and across "
    "the 4 trained models a lower H MAE goes with a lower E MAE from the predicted H (Spearman > 0; F reported), "
    "paired over seeds; bars fixed from v1's seeds, judged on fresh seeds",
    paper="consistent scaling behavior with respect to model capacity and data; improvements in Hamiltonian accuracy "
    "translate into more accurate energy and force computations (abstract)",
    control="A/A: all 4 models at the small width and data size, each trained on its own seed stream in its slot: "
    "no width or data effect, the two ratios scatter around 0",
    positive="the same 4 A/A models with the scaling planted: each missing factor (half the width, a quarter of the "
    "data) inflates a model's H error by 10^0.065 before E and F are computed from it (log10 ratios -0.065, 1.3x "
    "the bar; E errors follow through PySCF)",
    mechanisms=("hamiltonian-learning",),
    judge=[
        Interval("log10 H MAE ratio, big / small model", below=-0.05),
        Interval("log10 H MAE ratio, more / less data", below=-0.05),
        Interval("Spearman(H MAE, E MAE), 4 models", above=0.0, discrete=True),  # 4 ranks: 11 possible values
    ],
)
def scaling(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    seed = seed + FRESH_SEEDS  # v3: a fresh seed stream
    (c_lo, c_hi), (f_lo, f_hi) = cfg.scaling_channels, cfg.scaling_frames
    slots = [(c, f) for c in (c_lo, c_hi) for f in (f_lo, f_hi)]
    if arm is Arm.CLAIM:
        runs = {(c, f): _scaling_errors(scale.value, seed, c, f) for c, f in slots}
    else:  # the controls: every slot an A/A twin of the small model; the positive plants the scaling on its H error
        k = 10**SCALING_PLANT if arm is Arm.POSITIVE else 1.0
        runs = {
            (c, f): _scaling_errors(scale.value, seed, c_lo, f_lo, i, k ** ((c == c_lo) + (f == f_lo)))
            for i, (c, f) in enumerate(slots)
        }
    h = {k: v["H MAE [uHa]"] for k, v in runs.items()}
    r_model = float(np.mean([np.log10(h[(c_hi, f)] / h[(c_lo, f)]) for f in (f_lo, f_hi)]))
    r_data = float(np.mean([np.log10(h[(c, f_hi)] / h[(c, f_lo)]) for c in (c_lo, c_hi)]))
    hv = [h[k] for k in slots]
    rho_e = _spearman(hv, [runs[k]["E MAE [meV]"] for k in slots])
    rho_f = _spearman(hv, [runs[k]["F MAE [meV/A]"] for k in slots])
    holds = r_model < -0.05 and r_data < -0.05 and rho_e > 0
    measured = {
        "log10 H MAE ratio, big / small model": r_model,
        "log10 H MAE ratio, more / less data": r_data,
        "Spearman(H MAE, E MAE), 4 models": rho_e,
        "Spearman(H MAE, F MAE), 4 models": rho_f,
    }
    for (c, f), v in runs.items():
        for name in ("H MAE [uHa]", "E MAE [meV]", "F MAE [meV/A]"):
            measured[f"{name}, {c} ch, {f} frames"] = v[name]
    fig, ax = _figure()
    for c, mark in ((c_lo, "o"), (c_hi, "s")):
        ax.loglog([h[(c, f)] for f in (f_lo, f_hi)], [runs[(c, f)]["E MAE [meV]"] for f in (f_lo, f_hi)],
                  mark + "-", label=f"{c} channels ({f_lo} -> {f_hi} frames)")  # fmt: skip
    ax.set_xlabel("test H MAE [uHa]")
    ax.set_ylabel("test E MAE from predicted H [meV]")
    ax.set_title({Arm.CLAIM: "trained", Arm.NEGATIVE: "A/A twins (control)", Arm.POSITIVE: "planted scaling"}[arm])
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"scaling": "H error falls with model and data size; E/F errors follow H error (scaling study)"},
        reason="" if holds else f"model ratio {r_model:.2f}, data ratio {r_data:.2f}, Spearman H-E {rho_e:.2f}",
        figures={"E-vs-H-error": fig},
    )


# ---------------------------------------------------------------------------------------------------------
# v2 of the comparisons (issue 50): every model tuned on the same grid, MACE as the MLIP peer
# ---------------------------------------------------------------------------------------------------------
#: Seed offset of v1 of the tuned comparison (``so2-beats-tuned-tp-v1``, judged on seeds 2000-2002; the recipe
#: benchmark trains on the same splits).
TUNED_SEEDS = 2000
#: Seed offset shared by ``so2-beats-tuned-tp-v3`` and the MACE claims' v4 (fresh: earlier versions were judged on
#: seeds 2000-2002, 3000-3002 (two-point grid), 5000-5002 (three-point grid, ``so2-beats-tuned-tp-v2``, MACE v3) and
#: 6000-6002 (``scaling-tuned-v2``)). One stream for the three, so the SO(2) model judged against the tuned TP
#: baseline is the one whose Hamiltonians are judged against MACE.
COMPARISON_SEEDS = 7000
#: Seed offset of the replicates' streams: stream k trains every grid point from seed + 10,000 k; the untrained
#: Hamiltonian of ``forces-match-mace``'s negative is initialised from stream :data:`UNTRAINED_STREAM`.
UNTRAINED_STREAM = 2


@functools.lru_cache(maxsize=2)
def _validation(scale_value: str):
    """The tuning frames: ``n_val`` conformations sampled with seed 1 (the claims' data set uses seed 0)."""
    cfg = PRESETS[scale_value]
    return cached_dataset(cfg.molecule, cfg.n_val, basis=cfg.basis, xc=cfg.xc, temperature=cfg.temperature, seed=1)


@functools.lru_cache(maxsize=160)
def _grid_model(scale_value: str, seed: int, kind: str, lr: float, channels: int, stream: int = 0):
    """One grid point: ``kind`` (``so2``, ``tp`` = the matched tensor-product baseline, ``mace``) trained on the
    seed's train split at learning rate ``lr`` and width ``channels`` for the preset's steps."""
    cfg = PRESETS[scale_value]
    train, _ = _split(scale_value, seed)
    train_seed = seed + _STREAM * stream
    if kind == "mace":
        from icml26.qhflow2.mace_peer import MACEConfig, train_mace

        return train_mace(train, cfg.steps, cfg.batch, lr, train_seed, MACEConfig(channels=channels))[0]
    tc = TrainConfig(steps=cfg.steps, batch=cfg.batch, lr=lr)
    kw = {"channels": channels, "lmax": cfg.lmax, "layers": cfg.layers} | ({"matched": True} if kind == "tp" else {})
    return train_h_model(kind, train, tc, train_seed, **kw)[0]


def _grid_params(scale_value: str, kind: str, channels: int) -> int:
    """Parameter count of a Hamiltonian model of ``kind`` at width ``channels`` (built, not trained)."""
    cfg = PRESETS[scale_value]
    val = _validation(scale_value)
    kw = {"channels": channels, "lmax": cfg.lmax, "layers": cfg.layers} | ({"matched": True} if kind == "tp" else {})
    with torch.random.fork_rng(devices=[]):
        return n_params(build_model(kind, layout_for(val).slot_ls, len(val.Z), **kw))


#: What tuning minimises on the validation frames, per model kind and claim: a Hamiltonian model its H MAE; MACE
#: the error of the quantity its claim judges (``E``: E MAE [meV] for the energy claim, ``F``: F MAE [meV/A] for the
#: forces claim), so the peer is tuned for exactly what it is compared on.
SCORES = {"H": "H MAE [uHa]", "E": "E MAE [meV]", "F": "F MAE [meV/A]"}


def _val_score(model, kind: str, val, score: str) -> float:
    """Validation error that tuning minimises (see :data:`SCORES`)."""
    if kind == "mace":
        from icml26.qhflow2.mace_peer import evaluate_mace

        return evaluate_mace(model, val)[SCORES[score]]
    return _test_mae(model, val)


def grid_edge(lr: float, lrs) -> int:
    """Where a chosen learning rate sits on its grid: -1 the lowest rate, +1 the highest, 0 interior (a chosen edge
    means the grid may not bracket the optimum; a one-point grid is both edges and reads +1)."""
    if lr == max(lrs):
        return 1
    return -1 if lr == min(lrs) else 0


def _grid_search(lrs, widths, score_of, over_budget=lambda ch: False):
    """The tuning loop of :func:`_tuned` and :func:`_scaling_tuned`: ``score_of(lr, width)`` is the validation score
    of one grid point (``widths`` ``(None,)``: the learning rate alone is tuned); points with ``over_budget(width)``
    are not trained and score inf. Returns the best (score, lr, width) and the table 'lr, width' -> score; refuses
    a grid none of whose points is within budget."""
    table, best = {}, None
    for lr in lrs:
        for ch in widths:
            score = float("inf") if over_budget(ch) else score_of(lr, ch)
            table[f"lr {lr:g}" + ("" if ch is None else f", {ch} ch")] = score
            if best is None or score < best[0]:
                best = (score, lr, ch)
    if not np.isfinite(best[0]):
        raise ValueError(f"no grid point within the parameter budget (widths {tuple(widths)}): nothing to tune")
    return best, table


@functools.lru_cache(maxsize=64)
def _tuned(scale_value: str, seed: int, kind: str, max_params: int | None = None, stream: int = 0,
           score: str = "H"):  # fmt: skip
    """(lr, channels, validation table) of ``kind`` tuned on the preset's lr x width grid (every model the same
    grid, the same steps), minimising ``score`` (:data:`SCORES`; ``H`` for a Hamiltonian model); ``max_params``
    drops grid points with more parameters (the claims' 'at <= its parameters'); ``stream`` > 0 tunes an
    independent replicate (every grid point trained on its own seed stream). The table maps 'lr, channels' to the
    validation score, inf where the point was dropped."""
    if (kind == "mace") == (score == "H"):
        raise ValueError(f"score {score!r} does not apply to {kind}: H for Hamiltonian models, E or F for mace")
    cfg, val = PRESETS[scale_value], _validation(scale_value)

    def score_of(lr: float, ch: int) -> float:
        return _val_score(_grid_model(scale_value, seed, kind, lr, ch, stream), kind, val, score)

    def over_budget(ch: int) -> bool:
        return max_params is not None and _grid_params(scale_value, kind, ch) > max_params

    (_, lr, ch), table = _grid_search(cfg.tune_lrs, cfg.tune_channels, score_of, over_budget)
    return lr, ch, table


def _tuned_model(scale_value: str, seed: int, kind: str, stream: int = 0, max_params: int | None = None,
                 retune: bool = False, score: str = "H"):  # fmt: skip
    """The tuned model of ``kind``; ``stream`` > 0 its A/A replicate: the chosen setting trained again on its own
    seed stream (another initialisation and minibatch order), or with ``retune`` the whole tuning repeated on that
    stream (every grid point retrained, the best on the validation frames chosen again)."""
    lr, ch, _ = _tuned(scale_value, seed, kind, max_params, stream if retune else 0, score)
    return _grid_model(scale_value, seed, kind, lr, ch, stream)


def _tuned_pair(scale_value: str, seed: int):
    """The tuned matched TP baseline and the tuned SO(2) model restricted to at most the TP's parameters."""
    tp = _tuned_model(scale_value, seed, "tp")
    return _tuned_model(scale_value, seed, "so2", max_params=n_params(tp)), tp


def _breakdown_measures(prefix: str, model) -> dict[str, float]:
    from icml26.qhflow2.model import param_breakdown

    return {f"{prefix} params: {k}": float(v) for k, v in param_breakdown(model).items() if v}


#: The H-error gain ``so2-beats-tuned-tp``'s positive control plants on the A/A pair of tuned TP models: the
#: reference's H error inflated by 10^0.07 (log10 ratio -0.07, 1.4x the bar of -0.05).
TUNED_PLANT = 0.07


@claim(
    "qhflow2/so2-beats-tuned-tp-v3",
    statement="With the same tuning budget (learning rate x width grid, the preset's steps, chosen on validation "
    "frames sampled apart from train and test) the SO(2) model's test H MAE is lower than that of the tensor-product "
    "baseline given the SO(2) model's per-l normalisation and node-conditioned radial MLPs: log10 ratio SO(2) / TP < "
    "-0.05 (> 11 % lower), the SO(2) grid restricted to at most the tuned TP's parameters; paired over seeds; v3: "
    "the grid's learning rates 3e-3, 1e-2, 3e-2, 1e-1 (v2's three-point grid chose its top rate for both models on "
    "every seed), the A/A replicate tuned again, fresh seeds",
    paper="abstract: 40 % lower Hamiltonian error than the previous best model with fewer parameters",
    control="A/A: an independently tuned TP replicate (the whole grid retrained on its own seed stream, the best "
    "point on the validation frames chosen again) in the SO(2) model's place: both sides selected the same way, so "
    "the log ratio scatters around 0",
    positive="that A/A pair with the reference TP's H error inflated by 10^0.07 (H -> H_true + c (H - H_true)): a "
    "log ratio of -0.07 planted, 1.4x the bar",
    mechanisms=("so2-reduction", "hamiltonian-learning"),
    judge=Interval("log10 H MAE ratio (SO(2) / TP), tuned", below=-0.05),
)
def so2_beats_tuned_tp(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    torch.set_num_threads(1)
    seed = seed + COMPARISON_SEEDS
    _, test = _split(scale.value, seed)
    so2, tp = _tuned_pair(scale.value, seed)
    ours = so2 if arm is Arm.CLAIM else _tuned_model(scale.value, seed, "tp", stream=1, retune=True)  # arms' line
    c = 10**TUNED_PLANT if arm is Arm.POSITIVE else 1.0  # the positive control's one line
    mae_ours = _test_mae(ours, test)
    mae_tp = c * _test_mae(tp, test)  # the H MAE scales exactly with the inflation of the error
    r = float(np.log10(mae_ours / mae_tp))
    holds = r < -0.05
    lr_s, ch_s, tab_s = _tuned(scale.value, seed, "so2", n_params(tp))
    lr_t, ch_t, tab_t = _tuned(scale.value, seed, "tp")
    measured = {
        "log10 H MAE ratio (SO(2) / TP), tuned": r,
        "H MAE ours [uHa]": mae_ours,
        "params ours / TP": n_params(ours) / n_params(tp),
        "SO(2) tuned lr": lr_s,
        "SO(2) tuned channels": ch_s,
        "TP tuned lr": lr_t,
        "TP tuned channels": ch_t,
    }
    lr_r, ch_r, _ = _tuned(scale.value, seed, "tp", stream=1)  # the A/A replicate's own tuning, every arm
    measured |= {"TP replicate (A/A) tuned lr": lr_r, "TP replicate (A/A) tuned channels": ch_r}
    lrs = PRESETS[scale.value].tune_lrs
    for name, chosen in (("SO(2)", lr_s), ("TP", lr_t), ("TP replicate (A/A)", lr_r)):
        measured[f"{name} tuned lr at grid edge (-1 low, 0 interior, +1 top)"] = float(grid_edge(chosen, lrs))
    measured |= {f"SO(2) validation H MAE [uHa], {k}": v for k, v in tab_s.items()}
    measured |= {f"TP validation H MAE [uHa], {k}": v for k, v in tab_t.items()}
    measured |= _breakdown_measures("ours", ours) | _breakdown_measures("TP", tp)
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        baselines={"H MAE TP tuned [uHa]": mae_tp, "params TP": float(n_params(tp))},
        paper={"H error vs previous best": "-40 % with fewer parameters (abstract)"},
        reason="" if holds else f"log10 H MAE ratio {r:.3f} (bar -0.05)",
    )


def _mace_errors(scale_value: str, seed: int, score: str, stream: int = 0, inflate: float = 1.0) -> dict[str, float]:
    """Test E / F MAE of MACE tuned on ``score`` (``stream`` > 0: its A/A replicate, tuned again on the same grid
    from its own seed stream), errors inflated by ``inflate``."""
    from icml26.qhflow2.mace_peer import evaluate_mace

    _, test = _split(scale_value, seed)
    model = _tuned_model(scale_value, seed, "mace", stream=stream, retune=True, score=score)
    return evaluate_mace(model, test, inflate=inflate)


@functools.lru_cache(maxsize=16)
def _h_route_errors(scale_value: str, seed: int, trained: bool = True, stream: int = 0) -> dict[str, float]:
    """Test H / eps / E / F MAE of the tuned SO(2) model through PySCF; ``stream`` > 0: its A/A replicate, the whole
    SO(2) tuning repeated from that seed stream (the same budget: at most the reference TP's parameters);
    ``trained=False``: the tuned setting with 0 steps, initialised from its own seed stream
    (:data:`UNTRAINED_STREAM`): its per-element reference blocks only."""
    _, test = _split(scale_value, seed)
    so2, tp = _tuned_pair(scale_value, seed)
    if stream:
        so2 = _tuned_model(scale_value, seed, "so2", stream=stream, max_params=n_params(tp), retune=True)
    if not trained:
        lr, ch, _ = _tuned(scale_value, seed, "so2", n_params(tp))
        cfg = PRESETS[scale_value]
        train, _ = _split(scale_value, seed)
        so2 = train_h_model("so2", train, TrainConfig(steps=0, batch=cfg.batch, lr=lr), seed + _STREAM *
                            UNTRAINED_STREAM, channels=ch, lmax=cfg.lmax, layers=cfg.layers)[0]  # fmt: skip
    return evaluate_h_model(so2, test)


def _inflated(errors: dict[str, float], c: float) -> dict[str, float]:
    """MAEs of predictions whose errors are scaled by c (E -> E_true + c (E - E_true)): each MAE times c exactly."""
    return {k: c * v for k, v in errors.items()}


def _mace_comparison(scale: Scale, seed: int, arm: Arm, score: str, plant: float, aa: str):
    """Shared body of the MACE claims: log10 (``score``'s MAE of 'ours' / of the reference). The claim: ours = the
    tuned SO(2) model through PySCF, reference = MACE tuned on ``score``. The A/A pair (``aa``): ``"h"`` the H route
    against its re-tuned replicate in MACE's place (the energy claim's negative), ``"mace"`` MACE's re-tuned
    replicate against MACE (the forces claim's positive base; its negative is the untrained Hamiltonian). The
    positive plants the effect on that pair: the reference's errors scaled by 10^-``plant`` (a gain, ``plant`` < 0)
    or ours by 10^``plant`` (a handicap). Every arm reports the A/A pairs' unplanted log ratios."""
    seed = seed + COMPARISON_SEEDS
    quantity = SCORES[score]
    mace, mace_rep = _mace_errors(scale.value, seed, score), _mace_errors(scale.value, seed, score, stream=1)
    h_route = _h_route_errors(scale.value, seed)
    h_rep = _h_route_errors(scale.value, seed, stream=1) if aa == "h" else None
    pair = (h_route, h_rep) if aa == "h" else (mace_rep, mace)
    if arm is Arm.CLAIM:
        ours, ref = h_route, mace
    elif arm is Arm.NEGATIVE:
        ours, ref = pair if aa == "h" else (_h_route_errors(scale.value, seed, trained=False), mace)
    else:  # the A/A pair with the effect planted
        ours, ref = _inflated(pair[0], 10 ** max(plant, 0.0)), _inflated(pair[1], 10 ** max(-plant, 0.0))
    r = float(np.log10(ours[quantity] / ref[quantity]))
    lr, ch, table = _tuned(scale.value, seed, "mace", score=score)
    lr_r, ch_r, _ = _tuned(scale.value, seed, "mace", stream=1, score=score)
    _, tp = _tuned_pair(scale.value, seed)
    lr_h, ch_h, _ = _tuned(scale.value, seed, "so2", n_params(tp))
    measured = {"ours E MAE [meV]": ours["E MAE [meV]"], "ours F MAE [meV/A]": ours["F MAE [meV/A]"],
                "MACE tuned lr": lr, "MACE tuned channels": ch,
                "MACE replicate (A/A) tuned lr": lr_r, "MACE replicate (A/A) tuned channels": ch_r,
                "H route (SO(2)) tuned lr": lr_h, "H route (SO(2)) tuned channels": ch_h}  # fmt: skip
    lrs = PRESETS[scale.value].tune_lrs
    for name, chosen in (("MACE", lr), ("MACE replicate (A/A)", lr_r), ("H route (SO(2))", lr_h)):
        measured[f"{name} tuned lr at grid edge (-1 low, 0 interior, +1 top)"] = float(grid_edge(chosen, lrs))
    for name, key in (("E", "E MAE [meV]"), ("F", "F MAE [meV/A]")):
        measured[f"A/A log10 {name} MAE ratio, MACE replicate / MACE (reported)"] = float(
            np.log10(mace_rep[key] / mace[key])
        )
        if h_rep is not None:
            measured[f"A/A log10 {name} MAE ratio, H route / its replicate (reported)"] = float(
                np.log10(h_route[key] / h_rep[key])
            )
    if h_rep is not None:
        lr_hr, ch_hr, _ = _tuned(scale.value, seed, "so2", n_params(tp), stream=1)
        measured |= {"H route replicate (A/A) tuned lr": lr_hr, "H route replicate (A/A) tuned channels": ch_hr,
                     "H route replicate (A/A) tuned lr at grid edge (-1 low, 0 interior, +1 top)":
                     float(grid_edge(lr_hr, lrs))}  # fmt: skip
    measured |= {f"MACE validation {quantity}, {k}": v for k, v in table.items()}
    measured |= _breakdown_measures("MACE", _tuned_model(scale.value, seed, "mace", score=score))
    baselines = {f"reference {k}": v for k, v in ref.items()} | {f"MACE {k}": v for k, v in mace.items()}
    return r, measured, baselines


#: The energy gain planted by ``energy-vs-mace``'s positive control: the reference's errors inflated 10^0.4 (log10
#: -0.4, 1.33x the bar of -0.3) on its A/A pair (the H route and its re-tuned replicate).
MACE_E_PLANT = -0.4
#: ``energy-vs-mace``'s bar, by the rule fixed before v3 ran: "at least 2x lower" (log10 1/2), the smallest gain
#: the paper's "up to 20x" can mean and the bar of ``hamiltonian-beats-mlip-on-energy``; the A/A negative must
#: leave its whole interval above it.
MACE_E_BAR = -0.3


@claim(
    "qhflow2/energy-vs-mace-v4",
    statement="Trained on the same frames with the same tuning budget (learning rate x width grid, the preset's "
    "steps, chosen on validation frames; MACE chosen on its validation energy error), the energy from the SO(2) "
    "model's predicted Hamiltonian (PySCF energy_tot at its density) has a test MAE at least 2x lower than MACE's "
    "(mace-torch, standard recipe scaled to one core): log10(E MAE H route / E MAE MACE) < -0.3 (the bar's rule: "
    "2x, the smallest gain 'up to 20x' can mean), paired over seeds; an A/A negative, MACE tuned on energy; v4: "
    "learning rates 3e-3, 1e-2, 3e-2, 1e-1, fresh seeds",
    paper="abstract: on QH9, QHFlow2 reduces energy error by up to 20x compared to MACE; up to 20x lower energy MAE "
    "on MD17/rMD17",
    control="A/A: MACE replaced by an independent replicate of the H route (the SO(2) grid retrained on its own "
    "seed stream, chosen on validation H again, at most the same TP's parameters, energies through the same PySCF "
    "route): the log ratio scatters around 0, so the whole interval cannot lie below -0.3 (MACE's re-tuned "
    "replicate pair is reported in every arm)",
    positive="that A/A pair with the reference's energy errors inflated 10^0.4 = 2.5x (E -> E_true + 2.5 (E - "
    "E_true)): log10 -0.4 planted (1.33x the bar)",
    mechanisms=("hamiltonian-learning", "energy-stationarity"),
    judge=Interval("log10 E MAE ratio (ours / MACE)", below=MACE_E_BAR),
)
def energy_vs_mace(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    torch.set_num_threads(1)
    r, measured, baselines = _mace_comparison(scale, seed, arm, "E", MACE_E_PLANT, aa="h")
    holds = r < MACE_E_BAR
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"log10 E MAE ratio (ours / MACE)": r} | measured,
        baselines=baselines,
        paper={"energy MAE vs MACE": "up to 20x lower (QH9, abstract)"},
        reason="" if holds else f"log10 E MAE ratio {r:.2f} (bar {MACE_E_BAR})",
    )


#: The force handicap planted by ``forces-match-mace``'s positive control: the MACE replicate's force errors
#: inflated by 10^0.12 = 1.32x, a model clearly worse than MACE but inside the claim's 1.5x margin.
MACE_F_PLANT = 0.12


@claim(
    "qhflow2/forces-match-mace-v4",
    statement="Trained on the same frames with the same tuning budget (MACE chosen on its validation force error), "
    "the forces from the SO(2) model's predicted Hamiltonian (PySCF gradient at its orbitals) reach MACE's accuracy "
    "within 1.5x: log10(F MAE H route / F MAE MACE) < log10 1.5 = 0.176, paired over seeds; MACE tuned on "
    "forces, the untrained negative on its own seed stream; v4: learning rates 3e-3, 1e-2, 3e-2, 1e-1, fresh seeds",
    paper="abstract: the first Hamiltonian model to reach NequIP-level force accuracy (MD17/rMD17)",
    control="the learned Hamiltonian removed: the same tuned SO(2) setting with 0 training steps, initialised from "
    "its own seed stream (its per-element reference blocks only), through the same PySCF route: its forces are far "
    "off, so the claim must fail (not an A/A run: an A/A pair sits inside a 'within 1.5x' margin, so it would "
    "hold; the A/A pair is the positive's base and is reported in every arm)",
    positive="the A/A pair of independently tuned MACE models (each tuned on the same grid from its own seed stream) "
    "with the replicate's force errors inflated 10^0.12 = 1.32x: a model worse than MACE by a known factor inside "
    "the margin (log10 0.12 against the bar's 0.176)",
    mechanisms=("hamiltonian-learning",),
    judge=Interval("log10 F MAE ratio (ours / MACE)", below=float(np.log10(1.5))),
)
def forces_match_mace(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    torch.set_num_threads(1)
    r, measured, baselines = _mace_comparison(scale, seed, arm, "F", MACE_F_PLANT, aa="mace")
    holds = r < float(np.log10(1.5))
    return ClaimResult(
        "holds" if holds else "fails",
        measured={"log10 F MAE ratio (ours / MACE)": r} | measured,
        baselines=baselines,
        paper={"forces": "NequIP-level (abstract)"},
        reason="" if holds else f"log10 F MAE ratio {r:.2f} (bar {np.log10(1.5):.3f})",
    )


#: Seed offset of ``scaling-tuned``'s stream: v1 ran on 4000-4002 with the two-point grid, v2 on 6000-6002 with the
#: three-point grid, v3 on fresh seeds.
SCALING_TUNED_SEEDS = 8000
#: The scaling ``scaling-tuned``'s positive control plants: each missing factor (half the width, a quarter of the
#: data) inflates an A/A model's H error by 10^0.075 (log10 ratio -0.075, 1.5x the bar of -0.05).
SCALING_TUNED_PLANT = 0.075


@functools.lru_cache(maxsize=64)
def _scaling_tuned(scale_value: str, seed: int, channels: int, frames: int, stream: int = 0):
    """(lr, validation table, model): the SO(2) model of width ``channels`` on the first ``frames`` train frames,
    its learning rate tuned on the preset's grid (the preset's steps, chosen on the validation frames); ``stream``
    > 0 tunes an independent replicate (every grid point trained from seed + 10,000 x stream)."""
    cfg = PRESETS[scale_value]
    train, _ = _split(scale_value, seed)
    train = train.subset(np.arange(frames))
    val = _validation(scale_value)
    models = {}

    def score_of(lr: float, _: None) -> float:
        tc = TrainConfig(steps=cfg.steps, batch=cfg.batch, lr=lr)
        models[lr] = train_h_model("so2", train, tc, seed + _STREAM * stream, channels=channels, lmax=cfg.lmax,
                                   layers=cfg.layers)[0]  # fmt: skip
        return _test_mae(models[lr], val)

    (_, lr, _), table = _grid_search(cfg.tune_lrs, (None,), score_of)
    return lr, table, models[lr]


@claim(
    "qhflow2/scaling-tuned-v3",
    statement="With the same tuning budget for every model (the preset's learning-rate grid, chosen on validation "
    "frames sampled apart from train and test, the same steps), the SO(2) model's test H MAE falls by more than "
    "11 % with twice the width (16 vs 8 channels: log10 ratio wide / narrow < -0.05, averaged over both data sizes) "
    "and with four times the training set (100 vs 25 frames: log10 ratio < -0.05, averaged over both widths); "
    "Spearman(H MAE, E MAE from the predicted H) over the 4 models reported; paired over seeds; v3: learning rates "
    "3e-3, 1e-2, 3e-2, 1e-1 (the grid of the other tuned claims; v2's three-point grid), fresh seeds",
    paper="consistent scaling behavior with respect to model capacity and data (abstract)",
    control="A/A: all 4 slots the narrow model on the small training set, each tuned on the same grid from its own "
    "seed stream: no width or data effect, both ratios scatter around 0",
    positive="those 4 A/A models with the scaling planted: each missing factor (half the width, a quarter of the "
    "data) inflates a model's H error by 10^0.075 (log10 ratios -0.075, 1.5x the bar)",
    mechanisms=("hamiltonian-learning",),
    judge=[
        Interval("log10 H MAE ratio, wide / narrow, tuned", below=-0.05),
        Interval("log10 H MAE ratio, more / less data, tuned", below=-0.05),
    ],
)
def scaling_tuned(scale: Scale, seed: int, arm: Arm = Arm.CLAIM) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    seed = seed + SCALING_TUNED_SEEDS
    _, test = _split(scale.value, seed)
    (c_lo, c_hi), (f_lo, f_hi) = cfg.scaling_channels, cfg.scaling_frames
    slots = [(c, f) for c in (c_lo, c_hi) for f in (f_lo, f_hi)]
    # the arms' lines: each slot's own model (claim) or an A/A replicate of the narrow, small-data model on its own
    # seed stream (both controls); the positive inflates the replicates' H errors per missing factor
    tuned, inflate = {}, {}
    for i, (c, f) in enumerate(slots):
        tuned[(c, f)] = _scaling_tuned(scale.value, seed, c, f) if arm is Arm.CLAIM else \
            _scaling_tuned(scale.value, seed, c_lo, f_lo, i)  # fmt: skip
        k = 10**SCALING_TUNED_PLANT if arm is Arm.POSITIVE else 1.0
        inflate[(c, f)] = k ** ((c == c_lo) + (f == f_lo))
    runs = {key: evaluate_h_model(tuned[key][2], test, forces=False, inflate=inflate[key]) for key in slots}
    h = {key: v["H MAE [uHa]"] for key, v in runs.items()}
    r_width = float(np.mean([np.log10(h[(c_hi, f)] / h[(c_lo, f)]) for f in (f_lo, f_hi)]))
    r_data = float(np.mean([np.log10(h[(c, f_hi)] / h[(c, f_lo)]) for c in (c_lo, c_hi)]))
    holds = r_width < -0.05 and r_data < -0.05
    measured = {
        "log10 H MAE ratio, wide / narrow, tuned": r_width,
        "log10 H MAE ratio, more / less data, tuned": r_data,
        "Spearman(H MAE, E MAE), 4 models (reported)": _spearman([h[k] for k in slots],
                                                                 [runs[k]["E MAE [meV]"] for k in slots]),
    }  # fmt: skip
    for (c, f), v in runs.items():
        measured[f"H MAE [uHa], {c} ch, {f} frames"] = v["H MAE [uHa]"]
        measured[f"E MAE [meV], {c} ch, {f} frames"] = v["E MAE [meV]"]
        measured[f"tuned lr, {c} ch, {f} frames"] = tuned[(c, f)][0]
        measured[f"tuned lr at grid edge (-1 low, 0 interior, +1 top), {c} ch, {f} frames"] = float(
            grid_edge(tuned[(c, f)][0], cfg.tune_lrs)
        )
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"scaling": "H error falls with model and data size (scaling study)"},
        reason="" if holds else f"width ratio {r_width:.3f}, data ratio {r_data:.3f} (bars -0.05)",
    )


# ---------------------------------------------------------------------------------------------------------
# Credited mechanisms and their liveness probes (cached models and noise runs: no extra training)
# ---------------------------------------------------------------------------------------------------------


def _test_mae(model: torch.nn.Module, test) -> float:
    """Test H MAE [uHa] of a Hamiltonian model."""
    return float(np.abs(predict_h(model, layout_for(test), test.Z, test.R) - test.H).mean() * 1e6)


def _without_m_mixing(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of an SO(2) model with every SO(2) convolution's |m| >= 1 mixing zeroed: only the m = 0 (along-edge)
    part of each edge-frame convolution is left (the ablation of the per-|m| mixing eSCN's reduction keeps)."""
    import copy

    from icml26.qhflow2.model import SO2Linear

    ablated = copy.deepcopy(model)
    with torch.no_grad():
        for layer in ablated.modules():
            if isinstance(layer, SO2Linear):
                for w in layer.w[1:]:
                    w.weight.zero_()
    return ablated


@mechanism(
    "so2-reduction",
    component="eSCN's SO(2) convolution in the edge frame (per-|m| complex-linear mixing) in place of the full SO(3) "
    "tensor product (O(L^6) -> O(L^3))",
    measures="test H MAE of the trained SO(2) model with every SO(2) convolution's |m| >= 1 mixing zeroed / the "
    "intact model's (1 when the edge-frame convolutions' m != 0 channels carry nothing; the parameter ratio SO(2) / "
    "TP is reported)",
    above=1.25,
)
def so2_reduction(scale: Scale, seed: int) -> dict[str, float]:
    cfg = PRESETS[scale.value]
    seed = seed + FRESH_SEEDS  # the v3 claims' seed stream: the same trained model
    torch.set_num_threads(1)
    _, test = _split(scale.value, seed)
    model = _trained(scale.value, seed, "so2")
    intact, ablated = _test_mae(model, test), _test_mae(_without_m_mixing(model), test)
    g = get_molecule(cfg.timing_molecule)
    counts = {}
    for kind in ("so2", "tp"):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            counts[kind] = n_params(build_model(kind, layout_for(test).slot_ls, len(g.Z), channels=cfg.channels,
                                                lmax=max(cfg.timing_lmax), layers=cfg.layers))  # fmt: skip
    return {
        "so2-reduction": ablated / intact,
        "H MAE intact [uHa]": intact,
        "H MAE |m| >= 1 mixing zeroed [uHa]": ablated,
        f"params SO(2) / TP, l_max {max(cfg.timing_lmax)} (reported)": counts["so2"] / counts["tp"],
    }


@mechanism(
    "hamiltonian-learning",
    component="the SO(2) model's learned geometry -> Hamiltonian map (training on H blocks)",
    measures="test H MAE of the trained SO(2) model / that of the same model untrained (its per-element atomic "
    "reference blocks); 1 when training learns nothing beyond the reference",
    below=0.8,
)
def hamiltonian_learning(scale: Scale, seed: int) -> dict[str, float]:
    seed = seed + FRESH_SEEDS  # the v3 claims' seed stream: the same trained model
    _, test = _split(scale.value, seed)
    mae = {
        name: _test_mae(_trained(scale.value, seed, "so2", steps), test)
        for name, steps in (("trained", None), ("untrained", 0))
    }
    return {
        "hamiltonian-learning": mae["trained"] / mae["untrained"],
        "H MAE trained [uHa]": mae["trained"],
        "H MAE untrained [uHa]": mae["untrained"],
    }


def _first_order_share(evaluate, H0: np.ndarray, delta: np.ndarray) -> float:
    """|dE(+delta) - dE(-delta)| / (|dE(+delta)| + |dE(-delta)|), dE(x) = E[D(H0 + x)] - E[D(H0)]: the odd
    (first-order) part of the energy's response to an H error, ~0 where E is stationary, ~1 where it is not."""
    e0 = evaluate(H0, forces=False).E
    up, down = evaluate(H0 + delta, forces=False).E - e0, evaluate(H0 - delta, forces=False).E - e0
    return abs(up - down) / (abs(up) + abs(down) + 1e-300)


@mechanism(
    "energy-stationarity",
    component="the SCF energy's stationarity at the converged density (an H error costs O(error^2) in energy)",
    measures="the odd (first-order) share of the energy's response to the trained SO(2) model's own H error "
    "(symmetrised, +-error around the labelled H; mean over test frames) / the same share around the core "
    "Hamiltonian (not converged, the ablated reference): ~0 when E is stationary at the model's error size, ~1 "
    "when not",
    below=0.5,
)
def energy_stationarity(scale: Scale, seed: int) -> dict[str, float]:
    seed = seed + FRESH_SEEDS  # the v3 claims' seed stream: the same trained model
    torch.set_num_threads(1)
    _, test = _split(scale.value, seed)
    frames = range(min(5, len(test.R)))
    H_pred = predict_h(_trained(scale.value, seed, "so2"), layout_for(test), test.Z, test.R[list(frames)])
    shares = {"converged": [], "core": []}
    for f in frames:
        evaluate = HamiltonianEvaluator(test.Z, test.R[f], test.basis, test.xc)
        delta = H_pred[f] - test.H[f]
        delta = 0.5 * (delta + delta.T)  # (nao, nao) the model's error, symmetric
        shares["converged"].append(_first_order_share(evaluate, test.H[f], delta))
        shares["core"].append(_first_order_share(evaluate, evaluate.mf.get_hcore(), delta))
    on, off = float(np.mean(shares["converged"])), float(np.mean(shares["core"]))
    return {"energy-stationarity": on / off, "first-order share, converged H": on, "first-order share, core H": off}


# ---------------------------------------------------------------------------------------------------------
# The claims' measures, validated both ways on exact and noisy Hamiltonians of the smoke test frames
# ---------------------------------------------------------------------------------------------------------


def _noisy(H: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """H (F, n, n) plus symmetric Gaussian noise of size ``sigma`` [Ha]."""
    N = rng.standard_normal(H.shape) * sigma
    return H + 0.5 * (N + np.swapaxes(N, -1, -2))


def _e_mae(test, H: np.ndarray) -> float:
    """The claims' E MAE [meV] of Hamiltonians H (F, nao, nao): PySCF energy at their densities vs the labels."""
    from icml26.qhflow2.data import HARTREE_EV

    E = [HamiltonianEvaluator(test.Z, r, test.basis, test.xc)(h, forces=False).E for h, r in zip(H, test.R)]
    return float(np.abs(np.array(E) - test.E).mean() * HARTREE_EV * 1e3)


def _error_gain_check(quantity: str):
    """1 - MAE(candidate) / MAE(reference) for the H MAE or the E MAE from H (the claims' log ratios, as gains):
    the reference and the null are 1e-3 Ha noise on the labelled H (each MAE averaged over independent draws);
    the truth is the labelled H itself."""
    draws = 16

    def run(seed: int) -> dict[str, float]:
        _, test = _split("smoke", 0)
        rng = np.random.default_rng([seed, 5])

        def mae(sigma: float) -> float:
            values = []
            for _ in range(draws if sigma > 0 else 1):
                H = _noisy(test.H, sigma, rng)
                values.append(float(np.abs(H - test.H).mean() * 1e6) if quantity == "H" else _e_mae(test, H))
            return float(np.mean(values))

        ref = mae(1e-3)
        return {
            "truth": 1 - mae(0.0) / ref,
            "half the noise": 1 - mae(5e-4) / ref,
            "twice the noise": 1 - mae(2e-3) / ref,
            "null": 1 - mae(1e-3) / ref,
        }

    return run


def _planted_ratio_check(seed: int) -> dict[str, float]:
    """|read - planted| of the claims' log10 H MAE ratio for a planted ratio of -0.065 (``scaling``'s positive
    control's plant): 1e-3 Ha noise on the labelled H against the same noise scaled by 10^-0.065 (the truth:
    exact), against independent draws scaled so (the null: the plant read through independent noise, 64 draws
    each), and, as alternatives that must read worse, independent draws unscaled (the plant missed) and scaled
    twice as much."""
    draws = 64
    _, test = _split("smoke", 0)
    rng = np.random.default_rng([seed, 7])

    def mae(factor: float, noise=None) -> float:
        noise = [_noisy(test.H, 1e-3, rng) - test.H for _ in range(draws)] if noise is None else noise
        return float(np.mean([np.abs(factor * n).mean() for n in noise]))

    def error(read: float) -> float:
        return abs(np.log10(read) + SCALING_PLANT)

    noise = [_noisy(test.H, 1e-3, rng) - test.H for _ in range(draws)]
    ref, k = mae(1.0, noise), 10**-SCALING_PLANT
    return {
        "truth": error(mae(k, noise) / ref),
        "null": error(mae(k) / ref),
        "plant missed": error(mae(1.0) / ref),
        "twice the plant": error(mae(k * k) / ref),
    }


def _spearman_check(seed: int) -> dict[str, float]:
    """The claims' Spearman(H MAE, E MAE) over 20 models whose E error is a rising function of their H error (the
    truth), the same with noise, and independent of it (the null)."""
    rng = np.random.default_rng([seed, 6])
    h = rng.lognormal(size=20)
    return {
        "truth": _spearman(h, h**2),
        "noisy (E = H^2 x lognormal(0.5))": _spearman(h, h**2 * rng.lognormal(sigma=0.5, size=20)),
        "null": _spearman(h, rng.lognormal(size=20)),
    }


def _equivariance_check(seed: int) -> dict[str, float]:
    """The claims' log10 max block error of a map that co-rotates exactly (the truth), one that does not rotate
    (the null: blocks unchanged by a rotation) and one rotated on one side only."""
    _, test = _split("smoke", 0)
    layout = layout_for(test)
    blocks = torch.tensor(layout.to_blocks(test.H[:3], test.Z))  # (F, n, n, P, P)
    R = _rand_rot(torch.Generator().manual_seed(seed))
    D = torch.block_diag(*[wigner_D64(l, R) for l in layout.slot_ls])

    def err(rotated: torch.Tensor) -> float:
        return float(np.log10(float((rotated - D @ blocks @ D.T).abs().max()) + 1e-300))

    return {"truth": err(D @ blocks @ D.T), "one-sided (D H)": err(D @ blocks), "null": err(blocks)}


MEASURES = [
    MeasureCheck("H MAE gain (log10 H MAE ratio)", _error_gain_check("H"), null_band=(-0.05, 0.05)),
    MeasureCheck(
        "|read - planted| of a planted log10 H MAE ratio of -0.065",
        _planted_ratio_check,
        null_band=(0.0, 0.015),
        higher_is_better=False,
    ),
    MeasureCheck("E MAE gain from H (log10 E MAE ratio)", _error_gain_check("E"), null_band=(-0.2, 0.2)),
    MeasureCheck("Spearman(H MAE, E MAE)", _spearman_check, null_band=(-0.6, 0.6)),
    MeasureCheck("log10 max block error [Ha]", _equivariance_check, null_band=(-2.0, 2.0), higher_is_better=False),
]
MECHANISMS = [so2_reduction, hamiltonian_learning, energy_stationarity]
CLAIMS = [
    energy_error_is_second_order,
    equivariant,
    so2_matches_tp_cheaper,
    hamiltonian_beats_mlip,
    scaling,
    so2_beats_tuned_tp,
    energy_vs_mace,
    forces_match_mace,
    scaling_tuned,
]
