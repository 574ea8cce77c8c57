"""What a profile found, rendered from its claims table: the first screen of the report's index
and the README's "What it found" table.

:func:`work_summary` counts each work's verdicts and names the gate that most often left a
claim ``not testable``; :func:`headlines` picks each notebook's first decided claim (``held``
or ``not held``: the notebooks put the paper's main claim first); :func:`findings_markdown`
is the README's table, which :func:`update_readme` writes between :data:`README_MARKERS`
(a test keeps the committed README equal to the committed claims). No number here is
written by hand: every one is read from ``figures/<profile>/claims.csv``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from prismlib.claims import OUTCOMES, effect_parts, markdown_table, read_claims
from prismlib.paths import figure_dir, project_root

WORKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "A": ("Language Through a Prism (NeurIPS 2020)", ("01", "02", "03", "04", "09")),
    "B": ("Timescale-dependent LSTM language models (ICLR 2021)", ("05", "06", "07", "08", "10")),
}
"""Work -> (title, its notebooks' numbers)."""
DECIDED = ("held", "not held")
"""Verdicts that decide a claim (``inside noise`` and ``not testable`` leave it open)."""
README_MARKERS = ("<!-- findings: written by `python -m prismlib report --readme`; do not edit -->", "<!-- findings end -->")
"""The lines around the README's findings table."""


@dataclass(frozen=True)
class WorkSummary:
    """One work's verdict counts (over :data:`prismlib.claims.OUTCOMES`) and the gate that
    most often left its claims ``not testable`` (``""`` when none was), with how often."""

    work: str
    title: str
    notebooks: tuple[str, ...]
    counts: dict[str, int]
    top_gate: str
    top_gate_claims: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def decided(self) -> int:
        return sum(self.counts.get(v, 0) for v in DECIDED)


def failed_gate(gate: str) -> str:
    """The name of the first failed gate of a claim's gate text (``"failed: <name> (<detail>); ..."``),
    or the reason of a descriptive row (``"no verdict: <reason>"``); ``""`` for neither."""
    found = re.match(r"(?:failed|no verdict): (.*?)(?: \(|;|$)", gate)
    return found.group(1).strip() if found else ""


def _notebooks(table: pd.DataFrame) -> pd.Series:
    return table["notebook"].astype(str).str.zfill(2)


def work_summary(table: pd.DataFrame) -> list[WorkSummary]:
    """Each work of :data:`WORKS` with claims in ``table`` (a claims table, :func:`read_claims`)."""
    out = []
    nbs = _notebooks(table)
    for work, (title, notebooks) in WORKS.items():
        rows = table[nbs.isin(notebooks)]
        if rows.empty:
            continue
        counts = {v: int((rows["verdict"] == v).sum()) for v in OUTCOMES}
        gates = Counter(g for g in map(failed_gate, rows.loc[rows["verdict"] == "not testable", "gate"]) if g)
        top, n = gates.most_common(1)[0] if gates else ("", 0)
        out.append(WorkSummary(work, title, tuple(sorted(set(nbs[rows.index]))), counts, top, n))
    return out


def headlines(table: pd.DataFrame) -> pd.DataFrame:
    """Each notebook's first decided claim (rows of ``table`` in notebook order)."""
    decided = table[table["verdict"].isin(DECIDED)]
    return decided.groupby(_notebooks(decided), sort=True).head(1)


def effect_text(row: pd.Series) -> str:
    """A claims-table row's effect with its interval and unit (``—`` without an effect)."""
    return " ".join(effect_parts(float(row["effect"]), float(row["ci_low"]), float(row["ci_high"]), str(row["unit"])))


def findings_markdown(table: pd.DataFrame, profile_name: str) -> str:
    """The README's findings: per work, its claims and verdicts and the gate that most often left
    one open (a table), then each notebook's first decided claim (:func:`headlines`)."""
    rows = []
    for s in work_summary(table):
        lack = f"{s.top_gate_claims} of {s.counts['not testable']}: {s.top_gate}" if s.top_gate else ""
        rows.append(
            {
                "work": f"{s.work}. {s.title}",
                "notebooks": ", ".join(s.notebooks),
                "claims": s.total,
                "decided": s.decided,
                **{v: s.counts[v] for v in OUTCOMES},
                "the gate most often failed by a not-testable claim": lack,
            }
        )
    lead = (
        f"The committed `{profile_name}` run, counted from [`figures/{profile_name}/claims.md`](figures/{profile_name}/claims.md) "
        f"(each claim with its effect, interval, the paper's number and its gates; "
        f"`make report PROFILE={profile_name}` shows them):"
    )
    first = [
        f"- `{str(r['notebook']).zfill(2)}` **{r['verdict']}**: {r['claim']} ({effect_text(r)})" for _, r in headlines(table).iterrows()
    ]
    heads = "\n\nEach notebook's first decided claim:\n\n" + "\n".join(first) if first else ""
    return lead + "\n\n" + markdown_table(pd.DataFrame(rows)) + heads


def update_readme(profile_name: str = "cpu", readme: Path | None = None) -> bool:
    """Write :func:`findings_markdown` of ``profile_name``'s claims between the README's
    :data:`README_MARKERS`; returns whether the file changed.

    Raises:
        ValueError: the README lacks the markers (naming them and where they go).
    """
    block = findings_markdown(read_claims(figure_dir(profile_name) / "claims.csv"), profile_name)
    return write_block(readme or project_root() / "README.md", README_MARKERS, block, "its 'What it found' heading")


def write_block(readme: Path, markers: tuple[str, str], block: str, where: str) -> bool:
    """Replace what stands between the two ``markers`` lines of ``readme`` by ``block``;
    returns whether the file changed.

    Raises:
        ValueError: a marker is missing (naming both and ``where`` they go).
    """
    text = readme.read_text()
    start, end = markers
    if start not in text or end not in text:
        raise ValueError(f"{readme} has no such block: put the lines {start!r} and {end!r} under {where}")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{start}\n{block}\n{end}{tail}"
    if new != text:
        readme.write_text(new)
    return new != text
