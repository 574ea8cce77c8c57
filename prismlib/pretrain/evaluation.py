"""The held-out masked-LM loss of a pretraining run, against a unigram model on the same positions.

:func:`heldout_set` masks the held-out inputs once, with a fixed seed, as section 4's sanity gate
does (:func:`prismlib.prism.heldout_mask`: 15% of the non-special tokens, every one replaced by
``[MASK]``), and scores the unigram model (:func:`prismlib.prism.unigram_logprobs` of the
*training* inputs, add-one smoothed, special tokens not counted) on those positions once; every
check of a run (:func:`heldout_loss`) scores the model on the same positions, so a curve's
gain (unigram minus model, nats per masked token) moves only with the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from prismlib.prism import heldout_mask, mlm_loss, unigram_logprobs
from prismlib.probing.masking import LOSS_IGNORE


@dataclass
class HeldOut:
    """Fixed masked held-out inputs.

    Attributes:
        inputs: ``(n, seq_len)`` int64, the masked positions replaced by ``[MASK]``.
        labels: ``(n, seq_len)`` int64, the original id at masked positions, -100 elsewhere.
        unigram_loss: the unigram model's mean cross-entropy at the masked positions (nats).
    """

    inputs: Tensor
    labels: Tensor
    unigram_loss: float

    @property
    def masked(self) -> int:
        """Number of masked positions scored."""
        return int((self.labels != LOSS_IGNORE).sum())


def unigram_model(train: Tensor, vocab_size: int, special: Sequence[int]) -> Tensor:
    """``(vocab_size,)`` float64 add-one smoothed unigram log-probabilities of the training inputs."""
    return unigram_logprobs(train, vocab_size, ignore_ids=special)


def heldout_set(
    heldout: Tensor, unigram: Tensor, mask_id: int, special: Sequence[int], seed: int, max_inputs: int | None = None
) -> HeldOut:
    """The held-out inputs masked once (seeded) and the unigram loss on their masked positions.

    Args:
        heldout: ``(m, seq_len)`` int64 held-out inputs.
        unigram: ``(vocab,)`` log-probabilities (:func:`unigram_model`).
        max_inputs: keep the first ``max_inputs`` inputs (``None``: all).
    """
    rows = heldout if max_inputs is None else heldout[:max_inputs]
    if len(rows) == 0:
        raise ValueError("no held-out inputs: the held-out slice is shorter than one sequence")
    corrupted, selected = heldout_mask(rows, mask_id, special, seed)
    labels = torch.where(selected, rows, torch.full_like(rows, LOSS_IGNORE))
    uni = float(-unigram.to(torch.float64)[rows[selected]].mean())
    return HeldOut(corrupted, labels, uni)


@torch.no_grad()
def heldout_loss(model: Any, held: HeldOut, batch_size: int = 32) -> float:
    """The model's mean cross-entropy (nats) at the masked positions of ``held``, in eval mode
    (the model's mode is restored)."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(held.inputs), batch_size):
        x, y = held.inputs[i : i + batch_size], held.labels[i : i + batch_size]
        n = int((y != LOSS_IGNORE).sum())
        if n:
            total += float(mlm_loss(model, x, torch.ones_like(x), y)) * n
            count += n
    model.train(was_training)
    return total / max(count, 1)
