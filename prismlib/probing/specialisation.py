"""Does each band do well on its own task and poorly on the others? (the abstract of work A)

The paper's abstract: filtered embeddings "perform well on part of speech tagging
(word-level), dialog speech acts classification (utterance-level), or topic classification
(document-level), while performing poorly on the other tasks". Raw accuracies of different
tasks are not comparable (43 dialog acts with a 37% majority class, 20 balanced topics), so
every accuracy is put on its task's own scale first:

    ``score[band, task] = (acc[band] - acc[majority]) / (acc[ORIG] - acc[majority])``

0 is the majority class, 1 the unfiltered features (above 1: the band beats them). The
test, for each band and the task the paper assigns it (:data:`OWN_TASKS`: HIGH part of
speech, MID dialog acts, LOW topic), and each other task of the claim:

    ``score[band, own] - score[band, other] > margin``

The two scores come from different test sets, so the interval is
:func:`prismlib.stats.independent_difference`: each task's test units resampled on their
own (paired within a task across the band, ORIG and the majority class). A resample in
which ORIG does not beat the majority class has no scale; its score is computed with the
denominator floored at :data:`_FLOOR` (an extreme draw, which widens the interval), and a
claim built on these tests carries each task's ORIG gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from prismlib.claims import Test
from prismlib.probing.probes import MAJORITY, ProbeComparison, accuracy_sums
from prismlib.stats import Interval, independent_difference

OWN_TASKS: dict[str, str] = {"HIGH": "pos", "MID": "swda", "LOW": "topic"}
"""The task each band is best at in the paper (section 3.2, Fig. 4)."""

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


def score_difference(own: ProbeComparison, other: ProbeComparison, band: str) -> Interval:
    """``score[band, own] - score[band, other]`` with its interval over both tasks' test units
    resampled independently (seed and resamples of ``own``); NaN when either task has no scale."""
    a, b = relative_sums(own, band), relative_sums(other, band)
    if a[1].sum() <= 0 or b[1].sum() <= 0:
        return Interval(float("nan"), float("nan"), float("nan"), min(own.units, other.units))
    return independent_difference(_score, a, _score, b, n_boot=own.n_boot, seed=own.seed)


def specialisation_tests(comparisons: Mapping[str, ProbeComparison], margin: float, own: Mapping[str, str] = OWN_TASKS) -> tuple[Test, ...]:
    """For each band of ``own`` and each other task of ``own``'s values: the band's score on
    its own task minus its score on the other task, above ``margin`` (a share of the
    majority-to-ORIG gap, e.g. 0.25) to count (:meth:`prismlib.claims.Test.superiority`)."""
    tasks = list(dict.fromkeys(own.values()))
    missing = [t for t in tasks if t not in comparisons]
    if missing:
        raise ValueError(f"no probe results for tasks {missing}; the test needs every task of {tasks}")
    return tuple(
        Test.superiority(score_difference(comparisons[task], comparisons[other], band), margin, label=f"{band}: {task} - {other}")
        for band, task in own.items()
        for other in tasks
        if other != task
    )


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
