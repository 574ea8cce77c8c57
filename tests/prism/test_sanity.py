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
    model = SimpleNamespace(result=result, record={"heldout_head": (head, counts), "heldout_final": (final, counts)})
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
