"""QHFlow2 inside ASE: ``Atoms`` in, an ASE ``Calculator`` out.

The paper's point is that energies and forces computed *from a predicted Hamiltonian* are accurate. This module
makes a trained checkpoint usable wherever ASE is (geometry optimisation, molecular dynamics, vibrations):

    >>> from ase.build import molecule
    >>> atoms = molecule("H2O")
    >>> atoms.calc = QHFlow2Calculator("h2o.pt")          # a checkpoint written by `icml26 qhflow2 train`
    >>> atoms.get_potential_energy(), atoms.get_forces()    # eV and eV/Angstrom, ASE's units

For a Hamiltonian model the energy is PySCF's ``energy_tot`` at the density of the predicted H's occupied
orbitals and the forces are the nuclear gradient at those orbitals (``energy.HamiltonianEvaluator``); for the
MLIP comparator they are its own outputs. Units: internally Hartree and Bohr, converted to eV and eV/Angstrom.
ASE is optional (``pip install ase``); only this module imports it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from icml26.qhflow2.data import BOHR, HARTREE_EV, SYMBOLS, Geometry, check_geometry

try:
    from ase.calculators.calculator import Calculator, all_changes
except ModuleNotFoundError:  # the calculator needs ASE; geometry_from_atoms works on anything Atoms-like
    Calculator, all_changes = object, ()


def geometry_from_atoms(atoms, name: str = "") -> Geometry:
    """A :class:`Geometry` (Z, R in Angstrom) from an ASE ``Atoms``, checked as the pipeline needs it
    (closed shell, no overlapping atoms, elements H to Ar); periodic cells are refused (molecules only)."""
    if np.any(getattr(atoms, "pbc", False)):
        raise ValueError("QHFlow2 models molecules: periodic Atoms (pbc=True) are not supported")
    Z = np.asarray(atoms.get_atomic_numbers(), dtype=int)
    if len(Z) == 0:
        raise ValueError("the Atoms object has no atoms")
    if Z.min() < 1 or Z.max() >= len(SYMBOLS):
        raise ValueError(f"elements beyond {SYMBOLS[-1]} are not supported")
    geom = Geometry(Z, np.asarray(atoms.get_positions(), dtype=float), name or atoms.get_chemical_formula())
    return check_geometry(geom, charge=round(float(np.sum(atoms.get_initial_charges()))))


def check_compatible(payload: dict, geom: Geometry) -> None:
    """Refuse a molecule the checkpoint cannot describe (unseen elements; another atom count for the MLP)."""
    unseen = sorted(set(int(z) for z in geom.Z) - set(payload["elements"]))
    if unseen:
        raise ValueError(f"the checkpoint never saw the elements {[SYMBOLS[z] for z in unseen]}")
    if payload["kind"] == "mlp" and len(geom.Z) != payload["n_atoms"]:
        raise ValueError(f"the MLP checkpoint is for {payload['n_atoms']} atoms; this molecule has {len(geom.Z)}")


def predict_energy_forces(model, payload: dict, geom: Geometry, *, forces: bool = True) -> tuple[float, np.ndarray]:
    """(E [Ha], F (n, 3) [Ha/Bohr]) of one molecule from a loaded checkpoint (``train.load_checkpoint``)."""
    import torch

    from icml26.qhflow2.energy import HamiltonianEvaluator
    from icml26.qhflow2.orbitals import OrbitalLayout
    from icml26.qhflow2.train import predict_h

    check_compatible(payload, geom)
    if payload["kind"] in ("mlip", "mace"):
        e, f = model(geom.Z, torch.tensor(geom.R[None], dtype=torch.float32))  # MLIP forces come from autograd
        shift = float(model.e_shift) if payload["kind"] == "mlip" else 0.0  # MACE's E0s are inside the model
        E = (float(e[0].detach()) + shift) / HARTREE_EV
        return E, f[0].detach().double().numpy() * BOHR / HARTREE_EV
    layout = OrbitalLayout.for_elements(payload["basis"], geom.Z)
    with torch.no_grad():
        H = predict_h(model, layout, geom.Z, geom.R[None])[0]  # (nao, nao) [Ha]
    out = HamiltonianEvaluator(geom.Z, geom.R, payload["basis"], payload["xc"])(H, forces=forces)
    return out.E, out.F


class QHFlow2Calculator(Calculator):
    """An ASE calculator backed by a QHFlow2 checkpoint: ``energy`` [eV] and ``forces`` [eV/Angstrom].

    Parameters
    ----------
    checkpoint : path of a file written by ``icml26 qhflow2 train`` (or ``train.save_checkpoint``).
    """

    implemented_properties = ("energy", "forces")

    def __init__(self, checkpoint: str | Path, **kwargs):
        if Calculator is object:
            raise ModuleNotFoundError("QHFlow2Calculator needs ASE: pip install ase", name="ase")
        super().__init__(**kwargs)
        from icml26.qhflow2.train import load_checkpoint

        self.model, self.payload = load_checkpoint(checkpoint)

    def calculate(self, atoms=None, properties=("energy",), system_changes=all_changes):
        super().calculate(atoms, properties, system_changes)
        geom = geometry_from_atoms(self.atoms)
        E, F = predict_energy_forces(self.model, self.payload, geom, forces=True)
        self.results["energy"] = E * HARTREE_EV
        self.results["forces"] = np.asarray(F) * HARTREE_EV / BOHR
