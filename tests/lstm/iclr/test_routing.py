"""Routing by timescale (prismlib.lstm.iclr.routing) on tiny language models with known structure."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib import lstm
from prismlib.lstm.iclr import routing

VOCAB = 30


def _model() -> lstm.LSTMLM:
    torch.manual_seed(0)
    return lstm.LSTMLM(VOCAB, 6, 8, 3, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0).eval()


@pytest.fixture(scope="module")
def ids() -> np.ndarray:
    return np.random.default_rng(0).integers(0, VOCAB, 1200)


def test_units_are_ordered_longest_timescale_first_and_cut_into_blocks():
    order = routing.timescale_order(np.array([0.0, 2.0, -np.inf, 1.0]))
    np.testing.assert_array_equal(order, [1, 3, 0, 2])  # b_f = -inf (T = 0) last
    blocks = routing.unit_blocks(np.arange(10), 3)
    assert [b.tolist() for b in blocks] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    with pytest.raises(ValueError, match="n_blocks"):
        routing.unit_blocks(np.arange(3), 4)


def test_zeroing_units_changes_only_what_reads_them(ids):
    model = _model()
    intact = lstm.token_nll(model, ids, 2, 20)
    np.testing.assert_array_equal(routing.ablated_token_nll(model, ids, 1, np.array([], dtype=int), 2, 20), intact)
    units = np.array([0, 3, 5])
    hurt = routing.ablated_token_nll(model, ids, 1, units, 2, 20)
    assert np.nanmax(np.abs(hurt - intact)) > 1e-4
    np.testing.assert_array_equal(lstm.token_nll(model, ids, 2, 20), intact)  # the hook is gone
    with torch.no_grad():  # layer 3 ignores those units of layer 2's output: zeroing them changes nothing
        model.rnns[2].weight_ih_l0[:, units] = 0
    np.testing.assert_allclose(routing.ablated_token_nll(model, ids, 1, units, 2, 20), lstm.token_nll(model, ids, 2, 20), atol=1e-12)


def test_ratios_and_their_contrast_on_known_shifts():
    rng = np.random.default_rng(1)
    n = 3000
    intact = rng.uniform(1, 5, n)
    intact[::97] = np.nan  # positions not predicted
    rare = np.arange(n) % 3 == 0
    ablated = intact + np.where(rare, 0.5, 0.1)
    iv = routing.bin_ratio(ablated, intact, rare, n_boot=200)
    assert iv.effect == pytest.approx(np.exp(0.5)) and iv.low == pytest.approx(np.exp(0.5)) and iv.high == pytest.approx(np.exp(0.5))
    contrast = routing.log_ratio_contrast(ablated, intact, rare, ~rare, n_boot=200)
    assert contrast.effect == pytest.approx(0.4) and contrast.units == 30
    ids = np.where(rare, 1, 0)  # word 1 rare in "training", word 0 frequent
    table = routing.routing_ratios(intact, np.stack([ablated, intact]), ids, np.array([20_000, 50]), np.array([9.0, 1.0]), n_boot=200)
    got = table.set_index(["block", "bin"]).ratio
    assert got[(1, "<100")] == pytest.approx(np.exp(0.5)) and got[(1, ">10k")] == pytest.approx(np.exp(0.1))
    assert got[(2, "all")] == pytest.approx(1.0) and set(table.mean_T) == {9.0, 1.0}
    assert "100-1k" not in set(table.bin)  # an empty bin has no row


def test_contrast_against_a_reference_models_blocks_subtracts_their_mean_contrast():
    rng = np.random.default_rng(2)
    n = 3000
    intact, ref_intact = rng.uniform(1, 5, n), rng.uniform(1, 5, n)
    intact[::97] = np.nan
    rare = np.arange(n) % 3 == 0
    ablated = intact + np.where(rare, 0.5, 0.1)  # contrast 0.4
    ref = np.stack([ref_intact + np.where(rare, 0.3, 0.1), ref_intact + np.where(rare, 0.1, 0.1)])  # contrasts 0.2, 0.0
    excess = routing.log_ratio_contrast(ablated, intact, rare, ~rare, n_boot=200, reference=(ref, ref_intact))
    assert excess.effect == pytest.approx(0.4 - 0.1) and excess.low == pytest.approx(0.3) and excess.high == pytest.approx(0.3)
    noisy = ref + rng.normal(0, 0.5, ref.shape)  # reference blocks with chunk-level noise: an interval that is not a point
    wide = routing.log_ratio_contrast(ablated, intact, rare, ~rare, n_boot=200, reference=(noisy, ref_intact))
    assert wide.low < wide.effect < wide.high and wide.units == 30
    alone = routing.log_ratio_contrast(ref[0], ref_intact, rare, ~rare, n_boot=200)
    assert alone.effect == pytest.approx(0.2)
    with pytest.raises(ValueError, match="reference must be"):
        routing.log_ratio_contrast(ablated, intact, rare, ~rare, reference=(ref[:, :10], ref_intact))


def test_forget_gate_trajectories_average_to_the_gate_means(ids):
    model = _model()
    lstm.apply_official(list(model.rnns)[:2], [torch.linspace(-2, 2, 8), lstm.official_layer2_biases(8)])
    passage = ids[:150]
    gates = routing.forget_gate_trajectories(model, passage)
    assert [g.shape for g in gates] == [(150, 8), (150, 8), (150, 6)]
    means = lstm.forget_gate_means(model, passage, batch_size=1, bptt=1000)
    for g, m in zip(gates, means):
        np.testing.assert_allclose(g.mean(axis=0), m, rtol=1e-6)
    assert (gates[1][:, -1] == 0).all()  # the official grid's T = 0 unit: b_f = -inf, a gate of exactly 0
