"""The spectral profile of any Hugging Face model: energy per band per hidden unit.

:func:`spectral_profile` runs an encoder (BERT, RoBERTa, MiniLM, ...) or a decoder-only
model (GPT-2, ...) on texts, takes the hidden states of one layer, transforms each
text's states along the tokens with the orthonormal DCT (:func:`prismlib.spectral.dct`)
over its real length, and reports what share of each hidden unit's energy falls in
each of the paper's five bands (:func:`prismlib.spectral.allocate_bands` of that
length: for 512 tokens exactly Table 3a).  So a model the paper never saw can be
placed on its prism: do its units vary on the scale of words, sentences or documents?

Normalisation.  For text ``t`` of real length ``n_t`` and unit ``j``, ``E_t[b, j]`` is
the sum of the squared DCT coefficients of the band ``b`` (Parseval: the energies of
the five bands add up to ``sum_i h_t[i, j]^2``).  The profile is

    ``P[b, j] = sum_t n_t E_t[b, j] / E_t[:, j].sum()  /  sum_t n_t``

the per-text energy fraction, averaged over texts weighted by their token counts (a
unit whose states are all zero in a text leaves that text out of its average).  Every
column sums to 1 over the bands.  The DC coefficient (index 0: each unit's mean over
the text) belongs to LOW; ``center=True`` removes it first, which shows how the unit
*varies* rather than where it sits.

Reference.  A band's share means little without what a signal with no structure across
tokens gets: :func:`noise_profile` is the same measure on Gaussian white noise of the
same lengths, and :func:`white_noise_shares` its expectation, ``width_b / n`` per text
(with ``center=True`` the DC index is gone: ``(width_b - [b = LOW]) / (n - 1)``), since the
orthonormal DCT of white noise is white noise, and each coefficient's expected share of
the total is the same.

:func:`hidden_batches` (length-sorted, padded batches with attention masks, one model
call each) is also what :mod:`prismlib.probing.states` encodes windows with (the full states
the learned filter of :mod:`prismlib.probing.learned_filter` trains on).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from numbers import Integral
from typing import cast

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from prismlib.progress import progress_bar
from prismlib.spectral.bands import BAND_NAMES, allocate_bands
from prismlib.spectral.transform import dct

__all__ = ["hidden_batches", "max_model_length", "noise_profile", "spectral_profile", "token_ids", "white_noise_shares"]


def max_model_length(model: nn.Module) -> int | None:
    """The longest input ``model`` takes (``config.max_position_embeddings``, GPT-2's
    ``n_positions``), or ``None`` when its config states none (e.g. rotary models)."""
    config = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def token_ids(
    texts: Sequence[str] | Sequence[Sequence[int]],
    tokenizer=None,
    max_length: int | None = None,
    *,
    add_special_tokens: bool = True,
) -> list[list[int]]:
    """Token ids of each text, truncated to its first ``max_length`` ids.

    Args:
        texts: strings (then ``tokenizer`` is required) or pre-tokenised id sequences
            (lists, tuples, 1-d arrays or tensors of ints), taken as they are: put in
            the special tokens (``[CLS]``/``[SEP]``) the model expects yourself.
        tokenizer: a Hugging Face tokenizer, for strings.
        max_length: keep at most this many ids per text (``None``: all).
        add_special_tokens: for strings, let the tokenizer add its special tokens
            (BERT's ``[CLS] .. [SEP]``; GPT-2's tokenizer adds none).

    Raises:
        TypeError: strings without a tokenizer, or texts of mixed or unknown kinds.
        ValueError: no texts.
    """
    texts = cast("list[str] | list[Sequence[int]]", list(texts))
    if not texts:
        raise ValueError("no texts given")
    if all(isinstance(t, str) for t in texts):
        if tokenizer is None:
            raise TypeError("texts are strings: pass tokenizer=... (or pre-tokenised id lists)")
        kwargs = {"truncation": True, "max_length": max_length} if max_length else {}
        ids = tokenizer(texts, add_special_tokens=add_special_tokens, verbose=False, **kwargs)["input_ids"]
        return [list(map(int, seq))[:max_length] for seq in ids]
    out = []
    for i, seq in enumerate(texts):
        if isinstance(seq, str):
            raise TypeError("texts mix strings and id sequences; pass one kind")
        arr = np.asarray(seq.tolist() if isinstance(seq, Tensor) else seq)
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
            raise TypeError(f"text {i} is not a string or a 1-d sequence of token ids (got {type(seq).__name__} of shape {arr.shape})")
        out.append(arr.astype(np.int64).tolist()[:max_length])
    return out


@torch.no_grad()
def hidden_batches(
    model: nn.Module,
    sequences: Sequence[Sequence[int] | np.ndarray],
    layer: int | Sequence[int],
    *,
    batch_size: int = 8,
    device: torch.device | str | None = None,
    desc: str = "encoding",
    progress: bool = True,
) -> Iterator[tuple[list[int], Tensor | tuple[Tensor, ...], list[int]]]:
    """Hidden states of ``layer`` for every sequence, in padded batches.

    Sequences are sorted by length (stably) and cut into batches of ``batch_size``;
    each batch is right-padded with id 0 under an attention mask of zeros, so the pad
    id never matters (decoder-only models such as GPT-2 have no pad token, and their
    causal attention never looks right anyway).

    Args:
        model: a Hugging Face model whose forward takes ``input_ids``,
            ``attention_mask`` and ``output_hidden_states`` (an encoder, or a decoder
            with or without its LM head).
        sequences: token ids per sequence, special tokens included, each at most the
            model's length.
        layer: index into ``hidden_states``: ``0`` the embeddings, ``-1`` the last layer;
            or a sequence of indices, all taken from the same model call.
        device: where the inputs go (default: the model's parameters' device).

    Yields:
        ``(indices, hidden, lengths)``: the batch's sequence indices, float32 hidden
        states ``(batch, max length, hidden)`` on ``device`` (padding positions hold
        whatever the model wrote there; a tuple of them, one per index, when ``layer``
        is a sequence) and the real lengths.

    Raises:
        ValueError: an empty sequence, an encoder-decoder model, or ``layer`` out of range.
    """

    config = getattr(model, "config", None)
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError("encoder-decoder models need decoder inputs; pass the encoder alone (model.get_encoder())")
    empty = [i for i, s in enumerate(sequences) if len(s) == 0]
    if empty:
        raise ValueError(f"sequences {empty[:5]} are empty; every sequence needs at least one token")
    if device is None:
        device = next(model.parameters()).device
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    for start in progress_bar(range(0, len(order), batch_size), desc=desc, unit="batch", leave=False, disable=not progress):
        batch = order[start : start + batch_size]
        lengths = [len(sequences[i]) for i in batch]
        ids = torch.zeros(len(batch), max(lengths), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, i in enumerate(batch):
            ids[row, : lengths[row]] = torch.as_tensor(np.asarray(sequences[i]), dtype=torch.long)
            mask[row, : lengths[row]] = 1
        states = model(input_ids=ids.to(device), attention_mask=mask.to(device), output_hidden_states=True).hidden_states
        wanted: list[int] = [cast(int, layer)] if isinstance(layer, Integral) else list(cast(Sequence[int], layer))
        wrong = [i for i in wanted if not -len(states) <= i < len(states)]
        if wrong:
            raise ValueError(f"layer {wrong[0]} is out of range: the model returns {len(states)} hidden states (0 = embeddings)")
        hidden = tuple(states[i].float() for i in wanted)
        yield batch, (hidden[0] if isinstance(layer, Integral) else hidden), lengths


def _band_index(n: int, device: torch.device) -> Tensor:
    """``(n,)`` band number (0 = LOW .. 4 = HIGH) of each DCT index of an ``n``-point DCT."""
    widths = torch.tensor([b.width for b in allocate_bands(n)], device=device)
    return torch.repeat_interleave(torch.arange(len(widths), device=device), widths)


def band_energy(h: Tensor, *, center: bool = False) -> Tensor:
    """Energy of each of the paper's five bands per hidden unit of one sequence.

    Args:
        h: ``(n, hidden)`` states of one sequence over its real length (``n >= 5``).
        center: subtract each unit's mean over the sequence first (zeroes the DC term).

    Returns:
        ``(5, hidden)`` float: squared orthonormal DCT coefficients summed per band
        (LOW first); the columns sum to ``(h ** 2).sum(0)`` (Parseval).
    """
    h = h.float()
    if center:
        h = h - h.mean(0, keepdim=True)
    coef = dct(h, dim=0)
    return torch.zeros(len(BAND_NAMES), h.shape[1], device=h.device).index_add_(0, _band_index(h.shape[0], h.device), coef**2)


def _text_fractions(h: Tensor, center: bool) -> tuple[Tensor, Tensor]:
    """``(5, hidden)`` float64 energy fraction per band of one text's states ``(n, hidden)``
    (0 for a unit with no energy) and ``(hidden,)`` whether each unit had any energy."""
    energy = band_energy(h, center=center).double()
    total = energy.sum(0)
    seen = total > 0
    return torch.where(seen, energy / total.clamp_min(1e-300), 0.0), seen


@torch.no_grad()
def _fraction_sums(
    model: nn.Module, ids: list[list[int]], layers: list[int], *, center: bool, batch_size: int, device, progress: bool
) -> tuple[Tensor, Tensor]:
    """``(num, den)`` of :func:`spectral_profile`: ``(layers, 5, hidden)`` length-weighted
    sums of the per-text energy fractions and ``(layers, hidden)`` the summed lengths of
    the texts counted, for every layer from one model call per batch."""
    num = den = None
    for _, hidden, lengths in hidden_batches(model, ids, layers, batch_size=batch_size, device=device, desc="profile", progress=progress):
        if num is None:
            width = hidden[0].shape[-1]
            num = torch.zeros(len(layers), len(BAND_NAMES), width, dtype=torch.float64, device=hidden[0].device)
            den = torch.zeros(len(layers), width, dtype=torch.float64, device=hidden[0].device)
        assert den is not None  # set with num, on the first batch
        for li, states in enumerate(hidden):
            for row, n in enumerate(lengths):
                fraction, seen = _text_fractions(states[row, :n], center)
                num[li] += n * fraction
                den[li] += n * seen
    # None before the first batch only: spectral_profile passes at least one text
    return cast(Tensor, num), cast(Tensor, den)


def spectral_profile(
    model: nn.Module,
    texts: Sequence[str] | Sequence[Sequence[int]],
    layer: int | Sequence[int] = -1,
    *,
    tokenizer=None,
    max_length: int | None = None,
    add_special_tokens: bool = True,
    center: bool = False,
    batch_size: int = 8,
    device: torch.device | str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Energy share of each of the paper's five bands per hidden unit of ``layer``.

    Args:
        model: any Hugging Face encoder or decoder-only model (``BertModel``,
            ``GPT2Model``, ``GPT2LMHeadModel``, ...); it is run in eval mode (its mode is
            restored afterwards) and without gradients.
        texts: strings (with ``tokenizer``) or pre-tokenised id sequences (see
            :func:`token_ids`).  Each text is one window, truncated to ``max_length``.
        layer: hidden-state index: ``0`` the embeddings, ``-1`` the last layer; or a
            sequence of distinct indices, all measured from one pass over the texts.
        tokenizer: for strings.
        max_length: tokens kept per text; default the model's maximum
            (:func:`max_model_length`), no limit when it states none.
        add_special_tokens: for strings, let the tokenizer add its special tokens.
        center: remove each unit's mean over each text (the DC term) before the DCT.
        batch_size: texts per model call (sorted by length to limit padding).
        device: where to run (default: the model's device).
        progress: show a progress bar over the batches.

    Returns:
        DataFrame ``(5, hidden)``: index ``band`` (:data:`~prismlib.spectral.BAND_NAMES`,
        LOW first), columns ``unit`` ``0 .. hidden-1``; each column is the unit's energy
        fraction per band, averaged over texts weighted by their length (module
        docstring), summing to 1 (NaN for a unit that is zero in every text).
        For a sequence of layers, ``(layers * 5, hidden)`` with index ``(layer, band)``:
        ``df.loc[layer]`` is that layer's frame.  ``attrs`` holds ``layer`` (the index,
        or the list), ``texts`` (used), ``skipped`` (texts shorter than 5 tokens, which
        cannot hold five bands), ``tokens`` (their total) and ``lengths`` (each text's, the
        input of :func:`noise_profile`).

    Raises:
        ValueError: no text of at least 5 tokens, repeated layers, or an unusable
            model/layer (see :func:`hidden_batches`).
        TypeError: see :func:`token_ids`.
    """
    layers: list[int] = [cast(int, layer)] if isinstance(layer, Integral) else [int(i) for i in cast(Sequence[int], layer)]
    if not layers or len(set(layers)) != len(layers):
        raise ValueError(f"layer must be an index or a sequence of distinct indices, got {layer!r}")
    if max_length is None:
        max_length = max_model_length(model)
    ids = token_ids(texts, tokenizer, max_length, add_special_tokens=add_special_tokens)
    k = len(BAND_NAMES)
    keep = [s for s in ids if len(s) >= k]
    skipped = len(ids) - len(keep)
    if not keep:
        raise ValueError(f"every text is shorter than {k} tokens; the five bands need at least {k} tokens per text")
    if skipped:
        warnings.warn(f"{skipped} of {len(ids)} texts are shorter than {k} tokens and were left out", stacklevel=2)
    was_training = model.training
    model.eval()
    try:
        num, den = _fraction_sums(model, keep, layers, center=center, batch_size=batch_size, device=device, progress=progress)
    finally:
        model.train(was_training)
    profile = (num / den[:, None]).cpu().numpy()
    columns = pd.RangeIndex(profile.shape[-1], name="unit")
    if isinstance(layer, Integral):
        df = pd.DataFrame(profile[0], index=pd.Index(BAND_NAMES, name="band"), columns=columns)
    else:
        index = pd.MultiIndex.from_product([layers, BAND_NAMES], names=["layer", "band"])
        df = pd.DataFrame(profile.reshape(-1, profile.shape[-1]), index=index, columns=columns)
    df.attrs.update(
        {
            "layer": layer if isinstance(layer, Integral) else layers,
            "texts": len(keep),
            "skipped": skipped,
            "tokens": sum(len(s) for s in keep),
            "lengths": [len(s) for s in keep],
            "center": center,
        }
    )
    return df


