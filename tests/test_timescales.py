"""Timescale <-> forget-gate conversions, the chrono sampler, every named variant, bias statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from prismlib.lstm import timescales as ts

SIZES = (40, 30, 20)


@settings(max_examples=200, deadline=None)
@given(st.floats(1.001, 1e5))
def test_logit_round_trip(T):
    T64 = torch.tensor(T, dtype=torch.float64)
    b = ts.bias_from_timescale(T64)
    assert torch.isclose(b, torch.log(T64 - 1))
    assert torch.isclose(ts.timescale_from_bias(b), T64, rtol=1e-9)
    f = torch.sigmoid(b)
    assert torch.isclose(ts.timescale_from_forget(f), T64, rtol=1e-6)
    assert torch.isclose(ts.forget_from_timescale(T64), f, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(0.05, 1e4))
def test_exp_round_trip(T):
    T64 = torch.tensor(T, dtype=torch.float64)
    b = ts.bias_from_timescale(T64, "exp")
    assert torch.isclose(b, -torch.log(torch.exp(1 / T64) - 1), rtol=1e-9)
    assert torch.isclose(ts.timescale_from_bias(b, "exp"), T64, rtol=1e-9)
    # f^t = exp(-t/T): the forget value of that bias is exp(-1/T)
    assert torch.isclose(torch.sigmoid(b), torch.exp(-1 / T64), rtol=1e-9)
    assert torch.isclose(ts.timescale_from_forget(torch.sigmoid(b), "exp"), T64, rtol=1e-6)


@settings(max_examples=100, deadline=None)
@given(st.floats(-8, 8))
def test_bias_round_trip(b):
    b64 = torch.tensor(b, dtype=torch.float64)
    for conv in ts.CONVENTIONS:
        assert torch.isclose(ts.bias_from_timescale(ts.timescale_from_bias(b64, conv), conv), b64, atol=1e-8)


def test_conventions_agree_for_long_timescales_and_known_values():
    assert ts.bias_from_timescale(2.0).item() == pytest.approx(0.0)
    assert ts.timescale_from_forget(0.95).item() == pytest.approx(20.0)
    big = torch.tensor(1000.0, dtype=torch.float64)
    assert ts.bias_from_timescale(big, "exp").item() == pytest.approx(ts.bias_from_timescale(big).item(), abs=1e-3)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="must exceed 1"):
        ts.bias_from_timescale(1.0)
    with pytest.raises(ValueError, match="positive"):
        ts.bias_from_timescale(0.0, "exp")
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        ts.timescale_from_forget(1.0)
    with pytest.raises(ValueError, match="convention"):
        ts.bias_from_timescale(3.0, "log")
    with pytest.raises(ValueError, match="unknown timescale variant 'chrono'"):
        ts.variant_forget_biases("chrono", SIZES, 20)
    with pytest.raises(ValueError, match="needs a timescale"):
        ts.variant_forget_biases("layerwise", SIZES, generator=torch.Generator())
    with pytest.raises(ValueError, match="pass generator"):
        ts.variant_forget_biases("pareto", SIZES)


def test_chrono_sampler_range_and_seed():
    g = torch.Generator().manual_seed(0)
    b = ts.chrono_bias(10_000, 20, g)
    assert b.min() >= 0 and b.max() <= math.log(19)
    assert b.max() > math.log(18.5) and b.min() < math.log(1.05)
    # log(U(1, 19)): the exponentiated values are uniform, mean 10
    assert torch.exp(b.double()).mean().item() == pytest.approx(10, rel=0.02)
    assert torch.equal(ts.chrono_bias(5, 20, torch.Generator().manual_seed(1)), ts.chrono_bias(5, 20, torch.Generator().manual_seed(1)))


def _g():
    return torch.Generator().manual_seed(0)


def test_layerwise_inverse_middle_ranges():
    T = 20
    ranges = {"layerwise": (19, 9, 4), "inverse": (4, 9, 19), "middle": (4, 19, 9)}
    for name, hi in ranges.items():
        biases = ts.variant_forget_biases(name, (2000, 2000, 2000), T, _g())
        for b, top in zip(biases, hi):
            assert b.min() >= 0 and b.max() <= math.log(top) + 1e-6
            assert b.max() > math.log(top) - 0.05


def test_gradient_and_layer2_values():
    biases = ts.variant_forget_biases("gradient", SIZES, 70)
    for b, n in zip(biases, SIZES):
        assert b.shape == (n,)
        assert b[0].item() == pytest.approx(0.0) and b[-1].item() == pytest.approx(math.log(69))
        assert torch.allclose(torch.exp(b.double()).diff(), torch.full((n - 1,), 68 / (n - 1), dtype=torch.float64))
    for X in (5, 10, 20, 30, 70):
        b = ts.variant_forget_biases("layer2", SIZES, X)
        assert b[0] is None and b[2] is None
        assert torch.allclose(b[1], torch.full((30,), math.log(X - 1)))


def test_modular_variants():
    for name, frac in (("mod5", 0.5), ("mod8", 0.8)):
        b = ts.variant_forget_biases(name, (10, 100, 10))
        assert b[0] is None and b[2] is None
        n_short = round(100 * frac)
        short, long_ = b[1][:n_short], b[1][n_short:]
        assert short[0].item() == pytest.approx(0.0) and short[-1].item() == pytest.approx(math.log(19))
        assert torch.allclose(long_, torch.full((100 - n_short,), math.log(69)))


def test_pareto_tail_exponent():
    T = ts.pareto_timescales(200_000, _g())
    assert T.min() >= 1
    # survival P(T > t) = t^-(a-1) with a = 1.54
    for t in (2.0, 10.0, 100.0):
        assert (T > t).double().mean().item() == pytest.approx(t ** -0.54, rel=0.03)
    b = ts.variant_forget_biases("pareto", SIZES, generator=_g())
    assert b[0] is None and b[2] is None and torch.isfinite(b[1]).all()


def test_published_variant():
    b = ts.variant_forget_biases("published", (10, 1000, 10))
    assert torch.allclose(b[0][:5], torch.full((5,), -math.log(math.exp(1 / 3) - 1)))
    assert torch.allclose(b[0][5:], torch.full((5,), -math.log(math.exp(1 / 4) - 1)))
    T2 = ts.timescale_from_bias(b[1].double(), "exp")
    assert torch.all(T2.diff() > 0)  # quantiles ascending
    from scipy.stats import invgamma

    assert T2.median().item() == pytest.approx(invgamma.median(0.56), rel=0.02)
    assert b[2] is None


def test_apply_timescales_writes_ih_and_zeroes_hh_on_plain_lstm():
    layers = [nn.LSTM(4, n, batch_first=True) for n in SIZES]
    biases = ts.variant_forget_biases("gradient", SIZES, 20)
    ts.apply_timescales(layers, biases)
    for layer, b, n in zip(layers, biases, SIZES):
        assert torch.equal(layer.bias_ih_l0[n : 2 * n], b)
        assert torch.equal(layer.bias_ih_l0[:n], -b)
        assert torch.all(layer.bias_hh_l0[: 2 * n] == 0)
    got = ts.forget_gate_biases(layers)
    assert all(torch.equal(g, b) for g, b in zip(got, biases))
    with pytest.raises(ValueError, match="fixed biases need prismlib.lstm.LSTMLayer"):
        ts.apply_timescales(layers, biases, fixed=True)
    with pytest.raises(ValueError, match="shape"):
        ts.apply_timescales(layers, [torch.zeros(3), None, None])


def test_bias_shift_over_units():
    b0 = torch.linspace(-1, 1, 200)
    still = ts.bias_shift(b0, b0.clone(), n_boot=50)
    assert still.effect == 0 and still.high == 0 and still.units == 200
    moved = b0 + torch.from_numpy(np.random.default_rng(0).normal(0.5, 0.1, 200)).float()
    shift = ts.bias_shift(b0, moved, n_boot=200)
    assert shift.effect == pytest.approx((moved - b0).abs().mean().item(), rel=1e-6)
    assert 0.45 < shift.low < shift.effect < shift.high < 0.55
    with pytest.raises(ValueError, match="same layer"):
        ts.bias_shift(b0, b0[:10])


def test_bias_override_says_which_end_the_trained_biases_are_nearer():
    rng = np.random.default_rng(1)
    init = rng.normal(2.0, 0.5, 300)  # e.g. chrono, mean 2
    reference = rng.normal(0.0, 0.5, 300)  # the baseline's trained biases, mean 0
    overridden = ts.bias_override(init, rng.normal(0.2, 0.5, 300), reference, n_boot=300)
    kept = ts.bias_override(init, rng.normal(1.9, 0.5, 300), reference, n_boot=300)
    assert overridden.low > 0 and kept.high < 0
    with pytest.raises(ValueError, match="finite"):
        ts.bias_override(init, np.full(300, np.nan), reference)


def test_official_assignment_matches_the_official_code():
    from prismlib import lstm

    timescales = ts
    b = timescales.official_layer2_biases(1150)
    # the grid of HuthLab/multi-timescale-LSTM-LMs: invgamma.isf(linspace(0, 1, 1151), 0.56)[1:]
    assert torch.isneginf(b[-1]) and torch.isfinite(b[:-1]).all()
    assert (b[:-1].diff() < 0).all()  # timescales decrease along the layer
    T = timescales.timescale_from_bias(b[:-1].double(), "exp")
    assert T[0] > 3e5 and 3.4 < float(T.median()) < 3.7
    layers = [lstm.LSTMLayer(4, 6), lstm.LSTMLayer(6, 6), lstm.LSTMLayer(6, 4)]
    biases = timescales.variant_forget_biases("official", [6, 6, 4])
    timescales.apply_official(layers, biases)
    for layer, bf in zip(layers, biases):
        if bf is None:
            assert not bool(layer.fixed_mask.any())
            continue
        assert bool(layer.fixed_mask.all())  # every gate bias of layers 1-2 frozen
        b_ih, b_hh = layer.effective_biases()
        assert torch.equal(b_hh[6:12], bf) and torch.equal(b_hh[:6], -bf) and not b_ih[:12].any()
