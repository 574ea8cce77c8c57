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

A row can also be descriptive (``Claim.descriptive`` says why): it reports its effect and
interval, and its verdict is ``not testable`` with that reason in the gate column ("no
verdict: ..."), e.g. a gap the source itself states inside its own seed spread.

A claim of several tests (e.g. "every fixed value beats the baseline") reports the test that
decided its verdict (:attr:`Claim.deciding`): for ``not held`` its counterexample, for ``inside
noise`` a test whose interval holds the threshold, for ``held`` the weakest test; the row gives
that test's effect, interval, side and threshold, and how many tests the claim has, so a reader
checks every verdict from the numbers printed beside it (:func:`agrees`).

The rules every claim follows:

* **Test the claim as stated.** "A beats B" states the smallest effect that matters
  (:meth:`Test.superiority`: ``held`` only when the interval lies above it); "X is absent,
  unchanged, comparable" is an equivalence test (:meth:`Test.equivalence`: ``held`` only
  when the whole interval lies inside the margin, ``not held`` when it lies outside).
* **Gate what decides the verdict.** ``gates`` must pass for any verdict; ``win_gates``
  belong to the conditions a ``held`` verdict would credit (a probe at the majority class
  can lose a comparison but never win one), or to a premise only a ``held`` verdict leans on
  (notebook 09: the all-pass control's check where that control is the rival): a failed win
  gate turns ``held`` into ``not testable`` and leaves the other verdicts as they are.
* **Enough independent units.** A test whose interval resamples fewer than
  :data:`MIN_UNITS` independent test units makes the claim ``not testable``, the count named.
* **Training variance, in one interval.** A contrast between trained models is tested on one
  interval that carries the spread over training seeds and over test units at once
  (:func:`with_seeds`, :func:`prismlib.stats.combined_interval`), never on two partial ones;
  the claim needs :data:`MIN_SEEDS` seeds of every trained model it reads. A row with one
  trained model per arm keeps the unit bootstrap and its test says so.
* **Controls and models.** A row names the model that produced it (``model``) and, where
  the paper's explanation has a control, whether the control accounts for the effect
  (``control``).

:func:`report` renders a notebook's claims and writes them, with every other
notebook's, to ``figures/<profile>/claims.csv`` and ``claims.md``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from prismlib.paths import figure_dir, locked
from prismlib.stats import Interval, combined_interval

VERDICTS: tuple[str, ...] = ("held", "not held", "inside noise", "not testable")
COLUMNS: tuple[str, ...] = (
    "notebook",
    "claim",
    "paper",
    "effect",
    "ci_low",
    "ci_high",
    "unit",
    "verdict",
    "gate",
    "test",
    "side",
    "threshold",
    "tests",
    "model",
    "control",
)
MIN_UNITS = 15
"""Fewest independent test units (resampled by the bootstrap) that can carry a verdict: the
19 test conversations of SWDA can, the 10 windows of a starved probe set cannot."""
MIN_SEEDS = 3
"""Training seeds per trained model a claim needs where training variance is part of the test
(work B's small effects, :mod:`prismlib.lstm.claims.verdicts`; every contrast between section 4's trained
arms, :mod:`prismlib.prism.seeds`): an interval over 2 seeds has 1 degree of freedom."""
OUTCOMES: tuple[str, ...] = VERDICTS
"""Everything the verdict column of ``claims.csv`` can hold: the four verdicts (a descriptive
row is ``not testable``, its reason in the gate column)."""
KINDS: tuple[str, ...] = ("directional", "equivalence")
SIDES: tuple[str, ...] = (">", "<", "within")
"""The ``side`` column: the deciding test's effect is claimed above (``>``) or below (``<``)
``threshold``, or ``within`` ``[-threshold, threshold]`` (an equivalence test)."""


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
    kind: str = "directional"
    __test__ = False  # not a pytest test class

    def __post_init__(self) -> None:
        if self.sign not in (1, -1):
            raise ValueError(f"sign must be +1 (effect above threshold) or -1 (below), got {self.sign}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "equivalence" and not self.threshold > 0:
            raise ValueError(f"an equivalence margin must be > 0, got {self.threshold}")

    @classmethod
    def superiority(cls, interval: Interval, margin: float, sign: int = 1, label: str = "") -> Test:
        """ "A beats B by an effect that matters": ``held`` when the interval lies beyond
        ``sign * margin`` (``margin >= 0``, e.g. 1 accuracy point, 0.05 nats), ``not held``
        when it lies entirely short of it, otherwise ``inside noise``."""
        if margin < 0:
            raise ValueError(f"the smallest effect that matters is a size >= 0, got {margin}; use sign for the direction")
        return cls(interval, sign, sign * float(margin), label)

    @classmethod
    def equivalence(cls, interval: Interval, margin: float, label: str = "") -> Test:
        """ "X is absent / unchanged / comparable" within ``margin`` (> 0): ``held`` when the
        whole interval lies inside ``[-margin, margin]``, ``not held`` when it lies entirely
        outside, otherwise ``inside noise`` (an interval too wide to tell)."""
        return cls(interval, 1, float(margin), label, "equivalence")

    @classmethod
    def exact(cls, value: float, sign: int = 1, threshold: float = 0.0, label: str = "") -> Test:
        """A test of a quantity with no sampling noise (a mathematical check): its interval
        is the value itself, and ``units`` is 0."""
        return cls(Interval(float(value), float(value), float(value), 0, resampled="none"), sign, threshold, label)

    @property
    def verdict(self) -> str:
        """``held``, ``not held`` or ``inside noise``."""
        iv, m = self.interval, self.threshold
        if self.kind == "equivalence":
            if -m <= iv.low and iv.high <= m:
                return "held"
            return "not held" if iv.low > m or iv.high < -m else "inside noise"
        if iv.contains(m):
            return "inside noise"
        above = iv.low > m
        return "held" if above == (self.sign > 0) else "not held"

    @property
    def margin(self) -> float:
        """Distance of the interval's far edge from the threshold on the claimed side
        (positive: held); the smallest margin marks a claim's weakest test. For an
        equivalence test: how far inside ``[-margin, margin]`` the interval's farther edge is."""
        if self.kind == "equivalence":
            return self.threshold - max(abs(self.interval.low), abs(self.interval.high))
        edge = self.interval.low if self.sign > 0 else self.interval.high
        return self.sign * (edge - self.threshold)

    @property
    def side(self) -> str:
        """One of :data:`SIDES`."""
        return "within" if self.kind == "equivalence" else (">" if self.sign > 0 else "<")

    @property
    def finite(self) -> bool:
        """Whether the effect and both ends of the interval are finite numbers."""
        iv = self.interval
        return all(math.isfinite(x) for x in (iv.effect, iv.low, iv.high))

    def noise(self) -> str:
        """What the interval's noise is, for the row's ``test`` column: ``"19 units x 3 seeds"``
        (both sources, :func:`with_seeds`), ``"19 units"`` (the test set only: one model per
        arm, or none trained), ``"3 runs"`` (training runs only) or ``"exact"``."""
        iv = self.interval
        if iv.resampled == "units+seeds":
            return f"{iv.units} units x {iv.seeds} seeds"
        return {"units": f"{iv.units} units", "runs": f"{iv.units} runs", "none": "exact"}.get(iv.resampled, iv.resampled)

    def describe(self) -> str:
        """What is tested, e.g. ``"LOW - ORIG > 1"`` or ``"|MID - ORIG| < 5"``."""
        label = self.label or "effect"
        if self.kind == "equivalence":
            return f"|{label}| < {self.threshold:g}"
        return f"{label} {'>' if self.sign > 0 else '<'} {self.threshold:g}"


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
        win_gates: checks of the conditions a ``held`` verdict would credit (e.g. the
            claimed best band above the majority class), or of a premise only a ``held``
            verdict leans on: a failure turns ``held`` into ``not testable``; ``not held``
            and ``inside noise`` stand.
        model: the model that produced the numbers (e.g. ``"all-MiniLM-L6-v2"``, not the
            paper's BERT, at cpu scale).
        control: whether a control accounts for the effect (e.g. "the untrained prism
            matches it: the filter, not the training"); empty where the claim has none.
        descriptive: non-empty makes the row descriptive (``not testable``): why it carries no verdict
            (its tests still give the effect and interval it reports).
    """

    notebook: str
    claim: str
    paper: str
    tests: tuple[Test, ...]
    gates: tuple[Gate, ...] = ()
    unit: str = ""
    win_gates: tuple[Gate, ...] = ()
    model: str = ""
    control: str = ""
    descriptive: str = ""
    failed_gates: tuple[Gate, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.tests:
            raise ValueError(f"claim {self.claim!r} has no test; every verdict needs an interval")
        object.__setattr__(self, "tests", tuple(self.tests))
        object.__setattr__(self, "gates", tuple(self.gates))
        object.__setattr__(self, "win_gates", tuple(self.win_gates))
        object.__setattr__(self, "failed_gates", tuple(g for g in self.gates if not g.passed) + self.unit_gates())

    def unit_gates(self) -> tuple[Gate, ...]:
        """A failed gate per test whose interval resamples fewer than :data:`MIN_UNITS`
        independent test units (intervals over runs or exact values are not counted)."""
        return tuple(
            Gate(f"at least {MIN_UNITS} independent test units", False, f"{t.label or 'effect'}: {t.interval.units}")
            for t in self.tests
            if t.interval.resampled in ("units", "units+seeds") and t.interval.units < MIN_UNITS
        )

    @property
    def deciding_gates(self) -> tuple[Gate, ...]:
        """The failed gates that make the claim ``not testable`` (empty if it is testable)."""
        if self.failed_gates:
            return self.failed_gates
        failed_wins = tuple(g for g in self.win_gates if not g.passed)
        return failed_wins if failed_wins and self._tested() == "held" else ()

    @property
    def weakest(self) -> Test:
        """The test closest to failing."""
        return min(self.tests, key=lambda t: t.margin)

    @property
    def deciding(self) -> Test:
        """The test the row prints: the one that decided the tests' verdict (the counterexample
        furthest past its threshold for ``not held``; the weakest test whose interval holds its
        threshold for ``inside noise``; the weakest test for ``held``). A not-testable or
        descriptive row prints the weakest test."""
        if self.descriptive or self.failed_gates:
            return self.weakest
        verdict = self._tested()
        return min((t for t in self.tests if t.verdict == verdict), key=lambda t: t.margin)

    def _tested(self) -> str:
        broken = [t.label or "effect" for t in self.tests if not t.finite]
        if broken:
            raise ValueError(
                f"claim {self.notebook} {self.claim!r}: the interval of {', '.join(broken)} is not finite; "
                "no verdict from it (a gate that names why the effect is missing makes the row not testable)"
            )
        verdicts = {t.verdict for t in self.tests}
        if "not held" in verdicts:
            return "not held"
        return "inside noise" if "inside noise" in verdicts else "held"

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS`; a descriptive row is ``not testable`` (its reason in the gate column)."""
        if self.descriptive:
            return "not testable"
        return "not testable" if self.deciding_gates else self._tested()

    def row(self) -> dict:
        """A row of ``claims.csv``: the deciding test's effect, interval, side and threshold
        (:attr:`deciding`), and the number of tests."""
        t = self.deciding
        deciding = self.deciding_gates
        if deciding:
            gate = "failed: " + "; ".join(str(g) for g in deciding)
        elif self.gates or self.win_gates:
            gate = "passed: " + "; ".join(g.name for g in (*self.gates, *self.win_gates) if g.passed)
            lost = [str(g) for g in self.win_gates if not g.passed]
            if lost:
                gate += "; failed, not deciding (a win gate takes away only a held verdict): " + "; ".join(lost)
        else:
            gate = ""
        test = f"{t.describe()} ({t.noise()})"
        if len(self.tests) > 1 and not (self.descriptive or self.failed_gates):
            role = {"not held": "the counterexample", "inside noise": "a test inside noise", "held": "the weakest"}[self.verdict]
            test += f"; {role} of {len(self.tests)} tests"
        elif len(self.tests) > 1:
            test += f"; the weakest of {len(self.tests)} tests"
        if self.descriptive:
            gate = f"no verdict: {self.descriptive}" + (f"; gates {gate}" if gate else "")
            test = f"reported: {t.label or 'effect'}"
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
            "side": t.side,
            "threshold": t.threshold,
            "tests": len(self.tests),
            "model": self.model,
            "control": self.control,
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
        if r["effect"] != r["effect"]:  # NaN: no effect to report (the claim's gates say why)
            effect = "—"
        claim = r["claim"] + (f"<br>model: {r['model']}" if r["model"] else "") + (f"<br>control: {r['control']}" if r["control"] else "")
        cells = [f"**{r['verdict']}**", claim, f"{effect}<br>({r['test']})", r["paper"], r["gate"]]
        lines.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(lines)


def effect_parts(effect: float, low: float, high: float, unit: str) -> tuple[str, ...]:
    """A claim's effect as the pieces a table shows, each kept whole: ``("+0.4", "[+0.1, +0.7]", "ppl")``;
    without an interval only the point and unit, without an effect (NaN: nothing to scale,
    the claim's gates say why) ``("—",)``."""
    if effect != effect:
        return ("—",)
    interval = f"[{low:+.3g}, {high:+.3g}]" if low == low and high == high else ""
    return tuple(p for p in (f"{effect:+.3g}", interval, str(unit)) if p)


def read_claims(csv: Path) -> pd.DataFrame:
    """A claims table written by :func:`save_claims` (``figures/<profile>/claims.csv``): every
    column of :data:`COLUMNS` (one an older table lacks is empty), ``effect``, ``ci_low`` and
    ``ci_high`` as floats (NaN where empty: a claim without an effect or interval).

    Raises:
        ValueError: naming the file and the fix, when it is not a claims table (unreadable,
            or without a ``notebook``, ``claim`` or ``verdict`` column).
    """
    fix = f"delete it and re-run the notebooks that write it (`make reproduce PROFILE={csv.parent.name}`)"
    try:
        table = pd.read_csv(csv, dtype={"notebook": str}, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ValueError(f"{csv} is not a claims table ({type(err).__name__}: {str(err).strip()}); {fix}") from None
    missing = [c for c in ("notebook", "claim", "verdict") if c not in table.columns]
    if missing:
        raise ValueError(f"{csv} is not a claims table: it has no {', '.join(missing)} column; {fix}")
    table = table.reindex(columns=list(COLUMNS), fill_value="")
    for col in ("effect", "ci_low", "ci_high", "threshold"):
        table[col] = pd.to_numeric(table[col], errors="coerce")
    return table


def agrees(verdict: str, low: float, high: float, side: str, threshold: float) -> bool:
    """Whether a printed interval ``[low, high]`` gives ``verdict`` by the rules of :class:`Test`
    (``side`` of :data:`SIDES`): what a reader checks on every decided row of ``claims.csv``."""
    if side == "within":
        tested = Test.equivalence(Interval(low, low, high, 0), threshold)
    elif side in (">", "<"):
        tested = Test(Interval(low, low, high, 0), 1 if side == ">" else -1, threshold)
    else:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    return tested.verdict == verdict


def disagreeing(table: pd.DataFrame) -> pd.DataFrame:
    """The decided rows of a claims table (:func:`read_claims`) whose printed interval does not
    give their verdict (:func:`agrees`); a decided row without a side or a finite interval is one."""
    decided = table[table["verdict"].isin(["held", "not held", "inside noise"])]
    ok = [
        isinstance(side, str) and side in SIDES and all(math.isfinite(x) for x in (lo, hi, thr)) and agrees(v, lo, hi, side, thr)
        for v, lo, hi, side, thr in zip(decided["verdict"], decided["ci_low"], decided["ci_high"], decided["side"], decided["threshold"])
    ]
    return decided[[not x for x in ok]]


def with_seeds(test: Test, seeds_a: Sequence[float], seeds_b: Sequence[float] | None = None) -> Test:
    """``test`` (on a bootstrap over test units of the seed-mean contrast) again on the one
    interval with both sources of variance (:func:`prismlib.stats.combined_interval`): the
    per-seed contrasts ``seeds_a`` (paired by seed, or one arm untrained), or each arm's
    per-seed statistic (``seeds_a``, ``seeds_b``: arms trained independently). Same sign,
    threshold, kind and label.

    Raises:
        ValueError: fewer than two seeds in an arm, a non-finite value (the message names the test).
    """
    try:
        iv = combined_interval(test.interval, seeds_a, seeds_b)
    except ValueError as err:
        raise ValueError(f"{test.describe()}: {err}") from None
    return Test(iv, test.sign, test.threshold, test.label, test.kind)


def markdown_table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown pipe table without padding (a cell's ``|`` escaped, line breaks as spaces)."""

    def cell(v: object) -> str:
        return "" if v is None or (isinstance(v, float) and v != v) else str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    return "\n".join(lines + ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)])


def save_claims(claims: Sequence[Claim], profile_name: str) -> pd.DataFrame:
    """Merge ``claims`` into ``figures/<profile>/claims.csv`` and ``claims.md``.

    Rows of the notebooks in ``claims`` replace that notebook's earlier rows; the other
    notebooks' rows are kept, so a partial run updates only what it re-ran.

    Returns:
        The whole table, sorted by notebook (claim order kept within a notebook).
    """
    new = claims_frame(claims)
    out = figure_dir(profile_name)
    csv = out / "claims.csv"
    with locked(csv):
        return _merge_claims(new, csv, profile_name)


def _merge_claims(new: pd.DataFrame, csv: Path, profile_name: str) -> pd.DataFrame:
    """The read-modify-write of :func:`save_claims` (called under its lock)."""
    out = csv.parent
    if csv.exists():
        old = read_claims(csv)
        old = old[~old["notebook"].isin(set(new["notebook"]))]
        table = pd.concat([old, new], ignore_index=True)
    else:
        table = new
    table = table.sort_values("notebook", kind="stable").reset_index(drop=True)
    tmp = csv.with_suffix(f".{os.getpid()}.tmp")
    table.to_csv(tmp, index=False)
    tmp.replace(csv)
    counts = table["verdict"].value_counts().reindex(list(OUTCOMES), fill_value=0)
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    md = table.assign(
        effect=[" ".join(effect_parts(e, lo, hi, u)) for e, lo, hi, u in zip(table.effect, table.ci_low, table.ci_high, table.unit)]
    )[["notebook", "verdict", "claim", "effect", "test", "paper", "gate", "model", "control"]]
    (out / "claims.md").write_text(
        f"# Claims tested on the `{profile_name}` profile\n\n{summary} (of {len(table)}). Effects with their 95% "
        "intervals: over the test set's independent units, and over the training seeds too where trained models "
        "are compared (the `test` column says which); each row prints the test that decided it; see docs/claims.md.\n\n"
        + markdown_table(md)
        + "\n"
    )
    return table


def report(claims: Sequence[Claim], profile_name: str, model: str = ""):
    """The last cell of a notebook: save the claims (:func:`save_claims`) and return them as
    Markdown. ``model`` names the model behind every claim that does not name its own."""
    from dataclasses import replace

    from IPython.display import Markdown

    claims = [replace(c, model=c.model or model) for c in claims]
    save_claims(claims, profile_name)
    return Markdown(render(claims))


# =========================================================================== effect stability


def effect_stability_gate(name: str, later: Interval, earlier: float, margin: float, earlier_at: str = "half the budget") -> Gate:
    """Passed when a claim's contrast has stopped moving between an earlier checkpoint and the end
    (work B: half the budget, or the last decay of the annealed schedule; section 4: the last decay).

    Args:
        name: the contrast, e.g. ``"ppl(X=70) - ppl(baseline)"``.
        later: the contrast at the end of training with its interval.
        earlier: the same contrast (point estimate) at the earlier checkpoint.
        margin: the claim's margin: the stated margin of an equivalence or
            non-inferiority claim, else the distance of the effect from the claim's
            threshold (:func:`claim_margin`). The contrast may move by at most half of it.
        earlier_at: where the earlier checkpoint was, for the gate's name and detail.

    Passed when ``|later.effect - earlier| <= margin / 2`` or ``earlier`` lies inside
    ``later``'s interval.
    """
    if not math.isfinite(earlier) or not math.isfinite(margin) or margin < 0:
        raise ValueError(f"earlier contrast and margin must be finite (margin >= 0), got {earlier} and {margin}")
    moved = later.effect - earlier
    passed = abs(moved) <= margin / 2 or later.contains(earlier)
    detail = (
        f"{'' if passed else 'not converged: '}contrast {earlier:+.2f} at {earlier_at} -> {later.effect:+.2f} "
        f"[{later.low:+.2f}, {later.high:+.2f}] at the end: moved {moved:+.2f}, allowed {margin / 2:.2f} (half the margin "
        f"{margin:.2f}) or inside the final interval"
    )
    return Gate(f"stable: {name} moved <= half its margin since {earlier_at}", passed, detail)


def claim_margin(effect: float, threshold: float = 0.0, stated: float | None = None) -> float:
    """The margin the effect-stability gate halves: ``stated`` (an equivalence or
    non-inferiority margin) where the claim gives one, else ``|effect - threshold|``."""
    return abs(stated) if stated is not None else abs(effect - threshold)


def stability_margin(test: Test) -> float:
    """The margin the effect-stability gate halves for ``test``: an equivalence test's stated
    margin, else the distance of the effect from the threshold (:func:`claim_margin`)."""
    if test.kind == "equivalence":
        return claim_margin(test.interval.effect, stated=test.threshold)
    return claim_margin(test.interval.effect, test.threshold)
