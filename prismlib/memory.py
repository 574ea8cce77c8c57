"""Cell-state ablation: how much each LSTM layer still remembers a word ``d`` words back.

For a context of ``L`` words ``w_1 .. w_L`` (the slides: 70) the model reads the context
from a zero state and we keep each layer's cell state ``c`` after the last word (the
state that predicts ``w_{L+1}``). Ablating the word at distance ``d`` (``w_{L+1-d}``, so
``d = 1`` is the last word of the context, ``d = L`` the first) gives ``c'_d``; the
layer's *memory* of that position is ``||c - c'_d||_2``. Averaged over many contexts from
PTB test, its decay with ``d`` says how long the layer keeps information: the slope of
``log10 ||c - c'_d||`` against ``log10 d`` (a power-law exponent; flatter = longer memory).

Ablation replaces the word with another token (default: ``<unk>``, chosen by the caller),
which keeps every other word at its position.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from prismlib.lstm import LSTMLM


def context_starts(n_tokens: int, n_contexts: int, length: int, seed: int) -> np.ndarray:
    """Start positions of ``n_contexts`` non-overlapping windows of ``length`` in ``n_tokens``, sorted."""
    slots = n_tokens // length
    if n_contexts > slots:
        raise ValueError(f"only {slots} non-overlapping contexts of {length} words fit in {n_tokens} tokens")
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(slots, size=n_contexts, replace=False)) * length


@torch.no_grad()
def final_cell_states(model: LSTMLM, tokens: torch.Tensor) -> list[torch.Tensor]:
    """Each layer's cell state after the last token, read from a zero state.

    Args:
        tokens: ``(batch, length)`` ids.

    Returns:
        Per layer ``(batch, hidden_l)``.
    """
    was_training = model.training
    model.eval()
    _, _, state = model.run_layers(tokens)
    model.train(was_training)
    return [c[0] for _, c in state]


@torch.no_grad()
def cell_state_change(
    model: LSTMLM,
    ids: np.ndarray,
    n_contexts: int,
    length: int = 70,
    replacement: int = 0,
    seed: int = 0,
    desc: str = "ablation",
) -> np.ndarray:
    """``||c - c'_d||_2`` per context, layer and distance.

    Args:
        ids: a token stream ``(n,)`` (PTB test); contexts are non-overlapping windows of it.
        n_contexts: how many contexts (drawn with ``seed``).
        length: context length ``L``.
        replacement: token id that replaces the ablated word.

    Returns:
        ``(n_contexts, n_layers, length)``; entry ``[k, l, d - 1]`` is layer ``l``'s change
        for context ``k`` when the word at distance ``d`` is ablated.
    """
    device = next(model.parameters()).device
    starts = context_starts(len(ids), n_contexts, length, seed)
    positions = torch.arange(length - 1, -1, -1)  # distance d = 1 .. L -> position L - d
    out = np.zeros((n_contexts, len(model.rnns), length))
    for k, start in enumerate(tqdm(starts, desc=desc, leave=False, mininterval=2)):
        ctx = torch.as_tensor(ids[start : start + length], dtype=torch.long)
        batch = ctx.repeat(length + 1, 1)  # row 0 intact, row d has distance d ablated
        batch[torch.arange(1, length + 1), positions] = replacement
        states = final_cell_states(model, batch.to(device))
        for layer, c in enumerate(states):
            out[k, layer] = (c[1:] - c[:1]).norm(dim=-1).double().cpu().numpy()
    return out


def decay_slopes(changes: np.ndarray, min_distance: int = 1, rel_floor: float = 1e-5) -> np.ndarray:
    """Per layer the slope of ``log10 mean_k change`` against ``log10 d`` (least squares).

    Args:
        changes: ``(n_contexts, n_layers, length)`` from :func:`cell_state_change`.
        min_distance: fit only ``d >= min_distance``.
        rel_floor: also leave out distances whose mean change is below ``rel_floor`` times
            the layer's largest one: there the change has reached float32 round-off
            (~1e-7) and would flatten the fitted slope.

    Returns:
        ``(n_layers,)``; more negative = faster forgetting (NaN if fewer than two points remain).
    """
    mean = changes.mean(axis=0)
    d = np.arange(1, changes.shape[-1] + 1)
    slopes = []
    for row in mean:
        keep = (d >= min_distance) & (row > rel_floor * row.max())
        if keep.sum() < 2:
            slopes.append(np.nan)
            continue
        slopes.append(np.polyfit(np.log10(d[keep]), np.log10(row[keep]), 1)[0])
    return np.array(slopes)


def changes_frame(changes: np.ndarray, model: str) -> pd.DataFrame:
    """Long table: model, layer (1-based), distance, mean change and its standard error over contexts."""
    n, layers, length = changes.shape
    rows = []
    for layer in range(layers):
        mean = changes[:, layer].mean(axis=0)
        sem = changes[:, layer].std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros(length)
        for d in range(length):
            rows.append({"model": model, "layer": layer + 1, "distance": d + 1, "change": mean[d], "sem": sem[d]})
    return pd.DataFrame(rows)


def slope_spread(changes: np.ndarray, samples: int = 200, seed: int = 0, min_distance: int = 1) -> np.ndarray:
    """Standard deviation of :func:`decay_slopes` over bootstrap resamples of the contexts, ``(n_layers,)``."""
    n = changes.shape[0]
    if n < 2:
        return np.zeros(changes.shape[1])
    rng = np.random.default_rng(seed)
    boot = [decay_slopes(changes[rng.integers(0, n, n)], min_distance) for _ in range(samples)]
    return np.std(boot, axis=0, ddof=1)
