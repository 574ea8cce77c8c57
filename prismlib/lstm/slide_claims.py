"""The slides' claims of notebooks 05-08 as tests, with their gates wired in.

A work-B perplexity claim is a set of tests computed from the models' seed means
(:class:`~prismlib.lstm.SeedMeans`) and the gates :class:`~prismlib.lstm.WorkBClaims`
adds to it (model, effect-stability and seeds gates), behind the Kneser-Ney bigram gate.
The tests are given as functions of the seed means (``tests_of``, a
:data:`~prismlib.lstm.verdicts.TestsOf`) because the stability gate recomputes them at an
earlier checkpoint. This module holds those functions for each claim of the notebooks
(experiments 1-4, in the slides' wording) and :func:`perplexity_claim`, which assembles a
claim from them; notebook 08's memory claims get their gates from :class:`MemoryGates`
and their tests, trained effect beside its excess over the untrained control, from
:func:`controlled_effect` and :func:`controlled_tests`.

Every contrast is a paired bootstrap over 100-token chunks of PTB test
(:func:`~prismlib.lstm.perplexity_difference`, :func:`~prismlib.lstm.perplexity_contrast`);
a test's label is the contrast it measures, as the claims table prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from prismlib.claims import Claim, Gate, Test
from prismlib.lstm.ablation import control_excess, decay_slopes
from prismlib.lstm.chunks import NLL, ChunkNLL
from prismlib.lstm.evaluation import (
    SeedMeans,
    bin_log_ratio_contrast,
    frequency_bins,
    perplexity_contrast,
    perplexity_difference,
)
from prismlib.lstm.verdicts import TestsOf, WorkBClaims, converged_gate
from prismlib.stats import Interval, mean_interval


def perplexity_claim(
    notebook: str,
    text: str,
    paper: str,
    checks: WorkBClaims,
    models: Sequence[Hashable],
    tests_of: TestsOf,
    bigram_gate: Gate,
    seed_level: Sequence[Test] = (),
    unit: str = "ppl",
    relative: bool = False,
) -> Claim:
    """A work-B perplexity claim: ``tests_of`` on the final seed means, then ``seed_level``
    (Welch tests over seeds, :meth:`WorkBClaims.seed_test`); gates: ``bigram_gate`` (the
    baseline clearly below the Kneser-Ney bigram, :func:`prismlib.lstm.bigram.beats_bigram`),
    then the model, stability and seeds gates of :meth:`WorkBClaims.gates` over ``models``.

    Args:
        notebook: the notebook that tests it (``"06"``).
        text: the claim as tested here, with our numbers; ``paper``: what the slides state.
        checks: the notebook's runs grouped by model.
        models: the keys of ``checks`` the claim reads (the reference included where a
            test uses it).
        unit: the tests' unit; ``relative``: their effects are shares of a perplexity
            (log ratios, e.g. :func:`rare_words`), which the seeds rule reads as such
            (:meth:`WorkBClaims.gates`).
    """
    tests = tuple(tests_of(checks.end)) + tuple(seed_level)
    return Claim(notebook, text, paper, tests, (bigram_gate, *checks.gates(models, tests_of, relative)), unit)


def equivalent(models: Sequence[Hashable], margin: float) -> TestsOf:
    """Experiment 1's "not affected": each of ``models`` within ``±margin`` perplexity of the
    reference (an equivalence test of ``ppl(model) - ppl(baseline)``)."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return tuple(Test.equivalence(m.delta(k), margin, f"ppl({k}) - ppl(baseline)") for k in models)

    return tests


def seed_equivalent(checks: WorkBClaims, models: Sequence[Hashable], margin: float) -> tuple[Test, ...]:
    """:func:`equivalent` over seeds: Welch's interval of each model against the reference,
    as an equivalence test with ``margin``; empty for a model with fewer than two seeds."""
    return tuple(Test.equivalence(t.interval, margin, t.label) for k in models for t in checks.seed_test(k))


