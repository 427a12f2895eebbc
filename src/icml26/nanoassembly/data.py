"""Target structures, random molecule layouts and loaders for a user's site files.

Structures (integer lattice sites ``(x, y)``, y up): ``text`` (5x5 bitmap font), ``lieb`` (the Lieb
lattice, realised with CO on Cu(100) as an artificial electronic lattice), ``corral`` (a quantum corral
ring), ``block`` (a filled rectangle) and ``blob`` (a random compact shape). A spec string selects one:
``text:ICML``, ``lieb:420``, ``corral:60``, ``block:100``, ``blob:200``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: largest structure or molecule count: what plans in about a minute on one core (measured on a loaded core:
#: blob:300 5 s, blob:600 23 s, blob:1000 52 s; the repair rounds grow faster than quadratically: 5,000 did not
#: finish in 10 minutes)
MAX_SITES = 1_000
#: largest surface side in lattice sites (a side x side occupancy grid is allocated)
MAX_SIDE = 4_096

# 5x5 glyphs, top row first; '#' = molecule.
_FONT = {
    "A": ".###.|#...#|#####|#...#|#...#",
    "B": "####.|#...#|####.|#...#|####.",
    "C": ".####|#....|#....|#....|.####",
    "D": "####.|#...#|#...#|#...#|####.",
    "E": "#####|#....|####.|#....|#####",
    "F": "#####|#....|####.|#....|#....",
    "G": ".####|#....|#..##|#...#|.###.",
    "H": "#...#|#...#|#####|#...#|#...#",
    "I": "#####|..#..|..#..|..#..|#####",
    "J": "..###|...#.|...#.|#..#.|.##..",
    "K": "#...#|#..#.|###..|#..#.|#...#",
    "L": "#....|#....|#....|#....|#####",
    "M": "#...#|##.##|#.#.#|#...#|#...#",
    "N": "#...#|##..#|#.#.#|#..##|#...#",
    "O": ".###.|#...#|#...#|#...#|.###.",
    "P": "####.|#...#|####.|#....|#....",
    "Q": ".###.|#...#|#.#.#|#..#.|.##.#",
    "R": "####.|#...#|####.|#..#.|#...#",
    "S": ".####|#....|.###.|....#|####.",
    "T": "#####|..#..|..#..|..#..|..#..",
    "U": "#...#|#...#|#...#|#...#|.###.",
    "V": "#...#|#...#|#...#|.#.#.|..#..",
    "W": "#...#|#...#|#.#.#|##.##|#...#",
    "X": "#...#|.#.#.|..#..|.#.#.|#...#",
    "Y": "#...#|.#.#.|..#..|..#..|..#..",
    "Z": "#####|...#.|..#..|.#...|#####",
    "0": ".###.|#..##|#.#.#|##..#|.###.",
    "1": "..#..|.##..|..#..|..#..|.###.",
    "2": "####.|....#|.###.|#....|#####",
    "3": "####.|....#|.###.|....#|####.",
    "4": "#..#.|#..#.|#####|...#.|...#.",
    "5": "#####|#....|####.|....#|####.",
    "6": ".###.|#....|####.|#...#|.###.",
    "7": "#####|...#.|..#..|.#...|.#...",
    "8": ".###.|#...#|.###.|#...#|.###.",
    "9": ".###.|#...#|.####|....#|.###.",
    " ": ".....|.....|.....|.....|.....",
    "-": ".....|.....|.###.|.....|.....",
}


def text_sites(text: str, scale: int = 1, spacing: int = 1) -> np.ndarray:
    """Sites of ``text`` in the 5x5 font, each pixel a ``scale x scale`` block; shape (K, 2)."""
    if not text:
        raise ValueError("text pattern needs at least one character")
    if scale < 1:
        raise ValueError(f"scale must be >= 1; got {scale}")
    sites = []
    for k, ch in enumerate(text.upper()):
        if ch not in _FONT:
            raise ValueError(f"character {ch!r} is not in the font (A-Z, 0-9, space, '-')")
        for row, line in enumerate(_FONT[ch].split("|")):
            for col, px in enumerate(line):
                if px == "#":
                    for dx in range(scale):
                        for dy in range(scale):
                            sites.append((((5 + spacing) * k + col) * scale + dx, (4 - row) * scale + dy))
    return np.array(sites, dtype=int).reshape(-1, 2)


def lieb_sites(n: int) -> np.ndarray:
    """The ``n`` Lieb-lattice sites (2x2 cell, one corner empty, spacing 2) nearest the origin."""
    m = int(np.ceil(np.sqrt(n))) + 2
    xs, ys = np.meshgrid(np.arange(-2 * m, 2 * m), np.arange(-2 * m, 2 * m), indexing="ij")
    pts = np.stack([xs.ravel(), ys.ravel()], 1)
    keep = ~((pts[:, 0] % 2 == 1) & (pts[:, 1] % 2 == 1))  # remove one site per 2x2 cell
    pts = pts[keep] * 2  # one empty site between molecules (CO-CO repulsion)
    order = np.lexsort((pts[:, 1], pts[:, 0], np.abs(pts).sum(1), np.linalg.norm(pts, axis=1)))
    return pts[order[:n]] - pts[order[:n]].min(0)


def corral_sites(n: int) -> np.ndarray:
    """``n`` sites on a ring (a quantum corral) with about two lattice constants between molecules."""
    if n < 3:
        raise ValueError("a corral needs at least 3 molecules")
    r = max(2.0, n * 2.0 / (2 * np.pi))
    phi = 2 * np.pi * np.arange(n) / n
    pts = np.round(np.stack([r * np.cos(phi), r * np.sin(phi)], 1)).astype(int)
    pts = np.unique(pts, axis=0)
    return pts - pts.min(0)


def block_sites(n: int) -> np.ndarray:
    """A filled near-square block of ``n`` sites."""
    w = int(np.ceil(np.sqrt(n)))
    return np.array([(k % w, k // w) for k in range(n)], dtype=int)


def blob_sites(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random compact shape: ``n`` sites grown from a seed by random accretion."""
    sites, frontier = {(0, 0)}, [(0, 0)]
    while len(sites) < n:
        x, y = frontier[rng.integers(len(frontier))]
        dx, dy = ((1, 0), (-1, 0), (0, 1), (0, -1))[rng.integers(4)]
        if (x + dx, y + dy) not in sites:
            sites.add((x + dx, y + dy))
            frontier.append((x + dx, y + dy))
    pts = np.array(sorted(sites), dtype=int)
    return pts - pts.min(0)


