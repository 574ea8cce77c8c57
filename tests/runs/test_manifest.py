"""A run's manifest (prismlib.runs.manifest): each notebook's own provenance, and the format of
before per-notebook records read back."""

from __future__ import annotations

import pytest

from prismlib.runs.manifest import notebook_records


@pytest.mark.slow  # (as in test_reproduce.py, whose tests `make test-fast` leaves out)
def test_an_old_manifest_gives_every_notebook_its_commit_flagged_inherited():
    old = {  # the format before per-notebook records: one commit, start and packages for the profile
        "profile": "cpu",
        "git_commit": "9d36e98",
        "started": "2026-11-22T01:00:00+00:00",
        "device": "cpu",
        "packages": {"torch": "2.13.0"},
        "seconds": {"01_spectral_filters": 171.0, "02_probing_filtered": 1344.2},
    }
    records = notebook_records(old)
    assert set(records) == {"01_spectral_filters", "02_probing_filtered"}
    for stem, r in records.items():
        assert r["inherited"] is True and r["commit"] == "9d36e98" and r["seconds"] == old["seconds"][stem]
        assert r["started"] == old["started"] and r["packages"] == {"torch": "2.13.0"} and "git_commit" not in r
    new = {"notebooks": {"01_spectral_filters": {"commit": "abc", "seconds": 1.0}}}
    assert notebook_records(new) == {"01_spectral_filters": {"commit": "abc", "seconds": 1.0}}  # kept, not inherited
