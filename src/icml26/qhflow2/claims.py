"""The paper's headline claims at laptop scale (see README "Claims").

- ``energy-error-is-second-order-v1``: noise on a converged H -> E error slope ~2, F error slope ~1, dE >= 0;
- ``equivariant-v1``: rotating the molecule rotates every predicted H block by its Wigner-D (float64);
- ``so2-matches-tp-cheaper-v2``: the SO(2) model reaches the tensor-product baseline's H error, fewer parameters,
  faster per step;
- ``hamiltonian-beats-mlip-on-energy-v1``: E from the predicted H vs the MLIP's direct E, same training frames;
- ``scaling-v1``: H error falls with model width and training-set size, and lower H error gives lower E error.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from icml26.claims import ClaimResult, Interval, Scale, claim
from icml26.qhflow2.config import PRESETS
from icml26.qhflow2.data import HamiltonianDataset, cached_dataset, get_molecule, label, make_mf, make_mol
from icml26.qhflow2.energy import noise_response
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


@claim(
    "qhflow2/energy-error-is-second-order-v1",
    statement="Symmetric Gaussian noise of size sigma added to the converged Hamiltonian of water gives an energy "
    "error (E[D(H + noise)] - E[D(H)]) growing with log-log slope in [1.7, 2.3] and a force error (PySCF gradient at "
    "the perturbed orbitals) with slope in [0.7, 1.3], and dE >= 0 for every draw (variational)",
    paper="abstract: up to 20x lower energy MAE at NequIP-level forces - the mechanism: the SCF energy is "
    "stationary at the converged density, the non-SCF forces are not",
    control="the same noise around a NON-converged Hamiltonian (the core Hamiltonian, the usual initial guess): the "
    "energy is not stationary there, its error is first order (slope ~1) and of either sign, so the claim must fail",
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
def energy_error_is_second_order(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    g = get_molecule(cfg.noise_molecule)
    H0 = label(g.Z, g.R, cfg.noise_basis, cfg.noise_xc)["H"]
    if control:  # the one line the control changes: the centre of the noise is not the converged H
        H0 = make_mf(make_mol(g.Z, g.R, cfg.noise_basis), cfg.noise_xc).get_hcore()
    sig = np.array(cfg.noise_sigmas)
    res = noise_response(g.Z, g.R, H0, basis=cfg.noise_basis, xc=cfg.noise_xc, sigmas=sig, draws=cfg.noise_draws,
                         rng=np.random.default_rng(seed))  # fmt: skip
    dE, dF = res["dE"], res["dF"]
    mE, mF = np.abs(dE).mean(1), dF.mean(1)
    sE, sF, minE = _slope(sig, mE), _slope(sig, mF), float(dE.min())
    holds = 1.7 < sE < 2.3 and 0.7 < sF < 1.3 and minE > -1e-6
    fig, ax = _figure()
    ax.loglog(sig, mE, "o-", label=f"|dE| [meV], slope {sE:.2f}")
    ax.loglog(sig, mF, "s-", label=f"F MAE [meV/A], slope {sF:.2f}")
    ax.set_xlabel("noise sigma on H [Ha]")
    ax.set_title(f"{cfg.noise_molecule} {cfg.noise_xc}/{cfg.noise_basis}; centre: {'hcore' if control else 'SCF'}")
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


@functools.lru_cache(maxsize=32)  # the runner does every seed, then every control seed
def _trained(scale_value: str, seed: int, kind: str, steps: int | None = None):
    cfg = PRESETS[scale_value]
    train, _ = _split(scale_value, seed)
    tc = TrainConfig(steps=cfg.steps if steps is None else steps, batch=cfg.batch, lr=cfg.lr)
    kw = {"channels": cfg.channels, "lmax": cfg.lmax, "layers": cfg.layers}
    if kind == "mlip":
        return train_mlip(train, tc, seed, **kw)[0]
    if kind == "mlp":
        kw = {}
    return train_h_model(kind, train, tc, seed, **kw)[0]


@claim(
    "qhflow2/equivariant-v1",
    statement="Rotating the molecule rotates every predicted Hamiltonian block H_ij by its Wigner-D matrices "
    "(D_i H_ij D_j^T per orbital shell) to max |error| < 1e-6 Ha, float64, trained SO(2) model, 3 random rotations",
    paper="SO(2)-equivariant backbone (eSCN convolutions in the edge frame)",
    control="the non-equivariant MLP baseline in the SO(2) model's place: its blocks do not co-rotate",
    judge=Interval("log10 max block error [Ha]", below=-6.0),
    by_construction="an implementation check of the architecture, not a finding: equivariance holds whenever the "
    "edge-frame rotations and the per-|m| mixing are right (its control shows the measure sees a model that is not)",
)
def equivariant(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    import copy

    torch.set_num_threads(1)
    _, test = _split(scale.value, seed)
    model = copy.deepcopy(_trained(scale.value, seed, "mlp" if control else "so2")).double()
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
    "qhflow2/so2-matches-tp-cheaper-v2",
    statement="Trained with the same data, steps, width and l_max, the SO(2) model's test H MAE is within 1.25x of "
    "the e3nn tensor-product (QHNet-style) baseline's, with < 0.7x its parameters at l_max = 4, while one training "
    "step at l_max = 4 costs < 0.7x the baseline's time (median of interleaved paired ratios; every l_max reported)",
    paper="abstract: 40 % lower Hamiltonian error than the previous best model with fewer parameters; eSCN: "
    "O(L^6) -> O(L^3)",
    control="the SO(2) convolutions replaced by the full tensor-product model: parameter ratio exactly 1 and "
    "step-time ratio ~1, so the claim must fail (on the parameter count whatever the timing noise)",
    judge=[
        Interval("H MAE SO(2) / TP", below=1.25),
        Interval("params SO(2) / TP, l_max 4", below=0.7),
        Interval("step time SO(2) / TP, l_max 4", below=0.7),
    ],
)
def so2_matches_tp_cheaper(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    ours = "tp" if control else "so2"  # the one line the control changes
    _, test = _split(scale.value, seed)
    layout = layout_for(test)
    mae = {}
    for kind in (ours, "tp"):
        H = predict_h(_trained(scale.value, seed, kind), layout, test.Z, test.R)
        mae[kind] = float(np.abs(H - test.H).mean() * 1e6)
    g = get_molecule(cfg.timing_molecule)
    gen = np.random.default_rng(seed)
    pos = torch.tensor(g.R[None] + 0.02 * gen.standard_normal((cfg.timing_batch, *g.R.shape)), dtype=torch.float32)
    measured = {"H MAE SO(2) / TP": mae[ours] / mae["tp"]}
    baselines = {"H MAE TP [uHa]": mae["tp"]}
    times = {}
    for L in cfg.timing_lmax:
        models = {}
        for name, kind in (("ours", ours), ("tp", "tp")):
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                models[name] = build_model(kind, layout.slot_ls, len(g.Z), channels=cfg.channels, lmax=L,
                                           layers=cfg.layers)  # fmt: skip
        t = {k: [] for k in models}
        for _ in range(cfg.timing_repeats):  # interleaved, so shared-core load hits both alike
            for k, m in models.items():
                t[k].append(time_per_step(m, g.Z, pos, repeats=1))
        times[L] = (float(np.median(t["ours"])), float(np.median(t["tp"])))
        # the median of per-repeat ratios: the two steps of a repeat run back to back, so load bursts cancel
        paired = np.array(t["ours"]) / np.array(t["tp"])
        measured[f"step time SO(2) / TP, l_max {L}"] = float(np.median(paired))
        measured[f"params SO(2) / TP, l_max {L}"] = n_params(models["ours"]) / n_params(models["tp"])
        baselines[f"step time TP, l_max {L} [ms]"] = 1e3 * times[L][1]
    measured["H MAE SO(2) [uHa]"] = mae[ours]
    r_mae, r_t = measured["H MAE SO(2) / TP"], measured["step time SO(2) / TP, l_max 4"]
    r_p = measured["params SO(2) / TP, l_max 4"]
    holds = r_mae < 1.25 and r_p < 0.7 and r_t < 0.7
    fig, ax = _figure()
    Ls = list(times)
    ax.semilogy(Ls, [1e3 * times[L][0] for L in Ls], "o-", label="SO(2)" if not control else "TP (control)")
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


@claim(
    "qhflow2/hamiltonian-beats-mlip-on-energy-v1",
    statement="Trained on the same frames (energies and forces for the MLIP, Hamiltonians for the SO(2) model), the "
    "energy computed from the predicted Hamiltonian (PySCF energy_tot at its density) has a lower test MAE than the "
    "MLIP's direct energy: log10(E MAE H-model / E MAE MLIP) < 0, paired over seeds (force ratio reported)",
    paper="abstract: up to 20x lower energy MAE than MLIPs (MD17/rMD17, QH9 vs MACE) at NequIP-level forces",
    control="the Hamiltonian model left untrained (atomic reference blocks + random network): its energies are far "
    "off and the claim must fail",
    judge=Interval("log10 E MAE ratio (H model / MLIP)", below=0.0),
)
def hamiltonian_beats_mlip(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    torch.set_num_threads(1)
    _, test = _split(scale.value, seed)
    hmodel = _trained(scale.value, seed, "so2", 0 if control else None)  # the one line the control changes
    h = evaluate_h_model(hmodel, test)
    m = evaluate_mlip(_trained(scale.value, seed, "mlip"), test)
    r_e = float(np.log10(h["E MAE [meV]"] / m["E MAE [meV]"]))
    r_f = float(h["F MAE [meV/A]"] / m["F MAE [meV/A]"])
    holds = r_e < 0.0
    fig, ax = _figure()
    x = np.arange(2)
    ax.bar(x - 0.2, [h["E MAE [meV]"], h["F MAE [meV/A]"]], 0.4, label="from predicted H (SO(2))")
    ax.bar(x + 0.2, [m["E MAE [meV]"], m["F MAE [meV/A]"]], 0.4, label="MLIP direct")
    ax.set_xticks(x, ["E MAE [meV]", "F MAE [meV/A]"])
    ax.set_yscale("log")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured={
            "log10 E MAE ratio (H model / MLIP)": r_e,
            "F MAE ratio (H model / MLIP)": r_f,
            **{f"H model {k}": v for k, v in h.items()},
        },
        baselines={f"MLIP {k}": v for k, v in m.items()},
        paper={
            "energy MAE, Hamiltonian model vs MLIP": "up to 20x lower (abstract)",
            "forces": "NequIP-level (abstract)",
        },
        reason="" if holds else f"E MAE from H {h['E MAE [meV]']:.3g} meV vs MLIP {m['E MAE [meV]']:.3g} meV",
        figures={"E-F-bars": fig},
    )


def _spearman(a, b) -> float:
    """Spearman rank correlation of two short vectors (no ties expected: real-valued errors)."""
    ra, rb = np.argsort(np.argsort(a)).astype(float), np.argsort(np.argsort(b)).astype(float)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / np.sqrt((ra**2).sum() * (rb**2).sum()))


@functools.lru_cache(maxsize=16)
def _scaling_errors(scale_value: str, seed: int, channels: int, frames: int, shuffled: bool) -> dict[str, float]:
    """Test H / E / F MAE of the SO(2) model of width ``channels`` trained on the first ``frames`` train frames."""
    cfg = PRESETS[scale_value]
    train, test = _split(scale_value, seed)
    train = train.subset(np.arange(frames))
    if shuffled:  # the control: every frame keeps its geometry but gets another frame's Hamiltonian
        perm = np.random.default_rng(seed + 1000).permutation(frames)
        train = HamiltonianDataset(train.Z, train.R, train.H[perm], train.S, train.E, train.F, train.basis,
                                   train.xc, train.molecule)  # fmt: skip
    tc = TrainConfig(steps=cfg.steps, batch=cfg.batch, lr=cfg.lr)
    model = train_h_model("so2", train, tc, seed, channels=channels, lmax=cfg.lmax, layers=cfg.layers)[0]
    return evaluate_h_model(model, test)


@claim(
    "qhflow2/scaling-v1",
    statement="Trained with the same steps, the SO(2) model's test H MAE falls with width (16 vs 8 channels: "
    "log10 ratio big / small < 0, averaged over both data sizes) and with training-set size (100 vs 25 frames: "
    "log10 ratio more / less < 0, averaged over both widths), and across the 4 trained models a lower H MAE goes "
    "with a lower E MAE from the predicted H (Spearman > 0; F reported), paired over seeds",
    paper="consistent scaling behavior with respect to model capacity and data; improvements in Hamiltonian accuracy "
    "translate into more accurate energy and force computations (abstract)",
    control="the same 4 trainings with the Hamiltonian labels shuffled across training frames (each geometry gets "
    "another frame's H) and the extra frames withheld (the larger-data runs train on the same smaller set): there "
    "is no geometry -> H map to learn and no added data, the data effect is exactly 0 and the claim must fail",
    judge=[
        Interval("log10 H MAE ratio, big / small model", below=0.0),
        Interval("log10 H MAE ratio, more / less data", below=0.0),
        Interval("Spearman(H MAE, E MAE), 4 models", above=0.0),
    ],
)
def scaling(scale: Scale, seed: int, control: bool = False) -> ClaimResult:
    cfg = PRESETS[scale.value]
    torch.set_num_threads(1)
    (c_lo, c_hi), (f_lo, f_hi) = cfg.scaling_channels, cfg.scaling_frames
    # the control: labels shuffled, and the extra data withheld (the "more data" runs get the same first frames,
    # so the data effect is exactly 0 on every machine, not a coin flip of noise around 0)
    runs = {
        (c, f): _scaling_errors(scale.value, seed, c, f_lo if control else f, control)
        for c in (c_lo, c_hi)
        for f in (f_lo, f_hi)
    }
    h = {k: v["H MAE [uHa]"] for k, v in runs.items()}
    r_model = float(np.mean([np.log10(h[(c_hi, f)] / h[(c_lo, f)]) for f in (f_lo, f_hi)]))
    r_data = float(np.mean([np.log10(h[(c, f_hi)] / h[(c, f_lo)]) for c in (c_lo, c_hi)]))
    keys = list(runs)
    hv = [h[k] for k in keys]
    rho_e = _spearman(hv, [runs[k]["E MAE [meV]"] for k in keys])
    rho_f = _spearman(hv, [runs[k]["F MAE [meV/A]"] for k in keys])
    holds = r_model < 0 and r_data < 0 and rho_e > 0
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
    ax.set_title("labels shuffled (control)" if control else "trained on true labels")
    ax.legend()
    return ClaimResult(
        "holds" if holds else "fails",
        measured=measured,
        paper={"scaling": "H error falls with model and data size; E/F errors follow H error (scaling study)"},
        reason="" if holds else f"model ratio {r_model:.2f}, data ratio {r_data:.2f}, Spearman H-E {rho_e:.2f}",
        figures={"E-vs-H-error": fig},
    )


CLAIMS = [energy_error_is_second_order, equivariant, so2_matches_tp_cheaper, hamiltonian_beats_mlip, scaling]
