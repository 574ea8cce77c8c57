"""What every work-B perplexity claim carries besides its tests: convergence and seeds.

A claim of notebooks 05-07 compares trained models on PTB test. Its tests are paired
chunk bootstraps of seed-mean perplexities (:mod:`prismlib.lstm.evaluation`); this module
adds what decides whether those tests say anything about the slides' claim:

* the **model gate** (:func:`prismlib.lstm.models_gate`): every run the claim reads
  improved by less than the profile's tolerance over the last share of its budget; for
  runs of the annealed schedule (:mod:`prismlib.anneal`): every run *stopped by its
  rule*, not at its cap (a run that never beat the bigram "did not learn");
* the **effect-stability gate**: each of the claim's tests computed again from the test
  NLL stored at half the budget (annealed runs: on *validation*, at the last two
  post-decay checkpoints; test is never read for it); every contrast moved by at most half
  its margin, or the earlier value lies inside the later interval
  (:func:`prismlib.claims.effect_stability_gate`);
* the **seeds rule**: a test whose effect is under :data:`SMALL_EFFECT` of the reference's
  perplexity needs at least :data:`MIN_SEEDS` seeds of every model the claim reads.

Each contrast is tested once, on one interval with both sources of variance: the chunk
bootstrap widened by the spread of the seeds' own values (:meth:`WorkBClaims.with_seeds`,
:func:`prismlib.claims.with_seeds`); with one seed of a model it keeps the chunk bootstrap.

A failed gate makes the claim ``not testable``; the detail says how far the curve or the
contrast still moved and, for the convergence gates, the budget at which power-law fits
of the curves would pass (an extrapolation, :func:`prismlib.lstm.extrapolation`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prismlib.anneal import DID_NOT_LEARN, STOPPED_BY_RULE
from prismlib.claims import MIN_SEEDS, Gate, Test, effect_stability_gate, stability_margin, with_seeds
from prismlib.lstm.chunks import NLL, MissingBins
from prismlib.lstm.convergence import (
    SHARE,
    TOLERANCE,
    LearningCurve,
    PowerLaw,
    extrapolation,
    fit_power_law,
    improvement,
    model_gate,
    models_gate,
    stable_budget,
)
from prismlib.lstm.evaluation import SeedMeans, mean_nll, perplexity, seed_means, seed_rows
from prismlib.stats import Interval

if TYPE_CHECKING:
    from prismlib.lstm.claims.doubling import DoublingCheck
    from prismlib.lstm.trained_runs import TrainedRun


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
        margin: the claim's margin (:func:`prismlib.claims.claim_margin`).
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
            f"stable: {contrast} moved <= half its margin since half the budget",
            False,
            "not converged: no test NLL stored at half the budget (runs trained before snapshots were kept); retrain",
        )
    else:
        stability = effect_stability_gate(contrast, later, earlier, margin)
    return tuple(g if g.passed else Gate(g.name, False, f"{g.detail}; {note}") for g in (model, stability))  # type: ignore[return-value]


SMALL_EFFECT = 0.05
"""An effect under this fraction of the reference's perplexity is small: its claim needs seeds."""

TestsOf = Callable[[SeedMeans], Sequence[Test]]
"""A claim's tests as a function of the models' seed means (so they can be recomputed at half the budget)."""


