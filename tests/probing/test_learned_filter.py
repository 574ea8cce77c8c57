"""The learnable spectral probe (prismlib.probing.learned_filter): gate, joint training, runs,
the all-pass control, matched bands. (The states it trains on are tested in ``test_states.py``.)"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from probing_fixtures import synthetic, zeroed

from prismlib.probing import (
    ALL_PASS,
    GATED,
    MAJORITY,
    GateRecipe,
    ProbeRecipe,
    SpectralGate,
    States,
    combine_runs,
    compare_accuracy,
    gate_and_control_runs,
    gated_probe_runs,
    probe_conditions,
    summarise,
    train_gated_probe,
)
from prismlib.probing import learned_filter as learned
from prismlib.spectral import dct, dct_matrix, idct

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# --------------------------------------------------------------------------- states


def test_matched_windows_hold_the_rows_of_a_probe_step():
    # 4 windows, one without rows; 9 rows in all: 3 per window that has rows
    h = [torch.zeros(6, 2) for _ in range(4)]
    window = torch.tensor([0, 0, 0, 2, 2, 2, 3, 3, 3])
    rows = dict(labels=torch.zeros(9, dtype=torch.long), weights=torch.ones(9), unit=torch.arange(9))
    states = States(h, **rows, window=window, position=torch.tensor([0, 1, 2] * 3))
    assert learned.matched_windows(states, 6) == 2
    assert learned.matched_windows(states, 7) == 2  # 2.33 windows
    assert learned.matched_windows(states, 1) == 1  # never fewer than one
    with pytest.raises(ValueError, match="at least 1"):
        learned.matched_windows(states, 0)


# --------------------------------------------------------------------------- gate


def test_gate_grid_interpolation_and_init():
    gate = SpectralGate(8, init=0.5)
    assert torch.allclose(gate.gate(13), torch.full((13,), 0.5))
    with torch.no_grad():
        gate.logits.copy_(torch.arange(8.0))
    # n = G: one parameter per DCT index
    assert torch.allclose(gate.gate(8), torch.sigmoid(torch.arange(8.0)))
    # n = 2G: index k sits at k / n, halfway between grid points for odd k; held at the top
    want = torch.sigmoid(torch.cat([torch.arange(0, 7.5, 0.5), torch.tensor([7.0])]))
    assert torch.allclose(gate.gate(16), want)
    assert torch.allclose(gate.profile(), torch.sigmoid(torch.arange(8.0)))
    assert gate.grid.tolist() == [j / 8 for j in range(8)]
    with pytest.raises(ValueError, match="init"):
        SpectralGate(8, init=1.0)


def test_gate_filters_each_row_over_its_length_without_leaking():
    torch.manual_seed(0)
    gate = SpectralGate(16)
    with torch.no_grad():
        gate.logits.normal_(0, 2)
    lengths = [9, 20, 9, 14]
    h = torch.randn(4, 20, 3, dtype=torch.float64)
    out = gate(h, lengths)
    for i, n in enumerate(lengths):
        want = idct(gate.gate(n).double()[:, None] * dct(h[i, :n], dim=0), dim=0)
        torch.testing.assert_close(out[i, :n], want)
        assert (out[i, n:] == 0).all()
    h2 = h.clone()
    h2[0, 9:] = 1e6  # garbage in the padding changes nothing
    torch.testing.assert_close(gate(h2, lengths), out)
    # the rows path is the same filter at the chosen positions
    picks = [torch.tensor([0, 4, 8]), torch.arange(20), torch.tensor([5]), torch.tensor([13, 2])]
    rows = gate.filter_rows([h[i, :n] for i, n in enumerate(lengths)], picks)
    torch.testing.assert_close(rows.double(), torch.cat([out[i, p] for i, p in enumerate(picks)]), atol=1e-5, rtol=1e-5)
    # a 0/1 gate at n = G is the brick-wall band-pass
    with torch.no_grad():
        gate.logits.copy_(torch.where(torch.arange(16) < 4, 40.0, -40.0))
    c = dct_matrix(16)
    x = torch.randn(16, 3, dtype=torch.float64)
    torch.testing.assert_close(gate(x).double(), c[:4].T @ (c[:4] @ x))


# --------------------------------------------------------------------------- training


FAST = ProbeRecipe(max_epochs=12, lr=0.02)
"""Few windows, so higher rates than the paper's 1e-3 (the test is about the gate's shape)."""
GATE = GateRecipe(gate_lr=0.02, batch_windows=4, grid_size=32)
"""The gate's settings beside :data:`FAST`."""


