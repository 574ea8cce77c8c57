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
* :func:`effect_stability_gate`: the claim's contrast at the end against the same
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.optimize import brentq, curve_fit

from prismlib.claims import Gate
from prismlib.paths import figure_dir, locked
from prismlib.stats import Interval

if TYPE_CHECKING:
    from prismlib.lstm.job import TrainedRun

SHARE = 0.25
"""Default share of the budget (the last quarter) over which the model gate reads the improvement."""
TOLERANCE = 0.01
"""Default largest relative improvement (1%) over the last ``SHARE`` that still counts as converged."""


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
        f"{share:.0%} of {_tokens(curve.budget)} tokens; allowed {tolerance:.0%}"
    )
    return Gate(title, passed, detail)


def effect_stability_gate(name: str, later: Interval, earlier: float, margin: float, earlier_tokens: float | None = None) -> Gate:
    """Passed when a claim's contrast has stopped moving between half the budget and the end.

    Args:
        name: the contrast, e.g. ``"ppl(X=70) - ppl(baseline)"``.
        later: the contrast at the end of training with its interval.
        earlier: the same contrast (point estimate) at half the budget.
        margin: the claim's margin: the stated margin of an equivalence or
            non-inferiority claim, else the distance of the effect from the claim's
            threshold (:func:`claim_margin`). The contrast may move by at most half of it.
        earlier_tokens: the training tokens of the earlier measurement (for the detail).

    Passed when ``|later.effect - earlier| <= margin / 2`` or ``earlier`` lies inside
    ``later``'s interval.
    """
    if not math.isfinite(earlier) or not math.isfinite(margin) or margin < 0:
        raise ValueError(f"earlier contrast and margin must be finite (margin >= 0), got {earlier} and {margin}")
    moved = later.effect - earlier
    passed = abs(moved) <= margin / 2 or later.contains(earlier)
    at = f" at {_tokens(earlier_tokens)} tokens" if earlier_tokens else " at half the budget"
    detail = (
        f"{'' if passed else 'not converged: '}contrast {earlier:+.2f}{at} -> {later.effect:+.2f} "
        f"[{later.low:+.2f}, {later.high:+.2f}] at the end: moved {moved:+.2f}, allowed {margin / 2:.2f} (half the margin "
        f"{margin:.2f}) or inside the final interval"
    )
    return Gate(f"stable: {name} moved <= half its margin since half the budget", passed, detail)


def claim_margin(effect: float, threshold: float = 0.0, stated: float | None = None) -> float:
    """The margin the effect-stability gate halves: ``stated`` (an equivalence or
    non-inferiority margin) where the claim gives one, else ``|effect - threshold|``."""
    return abs(stated) if stated is not None else abs(effect - threshold)


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
        return "extrapolation by power-law fits: the gates would not pass within 1e15 tokens"
    what = "the model and effect-stability gates" if stable is not None else "the model gate"
    return (
        f"extrapolation by power-law fits: {what} would pass at about {_tokens(need)} tokens "
        f"({need / max(trained, 1):.1f}x the {_tokens(trained)} trained)"
    )


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


def _fit_or_none(curve: LearningCurve | None) -> PowerLaw | None:
    if curve is None:
        return None
    try:
        return fit_power_law(curve)
    except ValueError:
        return None


def claim_gates(
    runs: Mapping[str, Sequence[TrainedRun]],
    contrast: str,
    later: Interval,
    earlier: float | None,
    margin: float,
    pair: tuple[str, str] | None = None,
    share: float = SHARE,
    tolerance: float = TOLERANCE,
) -> tuple[Gate, Gate]:
    """The model gate and the effect-stability gate of one work-B perplexity claim.

    Args:
        runs: model name -> its trained runs (every seed) that the claim compares.
        contrast: what the claim's test measures, e.g. ``"ppl(X=70) - ppl(baseline)"``.
        later: that contrast at the end of training, with its interval.
        earlier: the same contrast computed from the runs' half-budget test NLL
            (:func:`prismlib.lstm.seed_means` with ``at="half"``); ``None`` when a run has
            no snapshot (trained before they were kept): the stability gate fails.
        margin: the claim's margin (:func:`claim_margin`).
        pair: the two models of the contrast (keys of ``runs``): the stability budget is
            then extrapolated from their fits too (each model's first seed).

    Returns:
        ``(model gate, stability gate)``; a failed gate's detail ends with the budget at
        which both would pass by power-law fits of the curves, marked as an extrapolation.
    """
    curves = {f"{name} seed {r.spec.seed}": r.curve for name, rs in runs.items() for r in rs}
    fits = {k: _fit_or_none(c) for k, c in curves.items()}
    trained = max((c.budget for c in curves.values() if c is not None), default=0.0)
    stable = None
    if pair is not None:
        mean_fit = {name: [fits[f"{name} seed {r.spec.seed}"] for r in runs[name]] for name in pair}
        if all(f is not None for fs in mean_fit.values() for f in fs):
            a, b = (mean_fit[name][0] for name in pair)  # the first seed's fits
            stable = stable_budget(a, b, margin)  # type: ignore[arg-type]
    note = extrapolation(list(fits.values()), trained, share, tolerance, stable)
    model = models_gate(curves, share, tolerance)
    if earlier is None:
        stability = Gate(
            f"stable: {contrast} moved <= half its margin since half the budget", False,
            "not converged: no test NLL stored at half the budget (runs trained before snapshots were kept); retrain",
        )  # fmt: skip
    else:
        stability = effect_stability_gate(contrast, later, earlier, margin)
    return tuple(g if g.passed else Gate(g.name, False, f"{g.detail}; {note}") for g in (model, stability))  # type: ignore[return-value]


