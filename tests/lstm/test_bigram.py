"""The Kneser-Ney bigram baseline: normalised, better than a unigram, aligned with the LSTM's NLL."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from real_data import need

from prismlib import lstm
from prismlib.lstm import bigram
from prismlib.stats import Interval

V = 40


def _markov_text(n: int, seed: int) -> np.ndarray:
    """A first-order Markov chain over V types, each with three possible successors."""
    rng = np.random.default_rng(12345)  # the chain is fixed; ``seed`` draws the text
    trans = np.zeros((V, V))
    for v in range(V):
        trans[v, rng.choice(V, 3, replace=False)] = rng.dirichlet(np.ones(3))
    cdf = trans.cumsum(axis=1)
    u = np.random.default_rng(seed).random(n)
    out = np.zeros(n, dtype=np.int64)
    for t in range(1, n):
        out[t] = min(np.searchsorted(cdf[out[t - 1]], u[t]), V - 1)
    return out


@pytest.fixture(scope="module")
def lm() -> bigram.BigramLM:
    return bigram.fit_bigram(_markov_text(20_000, seed=0), V)


def test_distributions_sum_to_one_for_seen_and_unseen_contexts():
    train = _markov_text(5_000, seed=1)
    train = train[train != V - 1]  # type V - 1 never occurs: an unseen context and an unseen word
    model = bigram.fit_bigram(train, V)
    assert model.context_count[V - 1] == 0
    for context in (0, 1, int(train[100]), V - 1):
        p = model.distribution(context)
        assert p.shape == (V,) and np.all(p > 0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert model.lower.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(model.distribution(V - 1), model.lower)  # unseen context: the lower order


def test_probabilities_follow_the_kneser_ney_formula():
    """An independent, dictionary-based computation of interpolated Kneser-Ney."""
    k = 6
    ids = np.random.default_rng(3).choice(k, size=30, p=[0.35, 0.25, 0.15, 0.1, 0.1, 0.05])
    model = bigram.fit_bigram(ids, k)
    pairs = list(zip(ids[:-1].tolist(), ids[1:].tolist()))
    c = {(v, w): pairs.count((v, w)) for v in range(k) for w in range(k)}
    seen = [x for x in c.values() if x > 0]
    d = seen.count(1) / (seen.count(1) + 2 * seen.count(2))
    cont = [sum(c[(v, w)] > 0 for v in range(k)) for w in range(k)]
    positive = [x for x in cont if x > 0]
    d_u = positive.count(1) / (positive.count(1) + 2 * positive.count(2))
    total = sum(cont)
    lower = [max(x - d_u, 0) / total + d_u * len(positive) / total / k for x in cont]
    assert model.discount == pytest.approx(d) and model.unigram_discount == pytest.approx(d_u)
    np.testing.assert_allclose(model.lower, lower)
    for v in range(k):
        cv = sum(c[(v, w)] for w in range(k))
        types = sum(c[(v, w)] > 0 for w in range(k))
        for w in range(k):
            want = max(c[(v, w)] - d, 0) / cv + d * types / cv * lower[w]
            assert model.prob(np.array([v]), np.array([w]))[0] == pytest.approx(want)


def test_beats_a_unigram_on_held_out_text(lm):
    held_out = _markov_text(5_000, seed=7)
    ppl_bigram = lstm.perplexity(bigram.bigram_nll(lm, held_out))
    train = _markov_text(20_000, seed=0)
    unigram = (np.bincount(train, minlength=V) + 1) / (len(train) + V)  # add-one: every type has mass
    ppl_unigram = math.exp(-np.log(unigram[held_out[1:]]).mean())
    assert ppl_bigram < 0.8 * ppl_unigram


def test_token_nll_is_aligned_with_the_lstm_evaluation(lm):
    ids = _markov_text(503, seed=3)
    torch.manual_seed(0)
    model = lstm.LSTMLM(V, 6, 8, 2).eval()
    with torch.no_grad():
        nll_lstm = lstm.token_nll(model, ids, batch_size=4, bptt=7)
    nll_bigram = bigram.bigram_nll(lm, ids, batch_size=4)
    np.testing.assert_array_equal(np.isfinite(nll_bigram), np.isfinite(nll_lstm))
    np.testing.assert_array_equal(np.isfinite(nll_lstm), lstm.predicted_mask(len(ids), 4))
    full = bigram.bigram_nll(lm, ids)
    assert np.isnan(full[0]) and np.isfinite(full[1:]).all()
    keep = np.isfinite(nll_bigram)
    np.testing.assert_allclose(nll_bigram[keep], full[keep])
    # the chunks pair: both models have the same predicted tokens per chunk
    sums, counts = lstm.chunk_sums(np.stack([nll_lstm, nll_bigram]))
    assert sums.shape == (2, 5) and counts.sum() == keep.sum()  # the 3-token tail predicts nothing: dropped
    with pytest.raises(ValueError, match="same positions"):
        lstm.chunk_sums(np.stack([nll_lstm, full]))


def test_gate_passes_only_when_every_model_is_clearly_below(lm):
    held_out = _markov_text(2_000, seed=5)
    nll_b = bigram.bigram_nll(lm, held_out, batch_size=2)
    better, worse = nll_b - 0.3, nll_b + 0.3
    diffs = bigram.versus_bigram({"better": better, "worse": worse, "seeds": np.stack([better, better - 0.1])}, nll_b, n_boot=200)
    assert diffs["better"].high < 0 and diffs["worse"].low > 0
    assert isinstance(diffs["seeds"], Interval) and diffs["seeds"].effect < diffs["better"].effect
    assert bigram.beats_bigram(diffs, nll_b, ["better", "seeds"]).passed
    gate = bigram.beats_bigram(diffs, nll_b)
    assert not gate.passed and "worse" in gate.detail and "1 of 3" in gate.detail
    with pytest.raises(ValueError, match="versus_bigram"):
        bigram.beats_bigram(diffs, nll_b, ["missing"])


def test_bad_input():
    with pytest.raises(ValueError, match=r"in \[0, 4\)"):
        bigram.fit_bigram(np.array([0, 1, 5, 2]), 4)
    with pytest.raises(ValueError, match="seen once and twice"):
        bigram.fit_bigram(np.array([0, 1, 2, 3]), 4)
    model = bigram.fit_bigram(_markov_text(2_000, seed=2), V)
    with pytest.raises(ValueError, match="must lie in"):
        bigram.bigram_nll(model, np.array([0, V]))
    with pytest.raises(ValueError, match="too few"):
        bigram.bigram_nll(model, np.arange(5), batch_size=4)


@pytest.mark.data
def test_ptb_bigram_perplexity(real_data_dir):
    need("ptb/ptb.train.txt", "ptb/ptb.test.txt")
    from prismlib.data.ptb import load_ptb_corpus

    corpus = load_ptb_corpus()
    model = bigram.fit_bigram(corpus.train, len(corpus.vocab))
    assert model.train_tokens == 929_589
    ppl = lstm.perplexity(bigram.bigram_nll(model, corpus.test))
    unigram = np.bincount(corpus.train, minlength=len(corpus.vocab)) / len(corpus.train)
    assert 150 < ppl < 230  # interpolated KN bigrams of PTB are near 190
    assert ppl < 0.5 * math.exp(-np.log(unigram[corpus.test]).mean())


def test_unigram_reference_is_add_one_and_aligned_with_the_lstm_positions():
    train = np.array([0, 0, 0, 1, 2, 0])
    ids = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    nll = bigram.unigram_nll(train, ids, vocab_size=4, batch_size=2)
    p = np.array([5, 2, 2, 1]) / 10  # (count + 1) / (6 + 4)
    np.testing.assert_allclose(nll[[1, 2, 3, 5, 6, 7]], -np.log(p[ids[[1, 2, 3, 5, 6, 7]]]))
    assert np.isnan(nll[[0, 4]]).all()  # the first token of each of the 2 evaluation streams
    table, uni, bi = bigram.ptb_references(train, ids, ids, 4, eval_batch=2)
    assert list(table.columns) == ["model", "valid_ppl", "test_ppl", "test_tokens"] and len(table) == 2
    np.testing.assert_array_equal(np.isnan(uni), np.isnan(bi))
    refs = bigram.lm_references(table, {"baseline seed 0": (3.0, 2.5)})
    assert refs.iloc[-1].to_dict() == {"model": "baseline seed 0", "valid_ppl": 3.0, "test_ppl": 2.5, "test_tokens": 6}
    with pytest.raises(ValueError, match="ids must be a stream"):
        bigram.unigram_nll(train, np.array([0, 9]), vocab_size=4)


# -- ids at the edges, exact NLL in nats, exact gate details (issue 23: the mutants of bigram are killed) --


def test_nll_is_minus_the_natural_log_of_the_probability(lm):
    ids = _markov_text(50, seed=9)
    nll = bigram.bigram_nll(lm, ids)
    np.testing.assert_allclose(nll[1:], -np.log(lm.prob(ids[:-1], ids[1:])), rtol=1e-15)
    assert nll[1] == pytest.approx(-math.log(lm.distribution(int(ids[0]))[ids[1]]), rel=1e-12)  # nats, not bits
    assert (nll[1:] > 0).all()
    two = bigram.bigram_nll(lm, ids[:2])  # two tokens are enough
    assert np.isnan(two[0]) and two[1] == nll[1]


def test_ids_outside_the_vocabulary_are_refused_at_both_edges():
    model = bigram.fit_bigram(_markov_text(2_000, seed=2), V)
    for context, word in (([V], [0]), ([0], [V]), ([-1], [0]), ([0], [-1]), ([V - 1, V], [0, 0]), ([-1, 2], [0, 0])):
        with pytest.raises(ValueError, match=rf"must lie in \[0, {V}\)"):
            model.prob(np.array(context), np.array(word))
    assert model.prob(np.array([V - 1, 0]), np.array([0, V - 1])).shape == (2,)
    assert model.prob(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).shape == (0,)
    with pytest.raises(ValueError, match="integer token ids"):
        model.prob(np.array([0.0]), np.array([1]))
    with pytest.raises(ValueError, match="one shape"):
        model.prob(np.array([0, 1]), np.array([1]))
    for ids in (np.array([0, 1, V]), np.array([0, -1, 2]), np.array([0.0, 1.0, 2.0])):
        with pytest.raises(ValueError, match=rf"integers in \[0, {V}\)"):
            bigram.fit_bigram(np.concatenate([_markov_text(200, seed=3), ids]), V)
    for bad in (np.array([0]), np.arange(4).reshape(2, 2), np.zeros((2, 3), dtype=np.int64)):
        with pytest.raises(ValueError, match="stream of shape"):
            bigram.bigram_nll(model, bad)
    for bad in (np.zeros((5, 4), dtype=np.int64), np.array([0, 1])):
        with pytest.raises(ValueError, match="stream of shape"):
            bigram.fit_bigram(bad, V)


def test_kneser_ney_needs_types_seen_once_and_twice():
    with pytest.raises(ValueError, match=r"seen once and twice \(n1=0, n2=2\)"):
        bigram.fit_bigram(np.array([0, 1, 0, 1, 0]), 2)  # every bigram twice
    with pytest.raises(ValueError, match="seen once and twice"):
        bigram.fit_bigram(np.array([0, 1, 0]), 2)  # three tokens: never both
    with pytest.raises(ValueError, match="two types"):
        bigram.fit_bigram(np.array([0, 0, 0, 0]), 1)
    # the smallest vocabulary, two types; context 1 is seen exactly once (1 -> 1) and keeps its own counts
    model = bigram.fit_bigram(np.array([0, 0, 0, 1, 1]), 2)
    # bigram counts 00: 2, 01: 1, 11: 1, so D = 2 / (2 + 2 * 1) = 0.5; continuations 1 and 2, so D_u = 1/3
    assert (model.discount, model.unigram_discount, model.train_tokens) == (0.5, pytest.approx(1 / 3), 5)
    np.testing.assert_allclose(model.lower, [1 / 3, 2 / 3])
    np.testing.assert_allclose(model.distribution(1), [0.5 * 1 / 3, 0.5 + 0.5 * 2 / 3])
    np.testing.assert_allclose(model.distribution(0), [(2 - 0.5) / 3 + 0.5 * 2 / 3 / 3, (1 - 0.5) / 3 + 0.5 * 2 / 3 * 2 / 3])


def test_versus_bigram_is_perplexity_difference_with_its_settings():
    from prismlib.lstm.evaluation import perplexity_difference

    model = bigram.fit_bigram(_markov_text(5_000, seed=0), V)
    held_out = _markov_text(1_200, seed=5)
    nll_b = bigram.bigram_nll(model, held_out, batch_size=2)
    better = nll_b - 0.2 + np.random.default_rng(0).normal(0, 0.3, len(nll_b))
    got = bigram.versus_bigram({"m": better}, nll_b, chunk=50, n_boot=300, seed=3)["m"]
    want = perplexity_difference(better, nll_b, chunk=50, n_boot=300, seed=3)
    assert (got.effect, got.low, got.high, got.units) == (want.effect, want.low, want.high, want.units)
    got = bigram.versus_bigram({"m": better}, nll_b)["m"]
    want = perplexity_difference(better, nll_b)
    assert (got.low, got.high, got.units) == (want.low, want.high, want.units)


def test_the_bigram_gate_details_are_exact():
    nll = np.full(100, math.log(20.0))  # the bigram's perplexity: 20
    d = {"a": Interval(-3.0, -4.0, -2.0, 30), "b": Interval(-1.0, -2.0, -0.5, 30), "c": Interval(-1.7, -1.8, -1.6, 30)}
    gate = bigram.beats_bigram(d, nll)
    assert gate.passed and gate.name == "LMs beat the PTB bigram"
    assert gate.detail == "all 3 below the bigram's 20.0; closest b -1 [-2, -0.5]"
    edge = bigram.beats_bigram({"a": Interval(-1.0, -2.0, 0.0, 30)}, nll)  # an interval ending at 0 is not below
    assert not edge.passed
    worse = {
        "w1": Interval(1.0, 0.5, 1.5, 30),
        "w2": Interval(3.0, 2.0, 4.0, 30),
        "w3": Interval(2.0, -1.0, 5.0, 30),
        "w4": Interval(0.5, -0.5, 1.5, 30),
        "ok": Interval(-3.0, -4.0, -2.0, 30),
    }
    gate = bigram.beats_bigram(worse, nll, ["ok", "w1", "w2"])
    assert not gate.passed
    assert gate.detail == "2 of 3 not below the bigram's 20.0: w2 23.0 (+3 [+2, +4]); w1 21.0 (+1 [+0.5, +1.5])"
    gate = bigram.beats_bigram(worse, nll, ["w1", "w2", "w3"])
    assert gate.detail == "3 of 3 not below the bigram's 20.0: w2 23.0 (+3 [+2, +4]); w3 22.0 (+2 [-1, +5]); 1 more"
    gate = bigram.beats_bigram(worse, nll)
    assert gate.detail.endswith("; 2 more") and gate.detail.startswith("4 of 5 not below")
    with pytest.raises(ValueError, match="any model"):
        bigram.beats_bigram(worse, nll, [])
    with pytest.raises(ValueError, match=r"\['x'\]"):
        bigram.beats_bigram(worse, nll, ["ok", "x"])


def test_lm_references_number_their_rows():
    table, _, _ = bigram.ptb_references(
        np.array([0, 0, 0, 1, 2, 0, 1, 1, 2, 0]), np.array([0, 1, 2, 0, 1]), np.array([0, 1, 2, 3, 0, 1, 2, 3]), 4, eval_batch=2
    )
    refs = bigram.lm_references(table, {"a": (3.0, 2.5), "b": (4.0, 3.5)})
    assert list(refs.index) == [0, 1, 2, 3] and list(refs["model"])[2:] == ["a", "b"]
    assert list(refs["test_tokens"]) == [6, 6, 6, 6]


def test_unigram_reference_checks_its_ids():
    train = np.array([0, 0, 0, 1, 2, 0])
    for ids in (np.array([0, 4]), np.array([-1, 0]), np.array([0]), np.zeros((2, 2), dtype=np.int64)):
        with pytest.raises(ValueError, match="ids must be a stream"):
            bigram.unigram_nll(train, ids, vocab_size=4)
    nll = bigram.unigram_nll(train, np.array([3, 0]), vocab_size=4)
    assert np.isnan(nll[0]) and nll[1] == pytest.approx(-math.log(0.5))