def _check_lengths(lengths: Sequence[int]) -> list[int]:
    ns = [int(n) for n in lengths]
    k = len(BAND_NAMES)
    if not ns or min(ns) < k:
        raise ValueError(f"need at least one length, each at least {k} (one DCT index per band); got {ns[:5]}")
    return ns


def noise_profile(lengths: Sequence[int], units: int = 64, *, center: bool = False, seed: int = 0) -> pd.DataFrame:
    """:func:`spectral_profile`'s measure on white noise: for each length ``n``, ``(n, units)``
    independent standard normal states (a generator seeded with ``seed``), their energy
    fraction per band, averaged over the lengths weighted by ``n``.

    Args:
        lengths: tokens per text, e.g. ``spectral_profile(...).attrs["lengths"]``.
        units: noise "units" drawn (columns of the result).
        center: remove each unit's mean per text first, as in :func:`spectral_profile`.

    Returns:
        DataFrame ``(5, units)``, index ``band`` (LOW first), each column summing to 1.
    """
    ns = _check_lengths(lengths)
    gen = torch.Generator().manual_seed(seed)
    num = torch.zeros(len(BAND_NAMES), units, dtype=torch.float64)
    den = torch.zeros(units, dtype=torch.float64)
    for n in ns:
        fraction, seen = _text_fractions(torch.randn(n, units, generator=gen), center)
        num += n * fraction
        den += n * seen
    return pd.DataFrame((num / den).numpy(), index=pd.Index(BAND_NAMES, name="band"), columns=pd.RangeIndex(units, name="unit"))


def white_noise_shares(lengths: Sequence[int], *, center: bool = False) -> pd.Series:
    """The expected share of each band for white noise of these lengths (module docstring),
    averaged over the lengths weighted by ``n``: what :func:`noise_profile` estimates."""
    ns = _check_lengths(lengths)
    total = np.zeros(len(BAND_NAMES))
    for n in ns:
        widths = np.array([b.width for b in allocate_bands(n)], dtype=np.float64)
        if center:
            widths[0] -= 1
        total += n * widths / widths.sum()
    return pd.Series(total / sum(ns), index=pd.Index(BAND_NAMES, name="band"), name="white noise")