@dataclass
class WorkBClaims:
    """The trained runs of one notebook, grouped by model, at the end and at half the budget.

    Args:
        runs: spec -> :class:`~prismlib.lstm.TrainedRun` (every seed of every model).
        key: the model a spec belongs to (every seed of a model shares its key).
        reference: the key contrasts and the seeds rule refer to (the baseline).
        share, tolerance: the model gate (the profile's ``converge_share`` and
            ``converge_tolerance``).
        doubling: the doubling check of runs on a fixed learning-rate path
            (:func:`prismlib.lstm.doubling_check`): where given, it is the effect-stability
            gate (:meth:`~prismlib.lstm.DoublingCheck.gate`; the last post-decay checkpoints
            of a fixed path say only that its tail settled, not that the path was long enough).

    Attributes:
        end: :class:`~prismlib.lstm.SeedMeans` of the final test NLL.
        half: the same of the test NLL stored at half the budget; ``None`` when a run has
            none (trained before snapshots were kept, or annealed).
        annealed: every run was trained with the annealed schedule.
        stable: the ``(later, earlier)`` seed means the stability gate compares: the final
            and half-budget test NLL, or for annealed runs the validation NLL at the last
            two post-decay checkpoints; ``None`` when a run lacks them.
    """

    runs: Mapping[Any, Any]
    key: Callable[[Any], Hashable]
    reference: Hashable
    share: float = SHARE
    tolerance: float = TOLERANCE
    doubling: DoublingCheck | None = None
    end: SeedMeans = field(init=False)
    half: SeedMeans | None = field(init=False)
    annealed: bool = field(init=False)
    stable: tuple[SeedMeans, SeedMeans] | None = field(init=False)

    def __post_init__(self) -> None:
        runs = dict(self.runs)
        self.end = seed_means(runs, self.key, self.reference)
        self.annealed = bool(runs) and all(getattr(getattr(r, "history", None), "anneal", None) is not None for r in runs.values())
        self.half, self.stable = None, None
        try:
            if self.annealed:
                self.stable = (
                    seed_means(runs, self.key, self.reference, at="valid_end"),
                    seed_means(runs, self.key, self.reference, at="valid_previous"),
                )
            else:
                self.half = seed_means(runs, self.key, self.reference, at="half")
                self.stable = (self.end, self.half)
        except ValueError:
            pass

    def _runs_of(self, models: Sequence[Hashable]) -> dict[str, Any]:
        unknown = [m for m in models if m not in self.end.nll]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; the runs hold {list(self.end.nll)}")
        return {f"{self.key(s)} seed {s.seed}": r for s, r in self.runs.items() if self.key(s) in models}

    def seed_perplexities(self, model: Hashable) -> list[float]:
        """Each seed's own test perplexity of ``model``."""
        return self.seed_values(model, perplexity)

    def seed_values(self, model: Hashable, statistic: Callable[[NLL], float]) -> list[float]:
        """``statistic`` of each seed's own test NLL of ``model`` (its
        :class:`~prismlib.lstm.ChunkNLL`, or per-token ``(n,)``), one value per seed."""
        return [float(statistic(row)) for row in seed_rows(self.end.nll[model])]

    def with_seeds(self, test: Test, a: Hashable, b: Hashable | None = None, statistic: Callable[[NLL], float] | None = None) -> Test:
        """``test`` of the contrast ``a - b`` (``b`` defaults to the reference; a chunk bootstrap
        of the seed means) on the one interval with both sources of variance
        (:func:`prismlib.claims.with_seeds`): the two models trained independently, each seed's
        own ``statistic`` (one seed's test NLL -> a number in the units of ``test``'s effect;
        default its perplexity; e.g. its mean NLL for a log ratio, :func:`prismlib.lstm.bin_log_gap`
        for a difference of two bins' log ratios). ``test`` unchanged when either model has fewer
        than two seeds (the seeds gate of :meth:`gates` then fails the claim where its effect is small)."""
        b = self.reference if b is None else b
        stat = perplexity if statistic is None else statistic
        pa, pb = self.seed_values(a, stat), self.seed_values(b, stat)
        if len(pa) < 2 or len(pb) < 2:
            return test
        return with_seeds(test, pa, pb)

    def gates(
        self, models: Sequence[Hashable], tests_of: TestsOf, relative: bool = False, statistic: Callable[[NLL], float] | None = None
    ) -> tuple[Gate, Gate, Gate]:
        """The model gate, the effect-stability gate and the seeds gate of a claim that reads
        ``models`` (keys; the reference included where a test uses it) and whose
        chunk-bootstrap tests are ``tests_of(self.end)``. ``relative``: the tests' effects
        are already shares of a perplexity (log ratios), so the seeds rule compares them with
        :data:`SMALL_EFFECT` itself rather than with that share of the reference's perplexity.
        ``statistic``: one run's NLL -> the number whose contrast the tests measure, for the
        doubling check (default: the perplexity, or its log where ``relative``)."""
        runs = self._runs_of(models)
        seeds = self._seeds(models, tests_of(self.end), relative)
        if self.doubling is not None:
            stat = statistic if statistic is not None else (mean_nll if relative else perplexity)
            paths = self.doubling.both_paths([s for s in self.runs if self.key(s) in models], self.key, self.reference)
            own = None if paths is None else [d.interval.effect - r.interval.effect for d, r in zip(*(tests_of(p) for p in paths))]
            stability = self.doubling.gate(tests_of(self.end), stat, own)
        else:
            stability = self._stability(tests_of)
        if self.annealed:
            return stopped_by_rule(runs), stability, seeds
        return self._curves_gate(runs), stability, seeds

    def _curves_gate(self, runs: Mapping[str, Any]) -> Gate:
        """The model gate of constant-rate runs: their learning curves, with the budget the
        power-law fits would need where a curve still moved."""
        curves = {name: r.curve for name, r in runs.items()}
        trained = max((c.budget for c in curves.values() if c is not None), default=0.0)
        fits = []
        for c in curves.values():
            try:
                fits.append(None if c is None else fit_power_law(c))
            except ValueError:
                fits.append(None)
        note = extrapolation(fits, trained, self.share, self.tolerance)
        return self._model(curves, note)

    def _model(self, curves: dict[str, Any], note: str) -> Gate:
        """:func:`models_gate`'s verdict, its detail shortened to the run that moved most."""
        name = models_gate(curves, self.share, self.tolerance).name
        per = {k: model_gate(k, c, self.share, self.tolerance) for k, c in curves.items()}

        def moved(k: str) -> float:
            try:
                return improvement(curves[k], self.share)
            except (ValueError, TypeError, AttributeError):
                return math.inf

        failed = [k for k, g in per.items() if not g.passed]
        worst = max(failed or per, key=moved)
        why = per[worst].detail.removeprefix("not converged: ")
        if failed:
            return Gate(name, False, f"not converged: {len(failed)} of {len(per)} runs still improving; most: {worst}, {why}; {note}")
        return Gate(name, True, f"{len(per)} runs; most moved: {worst}, {why}")

    def _stability(self, tests_of: TestsOf) -> Gate:
        since = "the previous post-decay checkpoint (validation)" if self.annealed else "half the budget"
        name = f"stable: every contrast moved <= half its margin since {since}"
        if self.stable is None:
            why = (
                "a run has fewer than two post-decay checkpoints"
                if self.annealed
                else "no test NLL stored at half the budget (runs trained before snapshots were kept); retrain"
            )
            return Gate(name, False, f"not converged: {why}")
        try:
            pairs = list(zip(tests_of(self.stable[0]), tests_of(self.stable[1])))
        except MissingBins as err:
            return Gate(name, False, f"cannot be checked: {err}")
        gates = []
        for later, earlier in pairs:
            moved = abs(later.interval.effect - earlier.interval.effect) / max(stability_margin(later), 1e-12)
            gates.append(
                (moved, later.label, effect_stability_gate(later.label, later.interval, earlier.interval.effect, stability_margin(later)))
            )
        if not gates:
            return Gate(name, True, "no contrast")
        failed = [g for g in gates if not g[2].passed]
        _, label, worst = max(failed or gates, key=lambda g: g[0])  # the contrast that moved most for its margin
        why = f"{label}: {worst.detail.removeprefix('not converged: ')}"
        if failed:
            return Gate(name, False, f"not converged: {len(failed)} of {len(gates)} contrasts moved more; most: {why}")
        return Gate(name, True, f"{len(gates)} contrasts; most moved: {why}")

    def _seeds(self, models: Sequence[Hashable], tests: Sequence[Test], relative: bool = False) -> Gate:
        ref = self.end.perplexity(self.reference)
        bound = SMALL_EFFECT if relative else SMALL_EFFECT * ref
        small = [t for t in tests if abs(t.interval.effect) < bound]
        counts = {m: self.end.seeds(m) for m in models}
        few = {m: n for m, n in counts.items() if n < MIN_SEEDS}
        name = f"seeds: >= {MIN_SEEDS} per model where an effect is under {SMALL_EFFECT:.0%} of the reference's perplexity"
        size = f"{bound:.2f} log ratio" if relative else f"{bound:.1f} ppl"
        if not small:
            return Gate(name, True, f"no effect under {SMALL_EFFECT:.0%} ({size})")
        seeds = ", ".join(f"{m}: {n}" for m, n in counts.items())
        if few:
            return Gate(
                name,
                False,
                f"{small[0].label} = {small[0].interval.effect:+.{3 if relative else 2}f} is under {SMALL_EFFECT:.0%} "
                f"({size}) with seeds {seeds}; {self._seed_cost(few)}",
            )
        return Gate(name, True, f"seeds {seeds}")

    def _seed_cost(self, few: Mapping[Hashable, int]) -> str:
        """What the missing seeds of ``few`` (model -> seeds it has) cost: each missing run at
        the mean training seconds of that model's runs."""
        seconds = 0.0
        for m, n in few.items():
            own = [getattr(getattr(r, "history", None), "seconds", math.nan) for s, r in self.runs.items() if self.key(s) == m]
            seconds += (MIN_SEEDS - n) * (sum(own) / len(own) if own else math.nan)
        runs = sum(MIN_SEEDS - n for n in few.values())
        cost = f"about {seconds / 60:.0f} worker-minutes" if math.isfinite(seconds) else "training time unknown"
        return f"{runs} more runs would test it ({cost}; the profile's -long twin trains them)"


