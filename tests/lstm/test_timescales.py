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
        assert (T > t).double().mean().item() == pytest.approx(t**-0.54, rel=0.03)
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


# -- exact values, boundaries, both conventions (issue 23: the mutants of timescales are killed) --


def test_every_conversion_keeps_a_float64_tensor_float64_and_gives_known_values():
    f = torch.tensor([0.5, 0.75], dtype=torch.float64)
    T = torch.tensor([2.0, 4.0], dtype=torch.float64)
    b = torch.tensor([0.0, 1.0], dtype=torch.float64)
    for out in (
        ts.timescale_from_forget(f),
        ts.timescale_from_forget(f, "exp"),
        ts.forget_from_timescale(T),
        ts.forget_from_timescale(T, "exp"),
        ts.bias_from_timescale(T),
        ts.bias_from_timescale(T, "exp"),
        ts.timescale_from_bias(b),
        ts.timescale_from_bias(b, "exp"),
    ):
        assert out.dtype == torch.float64
    assert ts.timescale_from_forget(f).tolist() == [2.0, 4.0]
    assert ts.timescale_from_forget(f, "exp").tolist() == pytest.approx([1 / math.log(2), -1 / math.log(0.75)], rel=1e-12)
    assert ts.forget_from_timescale(T).tolist() == [0.5, 0.75]
    # the "exp" form: f = exp(-1 / T), so that f^t = exp(-t / T)
    assert ts.forget_from_timescale(T, "exp").tolist() == pytest.approx([math.exp(-0.5), math.exp(-0.25)], rel=1e-12)
    assert ts.bias_from_timescale(T).tolist() == pytest.approx([0.0, math.log(3)], abs=1e-12)
    assert ts.bias_from_timescale(T, "exp").tolist() == pytest.approx([-math.log(math.expm1(0.5)), -math.log(math.expm1(0.25))])
    assert ts.timescale_from_bias(b).tolist() == pytest.approx([2.0, 1 + math.e], rel=1e-12)
    softplus = [math.log1p(math.exp(-x)) for x in (0.0, 1.0)]
    assert ts.timescale_from_bias(b, "exp").tolist() == pytest.approx([1 / s for s in softplus], rel=1e-12)
    # plain numbers come back in the default dtype; an integer timescale is a timescale
    assert ts.bias_from_timescale(2).dtype == torch.get_default_dtype() and ts.bias_from_timescale(3).item() == pytest.approx(math.log(2))
    assert ts.forget_from_timescale(1.5).item() == pytest.approx(1 / 3)
    assert ts.bias_from_timescale(1.5).item() == pytest.approx(math.log(0.5))
    assert ts.forget_from_timescale(0.5, "exp").item() == pytest.approx(math.exp(-2))
    assert ts.bias_from_timescale(0.5, "exp").item() == pytest.approx(-math.log(math.expm1(2)))


@pytest.mark.parametrize("conv", ts.CONVENTIONS)
def test_every_out_of_range_value_raises_even_beside_valid_ones(conv):
    low = 1.0 if conv == "logit" else 0.0  # the smallest timescale that is not one
    for fn in (ts.forget_from_timescale, ts.bias_from_timescale):
        with pytest.raises(ValueError, match="exceed 1" if conv == "logit" else "positive"):
            fn(low, conv)
        with pytest.raises(ValueError, match="exceed 1" if conv == "logit" else "positive"):
            fn(torch.tensor([3.0, low]), conv)
        with pytest.raises(ValueError, match="exceed 1" if conv == "logit" else "positive"):
            fn(-1.0, conv)
    for bad in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            ts.timescale_from_forget(bad, conv)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        ts.timescale_from_forget(torch.tensor([0.5, 1.0]), conv)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        ts.timescale_from_forget(torch.tensor([0.0, 0.5]), conv)
    for fn in (ts.forget_from_timescale, ts.bias_from_timescale, ts.timescale_from_forget, ts.timescale_from_bias):
        with pytest.raises(ValueError, match="convention"):
            fn(0.5, "log")


