"""QHFlow2 as an ASE calculator: the same numbers as the library, in ASE's units, and clear refusals."""

import numpy as np
import pytest

ase = pytest.importorskip("ase")


@pytest.fixture(scope="module")
def checkpoint(tiny_ds, tmp_path_factory):
    from icml26.qhflow2.train import TrainConfig, save_checkpoint, train_h_model

    model, _ = train_h_model("so2", tiny_ds, TrainConfig(steps=2, batch=4), seed=0, channels=4)
    path = tmp_path_factory.mktemp("ck") / "water.pt"
    save_checkpoint(model, path, tiny_ds)
    return path


def test_calculator_matches_the_library_in_ase_units(checkpoint, tiny_ds):
    from icml26.qhflow2.calculator import QHFlow2Calculator, predict_energy_forces
    from icml26.qhflow2.data import BOHR, HARTREE_EV, Geometry
    from icml26.qhflow2.train import load_checkpoint

    R = tiny_ds.R[3]
    atoms = ase.Atoms(numbers=tiny_ds.Z, positions=R)
    atoms.calc = QHFlow2Calculator(checkpoint)
    energy, forces = atoms.get_potential_energy(), atoms.get_forces()
    E, F = predict_energy_forces(*load_checkpoint(checkpoint), Geometry(tiny_ds.Z, R))
    assert energy == pytest.approx(E * HARTREE_EV, rel=1e-10)
    np.testing.assert_allclose(forces, F * HARTREE_EV / BOHR, rtol=1e-8)
    assert forces.shape == (3, 3) and np.isfinite(forces).all()
    # Newton's third law holds for a gradient of a translation-invariant energy
    np.testing.assert_allclose(forces.sum(axis=0), 0.0, atol=1e-4 * np.abs(forces).max() + 1e-8)


def test_calculator_refuses_what_it_cannot_describe(checkpoint):
    from icml26.qhflow2.calculator import QHFlow2Calculator

    calc = QHFlow2Calculator(checkpoint)
    for atoms, message in (
        (ase.Atoms("NH3", positions=[[0, 0, 0], [0, 0, 1.0], [0, 0.95, -0.3], [0.9, -0.3, -0.3]]), "never saw"),
        (ase.Atoms("H2O", positions=[[0, 0, 0], [0, 0, 0.96], [0, 0.93, -0.24]], pbc=True, cell=[5, 5, 5]), "periodic"),
        (ase.Atoms("H2O", positions=[[0, 0, 0], [0, 0, 0.1], [0, 0.93, -0.24]]), "overlap"),
    ):
        atoms.calc = calc
        with pytest.raises(ValueError, match=message):
            atoms.get_potential_energy()
