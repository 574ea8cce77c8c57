"""``python -m prismlib data`` (prismlib.runs.data): a data directory without any dataset
is one line, ``fetch`` of data already there is one line (``-v``: a line per file), ``list``
names the licences, an unknown dataset is refused. Its exit statuses on
fetches and verifies are checked beside them in ``tests/data/test_registry.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_fixtures import sha, use_catalogue

from prismlib.data.catalogue import DataFile, Dataset, Download
from prismlib.data.registry import Fetched
from prismlib.runs.data import fetch_line, main


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


def test_fetch_of_data_already_there_is_one_summary_line_and_each_file_with_v(data_root: Path, monkeypatch, capsys) -> None:
    files = tuple(DataFile(f"{n}.txt", (Download(f"https://example.invalid/{n}.txt"),), sha(n.encode())) for n in "ab")
    big = DataFile("big.txt", (Download("https://example.invalid/big.txt"),), sha(b"big"), paper_only=True)
    use_catalogue(monkeypatch, Dataset("d", "x", "x", files), Dataset("e", "y", "y", (big,)))
    for n in "ab":
        (data_root / f"{n}.txt").write_bytes(n.encode())
    assert main(["fetch"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out == f"data: 2 datasets ready in {data_root} (2 files valid; details: -v)\n"
    assert main(["fetch", "-v"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["d", "  a.txt", "  b.txt", "e", "  big.txt", "data"], lines
    assert lines[-1] == f"data: 2 datasets ready in {data_root} (2 files valid)"


def test_the_fetch_line_counts_what_was_fetched_now(tmp_path: Path) -> None:
    assert fetch_line(Fetched(1, 1, 2, 0), tmp_path) == f"data: 1 dataset ready in {tmp_path} (1 file valid, 2 fetched now; details: -v)"


def test_fetch_into_a_directory_that_does_not_exist_creates_nothing_and_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    files = (DataFile("a.txt", (Download("https://example.invalid/a.txt"),), sha(b"x")),)
    use_catalogue(monkeypatch, Dataset("d", "x", "x", files))
    missing = tmp_path / "nowhere" / "data"
    monkeypatch.setenv("PRISMLIB_DATA", str(missing))
    assert main(["fetch", "d"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: the data directory {missing} (PRISMLIB_DATA={missing}) does not exist") and f"mkdir -p {missing}" in err
    assert not (tmp_path / "nowhere").exists()
