"""Lazy re-exports for the packages' ``__init__`` (PEP 562): ``from prismlib.lstm import LSTMLM``
imports only the module that defines ``LSTMLM``, so the core (filters, prism layer, LSTM
model) needs torch, numpy and scipy only, and the heavier modules load when used."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` whose submodule ``m`` defines the
    names ``exports[m]``; a submodule itself is an attribute too (``prismlib.lstm.model``).
    A name exported by two submodules is an error (a package has one meaning per name)."""
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported by both {where[name]} and {module}")
            where[name] = module
    clash = set(where) & set(exports)
    if clash:
        raise ValueError(f"{package}: {sorted(clash)} name both a submodule and a name in it; rename the module")

    def __getattr__(name: str) -> Any:
        if name in exports:
            return importlib.import_module(f"{package}.{name}")
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    def __dir__() -> list[str]:
        return sorted([*where, *exports])

    return __getattr__, __dir__, sorted(where)
