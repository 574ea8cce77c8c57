"""Verdicts: what our run says about each claim of the paper or the slides.

A :class:`Claim` is a sentence of the paper tested by one or more :class:`Test` s, each a
directional comparison ("A is above B", "the loss is below the unigram's") whose effect
comes with a paired-bootstrap interval over the test set's independent units
(:mod:`prismlib.stats`).  There are exactly four verdicts:

``held``
    every test's interval lies on the side the claim states;
``not held``
    some test's interval lies entirely on the other side;
``inside noise``
    otherwise: an interval holds the threshold (0 for a plain comparison);
``not testable``
    a :class:`Gate` failed: the models compared cannot carry the claim (a probe not
    above the majority class, a language model not below the bigram model, continued
    training that damaged its encoder, ...).  The failed gate is named.

A claim of several tests (e.g. "every fixed value beats the baseline") reports its
weakest test's effect and interval.  Seed or probe-run spread is reported in the
notebooks' tables, but it is not the test.

:func:`report` renders a notebook's claims and writes them, with every other
notebook's, to ``figures/<profile>/claims.csv`` and ``claims.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from prismlib.paths import figure_dir, locked
from prismlib.stats import Interval

VERDICTS: tuple[str, ...] = ("held", "not held", "inside noise", "not testable")
COLUMNS: tuple[str, ...] = ("notebook", "claim", "paper", "effect", "ci_low", "ci_high", "unit", "verdict", "gate", "test")


@dataclass(frozen=True)
class Test:
    """One directional comparison.

    Attributes:
        interval: the effect (e.g. ``A - B``) and its interval.
        sign: ``+1`` when the claim says the effect is above ``threshold``, ``-1`` below.
        threshold: what the effect is compared with (0 for "A beats B"; ``-5`` for
            "A is within 5 points of B" stated as ``A - B > -5``).
        label: what is compared, e.g. ``"LOW - ORIG"``.
    """

    interval: Interval
    sign: int = 1
    threshold: float = 0.0
    label: str = ""
    __test__ = False  # not a pytest test class

    def __post_init__(self) -> None:
        if self.sign not in (1, -1):
            raise ValueError(f"sign must be +1 (effect above threshold) or -1 (below), got {self.sign}")

    @classmethod
    def exact(cls, value: float, sign: int = 1, threshold: float = 0.0, label: str = "") -> Test:
        """A test of a quantity with no sampling noise (a mathematical check): its interval
        is the value itself, and ``units`` is 0."""
        return cls(Interval(float(value), float(value), float(value), 0), sign, threshold, label)

    @property
    def verdict(self) -> str:
        """``held``, ``not held`` or ``inside noise``."""
        if self.interval.contains(self.threshold):
            return "inside noise"
        above = self.interval.low > self.threshold
        return "held" if above == (self.sign > 0) else "not held"

    @property
    def margin(self) -> float:
        """Distance of the interval's far edge from the threshold on the claimed side
        (positive: held); the smallest margin marks a claim's weakest test."""
        edge = self.interval.low if self.sign > 0 else self.interval.high
        return self.sign * (edge - self.threshold)


@dataclass(frozen=True)
class Gate:
    """A sanity check a claim depends on.

    Attributes:
        name: what is checked, e.g. ``"ORIG probe beats the majority class"``.
        passed: whether it passed.
        detail: the numbers behind it, e.g. ``"ORIG 1.2% vs majority 4.8%"``.
    """

    name: str
    passed: bool
    detail: str = ""

    @classmethod
    def from_interval(cls, name: str, interval: Interval, sign: int = 1, detail: str = "") -> Gate:
        """Passed when the interval lies entirely above 0 (``sign=+1``) or below it (``-1``)."""
        passed = Test(interval, sign).verdict == "held"
        return cls(name, passed, detail or str(interval))

    @classmethod
    def not_below(cls, name: str, interval: Interval, detail: str = "") -> Gate:
        """Passed unless the interval lies entirely below 0 ("not clearly worse", e.g. an
        encoder after continued training against the one it started from)."""
        return cls(name, not interval.high < 0, detail or str(interval))

    def __str__(self) -> str:
        return f"{self.name} ({self.detail})" if self.detail else self.name


