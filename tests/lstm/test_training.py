"""The training loop (prismlib.lstm.training): exact resume, paired seeds, the switch to ASGD."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, tiny_lstm

from prismlib import lstm

TINY = tiny_lstm(optimizer="ntasgd", curve_every=2, curve_tokens=1000, epochs=2, steps_per_epoch=3, cutoffs=(), average_last=0)


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _ids(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, n)


def test_training_resumes_exactly_from_checkpoint(tmp_path):
    train, valid = _ids(600, 1), _ids(200, 2)
    one = TINY.updated(epochs=1)
    ref = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY)
    hist_ref = lstm.train_lm(ref, train, valid, TINY, seed=3)
    resumed = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY)
    ck = tmp_path / "ck.pt"
    lstm.train_lm(resumed, train, valid, one, seed=3, checkpoint=ck)
    resumed = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY)
    hist = lstm.train_lm(resumed, train, valid, TINY, seed=3, checkpoint=ck)
    assert hist.epochs == 2 and hist.val_ppl == hist_ref.val_ppl
    for a, b in zip(ref.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)


def test_seed_k_of_every_model_draws_the_same_data_order_and_dropout_masks(monkeypatch):
    """Seeds are paired across the grid: the random draws of training (BPTT lengths, dropout
    masks) depend on the seed only, not on the variant, so seed k of two models differs only
    by the models."""
    from prismlib.lstm import model as lstm_model

    draws: list[tuple] = []
    original = lstm_model.locked_dropout

    def recorded(x, p, training):
        out = original(x, p, training)
        if training and p > 0:  # the mask this call drew, and the BPTT length it was drawn for
            draws.append((x.shape[1], round(float((out == 0).float().sum()), 1), round(float(torch.rand(())), 6)))
        return out

    monkeypatch.setattr(lstm_model, "locked_dropout", recorded)
    train, valid = _ids(600, 1), _ids(200, 2)
    s = TINY.updated(dropout=0.3, dropouth=0.3, dropouti=0.3, epochs=1)
    seen = {}
    for spec in (
        lstm.RunSpec(seed=5),
        lstm.RunSpec("layerwise", 70.0, fixed=True, seed=5),
        lstm.RunSpec("pareto", fixed=True, seed=5),
        lstm.RunSpec("gradient", 20.0, fixed=False, seed=5),
        lstm.RunSpec(seed=6),
    ):
        draws.clear()
        lstm.train_lm(lstm.build_model(spec, VOCAB, s), train, valid, s, seed=spec.seed)
        seen[(spec.label, spec.seed)] = list(draws)
    five = [v for (_, seed), v in seen.items() if seed == 5]
    assert len(five[0]) > 10 and all(v == five[0] for v in five)
    assert seen[("baseline", 6)] != five[0]


def test_average_last_switches_to_asgd_for_the_final_epochs():
    train, valid = _ids(600, 1), _ids(200, 2)
    s = TINY.updated(optimizer="ntasgd", lr=1.0, epochs=3, average_last=1)
    hist = lstm.train_lm(lstm.build_model(lstm.RunSpec(), VOCAB, s), train, valid, s, seed=0)
    assert hist.asgd_from == 2  # switched after epoch 2: epoch 3 averages
    off = s.updated(average_last=0)
    assert lstm.train_lm(lstm.build_model(lstm.RunSpec(), VOCAB, off), train, valid, off, seed=0).asgd_from is None
