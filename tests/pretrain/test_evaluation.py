"""The held-out masked-LM loss and the unigram model it is compared with."""

from __future__ import annotations

import math

import torch

from prismlib.pretrain import BertSize, heldout_loss, heldout_set, new_bert, unigram_model
from prismlib.probing.masking import LOSS_IGNORE


def test_the_unigram_model_is_add_one_smoothed_over_non_special_tokens():
    train = torch.tensor([[1, 5, 5, 5, 6, 2]])  # 1 and 2 special
    logp = unigram_model(train, vocab_size=8, special=[1, 2])
    p = logp.exp()
    assert math.isclose(float(p.sum()), 1.0, rel_tol=1e-9)
    assert math.isclose(float(p[5]), (3 + 1) / (4 + 8)) and math.isclose(float(p[1]), 1 / 12)


def test_the_heldout_set_is_fixed_and_scores_the_unigram_on_its_masked_positions():
    rows = torch.randint(3, 50, (20, 30))
    logp = unigram_model(torch.randint(3, 50, (100, 30)), 50, [0, 1, 2])
    a, b = heldout_set(rows, logp, mask_id=0, special=[1, 2], seed=7), heldout_set(rows, logp, mask_id=0, special=[1, 2], seed=7)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.labels, b.labels) and a.masked > 40
    sel = a.labels != LOSS_IGNORE
    assert (a.inputs[sel] == 0).all() and torch.equal(a.labels[sel], rows[sel])  # every masked position is [MASK]
    assert math.isclose(a.unigram_loss, float(-logp[rows[sel]].mean()), rel_tol=1e-12)
    assert heldout_set(rows, logp, 0, [1, 2], seed=7, max_inputs=5).inputs.shape == (5, 30)


def test_the_heldout_loss_is_the_mean_over_masked_positions_in_eval_mode():
    size = BertSize(1, 16, 2, vocab_size=50, max_positions=32, dropout=0.5)
    model = new_bert(size, seed=0)
    rows = torch.randint(3, 50, (6, 20))
    held = heldout_set(rows, unigram_model(rows, 50, [0]), mask_id=0, special=[0], seed=1)
    loss = heldout_loss(model, held, batch_size=4)
    assert model.training  # restored
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=held.inputs).logits
    expect = torch.nn.functional.cross_entropy(logits.reshape(-1, 50), held.labels.reshape(-1), ignore_index=LOSS_IGNORE)
    assert math.isclose(loss, float(expect), rel_tol=1e-5)
