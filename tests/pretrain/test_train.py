"""The pretraining loop: its schedule, exact resume, refusing another recipe's state, the
minutes budget, and a tiny pretraining on generated text that beats the unigram model."""

from __future__ import annotations

import functools
import math

import pytest
import torch

from prismlib.pretrain import CURVE, RUN, STATE, BertSize, PretrainConfig, learning_rate, pretrain, read_curve, synthetic_inputs

TINY = BertSize(1, 32, 2, max_positions=64, dropout=0.1)


@functools.cache
def _inputs():
    return synthetic_inputs(seq_len=32, n_docs=300)


def _run(tmp, config, **kw):
    inputs, mask_id, special = _inputs()
    kw = {"eval_every": 5, "checkpoint_every": 5, "heldout_inputs": 16, "progress": False, **kw}
    return pretrain(config, inputs, tmp, mask_id=mask_id, special=special, **kw)


def test_the_schedule_warms_up_linearly_then_stays_or_decays_to_zero():
    c = PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=4)
    assert [learning_rate(c, s) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    d = PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=2, schedule="linear", total_steps=6)
    assert [learning_rate(d, s) for s in range(7)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0]
    with pytest.raises(ValueError, match="total_steps"):
        PretrainConfig(TINY, seq_len=32, schedule="linear")


def test_a_resumed_run_ends_with_the_parameters_of_an_uninterrupted_one(tmp_path):
    config = PretrainConfig(TINY, seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, schedule="linear", total_steps=12)
    whole = _run(tmp_path / "whole", config)
    part = _run(tmp_path / "parts", config, max_steps=5)
    assert part.steps == 5 and part.stop == "steps" and (tmp_path / "parts" / STATE).is_file()
    rest = _run(tmp_path / "parts", config)
    assert rest.resumed_from == 5 and rest.steps == whole.steps == 12 and rest.stop == "steps"
    for (name, p), q in zip(whole.model.named_parameters(), rest.model.parameters()):
        assert torch.equal(p, q), name
    assert [r["step"] for r in rest.curve] == [0, 5, 10, 12] and rest.curve[-1]["heldout_loss"] == whole.curve[-1]["heldout_loss"]
    assert read_curve(tmp_path / "parts" / CURVE)[-1]["step"] == 12
    again = _run(tmp_path / "parts", config)
    assert again.stop == "done" and again.steps == 12


def test_a_state_of_another_recipe_is_refused(tmp_path):
    _run(tmp_path, PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2), max_steps=2)
    with pytest.raises(ValueError, match="another recipe or corpus"):
        _run(tmp_path, PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2, lr=5e-4), max_steps=2)


def test_the_minutes_budget_stops_cleanly_with_a_check_and_a_state(tmp_path):
    result = _run(tmp_path, PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2), minutes=1e-9, eval_every=1000)
    assert result.stop == "minutes" and result.steps == 1 and result.curve[-1]["step"] == 1
    assert (tmp_path / STATE).is_file() and '"stop": "minutes"' in (tmp_path / RUN).read_text()


def test_a_tiny_pretraining_on_generated_text_beats_the_unigram_model(tmp_path):
    config = PretrainConfig(BertSize(1, 32, 2, max_positions=64, dropout=0.0), seq_len=32, batch_size=16, lr=3e-3, warmup_steps=20)
    result = _run(tmp_path, config, max_steps=90, eval_every=30)
    first, last = result.curve[0], result.curve[-1]
    assert first["gain"] < 0 < 0.3 < last["gain"], result.curve  # from far below the unigram model to clearly above it
    assert math.isfinite(result.tokens_per_second) and result.tokens == 90 * 16 * 32
