"""Committed states of a pretraining (prismlib.pretrain.record): the fp16 weights alone, tied
tensors once; a changed byte or another recipe or corpus refused in one line; and resuming from
a committed state as part of the recipe: the same parameters as a run from scratch that crosses
the same boundary, and the local state preferred unless it is behind the record."""

from __future__ import annotations

import functools
import json

import pytest
import torch

from prismlib.artifacts import load_checkpoint
from prismlib.pretrain import (
    RUN,
    STATE,
    WEIGHTS,
    BertSize,
    PretrainConfig,
    main,
    parameter_count,
    pretrain,
    read_state,
    recipe_key,
    retire_weights,
    synthetic_inputs,
    write_state,
)
from prismlib.records import RECORD, BadRecord

TINY = BertSize(1, 32, 2, max_positions=64, dropout=0.1)
CONFIG = PretrainConfig(TINY, seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, schedule="linear", total_steps=16)


@functools.cache
def _data():
    return synthetic_inputs(seq_len=32, n_docs=300)


def _run(tmp, config=CONFIG, **kw):
    data = _data()
    kw = {"eval_every": 4, "checkpoint_every": 4, "heldout_inputs": 16, "progress": False, **kw}
    return pretrain(config, data.inputs, tmp, mask_id=data.mask_id, special=data.special, **kw)


def _write(folder, result, config=CONFIG):
    inputs = _data().inputs
    return write_state(folder / result.key, config, result, inputs.corpus_digest, inputs.tokenizer_digest)


def _read(folder, config=CONFIG, corpus=None):
    inputs = _data().inputs
    return read_state(folder, config, corpus or inputs.corpus_digest, inputs.tokenizer_digest)


@pytest.fixture
def clean_tree(monkeypatch):
    """Records are written only from committed code: pretend the checkout is clean."""
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "0" * 40)


@pytest.fixture
def record(tmp_path_factory, clean_tree):
    """A run of 8 steps and its committed state."""
    tmp = tmp_path_factory.mktemp("record")
    result = _run(tmp / "run", max_steps=8)
    return result, _write(tmp / "records", result)


def test_a_committed_state_keeps_the_fp16_weights_once_and_reads_back_as_the_fp32_model(record):
    result, folder = record
    inputs = _data().inputs
    assert folder.name == result.key == recipe_key(CONFIG, inputs.corpus_digest, inputs.tokenizer_digest)
    n = parameter_count(result.model)  # the tied decoder counted once
    assert abs((folder / WEIGHTS).stat().st_size - 2 * n) < 0.01 * 2 * n  # 2 bytes a parameter, no optimizer, no second copy
    state = _read(folder)
    assert (state.step, state.tokens, state.boundaries, state.done) == (8, 8 * 8 * 32, [], False)
    assert state.curve == json.loads(json.dumps(result.curve)) and state.curve[-1]["step"] == 8
    assert not state.model.training and state.model.cls.predictions.decoder.weight is state.model.bert.embeddings.word_embeddings.weight
    for (name, p), q in zip(result.model.named_parameters(), state.model.parameters(), strict=True):
        assert q.dtype == torch.float32 and torch.equal(q, p.half().float()), name
    assert json.loads((folder / RECORD).read_text())["description"]["corpus"] == inputs.corpus_digest


@pytest.mark.parametrize(
    "spoil, names",
    [
        (lambda f: (f / WEIGHTS).write_bytes(bytes([(f / WEIGHTS).read_bytes()[0] ^ 1]) + (f / WEIGHTS).read_bytes()[1:]), WEIGHTS),
        (lambda f: (f / WEIGHTS).write_bytes((f / WEIGHTS).read_bytes()[:1000]), WEIGHTS),
    ],
    ids=["flipped byte", "truncated weights"],
)
def test_a_committed_state_whose_bytes_changed_is_refused_in_one_line(record, spoil, names):
    folder = record[1]
    spoil(folder)
    with pytest.raises(BadRecord) as err:
        _read(folder)
    message = str(err.value)
    assert err.value.path == folder / names and "\n" not in message and str(folder / names) in message
    assert "git checkout" in message and "--start-from" in message


