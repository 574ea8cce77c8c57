"""The committed pretraining as an encoder (prismlib.pretrain.encoder), on a tiny pretraining of
generated text written as its committed state: the Hugging Face folder gives the record model's
hidden states and MLM logits, is built once per record and rebuilt for another; a flipped byte,
a missing record and an unfinished schedule build nothing (the last two naming the fix); the
premise gate passes from PREMISE_GATE nats up; a profile whose section 4 runs on its pretraining
gets that encoder by name, with its pretrained head and the measured premise."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from pretrain_fixtures import CLEAN, CONTINUATION, SETTINGS

from prismlib.paths import OUTPUT_ENV
from prismlib.pretrain import (
    BUILT,
    PREMISE_GATE,
    WEIGHTS,
    PretrainedEncoder,
    PretrainingNotDone,
    Section4Encoder,
    committed_encoder,
    pretrain,
    pretrain_config,
    pretrain_installment,
    pretrained_premise,
    pretraining_figure,
    pretraining_tokenizer,
    read_state,
    recipe_config,
    recipe_key,
    retire_weights,
    section4_encoder,
    synthetic_inputs,
    write_state,
)
from prismlib.probing import MASKED_LM_PREMISE, encoder_location, encoder_name, hidden_states, load_encoder
from prismlib.profiles import get_profile
from prismlib.records import BadRecord

KW = {"eval_every": 4, "checkpoint_every": 4, "heldout_inputs": 16, "threads": 1, "progress": False}


@pytest.fixture(scope="module")
def data():
    return synthetic_inputs(seq_len=32, n_docs=300, long_seq_len=64)


def _installment(data, minutes, records, machine):
    return pretrain_installment(SETTINGS, minutes, records, machine, data=lambda _: data, progress=False, say=lambda _: None)


@pytest.fixture(scope="module")
def done(data, tmp_path_factory):
    """The records folder holding the done committed state of SETTINGS (one installment)."""
    tmp = tmp_path_factory.mktemp("done")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("prismlib.records.loaded_commit", lambda: CLEAN)  # records are written from committed code only
        outcome = _installment(data, 60, tmp / "records", tmp / "machine")
    assert outcome.done
    return tmp / "records"


@pytest.fixture(autouse=True)
def out(tmp_path, monkeypatch):
    """An empty output root: the encoder folders go to its .cache/encoders/."""
    root = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(root))
    return root


def _state(data, folder):
    inputs = data.inputs
    return read_state(folder, pretrain_config(SETTINGS), inputs.corpus_digest, inputs.tokenizer_digest)


def _copy(records, tmp_path):
    copy = tmp_path / "records"
    shutil.copytree(records, copy)
    return copy


def test_the_folder_is_the_record_model_as_a_hugging_face_encoder(data, done, out):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    encoder = committed_encoder(SETTINGS, done, data)
    state = _state(data, done / encoder.key)
    last = state.curve[-1]
    assert encoder.folder == out / ".cache" / "encoders" / f"pretrained-{encoder.key}"
    assert (encoder.size, encoder.steps, encoder.tokens, encoder.seq_len) == ("1x32h2", 8, 8 * 8 * 32, 64)  # read at the long length
    assert (encoder.heldout_loss, encoder.unigram_loss, encoder.gain) == (last["heldout_loss"], last["unigram_loss"], last["gain"])
    ids = data.long_inputs.heldout[0].tolist()  # [CLS] ... [SEP], 64 ids
    loaded = load_encoder(str(encoder.folder), device="cpu")
    # exact, no tolerance: the same fp32 values (the committed fp16 ones) through the same CPU kernels at the same thread count
    with torch.no_grad():
        batch = torch.tensor([ids])
        reference = state.model.bert(input_ids=batch, attention_mask=torch.ones_like(batch), output_hidden_states=True)
        logits = state.model(input_ids=batch).logits
        mlm = AutoModelForMaskedLM.from_pretrained(str(encoder.folder)).eval()
        assert torch.equal(mlm(input_ids=batch).logits, logits)
    assert len(reference.hidden_states) == 2
    for layer, expected in enumerate(reference.hidden_states):
        assert torch.equal(hidden_states(loaded, ids, layer), expected[0]), layer
    text = "The committed pretraining, read as an encoder."
    assert AutoTokenizer.from_pretrained(str(encoder.folder))(text)["input_ids"] == pretraining_tokenizer()(text)["input_ids"]
    assert loaded.tokenizer.model_max_length == 512


def test_the_folder_is_built_once_per_record_and_rebuilt_for_another(data, done, tmp_path, monkeypatch):
    records = _copy(done, tmp_path)
    first = committed_encoder(SETTINGS, records, data)
    weights = first.folder / "model.safetensors"
    before = (first.folder.stat().st_ino, weights.stat().st_mtime_ns, (first.folder / BUILT).read_text())
    again = committed_encoder(SETTINGS, records, data)
    assert again == first
    assert (again.folder.stat().st_ino, weights.stat().st_mtime_ns, (again.folder / BUILT).read_text()) == before
    # another record of the same recipe (a run crossing a boundary at step 4): other weights, the same key
    config, inputs = pretrain_config(SETTINGS), data.inputs
    other = pretrain(
        config, inputs, tmp_path / "other", mask_id=data.mask_id, special=data.special, long_inputs=data.long_inputs, boundaries=[4], **KW
    )
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: CLEAN)
    write_state(records / first.key, config, other, inputs.corpus_digest, inputs.tokenizer_digest)
    rebuilt = committed_encoder(SETTINGS, records, data)
    assert rebuilt.folder == first.folder and rebuilt.folder.stat().st_ino != before[0]
    assert (rebuilt.folder / BUILT).read_text() != before[2]
    assert [p.name for p in rebuilt.folder.parent.iterdir()] == [rebuilt.folder.name]  # no .part, .old or .lock left
    loaded = load_encoder(str(rebuilt.folder), device="cpu")
    new = other.model.bert.encoder.layer[0].output.dense.weight.detach().half().float()
    assert torch.equal(loaded.model.encoder.layer[0].output.dense.weight, new)
    assert not torch.equal(new, _state(data, done / first.key).model.bert.encoder.layer[0].output.dense.weight)


def test_a_flipped_byte_in_the_record_weights_is_refused_even_with_a_built_folder(data, done, tmp_path):
    records = _copy(done, tmp_path)
    built = committed_encoder(SETTINGS, records, data)
    weights = records / built.key / WEIGHTS
    raw = bytearray(weights.read_bytes())
    raw[len(raw) // 2] ^= 1
    weights.write_bytes(bytes(raw))
    with pytest.raises(BadRecord) as err:
        committed_encoder(SETTINGS, records, data)
    assert err.value.path == weights and str(err.value).startswith(f"{weights}: ") and "\n" not in str(err.value)


def test_a_missing_record_and_an_unfinished_schedule_name_the_fix(data, out, monkeypatch):
    records = out / "results" / "cpu" / "runs" / "pretrain"  # where cpu-long keeps them, so the fix names them as committed
    with pytest.raises(PretrainingNotDone) as err:
        committed_encoder(SETTINGS, records, data)
    key = err.value.folder.name
    fix = (
        "run `python -m prismlib train --profile cpu-long --minutes 110` until it is done (each installment goes on from the last), "
        f"then commit results/cpu/runs/pretrain/{key} and results/cpu/training.json"
    )
    assert (err.value.folder, err.value.steps, err.value.total_steps) == (records / key, 0, 8)
    assert str(err.value) == f"the 1x32h2 BERT has no committed pretraining (results/cpu/runs/pretrain/{key}: step 0 of 8): {fix}"
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: CLEAN)
    assert _installment(data, 1e-9, records, out / "machine").steps == 1  # the budget spent at the first step
    with pytest.raises(PretrainingNotDone) as err:
        committed_encoder(SETTINGS, records, data)
    assert (err.value.steps, err.value.total_steps) == (1, 8)
    assert str(err.value) == f"the 1x32h2 BERT's pretraining is not done (results/cpu/runs/pretrain/{key}: step 1 of 8): {fix}"
    assert not (out / ".cache" / "encoders").exists()  # nothing built


def _encoder(gain):
    return PretrainedEncoder(Path("x"), "k", "4x256", 8054, 32_989_184, heldout_loss=7.0 - gain, unigram_loss=7.0, seq_len=512)


def test_the_premise_passes_from_premise_gate_nats_up():
    assert PREMISE_GATE == 1.5  # issue 76's gate
    passed = pretrained_premise(_encoder(1.5))
    assert passed.passed and passed.name == MASKED_LM_PREMISE
    assert not pretrained_premise(_encoder(1.49)).passed and pretrained_premise(_encoder(1.51)).passed
    assert not pretrained_premise(_encoder(1.6), gate=2.0).passed and pretrained_premise(_encoder(0.1), gate=0.0).passed
    assert passed.detail == (
        "the 4x256 BERT pretrained here with masked LM on 32,989,184 tokens gains +1.500 nats per masked token over the unigram "
        "model on held-out text (unigram 7.000, model 5.500, at 512 tokens), gate 1.50"
    )
    assert "\n" not in passed.detail


def test_a_profile_on_its_pretraining_gets_that_encoder_with_its_head_and_measured_premise(data, done, out):
    from prismlib.prism.mlm_training import load_mlm_model

    smoke = get_profile("smoke")
    assert section4_encoder(smoke) == Section4Encoder(smoke, None, None)  # section 4 on the profile's own encoder, nothing read
    on_it = replace(smoke, pretrain=SETTINGS, prism=replace(smoke.prism, pretrained_encoder=True))
    with pytest.raises(FileNotFoundError, match="build it with prismlib.pretrain.section4_encoder"):
        encoder_location(f"pretrained-{'0' * 16}")  # not built yet
    chosen = section4_encoder(on_it, done, data)
    built = committed_encoder(SETTINGS, done, data)
    assert chosen.pretrained == built and chosen.premise == pretrained_premise(built)
    assert chosen.profile == replace(on_it, encoder=f"pretrained-{built.key}")
    assert encoder_location(chosen.profile.encoder) == str(built.folder)
    assert encoder_name(chosen.profile.encoder) == "BERT 1x32 pretrained here (MLM)"
    # section 4's model is the pretrained one, head included (nothing initialised by the seed)
    _, model = load_mlm_model(chosen.profile.encoder, seed=5)
    state = _state(data, done / built.key)
    batch = torch.tensor([data.long_inputs.heldout[0].tolist()])
    with torch.no_grad():
        assert torch.equal(model.eval()(input_ids=batch).logits, state.model(input_ids=batch).logits)


def test_the_figure_draws_each_phase_of_the_records_curve_and_the_gate(data, done):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    encoder = committed_encoder(SETTINGS, done, data)
    assert encoder.curve == tuple(_state(data, done / encoder.key).curve) and encoder.boundaries == ()
    fig = pretraining_figure(encoder, gate=1.25)
    ax = fig.axes[0]
    phases = [line for line in ax.get_lines() if line.get_label().startswith("held out")]
    assert [line.get_label() for line in phases] == ["held out, inputs of 32 tokens", "held out, inputs of 64 tokens"]
    for line, seq_len in zip(phases, (32, 64)):
        rows = [r for r in encoder.curve if r["seq_len"] == seq_len and r["tokens"] > 0]
        assert list(line.get_ydata()) == [r["gain"] for r in rows] and len(rows) > 0
        assert list(line.get_xdata()) == [r["tokens"] / 1e6 for r in rows]
    (gate,) = [line for line in ax.get_lines() if line.get_label().startswith("premise gate")]
    assert list(gate.get_ydata()) == [1.25, 1.25]
    assert not [line for line in ax.get_lines() if line.get_label() == "resumed on a new machine"]
    plt.close(fig)
    resumed = pretraining_figure(replace(encoder, boundaries=(4,)))
    (line,) = [line for line in resumed.axes[0].get_lines() if line.get_label() == "resumed on a new machine"]
    assert list(line.get_xdata()) == [next(r["tokens"] for r in encoder.curve if r["step"] >= 4) / 1e6] * 2
    plt.close(resumed)


def test_a_continuation_is_read_with_its_base_as_one_history(data, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: CLEAN)
    by_length = {32: data, 64: synthetic_inputs(seq_len=64, n_docs=300)}
    records = tmp_path / "records"
    for i in range(2):  # the base's installment, then the continuation's
        machine = tmp_path / f"m{i}"
        pretrain_installment(CONTINUATION, 60, records, machine, data=lambda c: by_length[c.seq_len], progress=False, say=lambda _: None)
    chain = _chain(data)
    base, cont = (read_state(records / k, c, data.inputs.corpus_digest, data.inputs.tokenizer_digest) for k, c in chain)
    (base_key, base_config), (cont_key, _) = chain
    retire_weights(records / base_key, base_config, data.inputs.corpus_digest, data.inputs.tokenizer_digest, by=cont_key)
    encoder = committed_encoder(CONTINUATION, records, by_length[64])  # the base's curve read without its weights
    assert (encoder.steps, encoder.tokens, encoder.continued_at, encoder.seq_len) == (8 + 2, 8 * 8 * 32 + 2 * 4 * 64, (8,), 64)
    assert encoder.curve[: len(base.curve)] == tuple(base.curve) and len(encoder.curve) == len(base.curve) + len(cont.curve)
    shifted = [(8 + r["step"], 8 * 8 * 32 + r["tokens"]) for r in cont.curve]
    assert [(r["step"], r["tokens"]) for r in encoder.curve[len(base.curve) :]] == shifted
    assert encoder.gain == cont.curve[-1]["gain"]  # the premise reads the continuation's own end
    fig = pretraining_figure(encoder)
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("continuation")]
    assert list(line.get_xdata()) == [8 * 8 * 32 / 1e6] * 2
    plt.close(fig)


def _chain(data):
    """(key, recipe) of CONTINUATION's base and of itself on ``data``'s corpus."""
    digests = data.inputs.corpus_digest, data.inputs.tokenizer_digest
    configs = [recipe_config(s, *digests) for s in (SETTINGS, CONTINUATION)]
    return [(recipe_key(c, *digests), c) for c in configs]
