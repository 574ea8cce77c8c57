"""Installments of a pretraining (prismlib.pretrain.installment): each on a new machine (a fresh
local state folder) goes on from the committed state the last one wrote and ends where one run
crossing the same boundaries does; a committed state with a flipped byte stops the next one in
one line, a done one makes it train nothing, and uncommitted code trains nothing; the recipe of
a profile's PretrainSettings."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
import torch
from pretrain_fixtures import CLEAN, CONTINUATION, SETTINGS

from prismlib.artifacts import load_checkpoint
from prismlib.pretrain import (
    STATE,
    WEIGHTS,
    BertSize,
    PretrainConfig,
    pretrain,
    pretrain_config,
    pretrain_installment,
    read_state,
    recipe_config,
    retire_weights,
    synthetic_inputs,
)
from prismlib.records import SUMS, BadRecord


@pytest.fixture(scope="module")
def data():
    return synthetic_inputs(seq_len=32, n_docs=300, long_seq_len=64)


def _installment(data, minutes, records, machine, lines=None):
    say = (lines if lines is not None else []).append
    return pretrain_installment(SETTINGS, minutes, records, machine, data=lambda _: data, progress=False, say=say)


@pytest.fixture(scope="module")
def three(data, tmp_path_factory):
    """Three installments, each on a new machine: one step, one step (budgets spent at the first
    step), then the rest; their outcomes, lines, the records folder and the last local state."""
    tmp = tmp_path_factory.mktemp("installments")
    records, lines = tmp / "records", []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("prismlib.records.loaded_commit", lambda: CLEAN)  # records are written from committed code only
        outcomes = [_installment(data, minutes, records, tmp / f"machine{i}", lines) for i, minutes in enumerate((1e-9, 1e-9, 60))]
    return outcomes, lines, records, tmp / "machine2"


def test_installments_on_new_machines_end_where_one_run_crossing_their_boundaries_does(three, data, tmp_path):
    outcomes, lines, records, last_machine = three
    assert [(o.steps_before, o.steps, o.stop, o.done, o.trained) for o in outcomes] == [
        (0, 1, "minutes", False, True),
        (1, 2, "minutes", False, True),
        (2, 8, "steps", True, True),
    ]
    assert outcomes[-1].tokens == 8 * 8 * 32 and outcomes[-1].record == records / outcomes[0].key
    assert outcomes[-1].gain_seq_len == 64 and outcomes[-1].gain == read_state(outcomes[-1].record, *_recipe(data)).curve[-1]["gain"]
    assert lines[0] == "pretraining 1x32h2: step 0 of 8, about 0 minutes this installment"
    assert lines[1].startswith("pretraining 1x32h2: step 1 of 8 (stopped by minutes; +1 steps, 256 tokens in all)")
    assert lines[2].startswith("pretraining 1x32h2: step 1 of 8, about ")
    assert lines[-1].startswith("pretraining 1x32h2: step 8 of 8 (done; +6 steps") and f"committed state {outcomes[-1].record}" in lines[-1]
    committed = read_state(outcomes[-1].record, *_recipe(data))
    assert (committed.step, committed.boundaries, committed.done) == (8, [1, 2], True)
    config = pretrain_config(SETTINGS)
    kw = {"eval_every": 4, "checkpoint_every": 4, "heldout_inputs": 16, "threads": 1, "progress": False}
    whole = pretrain(
        config, data.inputs, tmp_path, mask_id=data.mask_id, special=data.special, long_inputs=data.long_inputs, boundaries=[1, 2], **kw
    )
    local = load_checkpoint(last_machine / outcomes[0].key / STATE)["model"]
    for name, p in whole.model.state_dict().items():
        assert torch.equal(p, local[name]), name
    for (name, p), q in zip(whole.model.named_parameters(), committed.model.parameters(), strict=True):
        assert torch.equal(p.half().float(), q), name


def _recipe(data):
    return pretrain_config(SETTINGS), data.inputs.corpus_digest, data.inputs.tokenizer_digest


def test_a_done_committed_state_makes_the_next_installment_train_nothing_and_say_so(three, data, tmp_path, monkeypatch):
    outcomes, _, records, _ = three
    sums = (outcomes[-1].record / SUMS).read_bytes()
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "1" * 40 + "+dirty")  # a done run needs no committed code
    lines: list[str] = []
    again = _installment(data, 60, records, tmp_path / "machine", lines)
    assert (again.trained, again.done, again.steps_before, again.steps, again.stop) == (False, True, 8, 8, "")
    assert lines == [f"pretraining 1x32h2: done, step 8 of 8 in its committed state {outcomes[-1].record}; nothing to train"]
    assert (outcomes[-1].record / SUMS).read_bytes() == sums and not (tmp_path / "machine").exists()


def test_a_flipped_byte_in_the_committed_weights_stops_the_next_installment_in_one_line(three, data, tmp_path):
    outcomes, _, records, _ = three
    copy = tmp_path / "records"
    shutil.copytree(records, copy)
    weights = copy / outcomes[0].key / WEIGHTS
    raw = bytearray(weights.read_bytes())
    raw[len(raw) // 2] ^= 1
    weights.write_bytes(bytes(raw))
    with pytest.raises(BadRecord) as err:
        _installment(data, 60, copy, tmp_path / "machine")
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{weights}: its bytes do not match {SUMS}") and "git checkout" in message
    assert not (tmp_path / "machine").exists()  # never a silent restart from step 0


def test_uncommitted_code_trains_nothing(data, tmp_path, monkeypatch):
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "1" * 40 + "+dirty")
    with pytest.raises(ValueError, match="the code is uncommitted"):
        _installment(data, 60, tmp_path / "records", tmp_path / "machine")
    assert not (tmp_path / "machine").exists() and not (tmp_path / "records").exists()
    with pytest.raises(ValueError, match="positive number of minutes"):
        _installment(data, 0, tmp_path / "records", tmp_path / "machine")


def test_the_recipe_of_pretrain_settings():
    config = pretrain_config(SETTINGS)
    size = BertSize(1, 32, 2, dropout=0.1)
    assert config == PretrainConfig(
        size, seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, schedule="linear", total_steps=8, long_seq_len=64, long_share=0.25
    )
    assert pretrain_config(dataclasses.replace(SETTINGS, size="2x64", dropout=0.0)).size == BertSize(2, 64, 1, dropout=0.0)
    with pytest.raises(ValueError, match="do not divide by long_seq_len 48"):
        pretrain_config(dataclasses.replace(SETTINGS, long_seq_len=48))


def test_a_continuation_trains_its_base_first_then_starts_from_the_base_weights(data, tmp_path, monkeypatch):
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: CLEAN)
    longer = synthetic_inputs(seq_len=64, n_docs=300)
    by_length = {32: data, 64: longer}

    def inputs(config):
        return by_length[config.seq_len]

    records, lines = tmp_path / "records", []
    first = pretrain_installment(CONTINUATION, 60, records, tmp_path / "m0", data=inputs, progress=False, say=lines.append)
    base = read_state(records / first.key, pretrain_config(SETTINGS), data.inputs.corpus_digest, data.inputs.tokenizer_digest)
    assert first.done and first.total_steps == 8 and base.done  # the base's installment, not the continuation's
    assert lines[0].endswith(f"the continuation's base {first.key} is not done; this installment trains it")
    assert "base" not in base.record["description"]["config"]  # the key of a run from scratch names no base
    second = pretrain_installment(CONTINUATION, 60, records, tmp_path / "m1", data=inputs, progress=False, say=lines.append)
    config = recipe_config(CONTINUATION, data.inputs.corpus_digest, data.inputs.tokenizer_digest)
    assert config.base == first.key and second.key != first.key and (second.steps_before, second.steps, second.done) == (0, 2, True)
    cont = read_state(records / second.key, config, data.inputs.corpus_digest, data.inputs.tokenizer_digest)
    # step 0 scores the base's weights (through fp16) on the base's long held-out inputs: its loss, not a new BERT's
    start, base_end = cont.curve[0], base.curve[-1]
    assert (start["step"], start["seq_len"], base_end["seq_len"]) == (0, 64, 64)
    assert abs(start["heldout_loss"] - base_end["heldout_loss"]) < 0.02 < (base.curve[0]["heldout_loss"] - base_end["heldout_loss"]) / 10
    # the done continuation holds what is read of its base: the base's weights leave the tree, its curve stays
    digests = data.inputs.corpus_digest, data.inputs.tokenizer_digest
    retire_weights(records / first.key, pretrain_config(SETTINGS), *digests, by=second.key)
    assert not (records / first.key / WEIGHTS).exists()
    with pytest.raises(BadRecord, match=f"retired from the tree once its continuation {second.key} was done"):
        read_state(records / first.key, pretrain_config(SETTINGS), *digests)
    assert read_state(records / first.key, pretrain_config(SETTINGS), *digests, weights=False).curve == base.curve
    third = pretrain_installment(CONTINUATION, 60, records, tmp_path / "m2", data=inputs, progress=False, say=lines.append)
    assert (third.trained, third.done, third.key) == (False, True, second.key)  # done: nothing of the base is read


def test_a_continuation_keeps_its_base_size():
    with pytest.raises(ValueError, match="keeps its base's architecture: size '2x64', base '1x32h2'"):
        dataclasses.replace(CONTINUATION, size="2x64")
