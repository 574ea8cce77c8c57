"""The ICLR 2021 version's first empirical claims about timescales, from the forget gates.

**A standard LSTM learns inverse-gamma timescales.** The paper derives that power-law memory
needs unit timescales distributed as an inverse gamma and reports that "LSTM language models
trained on natural English text learn to approximate this theoretical distribution". Here each
trained baseline's layer-2 timescales ``T = 1 / (1 - sigmoid(b_f))`` (the ``"logit"``
convention of :mod:`prismlib.lstm.timescales`) are fitted by maximum likelihood (``scipy.stats``,
location fixed at 0) with an inverse gamma and with the two usual two-parameter rivals for a
positive, right-skewed quantity, a log-normal and a gamma (:data:`RIVALS`). The rule, fixed
before the run: the inverse gamma must beat the better-fitting rival by more than
:data:`FIT_MARGIN` nats of log-likelihood per unit (all three have two free parameters, so no
penalty differs), a Vuong-style comparison of non-nested models (:func:`invgamma_advantage`):
the per-unit log-likelihood differences, their mean over units per seed, an interval over units
(resampled within each seed) combined with the spread over seeds. The Kolmogorov-Smirnov
distance of every fit is tabled beside it (:func:`timescale_fits`): how close the best fit is in
absolute terms, which a relative comparison does not say.

**Multi-timescale units keep their assigned timescales.** A fixed forget bias does not fix the
gate: its input and recurrent weights still move it. The timescale a unit shows on PTB test is
read from its mean forget gate ``f`` in the convention its timescale was assigned in (``"exp"``:
``T = -1 / log f``); :func:`timescale_drift` gives the mean over units of
``|log10(T_shown / T_assigned)|``, whose claim is that it stays below ``log10 2``
(:data:`KEEP_FACTOR`: within a factor of 2 on average). The mean gate over-states the decay
rate's timescale (Jensen: ``mean f >= exp(mean log f)``), so a unit shortened by this reading is
shortened at least as much in effect.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from prismlib.claims import Test, with_seeds
from prismlib.stats import LEVEL, N_BOOT, Interval

RIVALS = ("lognorm", "gamma")
"""The alternatives the inverse gamma must beat (``scipy.stats`` names)."""
FIT_MARGIN = 0.05
"""The smallest log-likelihood advantage per unit that matters (nats), fixed before the run: over
the paper's 1150 layer-2 units a likelihood ratio of ``exp(57)``, over our 96 of ``exp(4.8)``."""
KEEP_FACTOR = 2.0
"""A unit keeps its assigned timescale when the one it shows is within this factor of it."""


def fitted_loglik(T: np.ndarray, family: str) -> tuple[tuple[float, ...], np.ndarray]:
    """Maximum-likelihood fit of ``scipy.stats.<family>`` (location 0) to the timescales ``T``
    ``(n,)`` (finite, > 0): its parameters and each unit's log-density ``(n,)``."""
    x = np.asarray(T, dtype=np.float64)
    if x.ndim != 1 or len(x) < 3 or not (np.isfinite(x).all() and (x > 0).all()):
        raise ValueError(f"needs at least 3 finite positive timescales, got shape {x.shape}")
    dist = getattr(sps, family)
    params = tuple(float(p) for p in dist.fit(x, floc=0))
    return params, dist.logpdf(x, *params)


def invgamma_advantage(T: np.ndarray, rivals: Sequence[str] = RIVALS) -> np.ndarray:
    """``(n,)`` per unit: the inverse gamma's log-density minus that of the rival whose total
    log-likelihood is highest (each fitted on all of ``T``)."""
    _, ll = fitted_loglik(T, "invgamma")
    rival = max((fitted_loglik(T, r)[1] for r in rivals), key=lambda v: float(v.sum()))
    return ll - rival


def timescale_fits(T_by_seed: dict[int, np.ndarray], families: Sequence[str] = ("invgamma", *RIVALS)) -> pd.DataFrame:
    """One row per seed and family: the fitted parameters (shape, scale), the log-likelihood, its
    mean per unit and the Kolmogorov-Smirnov distance of the fit."""
    rows = []
    for seed, T in T_by_seed.items():
        for family in families:
            params, ll = fitted_loglik(T, family)
            rows.append(
                {
                    "seed": seed,
                    "family": family,
                    "shape": params[0],
                    "scale": params[-1],
                    "loglik": float(ll.sum()),
                    "per unit": float(ll.mean()),
                    "KS": float(sps.kstest(T, family, params).statistic),
                }
            )
    return pd.DataFrame(rows)


