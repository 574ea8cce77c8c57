"""The static report (prismlib.runs.report): built from the stored smoke notebooks and from a
results folder, every link resolving, a broken link caught, failed and incomplete notebooks
flagged, the index's sections in order. The modules it is built from have their own unit
tests (``test_results.py``, ``test_index_page.py``, ``test_links.py``)."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from prismlib.claims import Claim, Test, save_claims
from prismlib.paths import OUTPUT_ENV, project_root
from prismlib.runs.links import check_links, external_links
from prismlib.runs.report import build_report, main
from prismlib.runs.results import describe
from prismlib.stats import Interval

pytestmark = pytest.mark.slow  # `make test-fast` leaves these out (notebooks, subprocesses, a browser, real data)

NOTEBOOKS = sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def smoke_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The smoke report of the committed notebooks (an empty output root: no results/smoke/)."""
    root = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(OUTPUT_ENV, str(root / "out"))
        yield build_report("smoke", root / "site")


def test_smoke_report_lists_every_notebook_and_its_links_resolve(smoke_site):
    assert len(NOTEBOOKS) >= 8
    site = smoke_site.parent
    index = smoke_site.read_text()
    for path in NOTEBOOKS:
        title, _ = describe(nbformat.read(path, as_version=4))
        assert f"href='{path.stem}.html'" in index and html.escape(title) in index
        page = (site / f"{path.stem}.html").read_text()
        assert 'href="index.html"' in page and "data:image/png;base64," in page  # figures embedded
    assert "stored outputs" in index and "python -m prismlib reproduce --profile smoke" in index
    assert index.count("<h3><a href=") == len(NOTEBOOKS)  # each notebook's own claims table
    assert check_links(site) == []
    assert all(link.startswith("https://") for link in external_links(site))


def test_the_readme_pages_are_rendered_beside_the_notebooks_and_linked_from_the_index(smoke_site):
    site, index = smoke_site.parent, smoke_site.read_text()
    docs = sorted((project_root() / "docs").glob("*.md"))
    assert len(docs) >= 5
    for path in docs:
        title = next(line[2:] for line in path.read_text().splitlines() if line.startswith("# "))
        assert f"href='docs/{path.stem}.html'" in index and html.escape(title) in index
        page = (site / "docs" / f"{path.stem}.html").read_text()
        assert "href='../index.html'" in page and '.md"' not in page  # links between the pages point at pages
    assert check_links(site) == []


