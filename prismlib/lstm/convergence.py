"""Have the models stopped learning, and has the difference a claim is about stopped moving?

A perplexity claim of work B compares models trained for a budget of tokens. Early in
training a difference between two variants measures how fast each learns, not where each
ends (the training log shipped with the official code, ``expected_mts_train_result``, is
the multi-timescale model's, ``PTB_l1_3_4_l2_invgamma.pt``, not a baseline's: validation
409 / 222 / 177 after epochs 1-3 and within 2% of its final value only near epoch 270 of
1000). Two gates, returned as
:class:`prismlib.claims.Gate` objects, decide whether a claim is testable:

* :func:`model_gate`: the model's validation perplexity improved by less than
  ``tolerance`` (a fraction) over the last ``share`` of its budget, read off its
  :class:`LearningCurve`;
* :func:`prismlib.claims.effect_stability_gate`: the claim's contrast at the end against the same
  contrast at half the budget: it moved by at most half the claim's margin, or the
  earlier value lies inside the later interval.

A claim that fails either is ``not testable`` (the gate names say "not converged"), and
the detail says how far the curve or the contrast still moved. :func:`claim_gates` gives
both for one claim, with the extrapolated budget in the detail; :func:`save_learning_curves`
writes every model's curve to ``figures/<profile>/lstm_learning_curves.csv``. :func:`fit_power_law` fits
``valid_ppl(tokens) = a + b * tokens**-c`` to a curve; :meth:`PowerLaw.budget` and
:func:`stable_budget` read off the budget at which each gate *would* pass if the curve
followed the fit: an extrapolation, and labelled so (:func:`extrapolation`).

Shapes: a curve is two aligned ``(n,)`` arrays, training tokens (increasing) and
validation perplexity.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, curve_fit

from prismlib.claims import Gate

SHARE = 0.25
"""Default share of the budget (the last quarter) over which the model gate reads the improvement."""
TOLERANCE = 0.01
"""Default largest relative improvement (1%) over the last ``SHARE`` that still counts as converged."""
FEASIBLE_TOKENS = 1e12
"""The largest budget an extrapolation calls feasible: a trillion tokens, a thousand times the
official code's longest run (1000 epochs of PTB's 929,589 training tokens, 0.93 billion). A
budget beyond it is reported as not within any feasible budget (:func:`extrapolation`)."""
SCALES = (("quadrillion", 1e15), ("trillion", 1e12), ("billion", 1e9), ("million", 1e6))
"""The words :func:`humane_number` writes large numbers with (short scale)."""


@dataclass(frozen=True)
class LearningCurve:
    """Validation perplexity of one model against the training tokens it had seen.

    Attributes:
        tokens: ``(n,)`` training tokens at each point, strictly increasing.
        valid_ppl: ``(n,)`` validation perplexity at each point.
        source: what was evaluated, e.g. ``"first 10000 tokens of PTB valid"``.
    """

    tokens: np.ndarray
    valid_ppl: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        t = np.asarray(self.tokens, dtype=np.float64)
        p = np.asarray(self.valid_ppl, dtype=np.float64)
        if t.ndim != 1 or t.shape != p.shape:
            raise ValueError(f"tokens and valid_ppl must be aligned (n,) arrays, got shapes {t.shape} and {p.shape}")
        if len(t) and (np.diff(t) <= 0).any():
            raise ValueError("a learning curve's tokens must increase strictly")
        if len(t) and (not np.isfinite(p).all() or (p < 1).any()):
            raise ValueError("perplexities must be finite and >= 1")
        object.__setattr__(self, "tokens", t)
        object.__setattr__(self, "valid_ppl", p)

    @property
    def budget(self) -> float:
        """Training tokens at the last point (0 for an empty curve)."""
        return float(self.tokens[-1]) if len(self.tokens) else 0.0

    def at(self, tokens: float) -> float:
        """Perplexity at ``tokens``, interpolated linearly in ``log(tokens)`` between points."""
        if not len(self.tokens) or not self.tokens[0] <= tokens <= self.tokens[-1]:
            raise ValueError(f"{tokens:.4g} tokens lie outside the curve ({self._span()})")
        return float(np.interp(np.log(tokens), np.log(self.tokens), self.valid_ppl))

    def _span(self) -> str:
        return f"{self.tokens[0]:.4g} to {self.tokens[-1]:.4g} tokens" if len(self.tokens) else "no points"


def improvement(curve: LearningCurve, share: float = SHARE) -> float:
    """Relative improvement ``(ppl(start) - ppl(end)) / ppl(start)`` over the last ``share``
    of the curve's budget (``start = (1 - share) * budget``; negative when it got worse)."""
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), got {share}")
    start = (1 - share) * curve.budget
    if len(curve.tokens) < 2 or start < curve.tokens[0]:
        raise ValueError(
            f"the curve ({curve._span()}) does not reach back to {start:.4g} tokens: record points from earlier "
            f"in training (LSTMSettings.curve_every) or use a smaller share"
        )
    first = curve.at(start)
    return (first - curve.valid_ppl[-1]) / first


