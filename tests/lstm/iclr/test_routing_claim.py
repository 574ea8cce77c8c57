"""The routing claim's statistics (prismlib.lstm.iclr.routing.routing_contrast, routing_test)."""

from __future__ import annotations

import numpy as np
import pytest

from prismlib.lstm.chunks import CHUNK
from prismlib.lstm.iclr import routing

N = 40 * CHUNK


def test_third_weights_compare_the_longest_third_with_the_shortest_or_random_blocks():
    np.testing.assert_allclose(routing.third_weights(6, 2, "short"), [0.5, 0.5, 0, 0, -0.5, -0.5, 0, 0])
    np.testing.assert_allclose(routing.third_weights(6, 2, "random"), [0.5, 0.5, 0, 0, 0, 0, -0.5, -0.5])
    with pytest.raises(ValueError, match="random"):
        routing.third_weights(6, 0, "random")


def _stream(rare_hit: float, seeds: int = 2, noise: float = 0.01):
    """3 timescale blocks then 3 random blocks; the first (longest) block raises rare words' NLL."""
    rng = np.random.default_rng(0)
    rare = rng.random(N) < 0.2
    frequent = ~rare
    intact = rng.gamma(2.0, 2.0, (seeds, N))
    ablated = intact[:, None, :] + rng.normal(0, noise, (seeds, 6, N))
    ablated[:, 0, :] += np.where(rare, rare_hit, 0.0) * (1 + 0.1 * np.arange(seeds))[:, None]
    return ablated, intact, rare, frequent


def test_the_contrast_reads_the_longest_block_against_the_shortest_and_random_ones():
    ablated, intact, rare, frequent = _stream(0.2)
    iv, per_seed = routing.routing_contrast(ablated, intact, rare, frequent, routing.third_weights(3, 3, "short"), n_boot=200)
    assert per_seed == pytest.approx([0.2, 0.22], abs=0.01) and iv.effect == pytest.approx(np.mean(per_seed))
    assert iv.low < iv.effect < iv.high and iv.units == N // CHUNK
    iv_r, _ = routing.routing_contrast(ablated, intact, rare, frequent, routing.third_weights(3, 3, "random"), n_boot=200)
    assert iv_r.effect == pytest.approx(iv.effect, abs=0.01)
    ablated[:, 3, :] = ablated[:, 0, :]  # a random block that hurts rare words as much: the control takes a third of it back
    iv_r, _ = routing.routing_contrast(ablated, intact, rare, frequent, routing.third_weights(3, 3, "random"), n_boot=200)
    assert iv_r.effect == pytest.approx(iv.effect * 2 / 3, abs=0.01)


def test_the_routing_test_combines_chunks_and_seeds():
    ablated, intact, rare, frequent = _stream(0.2)
    w = routing.third_weights(3, 3, "short")
    test = routing.routing_test(ablated, intact, rare, frequent, w, "x", n_boot=200)
    assert test.interval.resampled == "units+seeds" and test.interval.seeds == 2 and test.verdict == "held"
    one = routing.routing_test(ablated[:1], intact[:1], rare, frequent, w, "x", n_boot=200)
    assert one.interval.resampled == "units"
    flat = routing.routing_test(*_stream(0.0), w, "x", n_boot=200)
    assert flat.verdict != "held"
    with pytest.raises(ValueError, match="weights"):
        routing.routing_contrast(ablated, intact, rare, frequent, w[:3])
