"""The slides' claims of notebooks 05-08 as tests, with their gates wired in.

A work-B perplexity claim is a set of tests computed from the models' seed means
(:class:`~prismlib.lstm.SeedMeans`) and the gates :class:`~prismlib.lstm.WorkBClaims`
adds to it (model, effect-stability and seeds gates), behind the Kneser-Ney bigram gate.
The tests are given as functions of the seed means (``tests_of``, a
:data:`~prismlib.lstm.verdicts.TestsOf`) because the stability gate recomputes them at an
earlier checkpoint. This module holds those functions for each claim of the notebooks
(experiments 1-4, in the slides' wording) and :func:`perplexity_claim`, which assembles a
claim from them; notebook 08's memory claims get their gates from :class:`MemoryGates`
and :func:`untrained_control`.

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
from prismlib.lstm.ablation import control_excess, control_gate, decay_slopes
from prismlib.lstm.evaluation import SeedMeans, perplexity_by_frequency, perplexity_contrast, perplexity_difference
from prismlib.lstm.verdicts import TestsOf, WorkBClaims, converged_gate
from prismlib.stats import Interval


def perplexity_claim(
    notebook: str,
    text: str,
    paper: str,
    checks: WorkBClaims,
    models: Sequence[Hashable],
    tests_of: TestsOf,
    bigram_gate: Gate,
    seed_level: Sequence[Test] = (),
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
    """
    tests = tuple(tests_of(checks.end)) + tuple(seed_level)
    return Claim(notebook, text, paper, tests, (bigram_gate, *checks.gates(models, tests_of)), "ppl")


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


def rare_words(test_ids: np.ndarray, train_counts: np.ndarray, model: str = "official", reference: str = "baseline") -> TestsOf:
    """The ICLR version's rare-word gain: ``ppl(model) - ppl(reference)`` on the test tokens
    whose target word occurs < 100 times in PTB train, below 0
    (:func:`~prismlib.lstm.perplexity_by_frequency`).

    Args:
        test_ids: ``(n,)`` the test tokens the NLLs predict; ``train_counts``: ``(vocab,)``.
    """

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        bins = perplexity_by_frequency({k: m.nll[k] for k in (reference, model)}, test_ids, train_counts, reference=reference)
        row = bins[(bins.model == model) & (bins["bin"] == "<100")].iloc[0]
        return (Test(row.delta, -1, 0.0, f"ppl({model}) - ppl({reference}), target words < 100 in train"),)

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


def untrained_control(
    name: str,
    models: Sequence[str],
    changes: Mapping[str, np.ndarray],
    controls: Mapping[str, np.ndarray],
    statistic: Callable[[list[np.ndarray]], float],
) -> Gate:
    """Notebook 08's initialisation control: ``statistic`` of the trained ``models``' cell-state
    changes against the same of their untrained controls (same specs and fixed biases,
    random other weights, same contexts), paired over the contexts
    (:func:`prismlib.lstm.ablation.control_excess`, :func:`~prismlib.lstm.ablation.control_gate`).

    Args:
        changes, controls: model label -> ``(n_contexts, n_layers, length)``.
    """
    trained_iv, control_iv, excess = control_excess([changes[k] for k in models], [controls[k] for k in models], statistic)
    return control_gate(name, trained_iv, control_iv, excess)


def slope_range(slopes: Mapping[tuple[str, int], Interval], models: Sequence[str], layer: int) -> float:
    """Max minus min over ``models`` of the decay slope of ``layer`` (0-based); ``slopes``:
    ``(model, layer) -> interval`` (:func:`prismlib.lstm.ablation.slope_interval`)."""
    v = [slopes[(k, layer)].effect for k in models]
    return max(v) - min(v)
