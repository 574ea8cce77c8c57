"""Shared test helpers: where the real datasets are, skipping when they are absent, and an
empty data directory (``data_root``) for the tests that write their own tiny datasets.

The real data directory is ``$PRISMLIB_DATA`` when set, else ``<repo>/../shared/data``.
Tests marked ``data`` use the ``real_data_dir`` fixture and ``real_data.need``, which skips a
test (naming the missing file and the fetch command) when its dataset is absent.

Every test starts with ``$PRISMLIB_TEST_THREADS`` torch threads (default 1), whatever ran
before it; a test that changes the count restores it (``one_torch_thread``,
:func:`prismlib.devices.torch_threads`). The flakiness checks of ``docs/testing.md`` run the
suite with 1 and with 2.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_data import REAL_DIR

from prismlib.data import datadir

THREADS_ENV = "PRISMLIB_TEST_THREADS"


@pytest.fixture(scope="session", autouse=True)
def torch_thread_count() -> Iterator[None]:
    """The suite's torch thread count, set once: one by default (tiny matrix products on a
    shared machine are fastest on one thread), ``$PRISMLIB_TEST_THREADS`` for the checks.
    It used to be whatever the first test left (tests/core/test_anneal.py set one for good)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(int(os.environ.get(THREADS_ENV, "1")))
    yield
    torch.set_num_threads(before)


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