def rises(variant: str, Ts: Sequence[int] = (20, 70, 200)) -> TestsOf:
    """Experiment 2's "a T-dependent pattern": the perplexity of the fixed ``variant`` rises
    with T, every step ``Ts[i] -> Ts[i + 1]`` (keys ``(variant, T)``)."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return tuple(
            Test(perplexity_difference(m.nll[(variant, b)], m.nll[(variant, a)]), +1, 0.0, f"ppl({variant} T={b}) - ppl(T={a})")
            for a, b in pairwise(Ts)
        )

    return tests


def first_layer_worst(m: SeedMeans, Ts: Sequence[int] = (20, 70)) -> tuple[Test, ...]:
    """Experiment 3's "a small timescale in the first layer works best": at each T, the
    first-layer-longest model (``("layerwise", T)``) minus the worse of the middle- and
    the last-layer-longest (taken per resample) is above 0."""
    return tuple(
        Test(
            perplexity_contrast(m.nll[("layerwise", T)], [m.nll[("middle", T)], m.nll[("inverse", T)]], against="worst"),
            +1,
            0.0,
            f"ppl(first longest) - worse of (middle, last), T={T}",
        )
        for T in Ts
    )


def no_harm(model: Hashable, margin: float, label: str) -> TestsOf:
    """Non-inferiority: ``ppl(model) - ppl(reference)`` below ``margin``; ``label`` names it."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return (Test(m.delta(model), -1, margin, label),)

    return tests


def layer2_key(spec: Any) -> str:
    """Experiment 4's model key of a :class:`~prismlib.lstm.RunSpec`: ``"layer2 X=20"`` for
    a fixed layer-2 value, the variant's name otherwise (``"baseline"``, ``"pareto"``)."""
    return spec.variant if spec.variant != "layer2" else f"layer2 X={spec.T:g}"


def layer2_short(key: str) -> str:
    """The key without ``"layer2 "`` (``"X=20"``): how experiment 4's figure and labels name it."""
    return key.replace("layer2 ", "")


def beats_baseline(*models: str) -> TestsOf:
    """Each of ``models`` below the reference: ``ppl(model) - ppl(baseline) < 0``."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return tuple(Test(m.delta(k), -1, 0.0, f"ppl({layer2_short(k)}) - ppl(baseline)") for k in models)

    return tests


def pareto_best(m: SeedMeans) -> tuple[Test, ...]:
    """Experiment 4's "Pareto is the best mixture": Pareto minus the better of MOD5 and MOD8
    (taken per resample) below 0."""
    against = perplexity_contrast(m.nll["pareto"], [m.nll["mod5"], m.nll["mod8"]], against="best")
    return (Test(against, -1, 0.0, "ppl(Pareto, seed mean) - better of (MOD5, MOD8)"),)


def x70_worst(fixed: Sequence[str]) -> TestsOf:
    """Experiment 4's "X = 70 is the worst": ``"layer2 X=70"`` minus the worst of the other
    keys of ``fixed`` (the trained fixed layer-2 values, taken per resample) above 0."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        others = [m.nll[k] for k in fixed if k != "layer2 X=70"]
        return (Test(perplexity_contrast(m.nll["layer2 X=70"], others, against="worst"), +1, 0.0, "ppl(X=70) - worst of the other X"),)

    return tests


RARE_MARGIN = 0.01
"""Smallest difference of relative gains (log ratio, nats per token) that :func:`rare_words`
counts: 1% of a bin's perplexity. Under half the ICLR version's whole-test gain (57.58 against
58.98, a log ratio of 0.024), so a concentration on rare words of the size of the gain itself
passes; fixed before any run, not fitted to one."""

RARE_BIN, FREQUENT_BIN = "<100", ">10k"
"""The bins :func:`rare_words` contrasts (labels of :data:`~prismlib.lstm.FREQUENCY_BINS`):
the rarest and the most frequent words, as notebook 10's routing claim does."""


