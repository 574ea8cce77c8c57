"""What each notebook found, in at most five lines, written from its claims: ``docs/results.md``.

:func:`notebook_findings` turns a claims table (``figures/<profile>/claims.csv``) into one
section per notebook: its verdict counts and the model that ran, then its first held, first
not-held and first inside-the-noise claim, each with its effect and interval, and what stays
open (the gate that most often left a claim ``not testable``). :func:`update_results_page`
writes it into ``docs/results.md`` between :data:`RESULTS_MARKERS` (``python -m prismlib report
--readme`` does, with the README's tables). :func:`verdict_changes` sets two claims tables side
by side, claim by claim, and :func:`update_verdicts_moved` writes that table for a re-run on
another model (``python -m prismlib report --verdicts-moved COMMIT NN ...``). No number is
written by hand.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd

from prismlib.claims import read_claims
from prismlib.paths import figure_dir, output_root, project_root
from prismlib.runs.findings import effect_text, failed_gate, write_block

RESULTS_MARKERS = ("<!-- notebooks: written by `python -m prismlib report --readme`; do not edit -->", "<!-- notebooks end -->")
"""The lines around the per-notebook sections of ``docs/results.md``."""
CLAIM_CHARS = 180
"""A claim is cut to this many characters (at a word) in a notebook's lines; ``claims.md`` has it whole."""
PAPER_CHARS = 110
"""The paper's side of a claim is cut to this many characters in :func:`verdict_changes`."""
MOVED_MARKERS = (
    "<!-- verdicts moved: written by `python -m prismlib report --verdicts-moved`; do not edit -->",
    "<!-- verdicts moved end -->",
)
"""The lines around the table of verdicts old -> new in ``docs/results.md``."""
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


def _outcome(row: pd.Series) -> str:
    """A claims row's verdict with its effect and interval, for one cell."""
    return f"{row['verdict']}: {effect_text(row)}" if pd.notna(row["effect"]) else str(row["verdict"])


def _numbered(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` indexed by (notebook, the paper's side, its occurrence): the claims a notebook
    makes of one statement of the paper come in the order the notebook writes them."""
    table = table.assign(notebook=table["notebook"].astype(str).str.zfill(2), paper=table["paper"].astype(str))
    return table.assign(nth=table.groupby(["notebook", "paper"]).cumcount()).set_index(["notebook", "paper", "nth"])


def verdict_changes(old: pd.DataFrame, new: pd.DataFrame, notebooks: list[str]) -> str:
    """A markdown table of ``notebooks``' claims, before (``old``) and after (``new``): one row
    per claim, matched by notebook, the paper's statement and its place among that statement's
    claims (a claim's own text carries its numbers, which move); the verdict with its effect and
    interval on each side, ``—`` on a side that lacks the claim, and whether the verdict moved.
    Both are claims tables (:func:`prismlib.claims.read_claims`)."""
    wanted = [nb.zfill(2) for nb in notebooks]
    before, after = _numbered(old), _numbered(new)
    keys = [k for k in after.index if k[0] in wanted] + [k for k in before.index if k[0] in wanted and k not in after.index]
    rows = ["| notebook | the paper | before | after | moved |", "|:--|:--|:--|:--|:--|"]
    for key in sorted(keys, key=lambda k: wanted.index(k[0])):
        was = _outcome(before.loc[key]) if key in before.index else "—"
        now = _outcome(after.loc[key]) if key in after.index else "—"
        same = key in before.index and key in after.index and before.loc[key, "verdict"] == after.loc[key, "verdict"]
        cell = short(key[1], PAPER_CHARS).replace("|", "/")
        rows.append(f"| {key[0]} | {cell} | {was} | {now} | {'' if same else 'yes'} |")
    return "\n".join(rows)


def claims_at(commit: str, profile_name: str = "cpu") -> tuple[str, pd.DataFrame]:
    """``figures/<profile_name>/claims.csv`` as committed at ``commit`` in the repository of the
    output folder (:func:`prismlib.paths.output_root`): (its short hash, the table).

    Raises:
        ValueError: git does not know ``commit``, or the file is not in it.
    """
    root = output_root()
    rel = f"figures/{profile_name}/claims.csv"
    found = subprocess.run(["git", "rev-parse", "--short", commit], cwd=root, capture_output=True, text=True)
    shown = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=root, capture_output=True, text=True)
    if found.returncode or shown.returncode:
        raise ValueError(f"no {rel} at commit {commit!r}: name a commit of this clone that has it (`git log -- {rel}`)")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "claims.csv").write_text(shown.stdout)
        return found.stdout.strip(), read_claims(Path(tmp) / "claims.csv")


def update_verdicts_moved(commit: str, notebooks: list[str], profile_name: str = "cpu", page: Path | None = None) -> bool:
    """Write :func:`verdict_changes` of ``notebooks`` between the claims at ``commit``
    (:func:`claims_at`) and those in the working tree into ``docs/results.md`` (or ``page``),
    between :data:`MOVED_MARKERS`, under a line naming the commit; returns whether it changed."""
    short_hash, old = claims_at(commit, profile_name)
    table = verdict_changes(old, read_claims(figure_dir(profile_name) / "claims.csv"), notebooks)
    block = f"Before: `figures/{profile_name}/claims.csv` at {short_hash}; after: as committed with this table.\n\n{table}"
    page = page or project_root() / "docs" / "results.md"
    return write_block(page, MOVED_MARKERS, block, "the section on the verdicts a re-run moved")


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
