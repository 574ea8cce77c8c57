"""Cell-state ablation: how much each LSTM layer still remembers a word ``d`` words back.

For a context of ``L`` words ``w_1 .. w_L`` (the slides: 70) the model first reads the
``warmup`` words before it (default 100, so the state is a running state, not a zero
one), then the context; we keep each layer's cell state ``c`` after the last word (the
state that predicts ``w_{L+1}``). **Ablating** the word at distance ``d`` (``w_{L+1-d}``,
so ``d = 1`` is the last word of the context, ``d = L`` the first) gives ``c'_d``; the
layer's *memory* of that position is ``||c - c'_d||_2``. What "ablate" means:

* ``"replace"`` (default): the word is replaced by another token (``<unk>``, chosen by
  the caller); every other word keeps its position. A position whose word already *is*
  that token (about 5.8% of PTB test is ``<unk>``) changes nothing and would only dilute
  the mean change: it is skipped (NaN, left out of every mean) unless ``skip_same=False``;
* ``"remove"``: the word is deleted and the sequence closes up (the word before the
  context enters at the start, so both sequences have the same length and last word).

The comparison is computed in float64, so that changes far below float32's round-off
(~1e-7 of ``|c|``) are still measured. Averaged over many contexts from PTB test, its
decay with ``d`` says how long the layer keeps information. :func:`decay_slopes` fits
``ln(mean change)`` against ``d`` over **one fit range for every model**; an exponential
decay ``exp(-d / tau)`` has slope ``-1 / tau``, so :func:`effective_timescale` reads the
fitted slope as a timescale ``tau`` in words (the memory of a mixture of units decays
more slowly with ``d``, so ``tau`` depends on the range, which is why it is shared).

Intervals: the contexts are the independent units. :func:`slope_interval`,
:func:`slope_difference` and :func:`slope_range_difference` resample them with
:func:`prismlib.stats.paired_bootstrap` (the same resampled contexts for every model and
layer, since every model reads the same contexts) around :func:`decay_slopes`. The
ablation itself is hand-written: it is the slides' measurement, which no library offers.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from scipy import stats as _scipy_stats

from prismlib.claims import Gate
from prismlib.lstm.model import LSTMLM, State
from prismlib.progress import progress_bar
from prismlib.stats import LEVEL, N_BOOT, Interval, paired_bootstrap

MODES = ("replace", "remove")


def context_starts(n_tokens: int, n_contexts: int, length: int, seed: int, offset: int = 0) -> np.ndarray:
    """Start positions (``>= offset``) of ``n_contexts`` non-overlapping windows of ``length`` in ``n_tokens``, sorted."""
    slots = (n_tokens - offset) // length
    if n_contexts > slots:
        raise ValueError(f"only {max(slots, 0)} non-overlapping contexts of {length} words fit in {n_tokens} tokens after {offset}")
    rng = np.random.default_rng(seed)
    return offset + np.sort(rng.choice(slots, size=n_contexts, replace=False)) * length


@torch.no_grad()
def cell_state_change(
    model: LSTMLM,
    ids: np.ndarray,
    n_contexts: int,
    length: int = 70,
    replacement: int = 0,
    seed: int = 0,
    warmup: int = 100,
    mode: str = "replace",
    desc: str = "ablation",
    skip_same: bool = True,
) -> np.ndarray:
    """``||c - c'_d||_2`` per context, layer and distance (float64).

    Args:
        ids: a token stream ``(n,)`` (PTB test); contexts are non-overlapping windows of it,
            each preceded by ``warmup`` words that the model reads first.
        n_contexts: how many contexts (drawn with ``seed``).
        length: context length ``L``.
        replacement: token id that replaces the ablated word (``mode="replace"``).
        mode: ``"replace"`` or ``"remove"`` (see the module docstring).
        skip_same: ``"replace"`` only: NaN where the word already is ``replacement``
            (nothing is ablated there); ``False`` keeps those exact zeros.

    Returns:
        ``(n_contexts, n_layers, length)``; entry ``[k, l, d - 1]`` is layer ``l``'s change
        for context ``k`` when the word at distance ``d`` is ablated (NaN where skipped:
        every mean of this module ignores those entries).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if warmup < 0 or (mode == "remove" and warmup == 0):
        raise ValueError(f"warmup must be >= 0 (>= 1 for mode='remove': the word before the context fills the gap), got {warmup}")
    model = copy.deepcopy(model).double().eval()
    device = next(model.parameters()).device
    starts = context_starts(len(ids), n_contexts, length, seed, offset=warmup + 1)
    ids_t = torch.as_tensor(np.asarray(ids), dtype=torch.long)
    rows = torch.arange(1, length + 1)
    positions = length - rows  # distance d -> position L - d in the context
    out = np.zeros((n_contexts, len(model.rnns), length))

    def warm(begins: list[int], which: list[int]) -> State | None:
        """Warm-up states of the prefixes starting at ``begins``; batch row ``i`` takes prefix ``which[i]``."""
        if warmup == 0:
            return None
        prefixes = torch.stack([ids_t[b : b + warmup] for b in begins])
        pick = torch.as_tensor(which, device=device)
        return [(h[:, pick].contiguous(), c[:, pick].contiguous()) for h, c in model.run_layers(prefixes.to(device))[2]]

    for k, start in enumerate(progress_bar(starts, desc=desc, leave=False, mininterval=2)):
        start = int(start)
        ctx = ids_t[start : start + length]
        if mode == "replace":
            ablated = ctx.repeat(length, 1)
            ablated[rows - 1, positions] = replacement
            state = warm([start - warmup], [0] * (length + 1))
        else:  # remove: the word before the context moves in, the ablated word goes out
            longer = ids_t[start - 1 : start + length]  # (L + 1,)
            keep = torch.ones(length, length + 1, dtype=torch.bool)
            keep[rows - 1, positions + 1] = False
            ablated = longer.repeat(length, 1)[keep].view(length, length)
            state = warm([start - warmup, start - warmup - 1], [0] + [1] * length)
        # row 0 intact, row d ablated at distance d, all in one batch from bit-identical
        # warm-up states: an unchanged word gives exactly the same cell state
        batch = torch.cat([ctx[None], ablated])
        _, _, final = model.run_layers(batch.to(device), state)
        for layer, (_, c) in enumerate(final):
            out[k, layer] = (c[0, 1:] - c[0, :1]).norm(dim=-1).cpu().numpy()
        if mode == "replace" and skip_same:
            out[k, :, (ctx[positions] == replacement).numpy()] = np.nan
    return out


