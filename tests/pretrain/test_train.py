"""The pretraining loop: exact resume, refusing another recipe's state, the minutes budget,
BERT's long second phase (its inputs, its checks, its resume), the command line, and a tiny
pretraining on generated text that beats the unigram model."""

from __future__ import annotations

import functools
import json
import math

import pytest
import torch

from prismlib.pretrain import (
    CURVE,
    RUN,
    STATE,
    BertSize,
    PretrainConfig,
    main,
    pretrain,
    read_curve,
    synthetic_inputs,
)
from prismlib.pretrain import train as train_module

TINY = BertSize(1, 32, 2, max_positions=64, dropout=0.1)


@functools.cache
def _inputs():
    return synthetic_inputs(seq_len=32, n_docs=300, long_seq_len=64)


def _run(tmp, config, **kw):
    data = _inputs()
    kw = {"eval_every": 5, "checkpoint_every": 5, "heldout_inputs": 16, "progress": False, **kw}
    if config.long_seq_len is not None:
        kw.setdefault("long_inputs", data.long_inputs)
    return pretrain(config, data.inputs, tmp, mask_id=data.mask_id, special=data.special, **kw)


def _same_parameters(a, b):
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q), name


def test_a_resumed_run_ends_with_the_parameters_of_an_uninterrupted_one(tmp_path):
    config = PretrainConfig(TINY, seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, schedule="linear", total_steps=12)
    whole = _run(tmp_path / "whole", config)
    part = _run(tmp_path / "parts", config, max_steps=5)
    assert part.steps == 5 and part.stop == "steps" and (tmp_path / "parts" / STATE).is_file()
    rest = _run(tmp_path / "parts", config)
    assert rest.resumed_from == 5 and rest.steps == whole.steps == 12 and rest.stop == "steps"
    _same_parameters(whole.model, rest.model)
    assert [r["step"] for r in rest.curve] == [0, 5, 10, 12] and rest.curve[-1]["heldout_loss"] == whole.curve[-1]["heldout_loss"]
    assert read_curve(tmp_path / "parts" / CURVE)[-1]["step"] == 12
    again = _run(tmp_path / "parts", config)
    assert again.stop == "done" and again.steps == 12


def test_a_state_of_another_recipe_is_refused(tmp_path):
    _run(tmp_path, PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2), max_steps=2)
    with pytest.raises(ValueError, match="another recipe or corpus"):
        _run(tmp_path, PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2, lr=5e-4), max_steps=2)


def test_init_is_only_a_continuations_start_and_a_continuation_needs_it(tmp_path):
    """A run from scratch refuses a given model; a continuation with no state of its own refuses
    to start from a new BERT (it would silently drop its base)."""
    scratch = PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2)
    with pytest.raises(ValueError, match="init is a continuation's start"):
        _run(tmp_path / "a", scratch, max_steps=2, init=_run(tmp_path / "b", scratch, max_steps=1).model)
    continuation = PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2, base="0123456789abcdef")
    with pytest.raises(ValueError, match="no state of its own starts from its base's model: give init"):
        _run(tmp_path / "c", continuation, max_steps=2)


def test_the_minutes_budget_stops_cleanly_with_a_check_and_a_state(tmp_path):
    result = _run(tmp_path, PretrainConfig(TINY, seq_len=32, batch_size=8, warmup_steps=2), minutes=1e-9, eval_every=1000)
    assert result.stop == "minutes" and result.steps == 1 and result.curve[-1]["step"] == 1
    assert (tmp_path / STATE).is_file() and '"stop": "minutes"' in (tmp_path / RUN).read_text()


LONG = PretrainConfig(
    TINY, seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, schedule="linear", total_steps=12, long_seq_len=64, long_share=0.25
)


