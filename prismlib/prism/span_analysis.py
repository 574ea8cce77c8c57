"""Fig. 5's analysis and the held-out MLM score.

:func:`masked_span_logprobs` scores the correct token at every position of inputs whose
middle span is masked; :func:`heldout_logprobs` scores 15%-masked held-out inputs, the
MLM sanity check that :func:`unigram_logprobs` (the context-free baseline) gates.
Several Fig. 5 inputs come from one article, so the intervals (:func:`article_mean`,
:func:`span_minus_outside`, :func:`bootstrap_ci`) resample articles; the resampling
itself is :mod:`prismlib.stats`'s. :func:`fig5_summary` gives Fig. 5's numbers of the
seed-mean models, :func:`fig5_by_seed` those of each training seed's models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor

from prismlib.prism.mlm_training import mlm_head
from prismlib.prism.seeds import seeded
from prismlib.probing.masking import LOSS_IGNORE, mask_batch
from prismlib.progress import progress_bar
from prismlib.stats import LEVEL, N_BOOT, Interval, group_sums, paired_bootstrap, ratio_difference


@torch.no_grad()
def _correct_logprobs(
    model: torch.nn.Module,
    fed: Tensor,
    target: Tensor,
    evaluate: Tensor | None,
    batch_size: int,
    device: str | torch.device,
    progress: bool,
    desc: str,
) -> Tensor:
    """``log p(target)`` of a masked LM fed ``fed``, at the positions ``evaluate`` (all when ``None``).

    Args:
        fed, target: ``(N, length)`` int64 ids given to the model / whose probability is read.
        evaluate: ``(N, length)`` bool, or ``None`` for every position.

    Returns:
        ``(N, length)`` float32 on the CPU, 0 where not evaluated.
    """

    device = torch.device(device)
    model.to(device).eval()
    head = mlm_head(model)
    out = torch.zeros(target.shape, dtype=torch.float32)
    for start in progress_bar(range(0, len(fed), batch_size), desc=desc, leave=False, disable=not progress):
        x = fed[start : start + batch_size].to(device)
        hidden = cast(Any, model).base_model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
        for i in range(len(x)):  # one input at a time keeps the (length, vocab) logits small
            row = start + i
            where = torch.ones(target.shape[1], dtype=torch.bool) if evaluate is None else evaluate[row].cpu()
            logp = torch.log_softmax(head(hidden[i][where.to(device)]).float(), dim=-1)
            out[row, where] = logp.gather(-1, target[row, where].to(device)[:, None])[:, 0].cpu()
    return out


def masked_span_logprobs(
    model: torch.nn.Module,
    inputs: Tensor,
    mask_id: int,
    span: tuple[int, int] = (200, 300),
    batch_size: int = 8,
    device: str | torch.device = "cpu",
    progress: bool = False,
) -> Tensor:
    """Log-probability of the correct token at every position, with a span masked (Fig. 5).

    Tokens ``span[0] .. span[1]-1`` of every input are replaced by ``[MASK]``; all other
    positions keep their token (as in the paper); the model predicts every position.

    Args:
        model: a ``*ForMaskedLM`` model (eval mode is set here).
        inputs: ``(N, length)`` int64 token ids (full length, no padding).
        mask_id: the ``[MASK]`` id.
        span: half-open range of masked positions.

    Returns:
        ``(N, length)`` float32 ``log p(correct token)`` on the CPU.
    """
    lo, hi = span
    if not 0 <= lo < hi <= inputs.shape[1]:
        raise ValueError(f"span {span} does not fit inputs of length {inputs.shape[1]}")
    masked = inputs.clone()
    masked[:, lo:hi] = mask_id
    return _correct_logprobs(model, masked, inputs, None, batch_size, device, progress, "masked span")


def heldout_logprobs(
    model: torch.nn.Module,
    inputs: Tensor,
    mask_id: int,
    special_ids: Sequence[int],
    seed: int,
    prob: float = 0.15,
    batch_size: int = 8,
    device: str | torch.device = "cpu",
    progress: bool = False,
) -> tuple[Tensor, Tensor]:
    """The held-out MLM score: ``log p(correct token)`` at randomly masked positions.

    ``prob`` of the non-special tokens of every input are selected (seeded by ``seed``,
    so two models see the same masks) and all of them replaced by ``[MASK]`` (the
    MLM probe's ``replace=(1, 0, 0)``, not BERT's 80/10/10 training corruption); the
    model predicts the selected positions.  ``-logp[selected].mean()`` is the held-out
    MLM loss in nats per token.

    Args:
        inputs: ``(N, length)`` int64 token ids.
        special_ids: ids never selected ([CLS], [SEP], [PAD]).

    Returns:
        ``(logp, selected)``: ``(N, length)`` float32 (0 where not selected) and bool.
    """
    corrupted, selected = heldout_mask(inputs, mask_id, special_ids, seed, prob)
    return _correct_logprobs(model, corrupted, inputs, selected, batch_size, device, progress, "held-out MLM"), selected


def heldout_mask(inputs: Tensor, mask_id: int, special_ids: Sequence[int], seed: int, prob: float = 0.15) -> tuple[Tensor, Tensor]:
    """The masking of :func:`heldout_logprobs`: ``prob`` of the non-special tokens of every
    input selected (seeded by ``seed``) and replaced by ``[MASK]``.

    Returns:
        ``(corrupted, selected)``: ``(N, length)`` int64 inputs and the bool selection.
    """
    gen = torch.Generator().manual_seed(int(seed))
    special = torch.isin(inputs, torch.as_tensor(list(special_ids), dtype=inputs.dtype))
    corrupted, labels = mask_batch(inputs, special, mask_id, 1, gen, prob, (1.0, 0.0, 0.0))
    return corrupted, labels != LOSS_IGNORE


def unigram_logprobs(sequences: Tensor, vocab_size: int, ignore_ids: Sequence[int] = ()) -> Tensor:
    """Add-one smoothed unigram log-probabilities of the tokens of ``sequences``.

    ``p(w) = (count(w) + 1) / (total + vocab_size)`` for every id ``w`` in
    ``0 .. vocab_size - 1``, where ``count`` and ``total`` leave out the ids in
    ``ignore_ids`` (special tokens: never a prediction target).  This is the
    context-free baseline an MLM head must beat to carry a claim (the sanity gate).

    Args:
        sequences: ``(n, length)`` int64 token ids (e.g. the continued-training inputs).
        vocab_size: size of the vocabulary (``len(tokenizer)``).
        ignore_ids: ids that are not counted.

    Returns:
        ``(vocab_size,)`` float64 log-probabilities (they sum to 1 in probability).
    """
    ids = torch.as_tensor(sequences).reshape(-1).long()
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"token ids must lie in 0..{vocab_size - 1}, got {int(ids.min())}..{int(ids.max())}")
    if len(ignore_ids):
        ids = ids[~torch.isin(ids, torch.as_tensor(list(ignore_ids), dtype=ids.dtype))]
    counts = torch.bincount(ids, minlength=vocab_size).double()
    return torch.log((counts + 1) / (counts.sum() + vocab_size))


def per_article(values: np.ndarray, articles: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-article sums of per-input values, and the number of inputs of each article.

    Args:
        values: ``(..., N)`` one value per input (e.g. the input's mean log p over a region).
        articles: ``(N,)`` the article each input was cut from.

    Returns:
        ``(units, sums, counts)``: the sorted articles ``(G,)``, ``(..., G)`` sums and
        ``(G,)`` inputs per article.
    """
    articles = np.asarray(articles)
    units, sums = group_sums(values, articles)
    _, counts = group_sums(np.ones(len(articles)), articles)
    return units, sums, counts


