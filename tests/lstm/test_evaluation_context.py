"""The context-use measure (prismlib.lstm.evaluation): per-token NLL with the state reset every
few words, and the gate that a model uses its context (on tiny models with known memory)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lstm_fixtures import MEMORY_VOCAB, memory_model

from prismlib import lstm
from prismlib.lstm import apply_timescales

VOCAB = MEMORY_VOCAB


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def _copy_corpus(n: int = 4000, period: int = 7, seed: int = 0) -> np.ndarray:
    """A stream whose word at t repeats the word at t - period: predictable only with context."""
    rng = np.random.default_rng(seed)
    base = rng.integers(1, VOCAB, period)
    ids = np.resize(base, n).copy()
    noise = rng.random(n) < 0.05
    ids[noise] = rng.integers(1, VOCAB, noise.sum())
    return ids


@pytest.mark.slow
def test_context_use_gate_passes_for_a_model_that_uses_context_and_fails_for_one_that_cannot():
    ids = _copy_corpus()
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 16, 32, 1, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0)
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    data = torch.as_tensor(ids[:3000]).view(10, 300)
    for _ in range(150):  # learns the period-7 repetition
        for i in range(0, 280, 20):
            x, y = data[:, i : i + 20], data[:, i + 1 : i + 21]
            loss = model.nll(model(x).last_dropped, y).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if _ % 50 == 49 and lstm.perplexity(lstm.token_nll(model, ids[3000:], 4, 20)) < 3:
            break
    used = lstm.context_use(model, ids[3000:], reset_every=5, batch_size=4, bptt=20, n_boot=500)
    gate = lstm.context_use_gate("copy model", used)
    assert used.effect < 0 and gate.passed and "reset every 5" in gate.name
    # a memoryless model (forget gate 0, no recurrence) predicts the same with and without its past
    blind = memory_model(-30.0)
    for layer in blind.rnns:
        with torch.no_grad():
            layer.weight_hh_l0_raw.zero_()
    apply_timescales(list(blind.rnns), [torch.full((8,), -30.0), torch.full((6,), -30.0)], fixed=True)
    none = lstm.context_use(blind, ids[3000:], reset_every=5, batch_size=4, bptt=20, n_boot=500)
    assert abs(none.effect) < 1e-6 and not lstm.context_use_gate("blind", none).passed


def test_reset_every_predicts_the_same_positions_and_one_word_resets_everything():
    ids = np.random.default_rng(4).integers(1, VOCAB, 300)
    model = memory_model(8.0)
    full = lstm.token_nll(model, ids, 4, 10)
    reset = lstm.token_nll(model, ids, 4, 10, reset_every=5)
    np.testing.assert_array_equal(np.isnan(full), np.isnan(reset))
    ones = lstm.token_nll(model, ids, 4, 10, reset_every=1)
    mask = ~np.isnan(ones)
    # every token then sees only the word before it: equal NLL wherever that word is the same
    same_prev = {}
    for t in np.flatnonzero(mask):
        same_prev.setdefault((ids[t - 1], ids[t]), []).append(ones[t])
    assert all(np.ptp(v) < 1e-5 for v in same_prev.values())
    with pytest.raises(ValueError, match="reset_every"):
        lstm.token_nll(model, ids, 4, 10, reset_every=0)
