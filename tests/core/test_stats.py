"""The statistics layer (prismlib.stats): paired bootstrap over independent units."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prismlib.stats import Interval, bootstrap_distribution, group_sums, paired_bootstrap, ratio, ratio_difference, welch_difference


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
    ref = scipy_stats.bootstrap(
        (a, b), stat, n_resamples=300, paired=True, vectorized=True, method="percentile", rng=np.random.default_rng(7)
    ).bootstrap_distribution
    np.testing.assert_array_equal(dist, ref)
    assert not np.array_equal(dist, bootstrap_distribution(stat, (a, b), n_boot=300, seed=8))
    assert dist.shape == (300,)
    with pytest.raises(ValueError, match="at least two units"):
        bootstrap_distribution(stat, (a[:1], b[:1]))


# -- reference computations and boundaries (issue 23: every mutant of prismlib.stats is killed) --


def _scipy_interval(statistic, data, *, n_boot: int, seed: int, level: float):
    """``scipy.stats.bootstrap`` called directly: paired units, percentile interval, ``default_rng(seed)``."""
    from scipy import stats as scipy_stats

    res = scipy_stats.bootstrap(
        tuple(data),
        statistic,
        n_resamples=n_boot,
        paired=True,
        vectorized=True,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


def _diff_of_means(x, y, axis):  # no default for ``axis``: a call that drops it fails
    return x.mean(axis) - y.mean(axis)


def test_the_defaults_are_a_95_percent_percentile_interval_of_2000_resamples_seeded_0():
    from prismlib.stats import LEVEL, N_BOOT

    assert (LEVEL, N_BOOT) == (0.95, 2000)
    rng = np.random.default_rng(11)
    x, y = rng.normal(size=30), rng.normal(0.3, 1.0, size=30)
    iv = paired_bootstrap(_diff_of_means, (x, y))
    low, high = _scipy_interval(_diff_of_means, (x, y), n_boot=2000, seed=0, level=0.95)
    assert (iv.low, iv.high) == (low, high)  # exactly scipy's, same resamples
    assert iv.effect == pytest.approx(x.mean() - y.mean()) and iv.units == 30
    assert iv.level == 0.95 and iv.resampled == "units"
    assert Interval(0.0, -1.0, 1.0, 5).level == 0.95


@pytest.mark.parametrize(("n_boot", "seed", "level"), [(300, 3, 0.9), (500, 8, 0.8)])
def test_paired_bootstrap_passes_its_seed_resamples_and_level_to_scipy(n_boot, seed, level):
    rng = np.random.default_rng(12)
    x, y = rng.normal(size=25), rng.normal(size=25)
    iv = paired_bootstrap(_diff_of_means, (x, y), n_boot=n_boot, seed=seed, level=level)
    assert (iv.low, iv.high) == _scipy_interval(_diff_of_means, (x, y), n_boot=n_boot, seed=seed, level=level)
    assert iv.level == level
    other_seed = paired_bootstrap(_diff_of_means, (x, y), n_boot=n_boot, seed=seed + 1, level=level)
    assert (other_seed.low, other_seed.high) != (iv.low, iv.high)


def test_ratio_difference_is_scipy_s_bootstrap_of_the_ratio_difference_with_its_own_den_b():
    rng = np.random.default_rng(13)
    a, b = rng.random(40), rng.random(40)
    den, den_b = rng.random(40) + 0.5, rng.random(40) + 2.0

    def stat(x, y, d, db, axis):
        return np.exp(x.sum(axis) / d.sum(axis)) - np.exp(y.sum(axis) / db.sum(axis))

    iv = ratio_difference(a, b, den, den_b, transform=np.exp, n_boot=400, seed=5, level=0.9)
    assert iv.effect == pytest.approx(np.exp(ratio(a, den)) - np.exp(ratio(b, den_b)))
    assert (iv.low, iv.high) == pytest.approx(_scipy_interval(stat, (a, b, den, den_b), n_boot=400, seed=5, level=0.9))
    assert iv.level == 0.9
    default = ratio_difference(a, b, den)  # den_b defaults to den; seed 0, 2000 resamples, 95%
    ref = _scipy_interval(
        lambda x, y, d, axis: x.sum(axis) / d.sum(axis) - y.sum(axis) / d.sum(axis), (a, b, den), n_boot=2000, seed=0, level=0.95
    )
    assert (default.low, default.high) == pytest.approx(ref)
    assert ratio(np.array([1.0, 2.0]), np.array([2.0, 2.0])) == 0.75


def test_ratio_difference_warns_nothing_when_a_resample_divides_by_zero():
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="divide by zero", category=RuntimeWarning)
        warnings.filterwarnings("error", message="invalid value encountered in divide", category=RuntimeWarning)
        with pytest.raises(ValueError, match="non-finite statistic"):
            ratio_difference(np.array([1.0, 1.0, 1.0]), np.ones(3), np.array([1.0, 0.0, 0.0]), n_boot=200)
        with pytest.raises(ValueError, match="non-finite statistic"):
            ratio_difference(np.array([1.0, 0.0, 0.0]), np.ones(3), np.array([1.0, 0.0, 0.0]), n_boot=200)


def test_the_statistic_gets_its_axis_and_a_non_vectorised_one_gets_none():
    x = np.arange(10.0)
    assert paired_bootstrap(lambda a, axis: a.mean(axis), (x,), n_boot=50).effect == 4.5

    def no_axis(a):
        assert a.ndim == 1  # one resample at a time
        return float(np.median(a))

    assert paired_bootstrap(no_axis, (x,), n_boot=50, vectorized=False).effect == 4.5


def test_two_units_are_enough_and_the_level_lies_strictly_between_0_and_1():
    two = paired_bootstrap(_diff_of_means, (np.array([1.0, 2.0]), np.array([0.0, 0.0])), n_boot=50)
    assert two.units == 2 and two.effect == 1.5
    for level in (0.0, 1.0, 1.5, -0.5):
        with pytest.raises(ValueError, match="level must be in"):
            paired_bootstrap(_diff_of_means, (np.ones(3), np.ones(3)), level=level)
    with pytest.raises(ValueError, match="one entry per unit"):  # units are the last axis, not the first
        paired_bootstrap(lambda x, y, axis: x.sum() - y.sum(), (np.ones((2, 5)), np.ones((2, 6))))


def test_interval_contains_its_edges_and_prints_them_in_order():
    iv = Interval(0.5, -1.0, 0.75, 9)
    assert iv.contains() and iv.contains(-1.0) and iv.contains(0.75) and iv.contains(0.5) and iv.contains(-0.5)
    assert not iv.contains(1.0) and not iv.contains(-1.01) and not iv.contains(0.76)
    assert not Interval(0.5, 0.2, 0.9, 9).contains()  # the default value is 0
    assert str(Interval(0.02, -0.01, 0.05, 10)) == "+0.02 [-0.01, +0.05]"
    s = Interval(0.5, 0.25, 1.0, 7, 0.9, "runs").scaled(3.0)
    assert (s.effect, s.low, s.high, s.units, s.level, s.resampled) == (1.5, 0.75, 3.0, 7, 0.9, "runs")


def test_bootstrap_distribution_defaults_one_array_and_two_units():
    rng = np.random.default_rng(14)
    a = rng.normal(size=20)

    def mean(x, axis):  # no default for ``axis``: scipy passes it to a vectorised statistic
        return x.mean(axis)

    dist = bootstrap_distribution(mean, (a,))
    from scipy import stats as scipy_stats

    ref = scipy_stats.bootstrap(
        (a,), mean, n_resamples=2000, paired=True, vectorized=True, method="percentile", rng=np.random.default_rng(0)
    ).bootstrap_distribution
    np.testing.assert_array_equal(dist, ref)
    assert bootstrap_distribution(mean, (a[:2],), n_boot=10).shape == (10,)
    with pytest.raises(ValueError, match="at least two units"):
        bootstrap_distribution(mean, (a, a[:-1]))
    with pytest.raises(ValueError, match="at least two units"):
        bootstrap_distribution(lambda x, y, axis: x.sum() - y.sum(), (np.ones((2, 5)), np.ones((2, 6))))


def test_mean_interval_and_welch_with_two_runs_other_levels_and_equal_spreads():
    from scipy import stats as sps

    from prismlib.stats import mean_interval, welch_difference

    two = mean_interval([0.5, 0.7], level=0.9)
    low, high = sps.t.interval(0.9, 1, loc=0.6, scale=sps.sem([0.5, 0.7]))
    assert (two.low, two.high) == (pytest.approx(low), pytest.approx(high)) and two.level == 0.9 and two.units == 2
    for a, b in (([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), ([1.0, 1.4], [0.2, 0.5]), ([1.0, 1.4, 1.1, 0.9, 2.0], [0.2, 0.5])):
        iv = welch_difference(a, b, level=0.8)  # equal spreads; two runs a side; unequal sizes
        ref = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.8)
        assert (iv.low, iv.high) == (pytest.approx(ref.low), pytest.approx(ref.high)), (a, b)
        assert iv.effect == pytest.approx(np.mean(a) - np.mean(b)) and iv.level == 0.8 and iv.resampled == "runs"
        assert iv.units == min(len(a), len(b))
    with pytest.raises(ValueError, match="two runs"):
        welch_difference([1.0, 2.0], [0.5])
    with pytest.raises(ValueError, match="zero variance"):
        welch_difference([1.0, 1.0], [2.0, 2.0])
    assert welch_difference([1.0, 1.0], [2.0, 3.0]).effect == -1.5  # one sample without spread is fine


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # scipy's spread of a sample holding inf
def test_one_infinite_edge_is_enough_to_refuse_the_interval():
    x = np.array([0.0, 0.0, 1.0])  # a third of the resamples hold only zeros: log(0) there

    def log_mean(a, axis, sign):
        with np.errstate(divide="ignore"):
            return sign * np.log(a.mean(axis))

    for sign in (1, -1):  # -inf at the low edge only, then +inf at the high edge only
        with pytest.raises(ValueError, match="non-finite statistic"):
            paired_bootstrap(lambda a, axis: log_mean(a, axis, sign), (x,), n_boot=500)


def test_the_units_are_the_last_axis_of_every_array():
    """Arrays with a leading axis (e.g. three conditions per unit): the units resampled are
    the last axis, for the effect and for the resamples alike."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(15)
    x, y = rng.normal(size=(3, 20)), rng.normal(size=(3, 20))

    def stat(a, b, axis):
        return (a.mean(axis) - b.mean(axis)).sum(0)

    iv = paired_bootstrap(stat, (x, y), n_boot=300, seed=2)
    ref = scipy_stats.bootstrap(
        (x, y), stat, n_resamples=300, axis=-1, paired=True, method="percentile", rng=np.random.default_rng(2)
    ).confidence_interval
    assert iv.units == 20 and iv.effect == pytest.approx((x.mean(1) - y.mean(1)).sum())
    assert (iv.low, iv.high) == (ref.low, ref.high)
    one = bootstrap_distribution(lambda a, axis: a.mean(axis).sum(0), (x[:1],), n_boot=50)  # one row, 20 units
    assert one.shape == (50,)


