"""The count-based references of PTB: the bigram gate of every work-B perplexity claim, and a unigram.

The gate of every work-B claim: a claim about language models is *not testable* when a model it
compares is "not clearly below the bigram model of the same data".  This module fits
that bigram on **the whole PTB training split** (all 929,589 tokens, ``<eos>`` included,
read as one stream the way the LSTMs read it): it is the baseline of exactly the data the
LSTMs learn from, so an LSTM that does not beat it has learnt less than counting word
pairs of its own training text.

**Smoothing: interpolated Kneser-Ney** (Kneser & Ney 1995, in the interpolated form of
Chen & Goodman 1999), one absolute discount per order estimated as ``D = n1 / (n1 + 2 n2)``
(Ney et al. 1994; ``n_k`` = number of bigram types seen ``k`` times):

    P(w | v) = max(c(v, w) - D, 0) / c(v)  +  D * N1+(v .) / c(v) * P_uni(w)
    P_uni(w) = max(N1+(. w) - D_u, 0) / N1+(. .)  +  D_u * |{w: N1+(. w) > 0}| / N1+(. .) / V

``c(v)`` counts ``v`` as a context, ``N1+(v .)`` the word types seen after ``v``,
``N1+(. w)`` the context types seen before ``w`` (the *continuation* count) and ``V`` the
vocabulary size.  The lower order interpolates with the uniform law, so every word of
the vocabulary has a positive probability and each ``P(. | v)`` sums to one exactly; a
context never seen in training falls back to ``P_uni``.  Kneser-Ney rather than
Witten-Bell because it is the stronger of the two on PTB-sized text (Chen & Goodman):
the gate should be the best bigram, not a weak one that any model passes.

**Why hand-written.**  ``nltk.lm.KneserNeyInterpolated`` (not a dependency here) scores one
n-gram at a time in Python through nested dictionaries: minutes for PTB test, and its
handling of unseen contexts is its own.  KenLM estimates with a C++ binary that is not
pip-installable.  A bigram is a few numpy lines: counts of ``v * V + w`` keys with
``np.unique`` and look-ups with ``np.searchsorted``; fitting on PTB train takes well
under a second.

:func:`ptb_references` also scores an add-one **unigram** of PTB train (what a model
that has learnt only word frequencies gets) and tabulates both beside the LSTM
baselines (``lm_references.csv`` of every work-B notebook).

Positions: :func:`bigram_nll` with ``batch_size`` leaves NaN exactly where
:func:`prismlib.lstm.token_nll` does (the first token of each evaluation stream and the
tail), so the per-chunk sums of the two pair (:func:`prismlib.lstm.chunk_sums`): a model read
from its run record (per-chunk sums only, :class:`prismlib.lstm.ChunkNLL`) is compared with the
bigram's per-token NLL chunked the same way (:func:`versus_bigram`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prismlib.claims import Gate
from prismlib.lstm.chunks import CHUNK, NLL
from prismlib.lstm.evaluation import N_BOOT_PTB, perplexity, perplexity_difference, predicted_mask
from prismlib.stats import Interval


@dataclass(frozen=True)
class BigramLM:
    """An interpolated Kneser-Ney bigram model over ids ``0 .. vocab_size - 1``.

    Attributes:
        vocab_size: ``V``.
        discount: ``D`` of the bigram order.
        unigram_discount: ``D_u`` of the continuation unigram.
        keys: ``(B,)`` sorted int64 ``v * V + w`` of the bigrams seen in training.
        counts: ``(B,)`` their counts ``c(v, w)``.
        context_count: ``(V,)`` ``c(v)``, times ``v`` is followed by a token.
        context_types: ``(V,)`` ``N1+(v .)``, word types seen after ``v``.
        lower: ``(V,)`` ``P_uni(w)``, the interpolated continuation unigram (sums to 1).
        train_tokens: tokens the model was fitted on.
    """

    vocab_size: int
    discount: float
    unigram_discount: float
    keys: np.ndarray
    counts: np.ndarray
    context_count: np.ndarray
    context_types: np.ndarray
    lower: np.ndarray
    train_tokens: int

    def _check_ids(self, ids: np.ndarray, what: str) -> np.ndarray:
        ids = np.asarray(ids)
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"{what} must be integer token ids, got dtype {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ValueError(f"{what} must lie in [0, {self.vocab_size}); got ids from {ids.min()} to {ids.max()}")
        return ids.astype(np.int64)

    def prob(self, context: np.ndarray, word: np.ndarray) -> np.ndarray:
        """``P(word | context)`` for paired id arrays of one shape (any shape), float64."""
        v, w = self._check_ids(context, "context"), self._check_ids(word, "word")
        if v.shape != w.shape:
            raise ValueError(f"context and word must have one shape, got {v.shape} and {w.shape}")
        key = v * self.vocab_size + w
        idx = np.searchsorted(self.keys, key).clip(max=len(self.keys) - 1)
        c_vw = np.where(self.keys[idx] == key, self.counts[idx], 0).astype(np.float64)
        c_v = self.context_count[v].astype(np.float64)
        seen = c_v > 0
        safe = np.where(seen, c_v, 1.0)
        backoff = self.discount * self.context_types[v] / safe
        p_seen = np.maximum(c_vw - self.discount, 0.0) / safe + backoff * self.lower[w]
        return np.where(seen, p_seen, self.lower[w])

    def distribution(self, context: int) -> np.ndarray:
        """``P(. | context)`` over the whole vocabulary, shape ``(V,)`` (sums to 1)."""
        words = np.arange(self.vocab_size)
        return self.prob(np.full(self.vocab_size, context), words)


def _ney_discount(counts: np.ndarray, what: str) -> float:
    """``n1 / (n1 + 2 n2)`` of a count-of-counts; needs some types seen once and twice."""
    n1, n2 = int((counts == 1).sum()), int((counts == 2).sum())
    if n1 == 0 or n2 == 0:
        raise ValueError(f"Kneser-Ney's discount needs {what} seen once and twice (n1={n1}, n2={n2}); the training text is too small")
    return n1 / (n1 + 2 * n2)


def fit_bigram(ids: np.ndarray, vocab_size: int) -> BigramLM:
    """Interpolated Kneser-Ney bigram of a token stream.

    Args:
        ids: ``(n,)`` token ids of the training text, read as one stream (PTB: the whole
            training split with its ``<eos>`` tokens, as the LSTMs read it).
        vocab_size: ``V``; ids must lie in ``[0, V)``.

    Returns:
        The fitted :class:`BigramLM`.
    """
    if vocab_size < 2:
        raise ValueError(f"a vocabulary needs at least two types, got {vocab_size}")
    ids = np.asarray(ids)
    if ids.ndim != 1 or len(ids) < 3:
        raise ValueError(f"training ids must be a stream of shape (n,) with n >= 3, got shape {ids.shape}")
    if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"training ids must be integers in [0, {vocab_size})")
    ids = ids.astype(np.int64)
    keys, counts = np.unique(ids[:-1] * vocab_size + ids[1:], return_counts=True)
    ctx, word = keys // vocab_size, keys % vocab_size
    context_count = np.bincount(ctx, weights=counts, minlength=vocab_size)
    context_types = np.bincount(ctx, minlength=vocab_size).astype(np.float64)
    continuation = np.bincount(word, minlength=vocab_size).astype(np.float64)  # N1+(. w)
    d = _ney_discount(counts, "bigram types")
    d_u = _ney_discount(continuation[continuation > 0], "continuation counts")
    total = continuation.sum()  # N1+(. .): bigram types
    nonzero = float((continuation > 0).sum())
    lower = np.maximum(continuation - d_u, 0.0) / total + d_u * nonzero / total / vocab_size
    return BigramLM(vocab_size, d, d_u, keys, counts, context_count, context_types, lower, len(ids))


def bigram_nll(lm: BigramLM, ids: np.ndarray, batch_size: int | None = None) -> np.ndarray:
    """``-log P(ids[t] | ids[t - 1])`` (nats) for every token, shape ``(n,)``.

    Args:
        ids: ``(n,)`` test token ids.
        batch_size: with the evaluation batch of :func:`prismlib.lstm.token_nll`, the
            positions that function leaves NaN (each stream's first token, the tail) are
            NaN here too, so the two pair position by position; ``None``: only ``t = 0``.
    """
    ids = lm._check_ids(ids, "ids")
    if ids.ndim != 1 or len(ids) < 2:
        raise ValueError(f"ids must be a stream of shape (n,) with n >= 2, got shape {ids.shape}")
    out = np.full(len(ids), np.nan)
    out[1:] = -np.log(lm.prob(ids[:-1], ids[1:]))
    if batch_size is not None:
        out[~predicted_mask(len(ids), batch_size)] = np.nan
    return out


def versus_bigram(
    nlls: Mapping[str, NLL], bigram_nll: np.ndarray, chunk: int = CHUNK, n_boot: int = N_BOOT_PTB, seed: int = 0
) -> dict[str, Interval]:
    """Per model, perplexity minus the bigram's, paired bootstrap over ``chunk``-token chunks.

    Args:
        nlls: model name -> per-token NLL ``(n,)`` or ``(seeds, n)`` (seed mean), NaN where
            not predicted (the same positions as ``bigram_nll``), or its
            :class:`~prismlib.lstm.ChunkNLL` (a run's ``test_chunks``): the bigram's NLL is then
            summed over the same chunks, which must hold the same predicted tokens.
        bigram_nll: ``(n,)`` from :func:`bigram_nll` with the LSTM's evaluation batch.
    """
    return {name: perplexity_difference(nll, bigram_nll, chunk=chunk, n_boot=n_boot, seed=seed) for name, nll in nlls.items()}


def beats_bigram(differences: Mapping[str, Interval], bigram_nll: np.ndarray, names: Iterable[str] | None = None) -> Gate:
    """The gate "every language model of the claim is clearly below the bigram".

    Passed when each named model's interval of ``perplexity - bigram perplexity`` (from
    :func:`versus_bigram`) lies entirely below 0.

    Args:
        differences: from :func:`versus_bigram`.
        bigram_nll: the bigram's per-token NLL (for its perplexity in the detail).
        names: the models the claim involves (default: all of ``differences``).
    """
    names = list(differences) if names is None else list(names)
    missing = [n for n in names if n not in differences]
    if missing or not names:
        raise ValueError(f"no bigram comparison for {missing or 'any model'}; compute it with versus_bigram")
    ppl = perplexity(bigram_nll)
    failed = [n for n in names if not differences[n].high < 0]
    if not failed:
        closest = max(names, key=lambda n: differences[n].high)
        detail = f"all {len(names)} below the bigram's {ppl:.1f}; closest {closest} {differences[closest]}"
    else:
        worst = sorted(failed, key=lambda n: -differences[n].effect)
        shown = "; ".join(f"{n} {differences[n].effect + ppl:.1f} ({differences[n]})" for n in worst[:2])
        more = f"; {len(failed) - 2} more" if len(failed) > 2 else ""
        detail = f"{len(failed)} of {len(names)} not below the bigram's {ppl:.1f}: {shown}{more}"
    return Gate("LMs beat the PTB bigram", not failed, detail)


def ptb_baseline(train: np.ndarray, test: np.ndarray, test_ids: np.ndarray, vocab_size: int, eval_batch: int) -> tuple[np.ndarray, str]:
    """The bigram gate's baseline as the work-B notebooks use it.

    Args:
        train, test: PTB train and the full test split (ids).
        test_ids: the test tokens the LSTMs are scored on (all of ``test`` or its start).
        vocab_size: ``V``.
        eval_batch: the LSTMs' evaluation batch (which positions are predicted).

    Returns:
        ``(nll, line)``: the bigram's per-token NLL aligned with the LSTMs'
        ``token_nll(test_ids)`` (NaN where they predict nothing), and a sentence with its
        perplexities to 1 decimal.
    """
    lm = fit_bigram(train, vocab_size)
    nll = bigram_nll(lm, test_ids, eval_batch)
    line = (
        f"Kneser-Ney bigram of PTB train ({lm.train_tokens:,} tokens, discount {lm.discount:.3f}): test perplexity "
        f"{perplexity(bigram_nll(lm, test)):.1f} on all {len(test):,} test tokens, "
        f"{perplexity(nll):.1f} on the {int(np.isfinite(nll).sum()):,} tokens the LSTMs predict"
    )
    return nll, line


def unigram_nll(train: np.ndarray, ids: np.ndarray, vocab_size: int, batch_size: int | None = None) -> np.ndarray:
    """``-log P(w)`` of an add-one unigram of ``train`` for every token of ``ids``, ``(n,)``.

    NaN where :func:`prismlib.lstm.token_nll` with ``batch_size`` predicts nothing (and at
    ``t = 0`` without it), as in :func:`bigram_nll`.
    """
    train, ids = np.asarray(train), np.asarray(ids)
    if ids.ndim != 1 or len(ids) < 2 or ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"ids must be a stream (n,) of ids in [0, {vocab_size}), got shape {ids.shape}")
    p = (np.bincount(train, minlength=vocab_size) + 1.0) / (len(train) + vocab_size)
    out = -np.log(p[ids])
    out[0] = np.nan
    if batch_size is not None:
        out[~predicted_mask(len(ids), batch_size)] = np.nan
    return out


def ptb_references(
    train: np.ndarray, valid: np.ndarray, test_ids: np.ndarray, vocab_size: int, eval_batch: int
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The add-one unigram and the Kneser-Ney bigram of PTB train, scored on valid and test.

    Args:
        train, valid: PTB train and valid (ids).
        test_ids: the test tokens the LSTMs are scored on.
        vocab_size: ``V``.
        eval_batch: the LSTMs' evaluation batch: test perplexities are over exactly the
            tokens the LSTMs predict (valid: every token but the first).

    Returns:
        ``(table, unigram_nll, bigram_nll)``: a frame with columns ``model``, ``valid_ppl``,
        ``test_ppl``, ``test_tokens``, and the two models' per-token test NLL aligned with
        :func:`prismlib.lstm.token_nll` (the gate and the plots use them).
    """
    lm = fit_bigram(train, vocab_size)
    uni = unigram_nll(train, test_ids, vocab_size, eval_batch)
    bi = bigram_nll(lm, test_ids, eval_batch)
    rows = [
        {
            "model": "unigram (add-one, PTB train)",
            "valid_ppl": perplexity(unigram_nll(train, valid, vocab_size)),
            "test_ppl": perplexity(uni),
        },
        {
            "model": f"bigram (interpolated Kneser-Ney, PTB train, D = {lm.discount:.3f})",
            "valid_ppl": perplexity(bigram_nll(lm, valid)),
            "test_ppl": perplexity(bi),
        },
    ]
    table = pd.DataFrame(rows).assign(test_tokens=int(np.isfinite(bi).sum()))
    return table, uni, bi


def lm_references(references: pd.DataFrame, models: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    """``references`` (from :func:`ptb_references`) with one row per LSTM: name -> ``(valid_ppl, test_ppl)``."""
    rows = [{"model": name, "valid_ppl": v, "test_ppl": t} for name, (v, t) in models.items()]
    extra = pd.DataFrame(rows).assign(test_tokens=references["test_tokens"].iloc[0])
    return pd.concat([references, extra], ignore_index=True)