def test_a_committed_state_of_another_recipe_or_corpus_is_refused(record, tmp_path):
    folder = record[1]
    with pytest.raises(BadRecord, match="another recipe"):
        _read(folder, PretrainConfig(TINY, seq_len=32, batch_size=8, lr=1e-3, warmup_steps=3, schedule="linear", total_steps=16))
    with pytest.raises(BadRecord, match="another recipe") as err:
        _read(folder, corpus="0" * 64)
    assert "\n" not in str(err.value) and str(folder / RECORD) in str(err.value)
    with pytest.raises(BadRecord, match="another recipe"):  # and pretrain never starts from it
        _run(tmp_path / "run", PretrainConfig(TINY, seq_len=32, batch_size=8, lr=1e-3, warmup_steps=3), start_from=folder, max_steps=9)
    assert not (tmp_path / "run" / STATE).exists()


def test_uncommitted_code_writes_no_committed_state(tmp_path, monkeypatch):
    result = _run(tmp_path / "run", max_steps=1)
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "1" * 40 + "+dirty")
    with pytest.raises(ValueError, match="uncommitted"):
        _write(tmp_path / "records", result)
    assert not (tmp_path / "records").exists()


def test_resuming_from_a_committed_state_is_the_run_from_scratch_that_crosses_its_boundary(record, tmp_path):
    result, folder = record
    resumed = _run(tmp_path / "elsewhere", start_from=folder)  # a fresh machine: no local state
    assert (resumed.resumed_from, resumed.steps, resumed.boundaries) == (8, 16, [8])
    replayed = _run(tmp_path / "scratch", boundaries=[8])  # one call from step 0, crossing step 8 as a resume does
    for (name, p), q in zip(replayed.model.named_parameters(), resumed.model.parameters(), strict=True):
        assert torch.equal(p, q), name
    assert [r["heldout_loss"] for r in resumed.curve] == [r["heldout_loss"] for r in replayed.curve]
    plain = _run(tmp_path / "plain")  # without the boundary: another run (fp16 weights, fresh moments, re-warm-up)
    assert not torch.equal(plain.model.bert.encoder.layer[0].output.dense.weight, resumed.model.bert.encoder.layer[0].output.dense.weight)
    assert load_checkpoint(tmp_path / "elsewhere" / STATE)["boundaries"] == [8]
    assert json.loads((tmp_path / "elsewhere" / RUN).read_text())["boundaries"] == [8]
    again = _write(tmp_path / "records", resumed)
    assert (_read(again).boundaries, _read(again).done) == ([8], True)


def test_the_local_state_is_used_unless_it_is_behind_the_committed_state(record, tmp_path):
    folder = record[1]
    ahead = _run(tmp_path / "ahead", max_steps=12)
    resumed = _run(tmp_path / "ahead", start_from=folder)
    assert (resumed.resumed_from, resumed.boundaries) == (12, [])
    plain = _run(tmp_path / "plain")
    assert torch.equal(resumed.model.cls.predictions.transform.dense.weight, plain.model.cls.predictions.transform.dense.weight)
    behind = _run(tmp_path / "behind", max_steps=4)
    assert behind.steps == 4 and ahead.steps == 12
    assert _run(tmp_path / "behind", start_from=folder, max_steps=10).boundaries == [8]
    with pytest.raises(ValueError, match=r"boundaries \[6\] lie before step 10"):
        _run(tmp_path / "behind", boundaries=[6])


def test_the_command_line_writes_the_committed_state_and_resumes_from_it(tmp_path, clean_tree, capsys):
    argv = ["--size", "1x32h2", "--seq-len", "32", "--batch", "4", "--warmup", "2", "--schedule", "linear", "--total-steps", "6"]
    argv += ["--corpus", "synthetic", "--eval-every", "3", "--heldout-inputs", "4", "--no-progress", "--record", str(tmp_path / "records")]
    first = main([*argv, "--out", str(tmp_path / "a"), "--max-tokens", "384"])  # 3 steps of 4 x 32 tokens
    folder = tmp_path / "records" / first.key
    assert first.steps == 3 and f"--start-from {folder}" in capsys.readouterr().out
    second = main([*argv, "--out", str(tmp_path / "b"), "--start-from", str(folder)])
    assert (second.resumed_from, second.steps, second.boundaries) == (3, 6, [3])
    assert json.loads((folder / RECORD).read_text())["boundaries"] == [3]


def test_a_state_whose_schedule_is_not_done_keeps_its_weights(record):
    """Only a done state's weights leave the tree: an unfinished one is where its installments go on."""
    result, folder = record
    inputs = _data().inputs
    assert result.steps < CONFIG.total_steps
    with pytest.raises(ValueError, match="not done keeps its weights"):
        retire_weights(folder, CONFIG, inputs.corpus_digest, inputs.tokenizer_digest, by="0" * 16)
    assert (folder / WEIGHTS).is_file() and _read(folder).step == result.steps
