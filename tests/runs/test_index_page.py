"""The report's index (prismlib.runs.index_page): a long gate text collapsed, the currency
line, the notebook that owns a table. The index of a built report is checked in
``test_report.py``."""

from __future__ import annotations

import nbformat

from prismlib.runs.index_page import GATE_SHOWN, _collapsed, currency_line, figure_owners
from prismlib.runs.results import Entry


def test_a_long_gate_text_is_collapsed_behind_its_start():
    short = "passed: baseline beats the bigram"
    assert _collapsed(short) == short
    long = "failed: converged (" + "x " * 200 + "<end>)"
    out = _collapsed(long)
    assert out.startswith("<details><summary>failed: converged (x x") and out.endswith("&lt;end&gt;)</details>")
    summary = out[len("<details><summary>") : out.index("</summary>")]
    assert len(summary) <= GATE_SHOWN + 2 and summary.endswith(" …")
    assert "&lt;end&gt;)" in out[out.index("</summary>") :]  # the whole text behind the toggle


def test_the_index_says_in_one_line_whether_the_results_are_current():
    ok = [Entry("01_a", "A", "", 1.0, "manifest", commit="abc"), Entry("02_b", "B", "", 1.0, "manifest", commit="abc")]
    assert currency_line(ok, "cpu").startswith("<b>Current:</b> all 2 results")
    old = [
        ok[0],
        Entry("02_b", "B", "", 1.0, "manifest", commit="abc", changed=("prismlib",)),
        Entry("03_c", "C", "", 1.0, "manifest", commit="abc+dirty"),
        Entry("04_d", "D", "", 1.0, "manifest", problem="last run failed", commit="abc"),
    ]
    line = currency_line(old, "cpu")
    assert "3 of 4 results are not current" in line and 'ONLY="02 03 04"' in line and line.endswith("runs them again.")
    costed = currency_line(old, "cpu", lambda stems: f"about {len(stems)} h")
    assert costed.endswith('ONLY="02 03 04"</code> runs them again: about 3 h.')
    assert "(prismlib changed since)" in line and "(run from uncommitted code)" in line and "(last run failed)" in line


def test_a_table_a_library_function_writes_belongs_to_the_notebook_that_calls_it(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Learning curves"), nbformat.v4.new_code_cell("save_learning_curves(runs, P.name)")]
    path = tmp_path / "05_x.ipynb"
    nbformat.write(nb, path)
    assert figure_owners(["lstm_learning_curves", "other"], (path,)) == {"lstm_learning_curves": ("05_x", "Learning curves")}


def test_a_claim_names_the_model_that_ran_and_the_interval_the_verdict_read():
    import pandas as pd

    from prismlib.runs.index_page import _claims_section

    row = {"notebook": "03", "verdict": "held", "effect": 1.0, "ci_low": 0.5, "ci_high": 1.5, "unit": "points",
           "test": "t", "paper": "p", "gate": "", "control": ""}  # fmt: skip
    table = pd.DataFrame(
        [{**row, "claim": "BERT + Prism beats BERT", "model": "all-MiniLM-L6-v2"}, {**row, "claim": "LSTM", "model": None}]
    )
    html = _claims_section(table, [], {})
    assert "BERT + Prism beats BERT<br><small>ran on: all-MiniLM-L6-v2</small>" in html  # issue 77: not BERT where MiniLM ran
    assert html.count("ran on:") == 1 and "over the training seeds too" in html
