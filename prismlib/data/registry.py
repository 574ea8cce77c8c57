"""Fetch and verify the datasets of the catalogue (:mod:`prismlib.data.catalogue`).

A file is checked against every digest known for it (the catalogue's published SHA-256,
the data directory's ``SHA256SUMS``) and, when no digest is published, by its dataset's
structural check; fetch tries a file's sources in order, replaces a file only by a copy
that passes, and prints the digest it got (a file already valid in one line with ``verbose``,
else only in the count it returns, :class:`Fetched`).

The dataset modules import only :mod:`prismlib.data.datadir` (the data directory,
``locate`` and the errors), which this module re-exports; the catalogue imports their
checks, and the registry imports the catalogue. The command line that drives it
(``python -m prismlib data ...``) is :mod:`prismlib.runs.data`.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO

from . import catalogue
from .catalogue import DataFile, Dataset, Download, ParquetRows, Source
from .datadir import (
    ENV_VAR,
    ChecksumError,
    DataNotFoundError,
    DownloadError,
    data_dir,
    locate,
    sha256_of,
)
from .download import PROBE_TIMEOUT_S, UrlStatus, download, probe
from .unpack import copy_member, require_pyarrow, write_parquet_lines

__all__ = [
    "ENV_VAR",
    "ChecksumError",
    "DataNotFoundError",
    "DownloadError",
    "Fetched",
    "FileStatus",
    "check_file",
    "check_urls",
    "data_dir",
    "fetch",
    "locate",
    "verify",
]

DOWNLOADS = "_downloads"


@dataclass(frozen=True)
class FileStatus:
    """Result of verifying one file.

    ``state`` is ``"ok"``, ``"missing"`` or ``"bad"``; ``detail`` says why (the
    digest, the structure summary, or expected vs got).
    """

    dataset: str
    relpath: str
    path: Path
    state: str
    detail: str
    required: bool

    @property
    def ok(self) -> bool:
        """True when the file is present and valid."""
        return self.state == "ok"


@dataclass(frozen=True)
class Fetched:
    """What one :func:`fetch` found and did, counted in files.

    Attributes:
        datasets: datasets fetched or checked.
        valid: files that were present and valid already (not downloaded again).
        written: files downloaded, extracted or derived now.
        left_out: files only the paper profile reads, not asked for (``paper=False``).
    """

    datasets: int
    valid: int
    written: int
    left_out: int


def _root(explicit: Path | None) -> Path:
    return Path(explicit) if explicit is not None else data_dir()


def _select(names: Iterable[str] | None) -> list[Dataset]:
    return list(catalogue.DATASETS.values()) if not names else [catalogue.get_dataset(n) for n in names]


# ---------------------------------------------------------------------------
# Checking.


DIGESTS = "SHA256SUMS"
"""The data directory's list of file digests (``sha256sum`` format: ``<hex>  ./relpath``):
shipped with the offline copy and kept up to date by :func:`fetch`."""


def listed_digests(root: Path) -> dict[str, str]:
    """relpath -> SHA-256 of ``<root>/SHA256SUMS`` (empty when there is none)."""
    path = root / DIGESTS
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        digest, _, rel = line.strip().partition(" ")
        rel = rel.strip().lstrip("*")
        if digest and rel:
            out[rel.removeprefix("./")] = digest.lower()
    return out


def _record_digest(root: Path, relpath: str, digest: str) -> None:
    """Set ``relpath``'s line of ``<root>/SHA256SUMS`` to ``digest`` (atomically)."""
    digests = {**listed_digests(root), relpath: digest}
    tmp = root / f".{DIGESTS}.tmp"
    tmp.write_text("".join(f"{d}  ./{r}\n" for r, d in sorted(digests.items())))
    tmp.replace(root / DIGESTS)


def check_file(f: DataFile, path: Path, listed: str | None = None) -> str:
    """Validate a present file; return a one-line summary, raise ChecksumError if bad.

    Every digest known for the file must match: the registry's published one, else the
    one ``SHA256SUMS`` of the data directory lists (``listed``); the structural check
    (if any) runs too when there is no published digest.
    """
    got = sha256_of(path)
    if f.sha256 is not None:
        if got != f.sha256:
            raise ChecksumError(f"checksum mismatch for {f.relpath} ({path}): expected sha256 {f.sha256}, got {got}")
        return f"sha256 ok ({got[:12]}...)"
    if listed is not None and got != listed:
        raise ChecksumError(f"checksum mismatch for {f.relpath} ({path}): {DIGESTS} lists sha256 {listed}, got {got}")
    summary = f.check(path) if f.check is not None else "present"
    if listed is not None:
        return f"{summary}; sha256 ok as in {DIGESTS} ({got[:12]}...)"
    return f"{summary}; no published checksum, sha256 {got}"