def model_gate(name: str, curve: LearningCurve | None, share: float = SHARE, tolerance: float = TOLERANCE) -> Gate:
    """Passed when ``name``'s validation perplexity improved by less than ``tolerance``
    over the last ``share`` of its budget (:func:`improvement`).

    A missing curve, or one that does not reach back far enough, fails the gate (a model
    whose learning was not recorded cannot be shown to have finished). The detail says
    how far the curve moved, e.g. ``"valid ppl 182.1 -> 174.3 (-4.3%) over the last 25%
    of 2.1M tokens; allowed 1%"``.
    """
    title = f"converged: {name} improved < {tolerance:.0%} over the last {share:.0%} of its budget"
    if curve is None or len(curve.tokens) < 2:
        return Gate(title, False, f"not converged: no learning curve recorded for {name}")
    try:
        gain = improvement(curve, share)
    except ValueError as err:
        return Gate(title, False, f"not converged: {err}")
    first = curve.at((1 - share) * curve.budget)
    passed = gain < tolerance
    detail = (
        f"{'' if passed else 'not converged: '}valid ppl {first:.1f} -> {curve.valid_ppl[-1]:.1f} ({-gain:+.1%}) over the last "
        f"{share:.0%} of {format_tokens(curve.budget)} tokens; allowed {tolerance:.0%}"
    )
    return Gate(title, passed, detail)


@dataclass(frozen=True)
class PowerLaw:
    """``valid_ppl(tokens) = a + b * tokens**-c`` fitted to a learning curve.

    Attributes:
        a: the asymptote (perplexity after infinitely many tokens); b, c: scale and
        exponent of the decay (both > 0). points: how many curve points were fitted;
        rmse: root mean squared residual in perplexity.
    """

    a: float
    b: float
    c: float
    points: int
    rmse: float

    def __call__(self, tokens: float | np.ndarray) -> np.ndarray | float:
        t = np.asarray(tokens, dtype=np.float64)
        out = self.a + self.b * t ** (-self.c)
        return float(out) if out.ndim == 0 else out

    def improvement(self, budget: float, share: float = SHARE) -> float:
        """:func:`improvement` of the fitted curve at ``budget`` tokens."""
        first = self((1 - share) * budget)
        return float((first - self(budget)) / first)

    def budget(self, share: float = SHARE, tolerance: float = TOLERANCE, start: float = 1.0) -> float:
        """Fewest tokens (at least ``start``) at which the fitted curve passes the model gate;
        ``inf`` if it never does within 1e15 tokens."""
        if self.improvement(start, share) < tolerance:
            return float(start)
        hi = max(start, 1.0) * 2
        while self.improvement(hi, share) >= tolerance:
            hi *= 2
            if hi > 1e15:
                return math.inf
        return float(brentq(lambda t: self.improvement(t, share) - tolerance, hi / 2, hi, rtol=1e-6))

    def __str__(self) -> str:
        return f"{self.a:.1f} + {self.b:.3g} * tokens^-{self.c:.3f}"


