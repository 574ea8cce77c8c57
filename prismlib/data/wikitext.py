"""WikiText articles: WikiText-103 raw and WikiText-2 tokenized.

Files: ``wikitext-103-raw/wiki.{train,valid,test}.raw`` and
``wikitext-2/wiki.{train,valid,test}.tokens``. One paragraph or heading a line, each
line starting with a space; headings are `` = Title = `` (article), `` = = Section
= = ``, `` = = = Sub = = = ``. Lines may end in CRLF (the raw test file does); the
tokenized files separate lines with blank `` `` lines, the raw test copy has none.

Article titles (:func:`is_title`): a line whose stripped form is ``= T =`` with
exactly one ``=`` each side (``T`` neither starts nor ends with ``=``), UNLESS it
sits inside a sentence: a few paragraphs with an equation were broken at each
``=``, leaving fragments such as `` = 1 rad / s and a nominal impedance k = ``
between the lines `` ... cut-off frequency of ωc `` and `` 1 Ω . This is ...``. A
title-shaped line is a fragment when the line before is text that does not end a
sentence (its last character is not one of ``. ! ? " ” ) ] :``) AND the line after
is text that continues it (starts with a lower-case letter or a digit); blank
neighbours and headings never continue a sentence. In the files with blank
separator lines this agrees with "a title has a blank line before and after".

Measured: WikiText-103 raw test 60 articles (62 title-shaped lines, 2 fragments,
both in "Constant k filter"); WikiText-2 test 60 (same articles), valid 60.

:class:`Article` text: the lines after the title up to the next title, section
headings included, each stripped of its leading space and trailing whitespace
(``"= = Career = ="``), blank lines dropped, joined with ``"\\n"``. Fragments stay
in the text where they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .datadir import ChecksumError, locate

NAMES = ("wikitext103", "wikitext2")
SPLITS = ("train", "valid", "test")
_SENTENCE_END = frozenset('.!?"”)]:')


@dataclass(frozen=True)
class Article:
    """A WikiText article: its title (``"Robert Boulter"``) and text (see module doc)."""

    title: str
    text: str


def wikitext_relpath(name: str, split: str) -> str:
    """Data-dir relative path of a split: ``wikitext-103-raw/wiki.test.raw`` etc."""
    if name not in NAMES:
        raise ValueError(f"WikiText name must be one of {NAMES}, got {name!r}")
    if split not in SPLITS:
        raise ValueError(f"WikiText split must be one of {SPLITS}, got {split!r}")
    return f"wikitext-103-raw/wiki.{split}.raw" if name == "wikitext103" else f"wikitext-2/wiki.{split}.tokens"


def heading_level(line: str) -> int:
    """1 for `` = T = ``, 2 for `` = = T = = `` ..., 0 when ``line`` is no heading."""
    parts = line.strip().split(" ")
    level = 0
    while level < len(parts) // 2 and parts[level] == "=" and parts[-1 - level] == "=":
        level += 1
    inner = parts[level : len(parts) - level]
    if level == 0 or not inner or inner[0].startswith("=") or inner[-1].endswith("="):
        return 0
    return level


def _ends_sentence(line: str) -> bool:
    s = line.strip()
    return not s or heading_level(s) > 0 or s[-1] in _SENTENCE_END


def _continues_sentence(line: str) -> bool:
    s = line.strip()
    return bool(s) and heading_level(s) == 0 and (s[0].islower() or s[0].isdigit())


def is_title(prev: str | None, line: str, next_: str | None) -> bool:
    """Whether ``line`` starts an article, given its neighbouring lines (None at the
    file's ends). Rule in the module docstring."""
    if heading_level(line) != 1:
        return False
    fragment = prev is not None and next_ is not None and not _ends_sentence(prev) and _continues_sentence(next_)
    return not fragment


def split_articles(lines: Iterable[str]) -> Iterator[Article]:
    """Articles of a WikiText file's lines (CR/LF endings are stripped).

    Lines before the first title (none in the real files) are ignored.
    """
    clean = [ln.rstrip("\r\n") for ln in lines]
    title: str | None = None
    body: list[str] = []
    for i, line in enumerate(clean):
        prev = clean[i - 1] if i > 0 else None
        next_ = clean[i + 1] if i + 1 < len(clean) else None
        if is_title(prev, line, next_):
            if title is not None:
                yield Article(title, "\n".join(body))
            title, body = line.strip()[2:-2], []
        elif line.strip():
            body.append(line.strip())
    if title is not None:
        yield Article(title, "\n".join(body))


def _read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read().split("\n")


def count_articles(path: Path) -> int:
    """Number of articles in a WikiText file."""
    return sum(1 for _ in split_articles(_read_lines(path)))


def check_file(path: Path) -> str:
    """Structural check of a WikiText file: at least one article title.

    Returns ``"<n> articles"``; raises :class:`ChecksumError` when there is none.
    """
    n = count_articles(path)
    if n == 0:
        raise ChecksumError(f"{path}: no WikiText article title found")
    return f"{n:,} articles"


def load_wikitext(name: str, split: str) -> list[Article]:
    """Articles of ``name`` (``"wikitext103"`` raw or ``"wikitext2"`` tokenized) and
    ``split`` (``"train"``, ``"valid"``, ``"test"``), in file order.

    Returns:
        e.g. 60 articles for either test split. (The offline copy has only the
        WikiText-103 test split and the WikiText-2 valid / test splits.)
    """
    return list(split_articles(_read_lines(locate(wikitext_relpath(name, split), name))))


_WIKITEXT_JOINS = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))


def detokenize_wikitext(text: str) -> str:
    """Undo WikiText's number/hyphen splitting: `` @-@ `` -> ``-``, `` @,@ `` -> ``,``, `` @.@ `` -> ``.``.

    Nothing else is changed (``<unk>`` in WikiText-2 stays as the literal text ``<unk>``,
    which the uncased wordpiece tokenizer splits into ``<``, ``un``, ``##k``, ``>``).
    """
    for old, new in _WIKITEXT_JOINS:
        text = text.replace(old, new)
    return text