@pytest.mark.parametrize("where", ["low", "high"])
def test_learned_gate_finds_the_label_band(where):
    train, val, test = synthetic(30, 0, where), synthetic(10, 1, where), synthetic(10, 2, where)
    r = train_gated_probe(train, val, test, 2, FAST, seed=0, gate=GATE)
    low, top = r.gate[r.grid < 0.2].mean(), r.gate[r.grid >= 0.5].mean()
    if where == "low":
        assert low > 0.6 and top < 0.3, (low, top)
    else:
        assert top > 0.6 and low < 0.3, (low, top)
    assert r.accuracy > 0.75  # raw unit 0 gives about 0.65
    assert r.test_pred.shape == (len(test),) and r.gate.shape == r.grid.shape == (32,)
    assert list(r.band_means.index) == ["LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"]
    assert 1 <= r.best_epoch <= r.epochs <= FAST.max_epochs


def test_runs_pair_with_brick_wall_probes():
    states = {"train": synthetic(12, 0, "low"), "val": synthetic(4, 1, "low"), "test": synthetic(4, 2, "low")}
    runs = gated_probe_runs(states, 2, runs=2, seed=0, recipe=FAST.with_cap(2), gate=GATE, progress=False)
    assert runs.gates.shape == (2, 32) and len(runs.band_means) == 2
    assert runs.correct[GATED].shape == (2, len(states["test"]))
    again = train_gated_probe(states["train"], states["val"], states["test"], 2, FAST.with_cap(2), seed=1, gate=GATE)
    assert np.array_equal(again.test_pred == states["test"].labels.numpy(), runs.correct[GATED][1])  # seed + run
    feats = {s: st.features() for s, st in states.items()}
    orig = probe_conditions(feats, 2, ("ORIG",), runs=1, seed=0, recipe=ProbeRecipe(max_epochs=2), progress=False)
    both = combine_runs(orig, runs)
    groups = feats["test"].window.numpy()
    table = summarise(both, feats["test"], groups, n_boot=50)
    assert set(table["condition"]) == {"ORIG", GATED, MAJORITY}
    assert np.isfinite(compare_accuracy(both, feats["test"], groups, GATED, "ORIG", n_boot=50).effect)
    with pytest.raises(ValueError, match="more than one"):
        combine_runs(orig, orig)


def test_a_resample_keeps_each_drawn_windows_rows_and_weights():
    s = synthetic(5, 0, "low")
    s.weights = torch.rand(len(s))
    r = s.resample([3, 0, 3])
    assert len(r.hidden) == 3 and r.hidden[0] is s.hidden[3] and r.hidden[2] is s.hidden[3]
    slices, old = r.row_slices(), s.row_slices()
    for j, i in enumerate([3, 0, 3]):
        for field in ("labels", "weights", "unit", "position"):
            assert torch.equal(getattr(r, field)[slices[j]], getattr(s, field)[old[i]]), field
    assert torch.equal(r.window, torch.cat([torch.full((old[i].stop - old[i].start,), j) for j, i in enumerate([3, 0, 3])]))
    assert torch.equal(r.features().x["ORIG"][slices[1]], s.features().x["ORIG"][old[0]])
    with pytest.raises(ValueError, match="window indices"):
        s.resample([5])


def test_resampled_runs_train_on_different_windows_drawn_from_their_seed():
    states = {"train": synthetic(12, 0, "low"), "val": synthetic(4, 1, "low"), "test": synthetic(4, 2, "low")}
    kw = dict(recipe=FAST.with_cap(2), gate=GATE)
    plain = gated_probe_runs(states, 2, runs=2, seed=0, progress=False, **kw)
    resampled = gated_probe_runs(states, 2, runs=2, seed=0, resample=True, progress=False, **kw)
    again = gated_probe_runs(states, 2, runs=2, seed=0, resample=True, progress=False, **kw)
    assert not np.allclose(plain.gates, resampled.gates)  # another training set
    np.testing.assert_array_equal(resampled.gates, again.gates)  # the same draw from the same seed
    draw = np.random.default_rng([1, 1]).integers(0, 12, 12)  # run 1's windows
    one = train_gated_probe(states["train"].resample(draw), states["val"], states["test"], 2, seed=1, **kw)
    np.testing.assert_allclose(one.gate, resampled.gates[1])


