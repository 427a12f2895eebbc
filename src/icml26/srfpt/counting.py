"""Exact counts of expression trees: closed-form recurrences and explicit enumeration.

Size convention: the size of a tree is its number of nodes (leaves included); a leaf is a variable or a
constant. Depth convention: a leaf has depth 0. With ``L`` leaf symbols, ``U`` unary and ``B`` binary
operators, the number of labelled trees of size exactly ``s`` is (the FPT-in-size bound of the paper is
that this is finite for fixed ``s``, whatever the data size ``n``)

    N(1) = L,    N(s) = U N(s-1) + B sum_{i+j=s-1} N(i) N(j)          (Eq. C1)

and the number of trees of depth at most ``D`` is (FPT in depth)

    T(0) = L,    T(D) = L + U T(D-1) + B T(D-1)^2                       (Eq. C2)

which is at most ``(L + U + B)^(2^(D+1) - 1)`` (a tree of depth ``D`` has at most ``2^(D+1) - 1`` nodes,
each labelled by one of ``L + U + B`` symbols).
"""

from __future__ import annotations

from collections.abc import Iterator

Tree = tuple  # ("leaf", k) | ("u", op, child) | ("b", op, left, right)


def count_trees_by_size(max_size: int, n_leaves: int, n_unary: int, n_binary: int) -> list[int]:
    """Number of labelled trees of size exactly ``s`` for ``s = 0 .. max_size`` (Eq. C1; ``N(0) = 0``).

    Parameters
    ----------
    max_size : int
        Largest size (number of nodes), >= 1.
    n_leaves, n_unary, n_binary : int
        ``L`` (variables + constants), ``U`` and ``B``.

    Returns
    -------
    list of int of length ``max_size + 1`` (exact Python integers).
    """
    _check_counts(max_size, n_leaves, n_unary, n_binary, what="max_size", low=1)
    counts = [0] * (max_size + 1)
    counts[1] = n_leaves
    for s in range(2, max_size + 1):
        pairs = sum(counts[i] * counts[s - 1 - i] for i in range(1, s - 1))
        counts[s] = n_unary * counts[s - 1] + n_binary * pairs
    return counts


def count_trees_by_depth(max_depth: int, n_leaves: int, n_unary: int, n_binary: int) -> list[int]:
    """Number of labelled trees of depth **at most** ``D`` for ``D = 0 .. max_depth`` (Eq. C2)."""
    _check_counts(max_depth, n_leaves, n_unary, n_binary, what="max_depth", low=0)
    counts = [n_leaves]
    for _ in range(max_depth):
        prev = counts[-1]
        counts.append(n_leaves + n_unary * prev + n_binary * prev * prev)
    return counts


def depth_count_bound(depth: int, n_leaves: int, n_unary: int, n_binary: int) -> int:
    """The crude FPT bound ``(L + U + B)^(2^(D+1) - 1)`` on trees of depth at most ``D``."""
    _check_counts(depth, n_leaves, n_unary, n_binary, what="depth", low=0)
    return (n_leaves + n_unary + n_binary) ** (2 ** (depth + 1) - 1)


def iter_trees_by_size(size: int, n_leaves: int, n_unary: int, n_binary: int) -> Iterator[Tree]:
    """Yield every labelled tree of size exactly ``size`` as nested tuples (slow, obvious enumeration)."""
    if size == 1:
        for k in range(n_leaves):
            yield ("leaf", k)
        return
    for op in range(n_unary):
        for child in iter_trees_by_size(size - 1, n_leaves, n_unary, n_binary):
            yield ("u", op, child)
    for op in range(n_binary):
        for i in range(1, size - 1):
            for left in iter_trees_by_size(i, n_leaves, n_unary, n_binary):
                for right in iter_trees_by_size(size - 1 - i, n_leaves, n_unary, n_binary):
                    yield ("b", op, left, right)


def iter_trees_by_depth(depth: int, n_leaves: int, n_unary: int, n_binary: int) -> Iterator[Tree]:
    """Yield every labelled tree of depth at most ``depth`` (slow, obvious enumeration)."""
    for k in range(n_leaves):
        yield ("leaf", k)
    if depth == 0:
        return
    smaller = list(iter_trees_by_depth(depth - 1, n_leaves, n_unary, n_binary))
    for op in range(n_unary):
        for child in smaller:
            yield ("u", op, child)
    for op in range(n_binary):
        for left in smaller:
            for right in smaller:
                yield ("b", op, left, right)


def _check_counts(bound: int, n_leaves: int, n_unary: int, n_binary: int, *, what: str, low: int) -> None:
    if int(bound) != bound or bound < low:
        raise ValueError(f"{what} must be an integer >= {low}; got {bound!r}")
    for name, value in (("n_leaves", n_leaves), ("n_unary", n_unary), ("n_binary", n_binary)):
        if int(value) != value or value < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    if n_leaves == 0:
        raise ValueError("there must be at least one leaf symbol (a variable or a constant)")
