"""The paper's benchmark: energies and forces computed *from a predicted Hamiltonian* (float64, PySCF).

Per geometry (section "direct evaluation" of the paper):

1. S from PySCF; H (PySCF AO order, Hartree) from the model;
2. H C = S C eps solved by a regularised Loewdin orthogonalisation: S = V s V^T, eigenvalues s < ``s_tol`` are
   dropped (logged), X = V_keep s_keep^(-1/2), eigh(X^T H X) -> eps, C = X C';
3. D = 2 C_occ C_occ^T with n_occ = N_electrons / 2 (closed shell);
4. E = ``mf.energy_tot(dm=D)`` - the SCF energy functional (RHF or RKS) at the non-self-consistent density D;
   it is variational: E[D] >= E_SCF for every idempotent D with the right electron count, and its error is second
   order in the error of H around the converged Fock matrix;
5. F = -``mf.nuc_grad_method().kernel(mo_energy=eps, mo_coeff=C, mo_occ=occ)`` - PySCF's analytic SCF gradient
   formula (Hellmann-Feynman + Pulay terms with the energy-weighted density from eps, C) evaluated at the
   predicted orbitals. It is *not* the exact derivative of E[D(H)] (the orbital response term is missing for a
   non-SCF density), so its error is first order in the error of H - the protocol, not a bug.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from icml26.qhflow2.data import BOHR, HARTREE_EV, make_mf, make_mol

log = logging.getLogger(__name__)


def solve_generalized(H: np.ndarray, S: np.ndarray, s_tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """Orbital energies eps (k,) and coefficients C (nao, k) of H C = S C eps, float64, k = kept S eigenvalues."""
    H = 0.5 * (H + H.T)
    s, V = np.linalg.eigh(0.5 * (S + S.T))
    keep = s > s_tol
    if not keep.all():
        log.info("overlap: dropped %d eigenvalues below %.1e (near-linear dependence)", int((~keep).sum()), s_tol)
    X = V[:, keep] / np.sqrt(s[keep])
    eps, Cp = np.linalg.eigh(X.T @ H @ X)
    return eps, X @ Cp


@dataclass
class EnergyForces:
    """E [Ha], F (n, 3) [Ha/Bohr], orbital energies eps (nao,) [Ha], density D, coefficients C; timings [s]."""

    E: float
    F: np.ndarray
    eps: np.ndarray
    D: np.ndarray
    C: np.ndarray
    t_energy: float = 0.0
    t_forces: float = 0.0


class HamiltonianEvaluator:
    """E and F from H for one molecule (one PySCF ``Mole`` and SCF object, reused across calls)."""

    def __init__(self, Z, R, basis: str, xc: str):
        self.mol = make_mol(Z, R, basis)
        self.mf = make_mf(self.mol, xc)
        self.S = self.mol.intor("int1e_ovlp")
        self.n_occ = self.mol.nelectron // 2

    def __call__(self, H: np.ndarray, forces: bool = True) -> EnergyForces:
        t0 = time.perf_counter()
        H = np.asarray(H, np.float64)
        if H.shape != self.S.shape:
            raise ValueError(f"H has shape {H.shape}, the basis of this molecule needs {self.S.shape}")
        if not np.isfinite(H).all():
            raise ValueError("H contains NaN or inf")
        eps, C = solve_generalized(H, self.S)
        occ = np.zeros(len(eps))
        occ[: self.n_occ] = 2.0
        D = (C[:, : self.n_occ] * 2.0) @ C[:, : self.n_occ].T
        E = float(self.mf.energy_tot(dm=D))
        t1 = time.perf_counter()
        F = np.full((self.mol.natm, 3), np.nan)
        if forces:
            F = -self.mf.nuc_grad_method().kernel(mo_energy=eps, mo_coeff=C, mo_occ=occ)
        return EnergyForces(E, F, eps, D, C, t1 - t0, time.perf_counter() - t1)


def energy_forces_from_h(Z, R, H, *, basis: str, xc: str, forces: bool = True) -> EnergyForces:
    """One-shot :class:`HamiltonianEvaluator` (see the module docstring for exactly what is evaluated)."""
    return HamiltonianEvaluator(Z, R, basis, xc)(H, forces=forces)


def metrics(pred: list[EnergyForces], H_pred, ds, n_occ: int) -> dict[str, float]:
    """H MAE [uHa], occupied-orbital-energy MAE [meV], E MAE [meV], F MAE [meV/A] against the SCF labels."""
    H_pred = np.asarray(H_pred)
    eps_ref = [solve_generalized(h, s)[0][:n_occ] for h, s in zip(ds.H, ds.S, strict=True)]
    E = np.array([p.E for p in pred])
    F = np.array([p.F for p in pred])
    return {
        "H MAE [uHa]": float(np.abs(H_pred - ds.H).mean() * 1e6),
        "eps_occ MAE [meV]": float(np.mean([np.abs(p.eps[:n_occ] - e).mean() for p, e in zip(pred, eps_ref,
                                                                                              strict=True)])
                                   * HARTREE_EV * 1e3),
        "E MAE [meV]": float(np.abs(E - ds.E).mean() * HARTREE_EV * 1e3),
        "F MAE [meV/A]": float(np.abs(F - ds.F).mean() * HARTREE_EV * 1e3 / BOHR),
    }  # fmt: skip


def noise_response(Z, R, H0, *, basis: str, xc: str, sigmas, draws: int, rng: np.random.Generator,
                   ref: EnergyForces | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """Symmetric Gaussian noise of size sigma [Ha] added to H0: |dE| [meV], dE (signed) and F MAE [meV/A]
    relative to the E, F evaluated at H0 itself (each (len(sigmas), draws))."""
    ev = HamiltonianEvaluator(Z, R, basis, xc)
    ref = ref or ev(H0)
    n = H0.shape[0]
    dE = np.zeros((len(sigmas), draws))
    dF = np.zeros((len(sigmas), draws))
    for a, sig in enumerate(sigmas):
        for k in range(draws):
            N = rng.standard_normal((n, n)) * sig
            out = ev(H0 + 0.5 * (N + N.T))
            dE[a, k] = (out.E - ref.E) * HARTREE_EV * 1e3
            dF[a, k] = np.abs(out.F - ref.F).mean() * HARTREE_EV * 1e3 / BOHR
    return {"dE": dE, "dF": dF}