def _seed_mean_interval(per_unit: Sequence[np.ndarray], n_boot: int, seed: int, level: float = LEVEL) -> Interval:
    """The mean over seeds of each seed's mean over units, and its percentile interval with the
    units resampled within each seed (units need not be paired across seeds)."""
    arrays = [np.asarray(v, dtype=np.float64) for v in per_unit]
    if any(len(a) < 2 for a in arrays):
        raise ValueError("every seed needs at least two units")
    rng = np.random.default_rng(seed)
    boot = np.mean([a[rng.integers(0, len(a), (n_boot, len(a)))].mean(axis=1) for a in arrays], axis=0)
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    effect = float(np.mean([a.mean() for a in arrays]))
    return Interval(effect, float(lo), float(hi), min(len(a) for a in arrays), level)


def invgamma_test(T_by_seed: Sequence[np.ndarray], label: str, margin: float = FIT_MARGIN, n_boot: int = N_BOOT, seed: int = 0) -> Test:
    """Claim "the timescales follow an inverse gamma": its log-likelihood per unit beats the better rival's
    by more than ``margin`` (:func:`invgamma_advantage`), averaged over seeds. With two or more
    seeds the interval over units is combined with the spread of the seeds' own means
    (:func:`prismlib.claims.with_seeds`; each seed's mean already carries its units' noise, so
    counting it again is conservative)."""
    adv = [invgamma_advantage(T) for T in T_by_seed]
    test = Test.superiority(_seed_mean_interval(adv, n_boot, seed), margin, label=label)
    return with_seeds(test, [float(a.mean()) for a in adv]) if len(adv) >= 2 else test


def shown_timescales(forget_means: np.ndarray) -> np.ndarray:
    """``(n,)`` the timescale each unit shows, ``-1 / log f`` of its mean forget gate ``f`` (the
    ``"exp"`` convention; ``inf`` at ``f = 1``, 0 at ``f = 0``)."""
    f = np.clip(np.asarray(forget_means, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return -1 / np.log(f)


def timescale_drift(
    assigned: np.ndarray, shown_by_seed: Sequence[np.ndarray], label: str, factor: float = KEEP_FACTOR, n_boot: int = N_BOOT, seed: int = 0
) -> Test:
    """Claim "the units keep their assigned timescales": the mean over units of ``|log10(shown /
    assigned)|`` (seed mean) lies below ``log10(factor)``. Units whose assigned or shown
    timescale is 0 or infinite (the official grid's unit with no memory) are left out. The units
    are the same in every seed (one assignment), so the interval is a bootstrap over units of the
    seed-mean drift, combined with the seeds' spread (:func:`prismlib.claims.with_seeds`) with two
    or more seeds."""
    a = np.asarray(assigned, dtype=np.float64)
    shown = np.stack([np.asarray(s, dtype=np.float64) for s in shown_by_seed])
    if shown.shape[1:] != a.shape:
        raise ValueError(f"shown timescales must be (seeds, {len(a)}), got {shown.shape}")
    ok = np.isfinite(a) & (a > 0) & (np.isfinite(shown) & (shown > 0)).all(axis=0)
    drift = np.abs(np.log10(shown[:, ok] / a[ok]))  # (S, units)
    iv = _seed_mean_interval([drift.mean(axis=0)], n_boot, seed)
    test = Test(iv, -1, float(np.log10(factor)), label)
    return with_seeds(test, drift.mean(axis=1).tolist()) if len(drift) >= 2 else test


def rank_agreement(assigned: np.ndarray, shown: np.ndarray) -> float:
    """Spearman's correlation of the assigned and shown timescales over the units where both are
    finite and > 0."""
    a, s = np.asarray(assigned, dtype=np.float64), np.asarray(shown, dtype=np.float64)
    ok = np.isfinite(a) & (a > 0) & np.isfinite(s) & (s > 0)
    return float(sps.spearmanr(a[ok], s[ok]).statistic)
