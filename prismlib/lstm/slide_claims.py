"""The slides' claims of notebooks 05-08 as tests, with their gates wired in.

A work-B perplexity claim is a set of tests computed from the models' seed means
(:class:`~prismlib.lstm.SeedMeans`) and the gates :class:`~prismlib.lstm.WorkBClaims`
adds to it (model, effect-stability and seeds gates), behind the Kneser-Ney bigram gate.
The tests are given as functions of the seed means (``tests_of``, a
:data:`~prismlib.lstm.verdicts.TestsOf`) because the stability gate recomputes them at an
earlier checkpoint. This module holds those functions for each claim of the notebooks
(experiments 1-4, in the slides' wording) and :func:`perplexity_claim`, which assembles a
claim from them. Notebook 08's memory claims: every model ablated with the profile's
settings (:func:`ablate_models`; :func:`untrained_controls`, the same specs before training),
their gates (:class:`MemoryGates`, with the sanity gate :func:`decay_gate`), their tests,
trained effect beside its excess over the untrained control (:func:`controlled_effect`,
:func:`controlled_tests`), and the claims themselves, :func:`memory_claims`.

Every contrast is a paired bootstrap over 100-token chunks of PTB test
(:func:`~prismlib.lstm.perplexity_difference`, :func:`~prismlib.lstm.perplexity_contrast`);
a test's label is the contrast it measures, as the claims table prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np

from prismlib.claims import Claim, Gate, Test
from prismlib.data.ptb import UNK, PTBCorpus
from prismlib.devices import torch_threads
from prismlib.lstm.ablation import cell_state_change, control_excess, decay_slopes, effective_timescale
from prismlib.lstm.chunks import NLL, ChunkNLL
from prismlib.lstm.evaluation import (
    SeedMeans,
    bin_log_ratio_contrast,
    frequency_bins,
    perplexity_contrast,
    perplexity_difference,
)
from prismlib.lstm.job import RunSpec, untrained_model
from prismlib.lstm.model import LSTMLM
from prismlib.lstm.verdicts import TestsOf, WorkBClaims, converged_gate
from prismlib.profiles import LSTMSettings
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
    statistic: Callable[[NLL], float] | None = None,
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
            (:meth:`WorkBClaims.gates`); ``statistic``: one run's NLL -> the number whose
            contrast the tests measure, where it is not a perplexity (the doubling check reads
            it; e.g. :func:`bin_log_gap` for :func:`rare_words`).
    """
    tests = tuple(tests_of(checks.end)) + tuple(seed_level)
    return Claim(notebook, text, paper, tests, (bigram_gate, *checks.gates(models, tests_of, relative, statistic)), unit)


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


def ablate_models(
    specs: Sequence[RunSpec], model_of: Callable[[RunSpec], LSTMLM], settings: LSTMSettings, corpus: PTBCorpus, desc: str = ""
) -> dict[str, np.ndarray]:
    """Notebook 08's ablation of every model of ``specs`` with the profile's settings
    (:func:`prismlib.lstm.ablation.cell_state_change` on PTB test: ``memory_contexts``
    contexts of ``context`` words drawn with the spec's seed, ``memory_warmup``, ``memory_mode``),
    one model at a time under the profile's torch threads.

    Args:
        model_of: the model of a spec (its trained run's, or :func:`untrained_model`), built
            when its turn comes; ``desc``: appended to the model's name in the progress bar.

    Returns:
        :func:`run_name` -> ``(n_contexts, n_layers, length)`` changes.
    """
    with torch_threads(settings.threads):
        return {
            run_name(spec): cell_state_change(
                model_of(spec),
                corpus.test,
                settings.memory_contexts,
                settings.context,
                corpus.stoi[UNK],
                seed=spec.seed,
                warmup=settings.memory_warmup,
                mode=settings.memory_mode,
                desc=run_name(spec) + desc,
            )
            for spec in specs
        }


