"""Chunk sums (prismlib.lstm.chunks.ChunkNLL): what every work-B comparison reads, from a run
record or from a local run alike; they give the per-token analyses' numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prismlib import lstm
from prismlib.lstm import outcome
from prismlib.lstm.chunks import ChunkNLL, MissingBins, as_chunks, paired_chunks
from prismlib.lstm.iclr.routing import log_ratio_contrast
from prismlib.stats import ratio_difference

N = 2_345  # not a multiple of 100 or 70: a partial last chunk and block
COUNTS = np.array([20_000, 5_000, 500, 50, 5])  # training counts: one word per frequency bin, two in <100
IDS = np.random.default_rng(1).choice(5, N, p=[0.4, 0.3, 0.15, 0.1, 0.05])


def _nll(shift: float, seed: int) -> np.ndarray:
    """Per-token NLL on IDS sharing a token difficulty, NaN where a 5-stream evaluation predicts nothing."""
    base = np.random.default_rng(0).gamma(2.0, 2.0, N) + 0.5 * IDS
    nll = base + shift + np.random.default_rng(seed).normal(0, 0.3, N)
    nll[~lstm.predicted_mask(N, 5)] = np.nan
    return nll


def test_chunk_sums_are_the_record_writers_and_their_bins_partition_the_tokens():
    x = _nll(0.0, 1)
    c = ChunkNLL.of(x, lstm.frequency_bins(IDS, COUNTS))
    sums, counts = outcome.chunked(x, lstm.CHUNK)
    np.testing.assert_array_equal(c.sums, sums)
    np.testing.assert_array_equal(c.counts, counts)
    np.testing.assert_allclose(c.bin_sums.sum(axis=0), c.sums)
    np.testing.assert_array_equal(c.bin_counts.sum(axis=0), c.counts)
    assert c.perplexity() == pytest.approx(lstm.perplexity(x), rel=1e-12) and c.tokens == N
    two = ChunkNLL.of(np.stack([x, x + 0.1]))
    assert two.seeds == 2 and [r.perplexity() for r in two.rows()] == pytest.approx([lstm.perplexity(x), lstm.perplexity(x + 0.1)])
    assert ChunkNLL.stack(two.rows()).sums.tolist() == two.sums.tolist()
    shifted = x.copy()
    shifted[1] = np.nan
    with pytest.raises(ValueError, match="different positions"):
        ChunkNLL.of(np.stack([x, shifted]))
    with pytest.raises(MissingBins, match="no per-frequency-bin NLL"):
        ChunkNLL.of(x).bin("<100")
    with pytest.raises(ValueError, match="per 100 tokens, not per 50"):
        as_chunks(c, chunk=50)


def test_the_seed_mean_of_chunk_sums_gives_the_per_token_seed_means_interval():
    """The bootstrap unit was already the 100-token chunk: summing per chunk first and averaging the
    seeds' sums (a record keeps only sums) resamples the same units with the same draws."""
    a, b = np.stack([_nll(0.0, 1), _nll(0.0, 2)]), _nll(0.05, 3)
    old_sums, old_counts = lstm.chunk_sums(np.stack([lstm.seed_mean_nll(a), b]))  # the per-token path
    old = ratio_difference(old_sums[0], old_sums[1], old_counts, transform=np.exp, n_boot=500)
    new = lstm.perplexity_difference(ChunkNLL.of(a), ChunkNLL.of(b), n_boot=500)
    assert new.units == old.units == math.ceil(N / 100)
    assert (new.effect, new.low, new.high) == pytest.approx((old.effect, old.low, old.high), rel=1e-9)
    sums, counts = paired_chunks([ChunkNLL.of(a), b])
    np.testing.assert_allclose(sums, old_sums, rtol=1e-12)
    with pytest.raises(ValueError, match="same positions"):
        lstm.perplexity_difference(ChunkNLL.of(b), np.where(np.isfinite(b), 1.0, 1.0))  # a bigram scored without the batch


def _record_chunks(x: np.ndarray) -> ChunkNLL:
    """``x`` as a run record keeps it (float32 sums) and reads it back."""
    arrays = outcome.outcome_arrays(x, IDS, COUNTS, {}, {}, [])
    return outcome.final_test_chunks(arrays, N)


def test_record_chunks_give_the_per_token_frequency_bins_bootstrap_and_rare_word_contrast():
    a, b = _nll(0.0, 1), _nll(0.1, 2) - 0.2 * (IDS >= 3)  # b better on rare words
    ra, rb = _record_chunks(a), _record_chunks(b)
    per_token = lstm.perplexity_by_frequency({"a": a, "b": b}, IDS, COUNTS, reference="a", n_boot=300)
    chunked = lstm.perplexity_by_frequency({"a": ra, "b": rb}, IDS, COUNTS, reference="a", n_boot=300)
    assert chunked.tokens.tolist() == per_token.tokens.tolist()
    np.testing.assert_allclose(chunked.ppl, per_token.ppl, rtol=1e-6)
    for got, want in zip(chunked.delta, per_token.delta):
        assert (got is None) == (want is None)
        if got is not None:
            assert got.units == want.units and (got.low, got.high) == pytest.approx((want.low, want.high), rel=1e-5, abs=1e-6)
    # the slides' bootstrapped column: whole 70-token blocks only (33 of them; the partial 34th is left out)
    got, want = lstm.bootstrap_perplexity(ra, samples=200, seed=3), lstm.bootstrap_perplexity(a, samples=200, seed=3)
    assert got.blocks == want.blocks == N // 70
    assert (got.point, got.mean, got.sd) == pytest.approx((want.point, want.mean, want.sd), rel=1e-5)
    rare = lstm.bin_log_ratio_contrast(rb, ra, ">10k", "<100", n_boot=300)
    bins = lstm.frequency_bins(IDS, COUNTS)
    want = log_ratio_contrast(b, a, bins == ">10k", bins == "<100", n_boot=300)
    assert rare.units == want.units and (rare.effect, rare.low, rare.high) == pytest.approx((want.effect, want.low, want.high), rel=1e-5)
    assert rare.low > 0  # b's gain is on rare words: its frequent-bin log ratio is the larger