# -- independent_difference: two statistics of two independent test sets (e.g. a band on two tasks) --


def _ratio(num, den, axis):
    return num.sum(axis) / den.sum(axis)


def test_independent_difference_is_the_difference_of_two_independent_bootstraps():
    from prismlib.stats import independent_difference

    rng = np.random.default_rng(21)
    a = (rng.normal(1.0, 1.0, size=30), rng.uniform(1, 2, size=30))
    b = (rng.normal(0.2, 1.0, size=17), rng.uniform(1, 2, size=17))  # another set, another size
    iv = independent_difference(_ratio, a, _ratio, b, n_boot=400, seed=5, level=0.9)
    assert iv.effect == pytest.approx(a[0].sum() / a[1].sum() - b[0].sum() / b[1].sum())
    draws = bootstrap_distribution(_ratio, a, n_boot=400, seed=5) - bootstrap_distribution(_ratio, b, n_boot=400, seed=6)
    assert (iv.low, iv.high) == pytest.approx(tuple(np.quantile(draws, [0.05, 0.95])), rel=1e-12)
    assert iv.units == 17 and iv.level == 0.9 and iv.resampled == "units"
    default = independent_difference(_ratio, a, _ratio, b)
    draws = bootstrap_distribution(_ratio, a, n_boot=2000, seed=0) - bootstrap_distribution(_ratio, b, n_boot=2000, seed=1)
    assert (default.low, default.high) == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])), rel=1e-12)


