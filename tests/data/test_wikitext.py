"""WikiText (prismlib.data.wikitext): headings, articles, the raw and tokens layouts, detokenizing;
the articles of the real test splits.

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
from real_data import need, reads_real_data

from prismlib.data import wikitext
from prismlib.data.datadir import DataNotFoundError
from prismlib.data.wikitext import detokenize_wikitext

WIKI_LINES = [
    " = Alpha = ",
    " Alpha is a letter . ",
    " = = History = = ",
    " It was used . The cut @-@ off frequency is ωc ",
    " = 1 rad / s and impedance k = ",
    " 1 Ω . More text . ",
    " = = = Key = = = ",
    " Key ",
    " = Beta ( letter ) = ",
    " Beta follows . ",
]


def test_heading_level() -> None:
    assert wikitext.heading_level(" = Alpha = ") == 1
    assert wikitext.heading_level(" = = History = = \r") == 2
    assert wikitext.heading_level(" = = = Key = = = ") == 3
    assert wikitext.heading_level(" Bye = Athlete not required = ") == 0
    assert wikitext.heading_level(" = = = ") == 0
    assert wikitext.heading_level(" ") == 0


def expected_articles() -> list[wikitext.Article]:
    return [
        wikitext.Article(
            "Alpha",
            "Alpha is a letter .\n= = History = =\nIt was used . The cut @-@ off frequency is ωc\n"
            "= 1 rad / s and impedance k =\n1 Ω . More text .\n= = = Key = = =\nKey",
        ),
        wikitext.Article("Beta ( letter )", "Beta follows ."),
    ]


def test_split_articles_without_blank_lines_crlf() -> None:
    # the raw layout: CRLF endings, no blank separator lines; 'Beta' follows 'Key'
    # (a line that does not end a sentence) and is still a title
    lines = [ln + "\r" for ln in WIKI_LINES]
    assert list(wikitext.split_articles(lines)) == expected_articles()


def test_split_articles_with_blank_separators() -> None:
    lines = [" "]
    for ln in WIKI_LINES:
        # the tokens layout: headings between blank lines; the fragment is glued to text
        glued = ln.startswith(" = 1") or ln.startswith(" 1 Ω") or "ωc" in ln
        lines += [ln] if glued else [ln, " "]
    assert list(wikitext.split_articles(lines)) == expected_articles()


def test_is_title_rule() -> None:
    assert wikitext.is_title(None, " = A = ", " text . ")
    assert wikitext.is_title(" Key ", " = A = ", " A is . ")
    assert wikitext.is_title(" ends . ", " = A = ", " 1999 was . ")
    assert not wikitext.is_title(" frequency ωc ", " = 1 rad = ", " 1 Ω . ")
    assert not wikitext.is_title(" x ", " = = Sec = = ", " y ")


def test_load_wikitext_paths(data_root: Path) -> None:
    raw = data_root / "wikitext-103-raw" / "wiki.test.raw"
    raw.parent.mkdir()
    raw.write_bytes("\r\n".join(WIKI_LINES).encode() + b"\r\n")
    tok = data_root / "wikitext-2" / "wiki.valid.tokens"
    tok.parent.mkdir()
    tok.write_text(" \n = <unk> = \n \n a <unk> . \n \n")
    assert wikitext.load_wikitext("wikitext103", "test") == expected_articles()
    assert wikitext.load_wikitext("wikitext2", "valid") == [wikitext.Article("<unk>", "a <unk> .")]
    assert wikitext.count_articles(raw) == 2
    with pytest.raises(ValueError):
        wikitext.load_wikitext("wikitext3", "test")
    with pytest.raises(DataNotFoundError, match="fetch wikitext2"):
        wikitext.load_wikitext("wikitext2", "test")


@reads_real_data
def test_wikitext103_test_articles() -> None:
    need("wikitext-103-raw/wiki.test.raw")
    articles = wikitext.load_wikitext("wikitext103", "test")
    assert len(articles) == 60
    assert articles[0].title == "Robert Boulter" and articles[-1].title == "The Hustler ( film )"
    k_filter = next(a for a in articles if a.title == "Constant k filter")
    assert "= 1 rad / s and a nominal impedance k =" in k_filter.text  # fragment, not a title
    assert not any("\r" in a.text for a in articles)


@reads_real_data
def test_wikitext2_articles() -> None:
    need("wikitext-2/wiki.valid.tokens", "wikitext-2/wiki.test.tokens")
    valid = wikitext.load_wikitext("wikitext2", "valid")
    test = wikitext.load_wikitext("wikitext2", "test")
    assert (len(valid), len(test)) == (60, 60)
    assert valid[0].title == "Homarus gammarus"


def test_detokenize_wikitext():
    assert detokenize_wikitext("the 1 @,@ 000 @-@ year @-@ old 3 @.@ 5 <unk>") == "the 1,000-year-old 3.5 <unk>"
