"""Features of windows (prismlib.probing.features): one pass, filtering per real length, position
sampling, the smooth, Haar and DC conditions. (Features from the states cache are tested in
``test_states.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st_
from transformers import BertConfig, BertModel

from prismlib.probing import CONDITIONS, Encoder, Unit, encode_windows, pack_units, sample_positions
from prismlib.probing import features as encode
from prismlib.spectral import allocate_bands, band_pass, bands_for_lengths, filters


@pytest.fixture(scope="module")
def tiny_encoder() -> Encoder:
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=300, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
    return Encoder(name="tiny-bert", tokenizer=None, model=BertModel(cfg).eval(), device=torch.device("cpu"))


FP16 = dict(atol=2e-3, rtol=1e-2)
"""Tolerance of features stored as float16 against the same filter computed otherwise
(another path, or the float32 states): float16 keeps 11 significant bits, a relative
rounding of 5e-4, and the cached path filters float16-rounded states."""


def windows(lengths, seed=0):
    rng = np.random.default_rng(seed)
    sources = []
    for s, n in enumerate(lengths):
        units = [Unit([int(rng.integers(5, 299))], int(rng.integers(0, 4)), s * 1000 + i) for i in range(n)]
        sources.append((f"src{s}", units))
    return pack_units(sources, 1, 2, window=64)


def test_features_equal_filtering_each_window_alone(tiny_encoder):
    wins = windows([40, 7, 62, 20])
    feats = encode_windows(tiny_encoder, wins, {-1: CONDITIONS, 1: ("ORIG", "LOW")}, positions=5, seed=3, batch_size=3)
    picks = sample_positions(wins, 5, 3)
    f = feats[-1]
    assert len(f) == sum(len(p) for p in picks) == 20
    row = 0
    for i, w in enumerate(wins):
        with torch.no_grad():
            h = tiny_encoder.model(input_ids=torch.from_numpy(w.input_ids)[None], output_hidden_states=True).hidden_states[-1][0]
        bands = {b.name: b for b in allocate_bands(len(w))}
        for cond in CONDITIONS:
            want = h if cond == "ORIG" else band_pass(h, bands[cond])
            got = f.x[cond][row : row + len(picks[i])].float()
            torch.testing.assert_close(got, want[picks[i]], **FP16)
        assert f.labels[row : row + len(picks[i])].tolist() == w.labels[picks[i]].tolist()
        assert (f.window[row : row + len(picks[i])] == i).all()
        row += len(picks[i])
    assert set(feats[1].x) == {"ORIG", "LOW"}
    assert torch.equal(feats[1].labels, f.labels)


def test_positions_are_labelled_seeded_and_capped():
    wins = windows([40, 3])
    a, b = sample_positions(wins, 8, 0), sample_positions(wins, 8, 0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert len(a[0]) == 8 and len(a[1]) == 3  # a short window gives what it has
    assert all((wins[i].labels[p] >= 0).all() for i, p in enumerate(a))
    assert not np.array_equal(a[0], sample_positions(wins, 8, 1)[0])
    assert len(sample_positions(wins, 0, 0)[0]) == 40


def test_unknown_condition(tiny_encoder):
    with pytest.raises(ValueError, match="unknown condition"):
        encode_windows(tiny_encoder, windows([5]), {-1: ("ULTRA",)}, positions=2, seed=0)


def test_unit_weights_sum_to_one_per_unit():
    units = np.array([7, 7, 3, 9, 9, 9, 7])
    w = encode.unit_weights(units)
    assert w.dtype == np.float32
    assert w.tolist() == pytest.approx([1 / 3, 1 / 3, 1, 1 / 3, 1 / 3, 1 / 3, 1 / 3])


def test_weights_hold_over_the_sampled_rows(tiny_encoder):
    """A long unit and a short one count the same after the position sample."""
    long_unit = Unit(list(range(10, 50)), 1, 0)
    short = [Unit([60 + i], 2, 1 + i) for i in range(3)]
    wins = pack_units([("a", [long_unit, *short])], 1, 2, window=64)
    f = encode_windows(tiny_encoder, wins, {-1: ("ORIG",)}, positions=8, seed=0)[-1]
    totals = {u: float(f.weights[f.unit == u].sum()) for u in f.unit.unique().tolist()}
    assert all(v == pytest.approx(1.0) for v in totals.values())


def test_special_tokens_outside_filters_only_the_real_tokens(tiny_encoder):
    wins = windows([40, 7])
    f = encode_windows(tiny_encoder, wins, {-1: ("ORIG", "LOW", "HIGH")}, positions=0, seed=0, specials="outside")[-1]
    row = 0
    for w in wins:
        with torch.no_grad():
            h = tiny_encoder.model(input_ids=torch.from_numpy(w.input_ids)[None], output_hidden_states=True).hidden_states[-1][0]
        real = h[1:-1]
        bands = {b.name: b for b in allocate_bands(len(real))}
        n = int((w.labels >= 0).sum())
        for cond in ("LOW", "HIGH"):
            torch.testing.assert_close(f.x[cond][row : row + n].float(), band_pass(real, bands[cond]), atol=2e-3, rtol=1e-2)
        torch.testing.assert_close(f.x["ORIG"][row : row + n].float(), real, atol=2e-3, rtol=1e-2)
        row += n
    with pytest.raises(ValueError, match="specials must be one of"):
        encode_windows(tiny_encoder, wins, {-1: ("ORIG",)}, positions=0, seed=0, specials="between")


def test_relabelled_keeps_rows_and_takes_new_labels(tiny_encoder):
    wins = windows([30, 12])
    f = encode_windows(tiny_encoder, wins, {-1: ("ORIG",)}, positions=5, seed=0)[-1]
    shifted = [type(w)(w.input_ids, np.where(w.labels >= 0, w.labels + 10, w.labels), w.weights, w.unit_ids, w.source) for w in wins]
    g = f.relabelled(shifted)
    assert torch.equal(g.labels, f.labels + 10) and g.x is f.x and torch.equal(g.weights, f.weights)
    unlabelled = [type(w)(w.input_ids, np.full_like(w.labels, -1), w.weights, w.unit_ids, w.source) for w in wins]
    with pytest.raises(ValueError, match="do not label every row"):
        f.relabelled(unlabelled)


def test_both_placements_from_one_pass(tiny_encoder):
    wins = windows([40, 7, 25])
    both = encode_windows(tiny_encoder, wins, {-1: ("ORIG", "LOW", "LOW|outside", "HIGH|outside")}, positions=6, seed=1)[-1]
    inside = encode_windows(tiny_encoder, wins, {-1: ("LOW",)}, positions=6, seed=1)[-1]
    outside = encode_windows(tiny_encoder, wins, {-1: ("LOW", "HIGH")}, positions=6, seed=1, specials="outside")[-1]
    assert torch.equal(both.x["LOW"], inside.x["LOW"])
    assert torch.equal(both.x["LOW|outside"], outside.x["LOW"]) and torch.equal(both.x["HIGH|outside"], outside.x["HIGH"])
    assert not torch.equal(both.x["LOW"], both.x["LOW|outside"])
    with pytest.raises(ValueError, match="specials must be one of"):
        encode_windows(tiny_encoder, wins, {-1: ("LOW|between",)}, positions=6, seed=1)


# ------------------------------------------------------------------ smooth and Haar conditions


def test_filter_conditions_take_smooth_and_haar_names():
    from prismlib.spectral import bands_for_lengths, haar_band_pass, haar_bands_for_lengths, smooth_band_pass

    lengths = [30, 12, 21]
    h = torch.randn(3, 30, 4)
    names = ("ORIG", "MID", *encode.SMOOTH_CONDITIONS, *encode.HAAR_CONDITIONS)
    got = encode.filter_conditions(h, lengths, names)
    assert set(got) == set(names)
    smooth = smooth_band_pass(h, bands_for_lengths(lengths, "MID"), lengths=lengths, width=encode.SMOOTH_WIDTH, shape=encode.SMOOTH_SHAPE)
    torch.testing.assert_close(got["smooth:MID"], smooth)
    torch.testing.assert_close(got["haar:MID"], haar_band_pass(h, haar_bands_for_lengths(lengths, "MID"), lengths=lengths))
    assert not torch.allclose(got["smooth:MID"], got["MID"]) and not torch.allclose(got["haar:MID"], got["MID"])
    # each family's five bands sum back to the real positions
    real = torch.stack([torch.arange(30) < n for n in lengths])[..., None]
    for family in (encode.SMOOTH_CONDITIONS, encode.HAAR_CONDITIONS):
        torch.testing.assert_close(sum(got[c] for c in family), h * real, atol=1e-5, rtol=1e-5)
    for bad in ("ULTRA", "smooth:ULTRA", "haar:", "smooth:ORIG", "wavelet:LOW", "smooth:haar:LOW"):
        with pytest.raises(ValueError, match=r"unknown condition .*'smooth:<band>'.*'haar:<band>'"):
            encode.filter_conditions(h, lengths, (bad,))


def test_smooth_and_haar_conditions_in_encode_windows(tiny_encoder):
    from prismlib.spectral import haar_band_pass, haar_bands, smooth_band_pass

    wins = windows([40, 7, 25])
    conds = ("ORIG", "smooth:LOW|outside", "smooth:LOW", "haar:HIGH|outside", "haar:MID")
    f = encode_windows(tiny_encoder, wins, {-1: conds}, positions=0, seed=0)[-1]
    row = 0
    for w in wins:
        with torch.no_grad():
            h = tiny_encoder.model(input_ids=torch.from_numpy(w.input_ids)[None], output_hidden_states=True).hidden_states[-1][0]
        n, real = len(w), h[1:-1]
        labelled = np.flatnonzero(w.labels >= 0)
        want = {
            "smooth:LOW": smooth_band_pass(h, allocate_bands(n)[0])[labelled],
            "smooth:LOW|outside": smooth_band_pass(real, allocate_bands(n - 2)[0])[labelled - 1],
            "haar:MID": haar_band_pass(h, haar_bands(n)[2])[labelled],
            "haar:HIGH|outside": haar_band_pass(real, haar_bands(n - 2)[4])[labelled - 1],
        }
        for cond, value in want.items():
            torch.testing.assert_close(f.x[cond][row : row + len(labelled)].float(), value, atol=2e-3, rtol=1e-2)
        row += len(labelled)
    with pytest.raises(ValueError, match="unknown condition 'smooth:ULTRA'"):
        encode_windows(tiny_encoder, wins, {-1: ("smooth:ULTRA|outside",)}, positions=0, seed=0)


def _feats(x: torch.Tensor, labels=(0, 1, 1)) -> encode.Features:
    n = len(labels)
    rows = torch.arange(n)
    return encode.Features({"ORIG": x}, torch.tensor(labels), torch.ones(n), rows, rows, torch.zeros(n, dtype=torch.long))


def test_pool_features_puts_each_model_and_column_set_under_its_name_on_the_same_rows():
    a, b = torch.randn(3, 6), torch.randn(3, 6)
    pooled = encode.pool_features({"a": {"test": _feats(a)}, "b": {"test": _feats(b)}}, {"b LOW": ("b", slice(0, 2))})
    test = pooled["test"]
    assert list(test.x) == ["a", "b", "b LOW"]
    assert torch.equal(test.x["a"], a) and torch.equal(test.x["b"], b) and torch.equal(test.x["b LOW"], b[:, :2])
    with pytest.raises(RuntimeError, match="features of b are not on the same rows"):
        encode.pool_features({"a": {"test": _feats(a)}, "b": {"test": _feats(b, labels=(1, 1, 1))}})


@settings(max_examples=40, deadline=None)
@given(
    lengths=st_.lists(st_.integers(5, 40), min_size=1, max_size=4),
    hidden=st_.integers(1, 6),
    seed=st_.integers(0, 2**16),
)
def test_dc_condition_is_each_rows_mean_over_its_real_length(lengths, hidden, seed):
    """DC = DCT index 0 alone: each unit's mean over the row's real length at every real
    position, zeros on the padding, and it lies inside LOW (LOW - DC keeps no mean)."""
    h = torch.randn(len(lengths), max(lengths), hidden, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    out = encode.filter_conditions(h, lengths, ("DC", "LOW"))
    for row, n in enumerate(lengths):
        want = h[row, :n].mean(0, keepdim=True).expand(n, hidden)
        torch.testing.assert_close(out["DC"][row, :n], want)
        assert (out["DC"][row, n:] == 0).all()
        torch.testing.assert_close((out["LOW"][row, :n] - out["DC"][row, :n]).mean(0), torch.zeros(hidden, dtype=torch.float64))
    assert encode.parse_condition("DC") == ("dc", "DC")


def test_label_range_keeps_the_rows_of_the_range_renumbered_and_reweighted():
    n = 12
    x = torch.arange(n * 2, dtype=torch.float16).reshape(n, 2)
    labels = torch.tensor([0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5])
    units = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])  # two rows per unit
    f = encode.Features({"ORIG": x}, labels, torch.full((n,), 0.5), torch.arange(n) // 6, units, torch.arange(n) % 6)
    b = f.label_range(2, 4)
    assert b.labels.tolist() == [0, 1, 0, 1]
    assert b.position.tolist() == [2, 3, 2, 3] and b.window.tolist() == [0, 0, 1, 1]
    assert torch.equal(b.x["ORIG"], x[[2, 3, 8, 9]])
    # units 1 and 4 keep both their rows (weight 1/2 each); a unit cut in half keeps weight 1 in its row
    assert b.weights.tolist() == [0.5, 0.5, 0.5, 0.5]
    c = f.label_range(1, 3)
    assert c.unit.tolist() == [0, 1, 3, 4] and c.weights.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert len(f.label_range(6, 9)) == 0
    with pytest.raises(ValueError, match="0 <= lo < hi"):
        f.label_range(3, 3)


def test_encode_filter_conditions_decomposes_once_and_matches_band_pass(monkeypatch):
    from prismlib.probing import CONDITIONS, filter_conditions

    calls = []
    decompose = filters.band_decomposition
    monkeypatch.setattr(filters, "band_decomposition", lambda *a, **k: calls.append(1) or decompose(*a, **k))
    lengths = [30, 21]
    h = torch.randn(2, 30, 4, dtype=torch.float64)
    for conditions, decompositions in ((CONDITIONS, 1), (("MID",), 0), (("HIGH", "ORIG", "LOW"), 1)):
        calls.clear()
        out = filter_conditions(h, lengths, conditions)
        assert len(calls) == decompositions, conditions
        assert list(out) == list(conditions)
        for name in conditions:
            want = h if name == "ORIG" else band_pass(h, bands_for_lengths(lengths, name), lengths=lengths)
            torch.testing.assert_close(out[name], want, atol=1e-12, rtol=0)
