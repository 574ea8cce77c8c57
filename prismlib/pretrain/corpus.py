"""The pretraining text: the *training* text of the offline corpora, and never a sentence
of a split that a notebook evaluates on.

==============  ===========================================================================
source          what enters the pretraining text (one :class:`Document` each)
==============  ===========================================================================
``newsgroups``  20 Newsgroups bydate **train**, the body of each post (the header, up to
                the first blank line, stripped: :func:`prismlib.data.newsgroups.split_post`)
``swda``        Switchboard WS97 **training** conversations (1,115), the plain text of
                each utterance (:attr:`prismlib.data.Utterance.plain_text`)
``ptb``         Mikolov's PTB **train** minus every sentence of CoNLL-2000's test section
                (WSJ section 20 is the tail of ``ptb.train.txt``: lines 40,057-42,068),
                in blocks of :data:`PTB_BLOCK` lines; ``<unk>`` becomes the tokenizer's
                ``[UNK]``, ``N`` (a number) stays
==============  ===========================================================================

Never: 20 Newsgroups test (the topic task's test), Switchboard's validation and test
conversations, CoNLL-2000 test (the POS task's test), any WikiText (Fig. 5 and 02's
masked-LM probe). NLTK's treebank sample (WSJ files 0001-0199, inside PTB train) is the POS
probe's *training and validation* text, evaluated on nowhere, so it stays.

**Sentences and their keys.** A sentence is compared through its normalised form
(:func:`normalise_sentence`), which puts raw text in the shape of Mikolov's PTB: lower case,
whitespace collapsed, a number (and ``%``) -> ``N``, punctuation tokens and bracket tokens
(``-LRB-``) dropped, a word outside PTB's 10,000-word vocabulary -> ``<unk>``. With it every
one of the 2,012 CoNLL-2000 test sentences is found in PTB train (measured; the tests check
the shape of the match on generated text). Its key (:func:`sentence_key`) is 8 bytes of
BLAKE2b of that form.

**Exclusion.** :func:`build_corpus` drops every sentence of the pretraining text whose key is
the key of a sentence of an evaluated split (:data:`EVALUATED`); a split counts its sentences
of at least :attr:`EvaluatedSplit.min_words` normalised words: every sentence of CoNLL-2000
test (it sits inside PTB's training text), and sentences of at least :data:`MIN_WORDS` words
elsewhere (a short line such as "thank you" or "uh-huh" is shared by chance, not leaked: it
stays). :func:`check_disjoint` is the guard the training calls before its first step: a
corpus holding such a sentence is refused with one ``ValueError`` naming the split.

**Held-out slice.** Every :data:`HELDOUT_EVERY`-th document of each source (position
``i % 50 == 49`` in the source's order) is held out of training for the held-out masked-LM
loss: 2% of each source, spread over its newsgroups and its conversations.

**Digest.** :func:`corpus_digest` is the SHA-256 of the documents (source, id, text, held out
or not) in order: the corpus part of a pretraining record's key.

:func:`synthetic_documents` is generated text for the tests and for smoke runs of the
benchmarks, never a silent stand-in for the real corpus.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

SOURCES: tuple[str, ...] = ("newsgroups", "swda", "ptb")
"""The pretraining text's sources, in corpus order."""
PTB_BLOCK = 50
"""PTB lines per document (Mikolov's text keeps no article boundaries)."""
HELDOUT_EVERY = 50
"""Every 50th document of each source is held out (2%)."""
MIN_WORDS = 6
"""A sentence of an evaluated split counts for the exclusion from this many normalised words
(CoNLL-2000 test: from one word)."""
PTB_UNK = "<unk>"
NUMBER = "N"
UNK_TOKEN = "[UNK]"
"""What PTB's ``<unk>`` becomes in the pretraining text (the WordPiece tokenizer keeps it whole)."""