def _status(ds: Dataset, f: DataFile, root: Path, listed: Mapping[str, str] | None = None) -> FileStatus:
    path = root / f.relpath
    required = not f.paper_only
    if not path.is_file():
        return FileStatus(ds.name, f.relpath, path, "missing", "not present", required)
    try:
        detail = check_file(f, path, (listed or {}).get(f.relpath))
    except (ChecksumError, OSError, tarfile.TarError, zipfile.BadZipFile, UnicodeError) as err:
        return FileStatus(ds.name, f.relpath, path, "bad", str(err), required)
    return FileStatus(ds.name, f.relpath, path, "ok", detail, required)


def verify(names: Sequence[str] | None = None, *, data_dir: Path | None = None) -> dict[str, list[FileStatus]]:
    """Check presence and digests (or structure) of the datasets' files; no download.

    A file's digest is checked whenever one is known: the registry's, or the data
    directory's ``SHA256SUMS`` (:func:`check_file`).

    Args:
        names: dataset names (default: all).
        data_dir: directory to check (default: :func:`data_dir`).

    Returns:
        dataset name -> one :class:`FileStatus` per file, in registry order.
    """
    root = _root(data_dir)
    listed = listed_digests(root)
    return {ds.name: [_status(ds, f, root, listed) for f in ds.files] for ds in _select(names)}


def check_urls(names: Sequence[str] | None = None, *, timeout: float = PROBE_TIMEOUT_S) -> list[UrlStatus]:
    """Ask every source URL of the datasets whether it answers (HEAD, else a one-byte
    ranged GET; see :func:`prismlib.data.download.probe`); each URL once, in registry
    order. Needs internet; downloads nothing."""
    urls = dict.fromkeys(url for ds in _select(names) for f in ds.files for url in f.urls)
    return [probe(url, timeout=timeout) for url in urls]


# ---------------------------------------------------------------------------
# Fetch.


def _write_bytes(content: bytes, out: IO[bytes]) -> None:
    out.write(content)


