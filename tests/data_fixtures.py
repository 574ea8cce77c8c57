"""Helpers of the data tests (``tests/data/``, ``tests/runs/test_data.py``): tiny archives
in the format of the real distributions, digests, a catalogue of the test's own datasets,
Hugging Face parquet rows and a fake HTTP server (no network in tests). The empty data
directory they write into is the ``data_root`` fixture of ``tests/conftest.py``.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import urllib.error
import zipfile
from pathlib import Path

import pytest

from prismlib.data import catalogue
from prismlib.data.catalogue import Dataset


def write_tar(path: Path, files: dict[str, bytes]) -> Path:
    """A .tar.gz with the given members (parents created implicitly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def write_zip(path: Path, files: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def passes(path: Path) -> str:
    """A structural check that accepts any file."""
    return "ok"


def use_catalogue(monkeypatch: pytest.MonkeyPatch, *datasets: Dataset) -> None:
    """Make ``datasets`` the whole catalogue for the test (fetch, verify and the command line)."""
    monkeypatch.setattr(catalogue, "DATASETS", {d.name: d for d in datasets})


WIKI_TEXT = " \n = A = \n \n a . \n \n = B = \n \n b . \n \n"


def hf_rows(text: str) -> list[str]:
    """Rows as the Hugging Face loading script made them: a line with its end, and a
    line of only whitespace as an empty string."""
    return [line if line.strip() else "" for line in io.StringIO(text)]


class FakeResponse(io.BytesIO):
    def __init__(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        super().__init__(body)
        self.status = status
        self.headers = headers or {}


def fake_server(answers: dict[tuple[str, str], int | Exception]):
    """urlopen answering (method, url) with a status (>= 400 raises HTTPError) or an
    exception; records (method, url, Range header, timeout)."""
    calls: list[tuple] = []

    def urlopen(req, timeout):
        calls.append((req.get_method(), req.full_url, req.get_header("Range"), timeout))
        answer = answers[(req.get_method(), req.full_url)]
        if isinstance(answer, Exception):
            raise answer
        if answer >= 400:
            raise urllib.error.HTTPError(req.full_url, answer, "Forbidden", {}, None)
        headers = {"Content-Range": "bytes 0-0/1234"} if answer == 206 else {"Content-Length": "99"}
        return FakeResponse(answer, b"", headers)

    return urlopen, calls
