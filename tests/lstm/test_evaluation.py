"""Evaluation of a model (prismlib.lstm.evaluation): per-token NLL, perplexity, paired chunks,
the bootstrap, contrasts, frequency bins, forget-gate means and seed means."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, random_ids

from prismlib import lstm
from prismlib.stats import ratio_difference

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


@pytest.mark.parametrize("cutoffs", [(), (8, 20)])
def test_token_nll_matches_direct_computation(cutoffs):
    torch.manual_seed(0)
    rank = lstm.frequency_rank(np.bincount(random_ids(500, 9), minlength=VOCAB)) if cutoffs else None
    model = lstm.LSTMLM(VOCAB, 6, 10, 3, cutoffs=cutoffs, rank=rank).eval()
    ids = random_ids(53)
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
        nll = lstm.token_nll(model, random_ids(n), batch_size=batch, bptt=4)
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


def test_forget_gate_means_match_a_step_by_step_lstm_cell():
    torch.manual_seed(0)
    model = lstm.LSTMLM(VOCAB, 6, 8, 2, dropout=0, dropouth=0, dropouti=0, dropoute=0, wdrop=0).eval()
    ids = random_ids(60, 4)
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