def _binned(nll: NLL, streams: Sequence[np.ndarray], train_counts: np.ndarray) -> ChunkNLL:
    """``nll`` as chunk sums with per-bin sums: a :class:`~prismlib.lstm.ChunkNLL` as it is (it
    carries its bins, or raises :class:`~prismlib.lstm.MissingBins` when a bin is asked for), a
    per-token NLL binned by the stream of its length (:func:`_bins_of`)."""
    if isinstance(nll, ChunkNLL):
        return nll
    return ChunkNLL.of(nll, _bins_of(np.shape(nll)[-1], streams, train_counts))


def _bins_of(n: int, streams: Sequence[np.ndarray], train_counts: np.ndarray) -> np.ndarray:
    """Frequency-bin labels ``(n,)`` of the one stream of ``streams`` that is ``n`` tokens long
    (a claim's tests read test NLL; the stability gate of annealed runs validation NLL)."""
    fits = [s for s in streams if len(s) == n]
    if not fits:
        raise ValueError(f"no token stream of {n} tokens among {[len(s) for s in streams]}; pass the ids the NLL scores")
    if any(not np.array_equal(f, fits[0]) for f in fits[1:]):
        raise ValueError(f"two different token streams are {n} tokens long; cannot tell which the NLL scores")
    return frequency_bins(fits[0], train_counts)


def bin_log_gap(ids: np.ndarray | Sequence[np.ndarray], train_counts: np.ndarray) -> Callable[[NLL], float]:
    """One model's ``log ppl(frequent bin) - log ppl(rare bin)`` as a function of its NLL (one
    seed's :class:`~prismlib.lstm.ChunkNLL` with its bins, or per-token ``(n,)``): the mean NLL
    over the >10k bin's tokens minus over the <100 bin's; the
    difference of two models' gaps is the difference of their relative gains that
    :func:`rare_words` tests, so Welch's interval over seeds of this gap is its seed-level test
    (:meth:`WorkBClaims.seed_test` with ``statistic``).

    Args:
        ids: the token stream(s) the NLL may score (``(n,)`` each); ``train_counts``: ``(vocab,)``.
    """
    streams = [ids] if isinstance(ids, np.ndarray) else list(ids)

    def gap(nll: NLL) -> float:
        frequent, rare = (_binned(nll, streams, train_counts).bin(b) for b in (FREQUENT_BIN, RARE_BIN))
        return float(frequent.sums.sum() / frequent.counts.sum() - rare.sums.sum() / rare.counts.sum())

    return gap


def rare_words(
    ids: np.ndarray | Sequence[np.ndarray],
    train_counts: np.ndarray,
    model: str = "official",
    reference: str = "baseline",
    margin: float = RARE_MARGIN,
) -> TestsOf:
    """The ICLR version's "the gain is largest for rare words": the relative gain of ``model``
    over ``reference`` on the target words seen < 100 times in PTB train minus its relative
    gain on those seen > 10k times, above ``margin`` (:data:`RARE_MARGIN`).

    A bin's relative gain is the log ratio ``log(ppl_reference / ppl_model)`` of the bin's
    perplexities (its mean NLL difference, nats per token; ``1 - ppl_model / ppl_reference``
    for small gains). The log ratio is symmetric (a model twice as bad and one twice as good
    are equally far from 0) and a difference of two of them is a difference of mean NLLs, where
    ``1 - ratio`` is bounded above by 1 and unbounded below, which distorts a difference of bins
    whose perplexities differ by orders of magnitude; notebook 10's routing claim uses the same
    unit. The interval is a paired bootstrap over the same 100-token chunks for both bins and
    models (:func:`prismlib.lstm.bin_log_ratio_contrast`, seed means).

    Args:
        ids: the token stream(s) the NLL may score, ``(n,)`` each: PTB test, and the
            validation tokens the stability gate of annealed runs reads (each per-token NLL is
            binned by the stream of its length; a :class:`~prismlib.lstm.ChunkNLL` carries its
            bins, and one without them raises :class:`~prismlib.lstm.MissingBins`: a run
            record's validation snapshots keep none); ``train_counts``: ``(vocab,)`` counts in PTB train.
    """
    streams = [ids] if isinstance(ids, np.ndarray) else list(ids)

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        a, b = (_binned(m.nll[k], streams, train_counts) for k in (model, reference))
        iv = bin_log_ratio_contrast(a, b, FREQUENT_BIN, RARE_BIN)  # log ratio(>10k) - log ratio(<100)
        label = f"gain({RARE_BIN}) - gain({FREQUENT_BIN}), gain = log(ppl({reference}) / ppl({model}))"
        return (Test.superiority(iv, margin, +1, label),)

    return tests


