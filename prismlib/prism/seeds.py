"""Training seeds of section 4: every contrast between trained arms carries training variance.

Each trained arm (``baseline``, ``prism``, ``prism-every``; ``baseline_prism_untrained`` reads
``baseline``'s weights) is trained once per seed of ``profile.prism.seeds``
(:func:`prismlib.prism.section4_models`). Seed ``s`` of every arm starts from the same MLM-head
initialisation and has the same head warm-up order, masks, data order and dropout: the arms are
*paired by seed*. The frozen part of the staged recipe (embeddings and lower layers) has one set
of weights for every arm and seed; what it computes is cached once per seed's maskings and
encoded once for probing. The untrained arms (``original``, ``prism_untrained``) are one model
each, paired with every seed.

A condition of a trained model (the model probed, a sector of its features, its earlier
checkpoint) carries its seed: ``"prism#1"``, ``"prism LOW sector@previous#1"`` (:func:`seeded`,
:func:`split_seed`); the untrained arms' conditions carry none. Probe runs nest inside seeds: each
seed's model is probed ``profile.probe.runs`` times (probe seeds ``seed, seed + 1, ...``, the
same for every training seed and arm), and a seed's accuracy is the mean over its probe runs.

Every contrast that reads a trained model is tested on **one interval with both sources of
variance** (DESIGN, "Rules for claims"; :func:`prismlib.stats.combined_interval`): the paired
bootstrap over the test set's independent units of the *seed-mean* predictions
(:attr:`SeedComparison.pooled`; Fig. 5: the seed-mean log-probabilities, :func:`seed_means`)
widened by the spread of the per-seed contrasts (:meth:`SeedComparison.seed_values`; Fig. 5:
:func:`seed_effects`), in the same scale (points, nats). Paired by seed: the two models of a
seed's contrast share its head start, masks and data order, and an untrained arm enters every
seed's contrast with its one model. :func:`seeds_test` states a claim's unit test on that
interval (:func:`prismlib.claims.with_seeds`); the **seeds gate** (:func:`seeds_gate`) needs
:data:`prismlib.claims.MIN_SEEDS` seeds of every trained model a claim reads (with fewer than
two seeds no such interval exists and the gate fails the claim).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np
import pandas as pd

from prismlib.claims import MIN_SEEDS, Gate, Test, with_seeds
from prismlib.probing.features import Features
from prismlib.probing.probes import MAJORITY, ProbeComparison, ProbeRuns, accuracy_sums
from prismlib.stats import N_BOOT, Interval, combined_interval

SEED = "#"
"""Separates a trained model's condition from its seed: ``"prism LOW sector#1"``."""

K = TypeVar("K", bound=Hashable)


def seeded(condition: str, seed: int) -> str:
    """The condition of training seed ``seed`` (``"prism", 1`` -> ``"prism#1"``)."""
    if SEED in condition:
        raise ValueError(f"{condition!r} already names a seed")
    return f"{condition}{SEED}{int(seed)}"


def split_seed(condition: str) -> tuple[str, int | None]:
    """``"prism@previous#1"`` -> ``("prism@previous", 1)``; a condition without a seed -> ``(condition, None)``."""
    base, sep, seed = condition.rpartition(SEED)
    return (base, int(seed)) if sep else (condition, None)


def seeds_interval(unit: Interval, values: Sequence[float]) -> Interval | None:
    """The interval ``unit`` (a bootstrap over test units of the seed-mean statistic) with the
    spread of ``values`` (the same statistic on each training seed's models, same scale) added:
    :func:`prismlib.stats.combined_interval`. ``None`` with fewer than two seeds (no such
    interval exists: the seeds gate fails such a claim)."""
    return combined_interval(unit, values) if len(values) >= 2 else None


def seeds_test(test: Test, values: Sequence[float]) -> Test:
    """``test`` (on the unit bootstrap of the seed-mean contrast) on the one interval with the
    spread of ``values`` (the per-seed contrasts, same scale) added
    (:func:`prismlib.claims.with_seeds`); ``test`` as it is with fewer than two seeds (the
    seeds gate then fails the claim)."""
    return with_seeds(test, values) if len(values) >= 2 else test


def seeds_gate(counts: Mapping[str, int]) -> Gate:
    """Gate: every trained model a claim reads has at least :data:`~prismlib.claims.MIN_SEEDS`
    training seeds (``counts``: model -> its seeds; empty when the claim reads no trained model)."""
    name = f"seeds: >= {MIN_SEEDS} training seeds of every trained model compared"
    if not counts:
        return Gate(name, True, "no trained model")
    detail = ", ".join(f"{m}: {n}" for m, n in counts.items())
    if any(n < MIN_SEEDS for n in counts.values()):
        return Gate(name, False, f"too few seeds ({detail}): training variance untested; profile.prism.seeds trains more")
    return Gate(name, True, detail)


