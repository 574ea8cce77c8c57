"""Cached artefacts carry their digest: broken on purpose (truncated, bit-flipped, killed
mid-save, written before digests), each gives one clear line and is recomputed, never used."""

from __future__ import annotations

import json
import re
import zipfile

import pytest
import torch

from prismlib import artifacts
from prismlib.artifacts import CorruptArtifact, check, load_checkpoint, load_or_discard, save_atomic


def _saved(tmp_path):
    path = tmp_path / ".cache" / "jobs" / "k" / "partial.pt"
    save_atomic(path, weights=torch.arange(1000.0), note="x")
    return path


def test_a_saved_file_carries_its_digest_and_loads(tmp_path):
    path = _saved(tmp_path)
    side = json.loads(artifacts.digest_path(path).read_text())
    assert side == {"sha256": artifacts.file_digest(path), "bytes": path.stat().st_size}
    assert check(path) is None
    assert torch.equal(load_checkpoint(path)["weights"], torch.arange(1000.0))
    assert not list(path.parent.glob("*.tmp"))


def test_a_truncated_file_is_refused_by_name_and_moved_aside_not_deleted(tmp_path, capsys):
    path = _saved(tmp_path)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(1000)
    with pytest.raises(CorruptArtifact, match=rf"partial.pt: truncated or changed: 1,000 bytes, {size:,} when written"):
        load_checkpoint(path)
    assert load_or_discard(path) is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "partial.pt" in err[0] and "moved aside" in err[0]
    assert not path.exists() and not artifacts.digest_path(path).exists()
    kept = list((tmp_path / ".cache" / "quarantine").glob("*partial.pt"))
    assert len(kept) == 1 and kept[0].stat().st_size == 1000  # kept for inspection


def test_a_flipped_bit_of_the_same_size_is_caught(tmp_path):
    path = _saved(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(raw))
    assert re.fullmatch(r"changed since written: SHA-256 [0-9a-f]{12}\.\.\., [0-9a-f]{12}\.\.\. when written", check(path))
    with pytest.raises(CorruptArtifact, match="changed since written"):
        load_checkpoint(path)


def test_a_kill_between_the_file_and_its_digest_leaves_a_file_that_is_never_used(tmp_path):
    path = _saved(tmp_path)
    torch.save({"weights": torch.zeros(3)}, path)  # the next save replaced the file, then the process died
    (path.parent / "partial.pt.tmp").write_bytes(b"half a file")  # and an earlier kill left a temporary file
    assert load_or_discard(path) is None and not path.exists()


def test_a_file_written_before_digests_is_adopted_when_it_loads_and_refused_when_it_does_not(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"a": torch.ones(2)}, path)
    assert check(path) == "no digest"
    assert torch.equal(load_checkpoint(path)["a"], torch.ones(2))
    assert check(path) is None  # adopted
    bad = tmp_path / "old_bad.pt"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(CorruptArtifact, match=r"old_bad.pt: unreadable \("):
        load_checkpoint(bad)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(CorruptArtifact, match="nothing.pt: missing"):
        load_checkpoint(tmp_path / "nothing.pt")
    assert load_or_discard(tmp_path / "nothing.pt") is None


def test_saving_again_into_the_same_folder_and_loading_onto_another_device(tmp_path):
    path = _saved(tmp_path)
    save_atomic(path, weights=torch.arange(3.0))  # the folder exists already
    for weights_only in (False, True):
        assert load_checkpoint(path, map_location="meta", weights_only=weights_only)["weights"].device.type == "meta"


def test_full_unpickling_is_the_default_and_weights_only_refuses_our_classes(tmp_path):
    from prismlib.lstm.training import TrainHistory

    path = tmp_path / "h.pt"
    save_atomic(path, history=TrainHistory(epochs=2))
    assert load_checkpoint(path)["history"].epochs == 2
    assert load_or_discard(path)["history"].epochs == 2
    with pytest.raises(CorruptArtifact, match="unreadable"):
        load_checkpoint(path, weights_only=True)


def test_a_checkpoint_naming_a_module_that_moved_still_loads(tmp_path):
    from prismlib.lstm.training import TrainHistory

    new, old = tmp_path / "new.pt", tmp_path / "old.pt"
    save_atomic(new, history=TrainHistory(epochs=3))
    with zipfile.ZipFile(new) as zin, zipfile.ZipFile(old, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("data.pkl"):
                data = data.replace(b"prismlib.lstm.training", b"prismlib.timescales")  # a module of before the packages
            zout.writestr(item, data)
    assert load_checkpoint(old)["history"].epochs == 3


def test_entries_moved_aside_get_distinct_names_under_the_cache_given(tmp_path, capsys, monkeypatch):
    from datetime import datetime as real

    class Frozen(real):
        @classmethod
        def now(cls, tz=None):
            return real(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    monkeypatch.setattr(artifacts, "datetime", Frozen)  # both moves in the same second
    first, second = _saved(tmp_path), tmp_path / "other" / "k" / "partial.pt"  # the same names
    save_atomic(second, x=torch.ones(1))
    where = tmp_path / "elsewhere" / "deeper"
    a = artifacts.move_aside(first, "broken", cache=where)
    b = artifacts.move_aside(second, "broken", cache=where)
    assert a.parent == b.parent == where / "quarantine"
    assert a.name == "20260102T030405-k-partial.pt" and a.exists()
    assert b.name == "20260102T030405.2-k-partial.pt"  # the same second and names: numbered
    assert b.exists() and artifacts.digest_path(b).exists()
    third = tmp_path / "third.pt"
    save_atomic(third, x=torch.ones(1))
    third.write_bytes(b"x")
    assert load_or_discard(third, cache=where) is None
    assert len(list((where / "quarantine").glob("*third.pt"))) == 1


def test_remove_deletes_a_file_and_its_digest_and_accepts_a_missing_one(tmp_path):
    path = _saved(tmp_path)
    artifacts.remove(path)
    assert not path.exists() and not artifacts.digest_path(path).exists()
    artifacts.remove(path)  # nothing left: no error
