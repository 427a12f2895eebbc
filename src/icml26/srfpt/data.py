"""Benchmark problems with known ground truth, data sampling, a validated CSV loader, recovery checks.

* Nguyen-1..12 (Uy et al. 2011, the usual GP benchmark) with their usual sampling ranges; Nguyen-11
  (``x^y``) is sampled on [0, 1]^2 (on [-1, 1] it is undefined for negative ``x``).
* A catalogue of textbook physics laws ("Feynman-style"), typed by hand from the physics, each with
  positive variable ranges. Physical constants are kept, so the search must find them by linear scaling.

``size`` is the size (nodes) of one hand-written tree for the formula in our grammar (constant leaf 1,
linear scaling ``a + b f`` free): an upper bound on the smallest tree, which bounds the search needed.
"""

from __future__ import annotations

import csv
import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # sympy is imported where a formula is used, so the problem names load fast (icml26 srfpt --help)
    import sympy

NGUYEN_OPS = ("add", "sub", "mul", "div", "sin", "cos", "exp", "log")
FEYNMAN_OPS = ("add", "sub", "mul", "div", "sqrt", "exp", "cos")


@dataclass(frozen=True)
class Problem:
    """A ground-truth symbolic-regression problem.

    Attributes
    ----------
    name : str
    formula : str
        sympy-parsable formula of the variables in ``ranges``.
    ranges : dict of str to (low, high)
        Uniform sampling range of each variable (order = column order).
    ops : tuple of str
        Primitive set to search with.
    size : int
        Size of a hand-written tree in our grammar (upper bound on the smallest).
    n : int
        Number of training points of the standard setting.
    """

    name: str
    formula: str
    ranges: dict
    ops: tuple
    size: int
    n: int = 20

    @property
    def variables(self) -> list[str]:
        return list(self.ranges)

    @property
    def symbols(self) -> list[sympy.Symbol]:
        """One sympy symbol per variable; positive when its range is (lets sympy see x**y = exp(y log x))."""
        import sympy

        return [sympy.Symbol(v, real=True, positive=True if r[0] >= 0 else None) for v, r in self.ranges.items()]

    @property
    def expression(self) -> sympy.Expr:
        import sympy

        return sympy.sympify(self.formula, locals=dict(zip(self.variables, self.symbols, strict=True)))

    def function(self):
        """Vectorised numpy function of the columns."""
        import sympy

        syms = self.symbols
        f = sympy.lambdify(syms, self.expression, "numpy")
        return lambda X: np.asarray(f(*X.T), dtype=np.float64) * np.ones(len(X))


def _nguyen(i, formula, size, lo=-1.0, hi=1.0, two=False, n=20) -> Problem:
    ranges = {"x": (lo, hi), "y": (lo, hi)} if two else {"x": (lo, hi)}
    return Problem(f"nguyen-{i}", formula, ranges, NGUYEN_OPS, size, n)


NGUYEN: dict[str, Problem] = {
    p.name: p
    for p in [
        _nguyen(1, "x**3 + x**2 + x", 9),  # x*(x*(x+1)+1)
        _nguyen(2, "x**4 + x**3 + x**2 + x", 13),
        _nguyen(3, "x**5 + x**4 + x**3 + x**2 + x", 17),
        _nguyen(4, "x**6 + x**5 + x**4 + x**3 + x**2 + x", 21),
        _nguyen(5, "sin(x**2)*cos(x) - 1", 7),  # sin(x*x)*cos(x), offset by linear scaling
        _nguyen(6, "sin(x) + sin(x + x**2)", 9),  # sin(x) + sin(x*(x+1))
        _nguyen(7, "log(x + 1) + log(x**2 + 1)", 10, 0.0, 2.0),  # log((x+1)*(x*x+1))
        _nguyen(8, "sqrt(x)", 7, 0.0, 4.0),  # exp(log(x)/(1+1))
        _nguyen(9, "sin(x) + sin(y**2)", 7, two=True, n=100),
        _nguyen(10, "2*sin(x)*cos(y)", 5, two=True, n=100),
        _nguyen(11, "x**y", 6, 0.0, 1.0, two=True, n=100),  # exp(y*log(x))
        _nguyen(12, "x**4 - x**3 + y**2/2 - y", 19, two=True, n=100),
    ]
}


def _feyn(name, formula, ranges, size, n=100) -> Problem:
    return Problem(name, formula, ranges, FEYNMAN_OPS, size, n)


