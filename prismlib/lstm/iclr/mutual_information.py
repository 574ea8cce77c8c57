"""Mutual information between words ``d`` apart, and whether it decays as a power law.

The ICLR 2021 version of Mahto et al. motivates power-law memory timescales by the
power-law decay of the mutual information ``I(d)`` between a token and the token ``d``
positions later in natural language (Lin & Tegmark 2017, "Critical behavior in physics
and probabilistic formal languages", Entropy 19:299).  This module measures ``I(d)`` on
a token stream so that the question "does LSTM memory follow the mutual information of
language?" can be asked of the same text the LSTMs read.

**Estimator** (all values in **nats**): ``I(d) = H(X) + H(Y) - H(X, Y)`` over the
``N = n - d`` pairs ``(x_t, x_{t+d})``, every entropy estimated by the same estimator
from the pair counts and their two marginals.  The plug-in entropy is biased low by about
``(types - 1) / 2N``, and the pairs have far more types than the words, so the plug-in
``I`` is biased *high*.  The default is **Grassberger's (2003) estimator** ("Entropy
estimates from insufficient samplings", arXiv:physics/0307138), in the form Lin &
Tegmark use::

    H = log N - (1/N) sum_i n_i G(n_i),   G(n) = psi(n) + (-1)^n / 2 * (psi((n+1)/2) - psi(n/2))

(``psi`` the digamma function).  ``"miller-madow"`` (plug-in + ``(m - 1) / 2N``, ``m``
the observed types; Miller 1955) and ``"plugin"`` are there to compare.  No estimator
removes the bias once most pair types are seen once: on PTB train (10,000 words, ~930,000
pairs) Grassberger still reads ~0.84 nats into a shuffled text (plug-in: more), against a
dependence of a few hundredths of a nat at ``d = 100``.  :func:`shuffled_floor` measures
that floor; compare ``I(d)`` with it and subtract it (``offset``) before a decay fit.

**Intervals: delete-one-chunk jackknife** over ``K`` contiguous chunks of the text (the
pair ``(x_t, x_{t+d})`` belongs to the chunk of ``t``).  Replicate ``k`` is the estimate
on the whole text without chunk ``k``: no pair is duplicated, and the sample size stays
``(1 - 1/K) N``, so the replicates carry the full text's small bias.  A block bootstrap
with replacement does not: a resampled chunk drawn twice doubles its pair counts, which
turns singletons into doubletons, and a bias-corrected estimator then reads the resample
as far less diverse than real text of the same size: with 20 chunks, i.i.d. text over 100
types (100,000 tokens, ``I = 0``, estimate -0.001) gives bootstrap replicates of mean
0.047 and a 95% percentile interval [0.025, 0.083] that excludes the truth; PTB train at
``d = 100`` gives replicates of mean 1.34 nats around an estimate of 0.86.  Per-chunk
estimates are biased too (their bias grows as the chunk shrinks).  The interval is
``estimate +/- t_{K-1} * se``, ``se^2 = (K-1)/K * sum_k (theta_k - mean theta)^2`` (the
jackknife, Efron & Stein 1981; for diversity indices Zahl 1977), a
:class:`prismlib.stats.Interval` whose ``units`` are the chunks.

**Decay fits**: least squares of ``log(I - offset)`` on ``log d`` (power law
``A d^-alpha``) or on ``d`` (exponential ``A exp(-d / xi)``) over a stated range of ``d``,
skipping non-positive values; the same jackknife gives the exponent's interval and that
of the difference of the two fits' residuals (both fits have two parameters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special
from scipy import stats as _scipy_stats

from prismlib.stats import LEVEL, Interval

MI_ESTIMATORS = ("grassberger", "miller-madow", "plugin")
"""Entropy estimators: Grassberger 2003 (the default), Miller-Madow, plug-in."""

MI_CHUNKS = 20
"""Default number of contiguous text chunks of the jackknife (PTB train: ~46,000 tokens each)."""


def _n_f(n_max: int, estimator: str) -> np.ndarray:
    """``(n_max + 1,)`` table of ``n * G(n)`` (Grassberger) or ``n log n``, with 0 at ``n = 0``."""
    if estimator not in MI_ESTIMATORS:
        raise ValueError(f"estimator must be one of {MI_ESTIMATORS}, got {estimator!r}")
    n = np.arange(n_max + 1, dtype=np.float64)
    out = np.zeros(n_max + 1)
    m = n[1:]
    if estimator == "grassberger":
        sign = np.where(np.arange(1, n_max + 1) % 2 == 0, 1.0, -1.0)
        out[1:] = m * (special.digamma(m) + 0.5 * sign * (special.digamma((m + 1) / 2) - special.digamma(m / 2)))
    else:
        out[1:] = m * np.log(m)
    return out


def _entropy(total: np.ndarray | float, sum_f: np.ndarray | float, types: np.ndarray | float, estimator: str) -> np.ndarray | float:
    """``log N - sum f(n_i) / N`` (+ Miller-Madow's ``(m - 1) / 2N``), elementwise."""
    h = np.log(total) - sum_f / total
    return h + (types - 1) / (2 * total) if estimator == "miller-madow" else h


def entropy_estimate(counts: np.ndarray, estimator: str = "grassberger") -> float:
    """Entropy estimate (nats) of a distribution from its ``(m,)`` non-negative integer counts."""
    c = np.asarray(counts)
    if c.ndim != 1 or not np.issubdtype(c.dtype, np.integer) or c.min(initial=0) < 0 or c.sum() == 0:
        raise ValueError("counts must be a non-empty (m,) array of non-negative integers, not all 0")
    c = c[c > 0].astype(np.int64)
    f = _n_f(int(c.max()), estimator)
    return float(_entropy(float(c.sum()), float(f[c].sum()), float(len(c)), estimator))


def _jackknife_entropy(
    keys: np.ndarray, chunk: np.ndarray, k: int, f: np.ndarray, estimator: str, symbols: int | None = None
) -> tuple[float, np.ndarray]:
    """Entropy of the symbols ``keys`` ``(N,)`` on all positions and with each of the ``k``
    chunks left out (``chunk`` ``(N,)`` in ``[0, k)``): ``(H, (k,) H_without_chunk)``.

    The counts ``c`` of each (symbol, chunk) entry (one sort, or a bincount when the keys lie
    in ``[0, symbols)``) give the full counts ``n`` and, per chunk, the change of
    ``sum f(n)`` when that chunk's counts are removed."""
    if symbols is None:
        entry, c = np.unique(keys * k + chunk, return_counts=True)
    else:
        dense = np.bincount(keys * k + chunk, minlength=symbols * k)
        entry = np.flatnonzero(dense)
        c = dense[entry]
    symbol, in_chunk = np.divmod(entry, k)
    first = np.flatnonzero(np.r_[True, symbol[1:] != symbol[:-1]])
    n = np.add.reduceat(c, first)
    n_entry = np.repeat(n, np.diff(np.r_[first, len(entry)]))
    total, sum_f = float(c.sum()), float(f[n].sum())
    total_k = total - np.bincount(in_chunk, weights=c, minlength=k)
    sum_f_k = sum_f - np.bincount(in_chunk, weights=f[n_entry] - f[n_entry - c], minlength=k)
    types_k = len(n) - np.bincount(in_chunk, weights=n_entry == c, minlength=k)
    return float(_entropy(total, sum_f, float(len(n)), estimator)), np.asarray(_entropy(total_k, sum_f_k, types_k, estimator))


def _jackknife_interval(effect: float, replicates: np.ndarray, level: float) -> Interval:
    """``effect +/- t_{K-1} * se`` with the jackknife standard error of ``(K,)`` replicates
    (a zero-width interval, ``resampled="none"``, with fewer than two: an exact curve)."""
    k = len(replicates)
    if k < 2:
        return Interval(effect, effect, effect, k, level, "none")
    se = float(np.sqrt((k - 1) / k * np.sum((replicates - replicates.mean()) ** 2)))
    half = float(_scipy_stats.t.ppf(0.5 + level / 2, k - 1)) * se
    return Interval(effect, effect - half, effect + half, k, level)


@dataclass(frozen=True)
class MutualInformation:
    """``I(d)`` of a token stream with its text-chunk jackknife.

    Attributes:
        distances: ``(D,)`` the distances ``d``.
        estimate: ``(D,)`` ``I(d)`` in nats on the whole text.
        replicates: ``(K, D)`` ``I(d)`` with text chunk ``k`` left out (``(0, D)``: an exact curve).
        estimator: the entropy estimator (one of :data:`MI_ESTIMATORS`).
        level: coverage of the intervals.
    """

    distances: np.ndarray
    estimate: np.ndarray
    replicates: np.ndarray
    estimator: str = "grassberger"
    level: float = LEVEL

    @property
    def intervals(self) -> list[Interval]:
        """One jackknife :class:`~prismlib.stats.Interval` per distance (nats)."""
        return [_jackknife_interval(float(e), r, self.level) for e, r in zip(self.estimate, self.replicates.T)]

    def at(self, d: int) -> Interval:
        """The interval of ``I(d)``."""
        hits = np.flatnonzero(self.distances == d)
        if not len(hits):
            raise KeyError(f"distance {d} was not measured; measured {self.distances.tolist()}")
        i = int(hits[0])
        return _jackknife_interval(float(self.estimate[i]), self.replicates[:, i], self.level)


def mutual_information_curve(
    ids: np.ndarray, distances: int | Sequence[int] = 100, *, estimator: str = "grassberger", chunks: int = MI_CHUNKS, level: float = LEVEL
) -> MutualInformation:
    """``I(d)`` between ``ids[t]`` and ``ids[t + d]`` (nats) with a delete-one-chunk jackknife.

    Args:
        ids: ``(n,)`` integer token ids ``>= 0`` (PTB: a whole split read as one stream).
        distances: ``D`` for ``d = 1..D``, or the distances themselves (positive, each ``< n``).
        estimator: entropy estimator of every term (:data:`MI_ESTIMATORS`).
        chunks: ``K`` contiguous text chunks; each should be much longer than the largest ``d``.

    Returns:
        A :class:`MutualInformation`.  PTB train, ``D = 100``: about 10 s on one core.
    """
    x = np.asarray(ids)
    if x.ndim != 1 or not np.issubdtype(x.dtype, np.integer) or (x.size and x.min() < 0):
        raise ValueError(f"ids must be a stream (n,) of non-negative integer ids, got shape {x.shape}, dtype {x.dtype}")
    ds = np.arange(1, distances + 1) if isinstance(distances, int) else np.asarray(distances, dtype=np.int64)
    if ds.ndim != 1 or not len(ds) or ds.min() < 1 or ds.max() >= len(x):
        raise ValueError(f"distances must be positive and below the stream's length {len(x)}, got {distances}")
    if chunks < 2 or len(x) // chunks <= ds.max():
        raise ValueError(f"need at least 2 chunks each longer than the largest distance {ds.max()}; {len(x)} tokens, {chunks} chunks")
    _, x = np.unique(x, return_inverse=True)  # ids 0..V-1 with V the types that occur
    v = int(x.max()) + 1
    if v * v * chunks >= np.iinfo(np.int64).max:
        raise ValueError(f"{v} types and {chunks} chunks overflow the int64 pair keys")
    f = _n_f(int(np.bincount(x).max()), estimator)  # no count exceeds the commonest type's
    chunk_of = np.arange(len(x)) * chunks // len(x)  # the chunk of each position t
    estimate, replicates = np.empty(len(ds)), np.empty((chunks, len(ds)))
    for j, d in enumerate(ds):
        a, b, c = x[:-d], x[d:], chunk_of[:-d]
        h_a, h_a_k = _jackknife_entropy(a, c, chunks, f, estimator, v)
        h_b, h_b_k = _jackknife_entropy(b, c, chunks, f, estimator, v)
        h_ab, h_ab_k = _jackknife_entropy(a * v + b, c, chunks, f, estimator)
        estimate[j], replicates[:, j] = h_a + h_b - h_ab, h_a_k + h_b_k - h_ab_k
    return MutualInformation(ds, estimate, replicates, estimator, level)


def shuffled_floor(ids: np.ndarray, d: int = 1, *, estimator: str = "grassberger", chunks: int = MI_CHUNKS, seed: int = 0) -> Interval:
    """``I(d)`` of a random permutation of ``ids``: the estimator's bias on this text (nats).

    The shuffled text keeps the word frequencies and the sample size but has no dependence
    (true ``I`` is 0 up to the permutation's negligible one), so its estimate is what the
    estimator reads into pure noise.  For a word vocabulary it is far from 0 (PTB train,
    Grassberger: ~0.84 nats, most pair types being seen once): an ``I(d)`` not clearly above
    it is no evidence of dependence, and a decay fit should take it as ``offset``.
    """
    shuffled = np.random.default_rng(seed).permutation(np.asarray(ids))
    return mutual_information_curve(shuffled, [d], estimator=estimator, chunks=chunks).at(d)


@dataclass(frozen=True)
class DecayFit:
    """A fit of ``log(I(d) - offset)`` by least squares over ``d_min <= d <= d_max``.

    Attributes:
        model: ``"power"`` (``I = A d^-rate``) or ``"exponential"`` (``I = A exp(-rate d)``).
        rate: the exponent ``alpha`` or the rate ``1 / xi``, with its jackknife interval
            (zero width for a curve without replicates, e.g. exact values).
        amplitude: ``A`` (nats).
        rss: residual sum of squares of ``log(I - offset)`` on the whole text.
        used, skipped: distances in range fitted, and those skipped as ``I - offset <= 0``.
        d_min, d_max: the range of ``d``.
        offset: subtracted from ``I`` before the log (nats).
    """

    model: str
    rate: Interval
    amplitude: float
    rss: float
    used: int
    skipped: int
    d_min: int
    d_max: int
    offset: float = 0.0


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares ``y = a + b x`` of the finite positive part of ``y``: ``(a, b, rss)``."""
    ok = y > 0
    if ok.sum() < 3:
        raise ValueError(f"a decay fit needs at least 3 positive values of I(d), got {int(ok.sum())}")
    b, a = np.polyfit(x[ok], np.log(y[ok]), 1)
    return float(a), float(b), float(np.sum((np.log(y[ok]) - a - b * x[ok]) ** 2))


def _fit(curve: MutualInformation, model: str, d_min: int, d_max: int | None, offset: float) -> tuple[DecayFit, np.ndarray]:
    """The fit of ``log(I - offset)`` and the ``(K,)`` jackknife replicates of its rss."""
    hi = int(curve.distances.max()) if d_max is None else d_max
    sel = (curve.distances >= d_min) & (curve.distances <= hi)
    ds = curve.distances[sel].astype(np.float64)
    x = np.log(ds) if model == "power" else ds
    y = curve.estimate[sel] - offset
    keep = y > 0  # the replicates are fitted on the distances the whole text keeps
    a, b, rss = _line(x, y)
    reps = [_line(x[keep], r[sel][keep] - offset) for r in curve.replicates]
    rate_k, rss_k = -np.array([r[1] for r in reps]), np.array([r[2] for r in reps])
    rate = _jackknife_interval(-b, rate_k, curve.level)
    return DecayFit(model, rate, float(np.exp(a)), rss, int(keep.sum()), int((~keep).sum()), d_min, hi, offset), rss_k


def fit_mi_power_law(curve: MutualInformation, d_min: int = 1, d_max: int | None = None, offset: float = 0.0) -> DecayFit:
    """``I(d) - offset ~ A d^-alpha``: slope of ``log(I - offset)`` on ``log d`` over ``[d_min, d_max]``
    (default: every measured ``d``; ``offset``: e.g. :func:`shuffled_floor`'s effect)."""
    return _fit(curve, "power", d_min, d_max, offset)[0]


def fit_mi_exponential(curve: MutualInformation, d_min: int = 1, d_max: int | None = None, offset: float = 0.0) -> DecayFit:
    """``I(d) - offset ~ A exp(-d / xi)``: slope of ``log(I - offset)`` on ``d``; ``rate`` is ``1 / xi``."""
    return _fit(curve, "exponential", d_min, d_max, offset)[0]


@dataclass(frozen=True)
class DecayComparison:
    """Power law against exponential on the same distances (both two-parameter lines in ``log I``).

    Attributes:
        power, exponential: the two fits.
        rss_difference: exponential's rss minus the power law's, with its jackknife interval:
            above 0 the power law fits ``log I`` better.
        better: ``"power"``, ``"exponential"``, or ``"undecided"`` when the interval holds 0.
    """

    power: DecayFit
    exponential: DecayFit
    rss_difference: Interval
    better: str


def compare_decays(curve: MutualInformation, d_min: int = 1, d_max: int | None = None, offset: float = 0.0) -> DecayComparison:
    """Which of a power law and an exponential fits ``log(I(d) - offset)`` better over ``[d_min, d_max]``, by residuals."""
    power, rss_p = _fit(curve, "power", d_min, d_max, offset)
    expo, rss_e = _fit(curve, "exponential", d_min, d_max, offset)
    diff = _jackknife_interval(expo.rss - power.rss, rss_e - rss_p, curve.level)
    better = "power" if diff.low > 0 else "exponential" if diff.high < 0 else "undecided"
    return DecayComparison(power, expo, diff, better)


def retention_curve(timescales: np.ndarray, distances: np.ndarray | Sequence[int]) -> np.ndarray:
    """``(D,)``: the mean over units of ``exp(-d / T_u)``, what a layer of units with timescales
    ``T_u`` ``(hidden,)`` keeps of a word after ``d`` steps if each unit's memory decays at its own
    timescale (``T = 0``: nothing). For inverse-gamma timescales (shape ``a``, scale ``s``) it is
    ``(1 + d / s)^-a`` in the limit of many units: a power law, the ICLR paper's reason to
    assign them (the mutual information of language decays as one)."""
    T = np.asarray(timescales, dtype=np.float64)
    d = np.asarray(distances, dtype=np.float64)
    if T.ndim != 1 or not len(T) or (T < 0).any() or np.isnan(T).any():
        raise ValueError("timescales must be a non-empty (hidden,) array of values >= 0")
    with np.errstate(divide="ignore"):
        rate = np.where(T > 0, 1.0 / np.where(T > 0, T, 1.0), np.inf)
    return np.exp(-np.outer(d, rate)).mean(axis=1)


def loglog_exponent(distances: np.ndarray | Sequence[int], values: np.ndarray, d_min: int, d_max: int) -> float:
    """``alpha`` of ``values ~ d^-alpha``: minus the least-squares slope of ``log values`` on ``log d``
    over ``d_min <= d <= d_max`` (positive values only; exact curves such as :func:`retention_curve`)."""
    d, v = np.asarray(distances, dtype=np.float64), np.asarray(values, dtype=np.float64)
    sel = (d >= d_min) & (d <= d_max) & (v > 0)
    if sel.sum() < 2:
        raise ValueError(f"need at least two positive values in d = {d_min}..{d_max}")
    return float(-np.polyfit(np.log(d[sel]), np.log(v[sel]), 1)[0])
