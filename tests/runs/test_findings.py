"""What a profile found (prismlib.runs.findings): verdicts counted per work, the gate that left
claims open named, each notebook's first decided claim, and the README's table kept equal to
the committed claims."""

from __future__ import annotations

import pandas as pd
import pytest

from prismlib.claims import COLUMNS, read_claims
from prismlib.paths import OUTPUT_ENV, project_root
from prismlib.runs.findings import README_MARKERS, failed_gate, findings_markdown, headlines, update_readme, work_summary


def _table(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """Claims rows ``(notebook, claim, verdict, gate)``, the other columns empty or NaN."""
    df = pd.DataFrame([dict.fromkeys(COLUMNS, "") | dict(zip(("notebook", "claim", "verdict", "gate"), r)) for r in rows])
    for col in ("effect", "ci_low", "ci_high"):
        df[col] = float("nan")
    return df


def test_the_failed_gate_is_the_name_before_its_detail():
    assert failed_gate("failed: converged: every model improved < 1% (not converged: 3 of 3)") == "converged: every model improved < 1%"
    assert failed_gate("failed: LMs beat the PTB bigram; BERT beats a unigram") == "LMs beat the PTB bigram"
    assert failed_gate("no verdict: seed spread") == "seed spread"
    assert failed_gate("passed: topic: ORIG probe beats the majority class") == ""


def test_verdicts_are_counted_per_work_with_the_gate_most_often_failed():
    table = _table(
        [
            ("01", "a", "held", ""),
            ("02", "b", "not testable", "failed: gate x (d)"),
            ("05", "c", "not testable", "failed: converged (d)"),
            ("07", "d", "not testable", "failed: converged (e)"),
            ("08", "e", "not testable", "failed: bigram (f)"),
            ("06", "f", "inside noise", ""),
        ]
    )
    a, b = work_summary(table)
    assert (a.work, a.notebooks, a.total, a.decided, a.counts["held"], a.top_gate, a.top_gate_claims) == (
        "A",
        ("01", "02"),
        2,
        1,
        1,
        "gate x",
        1,
    )
    assert (b.notebooks, b.counts["not testable"], b.counts["inside noise"], b.top_gate, b.top_gate_claims) == (
        ("05", "06", "07", "08"),
        3,
        1,
        "converged",
        2,
    )
    assert [s.work for s in work_summary(table[table["notebook"] == "01"])] == ["A"]  # a work without claims is left out


def test_headlines_are_each_notebooks_first_decided_claim():
    table = _table(
        [("02", "open", "inside noise", ""), ("02", "first", "not held", ""), ("02", "second", "held", ""), ("05", "x", "not testable", "")]
    )
    assert list(headlines(table)["claim"]) == ["first"]


def test_the_readme_shows_the_committed_cpu_claims(monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(project_root()))
    readme = (project_root() / "README.md").read_text()
    expected = findings_markdown(read_claims(project_root() / "figures" / "cpu" / "claims.csv"), "cpu")
    start, end = README_MARKERS
    assert readme.split(start, 1)[1].split(end, 1)[0].strip() == expected, (
        "README.md's findings differ from figures/cpu/claims.csv: `python -m prismlib report --profile cpu --readme` rewrites them"
    )


def test_update_readme_writes_between_the_markers_and_names_missing_ones(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    csv = tmp_path / "figures" / "cpu" / "claims.csv"
    csv.parent.mkdir(parents=True)
    _table([("01", "a claim", "held", "")]).to_csv(csv, index=False)
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n## What it found\n\n{README_MARKERS[0]}\nold\n{README_MARKERS[1]}\n\n## next\n")
    assert update_readme("cpu", readme) is True and update_readme("cpu", readme) is False
    text = readme.read_text()
    assert "old" not in text and "`01` **held**: a claim" in text and text.endswith("## next\n")
    readme.write_text("# x\n")
    with pytest.raises(ValueError, match="has no such block: put the lines"):
        update_readme("cpu", readme)
