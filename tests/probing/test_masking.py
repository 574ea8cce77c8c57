"""BERT masking statistics (prismlib.probing.masking)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib.probing import IGNORE, LOSS_IGNORE, Unit, mask_batch, mask_window, pack_units

MASK, VOCAB = 103, 30000


def test_mask_batch_statistics_80_10_10():
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 2000, (64, 512), generator=gen)
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -1] = True
    special[:8, 400:] = True  # padding
    corrupted, labels = mask_batch(ids, special, MASK, VOCAB, torch.Generator().manual_seed(1))
    selected = labels != LOSS_IGNORE
    assert not selected[special].any()
    rate = selected.sum().item() / (~special).sum().item()
    assert rate == pytest.approx(0.15, abs=0.01)
    assert torch.equal(labels[selected], ids[selected])
    sel_c, sel_ids = corrupted[selected], ids[selected]
    masked = (sel_c == MASK).float().mean().item()
    kept = (sel_c == sel_ids).float().mean().item()
    assert masked == pytest.approx(0.8, abs=0.02)
    assert kept == pytest.approx(0.1, abs=0.02)  # random replacements rarely hit the same id
    assert torch.equal(corrupted[~selected], ids[~selected])


def test_mask_batch_is_seeded_and_validates():
    ids = torch.randint(1000, 2000, (4, 50))
    special = torch.zeros_like(ids, dtype=torch.bool)
    a = mask_batch(ids, special, MASK, VOCAB, torch.Generator().manual_seed(3))
    b = mask_batch(ids, special, MASK, VOCAB, torch.Generator().manual_seed(3))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="sum"):
        mask_batch(ids, special, MASK, VOCAB, torch.Generator(), replace=(0.5, 0.1, 0.1))
    with pytest.raises(ValueError, match="probability"):
        mask_batch(ids, special, MASK, VOCAB, torch.Generator(), prob=0)


def test_mask_window_keeps_labels_only_at_masks():
    units = [Unit([p], p, -1) for p in range(2000, 2400)]
    (w,) = pack_units([("a", units)], 101, 102, window=512)
    m = mask_window(w, MASK, 0.15, np.random.default_rng(0), first_unit=7)
    chosen = m.labels != IGNORE
    assert 0 < chosen.sum() < len(w)
    assert (m.input_ids[chosen] == MASK).all()
    assert (m.labels[chosen] == w.input_ids[chosen]).all()
    assert (m.input_ids[~chosen] == w.input_ids[~chosen]).all()
    assert (m.weights[chosen] == 1).all() and (m.weights[~chosen] == 0).all()
    assert m.unit_ids[chosen].tolist() == list(range(7, 7 + chosen.sum()))
