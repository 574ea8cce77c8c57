"""The cell-state ablation measure on tiny models with known memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib import lstm
from prismlib.lstm import ablation as memory
from prismlib.lstm import apply_timescales

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


def test_ablation_changes_exactly_the_positions_whose_word_changes():
    # every third word already is the replacement token: ablating it changes nothing, in
    # every layer; every other position of a long-memory layer 1 does change
    rng = np.random.default_rng(2)
    ids = rng.integers(1, VOCAB, 400)
    ids[::3] = 0
    n, length, warmup = 4, 12, 100
    changes = memory.cell_state_change(_model(8.0), ids, n, length, replacement=0, seed=5, warmup=warmup, skip_same=False)
    skipped = memory.cell_state_change(_model(8.0), ids, n, length, replacement=0, seed=5, warmup=warmup)
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
    model = _model(-30.0)  # layer 1 keeps only the last word
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
    assert len(frame) == 140 and frame["sem"].max() == pytest.approx(0)
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


def _copy_corpus(n: int = 4000, period: int = 7, seed: int = 0) -> np.ndarray:
    """A stream whose word at t repeats the word at t - period: predictable only with context."""
    rng = np.random.default_rng(seed)
    base = rng.integers(1, VOCAB, period)
    ids = np.resize(base, n).copy()
    noise = rng.random(n) < 0.05
    ids[noise] = rng.integers(1, VOCAB, noise.sum())
    return ids


def test_context_use_gate_passes_for_a_model_that_uses_context_and_fails_for_one_that_cannot():
    ids = _copy_corpus()
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 16, 32, 1, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0)
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    data = torch.as_tensor(ids[:3000]).view(10, 300)
    for _ in range(150):  # learns the period-7 repetition
        for i in range(0, 280, 20):
            x, y = data[:, i : i + 20], data[:, i + 1 : i + 21]
            loss = model.nll(model(x).last_dropped, y).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if _ % 50 == 49 and lstm.perplexity(lstm.token_nll(model, ids[3000:], 4, 20)) < 3:
            break
    used = lstm.context_use(model, ids[3000:], reset_every=5, batch_size=4, bptt=20, n_boot=500)
    gate = lstm.context_use_gate("copy model", used)
    assert used.effect < 0 and gate.passed and "reset every 5" in gate.name
    # a memoryless model (forget gate 0, no recurrence) predicts the same with and without its past
    blind = _model(-30.0)
    for layer in blind.rnns:
        with torch.no_grad():
            layer.weight_hh_l0_raw.zero_()
    apply_timescales(list(blind.rnns), [torch.full((8,), -30.0), torch.full((6,), -30.0)], fixed=True)
    none = lstm.context_use(blind, ids[3000:], reset_every=5, batch_size=4, bptt=20, n_boot=500)
    assert abs(none.effect) < 1e-6 and not lstm.context_use_gate("blind", none).passed


def test_reset_every_predicts_the_same_positions_and_one_word_resets_everything():
    ids = np.random.default_rng(4).integers(1, VOCAB, 300)
    model = _model(8.0)
    full = lstm.token_nll(model, ids, 4, 10)
    reset = lstm.token_nll(model, ids, 4, 10, reset_every=5)
    np.testing.assert_array_equal(np.isnan(full), np.isnan(reset))
    ones = lstm.token_nll(model, ids, 4, 10, reset_every=1)
    mask = ~np.isnan(ones)
    # every token then sees only the word before it: equal NLL wherever that word is the same
    same_prev = {}
    for t in np.flatnonzero(mask):
        same_prev.setdefault((ids[t - 1], ids[t]), []).append(ones[t])
    assert all(np.ptp(v) < 1e-5 for v in same_prev.values())
    with pytest.raises(ValueError, match="reset_every"):
        lstm.token_nll(model, ids, 4, 10, reset_every=0)


def test_untrained_control_and_control_gate(tmp_path):
    from types import SimpleNamespace
    import dataclasses

    from prismlib.profiles import get_profile

    s = dataclasses.replace(get_profile("smoke").lstm, emb=6, hidden=8, cutoffs=(), layers=2)
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
    long_, short = _model(8.0), _model(0.0)
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