@dataclass(frozen=True)
class MemoryGates:
    """The gates of notebook 08's memory claims, for the models a claim reads.

    Calling it with model labels gives: the baseline clearly below the Kneser-Ney bigram
    (``bigram``), the model gate of those models' runs (:func:`converged_gate`), each
    model's context-use gate, and the sanity gate that every slope decays (``decays``).

    Attributes:
        bigram: :func:`prismlib.lstm.bigram.beats_bigram` of the baseline.
        runs: model label -> its :class:`~prismlib.lstm.TrainedRun`.
        uses_context: model label -> :func:`prismlib.lstm.context_use_gate`.
        decays: the cell-state change decays with distance, every model and layer.
        share, tolerance: the model gate's (the profile's ``converge_share`` and ``converge_tolerance``).
    """

    bigram: Gate
    runs: Mapping[str, Any]
    uses_context: Mapping[str, Gate]
    decays: Gate
    share: float
    tolerance: float

    def __call__(self, models: Sequence[str]) -> tuple[Gate, ...]:
        converged = converged_gate({k: self.runs[k] for k in models}, self.share, self.tolerance)
        return (self.bigram, converged, *(self.uses_context[k] for k in models), self.decays)


def layer_slope(changes: np.ndarray, layer: int, fit: tuple[int, int]) -> float:
    """Decay slope of one layer's mean cell-state change over the distances ``fit``.

    Args:
        changes: ``(n_contexts, n_layers, length)`` (:func:`prismlib.lstm.ablation.cell_state_change`).
        layer: 0-based.
    """
    return float(decay_slopes(changes[:, layer : layer + 1], fit)[0])


