"""HTTP for the data registry: download a URL into a file, and ask whether a URL answers.

Requests carry a ``User-Agent`` of their own: wikitext.smerity.com answers 403 to
urllib's default one (IST-DASLab/Quartet#11). ``file://`` URLs work too (tests).
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prismlib.progress import progress_bar

from .datadir import ENV_VAR, DownloadError

USER_AGENT = "prismlib-data/0.1 (python urllib)"
DOWNLOAD_TIMEOUT_S = 60.0
PROBE_TIMEOUT_S = 10.0

_CHUNK = 1 << 20


def _request(url: str, method: str = "GET", headers: dict[str, str] | None = None):
    return urllib.request.Request(url, method=method, headers={"User-Agent": USER_AGENT, **(headers or {})})


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    return str(getattr(err, "reason", err))


def download(url: str, downloads: Path, *, force: bool, name: str | None = None) -> Path:
    """Download ``url`` into ``downloads/<name>`` and return that path.

    ``name`` defaults to the URL's last path component. A complete earlier download
    (a finished file; partial ones are ``.part`` files) is reused unless ``force``.

    Raises:
        DownloadError: the URL could not be fetched (names the URL and the reason).
    """
    downloads.mkdir(parents=True, exist_ok=True)
    dest = downloads / (name or url.rstrip("/").rsplit("/", 1)[-1])
    if dest.is_file() and not force:
        print(f"  using the earlier download {dest}")
        return dest
    part = dest.with_name(dest.name + ".part")
    try:
        with (
            urllib.request.urlopen(_request(url), timeout=DOWNLOAD_TIMEOUT_S) as resp,
            open(part, "wb") as out,
        ):
            total = int(resp.headers.get("Content-Length") or 0) or None
            with progress_bar(total=total, unit="B", unit_scale=True, desc=dest.name) as bar:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as err:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"could not download {url}: {_reason(err)}. If this machine is offline, copy "
            f"the file from a machine that has it, or set {ENV_VAR} to a directory that "
            f"already holds the data."
        ) from err
    os.replace(part, dest)
    return dest


@dataclass(frozen=True)
class UrlStatus:
    """Whether a URL answers: ``ok``, the HTTP status (``None`` when there was no
    answer) and a one-line ``detail``."""

    url: str
    ok: bool
    status: int | None
    detail: str


def _size(headers) -> str:
    total = (headers.get("Content-Range") or "").rpartition("/")[2] or headers.get("Content-Length")
    return f", {int(total):,} bytes" if total and total.isdigit() else ""


def _ask(url: str, method: str, timeout: float, headers: dict[str, str] | None = None) -> UrlStatus:
    with urllib.request.urlopen(_request(url, method, headers), timeout=timeout) as resp:
        status = resp.status
        size = _size(resp.headers)
    return UrlStatus(url, 200 <= status < 300, status, f"{method} {status}{size}")


def probe(url: str, *, timeout: float = PROBE_TIMEOUT_S) -> UrlStatus:
    """Ask whether ``url`` answers, without downloading it.

    A ``HEAD`` request first; when the server refuses it (any HTTP error), a ``GET``
    of the first byte only (``Range: bytes=0-0``). Redirects are followed.
    """
    try:
        return _ask(url, "HEAD", timeout)
    except urllib.error.HTTPError as err:
        refused = f"HEAD {err.code}"
    except (urllib.error.URLError, OSError, ValueError) as err:
        return UrlStatus(url, False, None, f"no answer: {_reason(err)}")
    try:
        answer = _ask(url, "GET", timeout, {"Range": "bytes=0-0"})
    except urllib.error.HTTPError as err:
        return UrlStatus(url, False, err.code, f"{refused}, ranged GET {_reason(err)}")
    except (urllib.error.URLError, OSError, ValueError) as err:
        return UrlStatus(url, False, None, f"{refused}, ranged GET: no answer: {_reason(err)}")
    return UrlStatus(url, answer.ok, answer.status, f"{refused}, ranged {answer.detail}")