def test_report_from_results_has_manifest_claims_and_figures(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    results = out / "results" / "cpu"
    results.mkdir(parents=True)
    picked = [p for p in NOTEBOOKS if p.stem[:2] in ("05", "06")]
    for p in picked:
        shutil.copy(p, results / p.name)
    manifest = {"profile": "cpu", "git_commit": "abc123", "device": "cpu: test", "seconds": {picked[0].stem: 12.5}}
    (results / "manifest.json").write_text(json.dumps(manifest))
    save_claims([Claim("05", "chrono moves the biases", "slide 5", (Test(Interval(1.0, 0.5, 1.5, 20)),))], "cpu")
    figures = out / "figures" / "cpu"
    for name in ("fig_x.png", "fig_x.pdf", "fig_x.csv"):
        (figures / name).write_bytes(b"x")

    index_path = build_report("cpu", tmp_path / "site")
    site, index = index_path.parent, index_path.read_text()
    assert sorted(p.name for p in site.glob("*.html")) == [f"{p.stem}.html" for p in picked] + ["index.html"]
    assert "abc123" in index and "12.5 s" in index and "href='manifest.json'" in index
    assert f"<a href='{picked[0].stem}.html'>05</a>" in index and "chrono moves the biases" in index
    assert "href='figures/fig_x.pdf'" in index and "src='figures/fig_x.png'" in index
    assert "Not executed on this profile:" in index and "<code>01_spectral_filters</code>: never run on this profile" in index
    first = index.index("<h2 id='findings'>What it found</h2>")  # results before the contents and the notebooks
    assert first < index.index("<h2>Contents</h2>") < index.index("<h2 id='notebooks'>")
    assert "chrono moves the biases" in index[first : index.index("<h2>Contents</h2>")]  # 05's first decided claim
    assert (
        re.search(r"<b>0 of \d+ trained</b>", index) and "<code>python -m prismlib train --profile cpu-long --minutes 110</code>" in index
    )
    page = (site / f"{picked[0].stem}.html").read_text()
    assert re.search(r"LSTM runs:</strong> .* none of its \d+ runs has a committed record", page)
    assert check_links(site) == []
    (site / "figures" / "fig_x.pdf").unlink()
    assert check_links(site) == ["index.html: figures/fig_x.pdf (missing)"]
    build_report("cpu", site)  # an earlier report is replaced
    assert check_links(site) == []


def test_no_executed_notebooks_names_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="python -m prismlib reproduce --profile cpu"):
        build_report("cpu", tmp_path / "site")
    from prismlib.__main__ import main as cli

    assert cli(["report", "--profile", "paper"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("prismlib report: error: no executed notebooks") and len(err.strip().splitlines()) == 1
    assert "python -m prismlib reproduce --profile paper" in err


def test_refuses_to_replace_a_folder_that_is_not_a_report(tmp_path, monkeypatch):
    monkeypatch.setenv(OUTPUT_ENV, str(tmp_path / "out"))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not a prismlib report"):
        build_report("smoke", tmp_path / "mine")
    assert (tmp_path / "mine" / "keep.txt").exists()


def _results_with(out: Path, stems: tuple[str, ...], manifest: dict) -> Path:
    results = out / "results" / "cpu"
    results.mkdir(parents=True)
    for p in NOTEBOOKS:
        if p.stem[:2] in stems:
            shutil.copy(p, results / p.name)
    (results / "manifest.json").write_text(json.dumps(manifest))
    return results


def test_a_failed_notebook_is_flagged_in_red_and_its_claims_are_stale(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    five, six = (p.stem for p in NOTEBOOKS if p.stem[:2] in ("05", "06"))
    manifest = {
        "profile": "cpu",
        "format": 2,
        "notebooks": {
            five: {"commit": "c0ffee1234567", "seconds": 3.0},
            six: {
                "commit": "c0ffee1234567",
                "seconds": 4.0,
                "failure": {"time": "2026-11-24T00:00:00+00:00", "error": "ValueError: boom (cell [4])"},
            },
        },
    }
    _results_with(out, ("05", "06"), manifest)
    save_claims([Claim("05", "five holds", "slide 5", (Test(Interval(1.0, 0.5, 1.5, 20)),))], "cpu")
    save_claims([Claim("06", "six holds", "slide 6", (Test(Interval(1.0, 0.5, 1.5, 20)),))], "cpu")
    index_path = build_report("cpu", tmp_path / "site")
    index = index_path.read_text()
    assert "class='failed'" in index and "ValueError: boom (cell [4])" in index
    assert "1 <span class='v-held'>held</span>" in index and "1 <span class='v-stale'>stale</span>" in index
    first_screen = index[: index.index("<h2>Contents</h2>")]
    assert "six holds" not in first_screen and "Left out: the <span class='v-stale'>stale</span> claims of 06" in first_screen
    row = next(r for r in index.split("<tr>") if "six holds" in r)
    assert "v-stale" in row and "<s>held</s>" in row  # the old verdict is shown struck out, never as current
    page = (index_path.parent / f"{six}.html").read_text()
    assert "Not a valid result." in page and "ValueError: boom" in page
    assert main(["--profile", "cpu", "--out", str(tmp_path / "site")]) == 0  # the page of the last good run, flagged
    err = capsys.readouterr().err
    assert f"{six} is flagged as not a valid result" in err and 'make reproduce PROFILE=cpu ONLY="06"' in err
    assert main(["--profile", "cpu", "--out", str(tmp_path / "site"), "--strict"]) == 1  # CI


def test_a_result_that_read_fewer_claim_twins_than_are_there_now_is_not_current(tmp_path, monkeypatch):
    from prismlib.runs import installments
    from prismlib.runs.manifest import source_digests

    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    monkeypatch.setattr(installments, "twins_read", lambda profile, stem: ["aaaa"] if stem[:2] in ("05", "06", "07") else [])
    five, seven = (p.stem for p in NOTEBOOKS if p.stem[:2] in ("05", "07"))
    record = {"commit": "c0ffee1234567", "seconds": 3.0}
    manifest = {
        "profile": "cpu",
        "format": 2,
        "notebooks": {
            five: {**record, "sources": source_digests(project_root() / "notebooks" / f"{five}.py"), "twins": ["aaaa"]},
            seven: {**record, "sources": source_digests(project_root() / "notebooks" / f"{seven}.py")},
        },
    }
    _results_with(out, ("05", "07"), manifest)
    index = build_report("cpu", tmp_path / "site").read_text()
    assert "1 of 2 results are not current:" in index and "07</a> (the claims&#x27; committed twins changed since)" in index
    assert 'ONLY="07"' in index


def test_a_descriptive_row_is_rendered_as_not_testable_with_its_reason(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    five = next(p.stem for p in NOTEBOOKS if p.stem[:2] == "05")
    _results_with(out, ("05",), {"profile": "cpu", "format": 2, "notebooks": {five: {"commit": "c0ffee1234567", "seconds": 3.0}}})
    row = Claim(
        "05", "a gap inside the seed spread", "slide 5", (Test(Interval(0.4, 0.1, 0.7, 20), label="gap"),), descriptive="seed spread"
    )
    save_claims([row, Claim("05", "five holds", "slide 5", (Test(Interval(1.0, 0.5, 1.5, 20)),))], "cpu")
    index = build_report("cpu", tmp_path / "site").read_text()
    assert "1 <span class='v-held'>held</span>" in index and "1 <span class='v-not-testable'>not testable</span>" in index
    line = next(r for r in index.split("<tr>") if "a gap inside the seed spread" in r)
    assert "v-not-testable" in line and "+0.4" in line and "[+0.1, +0.7]" in line and "no verdict: seed spread" in line


def test_a_notebook_whose_cells_did_not_all_run_is_flagged(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    results = _results_with(out, ("05",), {"profile": "cpu", "git_commit": "abc", "seconds": {}})
    path = next(results.glob("05_*.ipynb"))
    nb = nbformat.read(path, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    last.execution_count, last.outputs = None, []  # an interrupted run that papermill wrote out
    nbformat.write(nb, path)
    index = build_report("cpu", tmp_path / "site").read_text()
    assert "not a complete run: code cell" in index and "did not execute" in index


def test_pages_have_no_progress_bars_machine_paths_cdn_scripts_or_raw_tex(smoke_site):
    site = smoke_site.parent
    for page in sorted(site.glob("*.html")):
        text = page.read_text()
        assert str(project_root()) not in text, page.name
        assert "mathjax" not in text.lower() and "require.min.js" not in text, page.name
        assert "it/s]" not in text and "IProgress not found" not in text, page.name
    assert "<math" in (site / "01_spectral_filters.html").read_text()
    assert not [p for p in site.rglob("*") if p.name.endswith((".lock", ".tmp"))]


def test_index_has_contents_banner_and_figures_grouped_by_notebook(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    results = out / "results" / "smoke"
    results.mkdir(parents=True)
    for p in NOTEBOOKS:
        if p.stem[:2] in ("05", "06"):
            shutil.copy(p, results / p.name)
    figures = out / "figures" / "smoke"
    figures.mkdir(parents=True)
    for name in ("exp2_exp3_fixed_bias.png", "exp1_chrono_init.csv", "zz_orphan.csv"):
        (figures / name).write_bytes(b"x")
    index = build_report("smoke", tmp_path / "site").read_text()
    assert "<nav><h2>Contents</h2>" in index and "href='#claims'" in index and "href='#figures'" in index
    assert "These numbers mean nothing about the papers." in index
    five, six = (p.stem for p in NOTEBOOKS if p.stem[:2] in ("05", "06"))
    figs = index[index.index("id='figures'") :]
    assert (
        figs.index(f"<h3><a href='{five}.html'>")
        < figs.index("exp1_chrono_init")
        < figs.index(f"<h3><a href='{six}.html'>")
        < figs.index("exp2_exp3_fixed_bias")
        < figs.index("zz_orphan")
    )
    assert index.index("id='figures'") < index.index("id='claims'")


def test_a_claim_without_effect_interval_or_gate_renders_and_a_failed_build_keeps_the_last_site(tmp_path, monkeypatch):
    """Issue 44: a `not testable` claim without an effect crashed the index (``'+.3g'`` of an empty
    string) and left a half-written site; the site is now built aside and moved in when whole."""
    out = tmp_path / "out"
    monkeypatch.setenv(OUTPUT_ENV, str(out))
    five = next(p.stem for p in NOTEBOOKS if p.stem[:2] == "05")
    _results_with(out, ("05",), {"profile": "cpu", "format": 2, "notebooks": {five: {"commit": "c0ffee1234567", "seconds": 3.0}}})
    csv = out / "figures" / "cpu" / "claims.csv"
    csv.parent.mkdir(parents=True)
    csv.write_text("notebook,claim,paper,effect,ci_low,ci_high,unit,verdict,gate,test\n05,nothing to scale,slide 5,,,,,not testable,,\n")
    site = tmp_path / "site"
    index = build_report("cpu", site).read_text()
    row = next(r for r in index.split("<tr>") if "nothing to scale" in r)
    assert "<span class='num'>—</span>" in row and "v-not-testable" in row
    before = sorted(p.relative_to(site) for p in site.rglob("*"))

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    with monkeypatch.context() as mp:
        mp.setattr("prismlib.runs.report.render_index", broken)
        with pytest.raises(RuntimeError, match="boom"):
            build_report("cpu", site)
    assert sorted(p.relative_to(site) for p in site.rglob("*")) == before and (site / "index.html").read_text() == index
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no build folder left behind
    csv.write_text("notebook,claim\n05,x\n")  # not a claims table: one error naming the file and the fix
    with pytest.raises(ValueError, match=r"claims.csv is not a claims table: it has no verdict column; delete it and re-run"):
        build_report("cpu", site)
    assert (site / "index.html").read_text() == index


def test_each_page_opens_with_links_to_its_claims_table_and_main_figure(smoke_site):
    """Issue 44: a page's results lay thousands of pixels down (notebook 03's Table 1)."""
    site = smoke_site.parent
    for path in NOTEBOOKS:
        page = (site / f"{path.stem}.html").read_text()
        results = page[page.index("Results:") :][:400]
        title = page.index("<h1")  # the notebook's own title: its prose follows
        assert page.index("report index") < page.index("Results:") < title, path.stem  # issue 77: results before the prose
        if "first-figure" in page:
            assert page.index("first-figure") < title, path.stem
        assert '<a href="#claims">' in results and page.count('id="claims"') == 1, path.stem
        if '<a href="#main-figure">' in results:
            assert page.count('id="main-figure"') == 1 and page.index('id="main-figure"') < page.index('id="claims"'), path.stem
    assert sum('<a href="#main-figure">' in (site / f"{p.stem}.html").read_text() for p in NOTEBOOKS) >= len(NOTEBOOKS) - 1
    assert sum("first-figure" in (site / f"{p.stem}.html").read_text() for p in NOTEBOOKS) >= len(NOTEBOOKS) - 1