def test_the_long_phase_trains_on_long_inputs_checks_at_both_lengths_at_the_switch_and_resumes_exactly(tmp_path, monkeypatch):
    drawn = []
    real = train_module.training_batch

    def spy(sequences, step, batch_size, *args):
        drawn.append((step, batch_size, sequences.shape[1]))
        return real(sequences, step, batch_size, *args)

    monkeypatch.setattr(train_module, "training_batch", spy)
    whole = _run(tmp_path / "whole", LONG)
    assert drawn == [(s, 8, 32) for s in range(9)] + [(s, 4, 64) for s in range(9, 12)]
    assert [(r["step"], r["seq_len"]) for r in whole.curve] == [(0, 32), (5, 32), (9, 32), (9, 64), (10, 64), (12, 64)]
    at_switch = [r for r in whole.curve if r["step"] == 9]
    assert not math.isnan(at_switch[0]["train_loss"]) and math.isnan(at_switch[1]["train_loss"])  # no long step trained yet
    assert at_switch[0]["unigram_loss"] != at_switch[1]["unigram_loss"] == whole.curve[-1]["unigram_loss"]  # its own held-out set
    assert whole.tokens == 12 * 8 * 32
    run = json.loads((tmp_path / "whole" / RUN).read_text())
    assert (run["phase"], run["seq_len"], run["long_from"], run["long_heldout_inputs"]) == (2, 64, 9, 8)  # as many held-out tokens
    part = _run(tmp_path / "parts", LONG, max_steps=9)  # stops at the switch: both checks made
    assert [(r["step"], r["seq_len"]) for r in part.curve][-2:] == [(9, 32), (9, 64)]
    assert json.loads((tmp_path / "parts" / RUN).read_text())["phase"] == 2  # that of the next step
    rest = _run(tmp_path / "parts", LONG)
    _same_parameters(whole.model, rest.model)
    assert [r["heldout_loss"] for r in rest.curve] == [r["heldout_loss"] for r in whole.curve]
    assert read_curve(tmp_path / "parts" / CURVE)[-1]["seq_len"] == 64.0


def test_the_long_inputs_are_required_only_to_reach_the_long_phase_and_must_match(tmp_path):
    with pytest.raises(ValueError, match="--long-seq-len 64"):
        _run(tmp_path / "a", LONG, long_inputs=None)
    assert _run(tmp_path / "b", LONG, long_inputs=None, max_steps=8).steps == 8  # stops before the switch
    data = _inputs()
    other = synthetic_inputs(seq_len=32, n_docs=300, seed=1, long_seq_len=64).long_inputs
    with pytest.raises(ValueError, match="another corpus"):
        _run(tmp_path / "c", LONG, long_inputs=other)
    with pytest.raises(ValueError, match="long inputs have 32 tokens"):
        _run(tmp_path / "d", LONG, long_inputs=data.inputs)
    with pytest.raises(ValueError, match="without a long phase"):
        _run(tmp_path / "e", PretrainConfig(TINY, seq_len=32, batch_size=8), long_inputs=data.long_inputs, max_steps=1)


def test_the_command_line_runs_both_phases(tmp_path, capsys):
    argv = ["--out", str(tmp_path), "--size", "1x32h2", "--seq-len", "32", "--batch", "4", "--warmup", "2", "--schedule", "linear"]
    argv += ["--total-steps", "4", "--long-seq-len", "64", "--long-share", "0.5", "--corpus", "synthetic", "--eval-every", "2"]
    result = main([*argv, "--heldout-inputs", "4", "--no-progress"])
    assert result.steps == 4 and [(r["step"], r["seq_len"]) for r in result.curve] == [(0, 32), (2, 32), (2, 64), (4, 64)]
    assert "at 64 tokens" in capsys.readouterr().out


def test_a_tiny_pretraining_on_generated_text_beats_the_unigram_model(tmp_path):
    config = PretrainConfig(BertSize(1, 32, 2, max_positions=64, dropout=0.0), seq_len=32, batch_size=16, lr=3e-3, warmup_steps=20)
    result = _run(tmp_path, config, max_steps=90, eval_every=30)
    first, last = result.curve[0], result.curve[-1]
    assert first["gain"] < 0 < 0.3 < last["gain"], result.curve  # from far below the unigram model to clearly above it
    assert math.isfinite(result.tokens_per_second) and result.tokens == 90 * 16 * 32
