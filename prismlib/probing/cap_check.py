"""Is the probes' epoch cap long enough? The cap doubled, the claims built again.

A probe run ends by its rule (two epochs in a row without a lower validation loss) or at
the epoch cap, the paper's 30 (section 3). A run at the cap had not stopped learning, so a
claim that reads it may measure the cap. The check (issue 46, item 3): the conditions with
a run at the cap (:func:`capped_conditions`) are probed again with the cap doubled, their
runs take the place of the capped ones (:func:`with_runs`; every other condition stopped
by its rule before the cap and would repeat exactly, since probes are seeded), the claims
are built again from them (:func:`capped_table` shows the probes, :func:`cap_table` the
verdicts), and each claim carries the gate of :func:`cap_gate`: its verdict is the same at
both caps, on the same row (:func:`twins`: the rows the doubled cap builds are matched by
their paper sentence). A claim whose verdict the cap decides is `not testable`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from prismlib.claims import Claim, Gate
from prismlib.probing.probes import MAJORITY, ProbeRuns


def capped_conditions(runs: ProbeRuns, cap: int) -> list[str]:
    """The conditions of ``runs`` with at least one run that trained ``cap`` epochs (a run
    its rule stopped at exactly ``cap`` counts too: the two cannot be told apart), in the
    order of ``runs.table``."""
    table = runs.table
    return list(dict.fromkeys(table.loc[table["epochs"] >= cap, "condition"]))


def with_runs(runs: ProbeRuns, longer: ProbeRuns) -> ProbeRuns:
    """``runs`` with every condition that ``longer`` probed replaced by ``longer``'s runs
    (the same test rows and training set: the majority class must agree).

    Raises:
        ValueError: the two were not probed on the same training set, or ``longer`` holds
            a condition ``runs`` lacks.
    """
    if longer.majority_class != runs.majority_class:
        raise ValueError(f"majority class {longer.majority_class} != {runs.majority_class}: not the same training set")
    names = [c for c in longer.correct if c != MAJORITY]
    unknown = sorted(set(names) - set(runs.correct))
    if unknown:
        raise ValueError(f"conditions {unknown} were not probed before; with_runs only replaces runs")
    tables = {c: (longer if c in names else runs).table for c in dict.fromkeys(runs.table["condition"])}
    table = pd.concat([t[t["condition"] == c] for c, t in tables.items()], ignore_index=True)
    correct = {c: longer.correct[c] if c in names else v for c, v in runs.correct.items()}
    resume = {c: v for c, v in runs.resume.items() if c not in names} | {c: longer.resume[c] for c in names if c in longer.resume}
    return ProbeRuns(table, correct, runs.majority_class, resume)


def _reading(claim: Claim) -> str:
    """A claim's verdict and its first test's effect with its interval."""
    return f"{claim.verdict}, {claim.tests[0].interval}"


CAP_GATE = "the verdict stands with the probes' epoch cap doubled"
"""The name of the gate :func:`with_cap_gates` adds to every claim."""


def twins(claims: Sequence[Claim], doubled: Sequence[Claim]) -> list[Claim | None]:
    """For each claim of ``claims``, the same row of ``doubled`` (built by the same function
    from the probes with the caps doubled): the first unused one with its notebook and
    paper sentence, in order; ``None`` where there is none (the doubled cap built the rows
    otherwise: another rival on validation, a row more or less). Give one task's rows at a
    time where rows of several tasks share a paper sentence and their number can change."""
    left = list(doubled)
    out: list[Claim | None] = []
    for c in claims:
        twin = next((d for d in left if (d.notebook, d.paper) == (c.notebook, c.paper)), None)
        if twin is not None:
            left.remove(twin)
        out.append(twin)
    return out


def cap_gate(at_cap: Claim, doubled: Claim | None) -> Gate:
    """Passed when ``at_cap`` (the claim from the probes at their caps) and ``doubled`` (the
    same row from the probes with every capped condition at twice its cap) have one
    verdict; failed where the doubled cap builds no such row (``None``)."""
    if doubled is None:
        return Gate(CAP_GATE, False, f"at the cap: {_reading(at_cap)}; with the cap doubled the rows are built otherwise (no such row)")
    return Gate(CAP_GATE, at_cap.verdict == doubled.verdict, f"at the cap: {_reading(at_cap)}; cap doubled: {_reading(doubled)}")


def with_cap_gates(claims: Sequence[Claim], doubled: Sequence[Claim]) -> list[Claim]:
    """Every claim of ``claims`` with its :func:`cap_gate` against its twin in ``doubled``
    (:func:`twins`)."""
    return [dataclasses.replace(c, gates=(*c.gates, cap_gate(c, d))) for c, d in zip(claims, twins(claims, doubled))]


def cap_table(claims: Sequence[Claim], doubled: Sequence[Claim]) -> pd.DataFrame:
    """One row per claim: its verdict and effect at the cap and with the cap doubled (of its
    :func:`twins` row; none where the doubled cap builds no such row), and whether the verdict
    moved (the claims as built, before the cap gate)."""
    rows = []
    for c, d in zip(claims, twins(claims, doubled)):
        rows.append(
            {
                "claim": c.claim,
                "verdict": c.verdict,
                "effect": c.tests[0].interval.effect,
                "verdict, cap doubled": "(no such row)" if d is None else d.verdict,
                "effect, cap doubled": float("nan") if d is None else d.tests[0].interval.effect,
                "moved": d is None or c.verdict != d.verdict,
            }
        )
    return pd.DataFrame(rows)


def capped_table(before: dict[str, ProbeRuns], after: dict[str, ProbeRuns], caps: dict[str, int]) -> pd.DataFrame:
    """Per task and capped condition (:func:`capped_conditions` of ``before``): the cap, the
    mean epochs and mean accuracy (%) of its runs at the cap (``before``) and with the cap
    doubled (``after``, e.g. :func:`with_runs`'s)."""
    rows = []
    for task, runs in before.items():
        for c in capped_conditions(runs, caps[task]):
            a, b = (r.table[r.table["condition"] == c] for r in (runs, after[task]))
            rows.append(
                {
                    "task": task,
                    "condition": c,
                    "cap": caps[task],
                    "epochs": a["epochs"].mean(),
                    "accuracy": 100 * a["accuracy"].mean(),
                    "epochs, cap doubled": b["epochs"].mean(),
                    "accuracy, cap doubled": 100 * b["accuracy"].mean(),
                }
            )
    return pd.DataFrame(rows, columns=["task", "condition", "cap", "epochs", "accuracy", "epochs, cap doubled", "accuracy, cap doubled"])
