"""Profiles, figure/table saving and the notebook pairing."""

from __future__ import annotations

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


def test_notebook_sources_filter():
    assert [p.stem for p in notebook_sources(["01"])] == ["01_spectral_filters"]
    with pytest.raises(ValueError, match="no notebook matches"):
        notebook_sources(["99"])


def test_manifest_keeps_every_notebook_and_merges_partial_runs(tmp_path):
    import json

    from prismlib.runs.notebooks import _write_manifest

    path = tmp_path / "manifest.json"
    manifest = {"profile": "smoke", "seconds": {}}
    seconds = manifest["seconds"]
    for name, sec in [("02_b", 2.0), ("01_a", 1.0)]:  # reproduce() updates this dict in place
        seconds[name] = sec
        _write_manifest(path, manifest, merge=False)
    written = json.loads(path.read_text())
    assert written["seconds"] == {"01_a": 1.0, "02_b": 2.0} and written["total_seconds"] == 3.0
    # a partial run picks up the other notebooks' durations from their executed copies
    (tmp_path / "03_c.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 4.04}}}))
    _write_manifest(path, {"profile": "smoke", "seconds": {"01_a": 1.5}}, merge=True)
    assert json.loads(path.read_text())["seconds"] == {"01_a": 1.5, "03_c": 4.0}
    # two partial runs in parallel: a notebook the other run finishes later is read fresh at
    # each write, never frozen at the value seen at this run's first write
    mine = {"profile": "smoke", "seconds": {"01_a": 1.5}}
    _write_manifest(path, mine, merge=True)
    (tmp_path / "03_c.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 9.0}}}))
    mine["seconds"]["02_b"] = 2.5
    _write_manifest(path, mine, merge=True)
    assert json.loads(path.read_text())["seconds"] == {"01_a": 1.5, "02_b": 2.5, "03_c": 9.0}
    assert mine["seconds"] == {"01_a": 1.5, "02_b": 2.5}


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
    assert not titles, f"{source.name}: `# %% NBVAL_...` is a jupytext cell title that nbval never reads; use tags=[\"nbval-check-output\"]"
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
