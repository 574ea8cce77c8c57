"""The training loop (prismlib.lstm.training): exact resume, paired seeds, the switch to ASGD, and
the annealed schedule in a real run (stopped by its rule, the best model kept, resumed with the
same schedule state; the bigram guard)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, random_ids, tiny_lstm

from prismlib import lstm
from prismlib.anneal import DID_NOT_LEARN, STOPPED_BY_RULE

TINY = tiny_lstm(optimizer="ntasgd", curve_every=2, curve_tokens=1000, epochs=2, steps_per_epoch=3, cutoffs=(), average_last=0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def test_training_resumes_exactly_from_checkpoint(tmp_path):
    train, valid = random_ids(600, 1), random_ids(200, 2)
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


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (benchmarks/gpu.sh runs it: part `tests`)")
def test_training_resumes_from_a_cuda_checkpoint(tmp_path):
    """A run on a GPU resumes from its checkpoint (its RNG states are mapped to the device with
    the weights and must go back to the CPU; a lent machine's 10-minute calls rely on it). Not
    exact: cuDNN may differ in the last bits, so the weights only match closely."""
    train, valid = random_ids(600, 1), random_ids(200, 2)
    ref = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY).cuda()
    lstm.train_lm(ref, train, valid, TINY, seed=3)
    ck = tmp_path / "ck.pt"
    lstm.train_lm(lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY).cuda(), train, valid, TINY.updated(epochs=1), seed=3, checkpoint=ck)
    resumed = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY).cuda()
    hist = lstm.train_lm(resumed, train, valid, TINY, seed=3, checkpoint=ck)
    assert hist.epochs == 2
    for a, b in zip(ref.state_dict().values(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


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
    train, valid = random_ids(600, 1), random_ids(200, 2)
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
    train, valid = random_ids(600, 1), random_ids(200, 2)
    s = TINY.updated(optimizer="ntasgd", lr=1.0, epochs=3, average_last=1)
    hist = lstm.train_lm(lstm.build_model(lstm.RunSpec(), VOCAB, s), train, valid, s, seed=0)
    assert hist.asgd_from == 2  # switched after epoch 2: epoch 3 averages
    off = s.updated(average_last=0)
    assert lstm.train_lm(lstm.build_model(lstm.RunSpec(), VOCAB, off), train, valid, off, seed=0).asgd_from is None


ANNEAL = tiny_lstm(
    steps_per_epoch=None,
    checks_per_pass=2,
    cutoffs=(),
    average_last=0,
    optimizer="anneal",
    lr=5.0,
    epochs=8,
    min_rounds=1,
    decays=2,
    decay_tolerance=0.5,
    curve_every=None,
)


@pytest.mark.usefixtures("one_torch_thread")  # restored after the module: no state left behind
def test_an_annealed_run_stops_by_rule_keeps_the_best_model_and_resumes_exactly(tmp_path):
    train, valid = random_ids(800, 1), random_ids(200, 2)
    ref = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, ANNEAL)
    hist_ref = lstm.train_lm(ref, train, valid, ANNEAL, seed=3)
    # a 50% tolerance: every round after the first is a failure, so 2 decays then a stop
    assert hist_ref.stop_reason == STOPPED_BY_RULE and hist_ref.anneal.decayed_at == (2, 3)
    assert hist_ref.epochs == 4 and hist_ref.lr_scale == [1.0, 1.0, 0.25, 0.0625]
    assert sorted(hist_ref.val_snapshots) == [2, 3, 4]
    assert len(hist_ref.val_snapshots[4]) == len(valid)
    best = int(np.argmin(hist_ref.val_ppl))
    assert lstm.perplexity(lstm.token_nll(ref, valid, 2, 8)) == pytest.approx(hist_ref.val_ppl[best], rel=1e-5)
    # two rounds per pass: the cursor runs on, so two rounds see as many tokens as one pass
    assert hist_ref.epoch_tokens[1] == pytest.approx(len(train) - 4, rel=0.1)
    # killed after 3 rounds (the cap stands in for the kill), resumed from the checkpoint
    ck = tmp_path / "ck.pt"
    part = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, ANNEAL)
    lstm.train_lm(part, train, valid, ANNEAL.updated(epochs=3), seed=3, checkpoint=ck)
    resumed = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, ANNEAL)
    hist = lstm.train_lm(resumed, train, valid, ANNEAL, seed=3, checkpoint=ck)
    assert hist.val_ppl == hist_ref.val_ppl and hist.anneal == hist_ref.anneal and hist.lr_scale == hist_ref.lr_scale
    for a, b in zip(ref.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)


@pytest.mark.usefixtures("one_torch_thread")  # restored after the module: no state left behind
def test_the_bigram_guard_holds_the_rate_of_a_model_that_has_not_beaten_it():
    train, valid = random_ids(800, 1), random_ids(200, 2)
    model = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, ANNEAL)
    hist = lstm.train_lm(model, train, valid, ANNEAL, seed=3, learn_below=1.0)  # no model beats perplexity 1
    assert hist.stop_reason == DID_NOT_LEARN and hist.anneal.decayed_at == () and set(hist.lr_scale) == {1.0}
