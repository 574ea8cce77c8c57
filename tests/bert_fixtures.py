"""The tiny masked-LM BERT of the prism-layer and Fig. 5 tests (no dropout, 100 wordpieces)."""

from __future__ import annotations

import torch


def tiny_mlm(seed: int = 0, dropout: float = 0.0):
    """A seeded ``BertForMaskedLM`` in eval mode: 2 layers of 20 units, 2 heads, 100
    wordpieces, up to 64 tokens, no dropout (unless ``dropout``)."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=100,
        hidden_size=20,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=40,
        max_position_embeddings=64,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    return BertForMaskedLM(cfg).eval()
