"""The pretraining recipe (prismlib.pretrain.recipe): the schedule and its re-warm-up after a
boundary, BERT's long second phase, the lengths a check measures, what a boundary does to the
weights, and the key a committed state is named by."""

from __future__ import annotations

import pytest
import torch

from prismlib.jobcache import job_key
from prismlib.pretrain import (
    REWARM_STEPS,
    BertSize,
    PretrainConfig,
    check_lengths,
    cross_boundary,
    learning_rate,
    new_bert,
    recipe_description,
    recipe_key,
)

TINY = BertSize(1, 32, 2, max_positions=64, dropout=0.1)
LONG = PretrainConfig(
    TINY, seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, schedule="linear", total_steps=12, long_seq_len=64, long_share=0.25
)


def test_the_schedule_warms_up_linearly_then_stays_or_decays_to_zero():
    c = PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=4)
    assert [learning_rate(c, s) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    d = PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=2, schedule="linear", total_steps=6)
    assert [learning_rate(d, s) for s in range(7)] == [0.5, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0]
    with pytest.raises(ValueError, match="total_steps"):
        PretrainConfig(TINY, seq_len=32, schedule="linear")


def test_after_a_boundary_the_rate_warms_up_again_over_rewarm_steps():
    c = PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=4)
    b = 300
    assert REWARM_STEPS == 100
    assert [learning_rate(c, s, [b]) for s in (b - 1, b, b + 50, b + 99, b + 100)] == [1.0, 0.01, 0.51, 1.0, 1.0]
    assert learning_rate(c, b + 50, [10, b]) == 0.51 and learning_rate(c, b + 50, [b, b + 40]) == 0.11  # the last boundary counts
    assert learning_rate(PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=8), 3, [0]) == 0.02  # in the warm-up: 4/8 x 4/100
    d = PretrainConfig(TINY, seq_len=32, lr=1.0, warmup_steps=2, schedule="linear", total_steps=1002)
    assert learning_rate(d, 502, [452]) == learning_rate(d, 502) * 0.51


def test_the_long_phase_is_the_last_share_of_the_steps_at_the_same_tokens_per_step():
    assert (LONG.long_from, LONG.long_batch) == (9, 4)
    assert [LONG.shape_at(s) for s in (0, 8, 9, 11)] == [(8, 32), (8, 32), (4, 64), (4, 64)]
    assert PretrainConfig(TINY, seq_len=32, total_steps=1000, long_seq_len=64).long_from == 900  # long_share 0.1
    assert (PretrainConfig(TINY, seq_len=32).long_from, PretrainConfig(TINY, seq_len=32).shape_at(10**6)) == (None, (32, 32))
    assert LONG.describe()["long_seq_len"] == 64 and LONG.describe()["recipe_version"] == 2
    with pytest.raises(ValueError, match="total_steps"):
        PretrainConfig(TINY, seq_len=32, long_seq_len=64)
    with pytest.raises(ValueError, match="64 positions"):
        PretrainConfig(TINY, seq_len=32, total_steps=10, long_seq_len=128)
    with pytest.raises(ValueError, match="divide by long_seq_len 48"):
        PretrainConfig(TINY, seq_len=32, batch_size=5, total_steps=10, long_seq_len=48)
    with pytest.raises(ValueError, match="no step"):
        PretrainConfig(TINY, seq_len=32, total_steps=4, long_seq_len=64, long_share=0.1)


def test_a_check_measures_the_length_of_the_last_step_and_of_the_next():
    assert [check_lengths(LONG, s) for s in (0, 5, 9, 10, 12)] == [[32], [32], [32, 64], [64], [64]]
    assert check_lengths(PretrainConfig(TINY, seq_len=32, total_steps=4, long_seq_len=64, long_share=1.0), 0) == [64]
    assert check_lengths(PretrainConfig(TINY, seq_len=32), 7) == [32]


def test_a_boundary_rounds_the_weights_through_fp16_once_and_keeps_the_tie():
    model = new_bert(TINY, 0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    cross_boundary(model)
    after = {n: p.detach().clone() for n, p in model.named_parameters()}
    assert all(torch.equal(after[n], before[n].half().float()) for n in before)
    assert any(not torch.equal(after[n], before[n]) for n in before)
    cross_boundary(model)  # a second crossing at the same step changes nothing
    assert all(torch.equal(p, after[n]) for n, p in model.named_parameters())
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight


def test_the_key_hashes_the_description_as_a_record_key_does():
    desc = recipe_description(LONG, "c" * 64, "t" * 64)
    assert recipe_key(LONG, "c" * 64, "t" * 64) == job_key(desc) and desc["config"]["recipe_version"] == 2
    assert recipe_key(LONG, "c" * 64, "t" * 64) != recipe_key(LONG, "d" * 64, "t" * 64)
    assert len({recipe_key(PretrainConfig(TINY, seq_len=32, total_steps=20, long_seq_len=n), "c", "t") for n in (None, 64)}) == 2