def structure(spec: str, rng: np.random.Generator | None = None) -> np.ndarray:
    """Target sites from a spec string (see module docstring) or a CSV file path."""
    rng = rng if rng is not None else np.random.default_rng(0)
    kind, _, arg = spec.partition(":")
    if kind == "text":
        if len(arg) > 200:
            raise ValueError(f"structure text:...: at most 200 characters; got {len(arg)}")
        return _checked(text_sites(arg), spec)
    if kind in ("lieb", "corral", "block", "blob"):
        try:
            n = int(arg)
        except ValueError:
            raise ValueError(f"structure {spec!r}: expected {kind}:<number of molecules>") from None
        if n < 1:
            raise ValueError(f"structure {spec!r}: the number of molecules must be positive")
        if n > MAX_SITES:
            raise ValueError(f"structure {spec!r}: at most {MAX_SITES:,} molecules (planning cost grows cubically)")
        return (
            {"lieb": lieb_sites, "corral": corral_sites, "block": block_sites}[kind](n)
            if kind != "blob"
            else blob_sites(n, rng)
        )
    if Path(spec).suffix.lower() == ".csv":
        return _checked(load_sites_csv(spec), spec)
    raise ValueError(f"unknown structure {spec!r}; use text:WORD, lieb:N, corral:N, block:N, blob:N or a .csv file")


