"""Chunk sums: a model's NLL summed per 100-token chunk of one token stream, what every paired
comparison of work B reads (:class:`ChunkNLL`).

PTB test's independent units are its 100-word chunks (:data:`CHUNK`): every claim compares
models with a paired bootstrap over them (:mod:`prismlib.lstm.evaluation`). A committed run
record keeps a model's NLL in exactly this form, per chunk, per chunk and word-frequency bin
(:data:`FREQUENCY_BINS`) and per 70-token block, never per token
(:mod:`prismlib.lstm.outcome`); a run loaded from a local checkpoint is chunked by the same
function, so the analyses have one code path. Per-token NLL is chunked on entry
(:func:`as_chunks`): the functions that take a model's NLL take either (:data:`NLL`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

CHUNK = 100
"""Tokens per independent unit of PTB test in every paired comparison (a 100-word chunk of
PTB): consecutive positions ``[k * CHUNK, (k + 1) * CHUNK)`` of the test stream."""

FREQUENCY_BINS: tuple[tuple[str, float, float], ...] = (
    (">10k", 10_000, math.inf),
    ("1k-10k", 1_000, 10_000),
    ("100-1k", 100, 1_000),
    ("<100", 0, 100),
)
"""Word-frequency bins of the ICLR 2021 version: ``(label, low, high)``, a word is in a bin
when ``low <= (its count in PTB train) < high``."""


class MissingBins(ValueError):
    """A :class:`ChunkNLL` without the per-frequency-bin sums an analysis needs (a committed
    record keeps them for the final test NLL only, not for its validation or test snapshots)."""


@dataclass(frozen=True)
class ChunkNLL:
    """A model's NLL on one token stream summed per :data:`CHUNK` consecutive positions: what
    every paired comparison of work B reads (the chunks are the units it resamples).

    A committed run record keeps exactly these sums (:mod:`prismlib.lstm.outcome`, written by
    :func:`~prismlib.lstm.outcome.outcome_arrays`), and a run loaded from a local checkpoint is
    chunked by the same function when it is loaded, so the analyses have one code path and a
    record gives the numbers its local run gave. Chunk ``k`` holds positions ``[k * chunk,
    (k + 1) * chunk)``; a chunk without a prediction has count 0 and is left out of every
    bootstrap (as :func:`chunk_sums` leaves it out).

    Attributes:
        sums: ``(G,)`` summed NLL per chunk, or ``(seeds, G)`` for a model's seeds (paired:
            seed ``k`` of every model predicts the same positions).
        counts: ``(G,)`` predicted tokens per chunk (the same for every seed).
        bin_sums: ``(bins, G)`` (``(seeds, bins, G)``) the sums over the tokens whose target word
            is in each bin of :data:`FREQUENCY_BINS`, in that order; ``None`` where not kept.
        bin_counts: ``(bins, G)`` their predicted tokens.
        block_sums, block_counts: ``(B,)`` the same per ``block`` positions (the slides'
            bootstrapped column, :func:`bootstrap_perplexity`); ``None`` where not kept.
        chunk, block: positions per chunk and per block.
        tokens: length of the token stream (``None``: unknown); only whole blocks are resampled.
    """

    sums: np.ndarray
    counts: np.ndarray
    bin_sums: np.ndarray | None = None
    bin_counts: np.ndarray | None = None
    block_sums: np.ndarray | None = None
    block_counts: np.ndarray | None = None
    chunk: int = CHUNK
    block: int = 70
    tokens: int | None = None

    @classmethod
    def of(cls, nll: np.ndarray, bins: np.ndarray | None = None, chunk: int = CHUNK) -> ChunkNLL:
        """The chunk sums of per-token NLL ``(n,)`` or ``(seeds, n)`` (NaN where not predicted,
        the same positions in every row); ``bins``: each token's :data:`FREQUENCY_BINS` label
        ``(n,)`` (:func:`frequency_bins` of the scored tokens), for the per-bin sums."""
        x = np.asarray(nll, dtype=np.float64)
        if x.ndim not in (1, 2) or x.shape[-1] < 1 or chunk < 1:
            raise ValueError(f"chunk sums need (n,) or (seeds, n) NLL and chunk >= 1, got shape {x.shape}, chunk {chunk}")
        rows = np.atleast_2d(x)
        finite = np.isfinite(rows)
        if not (finite == finite[:1]).all():
            raise ValueError("the seeds' per-token NLLs are predicted at different positions; evaluate them alike")
        n = x.shape[-1]
        groups, g = np.arange(n) // chunk, -(-n // chunk)
        values = np.where(finite, rows, 0.0)

        def per_chunk(v: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
            w = v if keep is None else np.where(keep, v, 0.0)
            return np.stack([np.bincount(groups, row, g) for row in w])

        sums = per_chunk(values)
        counts = np.bincount(groups, finite[0], g).astype(np.int64)
        bin_sums = bin_counts = None
        if bins is not None:
            labels = np.asarray(bins)
            if labels.shape != (n,):
                raise ValueError(f"bins must give one label per token, shape ({n},), got {labels.shape}")
            masks = [labels == label for label, _, _ in FREQUENCY_BINS]
            bin_sums = np.stack([per_chunk(values, m) for m in masks], axis=1)
            bin_counts = np.stack([np.bincount(groups, finite[0] & m, g) for m in masks]).astype(np.int64)
        one = x.ndim == 1
        return cls(
            sums[0] if one else sums,
            counts,
            None if bin_sums is None else bin_sums[0] if one else bin_sums,
            bin_counts,
            chunk=chunk,
            tokens=n,
        )

    @classmethod
    def stack(cls, items: Sequence[ChunkNLL]) -> ChunkNLL:
        """The seeds ``items`` (one model each, the same positions predicted) as one ``(seeds, G)``
        :class:`ChunkNLL`; per-bin sums where every seed has them, no blocks."""
        if not items or any(c.seeds != 1 for c in items):
            raise ValueError("stack takes one or more single-seed chunk sums")
        first = items[0]
        if any(c.chunk != first.chunk or not np.array_equal(c.counts, first.counts) for c in items[1:]):
            raise ValueError("the seeds' per-token NLLs are predicted at different positions; evaluate them alike")
        binned = all(c.bin_sums is not None for c in items)
        return cls(
            np.stack([c.sums for c in items]),
            first.counts,
            np.stack([c.bin_sums for c in items]) if binned else None,  # type: ignore[misc]
            first.bin_counts if binned else None,
            chunk=first.chunk,
            tokens=first.tokens if all(c.tokens == first.tokens for c in items) else None,
        )

    @property
    def seeds(self) -> int:
        """How many seeds the sums stack (1 for one model)."""
        return 1 if self.sums.ndim == 1 else int(self.sums.shape[0])

    def rows(self) -> list[ChunkNLL]:
        """One :class:`ChunkNLL` per seed (``[self]`` for one model)."""
        if self.sums.ndim == 1:
            return [self]
        bins = self.bin_sums
        return [
            replace(self, sums=self.sums[k], bin_sums=None if bins is None else bins[k], block_sums=None, block_counts=None)
            for k in range(self.seeds)
        ]

    def mean(self) -> ChunkNLL:
        """The seed mean: every chunk's sum averaged over the seeds (:func:`seed_mean_nll` chunked);
        ``exp`` of its mean per token is the geometric mean of the seeds' perplexities."""
        if self.sums.ndim == 1:
            return self
        return replace(
            self,
            sums=self.sums.mean(axis=0),
            bin_sums=None if self.bin_sums is None else self.bin_sums.mean(axis=0),
            block_sums=None,
            block_counts=None,
        )

    def perplexity(self) -> float:
        """``exp`` of the mean NLL per predicted token (of the seed mean)."""
        m = self.mean()
        return float(np.exp(m.sums.sum() / m.counts.sum()))

    def bin(self, label: str) -> ChunkNLL:
        """The chunk sums over the tokens of one :data:`FREQUENCY_BINS` bin (``label``).

        Raises:
            MissingBins: these sums keep no per-bin sums.
        """
        names = [name for name, _, _ in FREQUENCY_BINS]
        if label not in names:
            raise ValueError(f"unknown frequency bin {label!r}; the bins are {names}")
        if self.bin_sums is None or self.bin_counts is None:
            raise MissingBins(
                "these chunk sums keep no per-frequency-bin NLL (a run record keeps it for the final test NLL only, "
                "not for its validation or test snapshots)"
            )
        i = names.index(label)
        return ChunkNLL(self.bin_sums[..., i, :], self.bin_counts[i], chunk=self.chunk, tokens=self.tokens)


