"""Cached artefacts carry their digest: broken on purpose (truncated, bit-flipped, killed
mid-save, written before digests), each gives one clear line and is recomputed, never used."""

from __future__ import annotations

import json

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
    assert "changed since written" in check(path)
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
