"""Section 4's MLM sanity gate (prismlib.prism.sanity): the gates of training to a stop, the held-out curves."""

from __future__ import annotations

import pytest
import torch


def _sanity(stop: str | None, final_gain: float):
    """An MLMSanity of one arm on 20 held-out inputs of 20 articles: ``final_gain`` nats per
    token better than the encoder before training; trained to a stop that ended ``stop``."""
    from types import SimpleNamespace

    import numpy as np

    from prismlib.anneal import AnnealState
    from prismlib.prism import TrainResult, mlm_sanity

    rng = np.random.default_rng(0)
    counts = np.full(20, 50.0)
    head = -5.0 * counts + rng.normal(0, 1, 20)
    final = head + final_gain * counts + rng.normal(0, 1, 20)
    anneal = None if stop is None else AnnealState(rounds=9, scale=1 / 16, best=100.0, decayed_at=(4, 7), stop=stop)
    result = TrainResult(steps=225, anneal=anneal, heldout=[(0, 6.0, 1.0), (25, 5.5, 1.0)], best_step=25, previous_step=25)
    model = SimpleNamespace(result=result, record={"heldout_head": (head, counts), "heldout_final": (final, counts)}, seed=0)
    data = SimpleNamespace(heldout=torch.randint(4, 30, (20, 60), generator=torch.Generator().manual_seed(0)))
    unigram = np.full(30, np.log(1 / 30))
    return mlm_sanity({"prism": model}, data, np.arange(20), unigram, 3, [0, 1, 2], seed=0, n_boot=200)


def test_the_sanity_gates_of_training_to_a_stop():
    ok = _sanity("rule", 0.5)
    assert ok.converged_gate("prism", "P").passed and "decays at rounds [4, 7]" in ok.converged_gate("prism", "P").detail
    assert ok.improved_gate("prism", "P").passed and ok.improved["prism"].effect == pytest.approx(0.5, abs=0.01)
    capped = _sanity("cap", -0.5)
    assert not capped.converged_gate("prism", "P").passed and "not converged: stopped: cap" in capped.converged_gate("prism", "P").detail
    assert not capped.improved_gate("prism", "P").passed  # training made the held-out loss worse
    fixed = _sanity(None, 0.5)
    assert not fixed.converged_gate("prism", "P").passed and "fixed budget" in fixed.converged_gate("prism", "P").detail
    assert not fixed.improved_gate("nothing", "P").passed
    curves = ok.curves()
    assert curves.step.tolist() == [0, 25] and curves.kept.tolist() == [False, True] and curves.earlier.tolist() == [False, True]


def test_each_seeds_model_is_compared_with_the_unigram_on_the_tokens_its_own_seed_masked():
    """A job scores its held-out tokens with its training seed's masks (ArmJob.train); the
    unigram model must score those same tokens, whatever the seed."""
    from types import SimpleNamespace

    import numpy as np

    from prismlib.prism import TrainResult, heldout_mask, mlm_sanity, seeded

    inputs = torch.randint(4, 30, (20, 60), generator=torch.Generator().manual_seed(0))
    unigram = np.log(np.linspace(1, 3, 30) / np.linspace(1, 3, 30).sum())
    models, expected = {}, {}
    for seed in (0, 5):
        selected = heldout_mask(inputs, 3, [0, 1, 2], seed)[1].numpy()
        uni = (unigram[inputs.numpy()] * selected).sum(1)
        counts = selected.sum(1).astype(float)
        record = {"heldout_final": (uni + 0.5 * counts, counts)}  # the model: 0.5 nats a token above the unigram
        models[seeded("prism", seed)] = SimpleNamespace(result=TrainResult(steps=3), record=record, seed=seed)
        expected[seed] = -uni.sum() / counts.sum()
    sanity = mlm_sanity(models, SimpleNamespace(heldout=inputs), np.arange(20), unigram, 3, [0, 1, 2], seed=0, n_boot=200)
    assert sanity.table["unigram_loss"].tolist() == pytest.approx([expected[0], expected[5]])
    assert expected[0] != pytest.approx(expected[5])  # the two seeds masked other tokens
    for seed in (0, 5):
        assert sanity.intervals[seeded("prism", seed)].effect == pytest.approx(0.5)
