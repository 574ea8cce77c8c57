"""Shared test helpers: where the real datasets are, and skipping when they are absent.

The real data directory is ``$PRISMLIB_DATA`` when set, else ``<repo>/../shared/data``.
Tests marked ``data`` use the ``real_data_dir`` fixture and :func:`need`, which skips a
test (naming the missing file and the fetch command) when its dataset is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from prismlib.data import registry

_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL_DIR = Path(os.environ[registry.ENV_VAR]) if os.environ.get(registry.ENV_VAR) else _SHARED


def need(*relpaths: str) -> None:
    """Skip the test unless every file is in the real data directory."""
    for rel in relpaths:
        if not (REAL_DIR / rel).is_file():
            ds = registry.dataset_of(rel)
            hint = f"; `python -m prismlib data fetch {ds.name}`" if ds else ""
            pytest.skip(f"real data file {REAL_DIR / rel} absent (set PRISMLIB_DATA{hint})")


@pytest.fixture(scope="module")
def real_data_dir() -> Iterator[Path]:
    """Point PRISMLIB_DATA at the real data for a module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(registry.ENV_VAR, str(REAL_DIR))
        yield REAL_DIR


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module of tiny matrix products: fastest, and immune to a busy
    machine (two threads contending for a loaded core can be 100x slower)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
