"""Committed run records: written whole, verified on every read, every kind of bad record refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prismlib.artifacts import file_digest
from prismlib.jobcache import job_key
from prismlib.records import PRETRAIN, RECORD, SUMS, BadRecord, device_name, find_record, read_record, records_size, scan, write_record

DESC = {"spec": {"variant": "baseline", "seed": 0}, "training": {"lr": 20.0}, "recipe": 3}
KEY = job_key(DESC)
CLEAN = {"provenance": {"commit": "abc123", "dirty": False}}


def _write(runs: Path, desc: dict = DESC, summary: dict = CLEAN, data: bytes = b"\x00\x01" * 500) -> Path:
    key = job_key(desc)
    return write_record(
        runs / key, key, desc, summary, {"outcome.npz": lambda p: p.write_bytes(data), "weights.pt": lambda p: p.write_bytes(b"w" * 300)}
    )


def _reseal(folder: Path) -> None:
    """Rewrite SHA256SUMS after a planted change, so that only the planted problem remains."""
    names = sorted(p.name for p in folder.iterdir() if p.name != SUMS)
    (folder / SUMS).write_text("".join(f"{file_digest(folder / n)}  {n}\n" for n in names))


def _edit(folder: Path, **changes) -> None:
    record = json.loads((folder / RECORD).read_text())
    record.update(changes)
    (folder / RECORD).write_text(json.dumps(record))
    _reseal(folder)


def test_a_record_is_written_whole_and_reads_back(tmp_path):
    folder = _write(tmp_path)
    assert folder == tmp_path / KEY
    assert sorted(p.name for p in folder.iterdir()) == sorted([RECORD, SUMS, "outcome.npz", "weights.pt"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left
    record = read_record(folder, DESC)
    assert record["key"] == KEY and record["description"] == DESC and record["provenance"]["commit"] == "abc123"
    assert find_record(tmp_path, KEY, DESC) == folder
    assert find_record(tmp_path, job_key({"other": 1}), {"other": 1}) is None
    assert records_size(tmp_path) == sum(p.stat().st_size for p in folder.iterdir())
    with pytest.raises(ValueError, match="named by its key"):
        write_record(tmp_path / "elsewhere", KEY, DESC, CLEAN, {})


def test_rewriting_a_record_replaces_it(tmp_path):
    _write(tmp_path, data=b"first")
    folder = _write(tmp_path, data=b"second")
    assert (folder / "outcome.npz").read_bytes() == b"second" and read_record(folder, DESC)


@pytest.mark.parametrize(
    "plant, names",
    [
        (lambda f: (f / "outcome.npz").write_bytes(b"\x00\x01" * 499 + b"\x00\x02"), "outcome.npz"),  # a flipped byte
        (lambda f: (f / "weights.pt").write_bytes(b"w" * 100), "weights.pt"),  # a truncated weights file
        (lambda f: (f / "weights.pt").unlink(), "weights.pt"),
        (lambda f: (f / "extra.npy").write_bytes(b"x"), "extra.npy"),
        (lambda f: (f / SUMS).unlink(), SUMS),
    ],
    ids=["flipped byte", "truncated weights", "missing file", "unlisted file", "no sums"],
)
def test_a_record_whose_bytes_changed_is_refused_naming_the_file(tmp_path, plant, names):
    folder = _write(tmp_path)
    plant(folder)
    with pytest.raises(BadRecord) as err:
        find_record(tmp_path, KEY, DESC)
    assert err.value.path == folder / names
    message = str(err.value)
    assert "\n" not in message and str(folder / names) in message and "git checkout" in message and "train" in message
    assert (folder / RECORD).exists()  # refused, not deleted


def test_a_record_of_another_recipe_or_from_a_dirty_tree_is_refused(tmp_path):
    folder = _write(tmp_path)
    newer = {**DESC, "recipe": 4}
    with pytest.raises(BadRecord, match="another recipe"):
        read_record(folder, newer)
    _edit(folder, description=newer)  # a description that no longer hashes to the folder's key
    with pytest.raises(BadRecord, match="hashes to"):
        read_record(folder)
    folder = _write(tmp_path / "dirty", summary={"provenance": {"commit": "abc123+dirty", "dirty": True}})
    with pytest.raises(BadRecord, match="uncommitted code"):
        find_record(tmp_path / "dirty", KEY, DESC)


def test_two_records_claiming_one_key_are_both_refused(tmp_path):
    folder = _write(tmp_path)
    twin = tmp_path / "0123456789abcdef"
    twin.mkdir()
    for p in folder.iterdir():
        (twin / p.name).write_bytes(p.read_bytes())
    with pytest.raises(BadRecord, match="claims key"):
        find_record(tmp_path, KEY, DESC)
    states = scan(tmp_path)
    assert len(states) == 2 and all(s.problem is not None for s in states)
    assert all("claimed by another record" in s.problem or "not its folder's name" in s.problem for s in states)


def test_scan_reports_each_record_with_its_state(tmp_path):
    good = _write(tmp_path)
    bad = _write(tmp_path, desc={**DESC, "spec": {"variant": "pareto", "seed": 0}})
    (bad / "weights.pt").write_bytes(b"broken")
    states = {s.folder: s for s in scan(tmp_path)}
    assert states[good].problem is None and states[good].record["key"] == good.name
    assert states[bad].problem is not None and "weights.pt" in states[bad].problem
    assert scan(tmp_path / "none") == []


def test_the_pretrainings_folder_beside_the_records_is_no_record(tmp_path):
    """``runs/pretrain/`` holds the pretraining's states (issue 76), whose ``record.json`` is
    another format: scan and find_record pass it by, and a twin of a key inside it is no claim."""
    good = _write(tmp_path)
    state = tmp_path / PRETRAIN / "69dde14d4978f421"
    state.mkdir(parents=True)
    (state / RECORD).write_text(json.dumps({"key": KEY}))
    assert [s.folder for s in scan(tmp_path)] == [good]
    assert find_record(tmp_path, KEY, DESC) == good


def test_a_record_names_the_device_it_trained_on():
    import torch

    assert device_name("cpu") == device_name(torch.device("cpu")) == "cpu"
    if torch.cuda.is_available():
        assert device_name("cuda") == f"cuda: {torch.cuda.get_device_name(0)}"
