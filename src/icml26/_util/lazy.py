"""Packages whose public names load on first use (PEP 562), so ``icml26 <id> --help`` imports no torch.

A system's ``__init__`` lists each public name with the module that defines it and ends with
``__getattr__, __dir__ = lazy_exports(__name__, _LAZY)``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_exports(package: str, names: Mapping[str, str]) -> tuple[Callable, Callable]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: ``names`` maps each public name to the
    module defining it, given in full (``icml26.x.y``) or relative to the package (``y``)."""

    def module_of(name: str) -> str:
        module = names[name]
        return module if module.startswith("icml26.") else f"{package}.{module}"

    def __getattr__(name: str):
        if name in names:
            return getattr(import_module(module_of(name)), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
