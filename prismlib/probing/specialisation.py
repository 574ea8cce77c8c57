"""Bands x tasks on each task's own scale: does each band do well on its own task and poorly
on the others (the abstract of work A), and whose band profile is MLM's most like (section 3.2)?

The paper's abstract: filtered embeddings "perform well on part of speech tagging
(word-level), dialog speech acts classification (utterance-level), or topic classification
(document-level), while performing poorly on the other tasks". Raw accuracies of different
tasks are not comparable (43 dialog acts with a 37% majority class, 20 balanced topics), so
every accuracy is put on its task's own scale first:

    ``score[band, task] = (acc[band] - acc[majority]) / (acc[ORIG] - acc[majority])``

0 is the majority class, 1 the unfiltered features (above 1: the band beats them).
"Well" and "poorly" are read against one prior, fixed before any run: the scale's midpoint
:data:`MIDPOINT` (0.5, halfway between the majority class and ORIG). For each band and
the task the paper assigns it (:data:`OWN_TASKS`: HIGH part of speech, MID dialog acts, LOW
topic), :func:`specialisation_tests` gives nine one-sided tests, all of which must hold:

    ``score[band, own] > 0.5`` and ``score[band, other] < 0.5`` for each other task,

each score's interval a bootstrap over its own task's test units (paired across the band,
ORIG and the majority class).

Section 3.2: "The probing results for masked language modeling are most similar to part of
speech tagging". A task's *band profile* is its vector of the five bands' scores;
:func:`nearer_profile` tests whether MLM's profile is closer (Euclidean distance) to part
of speech's than to each other task's:

    ``min(d(MLM, swda), d(MLM, topic)) - d(MLM, pos) > 0``

The tasks have different test sets, so each task's units are resampled on their own
(:func:`prismlib.stats.bootstrap_distribution`), the same resample for all five bands of a
task, and the interval is the percentile interval of the statistic over the joint draws.

A resample in which ORIG does not beat the majority class has no scale; its score is
computed with the denominator floored at :data:`_FLOOR` (an extreme draw, which widens the
interval), and a claim built on these tests carries each task's ORIG gate. Where a task has
no scale on its full test set, the interval is NaN (the gate then decides).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from prismlib.claims import Test
from prismlib.probing.probes import MAJORITY, ProbeComparison, accuracy_sums
from prismlib.stats import LEVEL, Interval, bootstrap_distribution, paired_bootstrap

OWN_TASKS: dict[str, str] = {"HIGH": "pos", "MID": "swda", "LOW": "topic"}
"""The task each band is best at in the paper (section 3.2, Fig. 4)."""

MIDPOINT = 0.5
"""The prior for "does well" (a score above it) and "performs poorly" (below it): halfway
between the majority class (0) and ORIG (1) on each task's scale, fixed before the runs."""

_FLOOR = 1e-9
"""Floor of a score's denominator (ORIG minus majority, accuracy as a fraction) in a resample."""


def relative_sums(cmp: ProbeComparison, condition: str) -> tuple[np.ndarray, np.ndarray]:
    """Per independent test unit: the weighted correct predictions of ``condition`` minus the
    majority class's, and ORIG's minus the majority class's (each ``(G,)``); their sums' ratio
    is the score (module docstring)."""
    num, den = accuracy_sums(cmp.runs.correct[condition], cmp.test, cmp.groups)
    orig, _ = accuracy_sums(cmp.runs.correct["ORIG"], cmp.test, cmp.groups)
    majority, _ = accuracy_sums(cmp.runs.correct[MAJORITY], cmp.test, cmp.groups)
    return (num - majority) / den.sum(), (orig - majority) / den.sum()


def _score(num: np.ndarray, den: np.ndarray, axis: int = -1) -> np.ndarray:
    return num.sum(axis) / np.maximum(den.sum(axis), _FLOOR)


def relative_score(cmp: ProbeComparison, condition: str) -> float:
    """``condition``'s score on the task of ``cmp``: 0 the majority class, 1 ORIG (NaN when
    ORIG does not beat the majority class on the full test set: the task has no scale)."""
    num, den = relative_sums(cmp, condition)
    return float(num.sum() / den.sum()) if den.sum() > 0 else float("nan")


def score_matrix(comparisons: Mapping[str, ProbeComparison], conditions: Sequence[str]) -> pd.DataFrame:
    """One row per task and condition: ``task, condition, accuracy, majority, ORIG, score``
    (accuracies in %, the score of :func:`relative_score`)."""
    rows = []
    for task, cmp in comparisons.items():
        majority, orig = cmp.accuracy(MAJORITY).effect, cmp.accuracy("ORIG").effect
        for c in conditions:
            rows.append(
                {
                    "task": task,
                    "condition": c,
                    "accuracy": cmp.accuracy(c).effect,
                    "majority": majority,
                    "ORIG": orig,
                    "score": relative_score(cmp, c),
                }
            )
    return pd.DataFrame(rows)


