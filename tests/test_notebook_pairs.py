"""Profiles, figure/table saving and the notebook pairing."""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from prismlib import plots
from prismlib.paths import project_root  # noqa: E402
from prismlib.profiles import PROFILES, get_profile  # noqa: E402
from prismlib.runs import notebook_sources

NOTEBOOKS = sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.py"))


def test_profiles_from_name_and_environment(monkeypatch):
    monkeypatch.delenv("PRISMLIB_PROFILE", raising=False)
    assert get_profile().name == "cpu"
    monkeypatch.setenv("PRISMLIB_PROFILE", "smoke")
    assert get_profile().name == "smoke"
    assert get_profile("paper").encoder == "bert-base-cased"
    with pytest.raises(ValueError, match="unknown profile 'fast'.*smoke, cpu, paper, dryrun"):
        get_profile("fast")
    assert {p.encoder for n, p in PROFILES.items() if n in ("smoke", "cpu")} == {"minilm"}
    assert get_profile("dryrun").encoder == "bert-base-cased-dryrun"


def test_device_override_from_environment(monkeypatch):
    monkeypatch.delenv("PRISMLIB_DEVICE", raising=False)
    assert get_profile("smoke").device == "cpu"
    monkeypatch.setenv("PRISMLIB_DEVICE", "cuda")
    smoke = get_profile("smoke")
    assert smoke.device == "cuda" and smoke.lstm == PROFILES["smoke"].lstm
    assert PROFILES["smoke"].device == "cpu"  # the table itself is unchanged
    monkeypatch.setenv("PRISMLIB_DEVICE", "cuda:1")
    assert get_profile("paper").device == "cuda:1"
    monkeypatch.setenv("PRISMLIB_DEVICE", "gpu")
    with pytest.raises(ValueError, match="PRISMLIB_DEVICE='gpu' is not a device"):
        get_profile("smoke")


