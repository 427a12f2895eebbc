"""``icml26 qhflow2``: build a PySCF-labelled data set, train a Hamiltonian model or an MLIP, evaluate it through
the energy-force benchmark, predict H, E and F for a geometry.

::

    icml26 qhflow2 build-dataset --molecule water --frames 40 --basis sto-3g --xc hf --out water.npz
    icml26 qhflow2 train --data water.npz --model so2 --steps 300 --out so2.pt
    icml26 qhflow2 evaluate --checkpoint so2.pt --data water.npz --json eval.json
    icml26 qhflow2 predict mol.xyz --checkpoint so2.pt --unit angstrom --out pred.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from icml26._util.cli import ArgumentParser, add_json_argument, bounded_float, bounded_int, learning_rate
from icml26._util.device import add_threads_argument
from icml26._util.io import atomic_output, check_input_file, check_json_output, check_output_path, write_json

MODELS = ("so2", "tp", "mlp", "mlip", "mace")


_temperature = bounded_float(0.0, 3000.0, open_low=True, what="higher temperatures break molecules apart")
_charge = bounded_int(-100, 100, what="a molecule's total charge or 2S")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="icml26 qhflow2", description="Hamiltonian models as energy-force predictors.")
    sub = parser.add_subparsers(dest="verb", required=True)

    b = sub.add_parser(
        "build-dataset",
        help="sample conformations and label them with PySCF (H, S, E, F)",
        description="Reads a built-in molecule (--molecule) or an XYZ file (--xyz), samples conformations, labels "
        "each with PySCF (Hamiltonian H, overlap S, energy E, forces F) and writes the data set (--out, .npz or .h5) "
        "and optionally the first conformation as XYZ (--xyz-out). Example: icml26 qhflow2 build-dataset --molecule "
        "water --frames 40 --basis sto-3g --xc hf --out water.npz",
    )
    b.add_argument(
        "--molecule", default="water", help="water, ethanol, uracil, qm9:<index> or ase:<G2 name> (ignored with --xyz)"
    )
    b.add_argument("--xyz", type=Path, help="start from the geometry in this XYZ file instead of --molecule")
    b.add_argument("--unit", choices=("angstrom", "bohr"), default="angstrom", help="unit of the --xyz coordinates")
    b.add_argument("--frames", type=bounded_int(1, 100000, what="PySCF time"), default=40, help="conformations")
    b.add_argument("--basis", default="sto-3g", help="PySCF basis name (sto-3g, 6-31g, def2-svp, ...)")
    b.add_argument("--xc", default="pbe", help="hf or a PySCF functional (pbe, b3lyp, ...)")
    b.add_argument("--temperature", type=_temperature, default=300.0, help="sampling temperature [K], up to 3000")
    b.add_argument("--method", choices=("normal-modes", "bomd"), default="normal-modes", help="conformation sampler")
    b.add_argument("--charge", type=_charge, default=0, help="total charge (only 0: closed-shell RKS)")
    b.add_argument("--spin", type=_charge, default=0, help="2S (only 0: closed-shell RKS)")
    b.add_argument("--seed", type=bounded_int(0, 2**31 - 1), default=0, help="random seed")
    b.add_argument("--out", type=Path, required=True, help="data set to write (.npz or .h5)")
    b.add_argument("--xyz-out", type=Path, help="also write the first conformation as an XYZ file here (Angstrom)")
    add_json_argument(b, "the data set's size and energy range")

    t = sub.add_parser(
        "train",
        help="train a Hamiltonian model (so2, tp, mlp) or an MLIP on a data set",
        description="Reads a data set written by build-dataset, trains a Hamiltonian model or an MLIP, prints the "
        "final loss and writes the checkpoint (--out, .pt) and a loss-curve summary as JSON (--json). Example: "
        "icml26 qhflow2 train --data water.npz --model so2 --steps 300 --out so2.pt",
    )
    t.add_argument("--data", type=Path, required=True, help="a data set written by build-dataset")
    t.add_argument("--model", choices=MODELS, default="so2",
                   help="SO(2) model, tensor-product / MLP baseline, our MLIP, or MACE (needs mace-torch)")  # fmt: skip
    t.add_argument("--matched", action="store_true",
                   help="tp only: give the tensor-product baseline the SO(2) model's per-l norm and node-conditioned "
                   "radial MLPs (the fair baseline)")  # fmt: skip
    t.add_argument("--edge-update", choices=("so2", "tp"), default="so2",
                   help="so2 only: the second stage of the edge update, an SO(2) layer (default) or the paper's "
                   "tensor product of QHNet-style pair features with the stage-one edge embedding")  # fmt: skip
    t.add_argument(
        "--eps-weight",
        type=bounded_float(0.0, 1e6, what="a loss weight"),
        default=0.0,
        help="so2/tp/mlp: weight of the occupied orbital energies' MSE next to the block MSE (0: off)",
    )
    t.add_argument("--eps-from", type=bounded_float(0.0, 0.99, what="a fraction of the steps"), default=None,
                   help="so2/tp/mlp: switch the orbital-energy term on after this fraction of the steps (0.8: "
                   "fine-tuning over the last 20 %%; default 0)")  # fmt: skip
    t.add_argument(
        "--steps",
        type=bounded_int(1, 1000000, what="0 steps would save an untrained model"),
        default=300,
        help="optimiser steps",
    )
    t.add_argument("--batch", type=bounded_int(1, 1024, what="memory"), default=8, help="frames per step")
    t.add_argument("--lr", type=learning_rate, default=3e-3, help="Adam learning rate")
    t.add_argument("--channels", type=bounded_int(1, 256, what="memory"), default=16, help="channels per l")
    t.add_argument("--lmax", type=bounded_int(1, 6, what="memory"), default=None,
                   help="largest l of the features (default 2; not for mace)")  # fmt: skip
    t.add_argument("--layers", type=bounded_int(1, 8), default=None,
                   help="message-passing layers (default 2; not for mace)")  # fmt: skip
    t.add_argument("--seed", type=bounded_int(0, 2**31 - 1), default=0, help="random seed")
    t.add_argument("--out", type=Path, required=True, help="checkpoint to write (.pt)")
    add_json_argument(t, "the loss curve summary")

    e = sub.add_parser(
        "evaluate",
        help="H / eps / E / F errors of a checkpoint on a data set (the paper's benchmark)",
        description="Reads a checkpoint written by train and a data set, computes the H, orbital-energy, energy "
        "and force errors (E and F through PySCF from the predicted H; an MLIP's E and F directly), prints them and "
        "writes them as JSON (--json). Example: icml26 qhflow2 evaluate --checkpoint so2.pt --data water.npz "
        "--json eval.json",
    )
    e.add_argument("--checkpoint", type=Path, required=True, help="a checkpoint written by train")
    e.add_argument("--data", type=Path, required=True, help="a data set with the checkpoint's basis and elements")
    e.add_argument("--frames", type=bounded_int(1, 100000, what="PySCF time"), help="evaluate the first N frames")
    e.add_argument("--no-forces", action="store_true", help="skip the PySCF gradients")
    add_json_argument(e, "the metrics")

    p = sub.add_parser(
        "predict",
        help="H, E and F for the geometry in an XYZ file",
        description="Reads a checkpoint written by train and the first frame of an XYZ file, prints the predicted "
        "energy [Ha] and forces [Ha/Bohr], and writes H, S, E, F and eps (an MLIP: E and F) as .npz (--out) and "
        "E and F as JSON (--json). Example: icml26 qhflow2 predict mol.xyz --checkpoint so2.pt --unit angstrom "
        "--out pred.npz",
    )
    p.add_argument("xyz", type=Path, help="XYZ file (first frame)")
    p.add_argument("--checkpoint", type=Path, required=True, help="a checkpoint written by train")
    p.add_argument("--unit", choices=("angstrom", "bohr"), default="angstrom", help="unit of the XYZ coordinates")
    p.add_argument("--charge", type=_charge, default=0, help="total charge (only 0: closed-shell RKS)")
    p.add_argument("--spin", type=_charge, default=0, help="2S (only 0: closed-shell RKS)")
    p.add_argument("--out", type=Path, help="write H (PySCF AO order), S, E, F, eps as .npz here")
    add_json_argument(p, "E [Ha] and F [Ha/Bohr]")
    for cpu_only in (t, e, p):  # e3nn models of small molecules beside PySCF on the CPU: one thread unless told
        add_threads_argument(cpu_only, default=1)
    return parser


def _outputs(*paths, json=None) -> None:
    for p in paths:
        if p is not None:
            check_output_path(p)
    check_json_output(json)


def _build(args) -> int:
    from icml26.qhflow2.data import build_dataset, check_geometry, get_molecule, read_xyz

    _outputs(args.out, args.xyz_out, json=args.json)
    if args.out.suffix.lower() not in (".npz", ".h5", ".hdf5"):
        raise ValueError(f"--out {args.out} must end with .npz or .h5")
    if args.xyz is not None:
        check_input_file(args.xyz, what="XYZ file")
        geom = read_xyz(args.xyz, args.unit)
    else:
        geom = get_molecule(args.molecule)
    check_geometry(geom, charge=args.charge, spin=args.spin)
    ds = build_dataset(geom, args.frames, basis=args.basis, xc=args.xc, temperature=args.temperature,
                       method=args.method, seed=args.seed, progress=None)  # fmt: skip
    ds.save(args.out)
    if args.xyz_out is not None:
        from icml26.qhflow2.data import Geometry, write_xyz

        with atomic_output(args.xyz_out) as tmp:
            write_xyz(tmp, Geometry(ds.Z, ds.R[0], geom.name), f"{geom.name} frame 0 (Angstrom)")
    print(f"{len(ds)} frames of {geom.name} ({args.xc}/{args.basis}, nao {ds.H.shape[-1]}); wrote {args.out}")
    energy = {"energy_min": float(ds.E.min()), "energy_max": float(ds.E.max())}
    write_json(args.json, {"molecule": geom.name, "frames": len(ds), "basis": args.basis, "xc": args.xc,
                           "nao": ds.H.shape[-1], **energy})  # fmt: skip
    return 0


def _train(args) -> int:
    import numpy as np
    import torch

    from icml26.qhflow2.data import load_dataset
    from icml26.qhflow2.train import TrainConfig, save_checkpoint, train_h_model, train_mlip

    _outputs(args.out, json=args.json)
    torch.set_num_threads(args.threads)
    ds = load_dataset(args.data)
    if args.matched and args.model != "tp":
        raise ValueError(f"--matched applies to --model tp, not {args.model}")
    if args.edge_update != "so2" and args.model != "so2":
        raise ValueError(f"--edge-update applies to --model so2, not {args.model}")
    if args.eps_weight > 0 and args.model in ("mlip", "mace"):
        raise ValueError(f"--eps-weight applies to Hamiltonian models (so2, tp, mlp), not {args.model}")
    if args.model == "mace":  # MACE's own recipe (mace_peer.MACEConfig): only the width is ours to set
        given = [flag for flag, v in (("--lmax", args.lmax), ("--layers", args.layers), ("--eps-from", args.eps_from))
                 if v is not None]  # fmt: skip
        if given:
            raise ValueError(f"--model mace takes no {', '.join(given)} (MACE's recipe fixes them; it takes "
                             "--channels, --lr, --steps, --batch, --seed)")  # fmt: skip
    tc = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, eps_weight=args.eps_weight,
                     eps_from=args.eps_from or 0.0, progress=None)  # fmt: skip
    kw = {"channels": args.channels, "lmax": args.lmax or 2, "layers": args.layers or 2}
    if args.matched:
        kw["matched"] = True
    if args.model == "so2":
        kw["edge_update"] = args.edge_update
    if args.model == "mlip":
        model, losses = train_mlip(ds, tc, args.seed, **kw)
    elif args.model == "mace":
        from icml26.qhflow2.mace_peer import MACEConfig, train_mace

        try:
            model, losses = train_mace(ds, args.steps, args.batch, args.lr, args.seed,
                                       MACEConfig(channels=args.channels))  # fmt: skip
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    else:
        model, losses = train_h_model(args.model, ds, tc, args.seed, **({} if args.model == "mlp" else kw))
    save_checkpoint(model, args.out, ds, extra={"data": str(args.data), "steps": args.steps})
    last = float(np.mean(losses[-10:])) if losses else float("nan")
    print(f"{args.model} on {len(ds)} frames of {ds.molecule} ({ds.xc}/{ds.basis}): final loss {last:.3g}; "
          f"wrote {args.out}")  # fmt: skip
    write_json(args.json, {"model": args.model, "frames": len(ds), "final_loss": last, "losses": losses[::10]})
    return 0


def _check_compatible(ck, ds, where) -> None:
    from icml26.qhflow2.data import SYMBOLS

    if ck["basis"].lower() != ds.basis.lower():
        raise ValueError(f"the checkpoint is for basis {ck['basis']!r}; {where} uses {ds.basis!r}")
    extra = sorted(set(int(z) for z in ds.Z) - set(ck["elements"]))
    if extra:
        raise ValueError(f"{where} has elements {[SYMBOLS[z] for z in extra]} the checkpoint never saw")
    if ck["kind"] == "mlp" and len(ds.Z) != ck["n_atoms"]:
        raise ValueError(f"the MLP checkpoint is for {ck['n_atoms']} atoms; {where} has {len(ds.Z)}")


def _evaluate(args) -> int:
    import numpy as np
    import torch

    from icml26.qhflow2.data import load_dataset
    from icml26.qhflow2.train import evaluate_h_model, evaluate_mlip, load_checkpoint

    _outputs(json=args.json)
    torch.set_num_threads(args.threads)
    model, ck = load_checkpoint(args.checkpoint)
    ds = load_dataset(args.data)
    _check_compatible(ck, ds, f"data set {args.data}")
    if args.frames:
        ds = ds.subset(np.arange(min(args.frames, len(ds))))
    if ck["kind"] == "mlip":
        res = evaluate_mlip(model, ds)
    elif ck["kind"] == "mace":
        from icml26.qhflow2.mace_peer import evaluate_mace

        res = evaluate_mace(model, ds)
    else:
        res = evaluate_h_model(model, ds, forces=not args.no_forces)
    for k, v in res.items():
        print(f"{k:22s} {v:12.4f}")
    write_json(args.json, {"model": ck["kind"], "frames": len(ds), **res})
    return 0


def _predict(args) -> int:
    import numpy as np
    import torch

    from icml26.qhflow2.data import HamiltonianDataset, check_geometry, read_xyz
    from icml26.qhflow2.energy import HamiltonianEvaluator
    from icml26.qhflow2.train import layout_for, load_checkpoint, predict_h

    _outputs(args.out, json=args.json)
    check_input_file(args.xyz, what="XYZ file")
    torch.set_num_threads(args.threads)
    model, ck = load_checkpoint(args.checkpoint)
    geom = check_geometry(read_xyz(args.xyz, args.unit), charge=args.charge, spin=args.spin)
    empty = np.zeros((0, 1, 1))
    probe = HamiltonianDataset(geom.Z, geom.R[None], empty, empty, np.zeros(1), geom.R[None], ck["basis"], ck["xc"],
                               geom.name)  # fmt: skip
    _check_compatible(ck, probe, f"XYZ file {args.xyz}")
    if ck["kind"] in ("mlip", "mace"):
        e, f = model(geom.Z, torch.tensor(geom.R[None], dtype=torch.float32))
        from icml26.qhflow2.data import BOHR, HARTREE_EV

        shift = float(model.e_shift) if ck["kind"] == "mlip" else 0.0  # MACE's E0s are inside the model
        E = (float(e[0].detach()) + shift) / HARTREE_EV
        F = f[0].detach().double().numpy() * BOHR / HARTREE_EV
        arrays = {"E": np.array(E), "F": F}
    else:
        H = predict_h(model, layout_for(probe), geom.Z, geom.R[None])[0]
        ev = HamiltonianEvaluator(geom.Z, geom.R, ck["basis"], ck["xc"])
        out = ev(H)
        E, F = out.E, out.F
        arrays = {"H": H, "S": ev.S, "E": np.array(E), "F": F, "eps": out.eps}
    print(f"E = {E:.8f} Ha ({ck['kind']}, {ck['xc']}/{ck['basis']})")
    for s, row in zip(geom.symbols, F, strict=True):
        print(f"  F {s:2s} {row[0]:12.6f} {row[1]:12.6f} {row[2]:12.6f} Ha/Bohr")
    if args.out is not None:
        from icml26._util.io import save_npz

        save_npz(args.out, **arrays)
    write_json(args.json, {"E_hartree": E, "F_hartree_per_bohr": np.asarray(F).tolist(), "model": ck["kind"]})
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``icml26 qhflow2``; ValueError/OSError mean bad input (exit 2 via the dispatcher)."""
    args = build_parser().parse_args(argv)
    if getattr(args, "charge", 0) != 0 or getattr(args, "spin", 0) != 0:
        raise ValueError(f"only neutral closed-shell molecules are supported (RKS); got --charge {args.charge} "
                         f"--spin {args.spin}")  # fmt: skip
    verbs = {"build-dataset": _build, "train": _train, "evaluate": _evaluate, "predict": _predict}
    return verbs[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
