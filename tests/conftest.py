"""Shared test helpers: where the real datasets are, skipping when they are absent, and an
empty data directory (``data_root``) for the tests that write their own tiny datasets.

The real data directory is ``$PRISMLIB_DATA`` when set, else ``<repo>/../shared/data``.
Tests marked ``data`` use the ``real_data_dir`` fixture and :func:`need`, which skips a
test (naming the missing file and the fetch command) when its dataset is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from prismlib.data import catalogue, datadir

_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL_DIR = Path(os.environ[datadir.ENV_VAR]) if os.environ.get(datadir.ENV_VAR) else _SHARED


def need(*relpaths: str) -> None:
    """Skip the test unless every file is in the real data directory."""
    for rel in relpaths:
        if not (REAL_DIR / rel).is_file():
            ds = catalogue.dataset_of(rel)
            hint = f"; `python -m prismlib data fetch {ds.name}`" if ds else ""
            pytest.skip(f"real data file {REAL_DIR / rel} absent (set PRISMLIB_DATA{hint})")


@pytest.fixture(scope="module")
def real_data_dir() -> Iterator[Path]:
    """Point PRISMLIB_DATA at the real data for a module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(datadir.ENV_VAR, str(REAL_DIR))
        yield REAL_DIR


@pytest.fixture
def data_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data directory set as PRISMLIB_DATA; the repo root moved into tmp."""
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv(datadir.ENV_VAR, str(root))
    monkeypatch.setattr(datadir, "REPO_ROOT", tmp_path / "repo")
    return root


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One torch thread for a module of tiny matrix products: fastest, and immune to a busy
    machine (two threads contending for a loaded core can be 100x slower)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