R15 = (1.0, 5.0)
FEYNMAN: dict[str, Problem] = {
    p.name: p
    for p in [
        _feyn("kinetic-energy", "m*v**2/2", {"m": R15, "v": R15}, 5),  # m*(v*v)
        _feyn("gravitation", "6.674e-11*m1*m2/r**2", {"m1": R15, "m2": R15, "r": R15}, 7),
        _feyn("coulomb", "8.988e9*q1*q2/r**2", {"q1": R15, "q2": R15, "r": (0.5, 2.0)}, 7),
        _feyn("ideal-gas", "8.314*n*T/V", {"n": R15, "T": R15, "V": R15}, 5),
        _feyn("pendulum-period", "2*pi*sqrt(L/g)", {"L": R15, "g": (9.0, 10.0)}, 4),
        _feyn("lorentz-factor", "1/sqrt(1 - v**2)", {"v": (0.0, 0.9)}, 8),  # 1/sqrt(1-v*v), c = 1
        _feyn("centripetal-force", "m*v**2/r", {"m": R15, "v": R15, "r": R15}, 7),
        _feyn("ohm-power", "V**2/R", {"V": R15, "R": R15}, 5),
        _feyn("spring-energy", "k*x**2/2", {"k": R15, "x": R15}, 5),
        _feyn("photon-energy", "1.986e-25/lam", {"lam": R15}, 3),
        _feyn("radioactive-decay", "N0*exp(-lam*t)", {"N0": R15, "lam": (0.1, 1.0), "t": R15}, 7),
        _feyn("boltzmann-factor", "exp(-E/T)", {"E": R15, "T": R15}, 6),  # 1/exp(E/T)
        _feyn("harmonic-oscillator", "A*cos(w*t)", {"A": R15, "w": R15, "t": R15}, 6),
        _feyn("kepler-third-law", "a**(3/2)", {"a": R15}, 4),  # a*sqrt(a)
        _feyn("escape-velocity", "sqrt(2*6.674e-11*M/r)", {"M": R15, "r": R15}, 4),
        _feyn("gaussian", "exp(-theta**2/2)/sqrt(2*pi)", {"theta": (-3.0, 3.0)}, 7),  # 1/sqrt(exp(t*t))
        _feyn("inverse-square-intensity", "P/(4*pi*r**2)", {"P": R15, "r": R15}, 5),
        _feyn("doppler", "f*c/(c - v)", {"f": R15, "c": (10.0, 20.0), "v": R15}, 7),
        _feyn("thin-lens", "d1*d2/(d1 + d2)", {"d1": R15, "d2": R15}, 7),
        _feyn("de-broglie", "6.626e-34/(m*v)", {"m": R15, "v": R15}, 5),
        _feyn("velocity-addition", "(u + v)/(1 + u*v)", {"u": (0.0, 0.9), "v": (0.0, 0.9)}, 9),
        _feyn("wave-speed", "sqrt(T/mu)", {"T": R15, "mu": (0.1, 1.0)}, 4),
    ]
}

PROBLEMS: dict[str, Problem] = {**NGUYEN, **FEYNMAN}


def get_problem(name: str) -> Problem:
    """Look a problem up by name (``nguyen-1`` .. ``nguyen-12`` or a Feynman-catalogue name)."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown problem {name!r}; known: {', '.join(PROBLEMS)}")
    return PROBLEMS[name]


def sample(problem: Problem, n: int | None = None, *, noise: float = 0.0, seed: int = 0):
    """Draw ``X ~ U(ranges)`` and ``y = f(X) + noise * std(f(X)) * N(0, 1)``.

    Parameters
    ----------
    problem : Problem
    n : int, optional
        Number of points (default ``problem.n``).
    noise : float
        Relative noise level (0, 0.01, 0.1 in the issue).
    seed : int

    Returns
    -------
    X : ndarray of shape (n, v)
    y : ndarray of shape (n,)
    """
    n = problem.n if n is None else int(n)
    if n < 2:
        raise ValueError(f"n must be >= 2; got {n}")
    if noise < 0 or not np.isfinite(noise):
        raise ValueError(f"noise must be a finite non-negative level; got {noise}")
    rng = np.random.default_rng(seed)
    lo = np.array([r[0] for r in problem.ranges.values()])
    hi = np.array([r[1] for r in problem.ranges.values()])
    X = rng.uniform(lo, hi, size=(n, len(lo)))
    y = problem.function()(X)
    if noise > 0:
        y = y + noise * np.std(y) * rng.standard_normal(n)
    return X, y


def symbolic_match(model: sympy.Expr, truth: sympy.Expr, rel_tol: float = 1e-6) -> bool:
    """Is ``model`` the ground truth? ``model/truth`` simplifies to a constant within ``rel_tol`` of 1, or
    ``model - truth`` simplifies to a constant within ``rel_tol`` of 0 (constants found numerically)."""
    import sympy

    by_name = {s.name: s for s in truth.free_symbols}
    model = model.xreplace({s: by_name.get(s.name, s) for s in model.free_symbols})
    if model.free_symbols - truth.free_symbols:
        return False
    for expr, target in ((model / truth, 1.0), (model - truth, 0.0)):
        try:
            d = sympy.simplify(expr)
        except Exception:  # sympy can fail on exotic forms; then it is not shown equal
            continue
        if not d.free_symbols:
            try:
                value = complex(d)
            except TypeError:
                continue
            if abs(value - target) <= rel_tol:
                return True
    return False


def numeric_match(predict, problem: Problem, *, n: int = 2000, rel_tol: float = 1e-6, seed: int = 12345) -> bool:
    """Dense held-out check: ``max |pred - f| <= rel_tol * max|f|`` on fresh points of the problem's range."""
    X, y = sample(problem, n, seed=seed)
    with np.errstate(all="ignore"):
        pred = np.asarray(predict(X), dtype=np.float64)
    return bool(np.isfinite(pred).all() and np.max(np.abs(pred - y)) <= rel_tol * np.max(np.abs(y)))


