"""The data directory and locate (prismlib.data.datadir), on tiny files the tests write.

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` (the ``data_root``
fixture of ``tests/conftest.py``) so that a real ``<repo>/data`` never leaks into a test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prismlib.data import datadir
from prismlib.data.datadir import DataNotFoundError


def test_data_dir_env_and_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(datadir.ENV_VAR, raising=False)
    monkeypatch.setattr(datadir, "REPO_ROOT", tmp_path / "repo")
    assert datadir.data_dir() == tmp_path / "repo" / "data"
    # the Makefile's rule: the offline copy beside the checkout when it has its SHA256SUMS
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert datadir.data_dir() == tmp_path / "repo" / "data"
    (tmp_path / "shared" / "data" / "SHA256SUMS").write_text("")
    assert datadir.data_dir() == tmp_path / "shared" / "data"
    monkeypatch.setenv(datadir.ENV_VAR, str(tmp_path))
    assert datadir.data_dir() == tmp_path


def test_relative_data_dir_cwd_then_repo_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(datadir, "REPO_ROOT", tmp_path / "repo")
    (tmp_path / "work" / "notebooks").mkdir(parents=True)
    (tmp_path / "work" / "copy").mkdir()
    monkeypatch.setenv(datadir.ENV_VAR, "copy")
    monkeypatch.chdir(tmp_path / "work")
    assert datadir.data_dir().resolve() == tmp_path / "work" / "copy"
    monkeypatch.chdir(tmp_path / "work" / "notebooks")
    assert datadir.data_dir() == tmp_path / "repo" / "copy"


def test_locate_finds_env_then_repo_data(data_root: Path, tmp_path: Path) -> None:
    repo_copy = tmp_path / "repo" / "data" / "ptb" / "ptb.test.txt"
    repo_copy.parent.mkdir(parents=True)
    repo_copy.write_text("a b\n")
    assert datadir.locate("ptb/ptb.test.txt") == repo_copy
    env_copy = data_root / "ptb" / "ptb.test.txt"
    env_copy.parent.mkdir()
    env_copy.write_text("a b\n")
    assert datadir.locate("ptb/ptb.test.txt") == env_copy


def test_locate_error_names_file_places_and_command(data_root: Path, tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError) as info:
        datadir.locate("swb1_dialogact_annot.tar.gz", "swda")
    assert isinstance(info.value, FileNotFoundError)
    msg = str(info.value)
    assert "swb1_dialogact_annot.tar.gz" in msg
    assert str(data_root / "swb1_dialogact_annot.tar.gz") in msg
    assert str(tmp_path / "repo" / "data" / "swb1_dialogact_annot.tar.gz") in msg
    assert "python -m prismlib data fetch swda" in msg
    assert "PRISMLIB_DATA" in msg
    # without the dataset's name the error points at the list of datasets
    with pytest.raises(DataNotFoundError, match="python -m prismlib data list"):
        datadir.locate("swb1_dialogact_annot.tar.gz")