def test_save_figure_and_table_write_both_formats(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    paths = plots.save_figure(fig, "demo", "smoke")
    plt.close(fig)
    assert [p.name for p in paths] == ["demo.png", "demo.pdf"]
    assert all(p.stat().st_size > 0 and p.parent == tmp_path / "figures" / "smoke" for p in paths)
    df = pd.DataFrame({"band": ["LOW", "HIGH"], "acc": [0.5, 0.25]})
    csv, md = plots.save_table(df, "demo", "smoke")
    assert pd.read_csv(csv).equals(df)
    assert md.read_text().splitlines()[0].startswith("| band")


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_pairs_agree(source: Path):
    paired = source.with_suffix(".ipynb")
    assert paired.exists(), f"{paired} is missing: run `make paired`"
    py_cells = [(c.cell_type, c.source) for c in jupytext.read(source).cells]
    nb_cells = [(c.cell_type, c.source) for c in jupytext.read(paired).cells]
    assert py_cells == nb_cells, f"{paired.name} is out of date with {source.name}: run `make paired`"


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_profile_parameter(source: Path):
    params = [c for c in jupytext.read(source).cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and 'os.environ.get("PRISMLIB_PROFILE", "cpu")' in params[0].source


def defined_functions(source: str) -> list[str]:
    """``"name (line N)"`` of every ``def`` (``async def`` too) at any depth of the Python
    ``source``, in line order: a notebook's ``.py`` holds its markdown as comments, so what
    this finds is in a code cell."""
    found = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [f"{n.name} (line {n.lineno})" for n in sorted(found, key=lambda n: n.lineno)]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_defines_no_function(source: Path):
    """A notebook reads like the paper section it reproduces: prose, parameters, a few calls
    into prismlib, a figure, a table. A function belongs in the library, typed, documented and
    tested, its inputs as arguments instead of the notebook's globals (docs/contributing.md)."""
    defs = defined_functions(source.read_text())
    assert not defs, f"{source.name} defines {', '.join(defs)}: move it into prismlib, beside the code of its concept, and call it"


def test_the_def_check_finds_a_def_at_any_depth_and_none_in_prose_or_a_lambda():
    src = (
        "# %% [markdown]\n# def in prose is no function\n\n# %%\nkey = lambda x: x\n"
        "for i in range(2):\n    def inner():\n        pass\nclass Rows:\n    async def fetch(self):\n        pass\n"
    )
    assert defined_functions(src) == ["inner (line 7)", "fetch (line 10)"]


def test_notebook_sources_filter():
    assert [p.stem for p in notebook_sources(["01"])] == ["01_spectral_filters"]
    with pytest.raises(ValueError, match="no notebook matches"):
        notebook_sources(["99"])


def test_manifest_keeps_every_notebook_and_merges_partial_runs(tmp_path):
    import json

    from prismlib.runs.manifest import update_record

    path = tmp_path / "smoke" / "manifest.json"
    path.parent.mkdir()
    for name, sec in [("02_b", 2.0), ("01_a", 1.0)]:
        update_record(path, name, record={"commit": "c1", "seconds": sec})
    written = json.loads(path.read_text())
    assert written["profile"] == "smoke" and written["format"] == 2
    assert written["seconds"] == {"01_a": 1.0, "02_b": 2.0} and written["total_seconds"] == 3.0
    # a partial run replaces only its own notebooks' records
    update_record(path, "01_a", record={"commit": "c2", "seconds": 1.5})
    written = json.loads(path.read_text())
    assert written["notebooks"]["01_a"]["commit"] == "c2" and written["notebooks"]["02_b"]["commit"] == "c1"
    assert written["seconds"] == {"01_a": 1.5, "02_b": 2.0}
    # an old manifest (one commit for the profile) is converted, its commit marked inherited
    path.write_text(json.dumps({"profile": "smoke", "git_commit": "old", "seconds": {"01_a": 1.0, "03_c": 4.0}}))
    update_record(path, "01_a", record={"commit": "new", "seconds": 1.2})
    written = json.loads(path.read_text())
    assert "git_commit" not in written and written["notebooks"]["01_a"] == {"commit": "new", "seconds": 1.2}
    assert written["notebooks"]["03_c"] == {"commit": "old", "seconds": 4.0, "inherited": True}


def _checked_cells(nb) -> list:
    """Cells whose outputs nbval compares under --nbval-lax (tag or first-lines comment marker)."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        comments = [ln.strip().lstrip("#").strip() for ln in cell.source.splitlines() if ln.strip().startswith("#")]
        if "nbval-check-output" in tags or "NBVAL_CHECK_OUTPUT" in comments:
            out.append(cell)
    return out


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_nbval_compares_at_least_two_cells(source: Path):
    """nbval is a regression test only where a cell asks it to compare outputs."""
    nb = jupytext.read(source.with_suffix(".ipynb"))
    titles = [c.metadata.get("title", "") for c in nb.cells if "NBVAL" in c.metadata.get("title", "").upper()]
    assert not titles, f'{source.name}: `# %% NBVAL_...` is a jupytext cell title that nbval never reads; use tags=["nbval-check-output"]'
    checked = _checked_cells(nb)
    assert len(checked) >= 2, f"{source.with_suffix('.ipynb').name} has {len(checked)} cell(s) checked by nbval; mark two key tables"
    assert all(c.get("outputs") for c in checked), f"{source.name}: a checked cell has no stored output to compare"


def test_checked_cell_detection():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("1", metadata={"tags": ["nbval-check-output"]}),
        nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\n2"),
        nbformat.v4.new_code_cell("3", metadata={"title": "NBVAL_CHECK_OUTPUT"}),  # the jupytext pitfall: not read
    ]
    assert [c.source[-1] for c in _checked_cells(nb)] == ["1", "2"]


def test_jupyterlab_opens_the_notebook_sources_as_notebooks():
    """jupytext's default viewer for .py, shipped as JupyterLab's app-level overrides
    (copied into the venv by `make venv` / `make lab-settings`)."""
    import json

    overrides = json.loads((project_root() / "jupyter" / "overrides.json").read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["python"] == "Jupytext Notebook"
    makefile = (project_root() / "Makefile").read_text()
    assert "cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json" in makefile