def decay_slopes(changes: np.ndarray, fit: tuple[int, int]) -> np.ndarray:
    """Per layer the slope of ``ln(mean_k change)`` against ``d`` over ``fit = (d_min, d_max)`` (inclusive).

    Args:
        changes: ``(n_contexts, n_layers, length)`` from :func:`cell_state_change`.
        fit: the distances fitted, the same for every model compared.

    Returns:
        ``(n_layers,)`` slopes per word; more negative = faster forgetting. NaN for a
        layer whose mean change is 0 somewhere in the range (nothing left to measure).
        Skipped entries (NaN) are left out of the means; a distance skipped in every
        context is left out of the fit.
    """
    d_min, d_max = fit
    if not 1 <= d_min < d_max <= changes.shape[-1]:
        raise ValueError(f"fit range {fit} must satisfy 1 <= d_min < d_max <= {changes.shape[-1]} (the context length)")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a distance skipped in every context: NaN
        mean = np.nanmean(changes, axis=0)[:, d_min - 1 : d_max]
    d = np.arange(d_min, d_max + 1)
    slopes = np.full(mean.shape[0], np.nan)
    for layer, row in enumerate(mean):
        seen = np.isfinite(row)  # a distance skipped in every context is left out of the fit
        if seen.sum() >= 2 and (row[seen] > 0).all():
            slopes[layer] = np.polyfit(d[seen], np.log(row[seen]), 1)[0]
    return slopes


