"""What a report is built from (prismlib.runs.results): a notebook's title and first sentence."""

from __future__ import annotations

import nbformat

from prismlib.runs.results import describe


def test_describe_takes_the_title_and_first_sentence():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("# 09 · A title\n\n*Paper*, **section 2** (Eq. 1, Fig. 2 vs. Fig. 3). The rest\nof it.\n\nMore."),
    ]
    assert describe(nb) == ("09 · A title", "*Paper*, **section 2** (Eq. 1, Fig. 2 vs. Fig. 3).")
