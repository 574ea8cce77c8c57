"""``python -m prismlib data`` (prismlib.runs.datasets): a data directory without any dataset
is one line, ``list`` names the licences, an unknown dataset is refused. Its exit statuses on
fetches and verifies are checked beside them in ``tests/data/test_registry.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_fixtures import sha, use_catalogue

from prismlib.data.catalogue import DataFile, Dataset, Download
from prismlib.runs.datasets import main


def test_verify_of_a_directory_without_any_dataset_is_one_line(data_root: Path, monkeypatch, capsys) -> None:
    files = tuple(DataFile(f"{n}.txt", (Download(f"https://example.invalid/{n}.txt"),), sha(b"x")) for n in "abc")
    use_catalogue(monkeypatch, Dataset("d", "x", "x", files))
    assert main(["verify"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [err.strip()]
    assert "holds none of the datasets" in err and "python -m prismlib data fetch" in err
    (data_root / "a.txt").write_bytes(b"x")  # one file present: the per-file listing again
    assert main(["verify"]) == 1
    assert "a.txt" in capsys.readouterr().out


def test_main_list_and_unknown_name(data_root: Path, capsys) -> None:
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "swda" in out and "CC BY-NC-SA" in out
    with pytest.raises(SystemExit):
        main(["fetch", "no_such_dataset"])