def effective_timescale(slope: float | np.ndarray) -> float | np.ndarray:
    """``tau = -1 / slope`` (words): the timescale of the exponential decay a slope implies (``inf`` for slope >= 0)."""
    s = np.asarray(slope, dtype=np.float64)
    with np.errstate(divide="ignore"):
        tau = np.where(s < 0, -1.0 / np.where(s < 0, s, -1.0), np.inf)
    return float(tau) if tau.ndim == 0 else tau


def changes_frame(changes: np.ndarray, model: str) -> pd.DataFrame:
    """Long table: model, layer (1-based), distance, mean change and its standard error over
    contexts (skipped entries, NaN, left out)."""
    n, layers, length = changes.shape
    rows = []
    counts = np.isfinite(changes).sum(axis=0)  # (layers, length): contexts not skipped
    for layer in range(layers):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(changes[:, layer], axis=0)
            sd = np.nanstd(changes[:, layer], axis=0, ddof=1) if n > 1 else np.zeros(length)
        sem = np.where(counts[layer] > 1, sd / np.sqrt(np.maximum(counts[layer], 1)), 0.0)
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
        raise ValueError("the statistic is NaN on the data: a mean change of 0 inside the fit range; shorten the range")

    def on_resample(idx: np.ndarray) -> float:
        rows = idx.astype(np.intp)  # paired_bootstrap resamples the context indices
        return float(statistic([a[rows] for a in arrays]))

    # a resample whose statistic is NaN makes paired_bootstrap raise (it names the problem)
    return paired_bootstrap(on_resample, (np.arange(n.pop()),), n_boot=n_boot, seed=seed, vectorized=False)


def _slope(c: np.ndarray, layer: int, fit: tuple[int, int]) -> float:
    return float(decay_slopes(c[:, layer : layer + 1], fit)[0])


def slope_interval(changes: np.ndarray, layer: int, fit: tuple[int, int], n_boot: int = N_BOOT, seed: int = 0) -> Interval:
    """Decay slope (per word, over the distances ``fit``) of ``layer`` (0-based) of one model, interval over contexts.

    Args:
        changes: ``(n_contexts, n_layers, length)``.
    """
    return context_interval([changes], lambda cs: _slope(cs[0], layer, fit), n_boot, seed)


def slope_difference(
    changes_a: np.ndarray, changes_b: np.ndarray, layer: int, fit: tuple[int, int], n_boot: int = N_BOOT, seed: int = 0
) -> Interval:
    """``slope_a - slope_b`` of ``layer`` (0-based), paired over the shared contexts (> 0: ``a`` decays more slowly)."""
    return context_interval([changes_a, changes_b], lambda cs: _slope(cs[0], layer, fit) - _slope(cs[1], layer, fit), n_boot, seed)


