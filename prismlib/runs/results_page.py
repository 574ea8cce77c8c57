"""What each notebook found, in at most five lines, written from its claims: ``docs/results.md``.

:func:`notebook_findings` turns a claims table (``figures/<profile>/claims.csv``) into one
section per notebook: its verdict counts and the model that ran, then its first held, first
not-held and first inside-the-noise claim, each with its effect and interval, and what stays
open (the gate that most often left a claim ``not testable``). :func:`update_results_page`
writes it into ``docs/results.md`` between :data:`RESULTS_MARKERS` (``python -m prismlib report
--readme`` does, with the README's tables). No number is written by hand.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from prismlib.claims import read_claims
from prismlib.paths import figure_dir, project_root
from prismlib.runs.findings import effect_text, failed_gate, write_block

RESULTS_MARKERS = ("<!-- notebooks: written by `python -m prismlib report --readme`; do not edit -->", "<!-- notebooks end -->")
"""The lines around the per-notebook sections of ``docs/results.md``."""
CLAIM_CHARS = 180
"""A claim is cut to this many characters (at a word) in a notebook's lines; ``claims.md`` has it whole."""
SHOWN = (("held", "Held"), ("not held", "Not held"), ("inside noise", "Inside the noise"))
"""The verdicts a notebook's lines show one claim of, and how they name it."""


def short(text: str, chars: int = CLAIM_CHARS) -> str:
    """``text`` cut at the last word that fits in ``chars`` characters, with an ellipsis."""
    text = " ".join(str(text).split())
    if len(text) <= chars:
        return text
    return text[: chars - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def notebook_lines(rows: pd.DataFrame) -> list[str]:
    """At most five lines on one notebook's claims ``rows`` (a claims table's rows)."""
    counts = rows["verdict"].value_counts()
    models = [m for m in dict.fromkeys(rows["model"].dropna().astype(str)) if m]
    ran = f"; models: {', '.join(models)}" if models else ""
    verdicts = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("held", "not held", "inside noise", "not testable"))
    lines = [f"{len(rows)} claims: {verdicts}{ran}."]
    for verdict, name in SHOWN:
        first = rows[rows["verdict"] == verdict].head(1)
        for _, r in first.iterrows():
            lines.append(f"{name}: {short(r['claim'])} ({effect_text(r)}).")
    open_rows = rows[rows["verdict"] == "not testable"]
    gates = Counter(g for g in map(failed_gate, open_rows["gate"].fillna("")) if g)
    if gates:
        gate, n = gates.most_common(1)[0]
        lines.append(f"Open: {len(open_rows)} not testable, {n} of them for want of: {short(gate, 160)}.")
    return lines


def notebook_findings(table: pd.DataFrame, titles: dict[str, str]) -> str:
    """One section per notebook of ``table`` (``titles``: two-digit number -> the notebook's title)."""
    parts = []
    numbers = table["notebook"].astype(str).str.zfill(2)
    for nb in sorted(set(numbers)):
        lines = notebook_lines(table[numbers == nb])
        parts.append(f"### {titles.get(nb, nb)}\n\n" + "\n".join(f"- {line}" for line in lines))
    return "\n\n".join(parts)


def notebook_titles() -> dict[str, str]:
    """Two-digit number -> the title of each notebook in ``notebooks/`` (its first heading)."""
    import jupytext

    from prismlib.runs.results import describe

    return {p.name[:2]: describe(jupytext.read(p))[0] or p.stem for p in sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.py"))}


def update_results_page(profile_name: str = "cpu", page: Path | None = None) -> bool:
    """Write :func:`notebook_findings` of ``profile_name``'s claims into ``docs/results.md``
    between :data:`RESULTS_MARKERS`; returns whether the page changed."""
    table = read_claims(figure_dir(profile_name) / "claims.csv")
    page = page or project_root() / "docs" / "results.md"
    return write_block(page, RESULTS_MARKERS, notebook_findings(table, notebook_titles()), "its 'What each notebook found' heading")
