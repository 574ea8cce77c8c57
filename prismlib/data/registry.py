"""Where the datasets come from, and how to fetch and verify them.

Every dataset the project reads is a set of :class:`DataFile` s: a path relative to
the data directory (the canonical layout of its public distribution), the canonical
URL, the member inside the downloaded archive, and a SHA-256 when the file is known
byte for byte. Files without a known checksum (archives that public mirrors repack,
files with no offline copy) are verified by their structure instead, by a check
that the dataset's own module owns (for example the number of documents in the
archive, :func:`prismlib.data.newsgroups.check_archive`); fetch prints the digest
it got.

The registry imports the dataset modules; they import only
:mod:`prismlib.data.datadir` (the data directory, ``locate`` and the errors), which
this module re-exports. Command line (``python -m prismlib data ...``)::

    python -m prismlib data list
    python -m prismlib data fetch [NAME ...] [--force] [--data-dir DIR]
    python -m prismlib data verify [NAME ...] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import IO

from tqdm.auto import tqdm

from . import newsgroups, swda, wikitext
from .datadir import (
    ENV_VAR,
    FETCH_COMMAND,
    ChecksumError,
    DataNotFoundError,
    DownloadError,
    data_dir,
    locate,
    sha256_of,
)

__all__ = [
    "DATASETS",
    "ENV_VAR",
    "ChecksumError",
    "DataFile",
    "DataNotFoundError",
    "Dataset",
    "DownloadError",
    "FileStatus",
    "check_file",
    "data_dir",
    "dataset_of",
    "fetch",
    "get_dataset",
    "locate",
    "main",
    "verify",
]

DOWNLOADS = "_downloads"

_CHUNK = 1 << 20


StructureCheck = Callable[[Path], str]
"""Checks a file's structure; returns a one-line summary or raises ChecksumError."""

