"""Where the datasets come from, and how to fetch and verify them.

Every dataset the project reads is a set of :class:`DataFile` s: a path relative to
the data directory (the canonical layout of its public distribution), its sources
(mirrors, tried in order), and a SHA-256 when the file is known byte for byte. A
source is a :class:`Download` (a URL that is the file, or an archive holding it as a
member, with the archive's own SHA-256 when it is published) or :class:`ParquetRows`
(parquet shards of one row per line, which fetch turns back into the canonical file).
Files without a known checksum (archives that public mirrors repack, files with no
offline copy) are verified by their structure instead, by a check that the dataset's
own module owns (for example the number of documents in the archive,
:func:`prismlib.data.newsgroups.check_archive`); fetch prints the digest it got.

The registry imports the dataset modules; they import only
:mod:`prismlib.data.datadir` (the data directory, ``locate`` and the errors), which
this module re-exports. Command line (``python -m prismlib data ...``)::

    python -m prismlib data list
    python -m prismlib data fetch [NAME ...] [--force] [--paper] [--data-dir DIR]
    python -m prismlib data verify [NAME ...] [--data-dir DIR]
    python -m prismlib data check-urls [NAME ...] [--timeout S]
"""

from __future__ import annotations

import argparse
import os
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import IO

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
from .download import PROBE_TIMEOUT_S, UrlStatus, download, probe
from .unpack import copy_member, require_pyarrow, write_parquet_lines

__all__ = [
    "DATASETS",
    "ENV_VAR",
    "ChecksumError",
    "DataFile",
    "DataNotFoundError",
    "Dataset",
    "Download",
    "DownloadError",
    "FileStatus",
    "ParquetRows",
    "check_file",
    "check_urls",
    "data_dir",
    "dataset_of",
    "fetch",
    "get_dataset",
    "locate",
    "main",
    "verify",
]

DOWNLOADS = "_downloads"

StructureCheck = Callable[[Path], str]
"""Checks a file's structure; returns a one-line summary or raises ChecksumError."""

Deriver = Callable[[Path], bytes]
"""Builds a derived file's bytes from other files of the data directory."""


@dataclass(frozen=True)
class Download:
    """A source: a URL whose bytes are the file, or an archive (.zip, .tar.gz, .tgz)
    holding it as ``member``.

    ``sha256`` is the digest of the bytes at ``url`` (the archive itself) when it is
    published; the download is checked against it before anything is extracted.
    """

    url: str
    member: str | None = None
    sha256: str | None = None

    @property
    def urls(self) -> tuple[str, ...]:
        return (self.url,)

    @property
    def label(self) -> str:
        return self.url


@dataclass(frozen=True)
class ParquetRows:
    """A source: parquet shards ``base/shard`` whose column ``column`` holds one row per
    line of the file, line end included (the Hugging Face hub's conversion); an empty
    row stands for ``empty_row``. Fetch concatenates the shards' lines in order
    (:func:`prismlib.data.unpack.write_parquet_lines`; needs pyarrow)."""

    base: str
    shards: tuple[str, ...]
    column: str = "text"
    empty_row: str = " \n"

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(f"{self.base}/{shard}" for shard in self.shards)

    @property
    def label(self) -> str:
        return " + ".join(self.urls)


