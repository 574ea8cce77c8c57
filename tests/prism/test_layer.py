"""The prism layer: sector split, band limits, and how it attaches to a Hugging Face model."""

from __future__ import annotations

import pytest
import torch
from bert_fixtures import tiny_mlm
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.prism import PrismLayer, attach_prism, sector_sizes, sector_slices
from prismlib.spectral import BAND_NAMES, allocate_bands, dct

# ----------------------------------------------------------------------------- sectors


def test_sector_sizes_of_the_paper_and_of_minilm():
    assert sector_sizes(768) == [154, 154, 154, 153, 153]  # footnote 7: the 3 extra units to LOW, MID-LOW, MID
    assert sector_sizes(384) == [77, 77, 77, 77, 76]
    assert [(s.start, s.stop) for s in sector_slices(20)] == [(0, 4), (4, 8), (8, 12), (12, 16), (16, 20)]
    with pytest.raises(ValueError, match="cannot split 3"):
        sector_sizes(3)


@given(hidden=st.integers(5, 5000), k=st.integers(1, 9))
def test_sector_sizes_cover_the_units_evenly(hidden, k):
    k = min(k, hidden)
    sizes = sector_sizes(hidden, k)
    assert sum(sizes) == hidden and len(sizes) == k
    assert max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)  # the extra units go to the first (lowest) sectors
    slices = sector_slices(hidden, k)
    assert slices[0].start == 0 and slices[-1].stop == hidden
    assert all(a.stop == b.start for a, b in zip(slices, slices[1:]))


# ----------------------------------------------------------------------------- band limits


