"""Part-of-speech tagged documents: Penn Treebank ``.pos`` files and CoNLL-2000.

Sources:

- NLTK's treebank sample, ``nltk_data/corpora/treebank.zip`` (``treebank/tagged/
  wsj_0001.pos`` .. ``wsj_0199.pos``), read straight out of the zip;
- CoNLL-2000, ``nltk_data/corpora/conll2000.zip`` (``conll2000/{train,test}.txt``);
- a user's own LDC Treebank-3 ``tagged/pos/wsj/**/*.pos`` directory.

Reading a ``.pos`` file (:func:`parse_pos_text`):

- ``[`` and ``]`` chunk brackets are ignored; lines of ``=`` separate paragraphs /
  articles and always end a sentence;
- a token ``word/TAG`` is split on its LAST slash; ``\\/`` and ``\\*`` in the word are
  un-escaped to ``/`` and ``*``; an ambiguous tag ``NN|JJ`` keeps its first tag;
- sentences: in these files a blank line separates *chunks of text*, not always
  sentences (in NLTK's sample over 1,000 blank lines fall inside a sentence, e.g.
  before a relative clause, and closing quotes often follow one). A blank line
  ends a sentence only when the sentence so far ends with a token tagged ``.``
  (optionally followed by closing ``''`` / ``)`` / ``-RRB-``); closing tokens right
  after such a blank line still belong to the sentence they close.

On NLTK's sample this gives 199 documents, 3,934 sentences and 94,200 tokens. NLTK's
parsed version of the same files (``.mrg``) has 3,914 sentences and 94,084 non-trace
tokens: the ``.pos`` files hold a few lines the parsed files leave out (bylines,
``(See related story ...)``), and 98% of our boundaries coincide with the parsed
sentence boundaries (the rest are abbreviations split as ``N.J`` + ``.`` in the
``.pos`` files, and headlines without a final period).
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .datadir import locate

TaggedSentence = list[tuple[str, str]]

SENTENCE_FINAL_TAG = "."
CLOSING_TAGS = frozenset({"''", ")", "-RRB-"})
CONLL_SPLITS = ("train", "test")
TREEBANK_RELPATH = "nltk_data/corpora/treebank.zip"  # dataset "treebank_sample"
CONLL_RELPATH = "nltk_data/corpora/conll2000.zip"  # dataset "conll2000"


@dataclass
class TaggedDocument:
    """A document as a list of sentences of ``(word, tag)`` pairs.

    Attributes:
        doc_id: e.g. ``"wsj_0001"``, or ``"conll2000-train"``.
        sentences: sentences in document order.
    """

    doc_id: str
    sentences: list[TaggedSentence]

    @property
    def n_tokens(self) -> int:
        """Number of tagged tokens in the document."""
        return sum(len(s) for s in self.sentences)

    def tokens(self) -> TaggedSentence:
        """All ``(word, tag)`` pairs of the document, sentences concatenated."""
        return [tok for sent in self.sentences for tok in sent]


def parse_token(token: str) -> tuple[str, str]:
    """``"7\\/8/CD"`` -> ``("7/8", "CD")``; ``"x/VBG|NN"`` -> ``("x", "VBG")``.

    Raises:
        ValueError: the token has no ``/TAG`` part.
    """
    word, sep, tag = token.rpartition("/")
    if not sep or not word or not tag:
        raise ValueError(f"not a word/TAG token: {token!r}")
    return word.replace("\\/", "/").replace("\\*", "*"), tag.split("|")[0]


def _ends_sentence(sentence: TaggedSentence) -> bool:
    i = len(sentence) - 1
    while i >= 0 and sentence[i][1] in CLOSING_TAGS:
        i -= 1
    return i >= 0 and sentence[i][1] == SENTENCE_FINAL_TAG


def parse_pos_text(text: str) -> list[TaggedSentence]:
    """Sentences of one Penn Treebank ``.pos`` file (rules in the module docstring).

    Returns:
        list of sentences, each a non-empty list of ``(word, tag)``.
    """
    sentences: list[TaggedSentence] = []
    current: TaggedSentence = []
    pending_break = False  # a blank line followed a sentence-final token

    def flush() -> None:
        nonlocal current
        if current:
            sentences.append(current)
        current = []

    for line in text.splitlines():
        stripped = line.strip()
        if stripped and set(stripped) == {"="}:
            flush()
            pending_break = False
            continue
        if not stripped:
            pending_break = pending_break or (bool(current) and _ends_sentence(current))
            continue
        for raw in stripped.split():
            if raw in ("[", "]"):
                continue
            word, tag = parse_token(raw)
            if pending_break and tag not in CLOSING_TAGS:
                flush()
                pending_break = False
            current.append((word, tag))
    flush()
    return sentences


def _doc_id(name: str) -> str:
    return Path(name).name.removesuffix(".pos")


def load_treebank_sample() -> list[TaggedDocument]:
    """NLTK's Penn Treebank sample from ``treebank.zip``, one document per WSJ file.

    Returns:
        199 documents ``wsj_0001`` .. ``wsj_0199`` in file order (3,934 sentences,
        94,200 tokens).
    """
    path = locate(TREEBANK_RELPATH, "treebank_sample")
    with zipfile.ZipFile(path) as zf:
        names = sorted(n for n in zf.namelist() if n.startswith("treebank/tagged/") and n.endswith(".pos"))
        return [TaggedDocument(_doc_id(n), parse_pos_text(zf.read(n).decode("ascii"))) for n in names]


def load_tagged_dir(path: str | Path) -> list[TaggedDocument]:
    """Documents of every ``*.pos`` file under ``path`` (recursively), sorted by path.

    Meant for a licensed LDC Treebank-3 copy: pass its ``tagged/pos/wsj`` directory.
    Same reader as :func:`load_treebank_sample`. Files are decoded as latin-1.

    Raises:
        FileNotFoundError: ``path`` is not a directory or holds no ``.pos`` file.
    """
    root = Path(path)
    files = sorted(root.rglob("*.pos")) if root.is_dir() else []
    if not files:
        raise FileNotFoundError(f"no .pos files under {root}: pass the 'tagged/pos/wsj' directory of a Penn Treebank-3 (LDC99T42) copy")
    return [TaggedDocument(_doc_id(f.name), parse_pos_text(f.read_text(encoding="latin-1"))) for f in files]


def parse_conll_lines(lines: Iterable[str]) -> list[TaggedSentence]:
    """Sentences of CoNLL-2000 lines ``word POS chunk``; blank lines end sentences."""
    sentences: list[TaggedSentence] = []
    current: TaggedSentence = []
    for line in lines:
        fields = line.split()
        if not fields:
            if current:
                sentences.append(current)
            current = []
            continue
        if len(fields) != 3:
            raise ValueError(f"CoNLL-2000 line must be 'word POS chunk', got {line!r}")
        current.append((fields[0], fields[1]))
    if current:
        sentences.append(current)
    return sentences


def load_conll2000(split: str) -> TaggedDocument:
    """CoNLL-2000 ``"train"`` (WSJ 15-18) or ``"test"`` (WSJ 20) as ONE document.

    CoNLL-2000 keeps no WSJ file boundaries, so the whole split is a single
    :class:`TaggedDocument` (``doc_id`` ``"conll2000-<split>"``) whose sentences are
    in corpus order; consecutive sentences mostly come from the same article.

    Returns:
        train: 8,936 sentences, 211,727 tokens; test: 2,012 sentences, 47,377 tokens.
    """
    if split not in CONLL_SPLITS:
        raise ValueError(f"CoNLL-2000 split must be one of {CONLL_SPLITS}, got {split!r}")
    path = locate(CONLL_RELPATH, "conll2000")
    with zipfile.ZipFile(path) as zf:
        text = zf.read(f"conll2000/{split}.txt").decode("latin-1")
    return TaggedDocument(f"conll2000-{split}", parse_conll_lines(text.splitlines()))
