"""The PySCF <-> e3nn orbital layout: orthogonality, the exact round trip, and co-rotation of a converged Fock
matrix (the physical ground truth for the convention: rotating the molecule and re-running the SCF must rotate
every block by e3nn's Wigner-D)."""

import numpy as np
import pytest
import torch

from icml26.qhflow2.data import label
from icml26.qhflow2.energy import HamiltonianEvaluator
from icml26.qhflow2.model import wigner_D64
from icml26.qhflow2.orbitals import BlockExpansion, OrbitalLayout, pyscf_to_e3nn


@pytest.mark.parametrize("l", [0, 1, 2, 3])
def test_pyscf_to_e3nn_is_orthogonal_and_p_is_xyz_in_both(l):
    T = pyscf_to_e3nn(l)
    np.testing.assert_allclose(T @ T.T, np.eye(2 * l + 1), atol=1e-12)
    if l == 1:  # measured: both libraries order p as (x, y, z)
        np.testing.assert_allclose(T, np.eye(3), atol=1e-12)


def test_layout_slots_for_sto3g_and_def2svp():
    assert OrbitalLayout.for_elements("sto-3g", [1, 8]).slot_ls == (0, 0, 1)
    lay = OrbitalLayout.for_elements("def2-svp", [1, 6, 8])
    assert lay.slot_ls == (0, 0, 0, 1, 1, 2) and lay.P == 14
    with pytest.raises(ValueError, match="not in this model's basis layout"):
        lay.check_elements([7])


@pytest.mark.parametrize("basis", ["sto-3g", "def2-svp"])
def test_converged_fock_round_trip_reproduces_the_scf_energy(water, basis, request):
    lab = request.getfixturevalue("water_sto3g" if basis == "sto-3g" else "water_svp")
    lay = OrbitalLayout.for_elements(basis, water.Z)
    B = lay.to_blocks(lab["H"], water.Z)
    H2 = lay.from_blocks(B, water.Z)
    np.testing.assert_allclose(H2, lab["H"], atol=1e-13)
    out = HamiltonianEvaluator(water.Z, water.R, basis, "hf")(H2)
    assert abs(out.E - lab["E"]) < 1e-10
    np.testing.assert_allclose(out.F, lab["F"], atol=1e-6)
    _, mask = lay.embedding(water.Z)
    assert np.all(B[..., ~mask[0], :][0] == 0)  # padded slots stay empty


def test_fock_blocks_co_rotate_with_the_molecule(water, water_svp):
    """Physics, not our model: SCF on a rotated water, blocks = D_i H_ij D_j^T with e3nn's D."""
    R = torch.tensor([[0.36, 0.48, -0.8], [-0.8, 0.6, 0.0], [0.48, 0.64, 0.6]], dtype=torch.float64)
    lab_rot = label(water.Z, water.R @ R.numpy().T, "def2-svp", "hf")
    lay = OrbitalLayout.for_elements("def2-svp", water.Z)
    B0 = lay.to_blocks(water_svp["H"], water.Z)
    B1 = lay.to_blocks(lab_rot["H"], water.Z)
    D = torch.block_diag(*[wigner_D64(l, R) for l in lay.slot_ls]).numpy()
    np.testing.assert_allclose(B1, D @ B0 @ D.T, atol=1e-6)


def test_block_expansion_is_orthonormal_and_complete():
    ex = BlockExpansion((0, 0, 1, 2))
    P = ex.P
    np.testing.assert_allclose(ex.matrix @ ex.matrix.T, np.eye(ex.dim), atol=1e-12)
    assert ex.dim == P * P  # every block of the full (P, P) matrix is in the span
    blk = np.random.default_rng(0).normal(size=P * P)
    np.testing.assert_allclose((blk @ ex.matrix.T) @ ex.matrix, blk, atol=1e-12)
    assert ex.e3nn_irreps().startswith("6x0e")  # s-s: 2x2, p-p: 1, d-d: 1
