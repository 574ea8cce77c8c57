"""The statistics layer (prismlib.stats): paired bootstrap over independent units."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.stats import Interval, bootstrap_distribution, group_sums, paired_bootstrap, ratio, ratio_difference


def test_group_sums_matches_a_loop():
    rng = np.random.default_rng(0)
    values = rng.random((3, 50))
    groups = rng.choice(np.array(["b", "a", "c", "d"], dtype=object), size=50)
    units, sums = group_sums(values, groups)
    assert list(units) == ["a", "b", "c", "d"]
    for j, u in enumerate(units):
        np.testing.assert_allclose(sums[:, j], values[:, groups == u].sum(axis=1))
    with pytest.raises(ValueError, match="50 rows but groups 49"):
        group_sums(values, groups[:-1])


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 40), st.integers(0, 2**16))
def test_ratio_difference_effect_is_the_full_data_statistic(n, seed):
    rng = np.random.default_rng(seed)
    a, b, den = rng.random(n), rng.random(n), rng.random(n) + 0.5
    iv = ratio_difference(a, b, den, n_boot=200, seed=seed)
    assert iv.effect == pytest.approx(ratio(a, den) - ratio(b, den))
    assert iv.low <= iv.high and iv.units == n
    lin = ratio_difference(a, b, den, transform=np.exp, n_boot=200, seed=seed)
    assert lin.effect == pytest.approx(np.exp(ratio(a, den)) - np.exp(ratio(b, den)))


def test_pairing_removes_the_shared_unit_variation():
    """Two conditions that differ by a constant on every unit: the paired interval is tight,
    although the units themselves vary a lot."""
    rng = np.random.default_rng(1)
    base = rng.random(300) * 10
    iv = ratio_difference(base + 0.1, base, np.ones(300), seed=0)
    assert iv.low == pytest.approx(0.1) and iv.high == pytest.approx(0.1)
    noisy = ratio_difference(base + 0.1 + rng.normal(0, 1, 300), base, np.ones(300), seed=0)
    assert noisy.contains(0.1) and noisy.high - noisy.low > 0.1


def test_interval_covers_the_true_difference_about_95_percent():
    """Coverage over repeated test sets drawn from known populations (percentile bootstrap)."""
    rng = np.random.default_rng(2)
    hits = 0
    for rep in range(120):
        a = rng.binomial(1, 0.6, 200).astype(float)
        b = rng.binomial(1, 0.5, 200).astype(float)
        iv = ratio_difference(a, b, np.ones(200), n_boot=400, seed=rep)
        hits += iv.contains(0.1)
    assert 0.88 <= hits / 120 <= 0.995


def test_paired_bootstrap_with_a_non_vectorised_statistic():
    x = np.arange(30.0)
    y = 2 * x + 1
    iv = paired_bootstrap(lambda a, b: np.polyfit(a, b, 1)[0], (x, y), vectorized=False, n_boot=100)
    assert iv.effect == pytest.approx(2.0) and iv.low == pytest.approx(2.0) and iv.high == pytest.approx(2.0)


def test_bad_input():
    with pytest.raises(ValueError, match="at least two units"):
        ratio_difference(np.ones(1), np.ones(1), np.ones(1))
    with pytest.raises(ValueError, match="one entry per unit"):
        ratio_difference(np.ones(3), np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="level"):
        paired_bootstrap(lambda a, axis=-1: a.mean(axis), (np.ones(3),), level=1.5)


def test_interval_helpers():
    iv = Interval(0.02, -0.01, 0.05, 10)
    assert iv.contains(0) and not iv.contains(0.06)
    s = iv.scaled(-100)
    assert (s.effect, s.low, s.high) == pytest.approx((-2.0, -5.0, 1.0))


def test_non_finite_statistics_are_errors_not_narrow_intervals():
    with pytest.raises(ValueError, match="non-finite statistic"):
        ratio_difference(np.array([1.0, 1.0, 1.0]), np.ones(3), np.array([1.0, 0.0, 0.0]), n_boot=200)
    with pytest.raises(ValueError, match="finite effect"):
        ratio_difference(np.ones(3), np.ones(3), np.zeros(3))


def test_welch_difference_matches_scipy_and_refuses_single_runs():
    from scipy import stats as sps

    from prismlib.stats import welch_difference

    a, b = [1.0, 1.4, 1.1, 0.9], [0.2, 0.5, 0.1]
    iv = welch_difference(a, b)
    ref = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert iv.effect == pytest.approx(np.mean(a) - np.mean(b))
    assert (iv.low, iv.high) == (pytest.approx(ref.low), pytest.approx(ref.high)) and iv.units == 3
    with pytest.raises(ValueError, match="two runs"):
        welch_difference([1.0], b)


def test_bootstrap_distribution_is_scipy_s_with_the_same_seed():
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(5)
    a, b = rng.normal(size=40), rng.uniform(1, 2, size=40)

    def stat(x, y, axis=-1):
        return x.sum(axis) / y.sum(axis)

    dist = bootstrap_distribution(stat, (a, b), n_boot=300, seed=7)
    ref = scipy_stats.bootstrap((a, b), stat, n_resamples=300, paired=True, vectorized=True, method="percentile",
                                rng=np.random.default_rng(7)).bootstrap_distribution  # fmt: skip
    np.testing.assert_array_equal(dist, ref)
    assert not np.array_equal(dist, bootstrap_distribution(stat, (a, b), n_boot=300, seed=8))
    assert dist.shape == (300,)
    with pytest.raises(ValueError, match="at least two units"):
        bootstrap_distribution(stat, (a[:1], b[:1]))
