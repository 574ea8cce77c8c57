"""The tiny LSTM of the LSTM, anneal and job-cache tests: the smoke profile's settings shrunk to
a model that trains in milliseconds on a :data:`VOCAB`-word corpus."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from prismlib.profiles import LSTMSettings, get_profile

VOCAB = 30


def tiny_lstm(**changes) -> LSTMSettings:
    """The smoke profile's :class:`~prismlib.profiles.LSTMSettings` with embeddings of 6 and
    hidden layers of 10 units, batches of 4 x 8 tokens, evaluation batches of 2, every
    validation and test token; then ``changes`` (each test's optimizer, budget, softmax)."""
    tiny = dict(emb=6, hidden=10, batch_size=4, bptt=8, eval_batch=2, valid_tokens=None, test_tokens=None)
    return get_profile("smoke").lstm.updated(**{**tiny, **changes})


def zipf_corpus(seed: int = 0) -> SimpleNamespace:
    """A :data:`VOCAB`-word corpus (train 600, valid 250, test 230 tokens) drawn from a Zipf-like
    law, so that some words are rare, as the anneal schedule's Kneser-Ney bigram guard needs."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, VOCAB + 1) ** 2
    p /= p.sum()
    return SimpleNamespace(
        vocab=[str(i) for i in range(VOCAB)],
        train=rng.choice(VOCAB, 600, p=p),
        valid=rng.choice(VOCAB, 250, p=p),
        test=rng.choice(VOCAB, 230, p=p),
    )


def uniform_corpus() -> SimpleNamespace:
    """A :data:`VOCAB`-word corpus (train 600, valid 200, test 200 tokens) drawn uniformly (seed 0)."""
    rng = np.random.default_rng(0)
    return SimpleNamespace(
        vocab=[str(i) for i in range(VOCAB)],
        train=rng.integers(0, VOCAB, 600),
        valid=rng.integers(0, VOCAB, 200),
        test=rng.integers(0, VOCAB, 200),
    )


def random_ids(n: int, seed: int = 0) -> np.ndarray:
    """``n`` word ids drawn uniformly from the :data:`VOCAB` words (seeded)."""
    return np.random.default_rng(seed).integers(0, VOCAB, n)


MEMORY_VOCAB = 20


def memory_model(forget_bias: float):
    """A tiny 2-layer :class:`~prismlib.lstm.LSTMLM` over :data:`MEMORY_VOCAB` words whose memory
    is known: all of layer 1's forget gates fixed at ``sigmoid(forget_bias)`` (input gates at
    ``sigmoid(-forget_bias)``), no recurrence except through the cell state; in eval mode."""
    import torch

    from prismlib import lstm

    torch.manual_seed(0)
    model = lstm.LSTMLM(MEMORY_VOCAB, 6, 8, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0)
    lstm.apply_timescales(list(model.rnns), [torch.full((8,), forget_bias), None], fixed=True)
    with torch.no_grad():  # forget gate = its bias; no recurrence except through c
        model.rnns[0].weight_ih_l0[8:16].zero_()
        model.rnns[0].weight_hh_l0_raw.zero_()
    return model.eval()


@dataclass(frozen=True)
class Spec:
    """A run spec as the claims read it: a model (``variant``) and a training seed."""

    variant: str
    seed: int

    @property
    def label(self) -> str:
        return self.variant
