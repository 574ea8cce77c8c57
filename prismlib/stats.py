"""Paired bootstrap over a test set's independent units: the statistics of every verdict.

A claim compares two measured conditions on the *same* test set (two bands, two
models, a model and a baseline).  The noise that matters is test-set sampling: a
different draw of posts, conversations, WSJ files, articles or PTB chunks would
give a different difference.  So every effect here comes with a 95% interval from a
paired bootstrap that resamples the test set's independent units (the same resampled
units for both conditions), never the tokens inside a unit, which are correlated.

Most statistics of the project are ratios of sums over units:

* probe accuracy = ``sum_u correct_u / sum_u weight_u`` (``correct_u`` is the
  1/|N|-weighted number of correct positions of unit ``u``, ``weight_u`` its weight);
* perplexity = ``exp(sum_u nll_u / sum_u tokens_u)``;
* a mean over inputs = ``sum_u value_u / sum_u count_u``.

:func:`group_sums` turns per-row values into per-unit sums and :func:`ratio_difference`
bootstraps ``f(sum a / sum den) - f(sum b / sum den)``.  :func:`paired_bootstrap` takes
any statistic (for example a fitted slope).  Where two statistics come from two
*different* test sets (two tasks), nothing is paired between them:
:func:`independent_difference` resamples each set over its own units, independently.  The resampling itself is
``scipy.stats.bootstrap`` (``paired=True``, percentile interval); this module only
says what a unit is and what is compared.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as _scipy_stats

if TYPE_CHECKING:
    from scipy.stats._resampling import BootstrapResult

LEVEL = 0.95
"""Coverage of every interval of the project."""

N_BOOT = 2000
"""Default bootstrap resamples."""


@dataclass(frozen=True)
class Interval:
    """An effect measured on the full test set and its bootstrap interval.

    Attributes:
        effect: the statistic on the full data (e.g. accuracy of A minus accuracy of B).
        low, high: the percentile bootstrap interval of the effect.
        units: number of independent units resampled.
        level: coverage of the interval (0.95).
    """

    effect: float
    low: float
    high: float
    units: int
    level: float = LEVEL
    resampled: str = "units"
    """What the interval's noise is: ``units`` (a bootstrap over the test set's independent
    units, the verdicts' default), ``units+seeds`` (both: :func:`combined_interval`, every
    contrast between trained models), ``runs`` (the spread over training runs alone, for a
    learned quantity with no test set) or ``none`` (an exact quantity)."""
    seeds: int = 0
    """Training seeds behind a ``units+seeds`` interval (the fewest of an arm's); 0 otherwise."""

    def contains(self, value: float = 0.0) -> bool:
        """Whether ``value`` lies inside the closed interval."""
        return self.low <= value <= self.high

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. ``100`` for percentage points)."""
        lo, hi = sorted((self.low * factor, self.high * factor))
        return Interval(self.effect * factor, lo, hi, self.units, self.level, self.resampled, self.seeds)

    def __str__(self) -> str:
        return f"{self.effect:+.3g} [{self.low:+.3g}, {self.high:+.3g}]"


def paired_bootstrap(
    statistic: Callable[..., np.ndarray | float],
    data: Sequence[np.ndarray],
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
    vectorized: bool = True,
) -> Interval:
    """Percentile interval of ``statistic(*data)`` over resamples of the units.

    Args:
        statistic: ``statistic(*arrays, axis=-1)`` -> the effect; with ``vectorized``
            it must accept extra leading batch axes (resamples), the units being the
            last axis; otherwise it is called once per resample without ``axis``.
        data: arrays whose last axis has one entry per independent unit (all the same
            length: the units are paired across arrays).
        n_boot: bootstrap resamples.
        seed: seed of the resampling.
        level: coverage of the interval.

    Returns:
        An :class:`Interval`; its ``effect`` is the statistic on the full data.

    Raises:
        ValueError: fewer than two units, or arrays of different numbers of units.
    """
    arrays = [np.asarray(d, dtype=np.float64) for d in data]
    n = {a.shape[-1] for a in arrays}
    if len(n) != 1:
        raise ValueError(f"paired data must have one entry per unit in every array; got lengths {sorted(n)}")
    units = n.pop()
    if units < 2:
        raise ValueError(f"a bootstrap over units needs at least two units, got {units}; use more test documents")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    effect = float(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays))
    if not np.isfinite(effect):
        raise ValueError(f"the statistic is {effect} on the full data; an interval needs a finite effect")
    res = _scipy_resample(statistic, arrays, n_boot=n_boot, seed=seed, level=level, vectorized=vectorized)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(
            "some bootstrap resamples gave a non-finite statistic (e.g. a ratio over units whose "
            "denominators sum to 0); use more units or a statistic defined on every resample"
        )
    return Interval(effect, low, high, units, level)


def _scipy_resample(
    statistic: Callable[..., np.ndarray | float],
    arrays: Sequence[np.ndarray],
    *,
    n_boot: int,
    seed: int,
    level: float = LEVEL,
    vectorized: bool = True,
) -> BootstrapResult:
    """``scipy.stats.bootstrap`` with the project's settings: paired units, percentile
    interval, resamples drawn from ``numpy.random.default_rng(seed)``."""
    if vectorized:
        fn = statistic
    else:

        def fn(*xs: np.ndarray, axis: int = -1) -> float:
            return float(statistic(*xs))

    # scipy-stubs type the statistic as a union of callables (scalar or array result), which a
    # callable returning either does not match
    return _scipy_stats.bootstrap(  # type: ignore[call-overload]
        tuple(arrays),
        fn,
        n_resamples=n_boot,
        axis=-1,  # the units are the last axis (scipy's default is the first)
        paired=True,
        vectorized=vectorized,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )


def bootstrap_distribution(
    statistic: Callable[..., np.ndarray], data: Sequence[np.ndarray], *, n_boot: int = N_BOOT, seed: int = 0
) -> np.ndarray:
    """The ``(n_boot,)`` values of ``statistic(*data, axis=-1)`` over paired resamples of the
    units (the last axis of every array), drawn as :func:`paired_bootstrap` draws them; a
    statistic with ``k`` outputs (stacked on a leading axis) gives ``(k, n_boot)``, every
    output on the same resamples.
    For reporting a resampled spread (e.g. the slides' "mean +/- sd" columns), not for a
    verdict: verdicts take :func:`paired_bootstrap`'s interval."""
    arrays = [np.asarray(d, dtype=np.float64) for d in data]
    if len({a.shape[-1] for a in arrays}) != 1 or arrays[0].shape[-1] < 2:
        raise ValueError("a bootstrap distribution needs paired arrays with at least two units each")
    with warnings.catch_warnings():  # identical units: a degenerate (zero-width) distribution is fine here
        warnings.simplefilter("ignore")
        res = _scipy_resample(statistic, arrays, n_boot=n_boot, seed=seed)
    return np.asarray(res.bootstrap_distribution)


def independent_difference(
    statistic_a: Callable[..., np.ndarray],
    data_a: Sequence[np.ndarray],
    statistic_b: Callable[..., np.ndarray],
    data_b: Sequence[np.ndarray],
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """``statistic_a(*data_a) - statistic_b(*data_b)`` for two independent test sets (e.g. the
    same band's score on two tasks), with a percentile interval of the difference of
    bootstrap draws made independently in each set: set ``a`` resamples its units (paired
    across its arrays) with seed ``seed``, set ``b`` its own with ``seed + 1``.

    Args:
        statistic_a, statistic_b: as for :func:`paired_bootstrap` (vectorised, the units on
            the last axis).
        data_a, data_b: each set's paired arrays (the sets may differ in their numbers of units).

    Returns:
        An :class:`Interval` whose ``units`` is the smaller set's number of units.

    Raises:
        ValueError: a set with fewer than two units, or a non-finite statistic on the full
            data or on some resample.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    arrays_a = [np.asarray(d, dtype=np.float64) for d in data_a]
    arrays_b = [np.asarray(d, dtype=np.float64) for d in data_b]
    effect = float(statistic_a(*arrays_a, axis=-1)) - float(statistic_b(*arrays_b, axis=-1))
    if not np.isfinite(effect):
        raise ValueError(f"the difference is {effect} on the full data; an interval needs a finite effect")
    draws = bootstrap_distribution(statistic_a, arrays_a, n_boot=n_boot, seed=seed) - bootstrap_distribution(
        statistic_b, arrays_b, n_boot=n_boot, seed=seed + 1
    )
    if not np.isfinite(draws).all():
        raise ValueError("some bootstrap resamples gave a non-finite statistic; use more units or a statistic defined on every resample")
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return Interval(effect, float(low), float(high), min(arrays_a[0].shape[-1], arrays_b[0].shape[-1]), level)


def group_sums(values: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum rows that belong to the same independent unit.

    Args:
        values: ``(..., n)`` per-row values (e.g. weighted correctness).
        groups: ``(n,)`` unit of each row (any hashable numpy dtype).

    Returns:
        ``(units, sums)``: the sorted unique units ``(G,)`` and ``(..., G)`` sums.
    """
    values = np.asarray(values, dtype=np.float64)
    groups = np.asarray(groups)
    if values.shape[-1] != len(groups):
        raise ValueError(f"values have {values.shape[-1]} rows but groups {len(groups)}")
    units, inverse = np.unique(groups, return_inverse=True)
    flat = values.reshape(-1, values.shape[-1])
    sums = np.zeros((flat.shape[0], len(units)))
    for row, v in enumerate(flat):
        sums[row] = np.bincount(inverse, weights=v, minlength=len(units))
    return units, sums.reshape(*values.shape[:-1], len(units))


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def ratio_difference(
    num_a: np.ndarray,
    num_b: np.ndarray,
    den: np.ndarray,
    den_b: np.ndarray | None = None,
    *,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """``f(sum num_a / sum den) - f(sum num_b / sum den_b)`` with a paired bootstrap over units.

    Args:
        num_a, num_b: ``(G,)`` per-unit numerators of the two conditions (e.g. weighted
            correct predictions; summed NLL).
        den: ``(G,)`` per-unit denominators (e.g. weights; predicted tokens).
        den_b: denominators of ``b`` when they differ from ``a``'s (default: ``den``).
        transform: ``f`` applied to each ratio (``np.exp`` turns mean NLL into perplexity).

    Returns:
        The :class:`Interval` of the difference (``a - b``).
    """
    f = transform or _identity
    den_b = den if den_b is None else den_b

    def stat(a: np.ndarray, b: np.ndarray, d: np.ndarray, db: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):  # non-finite results raise in paired_bootstrap
            return f(a.sum(axis) / d.sum(axis)) - f(b.sum(axis) / db.sum(axis))

    return paired_bootstrap(stat, (num_a, num_b, den, den_b), n_boot=n_boot, seed=seed, level=level)


def ratio(num: np.ndarray, den: np.ndarray) -> float:
    """``sum num / sum den`` (the point estimate the intervals above are centred on)."""
    return float(np.sum(num) / np.sum(den))


def mean_interval(values: Sequence[float], *, level: float = LEVEL) -> Interval:
    """Mean of ``values`` (one per independent run) with Student's t interval over them: the
    noise of a learned quantity that has no test set to resample.

    Raises:
        ValueError: fewer than two values, or all equal (no spread to build an interval from).
    """
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        raise ValueError(f"an interval over runs needs at least two runs, got {len(x)}")
    sem = x.std(ddof=1) / np.sqrt(len(x))
    if sem == 0:
        raise ValueError("every run gave the same value: no interval; use more runs or another statistic")
    half = float(_scipy_stats.t.ppf(0.5 + level / 2, len(x) - 1) * sem)
    mean = float(x.mean())
    return Interval(mean, mean - half, mean + half, len(x), level, "runs")


def welch_difference(a: Sequence[float], b: Sequence[float], *, level: float = LEVEL) -> Interval:
    """Mean of ``a`` minus mean of ``b``, two independent samples (e.g. a quantity of
    probes trained with different seeds on two tasks), with Welch's t interval.

    For a statistic with no test set to resample (a learned parameter), the noise that
    remains is training noise: the spread over independent runs. ``units`` is the smaller
    sample size; with a handful of runs the interval is wide, as it should be.

    Raises:
        ValueError: a sample has fewer than two values, or both have zero variance.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(x) < 2 or len(y) < 2:
        raise ValueError(f"Welch's interval needs at least two runs per sample, got {len(x)} and {len(y)}")
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    effect = float(x.mean() - y.mean())
    if va + vb == 0:
        raise ValueError("both samples have zero variance: no interval; use more runs or another statistic")
    df = (va + vb) ** 2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    half = float(_scipy_stats.t.ppf(0.5 + level / 2, df) * np.sqrt(va + vb))
    return Interval(effect, effect - half, effect + half, min(len(x), len(y)), level, "runs")


def combined_interval(
    unit: Interval, seeds_a: Sequence[float], seeds_b: Sequence[float] | None = None, *, level: float = LEVEL
) -> Interval:
    """One interval of a contrast between trained models with both sources of variance: the
    test units and the training seeds (a random-effects interval).

    The contrast is measured on the seed-mean predictions of a test set shared by every seed, so
    ``unit`` (the paired bootstrap over that test set's units) holds the training runs fixed, and
    the spread of the per-seed contrasts holds the test set fixed: each alone is too narrow. Here
    the two variances add, ``se**2 = v_units + v_seeds`` with ``v_units`` read from ``unit``'s
    width (``((high - low) / (2 z))**2``) and ``v_seeds = var(seeds_a) / n_a`` (paired by seed,
    or one arm untrained: ``seeds_a`` holds one contrast per seed) or ``var(a) / n_a + var(b) /
    n_b`` (independent arms, as Welch), and the interval is ``unit.effect +- t(df) * se`` with
    Satterthwaite's degrees of freedom (the seeds' ``n - 1``, the units' ``units - 1``), and never
    narrower than the seeds' own t interval (Satterthwaite's ``df`` is itself estimated: where
    3 seeds happen to agree it grows and ``t`` shrinks, and alone it covers 92%). With 3 seeds
    a two-level bootstrap (seeds, then units) covers 73-91%; this covers 94-96% over seed-to-unit
    spread ratios from 0 to 100 (``benchmarks/combined_coverage.py``; the test of it is
    ``tests/core/test_stats_combined.py``; docs/claims.md).

    Args:
        unit: the contrast on the seed-mean predictions and its bootstrap over test units.
        seeds_a: one value per training seed: the per-seed contrast (``seeds_b`` None), or arm
            ``a``'s statistic (``seeds_b`` given).
        seeds_b: arm ``b``'s statistic per seed, for arms trained independently.

    Returns:
        An :class:`Interval` centred on ``unit.effect``, ``resampled`` ``units+seeds``,
        ``seeds`` the fewest seeds of an arm.

    Raises:
        ValueError: an arm with fewer than two seeds, a non-finite value, or ``unit`` not a
            bootstrap over units.
    """
    if unit.resampled != "units":
        raise ValueError(f"the unit part of a combined interval must be a bootstrap over test units, got one over {unit.resampled!r}")
    values = [np.asarray(seeds_a, dtype=np.float64)] + ([] if seeds_b is None else [np.asarray(seeds_b, dtype=np.float64)])
    if any(len(x) < 2 for x in values):
        raise ValueError(f"a combined interval needs at least two training seeds per arm, got {[len(x) for x in values]}; train more seeds")
    bounds = np.array([unit.effect, unit.low, unit.high, *np.concatenate(values)])
    if not np.isfinite(bounds).all():
        raise ValueError(f"a combined interval needs finite values, got unit {unit} and seeds {[x.tolist() for x in values]}")
    z = float(_scipy_stats.norm.ppf(0.5 + unit.level / 2))
    v_units = ((unit.high - unit.low) / (2 * z)) ** 2
    parts = [(v_units, max(unit.units - 1, 1))] + [(float(x.var(ddof=1) / len(x)), len(x) - 1) for x in values]
    var = sum(v for v, _ in parts)
    n_seeds = min(len(x) for x in values)
    if var == 0:
        return Interval(unit.effect, unit.effect, unit.effect, unit.units, level, "units+seeds", n_seeds)
    half = max(_t_half(parts, level), _t_half(parts[1:], level))
    return Interval(unit.effect, unit.effect - half, unit.effect + half, unit.units, level, "units+seeds", n_seeds)


def _t_half(parts: Sequence[tuple[float, int]], level: float) -> float:
    """``t(df) * sqrt(sum v)`` of variance parts ``(v, df)``, with Satterthwaite's ``df``; 0 when every part is 0."""
    var = sum(v for v, _ in parts)
    if var == 0:
        return 0.0
    df = var**2 / sum(v**2 / d for v, d in parts)
    return float(_scipy_stats.t.ppf(0.5 + level / 2, df) * np.sqrt(var))
