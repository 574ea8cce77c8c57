"""Downloads (prismlib.data.download), with urllib mocked (no network in tests)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from data_fixtures import FakeResponse

from prismlib.data import download


def test_download_sends_its_own_user_agent(tmp_path: Path, monkeypatch) -> None:
    requests: list[urllib.request.Request] = []

    def urlopen(req, timeout):
        requests.append(req)
        return FakeResponse(200, b"abc", {"Content-Length": "3"})

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    path = download.download("https://example.invalid/a/b.zip", tmp_path, force=False)
    assert path == tmp_path / "b.zip" and path.read_bytes() == b"abc"
    # wikitext.smerity.com answers 403 to urllib's default User-Agent
    assert requests[0].get_header("User-agent") == download.USER_AGENT
