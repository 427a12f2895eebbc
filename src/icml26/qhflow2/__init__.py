"""QHFlow2: Machine Learning Hamiltonians are Accurate Energy-Force Predictors (Kim et al., ICML 2026).

An SO(2)-equivariant Hamiltonian model with a two-stage edge update, its QHNet-style tensor-product, MLP and MLIP
comparators, the PySCF data pipeline (H, S, E, F labels for thermal conformations) and the paper's benchmark:
energies and forces computed from a predicted Hamiltonian (generalised eigenproblem -> density -> PySCF
``energy_tot`` and the nuclear gradient at the predicted orbitals). See README.md.
"""

from icml26.qhflow2.calculator import QHFlow2Calculator, geometry_from_atoms
from icml26.qhflow2.data import HamiltonianDataset, build_dataset, get_molecule, load_dataset, read_xyz
from icml26.qhflow2.energy import HamiltonianEvaluator, energy_forces_from_h, solve_generalized
from icml26.qhflow2.model import MLIP, MLPHamiltonianModel, SO2HamiltonianModel, TPHamiltonianModel
from icml26.qhflow2.orbitals import BlockExpansion, OrbitalLayout
from icml26.qhflow2.train import evaluate_h_model, predict_h, train_h_model, train_mlip

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