Deriver = Callable[[Path], bytes]
"""Builds a derived file's bytes from other files of the data directory."""


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes:
        relpath: path relative to the data directory (canonical layout), POSIX style.
        url: canonical download URL, or ``None`` for a file derived from others.
        member: path inside the downloaded archive, ``None`` when the URL is the file.
        sha256: expected digest when the file is known byte for byte, else ``None``.
        check: structural check used when ``sha256`` is ``None``.
        derive: builds the file's bytes from the data directory (when ``url`` is None).
        paper_only: needed only by the ``paper`` profile (not in the offline copy).
    """

    relpath: str
    url: str | None
    member: str | None
    sha256: str | None
    check: StructureCheck | None = None
    derive: Deriver | None = None
    paper_only: bool = False


@dataclass(frozen=True)
class Dataset:
    """A named dataset: its files, a one-line description and its licence."""

    name: str
    description: str
    licence: str
    files: tuple[DataFile, ...]


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


# ---------------------------------------------------------------------------
# The registry.

_PTB_URL = "http://www.fit.vutbr.cz/~imikolov/rnnlm/simple-examples.tgz"
_NLTK = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora"
_WS97 = "https://web.stanford.edu/~jurafsky/ws97"
_WT103_URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-raw-v1.zip"
_WT2_URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-v1.zip"
_LDC = "LDC fair-use terms (Wall Street Journal text of the Penn Treebank)"
_WIKI = "freely redistributable for research (Wikipedia text, CC BY-SA)"

_PTB_SHA = {
    "train": "fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
    "valid": "c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
    "test": "dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
}


def _datasets() -> tuple[Dataset, ...]:
    return (
        Dataset(
            "ptb",
            "Penn Treebank language-modelling text, Mikolov's preprocessing (10k vocabulary)",
            _LDC + "; Mikolov's simple-examples preprocessing",
            tuple(
                DataFile(f"ptb/ptb.{s}.txt", _PTB_URL, f"./simple-examples/data/ptb.{s}.txt", sha)
                for s, sha in _PTB_SHA.items()
            ),
        ),
        Dataset(
            "treebank_sample",
            "NLTK's 10% sample of the Penn Treebank WSJ (wsj_0001-0199), POS-tagged",
            _LDC + ", as distributed by NLTK",
            (
                DataFile(
                    "nltk_data/corpora/treebank.zip",
                    f"{_NLTK}/treebank.zip",
                    None,
                    "9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399",
                ),
            ),
        ),
        Dataset(
            "conll2000",
            "CoNLL-2000 chunking data: WSJ sections 15-18 (train) and 20 (test), POS-tagged",
            _LDC + ", as distributed by NLTK",
            (
                DataFile(
                    "nltk_data/corpora/conll2000.zip",
                    f"{_NLTK}/conll2000.zip",
                    None,
                    "01e65164f268366e7caa0db92332a1955d081908c87016e2c7640c3c5279b7cd",
                ),
            ),
        ),
        Dataset(
            "swda",
            "Switchboard Dialog Act corpus (WS97 release, 1,155 conversations) + WS97 split",
            "CC BY-NC-SA (Switchboard DA annotations)",
            (
                DataFile(
                    "swb1_dialogact_annot.tar.gz",
                    "https://web.stanford.edu/~jurafsky/swb1_dialogact_annot.tar.gz",
                    None,
                    None,
                    check=swda.check_archive,
                ),
                DataFile(
                    "swda_splits/ws97-train-convs.list",
                    f"{_WS97}/ws97-train-convs.list",
                    None,
                    None,
                    check=swda.check_id_list(1115),
                ),
                DataFile(
                    "swda_splits/ws97-test-convs.list",
                    f"{_WS97}/ws97-test-convs.list",
                    None,
                    None,
                    check=swda.check_id_list(19),
                ),
                DataFile(
                    "swda_splits/ws97-val-convs.list",
                    None,
                    None,
                    None,
                    check=swda.check_id_list(21),
                    derive=swda.validation_list,
                ),
            ),
        ),
        Dataset(
            "newsgroups",
            "20 Newsgroups, 'bydate' split (11,314 train / 7,532 test documents)",
            "freely redistributable for research",
            (
                DataFile(
                    "20news-bydate.tar.gz",
                    "http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz",
                    None,
                    None,
                    check=newsgroups.check_archive,
                ),
            ),
        ),
        Dataset(
            "wikitext103",
            "WikiText-103 raw (test: 60 articles; train/valid for the paper profile)",
            _WIKI,
            (
                # Checked by structure, not by digest: the offline copy has CRLF line ends
                # and no blank separator lines, unlike the file in the canonical zip, so
                # its digest would not be the canonical one.
                DataFile(
                    "wikitext-103-raw/wiki.test.raw",
                    _WT103_URL,
                    "wikitext-103-raw/wiki.test.raw",
                    None,
                    check=wikitext.check_file,
                ),
                DataFile(
                    "wikitext-103-raw/wiki.valid.raw",
                    _WT103_URL,
                    "wikitext-103-raw/wiki.valid.raw",
                    None,
                    check=wikitext.check_file,
                    paper_only=True,
                ),
                DataFile(
                    "wikitext-103-raw/wiki.train.raw",
                    _WT103_URL,
                    "wikitext-103-raw/wiki.train.raw",
                    None,
                    check=wikitext.check_file,
                    paper_only=True,
                ),
            ),
        ),
        Dataset(
            "wikitext2",
            "WikiText-2 tokenized (<unk>, @-@), train / valid / test",
            _WIKI,
            (
                DataFile(
                    "wikitext-2/wiki.train.tokens",
                    _WT2_URL,
                    "wikitext-2/wiki.train.tokens",
                    None,
                    check=wikitext.check_file,
                    paper_only=True,
                ),
                DataFile(
                    "wikitext-2/wiki.valid.tokens",
                    _WT2_URL,
                    "wikitext-2/wiki.valid.tokens",
                    "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
                ),
                DataFile(
                    "wikitext-2/wiki.test.tokens",
                    _WT2_URL,
                    "wikitext-2/wiki.test.tokens",
                    "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0",
                ),
            ),
        ),
    )


DATASETS: Mapping[str, Dataset] = MappingProxyType({d.name: d for d in _datasets()})
"""Name -> dataset (read-only)."""


def get_dataset(name: str) -> Dataset:
    """The registered dataset called ``name`` (raises ``KeyError`` naming the choices)."""
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}") from None


def dataset_of(relpath: str) -> Dataset | None:
    """The dataset that owns ``relpath``, or ``None`` when no dataset does."""
    for ds in DATASETS.values():
        if any(f.relpath == relpath for f in ds.files):
            return ds
    return None


def _root(explicit: Path | None) -> Path:
    return Path(explicit) if explicit is not None else data_dir()


# ---------------------------------------------------------------------------
# Checking.


def check_file(f: DataFile, path: Path) -> str:
    """Validate a present file; return a one-line summary, raise ChecksumError if bad.

    With a known ``sha256`` the digest must match; otherwise the structural check
    runs (if any) and the summary reports the digest found.
    """
    got = sha256_of(path)
    if f.sha256 is not None:
        if got != f.sha256:
            raise ChecksumError(
                f"checksum mismatch for {f.relpath} ({path}): expected sha256 {f.sha256}, got {got}"
            )
        return f"sha256 ok ({got[:12]}...)"
    summary = f.check(path) if f.check is not None else "present"
    return f"{summary}; no published checksum, sha256 {got}"


def _status(ds: Dataset, f: DataFile, root: Path) -> FileStatus:
    path = root / f.relpath
    required = not f.paper_only
    if not path.is_file():
        return FileStatus(ds.name, f.relpath, path, "missing", "not present", required)
    try:
        detail = check_file(f, path)
    except (ChecksumError, OSError, tarfile.TarError, zipfile.BadZipFile, UnicodeError) as err:
        return FileStatus(ds.name, f.relpath, path, "bad", str(err), required)
    return FileStatus(ds.name, f.relpath, path, "ok", detail, required)


def _select(names: Iterable[str] | None) -> list[Dataset]:
    return list(DATASETS.values()) if not names else [get_dataset(n) for n in names]


def verify(
    names: Sequence[str] | None = None, *, data_dir: Path | None = None
) -> dict[str, list[FileStatus]]:
    """Check presence and checksums (or structure) of the datasets' files; no download.

    Args:
        names: dataset names (default: all).
        data_dir: directory to check (default: :func:`data_dir`).

    Returns:
        dataset name -> one :class:`FileStatus` per file, in registry order.
    """
    root = _root(data_dir)
    return {ds.name: [_status(ds, f, root) for f in ds.files] for ds in _select(names)}


# ---------------------------------------------------------------------------
# Fetch.


def _download(url: str, downloads: Path, *, force: bool) -> Path:
    """Download ``url`` into ``downloads`` (reusing a complete earlier download)."""
    downloads.mkdir(parents=True, exist_ok=True)
    dest = downloads / url.rstrip("/").rsplit("/", 1)[-1]
    if dest.is_file() and not force:
        print(f"  using the earlier download {dest}")
        return dest
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, open(part, "wb") as out:
            total = int(resp.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=dest.name) as bar:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as err:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"could not download {url}: {getattr(err, 'reason', err)}. If this machine is "
            f"offline, copy the file from a machine that has it, or set {ENV_VAR} to a "
            f"directory that already holds the data."
        ) from err
    os.replace(part, dest)
    return dest


def _extract(archive: Path, member: str | None, out: IO[bytes]) -> None:
    """Copy ``member`` of a .zip / .tar(.gz) / .tgz archive into ``out`` (the whole
    file when ``member`` is None)."""
    if member is None:
        with open(archive, "rb") as src:
            shutil.copyfileobj(src, out, _CHUNK)
        return
    want = member.removeprefix("./")
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            if want in zf.namelist():
                with zf.open(want) as src:
                    shutil.copyfileobj(src, out, _CHUNK)
                return
    else:
        with tarfile.open(archive) as tf:
            for m in tf:
                if m.isfile() and m.name.removeprefix("./") == want:
                    src = tf.extractfile(m)
                    assert src is not None
                    shutil.copyfileobj(src, out, _CHUNK)
                    return
    raise ChecksumError(f"{archive} has no member {member!r}")


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


def fetch(
    names: Sequence[str] | None = None,
    *,
    data_dir: Path | None = None,
    force: bool = False,
    paper: bool = False,
) -> None:
    """Download, extract and verify the datasets' files into the data directory.

    Files already present and valid are skipped (unless ``force``). Each archive is
    downloaded once into ``<data_dir>/_downloads/`` and reused for all its members.
    A new copy replaces an existing file only after it passes its checksum (or its
    structural check), so a good file is never replaced by a bad one.

    Args:
        names: dataset names (default: all of them).
        data_dir: target directory (default: :func:`data_dir`).
        force: re-download and re-extract even when present and valid.
        paper: also fetch the files only the ``paper`` profile needs (WikiText-103
            train/valid, about 500 MB).

    Raises:
        ChecksumError: a downloaded file does not match (names file, expected, got).
        DownloadError: a URL could not be fetched (names the URL).
    """
    root = _root(data_dir)
    downloads = root / DOWNLOADS
    fetched: dict[str, Path] = {}
    for ds in _select(names):
        print(f"{ds.name}: {ds.description}")
        for f in ds.files:
            target = root / f.relpath
            if f.paper_only and not paper:
                print(f"  {f.relpath}: paper profile only, skipped (fetch with --paper)")
                continue
            status = _status(ds, f, root)
            if status.ok and not force:
                print(f"  {f.relpath}: present and valid, skipped ({status.detail})")
                continue
            if status.state == "bad":
                print(f"  {f.relpath}: present but invalid ({status.detail}); fetching again")
            if f.url is None:
                assert f.derive is not None, f"{f.relpath} has neither url nor derive"
                summary = _write_verified(f, target, partial(_write_bytes, f.derive(root)))
                print(f"  {f.relpath}: derived from the other files ({summary})")
                continue
            if f.url not in fetched:
                fetched[f.url] = _download(f.url, downloads, force=force)
            archive = fetched[f.url]
            try:
                summary = _write_verified(f, target, partial(_extract, archive, f.member))
            except ChecksumError as err:
                raise ChecksumError(
                    f"{err}. The existing file (if any) was left untouched; the download "
                    f"is {archive} (delete it, or pass --force, to download it again)."
                ) from err
            print(f"  {f.relpath}: fetched ({summary})")
            if f.member is None:  # the download is the file itself: no second copy
                fetched.pop(f.url).unlink()


# ---------------------------------------------------------------------------
# Command line.


def _print_table(root: Path) -> None:
    print(f"data directory: {root} ({ENV_VAR}={os.environ.get(ENV_VAR, '<unset>')})")
    for ds in DATASETS.values():
        print(f"\n{ds.name}: {ds.description}\n  licence: {ds.licence}")
        for f in ds.files:
            here = "present" if (root / f.relpath).is_file() else "missing"
            src = f.url or "derived (the conversations in the tar not in train or test)"
            paper = "  [paper profile only]" if f.paper_only else ""
            print(f"  {f.relpath:40s} {here:8s} {src}{paper}")


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m prismlib data {list,fetch,verify} [NAME ...]``.

    ``argv`` may start with ``"data"`` (it is skipped). Returns the exit status:
    0 on success, 1 when a required file is missing/invalid or a fetch failed.
    """
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["data"]:
        args_in = args_in[1:]
    parser = argparse.ArgumentParser(
        prog="python -m prismlib data", description="Fetch, verify and list the datasets."
    )
    parser.add_argument("command", choices=["fetch", "verify", "list"])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"datasets: {', '.join(DATASETS)}")
    parser.add_argument(
        "--data-dir", type=Path, default=None, help=f"default: ${ENV_VAR} or <repo>/data"
    )
    parser.add_argument("--force", action="store_true", help="fetch: download again even if valid")
    parser.add_argument("--paper", action="store_true", help="fetch: also the paper profile's large files")
    args = parser.parse_args(args_in)
    unknown = [n for n in args.names if n not in DATASETS]
    if unknown:
        parser.error(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}")
    root = args.data_dir if args.data_dir is not None else data_dir()

    if args.command == "list":
        _print_table(root)
        return 0
    if args.command == "fetch":
        try:
            fetch(args.names or None, data_dir=root, force=args.force, paper=args.paper)
        except (DownloadError, ChecksumError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        return 0
    failed = False
    for name, statuses in verify(args.names or None, data_dir=root).items():
        for s in statuses:
            note = "" if s.required else " (paper profile only)"
            print(f"{name:16s} {s.relpath:40s} {s.state:8s} {s.detail}{note}")
            failed |= s.required and not s.ok
    if failed:
        print(
            f"some files are missing or invalid: run `{FETCH_COMMAND} [NAME ...]`", file=sys.stderr
        )
    return 1 if failed else 0