def test_training_rejects_bad_input():
    s = synthetic(3, 0, "low")
    with pytest.raises(ValueError, match="labels must lie"):
        train_gated_probe(s, s, s, 1, ProbeRecipe(max_epochs=1), seed=0)
    with pytest.raises(ValueError, match="reads raw states"):
        train_gated_probe(s, s, s, 2, ProbeRecipe(max_epochs=1, standardize=True), seed=0)


@pytest.mark.parametrize("cap", [2, 5])
def test_the_gated_probe_and_its_runs_train_to_the_recipe_s_cap(cap):
    """The cap is the recipe's (no default of the gated probe's own): with ``patience=None``
    every run trains exactly ``max_epochs`` epochs, alone, in runs and beside its control."""
    states = {"train": synthetic(6, 0, "low"), "val": synthetic(3, 1, "low"), "test": synthetic(3, 2, "low")}
    recipe = ProbeRecipe(max_epochs=cap, patience=None, lr=0.02)
    one = train_gated_probe(states["train"], states["val"], states["test"], 2, recipe, seed=0, gate=GATE)
    assert one.epochs == len(one.history) == cap
    runs = gated_probe_runs(states, 2, 2, 0, recipe, gate=GATE, progress=False)
    assert runs.table["epochs"].tolist() == [cap, cap]
    learned, control = gate_and_control_runs(states, 2, 1, 0, recipe, gate=GATE, progress=False)
    assert learned.table["epochs"].tolist() == control.table["epochs"].tolist() == [cap]
    with pytest.raises(ValueError, match="reads raw states"):
        gate_and_control_runs(states, 2, 1, 0, replace(recipe, standardize=True), gate=GATE, progress=False)


# --------------------------------------------------------------------------- the all-pass control


def test_the_all_pass_gate_is_the_identity_with_nothing_to_learn():
    gate = SpectralGate(16, init=1.0, learn=False)
    assert gate.all_pass and not list(gate.parameters())
    assert torch.equal(gate.gate(9), torch.ones(9)) and torch.equal(gate.profile(), torch.ones(16))
    h = [torch.randn(9, 3).half(), torch.randn(14, 3).half()]
    picks = [torch.tensor([0, 8]), torch.tensor([13, 2, 5])]
    rows = gate.filter_rows(h, picks)
    torch.testing.assert_close(rows, torch.cat([h[0].float()[picks[0]], h[1].float()[picks[1]]]))
    # the same rows as the matrix path of a gate at 1 (the filter removed, nothing else)
    near_one = SpectralGate(16, init=0.5)
    with torch.no_grad():
        near_one.logits.fill_(60.0)
    torch.testing.assert_close(rows, near_one.filter_rows(h, picks), atol=1e-5, rtol=1e-5)
    half = SpectralGate(16, init=0.5, learn=False)
    assert not half.all_pass and torch.equal(half.gate(5), torch.full((5,), 0.5))
    with pytest.raises(ValueError, match="fixed gate"):
        SpectralGate(16, init=1.0)


