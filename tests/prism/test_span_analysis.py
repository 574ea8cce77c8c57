"""Fig. 5's statistics: the unigram baseline, the held-out MLM score, and intervals over articles."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from bert_fixtures import tiny_mlm

from prismlib.prism import article_mean, heldout_logprobs, per_article, unigram_logprobs
from prismlib.stats import ratio_difference

CLS, SEP, MASK, VOCAB = 1, 2, 3, 100


# ----------------------------------------------------------------------------- unigram


def test_unigram_logprobs_are_add_one_smoothed_counts_without_special_tokens():
    seqs = torch.tensor([[CLS, 5, 5, 6, SEP], [CLS, 5, 7, 7, SEP]])
    logp = unigram_logprobs(seqs, vocab_size=10, ignore_ids=(CLS, SEP))
    assert logp.shape == (10,) and logp.dtype == torch.float64
    total = 6 + 10  # six counted tokens, add-one over ten ids
    expect = {5: 4 / total, 6: 2 / total, 7: 3 / total, CLS: 1 / total, 0: 1 / total}
    for token, p in expect.items():
        assert float(logp[token].exp()) == pytest.approx(p)
    assert float(logp.exp().sum()) == pytest.approx(1.0)
    # without ignore_ids the special tokens are counted
    assert float(unigram_logprobs(seqs, 10)[CLS].exp()) == pytest.approx(3 / 20)


def test_unigram_logprobs_reject_ids_outside_the_vocabulary():
    with pytest.raises(ValueError, match="0..9"):
        unigram_logprobs(torch.tensor([[1, 10]]), vocab_size=10)
    with pytest.raises(ValueError, match="positive"):
        unigram_logprobs(torch.tensor([[0]]), vocab_size=0)


# ----------------------------------------------------------------------------- held-out MLM score


def test_heldout_logprobs_mask_15_percent_and_read_the_correct_token():
    model = tiny_mlm()
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(5, VOCAB, (6, 48), generator=gen)
    x[:, 0], x[:, -1] = CLS, SEP
    logp, selected = heldout_logprobs(model, x, MASK, (CLS, SEP), seed=4, batch_size=4)
    assert logp.shape == selected.shape == x.shape
    assert not selected[:, 0].any() and not selected[:, -1].any()
    assert selected.float().mean().item() == pytest.approx(0.15, abs=0.06)
    assert torch.all(logp[selected] < 0) and torch.all(logp[~selected] == 0)
    # by hand: every selected position is [MASK]ed, the model reads the original token there
    fed = torch.where(selected, torch.full_like(x, MASK), x)
    with torch.no_grad():
        ref = torch.log_softmax(model(input_ids=fed).logits, -1).gather(-1, x[..., None])[..., 0]
    torch.testing.assert_close(logp[selected], ref[selected], rtol=1e-4, atol=1e-4)
    # the masks are a function of the seed: two models are scored on the same positions
    _, again = heldout_logprobs(tiny_mlm(seed=1), x, MASK, (CLS, SEP), seed=4)
    assert torch.equal(again, selected)


# ----------------------------------------------------------------------------- per article


def test_per_article_sums_inputs_of_one_article():
    values = np.array([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0]])
    articles = np.array([7, 3, 7, 3])
    units, sums, counts = per_article(values, articles)
    assert units.tolist() == [3, 7]
    assert sums.tolist() == [[6.0, 4.0], [60.0, 40.0]]
    assert counts.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="rows"):
        per_article(values, articles[:3])


def test_article_mean_is_the_mean_over_inputs_bootstrapped_over_articles():
    rng = np.random.default_rng(0)
    articles = np.repeat(np.arange(40), 3)
    a = rng.normal(1.0, 1.0, size=120)
    b = a - 0.5 + rng.normal(0, 0.1, size=120)
    iv = article_mean(a, articles, b, n_boot=500, seed=2)
    assert iv.effect == pytest.approx(a.mean() - b.mean())
    assert iv.units == 40 and iv.low < iv.effect < iv.high and iv.low > 0
    # the same as ratio_difference over per-article sums
    _, sums, counts = per_article(np.stack([a, b]), articles)
    ref = ratio_difference(sums[0], sums[1], counts, n_boot=500, seed=2)
    assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high))
    # one condition: its mean; weights give a per-token mean
    assert article_mean(a, articles, n_boot=200).effect == pytest.approx(a.mean())
    tokens = rng.integers(1, 10, size=120).astype(float)
    assert article_mean(a * tokens, articles, weights=tokens, n_boot=200).effect == pytest.approx((a * tokens).sum() / tokens.sum())
    with pytest.raises(ValueError, match="one entry per input"):
        article_mean(a, articles[:-1])
    with pytest.raises(ValueError, match="at least two units"):
        article_mean(a, np.zeros(120, dtype=int))


def test_span_regions_pick_the_positions_fig5_names():
    from prismlib.prism import span_regions

    length, span = 512, (200, 300)
    x = np.tile(np.arange(length, dtype=float), (2, 1))  # log p = the position: each mean names its positions
    r = span_regions(x, span)
    assert r["span"][0] == np.mean(np.arange(200, 300))
    assert r["near"][0] == np.mean(np.r_[190:200, 300:310])
    assert r["far"][0] == np.mean(np.r_[150:190, 310:350])  # 11-50 tokens away on each side
    assert r["outside"][0] == np.mean(np.r_[1:200, 300:511])
    assert r["dip"][0] == r["far"][0] - r["near"][0]
    assert span_regions(x, span, near=1)["near"][0] == np.mean([199, 300])
    with pytest.raises(ValueError, match="near"):
        span_regions(x, span, near=11)


def test_fig5_summary_contrasts_are_paired_per_input():
    from prismlib.prism import fig5_summary

    rng = np.random.default_rng(0)
    base = rng.normal(-3, 1, (12, 512))
    prism = base.copy()
    prism[:, 200:300] += 0.5  # better inside the span only
    m15 = {"baseline": np.full(12, -2.0), "prism": np.full(12, -2.0)}
    out = fig5_summary({"baseline": base, "prism": prism}, m15, np.arange(12) // 2, (200, 300), n_boot=200)
    assert out[("prism - baseline", "span")].effect == pytest.approx(0.5)
    assert out[("prism - baseline", "outside")].effect == pytest.approx(0.0)
    assert out[("prism - baseline", "span - masked 15%")].effect == pytest.approx(0.5)
    assert out[("prism - baseline", "span - outside")].effect == pytest.approx(0.5)
    assert out[("prism - baseline", "dip")].effect == pytest.approx(0.0) and out[("baseline", "dip")].units == 6
