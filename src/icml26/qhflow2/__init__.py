"""QHFlow2: Machine Learning Hamiltonians are Accurate Energy-Force Predictors (Kim et al., ICML 2026).

An SO(2)-equivariant Hamiltonian model with a two-stage edge update, its QHNet-style tensor-product, MLP and MLIP
comparators, the PySCF data pipeline (H, S, E, F labels for thermal conformations) and the paper's benchmark:
energies and forces computed from a predicted Hamiltonian (generalised eigenproblem -> density -> PySCF
``energy_tot`` and the nuclear gradient at the predicted orbitals). See README.md.
"""

from icml26._util.lazy import lazy_exports

__all__ = [
    "MLIP",
    "BlockExpansion",
    "HamiltonianDataset",
    "HamiltonianEvaluator",
    "MLPHamiltonianModel",
    "OrbitalLayout",
    "QHFlow2Calculator",
    "SO2HamiltonianModel",
    "TPHamiltonianModel",
    "build_dataset",
    "energy_forces_from_h",
    "evaluate_h_model",
    "geometry_from_atoms",
    "get_molecule",
    "load_dataset",
    "predict_h",
    "read_xyz",
    "solve_generalized",
    "train_h_model",
    "train_mlip",
]

# Each public name and the module defining it: imported on first use, so `icml26 <id> --help` and the
# CLI's parser never load torch (PEP 562).
_LAZY = {
    "BlockExpansion": "icml26.qhflow2.orbitals",
    "HamiltonianDataset": "icml26.qhflow2.data",
    "HamiltonianEvaluator": "icml26.qhflow2.energy",
    "MLIP": "icml26.qhflow2.model",
    "MLPHamiltonianModel": "icml26.qhflow2.model",
    "OrbitalLayout": "icml26.qhflow2.orbitals",
    "QHFlow2Calculator": "icml26.qhflow2.calculator",
    "SO2HamiltonianModel": "icml26.qhflow2.model",
    "TPHamiltonianModel": "icml26.qhflow2.model",
    "build_dataset": "icml26.qhflow2.data",
    "energy_forces_from_h": "icml26.qhflow2.energy",
    "evaluate_h_model": "icml26.qhflow2.train",
    "geometry_from_atoms": "icml26.qhflow2.calculator",
    "get_molecule": "icml26.qhflow2.data",
    "load_dataset": "icml26.qhflow2.data",
    "predict_h": "icml26.qhflow2.train",
    "read_xyz": "icml26.qhflow2.data",
    "solve_generalized": "icml26.qhflow2.energy",
    "train_h_model": "icml26.qhflow2.train",
    "train_mlip": "icml26.qhflow2.train",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