CURVES_TABLE = "lstm_learning_curves"
"""Name of the learning-curve table under ``figures/<profile>/`` (``.csv``)."""
CURVE_COLUMNS = ("model", "seed", "tokens", "valid_ppl")


def curves_frame(runs: Mapping[object, TrainedRun]) -> pd.DataFrame:
    """Long table of every run's learning curve: ``model`` (label), ``seed``, ``tokens``,
    ``valid_ppl`` (runs without a curve contribute no rows)."""
    rows = []
    for run in runs.values():
        c = run.curve
        if c is None:
            continue
        rows += [{"model": run.spec.label, "seed": run.spec.seed, "tokens": int(t), "valid_ppl": float(v)}
                 for t, v in zip(c.tokens, c.valid_ppl)]  # fmt: skip
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def save_learning_curves(runs: Mapping[object, TrainedRun], profile: str) -> pd.DataFrame:
    """Merge the curves of ``runs`` into ``figures/<profile>/lstm_learning_curves.csv``.

    Rows of the models (label and seed) in ``runs`` replace their earlier rows; other
    models' rows stay, so notebooks 05-07 each add theirs. Returns the whole table."""
    new = curves_frame(runs)
    csv = figure_dir(profile) / f"{CURVES_TABLE}.csv"
    with locked(csv):
        if csv.exists():
            old = pd.read_csv(csv)
            ours = set(zip(new.model, new.seed))
            old = old[[(m, s) not in ours for m, s in zip(old.model, old.seed)]]
            new = pd.concat([old, new], ignore_index=True)
        new = new.sort_values(["model", "seed", "tokens"], kind="stable").reset_index(drop=True)
        new.to_csv(csv, index=False)
    return new


def _tokens(n: float | None) -> str:
    if n is None or not math.isfinite(n):
        return str(n)
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.0f}"


def plot_learning_curves(ax, runs: Mapping[object, TrainedRun], label: Callable[[object], str], title: str = "") -> None:
    """Draw every run's learning curve on ``ax``: validation perplexity (log axis) against
    training tokens, one colour per model (``label(spec)``), the seeds of a model in the
    same colour; the last quarter of the budget (the model gate's window) shaded. Runs of
    the annealed schedule mark each learning-rate decay with a dot and their end with a
    cross (stopped by rule) or a square (at the cap, or did not learn); no window is shaded."""
    colours: dict[str, str] = {}
    budget, annealed = 0.0, False
    for spec, run in runs.items():
        c = run.curve
        if c is None:
            continue
        name = label(spec)
        first = name not in colours
        colours.setdefault(name, f"C{len(colours) % 10}")
        ax.plot(c.tokens, c.valid_ppl, color=colours[name], lw=1.2, alpha=0.85, label=name if first else None)
        budget = max(budget, c.budget)
        state = getattr(run.history, "anneal", None)
        if state is not None and len(c.tokens) >= state.rounds:
            annealed = True
            at = [r - 1 for r in state.decayed_at]
            ax.plot(c.tokens[at], c.valid_ppl[at], "o", ms=3.5, color=colours[name])
            ax.plot(c.tokens[-1], c.valid_ppl[-1], "x" if state.converged else "s", ms=6, color=colours[name])
    if budget and not annealed:
        ax.axvspan((1 - SHARE) * budget, budget, color="0.92", zorder=0)
    source = "full split" if annealed else "curve subset"
    key = "dots: rate decays; x: stopped by rule; square: at its cap" if annealed else f"shaded: the model gate's last {SHARE:.0%}"
    ax.set(yscale="log", xlabel="training tokens", ylabel=f"validation perplexity ({source})",
           title=f"{title}\n({key})" if title else f"({key})")  # fmt: skip
    ax.legend(fontsize=7)