def test_the_all_pass_control_trains_exactly_like_the_learned_gate():
    states = {"train": synthetic(12, 0, "low"), "val": synthetic(4, 1, "low"), "test": synthetic(4, 2, "low")}
    kw = dict(recipe=FAST.with_cap(3), gate=GATE)
    control = gated_probe_runs(states, 2, runs=2, seed=0, resample=True, condition=ALL_PASS, all_pass=True, progress=False, **kw)
    assert set(control.correct) == {ALL_PASS, MAJORITY} and (control.gates == 1).all()
    assert (control.band_means.to_numpy() == 1).all()
    # run 1: the learned gate's resample of the windows, seed, window order and probe start
    draw = np.random.default_rng([1, 1]).integers(0, 12, 12)
    train = states["train"].resample(draw)
    one = train_gated_probe(train, states["val"], states["test"], 2, seed=1, all_pass=True, **kw)
    np.testing.assert_array_equal(one.test_pred == states["test"].labels.numpy(), control.correct[ALL_PASS][1])
    # the same as the learned pipeline with its gate pinned at 1 (a gate lr of 0 from a gate of ~1)
    pinned_gate = replace(GATE, init=1 - 1e-7, gate_lr=0.0)
    pinned = train_gated_probe(train, states["val"], states["test"], 2, kw["recipe"], seed=1, gate=pinned_gate)
    losses = [[h["train_loss"], h["val_loss"]] for h in one.history]
    np.testing.assert_allclose(losses, [[h["train_loss"], h["val_loss"]] for h in pinned.history], rtol=1e-4)
    assert len(one.history) == kw["recipe"].max_epochs
    learned = gated_probe_runs(states, 2, runs=2, seed=0, resample=True, progress=False, **kw)
    assert not np.allclose(learned.gates, 1.0)  # the learned gate moved; the control did not
    assert combine_runs(learned, control).correct.keys() >= {GATED, ALL_PASS}
    # both from one pool: the same runs as the two calls apart
    both = gate_and_control_runs(states, 2, runs=2, seed=0, resample=True, progress=False, **kw)
    for got, want, cond in ((both[0], learned, GATED), (both[1], control, ALL_PASS)):
        np.testing.assert_array_equal(got.correct[cond], want.correct[cond])
        np.testing.assert_array_equal(got.gates, want.gates)
        assert list(got.table["condition"].unique()) == [cond]
    with pytest.raises(TypeError, match="all_pass"):  # it trains both; there is nothing to choose
        gate_and_control_runs(states, 2, runs=1, seed=0, all_pass=True, progress=False, **kw)


def test_the_gate_and_its_control_continue_past_their_cap_as_a_higher_cap_trains_them():
    states = {"train": synthetic(12, 0, "low"), "val": synthetic(4, 1, "low"), "test": synthetic(4, 2, "low")}
    kw = dict(runs=2, seed=0, gate=GATE, resample=True, progress=False)
    short = combine_runs(*gate_and_control_runs(states, 2, recipe=FAST.with_cap(2), **kw))
    assert all(s is not None for c in (GATED, ALL_PASS) for s in short.resume[c])
    long = gate_and_control_runs(states, 2, recipe=FAST.with_cap(5), **kw)
    went_on = gate_and_control_runs(states, 2, recipe=FAST.with_cap(5), resume=short, **kw)
    for got, want, cond in zip(went_on, long, (GATED, ALL_PASS)):
        pd.testing.assert_frame_equal(got.table, want.table)
        np.testing.assert_array_equal(got.correct[cond], want.correct[cond])
        np.testing.assert_array_equal(got.gates, want.gates)
    alone = gated_probe_runs(states, 2, recipe=FAST.with_cap(5), resume=short, **kw)
    np.testing.assert_array_equal(alone.gates, long[0].gates)
    # from a zero gate and probe, another run: the states are what it goes on from
    assert not np.allclose(gated_probe_runs(states, 2, recipe=FAST.with_cap(5), resume=zeroed(short), **kw).gates, long[0].gates)


# --------------------------------------------------------------------------- old pickles


def test_a_pickle_naming_the_old_module_spectral_gate_still_loads(tmp_path):
    import zipfile

    from prismlib.artifacts import load_checkpoint, save_atomic
    from prismlib.probing import GatedProbeResult

    result = GatedProbeResult(0.5, 0.5, 1.0, 1, [], np.zeros(3, dtype=np.int64), gate=np.full(4, 0.5), grid=np.arange(4) / 4)
    path, old = tmp_path / "new.pt", tmp_path / "old.pt"
    save_atomic(path, result=result)
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(old, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("data.pkl"):
                assert b"prismlib.probing.learned_filter" in data
                data = data.replace(b"prismlib.probing.learned_filter", b"prismlib.probing.spectral_gate")
            zout.writestr(item, data)
    loaded = load_checkpoint(old)["result"]
    assert type(loaded) is GatedProbeResult and np.array_equal(loaded.gate, result.gate) and loaded.accuracy == 0.5
