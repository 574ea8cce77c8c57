"""Projecting a pilot's curve to a budget: how much would a run gain over the unigram model if
it trained for the budget's tokens?

Two fits of the held-out curve after its first ``skip`` share of tokens (the warm-up follows
neither), both read at the tokens the measured tokens/s buys in the budget:

- :func:`fit_log_linear`, ``gain = a + b * ln(tokens)`` (a constant gain per doubling): two
  parameters, stable on a short curve, and the shape the issue's probe measured (about +0.26
  to +0.30 nats per doubling between 0.7M and 4M tokens). When returns diminish faster than
  that it overestimates: read it as the optimistic projection.
- the power law of :func:`prismlib.lstm.fit_power_law` on the held-out *perplexity*
  ``exp(loss) = a + b * tokens^-c`` (a floor ``a`` the loss never passes): the saturating
  shape of language-model learning curves, three parameters, ill-determined on a short
  curve; where it converges, read it as the cautious projection.

:func:`project` gives both and the smaller (the one a rule should read). Neither knows what a
learning-rate decay at the end adds (usually a little more gain): that is a margin in the
projection's favour, not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from prismlib.lstm import LearningCurve, fit_power_law


@dataclass(frozen=True)
class LogLinear:
    """``gain(tokens) = a + b * ln(tokens)``; ``per_doubling`` = ``b ln 2``; points fitted."""

    a: float
    b: float
    points: int

    def __call__(self, tokens: float) -> float:
        return self.a + self.b * math.log(tokens)

    @property
    def per_doubling(self) -> float:
        return self.b * math.log(2)


def fit_log_linear(tokens: Sequence[float] | np.ndarray, gain: Sequence[float] | np.ndarray, skip: float = 0.25) -> LogLinear:
    """Least-squares fit of ``gain = a + b ln(tokens)`` to the points after ``skip`` of the tokens.

    Raises:
        ValueError: fewer than 3 points to fit.
    """
    t, g = np.asarray(tokens, dtype=np.float64), np.asarray(gain, dtype=np.float64)
    keep = (t > 0) & (t >= skip * t.max()) & np.isfinite(g)
    if keep.sum() < 3:
        raise ValueError(f"a log-linear fit needs at least 3 curve points after {skip:.0%} of the tokens, got {int(keep.sum())}")
    b, a = np.polyfit(np.log(t[keep]), g[keep], 1)
    return LogLinear(float(a), float(b), int(keep.sum()))


@dataclass(frozen=True)
class Projection:
    """A curve projected to a budget.

    Attributes:
        budget_tokens: the tokens the budget buys (tokens/s x seconds).
        log_linear: the gain at ``budget_tokens`` by :func:`fit_log_linear` (nan: no fit).
        per_doubling: the log-linear fit's gain per doubling of tokens.
        power_law: the gain there by the power law on perplexity (nan: no fit / not converged).
        measured: the last measured gain and the tokens it was measured at.
    """

    budget_tokens: float
    log_linear: float
    per_doubling: float
    power_law: float
    measured: tuple[float, float]

    @property
    def cautious(self) -> float:
        """The smaller of the two projections (the one that converged, if only one did)."""
        vals = [v for v in (self.log_linear, self.power_law) if math.isfinite(v)]
        return min(vals) if vals else math.nan


def project(
    tokens: Sequence[float], heldout_loss: Sequence[float], unigram_loss: float, budget_tokens: float, skip: float = 0.25
) -> Projection:
    """Both fits of a held-out curve read at ``budget_tokens`` (module docstring).

    Args:
        tokens: ``(n,)`` training tokens at each check (increasing); heldout_loss: ``(n,)`` nats.
        unigram_loss: the unigram loss on the same positions (constant over the curve).
        budget_tokens: where to read the fits.
    """
    t = np.asarray(tokens, dtype=np.float64)
    loss = np.asarray(heldout_loss, dtype=np.float64)
    ok = (t > 0) & np.isfinite(loss)
    t, loss = t[ok], loss[ok]
    gain = unigram_loss - loss
    try:
        ll = fit_log_linear(t, gain, skip)
        log_linear, per_doubling = ll(budget_tokens), ll.per_doubling
    except ValueError:
        log_linear = per_doubling = math.nan
    try:
        pl = fit_power_law(LearningCurve(t, np.exp(loss)), skip=skip)
        power_law = unigram_loss - math.log(float(pl(budget_tokens)))
    except ValueError:
        power_law = math.nan
    measured = (float(gain[-1]), float(t[-1])) if len(t) else (math.nan, 0.0)
    return Projection(float(budget_tokens), float(log_linear), float(per_doubling), float(power_law), measured)