def every_seed(gates: Mapping[int, Gate]) -> Gate:
    """One gate of a trained arm from the same gate of each of its seeds (seed -> gate, one
    name): passed when every seed's passed; the detail names the seeds that failed (or all)."""
    if not gates:
        raise ValueError("every_seed needs the gate of at least one seed")
    failed = {s: g for s, g in gates.items() if not g.passed}
    shown = failed or gates
    detail = "; ".join(f"seed {s}: {g.detail}" for s, g in shown.items())
    if failed:
        detail = f"{len(failed)} of {len(gates)} seeds failed: {detail}"
    return Gate(next(iter(gates.values())).name, not failed, detail)


def seed_means(values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The mean over seeds of each trained condition's arrays (``"prism#0"``, ``"prism#1"`` ->
    ``"prism"``, the arrays of one shape), an untrained condition's array as it is."""
    groups: dict[str, list[np.ndarray]] = {}
    for name, x in values.items():
        groups.setdefault(split_seed(name)[0], []).append(np.asarray(x, dtype=np.float64))
    return {name: np.mean(xs, axis=0) for name, xs in groups.items()}


def seed_effects(per_seed: Mapping[int, Mapping[K, Interval]]) -> dict[K, list[float]]:
    """For every key of the first seed's intervals, the seeds' effects (e.g. Fig. 5's summary
    computed once per seed; a seed without the key is left out): the per-seed values of
    :func:`seeds_test` and :func:`seeds_interval`."""
    keys = next(iter(per_seed.values()), {})
    return {k: [iv[k].effect for iv in per_seed.values() if k in iv] for k in keys}


def spread_row(values: Mapping[int, float]) -> dict[str, float]:
    """One row of a seed-spread table: ``seed <s>`` for each seed, then their ``mean`` and ``sd``
    (sample SD; NaN with one seed)."""
    x = np.asarray(list(values.values()), dtype=np.float64)
    return {f"seed {s}": float(v) for s, v in values.items()} | {
        "mean": float(x.mean()) if len(x) else float("nan"),
        "sd": float(x.std(ddof=1)) if len(x) > 1 else float("nan"),
    }


def _accuracy(comparison: ProbeComparison, condition: str) -> float:
    """Point estimate of ``condition``'s weighted test accuracy (%), probe runs averaged."""
    num, den = accuracy_sums(comparison.runs.correct[condition], comparison.test, comparison.groups)
    return float(100 * num.sum() / den.sum())


