"""Fig. 5's evaluation and statistics (prismlib.prism.span_analysis): the masked span's scores, the
unigram baseline, the held-out MLM score, intervals over articles, span minus outside."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from bert_fixtures import tiny_mlm

from prism.test_mlm_training import sequences
from prismlib.prism import (
    article_mean,
    bootstrap_ci,
    heldout_logprobs,
    masked_span_logprobs,
    per_article,
    span_minus_outside,
    unigram_logprobs,
)
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


def test_fig5_by_seed_summarises_each_training_seed_s_own_models():
    from prismlib.prism import fig5_by_seed, seeded

    base = np.zeros((12, 512))
    base[:, np.r_[195:200, 300:305]] = -1.0  # the 5 visible tokens on either side of the span are worse
    gain = {0: 0.5, 1: 1.0, 2: 2.0}  # each seed's prism model gains this much inside the span
    logp, m15 = {}, {}
    for s, g in gain.items():
        prism = base.copy()
        prism[:, 200:300] += g
        logp |= {seeded("baseline", s): base, seeded("prism", s): prism}
        m15 |= {seeded("baseline", s): np.full(12, -2.0), seeded("prism", s): np.full(12, -2.0)}
    articles, span = np.arange(12) // 2, (200, 300)
    out = fig5_by_seed(logp, m15, articles, span, (0, 1, 2), n_boot=200)
    assert list(out) == [0, 1, 2]
    assert {s: out[s][("prism - baseline", "span")].effect for s in out} == pytest.approx(gain)
    # near 10: the near window's mean is -0.5 against far tokens at 0; near 5: -1
    assert out[1][("baseline", "dip")].effect == pytest.approx(0.5)
    near5 = fig5_by_seed(logp, m15, articles, span, (2,), 5, arms=("baseline", "prism"), n_boot=200)
    assert list(near5) == [2] and near5[2][("baseline", "dip")].effect == pytest.approx(1.0)
    assert near5[2][("prism - baseline", "span - masked 15%")].effect == pytest.approx(2.0)


def test_masked_span_logprobs_masks_only_the_span():
    model = tiny_mlm(dropout=0.0).eval()
    x = sequences(n=3, length=40)
    logp = masked_span_logprobs(model, x, MASK, span=(10, 20), batch_size=2)
    assert logp.shape == (3, 40) and torch.all(logp <= 0)
    masked = x.clone()
    masked[:, 10:20] = MASK
    with torch.no_grad():
        ref = torch.log_softmax(model(input_ids=masked).logits, -1).gather(-1, x[..., None])[..., 0]
    torch.testing.assert_close(logp, ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="does not fit"):
        masked_span_logprobs(model, x, MASK, span=(30, 50))


def test_bootstrap_ci_per_position_resamples_articles():
    rng = np.random.default_rng(0)
    true_mean = np.linspace(-2, 2, 50)
    articles = np.repeat(np.arange(100), 2)  # 100 articles, two inputs each
    values = true_mean + rng.normal(0, 1, size=(200, 50))  # independent inputs
    mean, low, high = bootstrap_ci(values, articles, n_boot=1000, seed=1)
    np.testing.assert_allclose(mean, values.mean(0))
    assert np.all(low <= mean) and np.all(mean <= high)
    coverage = np.mean((low <= true_mean) & (true_mean <= high))
    assert coverage >= 0.86  # nominal 95% (50 columns)
    assert np.mean(high - low) == pytest.approx(2 * 1.96 / np.sqrt(200), rel=0.15)
    # inputs of one article that are copies of each other carry one article's information:
    # the interval is that of 100 units, not of 200
    copies = np.repeat(values[::2], 2, axis=0)
    m2, lo2, hi2 = bootstrap_ci(copies, articles, n_boot=1000, seed=1)
    assert np.mean(hi2 - lo2) == pytest.approx(2 * 1.96 / np.sqrt(100), rel=0.15)
    # 1-D input gives scalars; the same seed gives the same interval
    m, lo, hi = bootstrap_ci(values[:, 0], articles, n_boot=500, seed=3)
    assert np.ndim(m) == 0 and lo <= m <= hi
    assert bootstrap_ci(values[:, 0], articles, n_boot=500, seed=3)[1] == lo
    with pytest.raises(ValueError, match="one article per row"):
        bootstrap_ci(values, articles[:-1])
    with pytest.raises(ValueError, match="at least two units"):
        bootstrap_ci(values, np.zeros(200, dtype=int))


def test_span_minus_outside_removes_a_global_offset_and_finds_the_span_effect():
    rng = np.random.default_rng(0)
    n, length = 40, 30
    b = rng.normal(-5, 1, (n, length))
    articles = np.repeat(np.arange(10), 4)
    span, outside = np.arange(10, 20), np.r_[0:10, 20:30]
    offset = b + 0.7  # better everywhere by the same amount: no span effect
    iv = span_minus_outside(offset, b, articles, span, outside, n_boot=500)
    assert abs(iv.effect) < 1e-12 and abs(iv.low) < 1e-12 and abs(iv.high) < 1e-12
    gain = offset.copy()
    gain[:, span] += 0.25 + rng.normal(0, 0.05, (n, len(span)))  # and 0.25 more inside the span
    iv = span_minus_outside(gain, b, articles, span, outside, n_boot=500)
    assert iv.low < 0.25 < iv.high and 0.2 < iv.effect < 0.3 and iv.units == 10
    with pytest.raises(ValueError, match="share positions"):
        span_minus_outside(gain, b, articles, span, np.arange(15, 30))


def test_the_dip_widths_fixed_before_the_run_are_valid_near_windows():
    from prismlib.prism import DIP_WIDTHS, FAR, span_regions

    assert DIP_WIDTHS == (1, 5, 10) and max(DIP_WIDTHS) < FAR[0]  # the near window never reaches the far tokens
    logp = np.zeros((2, 512))
    logp[:, 199] = logp[:, 300] = -3.0  # only the tokens right next to the span are worse
    dips = [span_regions(logp, (200, 300), w)["dip"] for w in DIP_WIDTHS]
    assert [d[0] for d in dips] == pytest.approx([3.0, 0.6, 0.3])  # the dip is diluted as the window widens
