"""The datasets the project reads: each one's files, sources, checksums and licence.

Every dataset is a set of :class:`DataFile` s: a path relative to the data directory
(the canonical layout of its public distribution), its sources (mirrors, tried in
order), and a SHA-256 when the file is known byte for byte. A source is a
:class:`Download` (a URL that is the file, or an archive holding it as a member, with
the archive's own SHA-256 when it is published) or :class:`ParquetRows` (parquet shards
of one row per line, which fetch turns back into the canonical file). Files without a
known checksum (archives that public mirrors repack, files with no offline copy) are
verified by their structure instead, by a check that the dataset's own module owns (for
example the number of documents in the archive,
:func:`prismlib.data.newsgroups.check_archive`).

:data:`DATASETS` is the catalogue; :mod:`prismlib.data.registry` fetches and verifies
its files, and ``python -m prismlib data`` (:mod:`prismlib.runs.data`) lists them.
The catalogue imports the dataset modules' checks; they import only
:mod:`prismlib.data.datadir`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from . import newsgroups, swda, wikitext

__all__ = [
    "DATASETS",
    "DataFile",
    "Dataset",
    "Deriver",
    "Download",
    "ParquetRows",
    "Source",
    "StructureCheck",
    "dataset_of",
    "get_dataset",
]

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


# ---------------------------------------------------------------------------
# The catalogue.

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
