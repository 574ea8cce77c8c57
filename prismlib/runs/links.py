"""The report's link check: :func:`check_links` lists the relative links of the site that do
not resolve (CI fails on any); :func:`external_links` lists the absolute ones, which are
never fetched."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _LinkParser(HTMLParser):
    """Collects every ``href`` and ``src`` attribute of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("href", "src") and v is not None]


def _page_links(site: Path) -> list[tuple[Path, str]]:
    """``(page, link)`` for every ``href``/``src`` of every ``.html`` page under ``site``."""
    out = []
    for page in sorted(site.rglob("*.html")):
        parser = _LinkParser()
        parser.feed(page.read_text(encoding="utf-8"))
        out += [(page, link) for link in parser.links]
    return out


def check_links(site_dir: str | Path) -> list[str]:
    """The relative links of the site's pages that do not resolve to a file inside it.

    A fragment (``#id``, ``page.html#id``) and a query are dropped before resolving;
    links with a scheme (``https:``, ``data:``, ``mailto:``) are not checked (see
    :func:`external_links`).  A root-absolute path (``/x``) is broken: the site is
    opened from files, not served.

    Returns:
        ``"page: link (why)"`` for each broken link; empty when every link resolves.
    """
    site = Path(site_dir).resolve()
    broken = []
    for page, link in _page_links(site):
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # external, data: or mailto:, or a fragment of the page itself
        where = page.relative_to(site)
        if parts.path.startswith("/"):
            broken.append(f"{where}: {link} (absolute path)")
            continue
        target = (page.parent / unquote(parts.path)).resolve()
        if not target.is_relative_to(site):
            broken.append(f"{where}: {link} (outside the site)")
        elif not target.is_file():
            broken.append(f"{where}: {link} (missing)")
    return broken


def external_links(site_dir: str | Path) -> list[str]:
    """The distinct ``http(s)`` links of the site's pages (listed, never fetched)."""
    return sorted({link for _, link in _page_links(Path(site_dir)) if urlsplit(link).scheme in ("http", "https")})
