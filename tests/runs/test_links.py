"""The report's link check (prismlib.runs.links): every kind of broken relative link caught,
external links listed and never fetched."""

from __future__ import annotations

from prismlib.runs.links import check_links, external_links


def test_check_links_reports_broken_links(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a b.png").write_bytes(b"x")
    links = [
        "#top",
        "page.html#top",
        "figures/a%20b.png",
        "https://example.org/x",
        "data:image/png;base64,AAAA",
        "mailto:a@b.c",
        "missing.html#sec",
        "../outside.html",
        "/absolute.html",
    ]
    body = "".join(f"<a href='{link}'>x</a>" for link in links) + "<img src='figures/nope.png'>"
    (tmp_path / "page.html").write_text(f"<html><body>{body}</body></html>")
    assert check_links(tmp_path) == [
        "page.html: missing.html#sec (missing)",
        "page.html: ../outside.html (outside the site)",
        "page.html: /absolute.html (absolute path)",
        "page.html: figures/nope.png (missing)",
    ]
    assert external_links(tmp_path) == ["https://example.org/x"]
