"""Mutual information at distance d: exact on Markov chains of known I(d), bias-corrected on
i.i.d. text, jackknife intervals that cover, decay fits that recover known exponents."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from prismlib.lstm.iclr import mutual_information as mi


def _chain(n: int, p: float, k: int, seed: int) -> np.ndarray:
    """A symmetric k-state Markov chain: keep the state w.p. ``1 - p``, else jump to one of the others."""
    rng = np.random.default_rng(seed)
    steps = np.where(rng.random(n) < p, rng.integers(1, k, n), 0)
    return np.cumsum(steps) % k


def _chain_mi(p: float, d: int, k: int) -> float:
    """Exact I(d) (nats) of the stationary symmetric chain: ``P(same after d) = 1/k + (1 - 1/k) lam^d``."""
    same = 1 / k + (1 - 1 / k) * (1 - p * k / (k - 1)) ** d
    other = (1 - same) / (k - 1)
    return math.log(k) + same * math.log(same) + (k - 1) * other * math.log(other)


def _binary_mi(p: float, d: int) -> float:
    """``log 2 - H_b((1 - (1 - 2p)^d) / 2)``: the binary chain with flip probability ``p``."""
    q = (1 - (1 - 2 * p) ** d) / 2
    return math.log(2) + q * math.log(q) + (1 - q) * math.log(1 - q)


def test_exact_formulas_agree():
    assert all(math.isclose(_chain_mi(0.1, d, 2), _binary_mi(0.1, d)) for d in (1, 3, 10))


def test_grassberger_entropy_of_known_counts():
    # G(1) = psi(1) - (psi(1) - psi(1/2)) / 2 = -gamma - log 2, so two singletons give 2 log 2 + gamma
    assert mi.entropy_estimate(np.array([1, 1])) == pytest.approx(2 * math.log(2) + np.euler_gamma)
    g2 = special.digamma(2) + (special.digamma(1.5) - special.digamma(1)) / 2
    assert mi.entropy_estimate(np.array([2, 1, 0])) == pytest.approx(math.log(3) - (2 * g2 - np.euler_gamma - math.log(2)) / 3)
    assert mi.entropy_estimate(np.array([3, 1]), "plugin") == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert mi.entropy_estimate(np.array([3, 1]), "miller-madow") == pytest.approx(mi.entropy_estimate(np.array([3, 1]), "plugin") + 1 / 8)
    with pytest.raises(ValueError, match="estimator"):
        mi.entropy_estimate(np.array([3, 1]), "nsb")


def test_grassberger_entropy_is_less_biased_than_plug_in():
    rng = np.random.default_rng(0)
    draws = [np.bincount(rng.integers(0, 50, 50), minlength=50) for _ in range(300)]
    truth = math.log(50)
    grass = np.mean([mi.entropy_estimate(c) for c in draws]) - truth
    plug = np.mean([mi.entropy_estimate(c, "plugin") for c in draws]) - truth
    assert plug < -0.4 and abs(grass) < 0.25 * abs(plug)


@pytest.mark.parametrize("p", [0.05, 0.2])
def test_binary_chain_matches_its_exact_mutual_information(p):
    curve = mi.mutual_information_curve(_chain(300_000, p, 2, seed=1), 8)
    exact = np.array([_binary_mi(p, d) for d in range(1, 9)])
    np.testing.assert_array_equal(curve.distances, np.arange(1, 9))
    np.testing.assert_allclose(curve.estimate, exact, atol=3e-3)


def test_k_state_chain_matches_its_exact_mutual_information():
    curve = mi.mutual_information_curve(_chain(300_000, 0.4, 5, seed=2), [1, 2, 4, 8])
    exact = [_chain_mi(0.4, d, 5) for d in (1, 2, 4, 8)]
    np.testing.assert_allclose(curve.estimate, exact, atol=3e-3)


def test_bias_correction_brings_iid_text_close_to_zero():
    x = np.random.default_rng(3).integers(0, 100, 100_000)  # 10,000 pair types for 100,000 pairs: I = 0
    ests = {e: mi.mutual_information_curve(x, [1, 7], estimator=e).estimate for e in mi.MI_ESTIMATORS}
    assert (ests["plugin"] > 0.04).all()  # the plug-in bias, ~ (100 - 1)^2 / 2N
    assert (np.abs(ests["grassberger"]) < 0.1 * ests["plugin"]).all()
    assert (np.abs(ests["miller-madow"]) < 0.1 * ests["plugin"]).all()


@pytest.mark.parametrize("estimator", mi.MI_ESTIMATORS)
def test_jackknife_replicates_leave_out_the_pairs_of_one_chunk(estimator):
    x = _chain(3_000, 0.3, 30, seed=4)  # 900 pair types: leaving a chunk out removes some
    d, chunks = 3, 5
    curve = mi.mutual_information_curve(x, [1, d], chunks=chunks, estimator=estimator)

    def direct(a: np.ndarray, b: np.ndarray) -> float:
        h = [mi.entropy_estimate(np.bincount(c), estimator) for c in (a, b, a * 30 + b)]
        return h[0] + h[1] - h[2]

    a, b = x[:-d], x[d:]
    chunk_of = np.arange(len(x))[:-d] * chunks // len(x)  # the chunk of the pair's first token
    for k in range(chunks):
        keep = chunk_of != k
        assert curve.replicates[k, 1] == pytest.approx(direct(a[keep], b[keep]), abs=1e-10)
    assert curve.estimate[1] == pytest.approx(direct(a, b), abs=1e-10)
    assert curve.replicates.shape == (chunks, 2)


def test_intervals_cover_the_truth_and_match_the_spread_over_texts():
    ds = [1, 2, 5]
    exact = np.array([_binary_mi(0.1, d) for d in ds])
    curves = [mi.mutual_information_curve(_chain(40_000, 0.1, 2, seed=s), ds) for s in range(30)]
    covered = np.mean([[iv.contains(t) for iv, t in zip(c.intervals, exact)] for c in curves])
    assert covered >= 0.85
    half = np.mean([[iv.high - iv.effect for iv in c.intervals] for c in curves], axis=0)
    sd_over_texts = np.std([c.estimate for c in curves], axis=0, ddof=1)
    ratio = half / 1.96 / sd_over_texts  # the jackknife se against the real spread
    assert ((ratio > 0.6) & (ratio < 1.6)).all(), ratio
    iv = curves[0].at(2)
    assert iv.units == mi.MI_CHUNKS and iv.resampled == "units" and iv.low < iv.effect < iv.high
    with pytest.raises(KeyError):
        curves[0].at(3)


def test_shuffled_floor_is_the_estimate_without_dependence():
    x = _chain(50_000, 0.1, 4, seed=5)
    floor = mi.shuffled_floor(x)
    assert abs(floor.effect) < 5e-3 and floor.contains(0.0)
    assert mi.mutual_information_curve(x, [1]).estimate[0] > 0.5


def _exact_curve(values: np.ndarray, distances: np.ndarray, replicates: np.ndarray | None = None) -> mi.MutualInformation:
    reps = np.empty((0, len(distances))) if replicates is None else replicates
    return mi.MutualInformation(distances, values, reps)


def test_power_law_fit_recovers_a_known_exponent_and_beats_an_exponential():
    d = np.arange(1, 101)
    curve = _exact_curve(0.3 * d**-0.7, d)
    fit = mi.fit_mi_power_law(curve)
    assert fit.rate.effect == pytest.approx(0.7) and fit.amplitude == pytest.approx(0.3)
    assert fit.rss == pytest.approx(0.0, abs=1e-20) and (fit.used, fit.skipped, fit.d_max) == (100, 0, 100)
    cmp = mi.compare_decays(curve)
    assert cmp.better == "power" and cmp.exponential.rss > 1.0
    shifted = _exact_curve(0.8 + 0.3 * d**-0.7, d)  # a bias floor under the power law
    assert mi.fit_mi_power_law(shifted, offset=0.8).rate.effect == pytest.approx(0.7)
    assert mi.fit_mi_power_law(shifted).rate.effect < 0.2


def test_exponential_fit_recovers_a_known_length_and_beats_a_power_law():
    d = np.arange(1, 61)
    curve = _exact_curve(0.5 * np.exp(-d / 12.0), d)
    fit = mi.fit_mi_exponential(curve, d_min=2, d_max=40)
    assert fit.rate.effect == pytest.approx(1 / 12) and fit.amplitude == pytest.approx(0.5)
    assert (fit.used, fit.d_min, fit.d_max) == (39, 2, 40)
    assert mi.compare_decays(curve, 2, 40).better == "exponential"
    mixed = np.array([0.5 * np.exp(-d / 12.0) if k % 2 else 0.5 * d**-1.0 for k in range(6)])  # replicates disagree
    assert mi.compare_decays(_exact_curve(curve.estimate, d, mixed), 2, 40).better == "undecided"


def test_fit_skips_non_positive_values_and_takes_its_interval_from_the_replicates():
    d = np.arange(1, 31).astype(float)
    values = 0.2 * d**-0.5
    values[[4, 9]] = [-0.01, 0.0]
    alphas = np.array([0.4, 0.45, 0.5, 0.55, 0.6])
    reps = np.array([0.2 * d**-a for a in alphas])
    fit = mi.fit_mi_power_law(_exact_curve(values, d.astype(int), reps))
    assert (fit.used, fit.skipped) == (28, 2) and fit.rate.effect == pytest.approx(0.5)
    se = math.sqrt(4 / 5 * np.sum((alphas - alphas.mean()) ** 2))
    assert fit.rate.high - fit.rate.effect == pytest.approx(se * 2.7764, rel=1e-4)  # t_{0.975, 4}
    floor = _exact_curve(values + 0.8, d.astype(int), reps + 0.8)  # the same curve above a floor
    above = mi.fit_mi_power_law(floor, offset=0.8).rate
    assert (above.effect, above.low, above.high) == pytest.approx((fit.rate.effect, fit.rate.low, fit.rate.high))
    with pytest.raises(ValueError, match="at least 3 positive"):
        mi.fit_mi_power_law(_exact_curve(-values, d.astype(int)))


def test_invalid_inputs_raise():
    x = np.arange(100) % 7
    for bad in (x.astype(float), -x, x.reshape(10, 10)):
        with pytest.raises(ValueError, match="ids"):
            mi.mutual_information_curve(bad, 3)
    with pytest.raises(ValueError, match="distances"):
        mi.mutual_information_curve(x, [0, 1])
    with pytest.raises(ValueError, match="chunks"):
        mi.mutual_information_curve(x, 10, chunks=20)


_texts = st.lists(st.integers(0, 5), min_size=120, max_size=400).map(np.array)


@settings(max_examples=40, deadline=None)
@given(_texts, st.permutations(list(range(6))), st.integers(1, 5))
def test_relabelling_symbols_does_not_change_the_estimate(x, perm, d):
    relabelled = np.array(perm)[x] * 1000 + 17  # any injective relabelling, ids need not be contiguous
    a = mi.mutual_information_curve(x, [d], chunks=4)
    b = mi.mutual_information_curve(relabelled, [d], chunks=4)
    np.testing.assert_allclose(b.estimate, a.estimate, atol=1e-12)
    np.testing.assert_allclose(b.replicates, a.replicates, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(_texts, st.integers(1, 5), st.sampled_from(mi.MI_ESTIMATORS))
def test_the_estimate_is_symmetric_under_reversal(x, d, estimator):
    forward = mi.mutual_information_curve(x, [d], chunks=4, estimator=estimator).estimate
    backward = mi.mutual_information_curve(x[::-1].copy(), [d], chunks=4, estimator=estimator).estimate
    np.testing.assert_allclose(backward, forward, atol=1e-12)


def test_inverse_gamma_timescales_retain_a_power_law():
    from scipy.stats import invgamma

    from prismlib.lstm.iclr import loglog_exponent, retention_curve

    d = np.arange(1, 101)
    T = invgamma.ppf((np.arange(1, 20_001)) / 20_001, 0.56)
    np.testing.assert_allclose(retention_curve(T, d), (1 + d) ** -0.56, rtol=0.02)  # the mixture's exact law
    assert loglog_exponent(d, (1 + d) ** -0.56, 50, 100) == pytest.approx(0.56, abs=0.01)
    assert retention_curve(np.array([0.0, 2.0]), [4])[0] == pytest.approx(np.exp(-2) / 2)  # T = 0 keeps nothing
    with pytest.raises(ValueError, match="timescales"):
        retention_curve(np.array([-1.0]), d)
