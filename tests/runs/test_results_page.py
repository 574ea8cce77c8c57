"""docs/results.md's "What each notebook found": at most five lines per notebook, written from
the claims; the committed page agrees with the committed claims."""

from __future__ import annotations

import pandas as pd

from prismlib.claims import read_claims
from prismlib.paths import OUTPUT_ENV, project_root
from prismlib.runs import results_page as nf


def _row(nb, claim, verdict, gate="", model=None, effect=1.0):
    return {"notebook": nb, "claim": claim, "verdict": verdict, "gate": gate, "model": model,
            "effect": effect, "ci_low": effect - 1, "ci_high": effect + 1, "unit": "points"}  # fmt: skip


def test_each_notebook_gets_its_counts_model_one_claim_per_verdict_and_what_stays_open():
    table = pd.DataFrame(
        [
            _row(3, "first held", "held", model="MiniLM + prism"),
            _row(3, "second held", "held", model="MiniLM + prism"),
            _row(3, "a refuted claim " + "word " * 60, "not held", model="MiniLM"),
            _row(3, "open one", "not testable", "failed: the encoder was pretrained with masked LM (no); other"),
            _row(3, "open two", "not testable", "failed: the encoder was pretrained with masked LM (no)"),
            _row(5, "noise", "inside noise"),
        ]
    )
    text = nf.notebook_findings(table, {"03": "03 · The prism layer"})
    sections = text.split("\n\n### ")
    assert sections[0].startswith("### 03 · The prism layer\n\n") and sections[1].startswith("05\n\n")  # no title: the number
    lines = [ln for ln in sections[0].splitlines() if ln.startswith("- ")]
    assert len(lines) == 4 and lines[0] == "- 5 claims: 2 held, 1 not held, 0 inside noise, 2 not testable; models: MiniLM + prism, MiniLM."
    assert lines[1].startswith("- Held: first held (+1") and "second held" not in text
    assert lines[2].startswith("- Not held: a refuted claim word") and "… (+1" in lines[2] and len(lines[2]) < nf.CLAIM_CHARS + 40
    assert lines[3] == "- Open: 2 not testable, 2 of them for want of: the encoder was pretrained with masked LM."


def test_the_committed_results_page_shows_the_committed_cpu_claims(monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(project_root()))
    page = (project_root() / "docs" / "results.md").read_text()
    expected = nf.notebook_findings(read_claims(project_root() / "figures" / "cpu" / "claims.csv"), nf.notebook_titles())
    start, end = nf.RESULTS_MARKERS
    assert page.split(start, 1)[1].split(end, 1)[0].strip() == expected, (
        "docs/results.md differs from figures/cpu/claims.csv: `python -m prismlib report --profile cpu --readme` rewrites it"
    )
    for section in expected.split("\n\n### "):
        assert sum(ln.startswith("- ") for ln in section.splitlines()) <= 5


def test_verdict_changes_match_claims_by_the_papers_statement_and_its_place_not_their_numbers():
    def claims(rows):
        return pd.DataFrame([{**_row(nb, claim, verdict, effect=effect), "paper": paper} for nb, paper, claim, verdict, effect in rows])

    old = claims([(3, "Table 1: topic", "ours 41.5% vs 27.4%", "not testable", 14.1), (3, "B.3", "first", "held", 2.0),
                  (3, "B.3", "second", "not held", -2.0), (4, "Fig. 5", "gone", "held", 1.0), (2, "other", "x", "held", 1.0)])  # fmt: skip
    new = claims([(3, "Table 1: topic", "ours 50.0% vs 30.0%", "held", 20.0), (3, "B.3", "first", "held", 3.0),
                  (3, "B.3", "second", "inside noise", 0.5), (4, "Fig. 5 new", "added", "not held", -1.0)])  # fmt: skip
    lines = nf.verdict_changes(old, new, ["03", "4"]).splitlines()
    assert lines[:2] == ["| notebook | the paper | before | after | moved |", "|:--|:--|:--|:--|:--|"]
    body = lines[2:]
    assert len(body) == 5 and not any("other" in ln for ln in body)  # notebook 02 not asked for
    assert (
        body[0].startswith("| 03 | Table 1: topic | not testable: +14.1 [") and "| held: +20 [" in body[0] and body[0].endswith("| yes |")
    )
    assert body[1].startswith("| 03 | B.3 | held: +2 [") and "| held: +3 [" in body[1] and body[1].endswith("|  |")  # same verdict
    assert body[2].startswith("| 03 | B.3 | not held: -2 [") and "| inside noise: +0.5 [" in body[2] and body[2].endswith("| yes |")
    assert (
        body[3].startswith("| 04 | Fig. 5 new | — | not held:")
        and body[4].startswith("| 04 | Fig. 5 | held: +1 [")
        and "| — | yes |" in body[4]
    )


def test_verdicts_moved_reads_the_old_claims_from_git_and_writes_the_table_between_its_markers(tmp_path, monkeypatch):
    import subprocess

    import pytest

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True, capture_output=True)

    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    claims = tmp_path / "figures" / "cpu" / "claims.csv"
    claims.parent.mkdir(parents=True)
    header = "notebook,paper,claim,verdict,effect,ci_low,ci_high,unit,gate,model\n"
    claims.write_text(header + "3,Table 1: topic,ours 41.5%,not testable,14.1,9.0,19.0,points,,MiniLM\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "before")
    claims.write_text(header + "3,Table 1: topic,ours 50.0%,held,20.0,15.0,25.0,points,,BERT\n")
    start, end = nf.MOVED_MARKERS
    page = tmp_path / "results.md"
    page.write_text(f"# Results\n\n{start}\nold table\n{end}\n\nafter\n")
    assert nf.update_verdicts_moved("HEAD", ["03"], page=page)
    text = page.read_text()
    assert text.startswith("# Results\n\n") and text.endswith(f"{end}\n\nafter\n") and "old table" not in text
    assert "Before: `figures/cpu/claims.csv` at " in text and "| 03 | Table 1: topic | not testable: +14.1 [" in text
    assert "| held: +20 [" in text and not nf.update_verdicts_moved("HEAD", ["03"], page=page)  # current: unchanged
    with pytest.raises(ValueError, match="no figures/cpu/claims.csv at commit 'nosuch'"):
        nf.claims_at("nosuch")