@settings(max_examples=12, deadline=None)
@given(lengths=st.lists(st.integers(5, 48), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_each_sector_has_no_energy_outside_its_band(lengths, seed):
    gen = torch.Generator().manual_seed(seed)
    hidden, n = 13, max(lengths)
    h = torch.randn(len(lengths), n, hidden, generator=gen, dtype=torch.float64)
    mask = (torch.arange(n)[None] < torch.tensor(lengths)[:, None]).long()
    out = PrismLayer(hidden)(h, mask)
    assert out.shape == h.shape
    for row, length in enumerate(lengths):
        assert torch.all(out[row, length:] == 0)  # padding comes out zero
        bands = allocate_bands(length)
        for band, sl in zip(bands, sector_slices(hidden)):
            coef = dct(out[row, :length, sl], dim=0)  # (length, units) DCT along the tokens
            outside = torch.cat([coef[: band.lo], coef[band.hi :]])
            inside = coef[band.lo : band.hi]
            assert outside.abs().max() <= 1e-9 * (1 + inside.abs().max())
            # and inside the band the sector is unchanged
            expect = dct(h[row, :length, sl], dim=0)[band.lo : band.hi]
            torch.testing.assert_close(inside, expect)


def test_full_length_rows_equal_per_row_path_and_no_mask():
    gen = torch.Generator().manual_seed(1)
    h = torch.randn(3, 40, 20, generator=gen)
    layer = PrismLayer(20)
    torch.testing.assert_close(layer(h, torch.ones(3, 40)), layer(h, None))
    # a batch with one shorter row: the full rows are filtered as without padding
    mask = torch.ones(3, 40)
    mask[1, 30:] = 0
    out = layer(h, mask)
    torch.testing.assert_close(out[[0, 2]], layer(h[[0, 2]]), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out[1:2, :30], layer(h[1:2, :30]), rtol=1e-5, atol=1e-5)


def test_prism_layer_is_differentiable_and_rejects_bad_masks():
    h = torch.randn(2, 16, 10, requires_grad=True)
    PrismLayer(10)(h).square().sum().backward()
    assert h.grad is not None and torch.isfinite(h.grad).all()
    left_padded = torch.ones(2, 16)
    left_padded[0, :3] = 0
    with pytest.raises(ValueError, match="right padding"):
        PrismLayer(10)(h, left_padded)
    with pytest.raises(ValueError, match="unknown band"):
        PrismLayer(10, bands=("LOW", "TOP"))


def test_prism_runs_in_float32_under_bfloat16_autocast():
    h = torch.randn(2, 32, 10)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = PrismLayer(10)(h)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, PrismLayer(10)(h))


# ----------------------------------------------------------------------------- attaching


def test_attach_after_last_layer_feeds_hidden_states_and_the_mlm_head():
    model = tiny_mlm()
    ids = torch.randint(5, 100, (2, 24))
    mask = torch.ones_like(ids)
    mask[1, 18:] = 0
    with torch.no_grad():
        plain = model.bert(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        handle = attach_prism(model, "last")
        base = model.bert(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        full = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    expect = handle.prism(plain.last_hidden_state, mask)
    torch.testing.assert_close(base.last_hidden_state, expect)
    torch.testing.assert_close(base.hidden_states[-1], expect)
    torch.testing.assert_close(full.hidden_states[-1], expect)
    # the layers before the last are untouched
    for a, b in zip(plain.hidden_states[:-1], base.hidden_states[:-1]):
        torch.testing.assert_close(a, b)
    # the MLM logits are computed from the prism output
    torch.testing.assert_close(full.logits, model.cls(expect))
    assert torch.all(base.last_hidden_state[1, 18:] == 0)
    # detaching restores the plain model
    handle.detach()
    assert not handle.attached
    with torch.no_grad():
        again = model.bert(input_ids=ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(again, plain.last_hidden_state)


def test_attach_after_every_layer_filters_each_layer_output():
    model = tiny_mlm()
    ids = torch.randint(5, 100, (2, 20))
    with torch.no_grad():
        model(input_ids=ids, output_hidden_states=True)  # library hooks installed before ours
        handle = attach_prism(model, "every")
        out = model.bert(input_ids=ids, output_hidden_states=True)
    assert handle.layer_indices == [0, 1]
    layers = model.bert.encoder.layer
    # recompute by hand: layer 0 on the embeddings, prism, layer 1, prism
    handle.detach()
    with torch.no_grad():
        x = model.bert.embeddings(input_ids=ids)
        torch.testing.assert_close(out.hidden_states[0], x)
        for i, layer in enumerate(layers):
            x = handle.prism(layer(x, attention_mask=None))
            torch.testing.assert_close(out.hidden_states[i + 1], x, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.last_hidden_state, x, rtol=1e-5, atol=1e-5)


def test_gradients_flow_through_the_prism_into_the_encoder():
    model = tiny_mlm().train()
    attach_prism(model, "last")
    ids = torch.randint(5, 100, (2, 16))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    grad = model.bert.encoder.layer[0].attention.self.query.weight.grad
    assert grad is not None and grad.abs().sum() > 0


def test_band_names_are_the_papers():
    assert PrismLayer(768).bands == BAND_NAMES
    assert PrismLayer(768).sector("LOW") == slice(0, 154)
    assert PrismLayer(768).sector("HIGH") == slice(615, 768)


def test_prism_layer_refuses_nan_instead_of_spreading_it():
    layer = PrismLayer(10)
    h = torch.randn(2, 16, 10)
    h[1, 3, 7] = float("nan")
    with pytest.raises(ValueError, match=r"NaN or infinite values \(first at batch 1, position 3, unit 7\)"):
        layer(h)
    h[1, 3, 7] = float("-inf")
    with pytest.raises(ValueError, match=r"NaN or infinite values \(first at batch 1, position 3, unit 7\)"):
        layer(h.half())
    assert torch.isfinite(layer(torch.randn(2, 16, 10))).all()
    huge = torch.full((2, 16, 10), 3e38)  # finite entries whose sum overflows: not refused
    layer(huge)
    layer(torch.full((2, 16, 10), 6e4, dtype=torch.float16))