def slope_range_difference(
    changes: Sequence[np.ndarray],
    layer_a: int,
    layer_b: int,
    fit: tuple[int, int],
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
        a = np.array([_slope(c, layer_a, fit) for c in cs])
        b = np.array([_slope(c, layer_b, fit) for c in cs])
        return float(np.ptp(a) - np.ptp(b))  # NaN propagates

    return context_interval(changes, stat, n_boot, seed)


def control_excess(
    trained: Sequence[np.ndarray],
    control: Sequence[np.ndarray],
    statistic: Callable[[list[np.ndarray]], float],
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> tuple[Interval, Interval, Interval]:
    """A memory statistic of trained models, of their untrained controls, and the excess.

    The controls are the same specs before training (:func:`prismlib.lstm.untrained_model`:
    the same fixed biases, random weights), ablated on the same contexts; all three
    intervals come from one paired bootstrap scheme over those contexts.

    Args:
        trained, control: per model ``(n_contexts, n_layers, length)``, in the same order
            (``control[i]`` is the untrained ``trained[i]``).
        statistic: maps a list of models' changes to a number, e.g. ``lambda cs:
            slope(cs[0], layer 0) - slope(cs[1], layer 0)``.

    Returns:
        ``(trained effect, control effect, trained - control)``.
    """
    if len(trained) != len(control):
        raise ValueError(f"every trained model needs its control: got {len(trained)} and {len(control)}")
    k = len(trained)
    both = list(trained) + list(control)
    return (
        context_interval(both, lambda cs: statistic(cs[:k]), n_boot, seed),
        context_interval(both, lambda cs: statistic(cs[k:]), n_boot, seed),
        context_interval(both, lambda cs: statistic(cs[:k]) - statistic(cs[k:]), n_boot, seed),
    )


def pooled_seed_contrast(values: Mapping[str, Sequence[float]], a: str, b: str, level: float = LEVEL) -> Interval:
    """``mean(values[a]) - mean(values[b])`` over the seeds, with a t interval whose variance is
    pooled over every model of ``values`` (one value per seed, the seeds in the same order).

    Each seed ``k`` of notebook 08 reads its own contexts (drawn with seed ``k``), shared by every
    model of that seed, so a model's per-seed values spread by the training seed *and* the
    contexts. The two-way additive model ``value = model + seed + error`` removes the shared
    contexts' part (the seed effect); its residual mean square ``s2`` (``(M - 1)(S - 1)`` degrees
    of freedom for ``M`` models and ``S`` seeds) estimates the variance of one model at one
    seed, assumed alike for every model of ``values`` (a stated assumption: pool only models
    measured alike, e.g. layers whose biases are all fixed). The contrast's standard error is
    ``sqrt(2 s2 / S)``. With two models this is Student's paired interval over the seeds; with
    more models it borrows their spread, so two seeds give ``M - 1`` degrees of freedom, not 1.

    Args:
        values: model -> its statistic per seed (``(S,)`` each, ``S >= 2``).
        a, b: keys of ``values``.

    Returns:
        An :class:`~prismlib.stats.Interval` over runs (``units`` and ``seeds``: ``S``).

    Raises:
        ValueError: fewer than two models or seeds, unequal seed counts, a non-finite value,
            or no spread at all to pool.
    """
    x = np.asarray([list(v) for v in values.values()], dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise ValueError(f"a pooled contrast needs >= 2 models with the same >= 2 seeds each, got {[len(v) for v in values.values()]}")
    if not np.isfinite(x).all():
        raise ValueError(f"a pooled contrast needs finite values, got {dict(values)}")
    m, s = x.shape
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    df = (m - 1) * (s - 1)
    s2 = float((resid**2).sum() / df)
    if s2 == 0:
        raise ValueError("every model moved alike from seed to seed: no spread to pool; use more seeds or models")
    keys = list(values)
    effect = float(x[keys.index(a)].mean() - x[keys.index(b)].mean())
    half = float(_scipy_stats.t.ppf(0.5 + level / 2, df) * np.sqrt(2 * s2 / s))
    return Interval(effect, effect - half, effect + half, s, level, "runs", s)


def control_gate(name: str, trained: Interval, control: Interval, excess: Interval) -> Gate:
    """Whether the untrained control accounts for a memory effect (the intervals of
    :func:`control_excess`).

    Passed ("the control does not account for it") when the excess ``trained - control``
    lies clearly on the side of the trained effect (its interval excludes 0 there). Failed:
    the fixed biases alone, before any training, produce an effect as large; the claim's
    effect is then a property of the assigned timescales, not of what the model learnt.
    """
    side = 1 if trained.effect >= 0 else -1
    passed = (excess.low > 0) if side > 0 else (excess.high < 0)
    detail = f"trained {trained}; untrained control {control}; trained - control {excess}"
    return Gate(f"the untrained control (same fixed biases) does not account for {name}", passed, detail)


def power_slopes(changes: np.ndarray, fit: tuple[int, int]) -> np.ndarray:
    """Per layer the slope of ``ln(mean_k change)`` against ``ln d`` over ``fit = (d_min, d_max)``:
    ``-alpha`` of a power-law decay ``d^-alpha`` (compare the mutual information's exponent,
    :func:`prismlib.lstm.iclr.fit_mi_power_law`). ``changes``: ``(n_contexts, n_layers, length)``;
    ``(n_layers,)``, NaN where a mean change is 0 in the range."""
    d_min, d_max = fit
    if not 1 <= d_min < d_max <= changes.shape[-1]:
        raise ValueError(f"fit range {fit} must satisfy 1 <= d_min < d_max <= {changes.shape[-1]} (the context length)")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(changes, axis=0)[:, d_min - 1 : d_max]
    logd = np.log(np.arange(d_min, d_max + 1))
    slopes = np.full(mean.shape[0], np.nan)
    for layer, row in enumerate(mean):
        seen = np.isfinite(row)
        if seen.sum() >= 2 and (row[seen] > 0).all():
            slopes[layer] = np.polyfit(logd[seen], np.log(row[seen]), 1)[0]
    return slopes


def resolvable_fit(changes: np.ndarray, layer: int, fit: tuple[int, int], zero_share: float = 0.5) -> tuple[int, int] | None:
    """``fit = (d_min, d_max)`` cut where ``layer``'s change stops being measurable: it ends one
    distance before the first at which more than ``zero_share`` of the contexts' changes are
    exactly 0 (the perturbation's effect fell below float resolution: the layer has forgotten
    it, and a log-log slope there reads rounding, not a power law; a bootstrap resample of
    only such contexts has no slope at all). ``None`` when fewer than 3 distances are left.
    ``changes``: ``(n_contexts, n_layers, length)`` as :func:`cell_state_change` returns."""
    d_min, d_max = fit
    if not 1 <= d_min < d_max <= changes.shape[-1]:
        raise ValueError(f"fit range {fit} must satisfy 1 <= d_min < d_max <= {changes.shape[-1]} (the context length)")
    gone = (changes[:, layer, d_min - 1 : d_max] == 0).mean(axis=0) > zero_share
    if gone.any():
        d_max = d_min + int(np.argmax(gone)) - 1
    return (d_min, d_max) if d_max - d_min >= 2 else None


def shared_fit(changes: Mapping[str, np.ndarray], fit: tuple[int, int], zero_share: float = 0.5) -> tuple[int, int]:
    """The one fit range every model and layer of ``changes`` can be fitted on: ``fit`` cut at
    the shortest :func:`resolvable_fit` of any array's layer (comparisons between models and
    layers need one range, and the slope of a layer whose change is exactly 0 in most contexts
    is rounding, not decay). ``changes``: model name -> ``(n_contexts, n_layers, length)``.

    Raises:
        ValueError: some layer leaves fewer than 3 resolvable distances; it names the model and layer.
    """
    d_max = fit[1]
    for name, c in changes.items():
        for layer in range(c.shape[1]):
            cut = resolvable_fit(c, layer, fit, zero_share)
            if cut is None:
                raise ValueError(
                    f"{name}, layer {layer + 1}: the cell-state change is exactly 0 in more than {zero_share:.0%} of the "
                    f"contexts before d = {fit[0] + 2}, so no slope over d = {fit[0]}..{fit[1]} is measurable; start the fit "
                    "range nearer (a smaller memory_fit[0])"
                )
            d_max = min(d_max, cut[1])
    return (fit[0], d_max)


def power_slope_interval(changes: np.ndarray, layer: int, fit: tuple[int, int], n_boot: int = N_BOOT, seed: int = 0) -> Interval:
    """The log-log slope of :func:`power_slopes` for ``layer`` (0-based), interval over the contexts."""
    return context_interval([changes], lambda cs: float(power_slopes(cs[0][:, layer : layer + 1], fit)[0]), n_boot, seed)
