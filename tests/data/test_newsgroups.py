"""20 Newsgroups (prismlib.data.newsgroups): posts and the archive's structure check; its known counts.

Every fixture is written into ``tmp_path`` in the format of the real distribution;
``PRISMLIB_DATA`` and the repository root are pointed into ``tmp_path`` (the ``data_root``
fixture of ``tests/conftest.py``) so that a real ``<repo>/data`` never leaks into a test.
The tests marked ``data`` (``real_data.reads_real_data``, last in the file) read the real
dataset through ``PRISMLIB_DATA`` (else ``<repo>/../shared/data``) and skip, naming the missing
file, when it is absent (``python -m prismlib data fetch NAME``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from data_fixtures import write_tar
from real_data import need, reads_real_data

from prismlib.data import newsgroups
from prismlib.data.datadir import ChecksumError


def test_load_newsgroups(data_root: Path) -> None:
    post = b"From: a@b.c\nSubject: caf\xe9\n\nBody line 1\n\nBody line 2\n"
    write_tar(
        data_root / "20news-bydate.tar.gz",
        {
            "20news-bydate-train/sci.med/100": post,
            "20news-bydate-train/sci.med/99": b"Subject: x\n\nshort\n",
            "20news-bydate-train/alt.atheism/5": b"Subject: y\n\nz\n",
            "20news-bydate-test/sci.med/7": b"Subject: t\n\nt\n",
        },
    )
    docs = newsgroups.load_newsgroups("train")
    assert [d.doc_id for d in docs] == ["alt.atheism/5", "sci.med/99", "sci.med/100"]
    d = docs[2]
    assert (d.newsgroup, d.split) == ("sci.med", "train")
    assert d.header == "From: a@b.c\nSubject: café"
    assert d.body == "Body line 1\n\nBody line 2\n"
    assert d.text == post.decode("latin-1")
    assert newsgroups.count_documents(data_root / "20news-bydate.tar.gz") == {"train": 3, "test": 1}
    assert len(newsgroups.NEWSGROUPS) == 20 and list(newsgroups.NEWSGROUPS) == sorted(newsgroups.NEWSGROUPS)
    with pytest.raises(ValueError):
        newsgroups.load_newsgroups("valid")


def test_newsgroups_structure_check_fails_on_wrong_counts(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "20news-bydate.tar.gz", {"20news-bydate-test/sci.med/1": b"x"})
    with pytest.raises(ChecksumError, match="11314"):
        newsgroups.check_archive(archive)


@reads_real_data
def test_newsgroups_counts() -> None:
    need("20news-bydate.tar.gz")
    train, test = newsgroups.load_newsgroups("train"), newsgroups.load_newsgroups("test")
    assert (len(train), len(test)) == (11_314, 7_532)
    assert {d.newsgroup for d in train} == {d.newsgroup for d in test} == set(newsgroups.NEWSGROUPS)
    assert len({d.doc_id for d in train}) == 11_314
    assert all(d.header and d.split == "train" for d in train)