def slope_gap(fit: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> Callable[[Sequence[np.ndarray]], float]:
    """The statistic "slope of ``a`` minus slope of ``b``" over a list of models' changes,
    ``a`` and ``b`` as ``(index in the list, layer)``: e.g. ``slope_gap(fit, (0, 0), (1, 0))``
    compares layer 1 of two models, ``slope_gap(fit, (0, 2), (0, 0))`` two layers of one."""

    def statistic(cs: Sequence[np.ndarray]) -> float:
        return layer_slope(cs[a[0]], a[1], fit) - layer_slope(cs[b[0]], b[1], fit)

    return statistic


def run_name(spec: Any) -> str:
    """A memory model's name with its seed, ``"pareto (fixed) seed 2"`` (as
    :attr:`~prismlib.lstm.TrainedRun.label`): notebook 08 keys every model by it, so that the
    seeds of one spec never overwrite each other."""
    return f"{spec.label} seed {spec.seed}"


def range_gap(fit: tuple[int, int], layer_a: int, layer_b: int) -> Callable[[Sequence[np.ndarray]], float]:
    """The statistic "range (max - min) over the models of ``layer_a``'s slopes minus that of
    ``layer_b``'s" over a list of models' changes (the one of
    :func:`prismlib.lstm.ablation.slope_range_difference`), for :func:`controlled_effect`."""

    def statistic(cs: Sequence[np.ndarray]) -> float:
        a = [layer_slope(c, layer_a, fit) for c in cs]
        b = [layer_slope(c, layer_b, fit) for c in cs]
        return float(np.ptp(a) - np.ptp(b))

    return statistic


@dataclass(frozen=True)
class ControlledEffect:
    """A memory statistic of trained models (``trained``), of their untrained controls with the
    same fixed biases (``control``) and the excess ``trained - control``: three intervals over
    the same resampled contexts (:func:`prismlib.lstm.ablation.control_excess`)."""

    trained: Interval
    control: Interval
    excess: Interval

    def tests(self, label: str, sign: int = 1) -> tuple[Test, Test]:
        """The trained effect beyond 0 on the claimed side (``sign``) and the excess over the
        untrained control on the same side: a claim built on both is ``held`` only where
        training, not the fixed biases alone, produced the effect."""
        return Test(self.trained, sign, 0.0, label), Test(self.excess, sign, 0.0, f"{label}: trained - untrained")

    def accounts(self, sign: int = 1) -> bool:
        """Whether the control accounts for the effect: the excess is not clearly on the claimed side."""
        return not (self.excess.low > 0 if sign > 0 else self.excess.high < 0)


def controlled_effect(
    models: Sequence[str],
    changes: Mapping[str, np.ndarray],
    controls: Mapping[str, np.ndarray],
    statistic: Callable[[list[np.ndarray]], float],
) -> ControlledEffect:
    """``statistic`` of the trained ``models``' cell-state changes, of their untrained controls
    (same specs and fixed biases, random other weights, same contexts) and the excess, paired
    over the contexts (:func:`prismlib.lstm.ablation.control_excess`).

    Args:
        changes, controls: model name -> ``(n_contexts, n_layers, length)``.
    """
    return ControlledEffect(*control_excess([changes[k] for k in models], [controls[k] for k in models], statistic))


def controlled_tests(effects: Mapping[int, ControlledEffect], label: str, sign: int = 1) -> tuple[Test, ...]:
    """The tests of a memory claim over seeds: for every seed (key of ``effects``) the trained
    effect and its excess over the untrained control (:meth:`ControlledEffect.tests`, each over
    that seed's contexts); with two or more seeds also the seed-level tests, Student's interval
    over the seeds' point estimates of each (:func:`prismlib.stats.mean_interval`, an interval
    over runs). All must hold for ``held``."""
    tests: list[Test] = []
    for seed, e in effects.items():
        tests += [Test(t.interval, t.sign, t.threshold, f"{t.label} (seed {seed})") for t in e.tests(label, sign)]
    if len(effects) >= 2:
        for what, values in (
            ("", [e.trained.effect for e in effects.values()]),
            (": trained - untrained", [e.excess.effect for e in effects.values()]),
        ):
            tests.append(Test(mean_interval(values), sign, 0.0, f"{label}{what}, mean over {len(values)} seeds"))
    return tuple(tests)


def control_note(effects: Mapping[int, ControlledEffect], sign: int = 1) -> str:
    """The claim row's ``control`` text: per seed, the untrained control's effect, the excess and
    whether the control accounts for the effect."""
    return "untrained model with the same fixed biases: " + "; ".join(
        f"seed {seed}: control {e.control}, trained - control {e.excess} "
        f"({'accounts for the effect' if e.accounts(sign) else 'does not account for it'})"
        for seed, e in effects.items()
    )


def slope_range(slopes: Mapping[tuple[str, int], Interval], models: Sequence[str], layer: int) -> float:
    """Max minus min over ``models`` of the decay slope of ``layer`` (0-based); ``slopes``:
    ``(model, layer) -> interval`` (:func:`prismlib.lstm.ablation.slope_interval`)."""
    v = [slopes[(k, layer)].effect for k in models]
    return max(v) - min(v)