def converged_gate(runs: Mapping[str, Any], share: float = SHARE, tolerance: float = TOLERANCE) -> Gate:
    """The model gate of ``runs`` (name -> :class:`~prismlib.lstm.TrainedRun`), whatever their
    schedule: :func:`stopped_by_rule` for annealed runs, the learning-curve gate
    (:func:`prismlib.lstm.models_gate`, ``share`` and ``tolerance``) otherwise."""
    if runs and all(getattr(getattr(r, "history", None), "anneal", None) is not None for r in runs.values()):
        return stopped_by_rule(runs)
    return models_gate({k: r.curve for k, r in runs.items()}, share, tolerance)


def stopped_by_rule(runs: Mapping[str, Any]) -> Gate:
    """The model gate of annealed runs (name -> :class:`~prismlib.lstm.TrainedRun`): passed when
    every run stopped by its schedule's rule. A run that ended at its cap is ``not
    converged``; one that never beat the bigram on validation ``did not learn``."""
    name = "converged: every run stopped by its schedule's rule (not at its cap)"
    if not runs:
        raise ValueError("stopped_by_rule needs at least one run")
    reasons = {k: r.history.stop_reason for k, r in runs.items()}

    def passes(k: str) -> str:
        h = runs[k].history
        return f"{h.epochs} rounds ({h.tokens / 1e6:.1f}M tokens)"

    unlearned = [k for k, why in reasons.items() if why == DID_NOT_LEARN]
    capped = [k for k, why in reasons.items() if why != STOPPED_BY_RULE and why != DID_NOT_LEARN]
    if unlearned:
        k = unlearned[0]
        return Gate(
            name,
            False,
            f"did not learn: {len(unlearned)} of {len(runs)} runs never beat the bigram on validation "
            f"within their cap, e.g. {k} (best valid {min(runs[k].history.val_ppl):.1f})",
        )
    if capped:
        k = capped[0]
        return Gate(
            name,
            False,
            f"not converged: {len(capped)} of {len(runs)} runs stopped at their cap, e.g. {k} after "
            f"{passes(k)} ({len(runs[k].history.anneal.decayed_at)} decays)",
        )
    last = max(runs, key=lambda k: len(runs[k].history.val_ppl))
    return Gate(name, True, f"{len(runs)} runs stopped by rule; longest: {last} after {passes(last)}")


def interval_row(iv: Interval | None, reference: float) -> str:
    """``"+12.3 [+10.1, +14.6] (+7.5%)"``: a perplexity difference and its share of ``reference``."""
    if iv is None:
        return ""
    return f"{iv.effect:+.1f} [{iv.low:+.1f}, {iv.high:+.1f}] ({iv.effect / reference:+.1%})"
