"""Packing wordpiece ids into full-length inputs, and the cached ids of a corpus."""

from __future__ import annotations

import numpy as np
import torch

from prismlib.pretrain import (
    PretrainCorpus,
    pack_sequences,
    pretraining_inputs,
    pretraining_tokenizer,
    synthetic_documents,
    tokenizer_digest,
)


def test_packing_puts_sep_after_each_document_and_cls_sep_around_each_input():
    docs = [np.array([5, 6, 7]), np.array([8]), np.array([9, 10, 11, 12])]
    out = pack_sequences(docs, seq_len=5, cls_id=1, sep_id=2)
    # stream 5 6 7 2 8 2 9 10 11 12 2 -> bodies of 3, the last short piece dropped
    assert out.tolist() == [[1, 5, 6, 7, 2], [1, 2, 8, 2, 2], [1, 9, 10, 11, 2]]
    assert out.dtype == torch.int64
    assert pack_sequences([], 5, 1, 2).shape == (0, 5)


def test_inputs_of_a_corpus_are_cached_and_the_same_on_the_second_call(tmp_path):
    tok = pretraining_tokenizer()
    docs = synthetic_documents(30, seed=0)
    corpus = PretrainCorpus(docs[:27], docs[27:])
    first = pretraining_inputs(corpus, tok, seq_len=32, cache=tmp_path)
    assert list(tmp_path.glob("ids-*.pt")) and first.seq_len == 32 and len(first.heldout) > 0
    assert (first.train[:, 0] == tok.cls_token_id).all() and (first.train[:, -1] == tok.sep_token_id).all()
    second = pretraining_inputs(corpus, tok, seq_len=32, cache=tmp_path)
    assert torch.equal(first.train, second.train) and torch.equal(first.heldout, second.heldout)
    assert first.corpus_digest == corpus.digest and first.tokenizer_digest == tokenizer_digest(tok)