def score_grid(matrix: pd.DataFrame, conditions: Sequence[str], tasks: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`score_matrix` as two ``conditions x tasks`` frames: the scores, and each cell's
    label (``"0.79\n68.6%"``: score, then accuracy; ``"no scale"`` where the task's ORIG does
    not beat its majority class) for a heatmap."""
    scores = matrix.pivot(index="condition", columns="task", values="score").loc[list(conditions), list(tasks)]
    text = matrix.assign(
        label=[f"{'no scale' if np.isnan(s) else f'{s:.2f}'}\n{a:.1f}%" for s, a in zip(matrix["score"], matrix["accuracy"])]
    )
    return scores, text.pivot(index="condition", columns="task", values="label").loc[list(conditions), list(tasks)]


def _has_scale(cmp: ProbeComparison) -> bool:
    """Whether ORIG beats the majority class on the task's full test set (the scale exists)."""
    return bool(relative_sums(cmp, "ORIG")[1].sum() > 0)


def _no_scale(units: int) -> Interval:
    return Interval(float("nan"), float("nan"), float("nan"), units)


def score_interval(cmp: ProbeComparison, condition: str) -> Interval:
    """``condition``'s score on the task of ``cmp`` with its bootstrap interval over the
    task's test units (seed and resamples of ``cmp``); NaN when the task has no scale."""
    if not _has_scale(cmp):
        return _no_scale(cmp.units)
    return paired_bootstrap(_score, relative_sums(cmp, condition), n_boot=cmp.n_boot, seed=cmp.seed)


def specialisation_tests(
    comparisons: Mapping[str, ProbeComparison], midpoint: float = MIDPOINT, own: Mapping[str, str] = OWN_TASKS
) -> tuple[Test, ...]:
    """For each band of ``own``: its score on its own task above ``midpoint`` ("does well"),
    and its score on each other task of ``own``'s values below it ("poorly"), each a
    one-sided test of :func:`score_interval` (3 bands x 3 tasks: nine tests), in ``own``'s
    order, the own task first."""
    tasks = list(dict.fromkeys(own.values()))
    missing = [t for t in tasks if t not in comparisons]
    if missing:
        raise ValueError(f"no probe results for tasks {missing}; the test needs every task of {tasks}")
    return tuple(
        Test(score_interval(comparisons[task], band), 1 if task == home else -1, midpoint, f"{band} on {task}")
        for band, home in own.items()
        for task in [home, *(t for t in tasks if t != home)]
    )


def _profile_draws(cmp: ProbeComparison, bands: Sequence[str], n_boot: int, seed: int) -> np.ndarray:
    """``bands``' scores over ``n_boot`` resamples of the task's units, one resample for all
    bands: ``(B, n_boot)``."""
    sums = [relative_sums(cmp, b) for b in bands]
    arrays = [num for num, _ in sums] + [sums[0][1]]  # the denominator is ORIG's, the same for every band

    def profile(*xs: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.stack([_score(x, xs[-1], axis) for x in xs[:-1]])

    return bootstrap_distribution(profile, arrays, n_boot=n_boot, seed=seed)


def profile_distances(target: ProbeComparison, tasks: Mapping[str, ProbeComparison], bands: Sequence[str]) -> dict[str, float]:
    """Euclidean distance between ``target``'s band profile (its ``bands``' scores) and each
    task's of ``tasks`` (NaN where either has no scale)."""
    mine = np.array([relative_score(target, b) for b in bands])
    return {name: float(np.linalg.norm(mine - np.array([relative_score(cmp, b) for b in bands]))) for name, cmp in tasks.items()}


def nearer_profile(
    target: ProbeComparison, tasks: Mapping[str, ProbeComparison], near: str, bands: Sequence[str], *, level: float = LEVEL
) -> Interval:
    """How much closer ``target``'s band profile is to task ``near``'s than to the nearest
    other task of ``tasks``: ``min_other d(target, other) - d(target, near)`` (positive:
    ``near`` is the closest), ``d`` the Euclidean distance of the ``bands``' scores.

    Each task's units are resampled on their own (``target`` with its seed, the tasks of
    ``tasks`` with ``seed + 1, seed + 2, ...`` in their order; ``target``'s ``n_boot``), one
    resample for all bands of a task; the interval is the percentile interval of the
    statistic over the joint draws. ``units`` is the smallest task's count.

    Raises:
        ValueError: ``near`` is not in ``tasks``, or ``tasks`` holds no other task.
    """
    if near not in tasks or len(tasks) < 2:
        raise ValueError(f"need {near!r} and at least one other task; got {list(tasks)}")
    units = min(c.units for c in (target, *tasks.values()))
    if not all(_has_scale(c) for c in (target, *tasks.values())):
        return _no_scale(units)
    draws = _profile_draws(target, bands, target.n_boot, target.seed)
    dist = {
        name: np.linalg.norm(draws - _profile_draws(cmp, bands, target.n_boot, target.seed + i), axis=0)
        for i, (name, cmp) in enumerate(tasks.items(), start=1)
    }
    others = [n for n in tasks if n != near]
    full = profile_distances(target, tasks, bands)
    effect = min(full[n] for n in others) - full[near]
    stat = np.min([dist[n] for n in others], axis=0) - dist[near]
    low, high = np.quantile(stat, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(effect), float(low), float(high), units, level)


def specialisation_table(tests: Sequence[Test]) -> pd.DataFrame:
    """One row per test: ``test`` (what is compared), ``effect, ci_low, ci_high`` and the
    test's own ``verdict`` (``no scale`` where a task's ORIG does not beat its majority class;
    the claim's gates then make it ``not testable``)."""
    return pd.DataFrame(
        [
            {
                "test": t.describe(),
                "effect": t.interval.effect,
                "ci_low": t.interval.low,
                "ci_high": t.interval.high,
                "verdict": "no scale" if np.isnan(t.interval.effect) else t.verdict,
            }
            for t in tests
        ]
    )