@dataclass(frozen=True)
class Claim:
    """A claim of the paper (or slides) and how this run tests it.

    Attributes:
        notebook: the notebook that tests it (``"02"``).
        claim: the claim as tested here, with the numbers (e.g. ``"LOW beats ORIG for topic"``).
        paper: what the paper or slides state (with their numbers where they give them).
        tests: the comparisons; all must hold for ``held``.
        gates: sanity checks; one failure makes the claim ``not testable``.
        unit: unit of the effect (``"points"``, ``"ppl"``, ...).
    """

    notebook: str
    claim: str
    paper: str
    tests: tuple[Test, ...]
    gates: tuple[Gate, ...] = ()
    unit: str = ""
    failed_gates: tuple[Gate, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.tests:
            raise ValueError(f"claim {self.claim!r} has no test; every verdict needs an interval")
        object.__setattr__(self, "tests", tuple(self.tests))
        object.__setattr__(self, "gates", tuple(self.gates))
        object.__setattr__(self, "failed_gates", tuple(g for g in self.gates if not g.passed))

    @property
    def weakest(self) -> Test:
        """The test closest to failing (the one reported)."""
        return min(self.tests, key=lambda t: t.margin)

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS`."""
        if self.failed_gates:
            return "not testable"
        verdicts = {t.verdict for t in self.tests}
        if "not held" in verdicts:
            return "not held"
        return "inside noise" if "inside noise" in verdicts else "held"

    def row(self) -> dict:
        """A row of ``claims.csv``."""
        t = self.weakest
        if self.failed_gates:
            gate = "failed: " + "; ".join(str(g) for g in self.failed_gates)
        elif self.gates:
            gate = "passed: " + "; ".join(g.name for g in self.gates)
        else:
            gate = ""
        sign = ">" if t.sign > 0 else "<"
        test = f"{t.label or 'effect'} {sign} {t.threshold:g}"
        if len(self.tests) > 1:
            test += f" (weakest of {len(self.tests)})"
        return {
            "notebook": self.notebook,
            "claim": self.claim,
            "paper": self.paper,
            "effect": t.interval.effect,
            "ci_low": t.interval.low,
            "ci_high": t.interval.high,
            "unit": self.unit,
            "verdict": self.verdict,
            "gate": gate,
            "test": test,
        }


def claims_frame(claims: Sequence[Claim]) -> pd.DataFrame:
    """One row per claim with the columns of :data:`COLUMNS`."""
    return pd.DataFrame([c.row() for c in claims], columns=list(COLUMNS))


def render(claims: Sequence[Claim], digits: int = 2) -> str:
    """Markdown table: verdict, claim, effect [95% interval], the paper's statement, gate."""
    lines = ["| verdict | claim | effect [95% CI] | paper | gate |", "|---|---|---|---|---|"]
    for c in claims:
        r = c.row()
        effect = f"{r['effect']:+.{digits}f} [{r['ci_low']:+.{digits}f}, {r['ci_high']:+.{digits}f}] {r['unit']}".strip()
        cells = [f"**{r['verdict']}**", r["claim"], f"{effect}<br>({r['test']})", r["paper"], r["gate"]]
        lines.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(lines)


def save_claims(claims: Sequence[Claim], profile: str) -> pd.DataFrame:
    """Merge ``claims`` into ``figures/<profile>/claims.csv`` and ``claims.md``.

    Rows of the notebooks in ``claims`` replace that notebook's earlier rows; the other
    notebooks' rows are kept, so a partial run updates only what it re-ran.

    Returns:
        The whole table, sorted by notebook (claim order kept within a notebook).
    """
    new = claims_frame(claims)
    out = figure_dir(profile)
    csv = out / "claims.csv"
    with locked(csv):
        return _merge_claims(new, csv, profile)


def _merge_claims(new: pd.DataFrame, csv: Path, profile: str) -> pd.DataFrame:
    """The read-modify-write of :func:`save_claims` (called under its lock)."""
    out = csv.parent
    if csv.exists():
        old = pd.read_csv(csv, dtype={"notebook": str}, keep_default_na=False)
        old = old[~old["notebook"].isin(set(new["notebook"]))]
        table = pd.concat([old.reindex(columns=list(COLUMNS)), new], ignore_index=True)
    else:
        table = new
    table = table.sort_values("notebook", kind="stable").reset_index(drop=True)
    tmp = csv.with_suffix(f".{os.getpid()}.tmp")
    table.to_csv(tmp, index=False)
    tmp.replace(csv)
    counts = table["verdict"].value_counts().reindex(list(VERDICTS), fill_value=0)
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    md = table.assign(
        effect=[f"{e:+.3g} [{lo:+.3g}, {hi:+.3g}] {u}".strip() for e, lo, hi, u in zip(table.effect, table.ci_low, table.ci_high, table.unit)]
    )[["notebook", "verdict", "claim", "effect", "paper", "gate"]]
    (out / "claims.md").write_text(
        f"# Claims tested on the `{profile}` profile\n\n{summary} (of {len(table)}). Effects with their 95% "
        "paired-bootstrap intervals over the test set's independent units; see prismlib/claims.py.\n\n"
        + md.to_markdown(index=False, disable_numparse=True)
        + "\n"
    )
    return table


def report(claims: Sequence[Claim], profile: str):
    """The last cell of a notebook: save the claims (:func:`save_claims`) and return them as Markdown."""
    from IPython.display import Markdown

    save_claims(claims, profile)
    return Markdown(render(claims))