def article_mean(
    a: np.ndarray,
    articles: np.ndarray,
    b: np.ndarray | None = None,
    weights: np.ndarray | None = None,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """Mean over inputs of ``a`` (minus the mean of ``b``), with a bootstrap over articles.

    The effect is ``sum_i a_i / sum_i w_i - sum_i b_i / sum_i w_i`` over the inputs ``i``;
    the interval resamples the articles (all inputs of a drawn article together), paired
    between ``a`` and ``b``.  With ``weights=None`` every input counts once (``a``, ``b``
    are per-input means, e.g. the mean log p over the masked span); for a per-token mean
    pass per-input sums as ``a``/``b`` and per-input token counts as ``weights``.

    Args:
        a: ``(N,)`` per-input values of the first condition.
        articles: ``(N,)`` the article of each input.
        b: ``(N,)`` per-input values of the second condition (``None``: 0, the mean of ``a``).
        weights: ``(N,)`` per-input denominators (``None``: 1 each).

    Returns:
        The :class:`~prismlib.stats.Interval` (``units`` = articles).

    Raises:
        ValueError: arrays of different lengths, or fewer than two articles.
    """
    a = np.asarray(a, dtype=np.float64)
    n = len(a)
    b = np.zeros(n) if b is None else np.asarray(b, dtype=np.float64)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if not (len(b) == len(w) == len(np.asarray(articles)) == n):
        raise ValueError(f"a, b, weights and articles must have one entry per input; got {n}, {len(b)}, {len(w)}, {len(articles)}")
    _, sums = group_sums(np.stack([a, b, w]), np.asarray(articles))
    return ratio_difference(sums[0], sums[1], sums[2], n_boot=n_boot, seed=seed, level=level)


def span_minus_outside(
    a: np.ndarray,
    b: np.ndarray,
    articles: np.ndarray,
    span: np.ndarray,
    outside: np.ndarray,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """Fig. 5 as one number: how much more model ``a`` gains over ``b`` inside the masked
    span than outside it, with a bootstrap over articles.

    Per input ``i``: ``d_i = mean_{t in span}(a - b)[i, t] - mean_{t in outside}(a - b)[i, t]``;
    the effect is the mean of ``d_i`` over inputs and the interval resamples articles
    (:func:`article_mean`). A model that is better by the same amount everywhere (a
    global offset) gives 0; a model that uses distant context to fill the span gives > 0.

    Args:
        a, b: ``(N, length)`` per-position log-probabilities of the correct token.
        articles: ``(N,)`` the article of each input.
        span, outside: position indices of the masked span and of the unmasked tokens.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"a and b must be (N, length) arrays of the same shape, got {a.shape} and {b.shape}")
    if np.intersect1d(span, outside).size:
        raise ValueError("span and outside share positions")
    return article_mean(
        a[:, span].mean(1) - a[:, outside].mean(1),
        articles,
        b[:, span].mean(1) - b[:, outside].mean(1),
        n_boot=n_boot,
        seed=seed,
        level=level,
    )


FAR = (11, 50)
"""Fig. 5's dip: the reference tokens are 11 to 50 positions away from the span (both sides)."""

DIP_WIDTHS = (1, 5, 10)
"""Fig. 5's near-window widths (visible tokens on each side of the span), fixed before the
run: the paper says only "adjacent to the redacted text" and its figure names no width, so a
dip claim must hold at every one of these widths (one test per width, all needed); 10 is the
widest window that stays clear of the far tokens (:data:`FAR`)."""


def span_regions(logp: np.ndarray, span: tuple[int, int], near: int = 10, far: tuple[int, int] = FAR) -> dict[str, np.ndarray]:
    """Per-input means of Fig. 5's regions of ``logp`` (``(N, length)`` log p of the correct token).

    Regions: ``span`` (the masked tokens), ``outside`` (every visible token but the first
    and last), ``near`` (the ``near`` visible tokens right before and right after the
    span), ``far`` (the visible tokens ``far[0]`` to ``far[1]`` positions away on either
    side) and ``dip`` = ``far - near`` (positive: the tokens next to the span are
    predicted worse than those a little further away). A visible token is scored like
    every other: the model sees it in its input and the log p of that same token at its
    position is read from the MLM head.

    Returns:
        region -> ``(N,)`` float64 per-input means.
    """
    x = np.asarray(logp, dtype=np.float64)
    lo, hi = span
    length = x.shape[1]
    if not 1 <= near < far[0] <= far[1] or lo - far[1] < 1 or hi + far[1] > length - 1:
        raise ValueError(f"need 1 <= near ({near}) < far ({far}) and the far tokens inside 1..{length - 2} around span {span}")
    near_idx = np.r_[lo - near : lo, hi : hi + near]
    far_idx = np.r_[lo - far[1] : lo - far[0] + 1, hi + far[0] - 1 : hi + far[1]]
    out = {
        "span": x[:, lo:hi].mean(1),
        "outside": x[:, np.r_[1:lo, hi : length - 1]].mean(1),
        "near": x[:, near_idx].mean(1),
        "far": x[:, far_idx].mean(1),
    }
    out["dip"] = out["far"] - out["near"]
    return out


def fig5_summary(
    logp: dict[str, np.ndarray],
    masked15: dict[str, np.ndarray],
    articles: np.ndarray,
    span: tuple[int, int],
    near: int = 10,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> dict[tuple[str, str], Interval]:
    """Fig. 5's numbers with intervals over articles, for ``baseline`` and ``prism``.

    Args:
        logp: model -> ``(N, length)`` log p of the correct token with the span masked.
        masked15: model -> ``(N,)`` mean log p at 15% ordinarily masked tokens of the same inputs.

    Returns:
        ``(model, region)`` -> :class:`~prismlib.stats.Interval`, for each model and
        ``"prism - baseline"``: the regions of :func:`span_regions` and ``masked 15%``, and
        for the difference also ``span - outside`` and ``span - masked 15%`` (per input,
        (prism - BERT) over the span minus the same at the 15%-masked tokens).
    """
    regions = {v: {**span_regions(x, span, near), "masked 15%": np.asarray(masked15[v], dtype=np.float64)} for v, x in logp.items()}
    out: dict[tuple[str, str], Interval] = {}
    for region in ("span", "outside", "near", "masked 15%", "dip"):
        for v in logp:
            out[(v, region)] = article_mean(regions[v][region], articles, n_boot=n_boot, seed=seed)
        out[("prism - baseline", region)] = article_mean(
            regions["prism"][region], articles, regions["baseline"][region], n_boot=n_boot, seed=seed
        )
    lo, hi = span
    length = logp["prism"].shape[1]
    out[("prism - baseline", "span - outside")] = span_minus_outside(
        logp["prism"], logp["baseline"], articles, np.arange(lo, hi), np.r_[1:lo, hi : length - 1], n_boot=n_boot, seed=seed
    )
    out[("prism - baseline", "span - masked 15%")] = article_mean(
        regions["prism"]["span"] - regions["prism"]["masked 15%"],
        articles,
        regions["baseline"]["span"] - regions["baseline"]["masked 15%"],
        n_boot=n_boot,
        seed=seed,
    )
    return out


def fig5_by_seed(
    logp: Mapping[str, np.ndarray],
    masked15: Mapping[str, np.ndarray],
    articles: np.ndarray,
    span: tuple[int, int],
    seeds: Sequence[int],
    near: int = 10,
    *,
    arms: Sequence[str] = ("baseline", "prism"),
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> dict[int, dict[tuple[str, str], Interval]]:
    """:func:`fig5_summary` of each training seed's own models alone: their effects are the
    seeds' part of an interval over articles and seeds (:func:`prismlib.prism.seed_effects`,
    then :func:`prismlib.prism.seeds_interval` or :func:`prismlib.prism.seeds_test`).

    Args:
        logp, masked15: each trained model's (``"prism#1"``: :func:`prismlib.prism.seeded`)
            ``(N, length)`` span-masked log p and ``(N,)`` mean log p at 15% masked tokens,
            as :func:`fig5_summary` reads them.
        seeds: the training seeds, each with a model of every arm.
        arms: the models compared (``baseline`` and ``prism``).
        articles, span, near, n_boot, seed: as :func:`fig5_summary`'s.

    Returns:
        training seed -> that seed's :func:`fig5_summary`.
    """
    return {
        s: fig5_summary(
            {a: logp[seeded(a, s)] for a in arms}, {a: masked15[seeded(a, s)] for a in arms}, articles, span, near, n_boot=n_boot, seed=seed
        )
        for s in seeds
    }


def _mean_ratio(num: np.ndarray, den: np.ndarray, axis: int = -1) -> np.ndarray:
    return num.sum(axis) / den.sum(axis)


def bootstrap_ci(
    values: np.ndarray | Tensor, articles: np.ndarray, n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over inputs per column and its percentile bootstrap interval over articles (Fig. 5's curves).

    Every column uses the same resampled articles (one seed), through
    :func:`prismlib.stats.paired_bootstrap`.

    Args:
        values: ``(N, L)`` (or ``(N,)``) one row per input, e.g. log p per position.
        articles: ``(N,)`` the article each input was cut from (the bootstrap unit).
        n_boot: bootstrap resamples.
        seed: seed of the resampling.
        level: coverage of the interval.

    Returns:
        ``(mean, low, high)``, each ``(L,)`` (scalars for 1-D ``values``).

    Raises:
        ValueError: rows and articles differ in number, or fewer than two articles.
    """
    v = np.asarray(values.cpu().numpy() if isinstance(values, Tensor) else values, dtype=np.float64)
    flat = v.ndim == 1
    v = v[:, None] if flat else v
    if v.ndim != 2 or len(v) != len(np.asarray(articles)):
        raise ValueError(f"values must be (N, L) with one article per row; got shape {v.shape} and {len(articles)} articles")
    _, sums, counts = per_article(v.T, articles)  # (L, G), (G,)
    mean = v.mean(0)
    low, high = np.empty(v.shape[1]), np.empty(v.shape[1])
    for col in range(v.shape[1]):
        iv = paired_bootstrap(_mean_ratio, (sums[col], counts), n_boot=n_boot, seed=seed, level=level)
        low[col], high[col] = iv.low, iv.high
    if flat:
        return mean[0], low[0], high[0]
    return mean, low, high