def test_independent_difference_of_one_set_with_itself_is_not_paired():
    """Two copies of one set resampled independently: the effect is 0 but the interval is as
    wide as two independent draws make it (a paired bootstrap would give exactly [0, 0])."""
    from prismlib.stats import independent_difference

    x = (np.random.default_rng(22).normal(size=40),)
    iv = independent_difference(lambda v, axis: v.mean(axis), x, lambda v, axis: v.mean(axis), x, n_boot=500, seed=3)
    assert iv.effect == 0.0 and iv.low < -0.1 and iv.high > 0.1


def test_independent_difference_covers_the_true_difference_about_95_percent():
    from prismlib.stats import independent_difference

    rng = np.random.default_rng(23)
    covered = 0
    for _ in range(200):
        a, b = rng.normal(0.5, 1.0, size=40), rng.normal(0.0, 2.0, size=25)
        iv = independent_difference(lambda v, axis: v.mean(axis), (a,), lambda v, axis: v.mean(axis), (b,), n_boot=400, seed=1)
        covered += iv.contains(0.5)
    assert 0.88 <= covered / 200 <= 0.99


def test_independent_difference_refuses_what_has_no_interval():
    from prismlib.stats import independent_difference

    x, one = (np.arange(5.0),), (np.array([1.0]),)
    mean = lambda v, axis: v.mean(axis)  # noqa: E731
    with pytest.raises(ValueError, match="at least two units"):
        independent_difference(mean, x, mean, one)
    with pytest.raises(ValueError, match="level"):
        independent_difference(mean, x, mean, x, level=1.0)
    with pytest.raises(ValueError, match="level"):
        independent_difference(mean, x, mean, x, level=0.0)
    zero = (np.array([1.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.0]))
    with np.errstate(divide="ignore", invalid="ignore"), pytest.raises(ValueError, match="full data"):
        independent_difference(_ratio, zero, mean, x)
    some_zero = (np.array([1.0, 1.0, 1.0]), np.array([1.0, 0.0, 0.0]))  # a resample of the last two units divides by 0
    with np.errstate(divide="ignore", invalid="ignore"), pytest.raises(ValueError, match="resamples"):
        independent_difference(_ratio, some_zero, mean, x, n_boot=200)


def test_scaled_intervals_keep_what_they_resampled():
    runs = welch_difference([0.42, 0.41, 0.43], [0.0, 0.01, 0.02])
    assert runs.scaled(100).resampled == "runs"


def test_mean_interval_is_student_t_over_runs():
    import numpy as np
    from scipy import stats as scipy_stats

    from prismlib.stats import mean_interval

    x = [0.61, 0.58, 0.66, 0.63]
    got = mean_interval(x)
    low, high = scipy_stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=scipy_stats.sem(x))
    assert got.effect == pytest.approx(np.mean(x)) and got.low == pytest.approx(low) and got.high == pytest.approx(high)
    assert got.resampled == "runs" and got.units == 4
    with pytest.raises(ValueError, match="at least two runs"):
        mean_interval([0.5])
    with pytest.raises(ValueError, match="same value"):
        mean_interval([0.5, 0.5])