def test_samplers_are_their_formulas_on_the_generator_s_draws():
    u = torch.rand(6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    assert torch.equal(ts.chrono_bias(6, 20, torch.Generator().manual_seed(3)), torch.log(1 + u * 18).float())
    assert torch.equal(ts.chrono_bias(6, 2.5, torch.Generator().manual_seed(3)), torch.log(1 + u * 0.5).float())
    assert torch.allclose(ts.pareto_timescales(6, torch.Generator().manual_seed(3)), (1 - u) ** (-1 / 0.54), rtol=1e-12)
    assert torch.allclose(ts.pareto_timescales(6, torch.Generator().manual_seed(3), 3.0), (1 - u) ** -0.5, rtol=1e-12)
    assert ts.PARETO_EXPONENT == 1.54 and ts.INVGAMMA_SHAPE == 0.56
    assert not torch.equal(
        ts.pareto_timescales(6, torch.Generator().manual_seed(4)), ts.pareto_timescales(6, torch.Generator().manual_seed(3))
    )
    with pytest.raises(ValueError, match="t_max > 2"):
        ts.chrono_bias(4, 2.0, torch.Generator())
    with pytest.raises(ValueError, match="t_max > 2"):
        ts.gradient_bias(4, 2.0)
    assert torch.allclose(ts.gradient_bias(3, 2.5).double(), torch.log(torch.tensor([1.0, 1.25, 1.5], dtype=torch.float64)))
    with pytest.raises(ValueError, match="normalisable"):
        ts.pareto_timescales(3, torch.Generator(), exponent=1.0)
    assert torch.isfinite(ts.pareto_timescales(3, torch.Generator(), exponent=1.5)).all()


def test_inverse_gamma_quantiles():
    from scipy.stats import invgamma

    q = np.arange(1, 5) / 5
    np.testing.assert_allclose(ts.inverse_gamma_timescales(4).numpy(), invgamma.ppf(q, 0.56))
    np.testing.assert_allclose(ts.inverse_gamma_timescales(4, 2.0, scale=3.0).numpy(), invgamma.ppf(q, 2.0, scale=3.0))


def test_variant_arguments_are_checked():
    assert ts.variant_forget_biases("baseline", SIZES) == [None, None, None]
    with pytest.raises(ValueError, match="takes no timescale"):
        ts.variant_forget_biases("baseline", SIZES, 20)
    with pytest.raises(ValueError, match="takes no timescale"):
        ts.variant_forget_biases("mod5", SIZES, 20)
    with pytest.raises(ValueError, match="sets layer 2"):
        ts.variant_forget_biases("layer2", (8,), 5)
    with pytest.raises(ValueError, match="defined for 3 layers"):
        ts.variant_forget_biases("middle", (8, 8, 8, 8), 20, _g())
    two = ts.variant_forget_biases("layer2", (8, 12), 5)  # two layers are enough for layer 2
    assert two[0] is None and torch.allclose(two[1], torch.full((12,), math.log(4)))
    assert [b.shape for b in ts.variant_forget_biases("gradient", (8, 12), 5)] == [(8,), (12,)]
    assert [b.shape for b in ts.variant_forget_biases("layerwise", (8, 12), 20, _g())] == [(8,), (12,)]
    published = ts.variant_forget_biases("published", (10, 30, 20))
    assert published[1].shape == (30,) and published[0].shape == (10,)
    np.testing.assert_allclose(
        published[1].double().numpy(), ts.bias_from_timescale(ts.inverse_gamma_timescales(30), "exp").numpy(), rtol=1e-6
    )
    odd = ts.variant_forget_biases("published", (5, 4, 3))  # layer 1: 2 units at T = 3, 3 at T = 4
    assert torch.allclose(ts.timescale_from_bias(odd[0].double(), "exp"), torch.tensor([3.0, 3, 4, 4, 4], dtype=torch.float64), rtol=1e-5)
    assert ts.variant_forget_biases("official", (5, 4, 3))[1].shape == (4,)


def test_official_layer2_biases_are_the_official_grid():
    from scipy.stats import invgamma

    T = invgamma.isf(np.linspace(0, 1, 6), 0.56, scale=1.0)[1:]
    b = ts.official_layer2_biases(5)
    assert T[-1] == 0 and torch.isneginf(b[-1])
    np.testing.assert_allclose(b[:-1].double().numpy(), -np.log(np.expm1(1 / T[:-1])), rtol=1e-6)
    assert b.dtype == torch.float32


def test_apply_official_and_apply_timescales_refuse_what_they_cannot_set():
    from prismlib import lstm

    with pytest.raises(ValueError, match="apply_official needs"):
        ts.apply_official([nn.LSTM(4, 6)], [torch.zeros(6)])
    with pytest.raises(ValueError, match="2 bias vectors for 3 layers"):
        ts.apply_timescales([nn.LSTM(4, n) for n in SIZES], [None, None])
    for bad in (torch.tensor([float("nan"), 0.0, 0.0]), torch.tensor([float("-inf"), 0.0, 0.0])):
        with pytest.raises(ValueError, match="must be finite"):
            ts.apply_timescales([nn.LSTM(4, 3)], [bad])
    with pytest.raises(ValueError, match="must be finite"):
        ts.apply_official([lstm.LSTMLayer(4, 3)], [torch.tensor([float("nan"), 0.0, 0.0])])
    for layer in (nn.LSTM(4, 3, num_layers=2), nn.LSTM(4, 3, bidirectional=True), nn.LSTM(4, 3, bias=False)):
        with pytest.raises(ValueError, match="single-layer, unidirectional"):
            ts.apply_timescales([layer], [torch.zeros(3)])
    with pytest.raises(ValueError, match="freeze must be one of"):
        ts.apply_timescales([lstm.LSTMLayer(4, 3)], [torch.zeros(3)], fixed=True, freeze="gates")
    layer = nn.LSTM(4, 3)
    ts.apply_timescales([layer], [None])  # None leaves the layer as it was
    assert not (layer.bias_hh_l0 == 0).all()


@pytest.mark.parametrize(("freeze", "gates"), [("input_forget", (1, 1, 0, 0)), ("forget", (0, 1, 0, 0)), ("all", (1, 1, 1, 1))])
def test_freeze_masks_and_what_a_fixed_layer_keeps(freeze, gates):
    from prismlib import lstm

    mask = ts.freeze_mask(3, freeze)
    assert mask.dtype == torch.bool and mask.tolist() == [bool(g) for g in gates for _ in range(3)]
    layer = lstm.LSTMLayer(4, 3)
    b = torch.tensor([0.5, 1.0, 2.0])
    ts.apply_timescales([layer], [b], fixed=True, freeze=freeze)
    assert torch.equal(layer.fixed_mask, mask)
    b_ih, b_hh = layer.effective_biases()
    assert torch.equal(b_ih[:6], torch.cat([-b, b])) and not b_hh[:6].any()
    with pytest.raises(ValueError, match="freeze must be one of"):
        ts.freeze_mask(3, "gates")


def test_forget_gate_biases_add_both_bias_tensors():
    torch.manual_seed(0)
    layer = nn.LSTM(4, 3)
    (got,) = ts.forget_gate_biases([layer])
    assert torch.equal(got, (layer.bias_ih_l0[3:6] + layer.bias_hh_l0[3:6]).detach())


def test_describe_labels():
    assert ts.describe("baseline") == "baseline"
    assert ts.describe("layerwise", 20) == "layerwise T=20"
    assert ts.describe("layer2", 70.0, fixed=True) == "layer2 X=70 (fixed)"
    assert ts.describe("gradient", 20, fixed=True, freeze="forget") == "gradient T=20 (fixed: forget)"
    assert ts.describe("gradient", 20, freeze="forget") == "gradient T=20"


def test_bias_statistics_are_their_formulas_with_both_signs_and_their_seeds():
    from prismlib.stats import paired_bootstrap

    rng = np.random.default_rng(3)
    init = rng.normal(0.0, 1.0, 50)
    final = init + rng.normal(0.0, 0.5, 50)  # shifts of both signs: mean |delta| is not |mean delta|
    shift = ts.bias_shift(init, final, n_boot=300, seed=4)
    assert shift.effect == pytest.approx(np.abs(final - init).mean(), rel=1e-12)
    assert shift.effect > 2 * abs((final - init).mean())
    ref = paired_bootstrap(lambda x, y, axis: np.abs(y - x).mean(axis), (init, final), n_boot=300, seed=4)
    assert (shift.low, shift.high) == (ref.low, ref.high)
    default = ts.bias_shift(init, final)
    ref = paired_bootstrap(lambda x, y, axis: np.abs(y - x).mean(axis), (init, final))
    assert (default.low, default.high) == (ref.low, ref.high)
    reference = rng.normal(-1.0, 1.0, 50)
    final2 = init - 2.0 + rng.normal(0.0, 0.5, 50)  # moved down, past the reference
    over = ts.bias_override(init, final2, reference, n_boot=300, seed=4)
    m = final2.mean()
    assert over.effect == pytest.approx(abs(m - init.mean()) - abs(m - reference.mean()), rel=1e-12)

    def stat(x, y, z, axis):
        return np.abs(y.mean(axis) - x.mean(axis)) - np.abs(y.mean(axis) - z.mean(axis))

    ref = paired_bootstrap(stat, (init, final2, reference), n_boot=300, seed=4)
    assert (over.low, over.high) == pytest.approx((ref.low, ref.high), rel=1e-12)
    default = ts.bias_override(init, final2, reference)
    ref = paired_bootstrap(stat, (init, final2, reference))
    assert (default.low, default.high) == pytest.approx((ref.low, ref.high), rel=1e-12)
    for args in ((init, final2[:10], reference), (init, final2, reference[:10]), (init[:10], final2, reference)):
        with pytest.raises(ValueError, match="one shape"):
            ts.bias_override(*args)
    for bad in (np.ones((2, 3)), np.ones(1), np.array([np.inf, 0.0, 1.0]), np.array([0.0, np.nan, 1.0])):
        with pytest.raises(ValueError, match="per-unit biases"):
            ts.bias_shift(bad, bad)
    assert ts.bias_shift(np.array([0.0, 1.0]), np.array([1.0, 1.0]), n_boot=20).units == 2


def test_setting_biases_leaves_the_cell_and_output_gate_entries_alone():
    from prismlib import lstm

    torch.manual_seed(0)
    plain = nn.LSTM(4, 3)
    ih, hh = plain.bias_ih_l0.detach().clone(), plain.bias_hh_l0.detach().clone()
    ts.apply_timescales([plain], [torch.ones(3)])
    assert torch.equal(plain.bias_ih_l0[6:], ih[6:]) and torch.equal(plain.bias_hh_l0[6:], hh[6:])
    layer = lstm.LSTMLayer(4, 3)
    ih, hh = (t.detach().clone() for t in layer.effective_biases())
    ts.apply_official([layer], [torch.ones(3)])
    b_ih, b_hh = layer.effective_biases()
    assert torch.equal(b_ih[6:], ih[6:]) and torch.equal(b_hh[6:], hh[6:])
    with pytest.raises(ValueError, match="freeze must be one of"):  # checked even when nothing is frozen
        ts.apply_timescales([nn.LSTM(4, 3)], [torch.ones(3)], freeze="gates")


def test_pareto_variant_sets_layer_2_from_the_seeded_draw():
    b = ts.variant_forget_biases("pareto", SIZES, generator=_g())
    assert b[1].shape == (30,)
    assert torch.equal(b[1], ts.bias_from_timescale(ts.pareto_timescales(30, _g())).float())