def fit_power_law(curve: LearningCurve, skip: float = 0.1) -> PowerLaw:
    """Least-squares fit of ``a + b * tokens**-c`` to the points after the first ``skip``
    share of the budget (the first few hundred steps follow no power law).

    Raises:
        ValueError: fewer than 4 points to fit, or the fit did not converge.
    """
    keep = curve.tokens >= skip * curve.budget
    t, p = curve.tokens[keep], curve.valid_ppl[keep]
    if len(t) < 4:
        raise ValueError(f"a power-law fit needs at least 4 curve points after {skip:.0%} of the budget, got {len(t)}")
    scale = t[-1]
    x = t / scale

    def f(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
        return a + b * x ** (-c)

    lo = float(p.min())
    guess = (0.8 * lo, max(p[0] - 0.8 * lo, 1e-3), 0.5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (a, b, c), _ = curve_fit(f, x, p, p0=guess, bounds=([1.0, 0.0, 1e-3], [lo, np.inf, 5.0]), maxfev=20_000)
    except (RuntimeError, ValueError) as err:
        raise ValueError(f"the power-law fit did not converge: {err}") from err
    rmse = float(np.sqrt(np.mean((f(x, a, b, c) - p) ** 2)))
    return PowerLaw(float(a), float(b * scale**c), float(c), int(len(t)), rmse)


def stable_budget(fit_a: PowerLaw, fit_b: PowerLaw, margin: float, start: float = 1.0) -> float:
    """Fewest tokens ``B >= start`` at which the fitted contrast ``fit_a - fit_b`` moves by
    at most ``margin / 2`` between ``B / 2`` and ``B`` (the effect-stability gate, by the
    fits; the curves are validation perplexities, so this reads the contrast on
    validation, not test). ``inf`` if that does not happen within 1e15 tokens."""
    if margin <= 0:
        return math.inf

    def moved(B: float) -> float:
        return abs((fit_a(B) - fit_b(B)) - (fit_a(B / 2) - fit_b(B / 2))) - margin / 2

    B = max(start, 2.0)
    if moved(B) <= 0:
        return float(B)
    while moved(B) > 0:
        B *= 2
        if B > 1e15:
            return math.inf
    return float(brentq(moved, B / 2, B, rtol=1e-6))


def extrapolation(
    fits: Sequence[PowerLaw | None], trained: float, share: float = SHARE, tolerance: float = TOLERANCE, stable: float | None = None
) -> str:
    """One sentence: the budget at which every model of a claim would pass the model gate
    by its fit (and, with ``stable``, the effect-stability gate), marked as an
    extrapolation, against the ``trained`` tokens."""
    if any(f is None for f in fits) or not fits:
        return "no budget extrapolated (a model has too few curve points for a fit)"
    need = max(f.budget(share, tolerance) for f in fits)  # type: ignore[union-attr]
    if stable is not None:
        need = max(need, stable)
    if not math.isfinite(need):
        return "extrapolation by power-law fits: the gates would not pass within a quadrillion (1e15) tokens, where the search stops"
    what = "the model and effect-stability gates" if stable is not None else "the model gate"
    where = f"about {humane_number(need)} tokens, {humane_number(need / max(trained, 1))} times the {humane_number(trained)} trained"
    if need > FEASIBLE_TOKENS:
        return (
            f"extrapolation by power-law fits: {what} would not pass within any feasible budget "
            f"(only at {where}; feasible: up to {humane_number(FEASIBLE_TOKENS)})"
        )
    return f"extrapolation by power-law fits: {what} would pass at {where}"


def models_gate(curves: Mapping[str, LearningCurve | None], share: float = SHARE, tolerance: float = TOLERANCE) -> Gate:
    """:func:`model_gate` of every model of a claim in one gate: passed when all pass; the
    detail names those that did not and how far each still moved (all of them if all passed)."""
    if not curves:
        raise ValueError("models_gate needs at least one model's curve")
    gates = {name: model_gate(name, c, share, tolerance) for name, c in curves.items()}
    failed = {k: g for k, g in gates.items() if not g.passed}
    shown = failed or gates
    detail = "; ".join(f"{k}: {g.detail.removeprefix('not converged: ')}" for k, g in shown.items())
    title = f"converged: every model improved < {tolerance:.0%} over the last {share:.0%} of its budget"
    return Gate(title, not failed, ("not converged: " if failed else "") + detail)


def humane_number(n: float) -> str:
    """``n`` as a reader says it, to 3 significant digits: ``122 trillion``, ``60.2 million``,
    ``12,300``, ``131``, ``0.5``; from a thousand quadrillion on in e-notation (``1.22e+18``),
    ``inf`` and ``nan`` as themselves."""
    if not math.isfinite(n):
        return str(n)
    r = float(f"{n:.3g}")  # rounded first: 999,999 is "1 million", not "1e+03 thousand"
    for word, size in SCALES:  # largest first: only the largest word can be outgrown
        if abs(r) >= size:
            return f"{r / size:.3g} {word}" if abs(r) < 1000 * size else f"{r:.3g}"
    return f"{r:,.0f}" if abs(r) >= 1000 else f"{r:.3g}"


def format_tokens(n: float | None) -> str:
    """A token count in a few characters: ``12.3M``, ``450k``, ``"None"``."""
    if n is None or not math.isfinite(n):
        return str(n)
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.0f}"
