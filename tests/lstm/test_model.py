"""The AWD-style LM: fixed biases stay fixed, fused kernel, evaluation, paired chunks, bootstrap, resume."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, tiny_lstm

from prismlib import lstm
from prismlib.lstm import forget_gate_biases
from prismlib.stats import ratio_difference

TINY = tiny_lstm(optimizer="ntasgd", curve_every=2, curve_tokens=1000, epochs=2, steps_per_epoch=3, cutoffs=(), average_last=0)


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _ids(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, n)


def _fixed_entries(model: lstm.LSTMLM) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [tuple(t.detach().clone() for t in r.effective_biases()) for r in model.rnns]


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "asgd"])
def test_fixed_biases_stay_bit_identical_under_weight_decay(optimizer):
    spec = lstm.RunSpec("layerwise", 20.0, fixed=True, seed=0)
    model = lstm.build_model(spec, VOCAB, TINY)
    before = _fixed_entries(model)
    weights_before = [r.weight_hh_l0_raw.detach().clone() for r in model.rnns]
    opt = {
        "sgd": lambda p: torch.optim.SGD(p, lr=1.0, momentum=0.9, weight_decay=0.1),
        "adam": lambda p: torch.optim.Adam(p, lr=0.05, weight_decay=0.1),
        "asgd": lambda p: torch.optim.ASGD(p, lr=1.0, t0=0, lambd=0.0, weight_decay=0.1),
    }[optimizer](model.parameters())
    x = torch.as_tensor(_ids(4 * 9)).view(4, 9)
    for _ in range(5):
        out = model(x[:, :-1])
        loss = model.nll(out.last_dropped, x[:, 1:]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = _fixed_entries(model)
    for r, (ih0, hh0), (ih1, hh1), w0 in zip(model.rnns, before, after, weights_before):
        h = r.hidden_size
        assert torch.equal(ih1[: 2 * h], ih0[: 2 * h]) and torch.equal(hh1[: 2 * h], hh0[: 2 * h])
        assert torch.equal(hh1[: 2 * h], torch.zeros(2 * h))
        assert not torch.equal(ih1[2 * h :], ih0[2 * h :]) and not torch.equal(hh1[2 * h :], hh0[2 * h :])
        assert not torch.equal(r.weight_hh_l0_raw, w0)
        assert r.bias_ih_l0_raw.grad[: 2 * h].abs().max() == 0


def test_initialised_biases_do_train():
    model = lstm.build_model(lstm.RunSpec("layerwise", 20.0, fixed=False), VOCAB, TINY)
    b0 = forget_gate_biases(list(model.rnns))
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    x = torch.as_tensor(_ids(40)).view(4, 10)
    out = model(x[:, :-1])
    model.nll(out.last_dropped, x[:, 1:]).mean().backward()
    opt.step()
    assert all(not torch.equal(a, b) for a, b in zip(b0, forget_gate_biases(list(model.rnns))))


@pytest.mark.parametrize("fixed", [False, True])
def test_uses_fused_lstm_kernel(fixed):
    model = lstm.build_model(lstm.RunSpec("gradient", 20.0, fixed=fixed), VOCAB, TINY)
    model.train()
    x = torch.as_tensor(_ids(4 * 12)).view(4, 12)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model.log_probs(model(x).last_dropped).sum().backward()
    names = [e.name for e in prof.events()]
    assert names.count("aten::lstm") == len(model.rnns)
    assert "aten::lstm_cell" not in names and "aten::_thnn_fused_lstm_cell" not in names


def test_weight_drop_is_random_in_training_and_off_in_eval():
    model = lstm.LSTMLM(VOCAB, 6, 10, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0.5)
    x = torch.as_tensor(_ids(2 * 7)).view(2, 7)
    torch.manual_seed(0)
    a, b = model(x).last_dropped, model(x).last_dropped
    assert not torch.allclose(a, b)
    a.sum().backward()
    assert model.rnns[0].weight_hh_l0_raw.grad is not None
    model.eval()
    assert torch.equal(model(x).last_dropped, model(x).last_dropped)


@pytest.mark.parametrize("cutoffs", [(), (8, 20)])
def test_token_nll_matches_direct_computation(cutoffs):
    torch.manual_seed(0)
    rank = lstm.frequency_rank(np.bincount(_ids(500, 9), minlength=VOCAB)) if cutoffs else None
    model = lstm.LSTMLM(VOCAB, 6, 10, 3, cutoffs=cutoffs, rank=rank).eval()
    ids = _ids(53)
    nll = lstm.token_nll(model, ids, batch_size=2, bptt=5)
    assert nll.shape == (53,)
    n = 53 // 2
    assert np.isnan(nll[0]) and np.isnan(nll[n]) and np.isnan(nll[-1])
    assert np.isfinite(nll).sum() == 2 * (n - 1)
    with torch.no_grad():
        stream = torch.as_tensor(ids[n : 2 * n]).view(1, -1)
        logp = model.log_probs(model(stream[:, :-1]).last_dropped)[0]
        direct = -logp.gather(-1, stream[0, 1:, None])[:, 0].double().numpy()
    np.testing.assert_allclose(nll[n + 1 : 2 * n], direct, rtol=1e-5)
    assert lstm.perplexity(nll) == pytest.approx(math.exp(np.nanmean(nll)))


def test_bootstrap_perplexity():
    const = np.full(700, math.log(50.0))
    b = lstm.bootstrap_perplexity(const, block=70, samples=50)
    assert b.mean == pytest.approx(50) and b.sd == pytest.approx(0, abs=1e-9) and b.blocks == 10
    rng = np.random.default_rng(0)
    nll = rng.gamma(2.0, 2.0, size=70 * 1000)
    nll[::70] = np.nan
    b1 = lstm.bootstrap_perplexity(nll, samples=400, seed=1)
    assert b1 == lstm.bootstrap_perplexity(nll, samples=400, seed=1)
    assert b1.mean == pytest.approx(b1.point, rel=0.01)
    # sd of the mean NLL over blocks, propagated through exp
    block_means = np.nanmean(nll.reshape(1000, 70), axis=1)
    expected_sd = b1.point * block_means.std(ddof=1) / math.sqrt(1000)
    assert b1.sd == pytest.approx(expected_sd, rel=0.2)
    with pytest.raises(ValueError, match="fewer than two blocks"):
        lstm.bootstrap_perplexity(np.ones(100), block=70)


def test_training_resumes_exactly_from_checkpoint(tmp_path):
    train, valid = _ids(600, 1), _ids(200, 2)
    one = TINY.updated(epochs=1)
    ref = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY)
    hist_ref = lstm.train_lm(ref, train, valid, TINY, seed=3)
    resumed = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY)
    ck = tmp_path / "ck.pt"
    lstm.train_lm(resumed, train, valid, one, seed=3, checkpoint=ck)
    resumed = lstm.build_model(lstm.RunSpec(seed=3), VOCAB, TINY)
    hist = lstm.train_lm(resumed, train, valid, TINY, seed=3, checkpoint=ck)
    assert hist.epochs == 2 and hist.val_ppl == hist_ref.val_ppl
    for a, b in zip(ref.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)


def test_seed_k_of_every_model_draws_the_same_data_order_and_dropout_masks(monkeypatch):
    """Seeds are paired across the grid: the random draws of training (BPTT lengths, dropout
    masks) depend on the seed only, not on the variant, so seed k of two models differs only
    by the models."""
    from prismlib.lstm import model as lstm_model

    draws: list[tuple] = []
    original = lstm_model.locked_dropout

    def recorded(x, p, training):
        out = original(x, p, training)
        if training and p > 0:  # the mask this call drew, and the BPTT length it was drawn for
            draws.append((x.shape[1], round(float((out == 0).float().sum()), 1), round(float(torch.rand(())), 6)))
        return out

    monkeypatch.setattr(lstm_model, "locked_dropout", recorded)
    train, valid = _ids(600, 1), _ids(200, 2)
    s = TINY.updated(dropout=0.3, dropouth=0.3, dropouti=0.3, epochs=1)
    seen = {}
    for spec in (
        lstm.RunSpec(seed=5),
        lstm.RunSpec("layerwise", 70.0, fixed=True, seed=5),
        lstm.RunSpec("pareto", fixed=True, seed=5),
        lstm.RunSpec("gradient", 20.0, fixed=False, seed=5),
        lstm.RunSpec(seed=6),
    ):
        draws.clear()
        lstm.train_lm(lstm.build_model(spec, VOCAB, s), train, valid, s, seed=spec.seed)
        seen[(spec.label, spec.seed)] = list(draws)
    five = [v for (_, seed), v in seen.items() if seed == 5]
    assert len(five[0]) > 10 and all(v == five[0] for v in five)
    assert seen[("baseline", 6)] != five[0]


def test_chunk_sums_pair_models_and_drop_empty_chunks():
    nll = np.arange(10, dtype=float)
    nll[[0, 5, 8, 9]] = np.nan
    sums, counts = lstm.chunk_sums(nll, chunk=3)  # chunks {0,1,2} {3,4,5} {6,7,8} {9}: the last is empty
    np.testing.assert_array_equal(sums, [3.0, 7.0, 13.0])
    np.testing.assert_array_equal(counts, [2.0, 2.0, 2.0])
    two, counts2 = lstm.chunk_sums(np.stack([nll, 2 * nll]), chunk=3)
    np.testing.assert_array_equal(two, [[3.0, 7.0, 13.0], [6.0, 14.0, 26.0]])
    np.testing.assert_array_equal(counts2, counts)
    shifted = nll.copy()
    shifted[1] = np.nan
    with pytest.raises(ValueError, match="same positions"):
        lstm.chunk_sums(np.stack([nll, shifted]), chunk=3)
    with pytest.raises(ValueError, match="fewer than two chunks"):
        lstm.chunk_sums(nll, chunk=100)


def test_predicted_mask_is_what_token_nll_predicts():
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 6, 10, 2).eval()
    for n, batch in [(53, 2), (60, 3), (41, 1)]:
        nll = lstm.token_nll(model, _ids(n), batch_size=batch, bptt=4)
        np.testing.assert_array_equal(np.isfinite(nll), lstm.predicted_mask(n, batch))
    with pytest.raises(ValueError, match="too few"):
        lstm.predicted_mask(5, 4)


def _noisy_nll(shift: float, seed: int, n: int = 3000) -> np.ndarray:
    base = np.random.default_rng(0).gamma(2.0, 2.0, size=n)  # shared difficulty of each token
    nll = base + shift + np.random.default_rng(seed).normal(0, 0.3, size=n)
    nll[::500] = np.nan
    return nll


def test_perplexity_contrast():
    a, b, c = _noisy_nll(0.0, 1), _noisy_nll(0.05, 2), _noisy_nll(0.2, 3)
    d = lstm.perplexity_difference(a, b, n_boot=500)
    assert d.effect == pytest.approx(lstm.perplexity(a) - lstm.perplexity(b))
    assert d.high < 0 and d.units == 30
    sums, counts = lstm.chunk_sums(np.stack([a, b]))
    same = ratio_difference(sums[0], sums[1], counts, transform=np.exp, n_boot=500)
    assert (d.low, d.high) == (same.low, same.high)
    best = lstm.perplexity_contrast(a, [b, c], against="best", n_boot=500)
    assert best.effect == pytest.approx(d.effect) and best.high < 0
    worst = lstm.perplexity_contrast(c, [a, b], against="worst", n_boot=500)
    assert worst.effect == pytest.approx(lstm.perplexity(c) - lstm.perplexity(b)) and worst.low > 0
    # a seed mean: the chunks' NLL sums averaged over seeds
    seeds = np.stack([a, _noisy_nll(0.0, 4)])
    m = lstm.perplexity_difference(seeds, b, n_boot=100)
    assert m.effect == pytest.approx(lstm.model_perplexity(seeds) - lstm.perplexity(b))
    assert lstm.model_perplexity(seeds) == pytest.approx(math.exp(np.nanmean(seeds.mean(axis=0))))
    with pytest.raises(ValueError, match="'best' or 'worst'"):
        lstm.perplexity_contrast(a, [b], against="median")


def test_adaptive_softmax_is_normalised_tied_and_frequency_ordered():
    counts = np.bincount(_ids(500, 9), minlength=VOCAB)
    rank = lstm.frequency_rank(counts)
    assert counts[rank.argsort().numpy()].tolist() == sorted(counts, reverse=True)  # rank 0 = most frequent
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 6, 10, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0, cutoffs=(8, 20), rank=rank)
    x = torch.as_tensor(_ids(2 * 9)).view(2, 9)
    logp = model.log_probs(model(x).last_dropped)
    torch.testing.assert_close(logp.exp().sum(-1), torch.ones(2, 9))
    # tied: the input embedding of word w is its output row (head row or cluster row, by rank)
    word = int(rank.argsort()[0])  # the most frequent word sits in the head's first row
    torch.testing.assert_close(model.embedding_matrix()[word], model.adaptive.head.weight[0])
    assert not hasattr(model, "encoder") and not hasattr(model, "decoder")
    model.nll(model(x[:, :-1]).last_dropped, x[:, 1:]).mean().backward()
    assert model.adaptive.head.weight.grad is not None
    with pytest.raises(ValueError, match="permutation"):
        lstm.LSTMLM(VOCAB, 6, 10, 2, cutoffs=(8, 20), rank=torch.zeros(VOCAB, dtype=torch.long))
    with pytest.raises(ValueError, match="cutoffs must increase"):
        lstm.LSTMLM(VOCAB, 6, 10, 2, cutoffs=(20, 8))


def test_forget_gate_means_match_a_step_by_step_lstm_cell():
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 6, 8, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0).eval()
    ids = _ids(60, 4)
    means = lstm.forget_gate_means(model, ids, batch_size=1, bptt=7)  # one stream, state carried over chunks
    x = model.encoder.weight[torch.as_tensor(ids)][None]
    for layer, rnn in enumerate(model.rnns):
        h = c = torch.zeros(1, rnn.hidden_size)
        cell = torch.nn.LSTMCell(rnn.input_size, rnn.hidden_size)
        b_ih, b_hh = rnn.effective_biases()
        for name, value in (("weight_ih", rnn.weight_ih_l0), ("weight_hh", rnn.weight_hh_l0_raw), ("bias_ih", b_ih), ("bias_hh", b_hh)):
            getattr(cell, name).data.copy_(value.detach())
        forget, outs = [], []
        with torch.no_grad():
            for t in range(x.size(1)):
                gates = x[:, t] @ cell.weight_ih.T + cell.bias_ih + h @ cell.weight_hh.T + cell.bias_hh
                forget.append(torch.sigmoid(gates[:, rnn.hidden_size : 2 * rnn.hidden_size]))
                h, c = cell(x[:, t], (h, c))
                outs.append(h)
        np.testing.assert_allclose(means[layer], torch.cat(forget).mean(0).numpy(), rtol=1e-5, atol=1e-6)
        x = torch.stack(outs, dim=1)


def test_perplexity_by_frequency_bins_and_pairs():
    counts = np.array([20_000, 5_000, 500, 50, 5] + [0] * (VOCAB - 5))
    ids = np.tile(np.arange(5), 200)  # every bin, 200 tokens each
    assert list(lstm.frequency_bins(ids[:5], counts)) == [">10k", "1k-10k", "100-1k", "<100", "<100"]
    a = np.where(ids < 3, 1.0, 2.0)
    b = a + np.where(ids >= 3, 0.5, 0.0)  # b worse on rare words only
    a[0] = b[0] = np.nan
    frame = lstm.perplexity_by_frequency({"a": a, "b": b}, ids, counts, reference="a", n_boot=200)
    row = frame.set_index(["model", "bin"])
    assert row.loc[("a", ">10k"), "ppl"] == pytest.approx(math.e) and row.loc[("a", ">10k"), "tokens"] == 199
    assert row.loc[("b", "1k-10k"), "delta"].effect == pytest.approx(0.0)
    rare = row.loc[("b", "<100"), "delta"]
    assert rare.effect == pytest.approx(math.exp(2.5) - math.exp(2.0)) and rare.low > 0
    assert row.loc[("a", "<100"), "delta"] is None
    with pytest.raises(ValueError, match="reference"):
        lstm.perplexity_by_frequency({"a": a}, ids, counts, reference="z")


def test_average_last_switches_to_asgd_for_the_final_epochs():
    train, valid = _ids(600, 1), _ids(200, 2)
    s = TINY.updated(optimizer="ntasgd", lr=1.0, epochs=3, average_last=1)
    hist = lstm.train_lm(lstm.build_model(lstm.RunSpec(), VOCAB, s), train, valid, s, seed=0)
    assert hist.asgd_from == 2  # switched after epoch 2: epoch 3 averages
    off = s.updated(average_last=0)
    assert lstm.train_lm(lstm.build_model(lstm.RunSpec(), VOCAB, off), train, valid, off, seed=0).asgd_from is None


def test_seed_means_stack_seeds_and_contrast_with_the_reference():
    rng = np.random.default_rng(0)
    n = 400
    base = [rng.gamma(2.0, 2.0, n) for _ in range(3)]
    other = rng.gamma(2.0, 2.1, n)
    runs = {lstm.RunSpec("baseline", seed=s): SimpleNamespace(test_chunks=x) for s, x in enumerate(base)}
    runs[lstm.RunSpec("pareto", fixed=True, seed=0)] = SimpleNamespace(test_chunks=other)
    sm = lstm.seed_means(runs, key=lambda s: s.variant, reference="baseline")
    assert list(sm.nll) == ["baseline", "pareto"] and sm.nll["baseline"].shape == (3, n) and sm.nll["pareto"].shape == (n,)
    assert sm.seeds("baseline") == 3 and sm.seeds("pareto") == 1
    assert sm.perplexity("baseline") == pytest.approx(math.exp(np.mean(base)))
    assert sm.seed_sd("baseline") == pytest.approx(np.std([math.exp(x.mean()) for x in base], ddof=1))
    assert sm.seed_sd("pareto") == 0.0
    assert sm.delta("pareto") == lstm.perplexity_difference(other, np.stack(base))
    with pytest.raises(ValueError, match="reference 'nope' is not among"):
        lstm.seed_means(runs, key=lambda s: s.variant, reference="nope")


@pytest.mark.parametrize("freeze", ["input_forget", "forget", "all"])
def test_each_freeze_convention_freezes_exactly_its_entries_and_keeps_the_fused_kernel(freeze):
    spec = lstm.RunSpec("layerwise", 20.0, fixed=True, seed=0, freeze=freeze)
    model = lstm.build_model(spec, VOCAB, TINY)
    model.train()
    x = torch.as_tensor(_ids(4 * 12)).view(4, 12)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model.nll(model(x[:, :-1]).last_dropped, x[:, 1:]).mean().backward()
    names = [e.name for e in prof.events()]
    assert names.count("aten::lstm") == len(model.rnns) and "aten::lstm_cell" not in names
    gates = {"input_forget": "if", "forget": "f", "all": "ifgo"}[freeze]
    for r in model.rnns:
        h = r.hidden_size
        expected = torch.zeros(4 * h, dtype=torch.bool)
        for k, g in enumerate("ifgo"):
            expected[k * h : (k + 1) * h] = g in gates
        assert torch.equal(r.fixed_mask, expected)
        for grad in (r.bias_ih_l0_raw.grad, r.bias_hh_l0_raw.grad):
            assert (grad[expected] == 0).all()  # frozen: no gradient at all
            assert (grad[~expected] != 0).all()  # every other entry trains
        b_ih, b_hh = r.effective_biases()
        b_f = (b_ih + b_hh)[h : 2 * h]
        assert torch.allclose((b_ih + b_hh)[:h], -b_f)  # b_i = -b_f at the start in every convention
    assert spec.label == ("layerwise T=20 (fixed)" if freeze == "input_forget" else f"layerwise T=20 (fixed: {freeze})")


def test_freeze_conventions_are_checked():
    with pytest.raises(ValueError, match="freeze must be one of"):
        lstm.RunSpec("layerwise", 20.0, fixed=True, freeze="input")
    with pytest.raises(ValueError, match="applies to fixed variants"):
        lstm.RunSpec("layerwise", 20.0, fixed=False, freeze="forget")
    with pytest.raises(ValueError, match="applies to fixed variants"):
        lstm.RunSpec("official", fixed=True, freeze="forget")
    assert lstm.freeze_mask(2, "forget").tolist() == [False, False, True, True, False, False, False, False]
