"""spectral_profile on tiny random BERT- and GPT-2-shaped models (built from configs, no download)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, T5Config, T5Model

from prismlib.probing.encoders import _char_tokenizer
from prismlib.spectral import BAND_NAMES, allocate_bands, band_energy, band_pass, spectral_profile, token_ids

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def bert(max_len=64):
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_len
    )
    return BertModel(cfg).eval()


def gpt2(max_len=64):
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=200, n_embd=24, n_layer=2, n_head=2, n_positions=max_len, bos_token_id=0, eos_token_id=0)
    return GPT2Model(cfg).eval()


def id_lists(lengths, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(5, 200, size=n).tolist() for n in lengths]


@pytest.mark.parametrize("make, hidden", [(bert, 32), (gpt2, 24)])
def test_shapes_fractions_truncation_and_padding(make, hidden):
    model = make()
    texts = id_lists([9, 40, 100, 64, 17, 5])
    with pytest.warns(UserWarning, match="1 of 7 texts"):
        df = spectral_profile(model, [*texts, [7, 8, 9]], layer=1, batch_size=3)
    assert df.shape == (5, hidden) and list(df.index) == list(BAND_NAMES)
    np.testing.assert_allclose(df.sum(axis=0), 1.0, atol=1e-9)
    assert (df.to_numpy() >= 0).all()
    assert df.attrs["texts"] == 6 and df.attrs["skipped"] == 1
    assert df.attrs["tokens"] == 9 + 40 + 64 + 64 + 17 + 5  # the 100-token text is cut to the model's 64
    # padding and batching change nothing: one text per call gives the same profile
    alone = spectral_profile(model, texts, layer=1, batch_size=1)
    np.testing.assert_allclose(alone.to_numpy(), df.to_numpy(), atol=1e-5)
    assert model.training is False


@pytest.mark.parametrize("make", [bert, gpt2])
def test_several_layers_come_from_one_pass_and_match_one_at_a_time(make):
    model = make()
    texts = id_lists([9, 40, 64, 17])
    calls = []
    forward = model.forward

    def counted(*args, **kwargs):
        calls.append(1)
        return forward(*args, **kwargs)

    model.forward = counted
    df = spectral_profile(model, texts, layer=[2, 0, -1], batch_size=2)
    assert len(calls) == 2  # two batches, every layer from the same call
    assert df.index.names == ["layer", "band"] and list(df.index.get_level_values("layer").unique()) == [2, 0, -1]
    for layer in (2, 0, -1):
        one = spectral_profile(model, texts, layer=layer, batch_size=2)
        np.testing.assert_allclose(df.loc[layer].to_numpy(), one.to_numpy(), atol=1e-12)
        assert list(df.loc[layer].index) == list(BAND_NAMES)
    assert df.attrs["layer"] == [2, 0, -1]
    with pytest.raises(ValueError, match="distinct"):
        spectral_profile(model, texts, layer=[1, 1])
    with pytest.raises(ValueError, match="layer 9 is out of range"):
        spectral_profile(model, texts, layer=[0, 9])


def test_the_average_is_length_weighted_per_text_fractions():
    model = gpt2()
    texts = id_lists([12, 50])
    df = spectral_profile(model, texts, layer=-1)
    with torch.no_grad():
        fracs = []
        for t in texts:
            h = model(input_ids=torch.tensor([t]), output_hidden_states=True).hidden_states[-1][0]
            e = band_energy(h).double()
            fracs.append(e / e.sum(0))
    want = (12 * fracs[0] + 50 * fracs[1]) / 62
    np.testing.assert_allclose(df.to_numpy(), want.numpy(), atol=1e-5)


def test_band_energy_is_parseval_and_follows_the_allocation():
    h = torch.randn(30, 4, dtype=torch.float64)
    e = band_energy(h)
    torch.testing.assert_close(e.sum(0).double(), (h**2).sum(0), atol=1e-4, rtol=1e-5)
    bands = allocate_bands(30)
    torch.testing.assert_close(e[2].double(), (band_pass(h, bands[2]) ** 2).sum(0), atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("band", range(5))
def test_a_signal_built_in_one_band_shows_there(monkeypatch, band):
    """The model's hidden states are replaced by a known signal: random noise band-passed,
    per text over its real length, to one of the paper's bands."""
    model = bert(max_len=512)
    gen = torch.Generator().manual_seed(band)

    def forward(input_ids, attention_mask, output_hidden_states):
        lengths = attention_mask.sum(1).tolist()
        h = torch.randn(*input_ids.shape, 6, generator=gen)
        h = band_pass(h, [allocate_bands(n)[band] for n in lengths], lengths=lengths)
        h[:, :, 5] = 0.0  # a silent unit: NaN, not a fraction
        return SimpleNamespace(hidden_states=(h, h))

    monkeypatch.setattr(model, "forward", forward)
    df = spectral_profile(model, id_lists([512, 300, 37, 120]), layer=-1, batch_size=2)
    np.testing.assert_allclose(df.iloc[band, :5], 1.0, atol=1e-4)
    assert df[5].isna().all()


