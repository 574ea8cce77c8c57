"""What a report is built from (prismlib.runs.results): a notebook's title and first sentence."""

from __future__ import annotations

import nbformat

from prismlib.runs.results import describe, executed_sources


def test_describe_takes_the_title_and_first_sentence():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("# 09 · A title\n\n*Paper*, **section 2** (Eq. 1, Fig. 2 vs. Fig. 3). The rest\nof it.\n\nMore."),
    ]
    assert describe(nb) == ("09 · A title", "*Paper*, **section 2** (Eq. 1, Fig. 2 vs. Fig. 3).")


def test_the_line_a_work_b_notebook_printed_about_its_runs_is_found():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("runs = header(...)")
    line = "8 trained models: 8 from committed run records (trained at commit 4dc06f4ee4 on 2026-11-28, 8 jobs)"
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"loading\n{line}\nmore\n")]
    nb.cells = [nbformat.v4.new_markdown_cell("8 trained models: not an output"), cell]
    assert executed_sources(nb) == line
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="no trained models\n")]
    assert executed_sources(nb) == "no trained models"
    cell.outputs = []
    assert executed_sources(nb) is None
