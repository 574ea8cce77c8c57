"""20 Newsgroups, "bydate" version, read straight from ``20news-bydate.tar.gz``.

The archive holds ``20news-bydate-{train,test}/<newsgroup>/<number>``: 11,314
training and 7,532 test posts in 20 newsgroups. A post is a header (``From:``,
``Subject:`` ...), a blank line, and the body; files are decoded as latin-1.
"""

from __future__ import annotations

import tarfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .datadir import ChecksumError, locate

DATASET = "newsgroups"
TAR_RELPATH = "20news-bydate.tar.gz"
SPLITS = ("train", "test")
DOCUMENTS = {"train": 11_314, "test": 7_532}
"""Posts per split in the canonical archive."""

NEWSGROUPS: tuple[str, ...] = (
    "alt.atheism",
    "comp.graphics",
    "comp.os.ms-windows.misc",
    "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware",
    "comp.windows.x",
    "misc.forsale",
    "rec.autos",
    "rec.motorcycles",
    "rec.sport.baseball",
    "rec.sport.hockey",
    "sci.crypt",
    "sci.electronics",
    "sci.med",
    "sci.space",
    "soc.religion.christian",
    "talk.politics.guns",
    "talk.politics.mideast",
    "talk.politics.misc",
    "talk.religion.misc",
)
"""The 20 newsgroup names, sorted (label id = position)."""


@dataclass(frozen=True)
class NewsgroupsDoc:
    """One post.

    Attributes:
        doc_id: ``"<newsgroup>/<number>"`` (unique; a number alone may recur in
            another group for cross-posts).
        newsgroup: one of :data:`NEWSGROUPS`.
        split: ``"train"`` or ``"test"``.
        header: the lines before the first blank line.
        body: everything after it.
    """

    doc_id: str
    newsgroup: str
    split: str
    header: str
    body: str

    @property
    def text(self) -> str:
        """Header, blank line, body (the file's text)."""
        return f"{self.header}\n\n{self.body}"


def split_post(text: str) -> tuple[str, str]:
    """``(header, body)`` split at the first blank line (no blank line: all header)."""
    header, _, body = text.partition("\n\n")
    return header, body


def _parse_member(name: str) -> tuple[str, str, str] | None:
    """``20news-bydate-train/sci.med/58045`` -> ``("train", "sci.med", "58045")``."""
    parts = name.removeprefix("./").split("/")
    if len(parts) != 3 or not parts[0].startswith("20news-bydate-"):
        return None
    split = parts[0].removeprefix("20news-bydate-")
    return (split, parts[1], parts[2]) if split in SPLITS and parts[2] else None


def count_documents(tar_path: Path) -> dict[str, int]:
    """Number of posts per split in the archive (reads the member list only)."""
    counts: Counter[str] = Counter()
    with tarfile.open(tar_path) as tf:
        for m in tf.getmembers():
            parsed = _parse_member(m.name) if m.isfile() else None
            if parsed:
                counts[parsed[0]] += 1
    return {s: counts[s] for s in SPLITS}


def check_archive(tar_path: Path) -> str:
    """Structural check of the archive: :data:`DOCUMENTS` posts per split.

    Returns a one-line summary; raises :class:`ChecksumError` on other counts.
    """
    counts = count_documents(tar_path)
    if counts != DOCUMENTS:
        raise ChecksumError(f"{tar_path}: expected {DOCUMENTS} documents, got {counts}")
    return f"{DOCUMENTS['train']:,} train + {DOCUMENTS['test']:,} test documents"


def _sort_key(doc: NewsgroupsDoc) -> tuple[str, int, str]:
    number = doc.doc_id.rsplit("/", 1)[1]
    return (doc.newsgroup, int(number) if number.isdigit() else -1, number)


def load_newsgroups(split: str) -> list[NewsgroupsDoc]:
    """Posts of the ``"train"`` or ``"test"`` split.

    Returns:
        11,314 / 7,532 documents sorted by newsgroup, then by post number.

    Raises:
        ValueError: an unknown split, or a newsgroup folder outside :data:`NEWSGROUPS`.
    """
    if split not in SPLITS:
        raise ValueError(f"20 Newsgroups split must be one of {SPLITS}, got {split!r}")
    docs: list[NewsgroupsDoc] = []
    with tarfile.open(locate(TAR_RELPATH, DATASET)) as tf:
        for m in tf:
            parsed = _parse_member(m.name) if m.isfile() else None
            if parsed is None or parsed[0] != split:
                continue
            _, group, number = parsed
            if group not in NEWSGROUPS:
                raise ValueError(f"unexpected newsgroup folder {m.name!r}")
            data = tf.extractfile(m)
            assert data is not None
            header, body = split_post(data.read().decode("latin-1"))
            docs.append(NewsgroupsDoc(f"{group}/{number}", group, split, header, body))
    return sorted(docs, key=_sort_key)