NLL = np.ndarray | ChunkNLL
"""A model's NLL as the analyses take it: per token, ``(n,)`` or ``(seeds, n)``, or chunked (:class:`ChunkNLL`)."""


def as_chunks(nll: NLL, bins: np.ndarray | None = None, chunk: int = CHUNK) -> ChunkNLL:
    """``nll`` as a :class:`ChunkNLL` of ``chunk``-token chunks: itself, or the chunk sums of a
    per-token NLL (:meth:`ChunkNLL.of`, with ``bins`` its tokens' frequency-bin labels)."""
    if isinstance(nll, ChunkNLL):
        if nll.chunk != chunk:
            raise ValueError(f"these NLL sums are per {nll.chunk} tokens, not per {chunk}")
        return nll
    return ChunkNLL.of(nll, bins, chunk)


def paired_chunks(models: Sequence[NLL], chunk: int = CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """The seed-mean NLL sums ``(m, G')`` of ``models`` and their predicted tokens ``(G',)`` over the
    ``G'`` chunks that hold a prediction: the paired units of every comparison.

    Raises:
        ValueError: the models are not predicted at the same positions, or fewer than two chunks
            hold a prediction.
    """
    means = [as_chunks(x, chunk=chunk).mean() for x in models]
    counts = means[0].counts
    if any(m.counts.shape != counts.shape or not np.array_equal(m.counts, counts) for m in means[1:]):
        raise ValueError(
            "models are not predicted at the same positions; evaluate them on the same test tokens with the same "
            "evaluation batch (the bigram: prismlib.lstm.bigram_nll(..., batch_size=eval_batch))"
        )
    keep = counts > 0
    if keep.sum() < 2:
        raise ValueError(f"fewer than two chunks of {chunk} tokens hold a prediction; evaluate more test tokens")
    return np.stack([m.sums[keep] for m in means]), counts[keep].astype(np.float64)
