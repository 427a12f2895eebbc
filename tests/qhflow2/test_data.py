"""Geometries, XYZ input in either unit, the bad geometries the issue names, sampling and the data-set files."""

import numpy as np
import pytest

from icml26.qhflow2.data import (
    BOHR,
    Geometry,
    check_geometry,
    get_molecule,
    load_dataset,
    make_mol,
    read_xyz,
    thermal_frames,
    write_xyz,
)


def test_named_molecules_are_sane():
    for name in ("water", "ethanol", "uracil"):
        g = check_geometry(get_molecule(name))
        assert len(g.Z) == len(g.R)
    w = get_molecule("water")
    assert np.isclose(np.linalg.norm(w.R[1] - w.R[0]), 0.9572)


def test_xyz_round_trip_and_units(tmp_path, water):
    p = tmp_path / "w.xyz"
    write_xyz(p, water, "water")
    g = read_xyz(p)
    np.testing.assert_allclose(g.R, water.R, atol=1e-9)
    assert list(g.Z) == [8, 1, 1]
    np.testing.assert_allclose(read_xyz(p, "bohr").R, water.R * BOHR, atol=1e-9)
    with pytest.raises(ValueError, match="overlap"):  # Angstrom coordinates read as Bohr: squeezed
        check_geometry(read_xyz(p, "bohr"))
    write_xyz(p, Geometry(water.Z, water.R / BOHR))  # Bohr coordinates read as Angstrom: stretched
    with pytest.raises(ValueError, match="Bohr read as Angstrom"):
        check_geometry(read_xyz(p))


def test_bad_geometries_named_by_the_issue(tmp_path, water):
    with pytest.raises(ValueError, match="open-shell"):
        check_geometry(Geometry(np.array([8, 1]), water.R[:2]))
    with pytest.raises(ValueError, match="closed-shell"):
        check_geometry(water, charge=1)
    with pytest.raises(ValueError, match="cannot be built"):
        make_mol([18, 18], [[0, 0, 0], [0, 0, 3.0]], "6-31g**x")
    p = tmp_path / "x.xyz"
    p.write_text("1\n\nXx 0 0 0\n")
    with pytest.raises(ValueError, match="unknown element"):
        read_xyz(p)


def test_thermal_frames_scatter_around_the_geometry(water):
    frames = thermal_frames(water, 50, 300.0, np.random.default_rng(0))
    assert frames.shape == (50, 3, 3)
    d = np.linalg.norm(frames[:, 1] - frames[:, 0], axis=1)
    assert 0.005 < d.std() < 0.05 and abs(d.mean() - 0.9572) < 0.03


@pytest.mark.parametrize("suffix", [".npz", ".h5"])
def test_dataset_files_round_trip_and_reject_garbage(tmp_path, tiny_ds, suffix):
    p = tmp_path / f"d{suffix}"
    tiny_ds.save(p)
    back = load_dataset(p)
    np.testing.assert_array_equal(back.H, tiny_ds.H)
    assert (back.basis, back.xc, back.molecule) == ("sto-3g", "hf", "water")
    bad = tmp_path / f"bad{suffix}"
    bad.write_bytes(b"\x00garbage" * 20)
    with pytest.raises(ValueError, match="not a qhflow2 data set"):
        load_dataset(bad)


def test_bomd_frames_move_the_atoms_a_little(water):
    from icml26.qhflow2.data import bomd_frames

    frames = bomd_frames(water, 2, 300.0, np.random.default_rng(0), basis="sto-3g", xc="hf", stride=1)
    assert frames.shape == (2, 3, 3) and np.isfinite(frames).all()
    step = np.abs(frames - water.R).max()
    assert 1e-5 < step < 0.05  # 0.5 fs steps at 300 K move atoms by ~1e-3 A


def test_ase_g2_molecules_by_name():
    pytest.importorskip("ase")
    from icml26.qhflow2.data import get_molecule

    g = get_molecule("ase:CH3CH2OH")
    assert sorted(g.Z.tolist()) == [1] * 6 + [6, 6, 8] and g.R.shape == (9, 3)
    with pytest.raises(ValueError, match="G2"):
        get_molecule("ase:NotAMolecule")
