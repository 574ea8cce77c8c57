"""The slides' perplexity claims of notebooks 05-07 as tests, with their gates wired in.

A work-B perplexity claim is a set of tests computed from the models' seed means
(:class:`~prismlib.lstm.SeedMeans`) and the gates :class:`~prismlib.lstm.WorkBClaims`
adds to it (model, effect-stability and seeds gates), behind the Kneser-Ney bigram gate.
The tests are given as functions of the seed means (``tests_of``, a
:data:`~prismlib.lstm.claims.verdicts.TestsOf`) because the stability gate recomputes them at an
earlier checkpoint. This module holds those functions for each claim of the notebooks
(experiments 1-4, in the slides' wording) and :func:`perplexity_claim`, which assembles a
claim from them. Notebook 08's memory claims are :mod:`prismlib.lstm.claims.ablation_claims`.

Every contrast is a paired bootstrap over 100-token chunks of PTB test
(:func:`~prismlib.lstm.perplexity_difference`, :func:`~prismlib.lstm.perplexity_contrast`),
widened by the spread of the seeds where a model has two or more
(:meth:`~prismlib.lstm.WorkBClaims.with_seeds`: one interval per contrast).
A test's label is the contrast it measures, as the claims table prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from prismlib.claims import Claim, Gate, Test
from prismlib.lstm.chunks import NLL, ChunkNLL
from prismlib.lstm.claims.verdicts import TestsOf, WorkBClaims
from prismlib.lstm.evaluation import (
    SeedMeans,
    bin_log_ratio_contrast,
    frequency_bins,
    mean_nll,
    perplexity,
    perplexity_contrast,
    perplexity_difference,
)


def perplexity_claim(
    notebook: str,
    text: str,
    paper: str,
    checks: WorkBClaims,
    models: Sequence[Hashable],
    tests_of: TestsOf,
    bigram_gate: Gate,
    arms: Sequence[tuple[Hashable, Hashable]] | None = None,
    unit: str = "ppl",
    relative: bool = False,
    statistic: Callable[[NLL], float] | None = None,
) -> Claim:
    """A work-B perplexity claim: ``tests_of`` on the final seed means, each test on its one
    interval with seed and chunk variance where ``arms`` names its two models
    (:meth:`WorkBClaims.with_seeds`); gates: ``bigram_gate`` (the
    baseline clearly below the Kneser-Ney bigram, :func:`prismlib.lstm.bigram.beats_bigram`),
    then the model, stability and seeds gates of :meth:`WorkBClaims.gates` over ``models``.

    Args:
        notebook: the notebook that tests it (``"06"``).
        text: the claim as tested here, with our numbers; ``paper``: what the slides state.
        checks: the notebook's runs grouped by model.
        models: the keys of ``checks`` the claim reads (the reference included where a
            test uses it).
        arms: ``(a, b)`` per test of ``tests_of`` (in order): the contrast ``a - b`` whose seeds
            join its interval. ``None``: the tests keep the chunk bootstrap alone (a contrast
            against the worst or best of several models has no per-seed arm).
        unit: the tests' unit; ``relative``: their effects are shares of a perplexity
            (log ratios, e.g. :func:`rare_words`), which the seeds rule reads as such
            (:meth:`WorkBClaims.gates`); ``statistic``: one run's NLL -> the number whose
            contrast the tests measure, where it is not a perplexity (default: the perplexity,
            or its log, the mean NLL, where ``relative``); the seeds' values and the doubling
            check read it (e.g. :func:`bin_log_gap` for :func:`rare_words`).

    Raises:
        ValueError: ``arms`` does not give one pair per test.
    """
    tests = tuple(tests_of(checks.end))
    if arms is not None:
        if len(arms) != len(tests):
            raise ValueError(f"{len(arms)} arms for {len(tests)} tests ({[t.label for t in tests]}); give one (a, b) per test")
        stat = statistic if statistic is not None else (mean_nll if relative else perplexity)
        tests = tuple(checks.with_seeds(t, a, b, stat) for t, (a, b) in zip(tests, arms))
    return Claim(notebook, text, paper, tests, (bigram_gate, *checks.gates(models, tests_of, relative, statistic)), unit)


def equivalent(models: Sequence[Hashable], margin: float) -> TestsOf:
    """Experiment 1's "not affected": each of ``models`` within ``±margin`` perplexity of the
    reference (an equivalence test of ``ppl(model) - ppl(baseline)``)."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return tuple(Test.equivalence(m.delta(k), margin, f"ppl({k}) - ppl(baseline)") for k in models)

    return tests


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


def published_margin(published: float, published_base: float, base: float) -> float:
    """A published effect (perplexity points against its own baseline ``published_base``) scaled
    to our baseline ``base``: the same share of it, ``published / published_base * base``. The
    superiority margin of a "beats by the published relative effect" row (issue 75, item 4)."""
    if not published_base > 0 or not base > 0:
        raise ValueError(f"baselines must be positive perplexities, got {published_base} and {base}")
    return abs(published) / published_base * base


def first_layer_worse_by(margins: Mapping[tuple[str, int], float]) -> TestsOf:
    """Experiment 3 by the published effect: for each ``(variant, T)`` of ``margins`` (the middle-
    and last-layer-longest, ``"middle"`` and ``"inverse"``), the first-layer-longest model
    (``("layerwise", T)``) worse than it by at least ``margins[(variant, T)]`` perplexity
    (:meth:`~prismlib.claims.Test.superiority`; "worse than both" is every test holding). One
    model per arm, so each joins the seeds' spread (:func:`perplexity_claim`'s ``arms``)."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return tuple(
            Test.superiority(
                perplexity_difference(m.nll[("layerwise", T)], m.nll[(v, T)]), margin, +1, f"ppl(first longest T={T}) - ppl({v} T={T})"
            )
            for (v, T), margin in margins.items()
        )

    return tests


def beats_by(margins: Mapping[str, float]) -> TestsOf:
    """Each model ``k`` of ``margins`` below the reference by at least ``margins[k]`` perplexity:
    ``ppl(k) - ppl(baseline) < -margins[k]`` (:meth:`~prismlib.claims.Test.superiority`)."""

    def tests(m: SeedMeans) -> tuple[Test, ...]:
        return tuple(Test.superiority(m.delta(k), margin, -1, f"ppl({layer2_short(k)}) - ppl(baseline)") for k, margin in margins.items())

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
    :func:`rare_words` tests, so each seed's gap is what joins its interval
    (:func:`perplexity_claim`'s ``statistic``, :meth:`WorkBClaims.with_seeds`).

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