@dataclass
class SeedComparison:
    """One task's probes over training seeds: the accuracies, differences and gates section 4's
    claims read (:class:`prismlib.prism.Section4Gates`), as a :class:`ProbeComparison` of the
    seed-mean predictions (:attr:`pooled`; ``accuracy``, ``diff``, ``gate``, ``units`` and
    ``runs`` are its), with the per-seed comparisons beside it for the seeds' spread
    (:meth:`seed_values`).

    Attributes:
        per_seed: seed -> the :class:`ProbeComparison` of that seed's trained models (under the
            plain names: ``"prism"``, ``"prism LOW sector@previous"``) and the untrained ones.
        pooled: every trained condition's probe runs of all seeds together (a condition some
            seed lacks, e.g. the earlier checkpoint of a run that never decayed, is left out),
            the untrained conditions as probed.
        counts: condition -> the seeds whose models were probed under it (0: untrained, one model).
    """

    per_seed: dict[int, ProbeComparison]
    pooled: ProbeComparison
    counts: dict[str, int]

    @classmethod
    def from_runs(
        cls, runs: ProbeRuns, test: Features, groups: np.ndarray, seed: int = 0, n_boot: int = N_BOOT, task: str = ""
    ) -> SeedComparison:
        """Split :func:`prismlib.probing.probe_conditions`'s runs of seeded and untrained
        conditions (``"prism#1"``, ``"original"``) into seeds (``seed``, ``n_boot``, ``task``:
        of every :class:`ProbeComparison`). The runs' table gains a ``seed`` column (``None``
        for untrained conditions) and names each condition without its seed."""
        plain: dict[str, np.ndarray] = {}
        tagged: dict[str, dict[int, np.ndarray]] = {}
        for name, correct in runs.correct.items():
            base, s = split_seed(name)
            if s is None:
                plain[base] = correct
            else:
                tagged.setdefault(base, {})[s] = correct
        seeds = sorted({s for per in tagged.values() for s in per})
        split = [split_seed(c) for c in runs.table["condition"]]
        table = runs.table.assign(condition=[b for b, _ in split], seed=pd.Series([s for _, s in split], dtype=object))

        def comparison(correct: dict[str, np.ndarray], rows: pd.DataFrame) -> ProbeComparison:
            return ProbeComparison(ProbeRuns(rows.reset_index(drop=True), correct, runs.majority_class), test, groups, seed, n_boot, task)

        untrained = table["seed"].isna()
        per_seed = {
            s: comparison(plain | {b: per[s] for b, per in tagged.items() if s in per}, table[untrained | (table["seed"] == s)])
            for s in seeds
        }
        pooled = plain | {b: np.concatenate([per[s] for s in seeds]) for b, per in tagged.items() if len(per) == len(seeds)}
        counts = dict.fromkeys(plain, 0) | {b: len(per) for b, per in tagged.items()}
        return cls(per_seed, comparison(pooled, table[table["condition"].isin(list(pooled))]), counts)

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(self.per_seed)

    @property
    def runs(self) -> ProbeRuns:
        return self.pooled.runs

    @property
    def units(self) -> int:
        return self.pooled.units

    def accuracy(self, condition: str) -> Interval:
        """Accuracy (%) of the seed-mean predictions of ``condition`` and its interval over test units."""
        return self.pooled.accuracy(condition)

    def diff(self, a: str, b: str) -> Interval:
        """``a`` minus ``b`` in points on the seed-mean predictions: the paired unit bootstrap."""
        return self.pooled.diff(a, b)

    def gate(self, condition: str = "ORIG") -> Gate:
        """The majority-class gate of the seed-mean predictions of ``condition``."""
        return self.pooled.gate(condition)

    def seed_accuracy(self, condition: str) -> dict[int, float]:
        """Seed -> the accuracy (%) of that seed's model under ``condition`` (probe runs
        averaged; an untrained condition gives its one model's accuracy for every seed)."""
        return {s: _accuracy(c, condition) for s, c in self.per_seed.items() if condition in c.runs.correct}

    def seed_values(self, a: str, b: str = MAJORITY) -> dict[int, float]:
        """Seed -> accuracy of ``a`` minus ``b`` (points) on that seed's models, for the seeds
        that have both."""
        pa, pb = self.seed_accuracy(a), self.seed_accuracy(b)
        return {s: pa[s] - pb[s] for s in pa if s in pb}

    def with_mean(self, name: str, parts: Sequence[str]) -> SeedComparison:
        """This comparison with one more condition ``name``: per test row, the mean of the
        predictions of ``parts`` (each ``(runs, n)`` correct averaged over its runs first).
        A weighted accuracy is linear in those scores, so ``name``'s accuracy is the mean of
        the parts' accuracies, and a difference against it is a linear contrast with the
        paired bootstrap's interval, e.g. ``sector - (full + majority) / 2`` ("the sector
        keeps more than half of the full model's gain over the majority class"). Every seed
        and the seed means get it; its seed count is the largest of its parts'."""
        if name in self.pooled.runs.correct:
            raise ValueError(f"{name!r} is already a condition")

        def add(c: ProbeComparison) -> ProbeComparison:
            runs = c.runs
            if not all(p in runs.correct for p in parts):
                return c
            mean = np.mean([np.atleast_2d(np.asarray(runs.correct[p], dtype=np.float64)).mean(0) for p in parts], axis=0)
            return replace(c, runs=replace(runs, correct=runs.correct | {name: mean[None]}))

        return SeedComparison(
            {s: add(c) for s, c in self.per_seed.items()},
            add(self.pooled),
            self.counts | {name: max(self.counts.get(p, 0) for p in parts)} if all(p in self.counts for p in parts) else self.counts,
        )


def accuracy_columns(comparison: SeedComparison, condition: str, sd_runs: float = float("nan")) -> dict[str, float]:
    """The accuracy columns of one row of Table 1 or App. B (notebook 03): ``condition``'s
    accuracy (%) on one task, over test units and over test units and training seeds together.

    Args:
        comparison: the task's probes over training seeds.
        condition: a condition without its seed (``"prism"``, ``"prism LOW sector"``).
        sd_runs: the SD (points) over probe runs within a seed, averaged over the seeds; the
            runs' table it comes from spans every task, so the caller computes it.

    Returns:
        ``mean``, ``ci_low``, ``ci_high``: the seed-mean predictions' accuracy and its interval
        over test units; ``seeds``: how many seeds were probed (0: an untrained model);
        ``seeds_ci_low``, ``seeds_ci_high``: the interval over units and seeds
        (:func:`seeds_interval`, NaN with fewer than two seeds); ``sd_seeds``: the SD of the
        seeds' accuracies (:func:`spread_row`, NaN without seeds); ``sd_runs`` as given.
        Reported beside each other, the two intervals show how much of a contrast's noise is
        training variance.
    """
    iv = comparison.accuracy(condition)
    seeds = comparison.counts.get(condition, 0)
    per_seed = comparison.seed_accuracy(condition) if seeds else {}
    over = seeds_interval(iv, list(per_seed.values()))
    return {
        "mean": iv.effect,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "seeds": seeds,
        "seeds_ci_low": over.low if over else float("nan"),
        "seeds_ci_high": over.high if over else float("nan"),
        "sd_seeds": spread_row(per_seed)["sd"] if per_seed else float("nan"),
        "sd_runs": sd_runs,
    }