def _write_verified(f: DataFile, target: Path, fill: Callable[[IO[bytes]], None]) -> str:
    """Write a new copy of ``target`` via ``fill``; replace only after it validates."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    try:
        with open(tmp, "wb") as out:
            fill(out)
        summary = check_file(f, tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, target)
    return summary


@dataclass
class _Downloads:
    """The downloads of one fetch: each URL is downloaded (or an earlier download
    reused) once, and checked against its published digest once."""

    folder: Path
    force: bool
    done: dict[str, Path]

    def get(self, url: str, sha256: str | None = None, name: str | None = None) -> Path:
        if url not in self.done:
            path = download(url, self.folder, force=self.force, name=name)
            if sha256 is not None:
                got = sha256_of(path)
                if got != sha256:
                    path.unlink()
                    raise ChecksumError(
                        f"the download of {url} has sha256 {got}, expected {sha256} "
                        f"(deleted {path}; a mirror that serves other bytes is not used)"
                    )
            self.done[url] = path
        return self.done[url]


def _from_download(f: DataFile, source: Download, target: Path, downloads: _Downloads) -> str:
    archive = downloads.get(source.url, source.sha256)
    try:
        summary = _write_verified(f, target, partial(copy_member, archive, source.member))
    except ChecksumError as err:
        raise ChecksumError(
            f"{err}. The existing file (if any) was left untouched; the download is "
            f"{archive} (delete it, or pass --force, to download it again)."
        ) from err
    if source.member is None:  # the download is the file itself: no second copy
        downloads.done.pop(source.url).unlink()
    return summary


def _from_parquet(f: DataFile, source: ParquetRows, target: Path, downloads: _Downloads) -> str:
    require_pyarrow(f.relpath)  # before downloading hundreds of MB
    # shards of different configurations share names: keep the folder in the name
    shards = [downloads.get(url, name="-".join(url.split("/")[-2:])) for url in source.urls]
    fill = partial(write_parquet_lines, shards, column=source.column, empty_row=source.empty_row)
    return _write_verified(f, target, fill)


class _DatasetLines:
    """The lines :func:`fetch` prints about one dataset, each under its name and description
    (printed once, before the first); a line that is not ``always`` only when ``verbose``."""

    def __init__(self, ds: Dataset, verbose: bool) -> None:
        self.ds, self.verbose, self.shown = ds, verbose, False

    def __call__(self, line: str, always: bool = True) -> None:
        if not (always or self.verbose):
            return
        if not self.shown:
            print(f"{self.ds.name}: {self.ds.description}")
            self.shown = True
        print(f"  {line}")


def _fetch_file(f: DataFile, target: Path, downloads: _Downloads, say: Callable[[str], None]) -> tuple[str, Source]:
    """Try ``f``'s sources in order; the first that gives a valid file wins (``say`` prints
    that one failed and the next is tried).

    Returns the check's summary and the source used. With one source its own error
    propagates; with several, an error that lists each source's failure
    (:class:`ChecksumError` when any delivered a wrong file, else :class:`DownloadError`).
    """
    failures: list[tuple[Source, Exception]] = []
    for i, source in enumerate(f.sources):
        try:
            if isinstance(source, Download):
                return _from_download(f, source, target, downloads), source
            return _from_parquet(f, source, target, downloads), source
        except (DownloadError, ChecksumError, ImportError) as err:
            if len(f.sources) == 1:
                raise
            failures.append((source, err))
            if i + 1 < len(f.sources):
                say(f"{f.relpath}: {source.label} failed; trying the next source")
    wrong_file = any(isinstance(e, ChecksumError) for _, e in failures)
    kind = ChecksumError if wrong_file else DownloadError
    listed = " ".join(f"({n}) {s.label}: {e}" for n, (s, e) in enumerate(failures, 1))
    raise kind(f"no source gave a valid {f.relpath}: {listed}")


def fetch(
    names: Sequence[str] | None = None,
    *,
    data_dir: Path | None = None,
    force: bool = False,
    paper: bool = False,
    verbose: bool = False,
) -> Fetched:
    """Download, extract and verify the datasets' files into the data directory.

    Files already present and valid are skipped (unless ``force``). Each download is
    kept in ``<data_dir>/_downloads/`` and reused for all its members (and by later
    fetches). A file's sources are tried in order until one gives a valid file. A new
    copy replaces an existing file only after it passes its checksum (or its
    structural check), so a good file is never replaced by a bad one.

    Args:
        names: dataset names (default: all of them).
        data_dir: target directory (default: :func:`data_dir`).
        force: re-download and re-extract even when present and valid.
        paper: also fetch the files only the ``paper`` profile needs (WikiText-103
            train/valid, about 500 MB).
        verbose: print a line for every file, also one present and valid or left out;
            otherwise only for a file written (or replaced) now, under its dataset's name.

    Returns:
        The counts of files found valid, written and left out (:class:`Fetched`).

    Raises:
        ChecksumError: a downloaded file does not match (names file, expected, got).
        DownloadError: a URL could not be fetched (names the URL).
        ImportError: a file's only source is parquet and pyarrow is missing.
    """
    root = _root(data_dir)
    downloads = _Downloads(root / DOWNLOADS, force, {})
    listed = listed_digests(root)
    selected = _select(names)
    valid = written = left_out = 0
    for ds in selected:
        say = _DatasetLines(ds, verbose)
        for f in ds.files:
            target = root / f.relpath
            if f.paper_only and not paper:
                say(f"{f.relpath}: paper profile only, skipped (fetch with --paper)", always=False)
                left_out += 1
                continue
            status = _status(ds, f, root, listed)
            if status.ok and not force:
                say(f"{f.relpath}: present and valid, skipped ({status.detail})", always=False)
                valid += 1
                continue
            if status.state == "bad":
                say(f"{f.relpath}: present but invalid ({status.detail}); fetching again")
            if not f.sources:
                assert f.derive is not None, f"{f.relpath} has neither a source nor derive"
                summary = _write_verified(f, target, partial(_write_bytes, f.derive(root)))
                _record_digest(root, f.relpath, sha256_of(target))
                say(f"{f.relpath}: derived from the other files ({summary})")
            else:
                summary, source = _fetch_file(f, target, downloads, say)
                _record_digest(root, f.relpath, sha256_of(target))
                say(f"{f.relpath}: fetched from {source.label} ({summary})")
            written += 1
    return Fetched(len(selected), valid, written, left_out)