def untrained_controls(specs: Sequence[RunSpec], settings: LSTMSettings, corpus: PTBCorpus, device: str = "cpu") -> dict[str, np.ndarray]:
    """The initialisation control of every memory model: :func:`ablate_models` of the specs
    before training (:func:`prismlib.lstm.untrained_model`: the same fixed biases, random
    other weights) on the same contexts; :func:`run_name` -> ``(n_contexts, n_layers, length)``."""
    return ablate_models(specs, lambda spec: untrained_model(spec, settings, corpus, device), settings, corpus, " (untrained)")


def decay_gate(slopes: Mapping[tuple[str, int], Interval], fit: tuple[int, int]) -> Gate:
    """The sanity gate of every memory claim: the cell-state change decays with distance,
    every slope's interval (``(model, layer) -> interval`` over the distances ``fit``,
    :func:`prismlib.lstm.ablation.slope_interval`) below 0. A check of the measurement, not a
    claim: the untrained models decay too. Its detail names the slopes that are not."""
    rising = [f"{label} L{layer + 1}" for (label, layer), i in slopes.items() if not i.high < 0]
    effects = [i.effect for i in slopes.values()]
    return Gate(
        f"the cell-state change decays with distance (every slope over d = {fit[0]}..{fit[1]} < 0)",
        not rising,
        f"{len(slopes)} slopes, {np.nanmin(effects):.3f} to {np.nanmax(effects):.3f} per word"
        + (f"; not clearly negative: {', '.join(rising)}" if rising else ""),
    )


class MemoryClaims(NamedTuple):
    """Notebook 08's claims (:func:`memory_claims`) and, per claim (``"layer 1"``, ``"layer 3's
    range"``, ``"layer order"``), whether the untrained control accounts for its effect in some seed."""

    claims: list[Claim]
    controls_account: dict[str, bool]


