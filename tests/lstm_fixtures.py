"""The tiny LSTM of the LSTM, anneal and job-cache tests: the smoke profile's settings shrunk to
a model that trains in milliseconds on a :data:`VOCAB`-word corpus."""

from __future__ import annotations

import dataclasses

from prismlib.profiles import LSTMSettings, get_profile

VOCAB = 30


def tiny_lstm(**changes) -> LSTMSettings:
    """The smoke profile's :class:`~prismlib.profiles.LSTMSettings` with embeddings of 6 and
    hidden layers of 10 units, batches of 4 x 8 tokens, evaluation batches of 2, every
    validation and test token; then ``changes`` (each test's optimizer, budget, softmax)."""
    tiny = dict(emb=6, hidden=10, batch_size=4, bptt=8, eval_batch=2, valid_tokens=None, test_tokens=None)
    return dataclasses.replace(get_profile("smoke").lstm, **{**tiny, **changes})