Source = Download | ParquetRows


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset.

    Attributes:
        relpath: path relative to the data directory (canonical layout), POSIX style.
        sources: where to fetch it, tried in order (mirrors); empty for a derived file.
        sha256: expected digest when the file is known byte for byte, else ``None``.
        check: structural check used when ``sha256`` is ``None``.
        derive: builds the file's bytes from the data directory (when no source).
        paper_only: needed only by the ``paper`` profile (not in the offline copy).
    """

    relpath: str
    sources: tuple[Source, ...]
    sha256: str | None = None
    check: StructureCheck | None = None
    derive: Deriver | None = None
    paper_only: bool = False

    @property
    def urls(self) -> tuple[str, ...]:
        """Every URL of every source, in order."""
        return tuple(url for source in self.sources for url in source.urls)


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
_LDC = "LDC fair-use terms (Wall Street Journal text of the Penn Treebank)"
_WIKI = "freely redistributable for research (Wikipedia text, CC BY-SA)"

_PTB_SHA = {
    "train": "fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
    "valid": "c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
    "test": "dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
}

# WikiText. The original bucket (s3.amazonaws.com/research.metamind.io) answers 403.
# 1. Stephen Merity (WikiText's first author) re-hosts the original zips at
#    wikitext.smerity.com. The digests are those the Hugging Face `datasets` library
#    recorded for the same zips at the old URLs (huggingface/datasets,
#    datasets/wikitext/dataset_infos.json: wikitext-103-raw-v1.zip 191,984,949 bytes,
#    wikitext-2-v1.zip 4,475,746 bytes); fetch checks the download against them.
# 2. The Hugging Face hub's parquet conversion (Salesforce/wikitext), at a pinned
#    revision, one row per line; fetch rebuilds the canonical file from it. No digest
#    of these shards is published in a place we can cite: the rebuilt file is checked
#    instead (WikiText-2 valid / test against their pinned digests, which the
#    rebuilding reproduces; the others by structure).
_SMERITY = "https://wikitext.smerity.com"
_WT103_ZIP = f"{_SMERITY}/wikitext-103-raw-v1.zip"
_WT103_ZIP_SHA = "91c00ae287f0d699e18605c84afc9e45c192bc6b7797ff8837e5474655a33794"
_WT2_ZIP = f"{_SMERITY}/wikitext-2-v1.zip"
_WT2_ZIP_SHA = "92675f1d63015c1c8b51f1656a52d5bdbc33aafa60cc47a218a66e7ee817488c"
_HF_WIKITEXT = "https://huggingface.co/datasets/Salesforce/wikitext/resolve/b08601e04326c79dfdd32d625aee71d232d685c3"
_HF_SPLIT = {"train": "train", "valid": "validation", "test": "test"}


def _wikitext_sources(zip_url: str, zip_sha: str, member: str, hf_config: str, split: str, n_shards: int = 1) -> tuple[Source, ...]:
    shards = tuple(f"{hf_config}/{_HF_SPLIT[split]}-{i:05d}-of-{n_shards:05d}.parquet" for i in range(n_shards))
    return (Download(zip_url, member, zip_sha), ParquetRows(_HF_WIKITEXT, shards))


def _wt103(split: str, n_shards: int = 1) -> tuple[Source, ...]:
    member = wikitext.wikitext_relpath("wikitext103", split)
    config = "wikitext-103-raw-v1"
    return _wikitext_sources(_WT103_ZIP, _WT103_ZIP_SHA, member, config, split, n_shards)


def _wt2(split: str) -> tuple[Source, ...]:
    member = wikitext.wikitext_relpath("wikitext2", split)
    return _wikitext_sources(_WT2_ZIP, _WT2_ZIP_SHA, member, "wikitext-2-v1", split)


def _datasets() -> tuple[Dataset, ...]:
    return (
        Dataset(
            "ptb",
            "Penn Treebank language-modelling text, Mikolov's preprocessing (10k vocabulary)",
            _LDC + "; Mikolov's simple-examples preprocessing",
            tuple(
                DataFile(
                    f"ptb/ptb.{s}.txt",
                    (Download(_PTB_URL, f"./simple-examples/data/ptb.{s}.txt"),),
                    sha,
                )
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
                    (Download(f"{_NLTK}/treebank.zip"),),
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
                    (Download(f"{_NLTK}/conll2000.zip"),),
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
                    swda.TAR_RELPATH,
                    (Download("https://web.stanford.edu/~jurafsky/swb1_dialogact_annot.tar.gz"),),
                    check=swda.check_archive,
                ),
                DataFile(
                    swda.split_list_relpath("train"),
                    (Download(f"{_WS97}/ws97-train-convs.list"),),
                    check=swda.check_id_list(1115),
                ),
                DataFile(
                    swda.split_list_relpath("test"),
                    (Download(f"{_WS97}/ws97-test-convs.list"),),
                    check=swda.check_id_list(19),
                ),
                DataFile(
                    swda.split_list_relpath("val"),
                    (),
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
                    newsgroups.TAR_RELPATH,
                    (Download("http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz"),),
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
                DataFile("wikitext-103-raw/wiki.test.raw", _wt103("test"), check=wikitext.check_file),
                DataFile(
                    "wikitext-103-raw/wiki.valid.raw",
                    _wt103("valid"),
                    check=wikitext.check_file,
                    paper_only=True,
                ),
                DataFile(
                    "wikitext-103-raw/wiki.train.raw",
                    _wt103("train", n_shards=2),
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
                    _wt2("train"),
                    check=wikitext.check_file,
                    paper_only=True,
                ),
                DataFile(
                    "wikitext-2/wiki.valid.tokens",
                    _wt2("valid"),
                    "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
                ),
                DataFile(
                    "wikitext-2/wiki.test.tokens",
                    _wt2("test"),
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


def _select(names: Iterable[str] | None) -> list[Dataset]:
    return list(DATASETS.values()) if not names else [get_dataset(n) for n in names]


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


def _fetch_file(f: DataFile, target: Path, downloads: _Downloads) -> tuple[str, Source]:
    """Try ``f``'s sources in order; the first that gives a valid file wins.

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
                print(f"  {f.relpath}: {source.label} failed; trying the next source")
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
) -> None:
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

    Raises:
        ChecksumError: a downloaded file does not match (names file, expected, got).
        DownloadError: a URL could not be fetched (names the URL).
        ImportError: a file's only source is parquet and pyarrow is missing.
    """
    root = _root(data_dir)
    downloads = _Downloads(root / DOWNLOADS, force, {})
    listed = listed_digests(root)
    for ds in _select(names):
        print(f"{ds.name}: {ds.description}")
        for f in ds.files:
            target = root / f.relpath
            if f.paper_only and not paper:
                print(f"  {f.relpath}: paper profile only, skipped (fetch with --paper)")
                continue
            status = _status(ds, f, root, listed)
            if status.ok and not force:
                print(f"  {f.relpath}: present and valid, skipped ({status.detail})")
                continue
            if status.state == "bad":
                print(f"  {f.relpath}: present but invalid ({status.detail}); fetching again")
            if not f.sources:
                assert f.derive is not None, f"{f.relpath} has neither a source nor derive"
                summary = _write_verified(f, target, partial(_write_bytes, f.derive(root)))
                _record_digest(root, f.relpath, sha256_of(target))
                print(f"  {f.relpath}: derived from the other files ({summary})")
                continue
            summary, source = _fetch_file(f, target, downloads)
            _record_digest(root, f.relpath, sha256_of(target))
            print(f"  {f.relpath}: fetched from {source.label} ({summary})")


# ---------------------------------------------------------------------------
# Command line.


def _print_table(root: Path) -> None:
    print(f"data directory: {root} ({ENV_VAR}={os.environ.get(ENV_VAR, '<unset>')})")
    for ds in DATASETS.values():
        print(f"\n{ds.name}: {ds.description}\n  licence: {ds.licence}")
        for f in ds.files:
            here = "present" if (root / f.relpath).is_file() else "missing"
            labels = [s.label for s in f.sources] or ["derived (the conversations in the tar not in train or test)"]
            paper = "  [paper profile only]" if f.paper_only else ""
            print(f"  {f.relpath:40s} {here:8s} {labels[0]}{paper}")
            for label in labels[1:]:
                print(f"  {'':40s} {'':8s} or {label}")


def _print_url_checks(statuses: Sequence[UrlStatus]) -> bool:
    for s in statuses:
        print(f"{'ok' if s.ok else 'FAILED':6s} {s.detail:40s} {s.url}")
    failed = [s for s in statuses if not s.ok]
    if failed:
        print(f"{len(failed)} of {len(statuses)} source URLs did not answer", file=sys.stderr)
    return not failed


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m prismlib data {list,fetch,verify,check-urls} [NAME ...]``.

    ``argv`` may start with ``"data"`` (it is skipped). Returns the exit status:
    0 on success, 1 when a required file is missing/invalid, a fetch failed, or a
    source URL did not answer.
    """
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["data"]:
        args_in = args_in[1:]
    parser = argparse.ArgumentParser(prog="python -m prismlib data", description="Fetch, verify and list the datasets.")
    parser.add_argument("command", choices=["fetch", "verify", "list", "check-urls"])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"datasets: {', '.join(DATASETS)}")
    parser.add_argument("--data-dir", type=Path, default=None, help=f"default: ${ENV_VAR} or <repo>/data")
    parser.add_argument("--force", action="store_true", help="fetch: download again even if valid")
    parser.add_argument("--paper", action="store_true", help="fetch: also the paper profile's large files")
    parser.add_argument("--profile", default=None, help="fetch: what this profile reads (checked first; paper: --paper)")
    parser.add_argument("--timeout", type=float, default=PROBE_TIMEOUT_S, help="check-urls: seconds per request")
    args = parser.parse_args(args_in)
    unknown = [n for n in args.names if n not in DATASETS]
    if unknown:
        parser.error(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}")
    root = args.data_dir if args.data_dir is not None else data_dir()
    if args.profile is not None:  # a wrong profile is refused before anything is downloaded
        from prismlib.profiles import get_profile

        args.paper = args.paper or get_profile(args.profile).data == "full"

    if args.command == "list":
        _print_table(root)
        return 0
    if args.command == "check-urls":
        return 0 if _print_url_checks(check_urls(args.names or None, timeout=args.timeout)) else 1
    if args.command == "fetch":
        try:
            fetch(args.names or None, data_dir=root, force=args.force, paper=args.paper)
        except (DownloadError, ChecksumError, ImportError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        return 0
    failed = False
    env = os.environ.get(ENV_VAR)
    where = f"{root} ({ENV_VAR}={env})" if env else f"{root} ({ENV_VAR} not set)"
    found = verify(args.names or None, data_dir=root)
    if not any(s.state != "missing" for statuses in found.values() for s in statuses):
        print(f"the data directory {where} holds none of the datasets: run `{FETCH_COMMAND}`, "
              f"or set {ENV_VAR} to the directory that holds them", file=sys.stderr)  # fmt: skip
        return 1
    print(f"data directory: {where}")
    for name, statuses in found.items():
        for s in statuses:
            note = "" if s.required else " (paper profile only)"
            print(f"{name:16s} {s.relpath:40s} {s.state:8s} {s.detail}{note}")
            failed |= s.required and not s.ok
    if failed:
        print(f"some files are missing or invalid: run `{FETCH_COMMAND} [NAME ...]`", file=sys.stderr)
    return 1 if failed else 0