def _checked(sites: np.ndarray, spec: str) -> np.ndarray:
    """Refuse structures too large to plan or too wide to lay out (before any grid is allocated)."""
    if len(sites) > MAX_SITES:
        raise ValueError(f"structure {spec}: {len(sites):,} sites; at most {MAX_SITES:,} (planning cost)")
    extent = sites.max(0) - sites.min(0) + 1
    if extent.max() > MAX_SIDE:
        raise ValueError(f"structure {spec}: spans {extent.max():,} sites; at most {MAX_SIDE:,} a side")
    return sites


def load_sites_csv(path: str | Path) -> np.ndarray:
    """Read lattice sites from a CSV with columns ``x,y`` (optional header); integer rows only."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a CSV file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text CSV file") from None
    rows = []
    for k, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",")]
        if k == 1 and parts[:2] == ["x", "y"]:
            continue
        if len(parts) != 2:
            raise ValueError(f"{path}:{k}: expected 2 columns x,y; got {len(parts)}")
        try:
            x, y = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(f"{path}:{k}: not a number: {line!r}") from None
        if not (np.isfinite(x) and np.isfinite(y)):
            raise ValueError(f"{path}:{k}: coordinates must be finite numbers; got {line!r}")
        if x != int(x) or y != int(y):
            raise ValueError(f"{path}:{k}: site ({x}, {y}) is off the lattice (coordinates must be integers)")
        if max(abs(x), abs(y)) > 10 * MAX_SIDE:
            raise ValueError(f"{path}:{k}: site ({x:g}, {y:g}) is far outside any surface (at most {MAX_SIDE} a side)")
        rows.append((int(x), int(y)))
    if not rows:
        raise ValueError(f"{path}: no sites")
    return np.array(rows, dtype=int)


def make_instance(
    targets: np.ndarray, n_molecules: int | None = None, density: float = 0.12, margin: int = 4, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Place ``targets`` centred on a square surface and scatter molecules at random free sites.

    Returns ``(starts (M, 2), targets (N, 2), shape)``. The surface side is chosen so that molecules cover
    about ``density`` of the sites; ground truth: every target is reachable and the optimum is known by
    the exact assignment.
    """
    targets = np.asarray(targets, dtype=int)
    n = len(targets)
    m = n if n_molecules is None else int(n_molecules)
    if m < n:
        raise ValueError(f"more targets ({n}) than molecules ({m})")
    if m > MAX_SITES:
        raise ValueError(f"{m:,} molecules; at most {MAX_SITES:,} (planning cost grows cubically)")
    extent = targets.max(0) - targets.min(0) + 1
    side = int(max(np.ceil(np.sqrt((m + n) / density)), extent.max() + 2 * margin))
    if side > MAX_SIDE:
        raise ValueError(f"the surface would need {side:,} sites a side; at most {MAX_SIDE:,}")
    targets = targets - targets.min(0) + (side - extent) // 2
    rng = np.random.default_rng(seed)
    free = np.ones((side, side), dtype=bool)
    free[targets[:, 0], targets[:, 1]] = False
    cand = np.argwhere(free)
    starts = cand[rng.choice(len(cand), size=m, replace=False)]
    return starts, targets, (side, side)


def random_molecules(spec: str, targets: np.ndarray, seed: int = 0):
    """``random:M`` -> :func:`make_instance` with M molecules (M >= number of targets)."""
    kind, _, arg = spec.partition(":")
    if kind != "random":
        raise ValueError(f"molecules spec {spec!r}: use random:<count> or a .csv file")
    try:
        m = int(arg) if arg else len(targets)
    except ValueError:
        raise ValueError(f"molecules spec {spec!r}: the count must be an integer") from None
    if not 1 <= m <= MAX_SITES:
        raise ValueError(f"molecules spec {spec!r}: the count must be in [1, {MAX_SITES:,}]")
    return make_instance(targets, m, seed=seed)
