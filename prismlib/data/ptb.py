"""Penn Treebank language-modelling text (Mikolov's preprocessing).

Files ``ptb/ptb.{train,valid,test}.txt``: one sentence a line, lower-cased, numbers
as ``N``, out-of-vocabulary words as ``<unk>``, 10,000 word types. As in every
standard PTB language-modelling setup (AWD-LSTM's ``data.py`` included), each line
becomes its words followed by ``<eos>``: train 929,589 / valid 73,760 / test 82,430
tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .datadir import locate

DATASET = "ptb"
SPLITS = ("train", "valid", "test")
EOS = "<eos>"
UNK = "<unk>"


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"PTB split must be one of {SPLITS}, got {split!r}")


def tokenize_lines(lines: Iterable[str]) -> list[str]:
    """Whitespace tokens of each line followed by ``<eos>`` (blank lines give just ``<eos>``)."""
    tokens: list[str] = []
    for line in lines:
        tokens.extend(line.split())
        tokens.append(EOS)
    return tokens


def load_ptb(split: str) -> list[str]:
    """Tokens of a PTB split (``"train"``, ``"valid"`` or ``"test"``), ``<eos>`` per line.

    Returns:
        list of word strings, length 929,589 / 73,760 / 82,430.
    """
    _check_split(split)
    path: Path = locate(f"ptb/ptb.{split}.txt", DATASET)
    with open(path, encoding="utf-8") as fh:
        return tokenize_lines(fh)


def build_vocab(tokens: Iterable[str]) -> list[str]:
    """Word types in order of first occurrence (the AWD-LSTM / PyTorch example order)."""
    return list(dict.fromkeys(tokens))


def ptb_vocab() -> list[str]:
    """The 10,000 word types of the training split (incl. ``<unk>`` and ``<eos>``).

    Order: first occurrence in the training text, so ids match AWD-LSTM's corpus.
    """
    return build_vocab(load_ptb("train"))


@dataclass(frozen=True)
class PTBCorpus:
    """PTB as id arrays.

    Attributes:
        vocab: id -> word (10,000 entries).
        stoi: word -> id.
        train, valid, test: int64 arrays of shape ``(n_tokens,)``.
    """

    vocab: list[str]
    stoi: dict[str, int]
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray


def encode(tokens: Iterable[str], stoi: dict[str, int]) -> np.ndarray:
    """Map tokens to ids, shape ``(n_tokens,)`` int64; unknown words raise ``KeyError``.

    (Mikolov's text has no out-of-vocabulary words: every rare word is ``<unk>``.)
    """
    return np.fromiter((stoi[t] for t in tokens), dtype=np.int64)


def load_ptb_corpus() -> PTBCorpus:
    """All three splits encoded with the training vocabulary."""
    train = load_ptb("train")
    vocab = build_vocab(train)
    stoi = {w: i for i, w in enumerate(vocab)}
    return PTBCorpus(
        vocab=vocab,
        stoi=stoi,
        train=encode(train, stoi),
        valid=encode(load_ptb("valid"), stoi),
        test=encode(load_ptb("test"), stoi),
    )
