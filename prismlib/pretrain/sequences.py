"""The pretraining text as model inputs: WordPiece ids packed into full-length sequences.

:func:`tokenize_documents` turns each document into wordpiece ids (no special tokens);
:func:`pack_sequences` concatenates a list of documents, ``[SEP]`` after each, and cuts the
stream into inputs ``[CLS] + (seq_len - 2) wordpieces + [SEP]`` (an input may span two
documents, as RoBERTa's FULL-SENTENCES packing; the last, shorter piece is dropped), so no
position is padding and tokens/s counts real tokens. :func:`pretraining_inputs` does both for
a :class:`~prismlib.pretrain.corpus.PretrainCorpus` and caches the ids in ``.cache/pretrain/``
under the corpus digest and the tokenizer's digest (digest-checked on read).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from prismlib.artifacts import load_or_discard, save_atomic
from prismlib.paths import cache_dir
from prismlib.pretrain.corpus import Document, PretrainCorpus
from prismlib.progress import progress_bar


def tokenizer_digest(tokenizer: Any) -> str:
    """SHA-256 (hex) of a tokenizer's vocabulary in id order and its lower-casing: what its ids mean."""
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    lower = tokenizer("A", add_special_tokens=False)["input_ids"] == tokenizer("a", add_special_tokens=False)["input_ids"]
    h = hashlib.sha256(f"lower={lower}\n".encode())
    for token, i in vocab:
        h.update(f"{i}\t{token}\n".encode())
    return h.hexdigest()


def tokenize_documents(tokenizer: Any, docs: Sequence[Document], batch: int = 256, progress: bool = False) -> list[np.ndarray]:
    """Wordpiece ids of each document's text, no special tokens.

    Returns:
        one ``(n_wordpieces,)`` int32 array per document.
    """
    out: list[np.ndarray] = []
    starts = range(0, len(docs), batch)
    for i in progress_bar(starts, desc="tokenizing", unit="batch", leave=False, disable=not progress):
        texts = [d.text for d in docs[i : i + batch]]
        ids = tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
        out.extend(np.asarray(x, dtype=np.int32) for x in ids)
    return out


def pack_sequences(doc_ids: Sequence[np.ndarray], seq_len: int, cls_id: int, sep_id: int) -> Tensor:
    """Full-length inputs cut from the documents' ids, ``[SEP]`` after each document.

    Args:
        doc_ids: each document's wordpiece ids (:func:`tokenize_documents`).
        seq_len: tokens per input, special tokens included (at least 3).

    Returns:
        ``(n, seq_len)`` int64: ``[CLS]``, ``seq_len - 2`` ids of the stream, ``[SEP]``.
    """
    body = seq_len - 2
    if body < 1:
        raise ValueError(f"seq_len must be at least 3, got {seq_len}")
    parts: list[np.ndarray] = []
    for ids in doc_ids:
        parts += [np.asarray(ids, dtype=np.int64), np.array([sep_id], dtype=np.int64)]
    stream = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    n = len(stream) // body
    rows = stream[: n * body].reshape(n, body)
    out = np.empty((n, seq_len), dtype=np.int64)
    out[:, 0], out[:, -1], out[:, 1:-1] = cls_id, sep_id, rows
    return torch.from_numpy(out)


@dataclass
class PretrainInputs:
    """A corpus as packed inputs.

    Attributes:
        train: ``(n, seq_len)`` int64 training inputs.
        heldout: ``(m, seq_len)`` int64 held-out inputs.
        corpus_digest: the corpus's digest; tokenizer_digest: the tokenizer's.
    """

    train: Tensor
    heldout: Tensor
    corpus_digest: str
    tokenizer_digest: str

    @property
    def seq_len(self) -> int:
        return int(self.train.shape[1])


def pretraining_inputs(
    corpus: PretrainCorpus, tokenizer: Any, seq_len: int, cache: Path | None = None, progress: bool = False
) -> PretrainInputs:
    """The corpus tokenized and packed (:func:`pack_sequences`) into training and held-out
    inputs; the ids are cached under ``cache`` (default ``.cache/pretrain/``), keyed by the
    corpus digest and the tokenizer digest, so the second call skips the tokenizer."""
    digest, tok_digest = corpus.digest, tokenizer_digest(tokenizer)
    path = (cache or cache_dir() / "pretrain") / f"ids-{digest[:16]}-{tok_digest[:12]}.pt"
    stored = load_or_discard(path)
    if stored is None or stored.get("corpus") != digest or stored.get("tokenizer") != tok_digest:
        pieces = {}
        for name, docs in (("train", corpus.train), ("heldout", corpus.heldout)):
            ids = tokenize_documents(tokenizer, docs, progress=progress)
            pieces[name] = (torch.from_numpy(np.concatenate(ids) if ids else np.zeros(0, np.int32)), torch.tensor([len(x) for x in ids]))
        stored = {
            "corpus": digest,
            "tokenizer": tok_digest,
            **{f"{k}_ids": v[0] for k, v in pieces.items()},
            **{f"{k}_lengths": v[1] for k, v in pieces.items()},
        }
        save_atomic(path, **stored)
    packed = {}
    for name in ("train", "heldout"):
        flat, lengths = stored[f"{name}_ids"].numpy(), stored[f"{name}_lengths"].numpy()
        docs_ids = np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []
        packed[name] = pack_sequences(docs_ids, seq_len, tokenizer.cls_token_id, tokenizer.sep_token_id)
    return PretrainInputs(packed["train"], packed["heldout"], digest, tok_digest)
