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

Intervals: the contexts are the independent units. :func:`slope_interval`,
:func:`slope_difference` and :func:`slope_range_difference` resample them with
:func:`prismlib.stats.paired_bootstrap` (the same resampled contexts for every model and
layer, since every model reads the same contexts) around :func:`decay_slopes`. The
ablation itself is hand-written: it is the slides' measurement, which no library offers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from prismlib.lstm import LSTMLM
from prismlib.stats import N_BOOT, Interval, paired_bootstrap


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


def context_interval(
    changes: Sequence[np.ndarray],
    statistic: Callable[[list[np.ndarray]], float],
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Interval:
    """Interval of ``statistic(changes)`` from a paired bootstrap over the contexts.

    Args:
        changes: per model ``(n_contexts, n_layers, length)`` from :func:`cell_state_change`,
            the same contexts in every model (same ``seed`` and ``length``).
        statistic: maps the list of (resampled) arrays to a number, e.g. a slope difference.

    Returns:
        The :class:`~prismlib.stats.Interval`; ``units`` is the number of contexts.

    Raises:
        ValueError: models with different numbers of contexts, or a statistic that is NaN
            on the data or on some resample (too few distances above the round-off floor).
    """
    arrays = [np.asarray(c, dtype=np.float64) for c in changes]
    if not arrays or any(a.ndim != 3 for a in arrays):
        raise ValueError("changes must be a non-empty list of (n_contexts, n_layers, length) arrays")
    n = {a.shape[0] for a in arrays}
    if len(n) != 1:
        raise ValueError(f"every model must be ablated on the same contexts; got {sorted(n)} contexts")
    if not np.isfinite(statistic(arrays)):
        raise ValueError("the statistic is NaN on the data: fewer than two distances above the floor; use more contexts")
    def on_resample(idx: np.ndarray) -> float:
        rows = idx.astype(np.intp)  # paired_bootstrap resamples the context indices
        return float(statistic([a[rows] for a in arrays]))

    # a resample whose statistic is NaN makes paired_bootstrap raise (it names the problem)
    return paired_bootstrap(on_resample, (np.arange(n.pop()),), n_boot=n_boot, seed=seed, vectorized=False)


def _slope(c: np.ndarray, layer: int, min_distance: int) -> float:
    return float(decay_slopes(c[:, layer : layer + 1], min_distance)[0])


def slope_interval(changes: np.ndarray, layer: int, min_distance: int = 1, n_boot: int = N_BOOT, seed: int = 0) -> Interval:
    """Decay slope of ``layer`` (0-based) of one model with its interval over contexts.

    Args:
        changes: ``(n_contexts, n_layers, length)``.
    """
    return context_interval([changes], lambda cs: _slope(cs[0], layer, min_distance), n_boot, seed)


def slope_difference(
    changes_a: np.ndarray, changes_b: np.ndarray, layer: int, min_distance: int = 1, n_boot: int = N_BOOT, seed: int = 0
) -> Interval:
    """``slope_a - slope_b`` of ``layer`` (0-based), paired over the shared contexts (> 0: ``a`` decays more slowly)."""
    return context_interval(
        [changes_a, changes_b], lambda cs: _slope(cs[0], layer, min_distance) - _slope(cs[1], layer, min_distance), n_boot, seed
    )


def slope_range_difference(
    changes: Sequence[np.ndarray],
    layer_a: int,
    layer_b: int,
    min_distance: int = 1,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> Interval:
    """Range (max - min) over models of ``layer_a``'s slopes minus that of ``layer_b``'s.

    Positive: the models' slopes agree more closely in ``layer_b`` than in ``layer_a``
    (e.g. "layer 3 has a similar slope in every model", against layer 1).

    Args:
        changes: per model ``(n_contexts, n_layers, length)``, at least two models.
    """
    if len(changes) < 2:
        raise ValueError("a spread across models needs at least two models")

    def stat(cs: list[np.ndarray]) -> float:
        a = np.array([_slope(c, layer_a, min_distance) for c in cs])
        b = np.array([_slope(c, layer_b, min_distance) for c in cs])
        return float(np.ptp(a) - np.ptp(b))  # NaN propagates

    return context_interval(changes, stat, n_boot, seed)
