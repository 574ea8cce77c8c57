"""A notebook page's pointers to its results (prismlib.runs.pages): the claims cell and the main
figure found, anchored and linked from the page's first line."""

from __future__ import annotations

import nbformat

from prismlib.claims import Claim, Test, render
from prismlib.runs.pages import claims_cell, main_figure
from prismlib.stats import Interval


def _notebook(*sources: str, claims: bool = True) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if claims:
        cell = nbformat.v4.new_code_cell("report(claims, P.name)")
        table = render([Claim("05", "x", "p", (Test(Interval(1.0, 0.5, 1.5, 20)),))])
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/markdown": table}, execution_count=1)]
        nb.cells.append(cell)
    return nb


def test_the_main_figure_is_the_first_of_the_papers_else_the_first_saved():
    nb = _notebook('save_figure(fig, "mlm_training_loss", P.name)', "x = 1", "save_figure(g.figure, 'table1_prism', P.name)")
    assert main_figure(nb) == (2, "table1_prism")
    assert main_figure(_notebook('save_figure(fig, "memory_cell_state_change", P.name)')) == (0, "memory_cell_state_change")
    assert main_figure(_notebook("plt.show()")) is None


def test_the_claims_cell_is_the_one_displaying_the_claims_table():
    assert claims_cell(_notebook("x = 1", "y = 2")) == 2
    assert claims_cell(_notebook("x = 1", claims=False)) is None


def test_the_first_screen_shows_what_the_notebook_found_and_its_main_figure(tmp_path):
    import pandas as pd

    from prismlib.runs.pages import first_screen

    fig = nbformat.v4.new_code_cell("save_figure(fig, 'fig4_probing', P.name)")
    fig.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=\n", "text/plain": "<Figure>"})]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 02 · Probing"), fig])
    claims = tmp_path / "claims.csv"
    row = {
        "claim": "LOW is best for topic",
        "effect": 64.3,
        "ci_low": 60.8,
        "ci_high": 67.9,
        "unit": "points",
        "gate": "",
        "model": "MiniLM",
    }
    pd.DataFrame([{"notebook": 2, "verdict": "held", **row}, {"notebook": 3, "verdict": "not held", **row}]).to_csv(claims, index=False)
    screen = first_screen(nb, "02_probing_filtered", claims, "02 · Probing")
    assert screen.startswith("**02 · Probing: what it found** ([every claim](#claims)")
    assert "- 1 claims: 1 held, 0 not held" in screen and "- Held: LOW is best for topic (+64.3 [+60.8, +67.9] points)." in screen
    assert "not held: " not in screen.lower().split("0 not held")[-1]  # notebook 3's row is not shown
    assert screen.endswith("<img class='first-figure' alt='main figure: fig4_probing' src='data:image/png;base64,iVBORw0KGgo='>")
    assert first_screen(nb, "02_probing_filtered", None).startswith("<img class='first-figure'")  # no claims table: the figure
    assert first_screen(nbformat.v4.new_notebook(cells=[]), "02_x", None) == ""