def load_csv(path: str | Path, target: str):
    """Read a numeric CSV (or PMLB's tab-separated ``.tsv``/``.tsv.gz``) with a header row; return ``X, y, names``.

    The delimiter follows the suffix (``.tsv`` or ``.tsv.gz``: tab; otherwise comma); a ``.gz`` file is
    decompressed. Everything is validated.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        No header, missing target column, non-numeric or non-finite cells, fewer than 2 rows.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a CSV file")
    suffixes = [x.lower() for x in path.suffixes]
    delimiter = "\t" if ".tsv" in suffixes else ","
    try:
        opener = gzip.open if suffixes[-1:] == [".gz"] else open
        with opener(path, "rt", newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.reader(fh, delimiter=delimiter) if r and any(c.strip() for c in r)]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text {'TSV' if delimiter == chr(9) else 'CSV'} file") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ValueError(f"{path}: not a readable gzip file ({exc})") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: malformed CSV ({exc})") from None
    if len(rows) < 3:
        found = "no rows" if not rows else f"a header and {len(rows) - 1} data row{'s' * (len(rows) != 2)}"
        raise ValueError(f"{path}: need a header and at least 2 data rows; found {found}")
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise ValueError(f"{path}: duplicate column names in the header {header}")
    if target not in header:
        raise ValueError(f"{path}: target column {target!r} not found; columns: {', '.join(header)}")
    data = []
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}:{lineno}: {len(row)} cells, header has {len(header)}")
        try:
            data.append([float(c) for c in row])
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: non-numeric cell ({exc})") from None
    arr = np.array(data)
    if not np.isfinite(arr).all():
        bad = sorted({header[j] for j in np.flatnonzero(~np.isfinite(arr).all(axis=0))})
        raise ValueError(f"{path}: NaN or inf in column(s) {', '.join(bad)}")
    t = header.index(target)
    names = [h for j, h in enumerate(header) if j != t]
    if not names:
        raise ValueError(f"{path}: no input column besides the target {target!r}")
    bad_names = [h for h in names if not h.isidentifier()]
    if bad_names:
        raise ValueError(f"{path}: column names must be identifiers; got {bad_names}")
    return np.delete(arr, t, axis=1), arr[:, t], names


# --- real data: PMLB regression sets --------------------------------------------------------------------

#: PMLB sets bundled in ``srfpt/pmlb/`` (MIT; see its README): short name -> file.
PMLB_DIR = Path(__file__).parent / "pmlb"
PMLB_SETS = {
    "vineyard": "192_vineyard.tsv.gz",
    "esl": "1027_ESL.tsv.gz",
    "pollen": "529_pollen.tsv.gz",
    "cpu_act": "197_cpu_act_1000.tsv.gz",  # 1000 of the 8192 rows; all 21 features
}


def load_pmlb(name_or_path: str | Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A PMLB regression set as ``X (n, v), y (n,), feature names``.

    Parameters
    ----------
    name_or_path : str or Path
        A bundled set (``vineyard``, ``esl``, ``pollen``, ``cpu_act``; PMLB's ``192_vineyard`` spelling works
        too) or the path of any PMLB ``.tsv.gz`` / ``.tsv`` file (PMLB's format: tab-separated, header row, target
        column ``target``), e.g. the full ``197_cpu_act.tsv.gz`` of a PMLB checkout.
    """
    key = str(name_or_path).lower()
    key = key.split("_", 1)[1] if key.split("_", 1)[0].isdigit() and "/" not in key else key
    if key in PMLB_SETS:
        return load_csv(PMLB_DIR / PMLB_SETS[key], "target")
    path = Path(name_or_path)
    if not path.exists():
        raise ValueError(f"{name_or_path!r} is neither a bundled PMLB set ({', '.join(PMLB_SETS)}) nor a file")
    return load_csv(path, "target")


def heldout_split(n: int, test_fraction: float = 0.25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(train, test)`` of a random held-out split, fixed by ``seed`` before any search runs."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    n_test = round(test_fraction * n)
    if n_test < 2 or n - n_test < 2:
        raise ValueError(f"a {test_fraction:g} held-out split of {n} rows leaves fewer than 2 rows on one side")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])