_NUMBER = re.compile(r"^[+\-]?[\d.,:/\\\-]*\d[\d.,:/\\\-]*%?$")
_ALNUM = re.compile(r"[0-9a-z]")
_BRACKET = re.compile(r"^-[lr][rcs]b-$")
_EDGE = string.punctuation
_QUOTE_PREFIX = re.compile(r"^\s*(?:[>|:}]\s*)+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# =========================================================================== sentences


def normalise_sentence(text: str, vocab: Collection[str]) -> str:
    """The PTB-shaped form of a sentence (rules in the module docstring).

    Args:
        text: a sentence, raw (``"The 3.7 million shares, Sept. 30."``) or in Mikolov's
            PTB form (``"the N million shares sept. N"``); whitespace-separated tokens.
        vocab: PTB's word types (:func:`prismlib.data.ptb_vocab`): a token outside it is
            ``<unk>``, as Mikolov mapped every rare word.

    Returns:
        the normalised tokens joined by single spaces (``"the N million shares sept. N"``).
    """
    out: list[str] = []
    for raw in text.split():
        if raw in (NUMBER, PTB_UNK):
            out.append(raw)
            continue
        tok = raw.lower().replace("\\/", "/").replace("\\*", "*")
        if tok == UNK_TOKEN.lower():
            out.append(PTB_UNK)
        elif tok in vocab:
            out.append(tok)
        elif _NUMBER.match(tok) or tok == "%":
            out.append(NUMBER)
        elif not _ALNUM.search(tok) or _BRACKET.match(tok):
            continue
        else:
            stripped = tok.strip(_EDGE)
            if stripped in vocab:
                out.append(stripped)
            elif _NUMBER.match(stripped):
                out.append(NUMBER)
            else:
                out.append(PTB_UNK)
    return " ".join(t for t in out if t != "'")  # Mikolov dropped closing single quotes, kept the possessive


def sentence_key(text: str, vocab: Collection[str], min_words: int = 1) -> int | None:
    """8-byte BLAKE2b key of :func:`normalise_sentence` ``(text, vocab)``; ``None`` when the
    normalised sentence has fewer than ``min_words`` words."""
    norm = normalise_sentence(text, vocab)
    if not norm or norm.count(" ") + 1 < min_words:
        return None
    return _key(norm)


def _key(norm: str) -> int:
    return int.from_bytes(hashlib.blake2b(norm.encode(), digest_size=8).digest(), "little")


def sentence_keys(sentences: Iterable[str], vocab: Collection[str], min_words: int = 1) -> set[int]:
    """Keys (:func:`sentence_key`) of the sentences of at least ``min_words`` normalised words."""
    keys = (sentence_key(s, vocab, min_words) for s in sentences)
    return {k for k in keys if k is not None}


def split_sentences(text: str) -> list[str]:
    """Sentences of raw text: each line (with any e-mail quote marks ``>``, ``|`` at its
    start removed) cut after ``.``, ``!`` or ``?`` followed by whitespace; blank pieces dropped."""
    out: list[str] = []
    for line in text.splitlines():
        line = _QUOTE_PREFIX.sub("", line)
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


# =========================================================================== documents


@dataclass(frozen=True)
class Document:
    """One document of the pretraining text.

    Attributes:
        source: one of :data:`SOURCES` (or ``"synthetic"``).
        doc_id: unique within the source (``"sci.med/58045"``, ``"sw2005"``, ``"ptb-0007"``).
        sentences: its sentences in order, after the exclusion.
    """

    source: str
    doc_id: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        """The sentences joined by single spaces (line breaks are whitespace to the tokenizer)."""
        return " ".join(self.sentences)


@dataclass
class PretrainCorpus:
    """The pretraining text, split into training and held-out documents.

    Attributes:
        train: training documents, sources in :data:`SOURCES` order, each in its source's order.
        heldout: the held-out documents (every :data:`HELDOUT_EVERY`-th of each source).
        removed: ``(source, evaluated split)`` -> sentences dropped because the split holds them.
        description: a paragraph saying which text is in and which is out.
    """

    train: list[Document]
    heldout: list[Document]
    removed: dict[tuple[str, str], int] = field(default_factory=dict)
    description: str = ""

    @property
    def digest(self) -> str:
        """:func:`corpus_digest` of the training and held-out documents."""
        return corpus_digest(self.train, self.heldout)


def corpus_digest(train: Sequence[Document], heldout: Sequence[Document] = ()) -> str:
    """SHA-256 (hex) of the documents in order: each one's source, id, held-out flag and text."""
    h = hashlib.sha256()
    for flag, docs in (("train", train), ("heldout", heldout)):
        for d in docs:
            for part in (flag, d.source, d.doc_id, d.text):
                h.update(part.encode())
                h.update(b"\x00")
    return h.hexdigest()


def split_heldout(docs: Sequence[Document], every: int = HELDOUT_EVERY) -> tuple[list[Document], list[Document]]:
    """``(train, heldout)``: the document at position ``i`` of its source is held out when
    ``i % every == every - 1`` (a fixed rule, 1/every of each source, spread over the source)."""
    train: list[Document] = []
    heldout: list[Document] = []
    seen = dict.fromkeys({d.source for d in docs}, 0)
    for d in docs:
        (heldout if seen[d.source] % every == every - 1 else train).append(d)
        seen[d.source] += 1
    return train, heldout


# =========================================================================== the evaluated splits


@dataclass(frozen=True)
class EvaluatedSplit:
    """A split that a notebook evaluates on: no sentence of it may enter the pretraining text.

    Attributes:
        name: what the refusal names (``"20 Newsgroups test"``).
        sentences: reads its sentences (from the data directory).
        min_words: its sentences of at least this many normalised words count.
        inside: a source that holds this split's own text (CoNLL-2000 test sits inside PTB
            train): there its sentences count at every length.
    """

    name: str
    sentences: Callable[[], list[str]]
    min_words: int = MIN_WORDS
    inside: str | None = None


@dataclass(frozen=True)
class SplitKeys:
    """The sentence keys of one evaluated split (:func:`evaluated_keys`).

    Attributes:
        name, min_words, inside: those of its :class:`EvaluatedSplit`.
        keys: the keys of all its sentences.
    """

    name: str
    keys: frozenset[int]
    min_words: int = MIN_WORDS
    inside: str | None = None

    def holds(self, key: int, words: int, source: str) -> bool:
        """Whether a sentence of ``source`` with this key and ``words`` normalised words is one of this split's."""
        return key in self.keys and (words >= self.min_words or source == self.inside)


def _newsgroups_test() -> list[str]:
    from prismlib.data import load_newsgroups

    return [s for d in load_newsgroups("test") for s in split_sentences(d.text)]  # header + body: what the topic task reads


def _swda(split: str) -> Callable[[], list[str]]:
    def read() -> list[str]:
        from prismlib.data import load_swda

        return [u.plain_text for c in load_swda(split) for u in c.utterances]

    return read


def _conll_test() -> list[str]:
    from prismlib.data import load_conll2000

    return [" ".join(w for w, _ in s) for s in load_conll2000("test").sentences]


def _wikitext(name: str, split: str) -> Callable[[], list[str]]:
    def read() -> list[str]:
        from prismlib.data import load_wikitext
        from prismlib.data.wikitext import detokenize_wikitext

        return [s for a in load_wikitext(name, split) for s in split_sentences(detokenize_wikitext(a.text))]

    return read


EVALUATED: tuple[EvaluatedSplit, ...] = (
    EvaluatedSplit("20 Newsgroups test", _newsgroups_test),
    EvaluatedSplit("Switchboard validation conversations", _swda("val")),
    EvaluatedSplit("Switchboard test conversations", _swda("test")),
    EvaluatedSplit("CoNLL-2000 test (WSJ section 20)", _conll_test, inside="ptb"),
    EvaluatedSplit("WikiText-103 test (Fig. 5, 02's masked-LM probe)", _wikitext("wikitext103", "test")),
    EvaluatedSplit("WikiText-2 validation (02's masked-LM probe)", _wikitext("wikitext2", "valid")),
)
"""Every split a notebook evaluates on (and WikiText, which the pretraining never reads)."""


def ptb_vocabulary() -> frozenset[str]:
    """PTB's 10,000 word types (:func:`prismlib.data.ptb_vocab`): the normalisation's vocabulary."""
    from prismlib.data import ptb_vocab

    return frozenset(ptb_vocab())


def evaluated_keys(vocab: Collection[str], splits: Sequence[EvaluatedSplit] = EVALUATED) -> list[SplitKeys]:
    """The sentence keys of every split of ``splits`` (read from the data directory)."""
    return [SplitKeys(s.name, frozenset(sentence_keys(s.sentences(), vocab)), s.min_words, s.inside) for s in splits]


def _overlaps(docs: Iterable[Document], keys: Sequence[SplitKeys], vocab: Collection[str]) -> Iterable[tuple[Document, str, list[str]]]:
    """``(document, sentence, names of the splits holding it)`` for every sentence of ``docs``
    (an empty list: the sentence is in no evaluated split)."""
    everything = frozenset().union(*(k.keys for k in keys))
    for d in docs:
        for s in d.sentences:
            norm = normalise_sentence(s, vocab)
            key = _key(norm) if norm else None
            if key is None or key not in everything:
                yield d, s, []
                continue
            words = norm.count(" ") + 1
            yield d, s, [k.name for k in keys if k.holds(key, words, d.source)]


def check_disjoint(docs: Iterable[Document], keys: Sequence[SplitKeys], vocab: Collection[str]) -> None:
    """Refuse a pretraining text that holds a sentence of an evaluated split.

    Args:
        docs: the pretraining documents (training and held-out).
        keys: the evaluated splits' keys (:func:`evaluated_keys`).
        vocab: the normalisation's vocabulary.

    Raises:
        ValueError: one line naming every split the text overlaps, how many of its
            sentences, and one of them.
    """
    hits: dict[str, list[str]] = {}
    for d, s, names in _overlaps(docs, keys, vocab):
        for name in names:
            hits.setdefault(name, []).append(f"{d.source}/{d.doc_id}: {s[:60]!r}")
    if hits:
        parts = "; ".join(f"{len(v)} sentence(s) of {name} (e.g. {v[0]})" for name, v in hits.items())
        raise ValueError(
            f"the pretraining text overlaps an evaluated split: {parts}; build it with "
            "prismlib.pretrain.build_corpus, which leaves those sentences out"
        )


def exclude(
    docs: Iterable[Document], keys: Sequence[SplitKeys], vocab: Collection[str]
) -> tuple[list[Document], dict[tuple[str, str], int]]:
    """The documents without the sentences of the evaluated splits (documents left empty are
    dropped), and ``(source, split)`` -> sentences dropped (a sentence of two splits counts in both)."""
    out: list[Document] = []
    removed: dict[tuple[str, str], int] = {}
    current: Document | None = None
    kept: list[str] = []

    def close() -> None:
        if current is not None and kept:
            out.append(Document(current.source, current.doc_id, tuple(kept)))

    for d, s, names in _overlaps(docs, keys, vocab):
        if d is not current:
            close()
            current, kept = d, []
        if names:
            for name in names:
                removed[(d.source, name)] = removed.get((d.source, name), 0) + 1
        else:
            kept.append(s)
    close()
    return out, removed


# =========================================================================== the sources


def newsgroups_documents() -> list[Document]:
    """20 Newsgroups bydate train: one document per post with a non-empty body."""
    from prismlib.data import load_newsgroups

    docs = [Document("newsgroups", d.doc_id, tuple(split_sentences(d.body))) for d in load_newsgroups("train")]
    return [d for d in docs if d.sentences]


def swda_documents() -> list[Document]:
    """Switchboard WS97 training conversations: one document per conversation, an utterance a sentence."""
    from prismlib.data import load_swda

    docs = [Document("swda", c.conv_id, tuple(t for u in c.utterances if (t := u.plain_text))) for c in load_swda("train")]
    return [d for d in docs if d.sentences]


def ptb_documents(block: int = PTB_BLOCK) -> list[Document]:
    """Mikolov's PTB train in blocks of ``block`` lines, ``<unk>`` -> ``[UNK]`` (before the exclusion)."""
    from prismlib.data.datadir import locate

    with open(locate("ptb/ptb.train.txt", "ptb"), encoding="utf-8") as fh:
        lines = [" ".join(UNK_TOKEN if t == PTB_UNK else t for t in line.split()) for line in fh]
    lines = [ln for ln in lines if ln]
    return [Document("ptb", f"ptb-{i // block:04d}", tuple(lines[i : i + block])) for i in range(0, len(lines), block)]


def build_corpus(splits: Sequence[EvaluatedSplit] = EVALUATED, heldout_every: int = HELDOUT_EVERY) -> PretrainCorpus:
    """The pretraining text of the offline corpora (module docstring), every sentence of an
    evaluated split left out, checked by :func:`check_disjoint`, then split into training and
    held-out documents (:func:`split_heldout`)."""
    vocab = ptb_vocabulary()
    keys = evaluated_keys(vocab, splits)
    docs = newsgroups_documents() + swda_documents() + ptb_documents()
    kept, removed = exclude(docs, keys, vocab)
    check_disjoint(kept, keys, vocab)
    train, heldout = split_heldout(kept, heldout_every)
    counts = {s: sum(d.source == s for d in kept) for s in SOURCES}
    gone = ", ".join(f"{n:,} from {src} ({split})" for (src, split), n in sorted(removed.items())) or "none"
    description = (
        f"Pretraining text: 20 Newsgroups bydate train bodies ({counts['newsgroups']:,} posts), Switchboard WS97 training "
        f"conversations ({counts['swda']:,}), Mikolov's PTB train in blocks of {PTB_BLOCK} lines ({counts['ptb']:,} blocks); "
        f"every {heldout_every}th document of each source held out ({len(heldout):,} documents). Sentences of evaluated "
        f"splits left out: {gone}. Never read: 20 Newsgroups test, Switchboard validation and test, CoNLL-2000 test, WikiText."
    )
    return PretrainCorpus(train, heldout, removed, description)


# =========================================================================== generated text

_SUBJECTS = ("the dog", "the cat", "a bird", "the farmer", "my sister", "the teacher", "a child", "the doctor")
_VERBS = ("sees", "likes", "feeds", "follows", "helps", "finds", "calls", "watches")
_OBJECTS = ("the ball", "a house", "the river", "some bread", "the garden", "a letter", "the road", "the tree")
_PLACES = ("in the morning", "at night", "near the school", "after dinner", "on monday", "before the rain")


def synthetic_documents(n_docs: int, seed: int, sentences_per_doc: int = 12) -> list[Document]:
    """Generated text with structure a tiny model learns in seconds (tests, smoke runs).

    Each sentence is ``subject verb object place .`` drawn from small word lists, where the
    verb is tied to the subject and the object to the verb (by index), so a masked word is
    predictable from its neighbours and a unigram model is far behind.

    Returns:
        ``n_docs`` documents of source ``"synthetic"``.
    """
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n_docs):
        sents = []
        for _ in range(sentences_per_doc):
            s = int(rng.integers(len(_SUBJECTS)))
            v = (s + int(rng.integers(2))) % len(_VERBS)
            o = (v + int(rng.integers(2))) % len(_OBJECTS)
            p = int(rng.integers(len(_PLACES)))
            sents.append(f"{_SUBJECTS[s]} {_VERBS[v]} {_OBJECTS[o]} {_PLACES[p]} .")
        docs.append(Document("synthetic", f"synthetic-{i:05d}", tuple(sents)))
    return docs