def memory_claims(
    specs: Sequence[RunSpec],
    assigned: Mapping[tuple[str, int], float | None],
    slopes: Mapping[tuple[str, int], Interval],
    changes: Mapping[str, np.ndarray],
    controls: Mapping[str, np.ndarray],
    fit: tuple[int, int],
    gates: Callable[[Sequence[str]], tuple[Gate, ...]],
) -> MemoryClaims:
    """The slides' memory claims of notebook 08, each decided on the trained effect and its
    excess over the untrained control in every seed (:func:`controlled_tests`): layer 1's memory
    follows its fixed timescale (layer-wise against inverse), the last layer's slopes vary less
    across the models than layer 1's, and within each fully fixed model the layer with the
    longest assigned timescale decays most slowly. The texts quote the first seed's numbers.

    Args:
        specs: the memory models, every seed (``variant``, ``seed``, ``label``; the variants
            ``layerwise`` and ``inverse`` among them); a model is named by :func:`run_name`.
        assigned: ``(model, layer) -> `` median timescale the fixed biases assign (``None``:
            the layer trains freely); layers 0-based.
        slopes: ``(model, layer) -> `` decay slope over ``fit`` with its interval
            (:func:`prismlib.lstm.ablation.slope_interval`).
        changes, controls: model -> ``(n_contexts, n_layers, length)`` of the trained models
            and of their untrained controls (:func:`untrained_controls`).
        gates: the models a claim reads -> its gates (:class:`MemoryGates`).
    """
    layers = next(iter(changes.values())).shape[1]
    last = layers - 1
    seeds = sorted({s.seed for s in specs})
    first = seeds[0]
    labels = [run_name(s) for s in specs]
    name = {(s.variant, s.seed): run_name(s) for s in specs}
    at_seed = {k: [run_name(s) for s in specs if s.seed == k] for k in seeds}
    L1_long, L1_short = name[("layerwise", first)], name[("inverse", first)]
    l1 = {
        k: controlled_effect([name[("layerwise", k)], name[("inverse", k)]], changes, controls, slope_gap(fit, (0, 0), (1, 0)))
        for k in seeds
    }
    spread = {k: controlled_effect(at_seed[k], changes, controls, range_gap(fit, 0, last)) for k in seeds}
    all_fixed = [k for k in labels if all(assigned[(k, layer)] is not None for layer in range(layers))]
    top = {k: max(range(layers), key=lambda layer: assigned[(k, layer)] or 0.0) for k in all_fixed}  # (every layer fixed: no None)
    variant_of = {run_name(s): s.variant for s in specs}
    fixed_variants = list(dict.fromkeys(variant_of[k] for k in all_fixed))
    # a layer against another of the same model, per seed: slope_gap pairs them over the same resampled contexts
    order = {
        (v, other): {
            k: controlled_effect([name[(v, k)]], changes, controls, slope_gap(fit, (0, top[name[(v, k)]]), (0, other))) for k in seeds
        }
        for v in fixed_variants
        for other in range(layers)
        if other != top[name[(v, first)]]
    }
    order_tests = tuple(
        t
        for (v, other), effects in order.items()
        for t in controlled_tests(effects, f"slope L{top[name[(v, first)]] + 1} - slope L{other + 1} ({v})")
    )
    tau = {key: effective_timescale(iv.effect) for key, iv in slopes.items()}  # words, per (model, layer)
    seed_note = f"seed {first}" if len(seeds) == 1 else f"seed {first} of {len(seeds)}, every seed tested"
    claims = [
        Claim(
            "08",
            f"Layer 1's memory follows its fixed timescale, beyond what the untrained models with the same biases show: "
            f"'{L1_long}' (layer 1 median assigned T {assigned[(L1_long, 0)]:.1f}) decays more slowly than '{L1_short}' "
            f"({assigned[(L1_short, 0)]:.1f}) (slopes {slopes[(L1_long, 0)].effect:.3f} vs {slopes[(L1_short, 0)].effect:.3f} per word, "
            f"tau {tau[(L1_long, 0)]:.1f} vs {tau[(L1_short, 0)]:.1f} words; untrained difference {l1[first].control.effect:+.3f}; "
            f"{seed_note})",
            "'Slope of graphs - information about timescale: slow decay -> higher information between distant words'; "
            "'Layer 1 - small timescale most effective'",
            controlled_tests(l1, "slope L1 (first longest) - slope L1 (last longest)"),
            gates([name[(v, k)] for v in ("layerwise", "inverse") for k in seeds]),
            "1/word",
            control=control_note(l1),
        ),
        Claim(
            "08",
            f"Layer {last + 1} has a similar slope in every model, more so than the untrained models with the same biases: its "
            f"range across the {len(at_seed[first])} models ({slope_range(slopes, at_seed[first], last):.3f} per word) is smaller "
            f"than layer 1's ({slope_range(slopes, at_seed[first], 0):.3f}) by more than in the untrained models "
            f"(untrained: {spread[first].control.effect:+.3f}; {seed_note})",
            "'Layer 3 - all model has similar slope - irrespective of fixed bias values - task-dependency?'",
            controlled_tests(spread, f"range of L1 slopes - range of L{last + 1} slopes"),
            gates(labels),
            "1/word",
            control=control_note(spread),
        ),
        Claim(
            "08",
            "Within each fully fixed model the layer with the longest assigned timescale decays most slowly (the largest "
            "slope; the longest tau where the slopes are negative), beyond what the untrained model with the same biases shows ("
            + "; ".join(
                f"{k}: L{top[k] + 1}; slopes "
                + " / ".join(f"{slopes[(k, layer)].effect:.3f}" for layer in range(layers))
                + ", tau "
                + " / ".join(f"{tau[(k, layer)]:.1f}" for layer in range(layers))
                for k in all_fixed
                if k in at_seed[first]
            )
            + f" for L1 / L2 / L3; {seed_note})",
            "No slide states it: our extrapolation of 'Slope of graphs - information about timescale'; the slides' own "
            "layer-3 remark ('all model has similar slope - irrespective of fixed bias values') speaks against it",
            order_tests,
            gates(all_fixed),
            "1/word",
            control="; ".join(f"{v}, L{top[name[(v, first)]] + 1} - L{other + 1}: {control_note(e)}" for (v, other), e in order.items()),
        ),
    ]
    accounts = {
        "layer 1": any(e.accounts() for e in l1.values()),
        f"layer {last + 1}'s range": any(e.accounts() for e in spread.values()),
        "layer order": any(e.accounts() for es in order.values() for e in es.values()),
    }
    return MemoryClaims(claims, accounts)