def test_smooth_signal_is_low_and_center_removes_the_offset(monkeypatch):
    model = gpt2(max_len=512)

    def forward(input_ids, attention_mask, output_hidden_states):
        n = input_ids.shape[1]
        t = torch.arange(n, dtype=torch.float32)
        slow = torch.cos(torch.pi * (t + 0.5) / n)  # one half period over the text: DCT index 1
        fast = torch.cos(torch.pi * t * 0.9)  # near the Nyquist frequency
        h = torch.stack([slow, 3.0 + fast], dim=-1)[None].expand(input_ids.shape[0], n, 2)
        return SimpleNamespace(hidden_states=(h,))

    monkeypatch.setattr(model, "forward", forward)
    texts = id_lists([512])  # LOW is DCT indices 0-1 at 512 tokens (Table 3a)
    df = spectral_profile(model, texts, layer=0)
    assert df.loc["LOW", 0] > 0.999
    assert df.loc["LOW", 1] > 0.9  # the offset 3.0 is DC energy
    centred = spectral_profile(model, texts, layer=0, center=True)
    assert centred.loc["HIGH", 1] > 0.99


def test_strings_through_a_tokenizer():
    tok = _char_tokenizer()  # built in code, no download
    model = bert()
    df = spectral_profile(model, ["A sentence of some length.", "x " * 100], tokenizer=tok, layer=2)
    assert df.attrs["tokens"] == 24 + 64  # [CLS] + 22 characters (no spaces) + [SEP]; the long text cut at 64
    assert token_ids(["ab"], tok, add_special_tokens=False) == [[tok.convert_tokens_to_ids("a"), tok.convert_tokens_to_ids("##b")]]


def test_clear_errors():
    model = bert()
    with pytest.raises(TypeError, match="tokenizer"):
        spectral_profile(model, ["some text"])
    with pytest.raises(TypeError, match="mix"):
        spectral_profile(model, [[1, 2, 3, 4, 5], "text"])
    with pytest.raises(ValueError, match="shorter than 5"):
        spectral_profile(model, [[1, 2, 3]])
    with pytest.raises(ValueError, match="layer 7 is out of range"):
        spectral_profile(model, id_lists([10]), layer=7)
    t5 = T5Model(T5Config(vocab_size=50, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2))
    with pytest.raises(ValueError, match="get_encoder"):
        spectral_profile(t5, id_lists([10]))


# -- the white-noise reference --


@settings(max_examples=50, deadline=None)
@given(lengths=st.lists(st.integers(5, 3000), min_size=1, max_size=5), center=st.booleans())
def test_white_noise_shares_are_the_band_widths_over_the_length(lengths, center):
    from prismlib.spectral import white_noise_shares

    shares = white_noise_shares(lengths, center=center)
    assert list(shares.index) == list(BAND_NAMES) and shares.sum() == pytest.approx(1.0)
    want = np.zeros(len(BAND_NAMES))
    for n in lengths:
        widths = np.array([b.width for b in allocate_bands(n)], dtype=float)
        widths[0] -= center  # the mean is gone: one index fewer, in LOW
        want += n * widths / (n - center)
    np.testing.assert_allclose(shares.to_numpy(), want / sum(lengths), rtol=1e-12)
    assert (shares >= 0).all()


def test_noise_profile_is_spectral_profile_s_measure_on_white_noise():
    from prismlib.spectral import noise_profile, white_noise_shares

    lengths = [512, 300, 64]
    for center in (False, True):
        noise = noise_profile(lengths, units=400, center=center, seed=1)
        assert noise.shape == (5, 400) and list(noise.index) == list(BAND_NAMES)
        np.testing.assert_allclose(noise.sum(axis=0), 1.0, rtol=1e-9)
        # the mean over units estimates the expectation (per-unit SD of a share about 0.03 here)
        np.testing.assert_allclose(noise.mean(axis=1), white_noise_shares(lengths, center=center), atol=0.006)
    assert noise_profile(lengths, units=3, seed=2).equals(noise_profile(lengths, units=3, seed=2))
    assert not noise_profile(lengths, units=3, seed=2).equals(noise_profile(lengths, units=3, seed=3))
    # the same measure: one text of states is what band_energy gives, as fractions
    gen_states = torch.randn(64, 3, generator=torch.Generator().manual_seed(4))
    energy = band_energy(gen_states, center=True).double()
    np.testing.assert_allclose(noise_profile([64], units=3, center=True, seed=4).to_numpy(), (energy / energy.sum(0)).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="at least 5"):
        noise_profile([4])
    with pytest.raises(ValueError, match="at least one length"):
        white_noise_shares([])


def test_spectral_profile_records_the_lengths_for_the_noise_reference():
    model = bert()
    with pytest.warns(UserWarning, match="1 of 4 texts"):
        df = spectral_profile(model, id_lists([9, 40, 64, 3]), layer=1)
    assert df.attrs["lengths"] == [9, 40, 64]
