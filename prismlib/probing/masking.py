"""BERT's masking, for a batch of sequences or a probing window.

:func:`mask_batch` is BERT's recipe: every non-special position is selected with
probability ``prob`` (15%); a selected position becomes ``[MASK]`` with probability
``replace[0]`` (80%), a uniformly random token with ``replace[1]`` (10%) and stays as
it is otherwise (10%). The MLM probe of section 3 uses ``replace=(1, 0, 0)``
(:func:`mask_window`): every selected position is ``[MASK]``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from prismlib.probing.windows import IGNORE, Window

LOSS_IGNORE = -100
"""Label of unselected positions in :func:`mask_batch` (PyTorch's cross-entropy default)."""


def mask_batch(
    input_ids: Tensor,
    special: Tensor,
    mask_id: int,
    vocab_size: int,
    generator: torch.Generator,
    prob: float = 0.15,
    replace: tuple[float, float, float] = (0.8, 0.1, 0.1),
) -> tuple[Tensor, Tensor]:
    """Select and corrupt positions for masked language modelling.

    Args:
        input_ids: ``(batch, length)`` int64 token ids.
        special: ``(batch, length)`` bool, True where a position must never be selected
            (special tokens, padding).
        mask_id: the ``[MASK]`` token id.
        vocab_size: random replacements are drawn from ``0 .. vocab_size - 1``.
        generator: seeded torch generator (on the CPU).
        prob: selection probability per eligible position.
        replace: probabilities of ``[MASK]`` / random token / unchanged for a selected
            position; must sum to 1.

    Returns:
        ``(corrupted, labels)``: the new ``(batch, length)`` inputs and labels holding the
        original id at selected positions and :data:`LOSS_IGNORE` elsewhere.
    """
    if not 0 < prob <= 1:
        raise ValueError(f"mask probability must be in (0, 1], got {prob}")
    if len(replace) != 3 or abs(sum(replace) - 1) > 1e-6 or min(replace) < 0:
        raise ValueError(f"replace must be three probabilities ([MASK], random, keep) summing to 1, got {replace}")
    if input_ids.shape != special.shape:
        raise ValueError(f"input_ids {tuple(input_ids.shape)} and special {tuple(special.shape)} differ in shape")
    ids = input_ids.cpu()
    draw = torch.rand(ids.shape, generator=generator)
    selected = (draw < prob) & ~special.cpu()
    how = torch.rand(ids.shape, generator=generator)
    to_mask = selected & (how < replace[0])
    to_random = selected & (how >= replace[0]) & (how < replace[0] + replace[1])
    corrupted = ids.clone()
    corrupted[to_mask] = mask_id
    corrupted[to_random] = torch.randint(vocab_size, ids.shape, generator=generator)[to_random]
    labels = torch.where(selected, ids, torch.full_like(ids, LOSS_IGNORE))
    return corrupted.to(input_ids.device), labels.to(input_ids.device)


def mask_window(window: Window, mask_id: int, prob: float, rng: np.random.Generator, first_unit: int = 0) -> Window:
    """The MLM-probe version of a window: selected wordpieces become ``[MASK]``.

    ``window.labels`` must hold the token id at every content position.  The result
    keeps labels (token ids) and weight 1 only at the masked positions; every masked
    wordpiece is its own unit, numbered from ``first_unit``.
    """
    gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
    special = torch.from_numpy(window.labels == IGNORE)[None]
    labels: Tensor | np.ndarray  # mask_batch's, then its one row as an array
    ids, labels = mask_batch(torch.from_numpy(window.input_ids)[None], special, mask_id, 1, gen, prob, (1.0, 0.0, 0.0))
    labels = labels[0].numpy()
    chosen = labels != LOSS_IGNORE
    unit_ids = np.full(len(window), -1, dtype=np.int64)
    unit_ids[chosen] = first_unit + np.arange(chosen.sum())
    return Window(
        input_ids=ids[0].numpy(),
        labels=np.where(chosen, labels, IGNORE).astype(np.int64),
        weights=chosen.astype(np.float32),
        unit_ids=unit_ids,
        source=window.source,
    )
