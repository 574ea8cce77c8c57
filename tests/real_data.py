"""Where the real datasets are for the tests, and skipping a test when they are absent.

The real data directory is ``$PRISMLIB_DATA`` when set, else ``<repo>/../shared/data``.
Tests marked ``data`` (:func:`reads_real_data`) import :data:`REAL_DIR` and :func:`need` from
here (a module of its own: ``from conftest import ...`` is ambiguous once a second
``conftest.py`` (the root's) exists, because ``make test`` collects both folders and the first
``conftest`` imported wins).
"""

from __future__ import annotations

import os
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


def reads_real_data(test):
    """Mark a test that reads the real datasets: ``data`` and ``slow`` (``make test-fast`` leaves
    it out), with ``PRISMLIB_DATA`` pointed at them (the ``real_data_dir`` fixture). Such tests sit
    beside the unit tests of their dataset's module, after them."""
    for mark in (pytest.mark.usefixtures("real_data_dir"), pytest.mark.slow, pytest.mark.data):
        test = mark(test)
    return test
