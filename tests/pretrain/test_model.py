"""The small BERT: sizes, seeded construction, BERT's masking statistics, and the masked-only
loss against the head at every position."""

from __future__ import annotations

import pytest
import torch

from prismlib.pretrain import BertSize, full_head_loss, new_bert, parameter_count, step_flops
from prismlib.prism import batch_indices, mlm_loss, training_batch
from prismlib.probing.masking import LOSS_IGNORE

TINY = BertSize(1, 32, 2, vocab_size=500, max_positions=64, dropout=0.0)


def test_sizes_parse_and_check():
    s = BertSize.parse("4x256")
    assert (s.layers, s.hidden, s.heads, s.intermediate, s.vocab_size, s.name) == (4, 256, 4, 1024, 30_522, "4x256")
    assert BertSize.parse("2x128h2").heads == 2 and BertSize.parse("2x32").heads == 1
    with pytest.raises(ValueError, match="LAYERSxHIDDEN"):
        BertSize.parse("big")
    with pytest.raises(ValueError, match="divisible"):
        BertSize(2, 100, 3)


def test_the_model_is_a_transformers_bert_seeded_and_tied():
    a, b = new_bert(TINY, seed=3), new_bert(TINY, seed=3)
    assert type(a).__name__ == "BertForMaskedLM" and a.config.intermediate_size == 128
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.bert.embeddings.word_embeddings.weight, new_bert(TINY, seed=4).bert.embeddings.word_embeddings.weight)
    assert a.get_output_embeddings().weight is a.get_input_embeddings().weight
    assert parameter_count(a) > parameter_count(a, embeddings=False) > 0
    assert step_flops(TINY, 8, 32, None) > step_flops(TINY, 8, 32, 0.15) > 0


def test_bert_masking_selects_15_percent_and_replaces_80_10_10():
    n, length, special = 400, 128, [0, 1, 2]
    rows = torch.randint(3, 500, (n, length))
    rows[:, 0], rows[:, -1] = 1, 2
    x, y = training_batch(rows, step=0, batch_size=n, seed=0, special_ids=special, mask_id=0, vocab_size=500)
    selected = y != LOSS_IGNORE
    assert not selected[:, 0].any() and not selected[:, -1].any()
    share = selected.sum().item() / (n * (length - 2))
    assert abs(share - 0.15) < 0.005
    masked = (x[selected] == 0).float().mean().item()
    kept = (x[selected] == y[selected]).float().mean().item()  # includes random draws of the same id (1/500)
    assert abs(masked - 0.8) < 0.01 and abs(kept - 0.1) < 0.01
    drawn = rows[batch_indices(0, n, n, 0)]  # the step's rows, in its seeded order
    assert torch.equal(x[~selected], drawn[~selected]) and torch.equal(y[selected], drawn[selected])
    again, _ = training_batch(rows, step=0, batch_size=n, seed=0, special_ids=special, mask_id=0, vocab_size=500)
    assert torch.equal(x, again)  # a function of (seed, step)


def test_the_masked_only_loss_equals_the_full_head_loss_at_the_masked_positions():
    model = new_bert(TINY, seed=0).eval()
    rows = torch.randint(3, 500, (4, 40))
    x, y = training_batch(rows, step=1, batch_size=4, seed=5, special_ids=[0, 1, 2], mask_id=0, vocab_size=500)
    assert (y != LOSS_IGNORE).sum() > 5
    with torch.no_grad():
        gathered = mlm_loss(model, x, torch.ones_like(x), y)
        full = full_head_loss(model, x, y)
    torch.testing.assert_close(gathered, full, rtol=1e-5, atol=1e-6)
