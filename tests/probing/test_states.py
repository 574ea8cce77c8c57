"""The encoder's hidden states of the probing windows, cached once per window
(prismlib.probing.states): one encoder pass serves every layer, placement and notebook; the
features filtered from the states; a states file from another encoder or truncated is encoded
again; the rows line up with encode_windows; the cache is reused and keyed.

Two tiny encoders: the features tests' (``tiny_encoder``, 16 units, ``windows`` of one-wordpiece
units from ``test_features.py``) and the learned filter tests' (``wide_encoder``, 32 units,
``multi_piece_windows`` of one or two wordpieces)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertModel

from prismlib.probing import (
    CONDITIONS,
    Encoder,
    States,
    Unit,
    cached_layer_states,
    cached_states,
    encode_states,
    encode_windows,
    pack_units,
)
from prismlib.probing import features as encode
from probing.test_features import FP16, windows


@pytest.fixture(scope="module")
def tiny_encoder() -> Encoder:
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=300, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
    return Encoder(name="tiny-bert", tokenizer=None, model=BertModel(cfg).eval(), device=torch.device("cpu"))


@pytest.fixture(scope="module")
def wide_encoder() -> Encoder:
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    return Encoder(name="tiny-bert", tokenizer=None, model=BertModel(cfg).eval(), device=torch.device("cpu"))


def multi_piece_windows(lengths, seed=0, classes=4):
    """Windows (no tokenizer): units of one or two wordpieces, so 1/|N| weights vary."""
    rng = np.random.default_rng(seed)
    sources = []
    for s, n in enumerate(lengths):
        units = [
            Unit(rng.integers(5, 299, size=int(rng.integers(1, 3))).tolist(), int(rng.integers(0, classes)), s * 1000 + i) for i in range(n)
        ]
        sources.append((f"src{s}", units))
    return pack_units(sources, 1, 2, window=48)


def test_one_encoder_pass_per_window_serves_every_layer_placement_and_notebook(tiny_encoder, tmp_path, monkeypatch):
    from prismlib.probing import states as st

    wins = {"train": windows([30, 12]), "test": windows([20], seed=1)}
    kwargs = dict(task="t", profile_name="smoke", positions=4, seed=0)
    monkeypatch.setattr(st, "cache_dir", lambda: tmp_path)
    calls = []
    real = st.encode_layer_states
    monkeypatch.setattr(st, "encode_layer_states", lambda *a, **k: calls.append(tuple(a[2])) or real(*a, **k))
    layers = {-1: CONDITIONS + ("LOW|outside",), 1: ("ORIG", "LOW")}
    feats = st.encode_splits(tiny_encoder, wins, layers, **kwargs)
    last = tiny_encoder.num_layers  # the cache keys -1 by its index
    assert calls == [(last, 1), (last, 1)]  # one pass per split, both layers
    # the features equal the direct (uncached, float32) filtering up to the float16 rounding of the states
    direct = encode_windows(tiny_encoder, wins["train"], layers, positions=4, seed=0)
    for layer, conds in layers.items():
        for c in conds:
            torch.testing.assert_close(feats[layer]["train"].x[c].float(), direct[layer].x[c].float(), atol=2e-2, rtol=1e-2)
        assert torch.equal(feats[layer]["train"].labels, direct[layer].labels)
        assert torch.equal(feats[layer]["train"].weights, direct[layer].weights)
    # the learned gate's states (notebook 09) and another condition set read the same cache
    again = st.encode_splits(tiny_encoder, wins, {-1: ("MID",)}, **kwargs)
    gate_states = st.cached_states(tiny_encoder, wins["train"], -1, split="train", **kwargs)
    by_number = st.encode_splits(tiny_encoder, wins, {last: ("MID",)}, **kwargs)  # notebook 02 names the last layer
    assert len(calls) == 2 and len(list(tmp_path.rglob("*.pt"))) == 4
    # MID alone is filtered on another path than MID in the shared decomposition of all six bands
    # (float32 results some 1e-7 apart): equal up to float16 rounding, not bit for bit on every CPU
    torch.testing.assert_close(again[-1]["train"].x["MID"].float(), feats[-1]["train"].x["MID"].float(), **FP16)
    # the same states through the same filter: bit for bit
    assert torch.equal(by_number[last]["train"].x["MID"], again[-1]["train"].x["MID"])
    assert torch.equal(gate_states.features(("MID",)).x["MID"], again[-1]["train"].x["MID"])
    # other positions -> another key
    st.encode_splits(tiny_encoder, wins, {-1: ("ORIG",)}, **{**kwargs, "positions": 5})
    assert len(calls) == 4


def test_outside_placement_filters_the_real_tokens_only(tiny_encoder):
    from prismlib.probing import encode_states

    wins = windows([30, 12])
    inside = encode_states(tiny_encoder, wins, -1, positions=4, seed=0)
    outside = encode_states(tiny_encoder, wins, -1, positions=4, seed=0, specials="outside")
    a, b = inside.features(("LOW|outside", "HIGH|outside")), outside.features(("LOW", "HIGH"))
    for c in ("LOW", "HIGH"):
        assert torch.equal(a.x[f"{c}|outside"], b.x[c])
    with pytest.raises(ValueError, match="specials='inside'"):
        outside.features(("LOW|inside",))


def test_smooth_conditions_follow_the_current_edge_settings(tiny_encoder, tmp_path, monkeypatch):
    """Features are filtered from the cached states at every call: a changed smooth edge
    can never be served from a stale cache.

    The band is MID, not LOW: on windows this short (32 and 14 tokens) LOW is DCT index 0
    alone (:func:`allocate_bands`) and the Haar LOW its coarsest level, so brick-wall,
    smooth and Haar LOW are all the window mean, equal in exact arithmetic and apart only
    by float16 rounding, which depends on the CPU's kernels. MID's three filters, and its
    two edge widths, differ by 0.04 or more on every row here: far beyond the float16
    rounding the comparisons allow (``FP16``), so they differ by construction."""
    from prismlib.probing import states as st

    monkeypatch.setattr(st, "cache_dir", lambda: tmp_path)
    wins = {"train": windows([30, 12])}
    kwargs = dict(task="t", profile_name="smoke", positions=4, seed=0)

    def direct() -> torch.Tensor:  # uncached, from the float32 states, with the current edge width
        return encode_windows(tiny_encoder, wins["train"], {-1: ("smooth:MID",)}, positions=4, seed=0)[-1].x["smooth:MID"].float()

    def apart(a: torch.Tensor, b: torch.Tensor) -> bool:
        return bool((a.float() - b.float()).abs().amax() > 10 * FP16["atol"])

    narrow = st.encode_splits(tiny_encoder, wins, {-1: ("MID", "smooth:MID", "haar:MID")}, **kwargs)[-1]["train"]
    assert apart(narrow.x["MID"], narrow.x["smooth:MID"]) and apart(narrow.x["MID"], narrow.x["haar:MID"])
    torch.testing.assert_close(narrow.x["smooth:MID"].float(), direct(), **FP16)
    monkeypatch.setattr(encode, "SMOOTH_WIDTH", 2 * encode.SMOOTH_WIDTH)
    wide = st.encode_splits(tiny_encoder, wins, {-1: ("smooth:MID",)}, **kwargs)[-1]["train"]
    torch.testing.assert_close(wide.x["smooth:MID"].float(), direct(), **FP16)  # the new width's features
    assert apart(wide.x["smooth:MID"], narrow.x["smooth:MID"])  # not the old width's
    assert len(list(tmp_path.rglob("*.pt"))) == 1  # one states file; features are never cached


def test_a_states_file_from_another_encoder_or_truncated_is_moved_aside_and_encoded_again(tiny_encoder, tmp_path, capsys):
    import shutil

    from prismlib.probing import states as st

    wins = windows([20, 9])
    kwargs = dict(task="t", split="train", profile_name="smoke", positions=4, seed=0, cache=tmp_path / "states")
    torch.manual_seed(1)
    cfg = BertConfig(vocab_size=300, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
    other = Encoder(name="other-bert", tokenizer=None, model=BertModel(cfg).eval(), device=torch.device("cpu"))
    mine = st.cached_states(other, wins, -1, **kwargs).features(("ORIG",)).x["ORIG"]
    theirs = st.cached_states(tiny_encoder, wins, -1, **kwargs)
    [path] = (tmp_path / "states" / "other-bert").rglob("*.pt")
    [tiny_path] = (tmp_path / "states" / "tiny-bert").rglob("*.pt")
    for damage in ("other encoder", "truncated"):
        if damage == "other encoder":
            shutil.copy(tiny_path, path)
            shutil.copy(st_digest := tiny_path.with_name(tiny_path.name + ".sha256"), path.with_name(path.name + ".sha256"))
            assert st_digest.exists()
        else:
            path.write_bytes(path.read_bytes()[:500])
        capsys.readouterr()
        again = st.cached_states(other, wins, -1, **kwargs).features(("ORIG",)).x["ORIG"]
        err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("prismlib:")]  # (not the bar)
        assert len(err) == 1 and "moved aside" in err[0], err
        assert ("tiny-bert" in err[0]) == (damage == "other encoder")
        assert torch.equal(again, mine) and not torch.equal(again, theirs.features(("ORIG",)).x["ORIG"])
    assert len(list((tmp_path / "quarantine").glob("*.pt"))) == 2


def test_dc_condition_from_the_states_cache(tiny_encoder):
    from prismlib.probing import encode_states

    wins = windows([30, 12])
    states = encode_states(tiny_encoder, wins, -1, positions=4, seed=0)
    f = states.features(("DC", "DC|outside"))
    for i in range(len(wins)):
        rows = f.window == i
        h = states.hidden[i].float()
        torch.testing.assert_close(f.x["DC"][rows].float(), h.mean(0).expand(int(rows.sum()), -1), atol=2e-3, rtol=1e-2)
        torch.testing.assert_close(f.x["DC|outside"][rows].float(), h[1:-1].mean(0).expand(int(rows.sum()), -1), atol=2e-3, rtol=1e-2)


@pytest.mark.parametrize("specials", ["inside", "outside"])
@pytest.mark.usefixtures("one_torch_thread")  # (as test_learned_filter.py runs)
def test_states_rows_line_up_with_encode_windows(wide_encoder, specials):
    wins = multi_piece_windows([30, 7, 50, 12, 3])
    feats = encode_windows(wide_encoder, wins, {1: ("ORIG",)}, positions=6, seed=3, batch_size=2, specials=specials)[1]
    states = encode_states(wide_encoder, wins, 1, positions=6, seed=3, batch_size=2, specials=specials, progress=False)
    for name in ("labels", "weights", "window", "unit", "position"):
        assert torch.equal(getattr(states, name), getattr(feats, name)), name
    assert torch.equal(states.features().x["ORIG"], feats.x["ORIG"])  # same batches: bit for bit
    cut = 1 if specials == "outside" else 0
    assert [len(h) for h in states.hidden] == [len(w) - 2 * cut for w in wins]
    assert all(h.dtype == torch.float16 for h in states.hidden)
    conditions = ("LOW", "smooth:MID", "haar:HIGH")
    filtered = encode_windows(wide_encoder, wins, {1: conditions}, positions=6, seed=3, batch_size=2, specials=specials)[1]
    from_states = states.features(conditions, batch_windows=3)
    for c in conditions:  # filtered from the stored float16 states: equal up to float16 rounding
        scale = filtered.x[c].float().abs().max()
        assert torch.allclose(from_states.x[c].float(), filtered.x[c].float(), atol=2e-3 * float(scale)), c
    with torch.no_grad():  # the whole window's states, not only the sampled rows
        alone = wide_encoder.model(input_ids=torch.from_numpy(wins[2].input_ids)[None], output_hidden_states=True).hidden_states[1][0]
    torch.testing.assert_close(states.hidden[2].float(), alone[cut : len(alone) - cut], atol=2e-3, rtol=1e-2)


@pytest.mark.usefixtures("one_torch_thread")  # (as test_learned_filter.py runs)
def test_states_cache_is_reused_and_keyed(wide_encoder, tmp_path, monkeypatch):
    wins = multi_piece_windows([20, 9])
    kwargs = dict(task="t", split="train", profile_name="smoke", positions=4, seed=0, cache=tmp_path)
    first = cached_states(wide_encoder, wins, -1, **kwargs)
    calls = []
    from prismlib.probing import states as st

    real = st.encode_layer_states
    monkeypatch.setattr(st, "encode_layer_states", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = cached_states(wide_encoder, wins, -1, **kwargs)
    assert calls == []
    assert all(torch.equal(a, b) for a, b in zip(again.hidden, first.hidden))
    assert torch.equal(again.position, first.position) and again.offset == first.offset
    cached_states(wide_encoder, wins, -1, **{**kwargs, "positions": 5})
    cached_states(wide_encoder, wins, -1, **{**kwargs, "specials": "outside"})
    assert len(calls) == 2 and len(list(tmp_path.rglob("*.pt"))) == 3
    last = wide_encoder.num_layers  # the last layer by number (notebook 02) is the file of -1 (notebook 09)
    by_number = cached_layer_states(wide_encoder, wins, (last, -1), **kwargs)
    assert len(calls) == 2 and len(list(tmp_path.rglob("*.pt"))) == 3
    assert by_number[last] is by_number[-1] and torch.equal(by_number[last].hidden[0], first.hidden[0])
    with pytest.raises(ValueError, match=rf"out of range: .* hidden states 0\.\.{last}"):
        cached_layer_states(wide_encoder, wins, (last + 1,), **kwargs)


@pytest.mark.usefixtures("one_torch_thread")  # (as test_learned_filter.py runs)
def test_states_reject_inconsistent_rows():
    h = [torch.zeros(5, 3), torch.zeros(4, 3)]
    ok = dict(labels=torch.zeros(2, dtype=torch.long), weights=torch.ones(2), unit=torch.arange(2))
    States(h, **ok, window=torch.tensor([0, 1]), position=torch.tensor([4, 3]))
    with pytest.raises(ValueError, match="non-decreasing"):
        States(h, **ok, window=torch.tensor([1, 0]), position=torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="outside its window"):
        States(h, **ok, window=torch.tensor([0, 1]), position=torch.tensor([0, 4]))
