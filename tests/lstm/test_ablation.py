"""The cell-state ablation measure on tiny models with known memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lstm_fixtures import MEMORY_VOCAB, memory_model

from prismlib import lstm
from prismlib.lstm import ablation as memory

VOCAB = MEMORY_VOCAB


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def test_shape_and_memoryless_layer():
    ids = np.random.default_rng(0).integers(1, VOCAB, 400)
    model = memory_model(-30.0)  # forget gate 0: layer 1's cell state is only the last word's
    changes = memory.cell_state_change(model, ids, n_contexts=5, length=12, replacement=0)
    assert changes.shape == (5, 2, 12)
    assert np.all(changes[:, 0, 0] > 1e-3)  # d = 1: the last word itself
    assert np.all(changes[:, 0, 1:] < 1e-6)  # nothing older survives in layer 1
    assert changes[:, 1, 1:].max() > 1e-4  # layer 2 still sees it through layer 1's h


def test_long_memory_layer_keeps_distant_words():
    ids = np.random.default_rng(1).integers(1, VOCAB, 400)
    short = memory.cell_state_change(memory_model(-30.0), ids, n_contexts=4, length=12, replacement=0)
    long_ = memory.cell_state_change(memory_model(8.0), ids, n_contexts=4, length=12, replacement=0)
    assert long_[:, 0, 6:].mean() > 100 * short[:, 0, 6:].mean()


def test_ablation_changes_exactly_the_positions_whose_word_changes():
    # every third word already is the replacement token: ablating it changes nothing, in
    # every layer; every other position of a long-memory layer 1 does change
    rng = np.random.default_rng(2)
    ids = rng.integers(1, VOCAB, 400)
    ids[::3] = 0
    n, length, warmup = 4, 12, 100
    changes = memory.cell_state_change(memory_model(8.0), ids, n, length, replacement=0, seed=5, warmup=warmup, skip_same=False)
    skipped = memory.cell_state_change(memory_model(8.0), ids, n, length, replacement=0, seed=5, warmup=warmup)
    starts = memory.context_starts(len(ids), n, length, seed=5, offset=warmup + 1)
    for k, start in enumerate(starts):
        for d in range(1, length + 1):
            already = ids[start + length - d] == 0
            assert (changes[k, :, d - 1] == 0).all() == already, (k, d)
            assert np.isnan(skipped[k, :, d - 1]).all() == already, (k, d)  # skipped by default
    np.testing.assert_array_equal(np.isnan(skipped), changes == 0)
    ok = ~np.isnan(skipped)
    np.testing.assert_array_equal(skipped[ok], changes[ok])
    # the means leave the skipped contexts out: the mean over the others, not diluted by zeros
    frame = memory.changes_frame(skipped, "m")
    layer1 = frame[frame.layer == 1].change.to_numpy()
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):  # a distance skipped in every context
        expected = np.nanmean(skipped[:, 0], axis=0)
    np.testing.assert_allclose(layer1, expected)
    assert np.isfinite(memory.decay_slopes(skipped, (1, length))).all()


def test_warmup_and_removal():
    ids = np.random.default_rng(3).integers(1, VOCAB, 400)
    model = memory_model(-30.0)  # layer 1 keeps only the last word
    cold = memory.cell_state_change(model, ids, 3, 10, replacement=0, warmup=0)
    warm = memory.cell_state_change(model, ids, 3, 10, replacement=0, warmup=50)
    assert not np.allclose(cold[:, 1], warm[:, 1])  # layer 2 carries the warm-up words
    removed = memory.cell_state_change(model, ids, 3, 10, warmup=50, mode="remove")
    assert (removed[:, 0, 0] > 1e-3).all() and (removed[:, 0, 1:] < 1e-9).all()  # the last word still last for d >= 2
    with pytest.raises(ValueError, match="mode must be one of"):
        memory.cell_state_change(model, ids, 3, 10, mode="mask")
    with pytest.raises(ValueError, match="warmup"):
        memory.cell_state_change(model, ids, 3, 10, warmup=0, mode="remove")


def test_decay_slope_of_an_exponential_gives_its_timescale():
    d = np.arange(1, 71)
    changes = np.stack([np.stack([3 * np.exp(-d / 2.0), 0.5 * np.exp(-d / 25.0)])] * 4)  # (4, 2, 70)
    slopes = memory.decay_slopes(changes, (2, 50))
    np.testing.assert_allclose(slopes, [-0.5, -0.04], atol=1e-9)
    np.testing.assert_allclose(memory.effective_timescale(slopes), [2.0, 25.0])
    assert memory.effective_timescale(0.0) == np.inf
    frame = memory.changes_frame(changes, "demo")
    assert len(frame) == 140 and (frame["sem"] == 0).all()  # identical contexts: no spread
    with pytest.raises(ValueError, match="fit range"):
        memory.decay_slopes(changes, (2, 80))


def test_context_starts_do_not_overlap():
    starts = memory.context_starts(1000, 10, 70, seed=0, offset=101)
    assert len(starts) == 10 and np.all(np.diff(starts) >= 70) and starts[0] >= 101 and starts[-1] + 70 <= 1000
    with pytest.raises(ValueError, match="non-overlapping"):
        memory.context_starts(100, 5, 70, seed=0)


FIT = (2, 25)


def _decay_contexts(rates: tuple[float, ...], n: int = 12, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    d = np.arange(1, 31)
    clean = np.stack([np.stack([np.exp(r * d) for r in rates])] * n)  # (n, layers, 30)
    return clean * np.random.default_rng(seed).lognormal(0, noise, size=clean.shape)


def test_slope_interval_is_a_point_for_identical_contexts_and_wide_otherwise():
    same = _decay_contexts((-0.3,))
    i = memory.slope_interval(same, 0, FIT, n_boot=50)
    assert i.effect == pytest.approx(-0.3) and i.high - i.low == pytest.approx(0, abs=1e-9) and i.units == 12
    noisy = _decay_contexts((-0.3,), noise=0.5)
    j = memory.slope_interval(noisy, 0, FIT, n_boot=200)
    assert j.low < j.effect < j.high and j.high - j.low > 0.001


def test_slope_difference_and_range_difference_pair_the_contexts():
    a = _decay_contexts((-0.05, -0.3, -0.3), noise=0.2, seed=1)
    b = _decay_contexts((-0.5, -0.32, -0.31), noise=0.2, seed=2)
    diff = memory.slope_difference(a, b, 0, FIT, n_boot=200)
    assert diff.effect == pytest.approx(memory.decay_slopes(a, FIT)[0] - memory.decay_slopes(b, FIT)[0])
    assert diff.low > 0  # a's layer 1 decays much more slowly
    spread = memory.slope_range_difference([a, b], 0, 2, FIT, n_boot=200)
    sa, sb = memory.decay_slopes(a, FIT), memory.decay_slopes(b, FIT)
    assert spread.effect == pytest.approx(abs(sa[0] - sb[0]) - abs(sa[2] - sb[2]))
    assert spread.low > 0  # layer 3 agrees across models far more than layer 1
    with pytest.raises(ValueError, match="same contexts"):
        memory.slope_difference(a, b[:5], 0, FIT)
    with pytest.raises(ValueError, match="at least two models"):
        memory.slope_range_difference([a], 0, 2, FIT)


def test_slope_interval_refuses_a_nan_slope():
    flat = np.zeros((4, 1, 30))
    flat[:, 0, :5] = 1.0  # nothing left beyond d = 5: ln(0) inside the range
    with pytest.raises(ValueError, match="NaN"):
        memory.slope_interval(flat, 0, FIT, n_boot=20)


def test_untrained_control_and_control_gate(tmp_path):
    from types import SimpleNamespace

    from prismlib.profiles import get_profile

    s = get_profile("smoke").lstm.updated(emb=6, hidden=8, cutoffs=(), layers=2)
    corpus = SimpleNamespace(vocab=[str(i) for i in range(VOCAB)], train=np.arange(200) % VOCAB)
    spec = lstm.RunSpec("layer2", 70.0, fixed=True, seed=3)
    control = lstm.untrained_model(spec, s, corpus)
    start = lstm.build_model(spec, VOCAB, s, lstm.frequency_rank(np.bincount(corpus.train, minlength=VOCAB)))
    for (name, a), b in zip(control.state_dict().items(), start.state_dict().values()):
        assert torch.equal(a, b), name  # the trained model's exact starting point
    assert not control.training
    assert torch.allclose(lstm.forget_gate_biases(list(control.rnns))[1], torch.full((6,), float(np.log(69.0))))

    # controls explain an effect when they show it as strongly as the trained models
    ids = np.random.default_rng(5).integers(1, VOCAB, 600)
    long_, short = memory_model(8.0), memory_model(0.0)
    c_long = memory.cell_state_change(long_, ids, 6, 10, replacement=0)
    c_short = memory.cell_state_change(short, ids, 6, 10, replacement=0)

    def l1_diff(cs):
        return float(memory.decay_slopes(cs[0], (2, 6))[0] - memory.decay_slopes(cs[1], (2, 6))[0])

    # here the "trained" pair equals its control pair: the control accounts for everything
    trained, ctrl, excess = memory.control_excess([c_long, c_short], [c_long, c_short], l1_diff, n_boot=200)
    assert trained.effect == ctrl.effect and excess.effect == 0
    gate = memory.control_gate("the layer-1 slope difference", trained, ctrl, excess)
    assert not gate.passed and "untrained control" in gate.detail
    # against a control without the difference (the same model twice) the effect is the model's own
    trained, ctrl, excess = memory.control_excess([c_long, c_short], [c_short, c_short], l1_diff, n_boot=200)
    assert ctrl.effect == 0 and memory.control_gate("d", trained, ctrl, excess).passed
    with pytest.raises(ValueError, match="needs its control"):
        memory.control_excess([c_long], [c_long, c_short], l1_diff)


# -- reference computations and boundaries (issue 23: the mutants of the cell-state measure are killed) --


def _reference_changes(model, ids, start: int, length: int, warmup: int, mode: str, replacement: int = 0) -> np.ndarray:
    """``||c - c'_d||_2`` of one context recomputed the plain way: every sequence read from a zero
    state in one pass, warm-up words included; ``(n_layers, length)``."""
    import copy

    m = copy.deepcopy(model).double().eval()

    def cells(seq):
        with torch.no_grad():
            _, _, state = m.run_layers(torch.as_tensor(np.asarray(seq), dtype=torch.long)[None])
        return [c[0, 0] for _, c in state]

    intact = cells(ids[start - warmup : start + length])
    out = np.zeros((len(intact), length))
    for d in range(1, length + 1):
        if mode == "replace":
            seq = ids[start - warmup : start + length].copy()
            seq[warmup + length - d] = replacement
        else:  # the word at distance d leaves, the word before the warm-up enters
            seq = np.delete(ids[start - warmup - 1 : start + length], warmup + 1 + length - d)
        for layer, c in enumerate(cells(seq)):
            out[layer, d - 1] = float((c - intact[layer]).norm())
    return out


@pytest.mark.parametrize(("mode", "warmup"), [("replace", 5), ("replace", 0), ("remove", 1), ("remove", 4)])
def test_cell_state_change_is_the_norm_of_the_cell_state_difference(mode, warmup):
    torch.manual_seed(1)
    model = lstm.LSTMLM(VOCAB, 5, 6, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0).eval()
    ids = np.random.default_rng(6).integers(0, 4, 60)  # many zeros: the replacement token
    n, length = 3, 6
    got = memory.cell_state_change(model, ids, n, length, replacement=0, seed=2, warmup=warmup, mode=mode, skip_same=False)
    rng = np.random.default_rng(2)  # the contexts: non-overlapping windows after the warm-up and one more word
    slots = (len(ids) - warmup - 1) // length
    starts = warmup + 1 + np.sort(rng.choice(slots, size=n, replace=False)) * length
    np.testing.assert_array_equal(starts, memory.context_starts(len(ids), n, length, seed=2, offset=warmup + 1))
    for k, start in enumerate(starts):
        np.testing.assert_allclose(got[k], _reference_changes(model, ids, int(start), length, warmup, mode), rtol=1e-9, atol=1e-12)
    if mode == "remove":  # nothing is skipped when words are removed
        skipped = memory.cell_state_change(model, ids, n, length, replacement=0, seed=2, warmup=warmup, mode=mode)
        np.testing.assert_array_equal(skipped, got)


def test_cell_state_change_defaults():
    torch.manual_seed(2)
    model = lstm.LSTMLM(VOCAB, 4, 5, 1, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0).eval()
    ids = np.random.default_rng(7).integers(0, 5, 300)
    default = memory.cell_state_change(model, ids, 1)
    explicit = memory.cell_state_change(model, ids, 1, length=70, replacement=0, seed=0, warmup=100, mode="replace", skip_same=True)
    assert default.shape == (1, 1, 70) and np.isnan(default).any()
    np.testing.assert_array_equal(default, explicit)
    with pytest.raises(ValueError, match="warmup must be"):
        memory.cell_state_change(model, ids, 1, 10, warmup=-1)


def test_context_starts_are_the_seeded_draw_and_fill_every_slot():
    for offset in (0, 7):
        rng = np.random.default_rng(4)
        want = offset + np.sort(rng.choice((100 - offset) // 9, size=3, replace=False)) * 9
        got = memory.context_starts(100, 3, 9, seed=4, offset=offset)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(memory.context_starts(100, 3, 9, seed=4), memory.context_starts(100, 3, 9, seed=4, offset=0))
    np.testing.assert_array_equal(memory.context_starts(63, 7, 9, seed=1), np.arange(0, 63, 9))  # every slot
    with pytest.raises(ValueError, match="only 7 non-overlapping"):
        memory.context_starts(63, 8, 9, seed=1)


def test_decay_slopes_is_a_polyfit_over_exactly_the_fit_window():
    rng = np.random.default_rng(8)
    changes = rng.lognormal(0, 0.5, size=(5, 2, 12)) * np.exp(-0.2 * np.arange(1, 13))
    changes[1, 0, 3] = np.nan  # a skipped context at d = 4: left out of that mean
    mean = np.nanmean(changes, axis=0)
    for fit in ((1, 12), (3, 7), (11, 12)):
        d = np.arange(fit[0], fit[1] + 1)
        want = [np.polyfit(d, np.log(mean[layer, fit[0] - 1 : fit[1]]), 1)[0] for layer in range(2)]
        np.testing.assert_allclose(memory.decay_slopes(changes, fit), want, rtol=1e-12)
    for fit in ((0, 5), (5, 5), (6, 5), (2, 13)):
        with pytest.raises(ValueError, match="fit range"):
            memory.decay_slopes(changes, fit)


def test_decay_slopes_needs_two_positive_distances_and_ignores_all_nan_ones():
    d = np.arange(1, 7)
    changes = np.exp(-0.3 * d)[None, None, :].repeat(2, axis=0).repeat(3, axis=1)
    changes[:, 1, 2:] = np.nan  # layer 2: only d = 1, 2 measured
    changes[:, 2, 1] = 0.0  # layer 3: nothing left at d = 2
    slopes = memory.decay_slopes(changes, (1, 6))
    np.testing.assert_allclose(slopes[:2], [-0.3, -0.3], rtol=1e-9)
    assert np.isnan(slopes[2])
    changes[:, 1, 1] = np.nan  # one distance left: no slope
    assert np.isnan(memory.decay_slopes(changes, (1, 6))[1])
    assert memory.decay_slopes(changes, (1, 6)).shape == (3,)


def test_effective_timescale_values():
    np.testing.assert_array_equal(memory.effective_timescale(np.array([-0.5, -0.25, 0.0, 0.1])), [2.0, 4.0, np.inf, np.inf])
    assert memory.effective_timescale(-0.1) == pytest.approx(10.0) and isinstance(memory.effective_timescale(-0.1), float)


def test_changes_frame_means_and_standard_errors():
    changes = np.array([[[1.0, 2.0, np.nan, np.nan]], [[3.0, 6.0, 5.0, np.nan]], [[5.0, np.nan, np.nan, np.nan]]])
    frame = memory.changes_frame(changes, "m")
    assert list(frame.columns) == ["model", "layer", "distance", "change", "sem"]
    assert frame["layer"].tolist() == [1] * 4 and frame["distance"].tolist() == [1, 2, 3, 4] and (frame["model"] == "m").all()
    np.testing.assert_allclose(frame["change"].to_numpy()[:3], [3.0, 4.0, 5.0])
    assert np.isnan(frame["change"].iloc[3])
    np.testing.assert_allclose(
        frame["sem"].to_numpy(), [np.std([1, 3, 5], ddof=1) / np.sqrt(3), np.std([2, 6], ddof=1) / np.sqrt(2), 0.0, 0.0]
    )
    two = memory.changes_frame(np.array([[[1.0], [0.0]], [[3.0], [0.0]]]), "two")
    assert two["sem"].tolist() == pytest.approx([1.0, 0.0]) and two["layer"].tolist() == [1, 2]
    one = memory.changes_frame(np.array([[[1.0, 2.0]]]), "one")  # a single context: no spread
    assert one["sem"].tolist() == [0.0, 0.0] and one["change"].tolist() == [1.0, 2.0]


@pytest.mark.slow
def test_context_intervals_are_paired_bootstraps_of_the_context_indices():
    from prismlib.stats import paired_bootstrap

    a = _decay_contexts((-0.1, -0.3), noise=0.3, seed=3)
    b = _decay_contexts((-0.2, -0.3), noise=0.3, seed=4)

    def ref(stat, n_boot=2000, seed=0):
        return paired_bootstrap(lambda i: stat(i.astype(int)), (np.arange(12),), n_boot=n_boot, seed=seed, vectorized=False)

    for layer in (0, 1):
        got = memory.slope_interval(a, layer, FIT, n_boot=300, seed=5)
        want = ref(lambda i: memory.decay_slopes(a[i], FIT)[layer], 300, 5)
        assert (got.effect, got.low, got.high) == (want.effect, want.low, want.high)
    got, want = memory.slope_interval(a, 1, FIT), ref(lambda i: memory.decay_slopes(a[i], FIT)[1])
    assert (got.low, got.high) == (want.low, want.high)
    got = memory.slope_difference(a, b, 1, FIT)
    want = ref(lambda i: memory.decay_slopes(a[i], FIT)[1] - memory.decay_slopes(b[i], FIT)[1])
    assert (got.effect, got.low, got.high, got.units) == (want.effect, want.low, want.high, 12)
    got = memory.slope_range_difference([a, b, a], 0, 1, FIT, n_boot=300, seed=5)
    want = ref(
        lambda i: (
            np.ptp([memory.decay_slopes(x[i], FIT)[0] for x in (a, b, a)]) - np.ptp([memory.decay_slopes(x[i], FIT)[1] for x in (a, b, a)])
        ),
        300,
        5,
    )
    assert (got.low, got.high) == (want.low, want.high)
    trained, ctrl, excess = memory.control_excess([a], [b], lambda cs: memory.decay_slopes(cs[0], FIT)[0], n_boot=300, seed=5)
    assert (excess.low, excess.high) == (
        ref(lambda i: memory.decay_slopes(a[i], FIT)[0] - memory.decay_slopes(b[i], FIT)[0], 300, 5).low,
        ref(lambda i: memory.decay_slopes(a[i], FIT)[0] - memory.decay_slopes(b[i], FIT)[0], 300, 5).high,
    )
    assert trained.effect == memory.decay_slopes(a, FIT)[0] and ctrl.effect == memory.decay_slopes(b, FIT)[0]
    default = memory.control_excess([a], [b], lambda cs: memory.decay_slopes(cs[0], FIT)[0])[2]
    want = ref(lambda i: memory.decay_slopes(a[i], FIT)[0] - memory.decay_slopes(b[i], FIT)[0])
    assert (default.low, default.high) == (want.low, want.high)
    default = memory.slope_range_difference([a, b], 0, 1, FIT)
    want = ref(
        lambda i: (
            abs(memory.decay_slopes(a[i], FIT)[0] - memory.decay_slopes(b[i], FIT)[0])
            - abs(memory.decay_slopes(a[i], FIT)[1] - memory.decay_slopes(b[i], FIT)[1])
        )
    )
    assert (default.low, default.high) == pytest.approx((want.low, want.high), rel=1e-12)
    assert memory.slope_range_difference([a, b], 0, 1, FIT, n_boot=40).units == 12


def paired_bootstrap_of_indices(stat, n: int, n_boot: int = 2000, seed: int = 0):
    from prismlib.stats import paired_bootstrap

    return paired_bootstrap(lambda i: stat(i.astype(int)), (np.arange(n),), n_boot=n_boot, seed=seed, vectorized=False)


def test_context_interval_refuses_what_is_not_one_set_of_contexts():
    a = _decay_contexts((-0.1,))
    for bad in ([], [a[:, 0]], [a, a[:, 0]]):
        with pytest.raises(ValueError, match="non-empty list"):
            memory.context_interval(bad, lambda cs: 0.0)
    with pytest.raises(ValueError, match="same contexts"):
        memory.context_interval([a, a[:6]], lambda cs: 0.0)
    noisy = _decay_contexts((-0.1,), noise=0.3, seed=2)
    cheap = memory.context_interval([noisy], lambda cs: float(cs[0][:, 0, 0].mean()))  # seed 0, 2000 resamples
    want = paired_bootstrap_of_indices(lambda i: float(noisy[i, 0, 0].mean()), 12)
    assert (cheap.low, cheap.high) == (want.low, want.high)


@pytest.mark.parametrize(
    ("effect", "low", "high", "passed"),
    [
        (0.5, 0.1, 0.9, True),
        (0.5, 0.0, 0.9, False),
        (0.5, -0.1, 0.9, False),
        (0.5, 0.5, 2.0, True),
        (0.0, 0.1, 0.2, True),  # a zero trained effect counts as the upper side
        (-0.5, -0.9, -0.1, True),
        (-0.5, -0.9, 0.0, False),
        (-0.5, -0.2, 0.1, False),
        (-0.5, -2.0, -0.5, True),
        (-0.5, 0.2, 0.5, False),
    ],
)
def test_control_gate_needs_the_excess_clearly_on_the_side_of_the_effect(effect, low, high, passed):
    from prismlib.stats import Interval

    trained, control = Interval(effect, effect - 0.1, effect + 0.1, 12), Interval(0.0, -0.1, 0.1, 12)
    gate = memory.control_gate("x", trained, control, Interval((low + high) / 2, low, high, 12))
    assert gate.passed is passed
    assert gate.name == "the untrained control (same fixed biases) does not account for x"


def test_power_slopes_read_a_power_law_decay_exactly():
    d = np.arange(1, 31)
    changes = np.stack([np.stack([d**-0.5, np.exp(-d / 5.0)])] * 4) * np.linspace(1, 2, 4)[:, None, None]  # (4, 2, 30)
    slopes = memory.power_slopes(changes, (2, 30))
    assert slopes[0] == pytest.approx(-0.5)  # d^-0.5 is a line in log-log
    assert slopes[1] < -1  # an exponential bends down: steeper over the range
    iv = memory.power_slope_interval(changes, 0, (2, 30), n_boot=100)
    assert iv.effect == pytest.approx(-0.5) and iv.units == 4
    with pytest.raises(ValueError, match="fit range"):
        memory.power_slopes(changes, (0, 30))


def test_resolvable_fit_ends_before_the_change_is_exactly_zero_in_most_contexts():
    d = np.arange(1, 31, dtype=float)
    scale = np.linspace(1, 2, 40)[:, None, None]
    changes = np.stack([np.stack([d**-0.5, d**-0.5])] * 40) * scale  # (40, 2, 30)
    changes[:30, 1, 19:] = 0.0  # layer 1: 30 of 40 contexts at exactly 0 from d = 20 on
    changes[:20, 1, 9:19] = 0.0  # and half of them (not more) from d = 10
    assert memory.resolvable_fit(changes, 0, (2, 30)) == (2, 30)  # nothing gone: the range stays
    assert memory.resolvable_fit(changes, 1, (2, 30)) == (2, 19)
    assert memory.resolvable_fit(changes, 1, (2, 30), zero_share=0.25) == (2, 9)
    assert memory.resolvable_fit(changes, 1, (19, 30)) is None  # 19 alone is left: no slope
    iv = memory.power_slope_interval(changes, 1, (2, 19), n_boot=50)
    assert np.isfinite([iv.low, iv.high]).all()
    with pytest.raises(ValueError, match="fit range"):
        memory.resolvable_fit(changes, 0, (2, 31))


def test_shared_fit_is_the_shortest_resolvable_range_of_every_array_and_layer():
    d = np.arange(1, 31, dtype=float)
    whole = np.stack([np.stack([d**-0.5, d**-0.5])] * 10)  # (10, 2, 30): nothing is 0
    early = whole.copy()
    early[:6, 1, 14:] = 0.0  # layer 2: 6 of 10 contexts at exactly 0 from d = 15 on
    assert memory.shared_fit({"a": whole}, (2, 30)) == (2, 30)
    assert memory.shared_fit({"a": whole, "b": early}, (2, 30)) == (2, 14)
    assert memory.shared_fit({"b": early, "a": whole}, (2, 30)) == (2, 14)  # whichever model it is
    gone = whole.copy()
    gone[:, 0, 2:] = 0.0  # layer 1 at 0 from d = 3: no slope left
    with pytest.raises(ValueError, match="gone model, layer 1"):
        memory.shared_fit({"a": whole, "gone model": gone}, (2, 30))
