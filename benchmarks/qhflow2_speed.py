"""QHFlow2 on a CPU: energy + forces from a predicted Hamiltonian vs a warm PySCF SCF + gradient; the SO(2)
convolution vs e3nn's ``FullyConnectedTensorProduct``; model inference, SO(2) vs the QHNet-style baseline.

    python benchmarks/qhflow2_speed.py [--out benchmarks/results/qhflow2_speed.json] [--repeats 3] [--quick]

(a) Per molecule (PBE/def2-SVP; water, ethanol, uracil = a QM9 molecule): PySCF warmed up on the molecule first
    (imports, grids, integral code), then timed on a displaced geometry: 'SCF + gradient' = RKS from PySCF's
    default guess to convergence + analytic gradient; 'from H' = what the benchmark does with a predicted H
    (Mole + overlap, generalised eigenproblem, ``energy_tot`` at the density, gradient at the predicted orbitals).
    The H fed in is the converged one plus 1e-3 Ha noise (the cost does not depend on the H). Medians, interleaved.
(b) Kernel: one equivariant edge convolution (forward + backward) on E edges with C channels: SO(2) = rotate into
    the edge frame with Wigner-D, per-|m| mixing, rotate back; TP = e3nn ``FullyConnectedTensorProduct`` of the
    source features with the edge's spherical harmonics (shared weights, same in/out irreps), l_max 2 / 4 / 6.
(c) Model inference per molecule (ethanol, untrained, C = 16, l_max 2): SO(2) model vs tensor-product model.
(d) MACE inference per molecule (energy + forces by autograd; 16 channels, the claims' recipe, untrained: the cost
    does not depend on the weights) beside the SO(2) model's H prediction for the same molecule (def2-SVP blocks):
    the force-field peer's cost next to (a)'s E + F from a predicted H.
One torch thread, OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from icml26.qhflow2.data import get_molecule, label, make_mf, make_mol
from icml26.qhflow2.energy import HamiltonianEvaluator
from icml26.qhflow2.model import SO2Linear, _q_matrix, build_model, rotate, wigner_blocks
from icml26.qhflow2.orbitals import OrbitalLayout


def _median_interleaved(fns: dict, repeats: int) -> dict[str, float]:
    t = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            t[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in t.items()}


def bench_energy(molecules, repeats, basis="def2-svp", xc="pbe") -> dict:
    out = {}
    rng = np.random.default_rng(0)
    for name in molecules:
        g = get_molecule(name)
        label(g.Z, g.R, basis, xc)  # warm-up
        R1 = g.R + 0.01 * rng.standard_normal(g.R.shape)
        lab = label(g.Z, R1, basis, xc)
        N = 1e-3 * rng.standard_normal(lab["H"].shape)
        H = lab["H"] + 0.5 * (N + N.T)
        HamiltonianEvaluator(g.Z, R1, basis, xc)(H)  # warm-up
        split = {}

        def scf_only(g=g, R1=R1):
            mf = make_mf(make_mol(g.Z, R1, basis), xc)
            mf.kernel()

        def from_h(g=g, R1=R1, H=H, split=split):
            res = HamiltonianEvaluator(g.Z, R1, basis, xc)(H)
            split.setdefault("E", []).append(res.t_energy)
            split.setdefault("F", []).append(res.t_forces)

        med = _median_interleaved(
            {"scf+grad": lambda g=g, R1=R1: label(g.Z, R1, basis, xc), "scf": scf_only, "from H": from_h}, repeats
        )
        out[name] = {
            "atoms": len(g.Z),
            "nao": int(lab["H"].shape[0]),
            "SCF + gradient [s]": med["scf+grad"],
            "E+F from predicted H [s]": med["from H"],
            "speed-up": med["scf+grad"] / med["from H"],
            "SCF only [s]": med["scf"],
            "E from predicted H (eigh + energy_tot) [s]": statistics.median(split["E"]),
            "gradient at predicted orbitals [s]": statistics.median(split["F"]),
            "speed-up, energy only": med["scf"] / statistics.median(split["E"]),
        }
        print(name, out[name], flush=True)
    return out


def bench_kernel(lmaxes, channels, edges, repeats) -> dict:
    from e3nn import o3

    out = {}
    gen = torch.Generator().manual_seed(0)
    for L in lmaxes:
        K = (L + 1) ** 2
        vec = torch.randn(edges, 3, generator=gen)
        x = torch.randn(edges, K, channels, generator=gen, requires_grad=True)
        lin = SO2Linear(channels, channels, L, L)
        qs = [torch.tensor(_q_matrix(l), dtype=torch.float32) for l in range(L + 1)]

        def so2(x=x, lin=lin, qs=qs, vec=vec, L=L):
            D = wigner_blocks(L, vec, qs)
            rotate(lin(rotate(x, D, True)), D, False).square().sum().backward()

        irreps = o3.Irreps([(channels, (l, (-1) ** l)) for l in range(L + 1)])
        sh_irreps = o3.Irreps.spherical_harmonics(L)
        tp = o3.FullyConnectedTensorProduct(irreps, sh_irreps, irreps)
        xf = torch.randn(edges, irreps.dim, generator=gen, requires_grad=True)
        sh = o3.spherical_harmonics(sh_irreps, vec, normalize=True)

        def full(tp=tp, xf=xf, sh=sh):
            tp(xf, sh).square().sum().backward()

        so2()
        full()
        med = _median_interleaved({"so2": so2, "tp": full}, repeats)
        out[f"l_max {L}"] = {"SO(2) conv [ms]": 1e3 * med["so2"], "e3nn FCTP [ms]": 1e3 * med["tp"],
                             "speed-up": med["tp"] / med["so2"],
                             "params SO(2)": sum(p.numel() for p in lin.parameters()),
                             "params FCTP": tp.weight_numel}  # fmt: skip
        print(f"l_max {L}", out[f"l_max {L}"], flush=True)
    return out


def bench_inference(repeats) -> dict:
    g = get_molecule("ethanol")
    lay = OrbitalLayout.for_elements("def2-svp", g.Z)
    pos = torch.tensor(g.R[None], dtype=torch.float32)
    models = {}
    for kind in ("so2", "tp"):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            models[kind] = build_model(kind, lay.slot_ls, len(g.Z), channels=16, lmax=2, layers=2).eval()
    with torch.no_grad():
        for m in models.values():
            m(g.Z, pos)
        med = _median_interleaved({k: (lambda m=m: m(g.Z, pos)) for k, m in models.items()}, repeats)
    res = {f"{k} inference, ethanol def2-SVP blocks [ms]": 1e3 * v for k, v in med.items()}
    res["speed-up"] = med["tp"] / med["so2"]
    print(res, flush=True)
    return res


def bench_mace(molecules, repeats) -> dict:
    from icml26.qhflow2.mace_peer import MACEConfig, MACEPotential

    out = {}
    for name in molecules:
        g = get_molecule(name)
        lay = OrbitalLayout.for_elements("def2-svp", g.Z)
        pos = torch.tensor(g.R[None])
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            mace = MACEPotential(g.Z, MACEConfig(channels=16), {int(z): 0.0 for z in g.Z}, 0.0, 1.0).eval()
            so2 = build_model("so2", lay.slot_ls, len(g.Z), channels=16, lmax=2, layers=2).eval()
        mace(g.Z, pos)

        def h(so2=so2, g=g, pos=pos):
            with torch.no_grad():
                so2(g.Z, pos.float())

        h()
        med = _median_interleaved({"mace": lambda mace=mace, g=g, pos=pos: mace(g.Z, pos), "so2": h}, repeats)
        out[name] = {
            "atoms": len(g.Z),
            "MACE E + F [ms]": 1e3 * med["mace"],
            "SO(2) H prediction [ms]": 1e3 * med["so2"],
        }
        print(name, out[name], flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/qhflow2_speed.json"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="water only, l_max 2 and 4, one repeat")
    ap.add_argument("--only-mace", action="store_true", help="run (d) alone and merge it into an existing --out")
    args = ap.parse_args()
    torch.set_num_threads(1)
    reps = 1 if args.quick else args.repeats
    if args.only_mace:
        result = json.loads(args.out.read_text()) if args.out.exists() else {}
        result["MACE inference"] = bench_mace(["water"] if args.quick else ["water", "ethanol", "uracil"], max(reps, 5))
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.out}")
        return
    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores, 1 torch thread",
        "energy_forces": bench_energy(["water"] if args.quick else ["water", "ethanol", "uracil"], reps),
        "kernel (C=32, 256 edges)": bench_kernel((2, 4) if args.quick else (2, 4, 6), 32, 256, max(reps, 3)),
        "inference": bench_inference(max(reps, 5)),
        "MACE inference": bench_mace(["water"] if args.quick else ["water", "ethanol", "uracil"], max(reps, 5)),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
