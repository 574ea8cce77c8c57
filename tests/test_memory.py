"""The cell-state ablation measure on tiny models with known memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib import lstm, memory
from prismlib.timescales import apply_timescales

VOCAB = 20


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _model(forget_bias: float) -> lstm.LSTMLM:
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 6, 8, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0)
    # all of layer 1's forget gates at sigmoid(forget_bias); input gate at sigmoid(-forget_bias)
    apply_timescales(list(model.rnns), [torch.full((8,), forget_bias), None], fixed=True)
    with torch.no_grad():  # forget gate = its bias; no recurrence except through c
        model.rnns[0].weight_ih_l0[8:16].zero_()
        model.rnns[0].weight_hh_l0_raw.zero_()
    return model.eval()


def test_shape_and_memoryless_layer():
    ids = np.random.default_rng(0).integers(1, VOCAB, 400)
    model = _model(-30.0)  # forget gate 0: layer 1's cell state is only the last word's
    changes = memory.cell_state_change(model, ids, n_contexts=5, length=12, replacement=0)
    assert changes.shape == (5, 2, 12)
    assert np.all(changes[:, 0, 0] > 1e-3)  # d = 1: the last word itself
    assert np.all(changes[:, 0, 1:] < 1e-6)  # nothing older survives in layer 1
    assert changes[:, 1, 1:].max() > 1e-4  # layer 2 still sees it through layer 1's h


def test_long_memory_layer_keeps_distant_words():
    ids = np.random.default_rng(1).integers(1, VOCAB, 400)
    short = memory.cell_state_change(_model(-30.0), ids, n_contexts=4, length=12, replacement=0)
    long_ = memory.cell_state_change(_model(8.0), ids, n_contexts=4, length=12, replacement=0)
    assert long_[:, 0, 6:].mean() > 100 * short[:, 0, 6:].mean()


def test_ablating_a_word_by_itself_changes_nothing():
    ids = np.zeros(100, dtype=np.int64)
    changes = memory.cell_state_change(_model(0.0), ids, n_contexts=3, length=10, replacement=0)
    assert np.all(changes == 0)


def test_decay_slope_of_a_power_law():
    d = np.arange(1, 71)
    changes = np.stack([np.stack([3 * d**-2.0, 0.5 * d**-0.5])] * 4)  # (4, 2, 70)
    np.testing.assert_allclose(memory.decay_slopes(changes), [-2.0, -0.5], atol=1e-9)
    frame = memory.changes_frame(changes, "demo")
    assert len(frame) == 140 and frame["sem"].max() == pytest.approx(0)


def test_context_starts_do_not_overlap():
    starts = memory.context_starts(1000, 10, 70, seed=0)
    assert len(starts) == 10 and np.all(np.diff(starts) >= 70) and starts[-1] + 70 <= 1000
    with pytest.raises(ValueError, match="non-overlapping"):
        memory.context_starts(100, 5, 70, seed=0)


def _power_law_contexts(exponents: tuple[float, ...], n: int = 12, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    d = np.arange(1, 31)
    clean = np.stack([np.stack([d**e for e in exponents])] * n)  # (n, layers, 30)
    return clean * np.random.default_rng(seed).lognormal(0, noise, size=clean.shape)


def test_slope_interval_is_a_point_for_identical_contexts_and_wide_otherwise():
    same = _power_law_contexts((-1.0,))
    i = memory.slope_interval(same, 0, n_boot=50)
    assert i.effect == pytest.approx(-1.0) and i.high - i.low == pytest.approx(0, abs=1e-9) and i.units == 12
    noisy = _power_law_contexts((-1.0,), noise=0.5)
    j = memory.slope_interval(noisy, 0, n_boot=200)
    assert j.low < j.effect < j.high and j.high - j.low > 0.01


def test_slope_difference_and_range_difference_pair_the_contexts():
    a = _power_law_contexts((-0.5, -1.0, -1.0), noise=0.2, seed=1)
    b = _power_law_contexts((-2.0, -1.1, -1.02), noise=0.2, seed=2)
    diff = memory.slope_difference(a, b, layer=0, n_boot=200)
    assert diff.effect == pytest.approx(memory.decay_slopes(a)[0] - memory.decay_slopes(b)[0])
    assert diff.low > 0  # a's layer 1 decays much more slowly
    spread = memory.slope_range_difference([a, b], layer_a=0, layer_b=2, n_boot=200)
    sa, sb = memory.decay_slopes(a), memory.decay_slopes(b)
    assert spread.effect == pytest.approx(abs(sa[0] - sb[0]) - abs(sa[2] - sb[2]))
    assert spread.low > 0  # layer 3 agrees across models far more than layer 1
    with pytest.raises(ValueError, match="same contexts"):
        memory.slope_difference(a, b[:5], layer=0)
    with pytest.raises(ValueError, match="at least two models"):
        memory.slope_range_difference([a], 0, 2)


def test_slope_interval_refuses_a_nan_slope():
    flat = np.zeros((4, 1, 30))
    flat[:, 0, 0] = 1.0  # only d = 1 above the floor: no slope
    with pytest.raises(ValueError, match="NaN"):
        memory.slope_interval(flat, 0, n_boot=20)


def test_decay_slope_ignores_the_roundoff_plateau():
    d = np.arange(1, 71)
    row = np.maximum(d**-6.0, 1e-7)  # falls to a float32-like floor after d ~ 15
    changes = row[None, None, :]
    assert memory.decay_slopes(changes)[0] == pytest.approx(-6.0, abs=0.01)
    assert memory.decay_slopes(changes, rel_floor=0)[0] > -3
