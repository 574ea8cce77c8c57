"""A failed or interrupted notebook run never destroys the last good result; the manifest
records the failure and the report flags it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prismlib.paths import OUTPUT_ENV
from prismlib.runs.notebooks import NotebookFailed, execute_safely, main, reproduce
from prismlib.runs.report import build_report

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _write_then(error: BaseException):
    def execute(partial: Path) -> None:
        partial.write_text("half a notebook")
        raise error

    return execute


@pytest.mark.parametrize("error", [RuntimeError("cell 4 failed"), KeyboardInterrupt()])
def test_a_failed_or_interrupted_execution_leaves_the_result_byte_identical(tmp_path, error):
    result = tmp_path / "02_probing_filtered.ipynb"
    result.write_bytes(b'{"the": "last good run"}')
    before = result.read_bytes()
    with pytest.raises(type(error)):
        execute_safely(_write_then(error), result)
    assert result.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [result.name]  # no partial file left


def test_a_successful_execution_replaces_the_result(tmp_path):
    result = tmp_path / "01.ipynb"
    result.write_text("old")
    execute_safely(lambda partial: partial.write_text("new"), result)
    assert result.read_text() == "new" and len(list(tmp_path.iterdir())) == 1


def test_reproduce_records_the_failure_keeps_the_result_and_exits_non_zero(tmp_path, monkeypatch, capsys):
    import papermill

    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    results = out / "results" / "smoke"
    results.mkdir(parents=True)
    good = results / "01_spectral_filters.ipynb"
    shutil.copy(NOTEBOOKS[0], good)
    before = good.read_bytes()

    def fail(nb_in, nb_out, **kw):
        Path(nb_out).write_text("partial")
        raise RuntimeError("Exception encountered at cell 4\nDataNotFoundError: dataset file missing")

    monkeypatch.setattr(papermill, "execute_notebook", fail)
    with pytest.raises(NotebookFailed, match="DataNotFoundError: dataset file missing.*last good result was kept"):
        reproduce("smoke", ["01"])
    assert good.read_bytes() == before
    manifest = json.loads((results / "manifest.json").read_text())
    assert manifest["failures"]["01_spectral_filters"]["error"] == "RuntimeError: DataNotFoundError: dataset file missing"
    assert main(["--profile", "smoke", "--only", "01"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: notebook 01_spectral_filters failed")

    index = build_report("smoke", tmp_path / "site").read_text()
    assert "The last run of these notebooks failed" in index and "01_spectral_filters" in index

    def succeed(nb_in, nb_out, **kw):
        shutil.copy(NOTEBOOKS[0], nb_out)

    monkeypatch.setattr(papermill, "execute_notebook", succeed)
    reproduce("smoke", ["01"])
    manifest = json.loads((results / "manifest.json").read_text())
    assert manifest["failures"] == {} and manifest["notebooks"]["01_spectral_filters"]["git_commit"] == manifest["git_commit"]
    assert "The last run of these notebooks failed" not in build_report("smoke", tmp_path / "site").read_text()
