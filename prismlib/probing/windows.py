"""Labelled 512-token windows: how a dataset becomes encoder input for probing.

Every task works on contiguous windows of at most ``window - 2`` wordpieces plus
``[CLS]`` and ``[SEP]``.  A dataset is a list of *sources*
(a WSJ file, a conversation, a newsgroup post, a WikiText article), each a sequence of
*units*: the stretch of wordpieces that one gold label belongs to (a word for POS, an
utterance for dialog acts, the whole post for topic, a single masked wordpiece for
MLM).  :func:`pack_units` fills windows with consecutive units of one source; a unit
longer than a window is split, and with ``truncate=True`` only the first window of a
source is kept (the paper discards excess tokens of a post).

Weights (paper App. C): every labelled wordpiece gets ``1 / |N|`` where ``N`` is the set
of wordpieces of its unit that made it into the windows, so each gold label counts
once in the loss and in the accuracy, however many wordpieces it spans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

IGNORE = -1
"""Label of positions that carry no gold label (the special tokens)."""


@dataclass(frozen=True)
class Unit:
    """The wordpieces of one gold label.

    Attributes:
        pieces: wordpiece ids, without special tokens.
        label: class index of the gold label.
        unit_id: identifier of the unit, unique within the dataset split.
    """

    pieces: Sequence[int]
    label: int
    unit_id: int


@dataclass(frozen=True)
class Window:
    """One encoder input with its labels.

    Attributes:
        input_ids: ``(n,)`` int64 token ids, ``[CLS] ... [SEP]``, ``n <= window``.
        labels: ``(n,)`` int64 class per position, :data:`IGNORE` on special tokens.
        weights: ``(n,)`` float32, ``1/|N|`` of the position's unit, 0 on special tokens.
        unit_ids: ``(n,)`` int64 unit of each position, -1 on special tokens.
        source: id of the source (document, conversation, article) it was cut from.
    """

    input_ids: np.ndarray
    labels: np.ndarray
    weights: np.ndarray
    unit_ids: np.ndarray
    source: str

    def __len__(self) -> int:
        return len(self.input_ids)


def _chunks(units: Iterable[Unit], max_pieces: int) -> list[list[tuple[int, int, int]]]:
    """Greedy packing of ``(piece, label, unit_id)`` triples into chunks of <= max_pieces.

    A unit that does not fit in the current chunk starts a new one; a unit longer than a
    whole chunk is split across chunks.
    """
    chunks: list[list[tuple[int, int, int]]] = [[]]
    for unit in units:
        pieces = list(unit.pieces)
        if not pieces:
            continue
        if len(chunks[-1]) + len(pieces) > max_pieces and chunks[-1]:
            chunks.append([])
        for p in pieces:
            if len(chunks[-1]) == max_pieces:
                chunks.append([])
            chunks[-1].append((p, unit.label, unit.unit_id))
    return [c for c in chunks if c]


def pack_units(
    sources: Iterable[tuple[str, Sequence[Unit]]],
    cls_id: int,
    sep_id: int,
    window: int = 512,
    truncate: bool = False,
) -> list[Window]:
    """Cut sources into labelled windows.

    Args:
        sources: ``(source_id, units)`` pairs; units in reading order.
        cls_id, sep_id: the tokenizer's special tokens, added around every window.
        window: maximum window length including the two special tokens.
        truncate: keep only the first window of every source.

    Returns:
        Windows in source order; weights are ``1/|N|`` over each unit's kept pieces.
    """
    if window < 3:
        raise ValueError(f"a window needs room for [CLS], [SEP] and one token; got window={window}")
    raw: list[tuple[str, list[tuple[int, int, int]]]] = []
    for source_id, units in sources:
        chunks = _chunks(units, window - 2)
        raw.extend((source_id, c) for c in (chunks[:1] if truncate else chunks))
    kept = Counter(u for _, chunk in raw for _, _, u in chunk)
    out = []
    for source_id, chunk in raw:
        pieces, labels, units = (list(v) for v in zip(*chunk))
        out.append(
            Window(
                input_ids=np.array([cls_id, *pieces, sep_id], dtype=np.int64),
                labels=np.array([IGNORE, *labels, IGNORE], dtype=np.int64),
                weights=np.array([0.0, *(1.0 / kept[u] for u in units), 0.0], dtype=np.float32),
                unit_ids=np.array([-1, *units, -1], dtype=np.int64),
                source=source_id,
            )
        )
    return out


def tokenize_many(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Wordpiece ids of each text (no special tokens), with a fast tokenizer in one batch."""
    if not texts:
        return []
    return tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
