"""The report: a profile's executed notebooks as a static HTML site (no server needed).

:func:`build_report` writes ``report/<profile>/`` (git-ignored):

* ``index.html``: each notebook with what it reproduces (the title and first sentence of
  its own first Markdown cell) and its run time, the claims table
  (``figures/<profile>/claims.csv``, :mod:`prismlib.claims`), the figures and tables, and
  the run manifest (``results/<profile>/manifest.json``: commit, device, versions);
* ``NN_name.html``: one page per notebook (nbconvert's ``HTMLExporter``, images embedded,
  so a page is one self-contained file);
* ``notebooks/NN_name.ipynb``, ``figures/``, ``manifest.json``: copies the index links to.

The notebooks are the executed copies in ``results/<profile>/`` written by ``python -m
prismlib reproduce``.  For the smoke profile, when ``results/smoke/`` is absent, the
report is built from the stored outputs of ``notebooks/NN_*.ipynb`` (the smoke run nbval
checks) and says so; it then has no manifest and no figure files, and its claims come
from the notebooks' own claims cells.

:mod:`prismlib.runs.results` finds the executed notebooks and describes each,
:mod:`prismlib.runs.pages` renders a notebook's page, :mod:`prismlib.runs.index_page`
the index, and :mod:`prismlib.runs.links` checks the site's links (``main`` fails on a
broken one).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import nbformat

from prismlib.paths import output_root, project_root
from prismlib.runs.index_page import render_index
from prismlib.runs.links import check_links, external_links
from prismlib.runs.pages import STYLE, claims_cell, markdown_html, notebook_page
from prismlib.runs.results import Entry, Sources, describe, find_sources, lstm_runs_line, notebook_seconds

MARKER = ".prismlib-report"  # marks a folder build_report may replace


def build_report(profile_name: str | None = None, out_dir: str | Path | None = None) -> Path:
    """Write the report of profile ``profile_name`` (default ``$PRISMLIB_PROFILE`` or ``cpu``).

    Args:
        profile_name: smoke, cpu or paper.
        out_dir: the site's folder (default ``report/<profile>/``).  It is replaced when it
            is empty or an earlier report; any other existing folder is refused.  The site
            is built in a folder beside it and moved into place only when whole: a failed
            build leaves the previous site as it was.

    Returns:
        Path of the site's ``index.html``.
    """
    return _build(profile_name, out_dir)[0]


def _build(profile_name: str | None, out_dir: str | Path | None) -> tuple[Path, list[Entry]]:
    """:func:`build_report`, also returning the notebooks' entries (their states)."""
    from prismlib.profiles import get_profile

    src = find_sources(get_profile(profile_name).name)
    site = Path(out_dir) if out_dir is not None else output_root() / "report" / src.profile
    _check_replaceable(site)
    site.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f".{site.name}.building-", dir=site.parent))
    try:
        entries = _write_site(src, build)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)  # the previous site stays as it was
        raise
    _move_into_place(build, site)
    return site / "index.html", entries


def _write_site(src: Sources, site: Path) -> list[Entry]:
    """Write the report of ``src`` into the empty folder ``site``; returns the notebooks' entries."""
    from prismlib.profiles import get_profile
    from prismlib.runs.installments import twins_read
    from prismlib.runs.manifest import changed_sources, read_manifest
    from prismlib.runs.reproduce import incomplete

    site.chmod(0o755)
    (site / MARKER).write_text("written by prismlib.runs.build_report; replaced by the next build\n")
    manifest = read_manifest(src.manifest) if src.manifest else {}
    records = manifest.get("notebooks", {})
    (site / "notebooks").mkdir()
    entries, stored_claims = [], {}
    for path in src.notebooks:
        nb = nbformat.read(path, as_version=4)
        title, summary = describe(nb)
        seconds, note = notebook_seconds(nb)
        record = records.get(path.stem, {})
        if record.get("seconds") is not None:
            seconds, note = record["seconds"], "manifest"
        problem = ""
        if "failure" in record:
            f = record["failure"]
            problem = f"last run failed ({f.get('time', '?')}): {f.get('error', '?')}; this page is the run before"
        elif (why := incomplete(nb)) is not None:
            problem = f"not a complete run: {why}"
        source = project_root() / "notebooks" / f"{path.stem}.py"
        changed = tuple(changed_sources(record, source)) if record and source.exists() else ()
        if record and not src.stored and record.get("twins", []) != twins_read(get_profile(src.profile), path.stem):
            changed += ("the claims' committed twins",)
        entry = Entry(
            path.stem,
            title or path.stem,
            summary,
            seconds,
            note,
            problem,
            str(record.get("commit") or ""),
            bool(record.get("inherited")),
            changed,
            runs=(None if src.stored else lstm_runs_line(path.stem, src.profile, nb)) or "",
        )
        stored_claims[entry.stem] = _claims_output(nb)
        shutil.copy2(path, site / "notebooks" / path.name)
        page, dropped = notebook_page(nb, entry, src)
        entries.append(replace(entry, dropped=dropped))
        (site / f"{entry.stem}.html").write_text(page)
    if src.figures:
        shutil.copytree(src.figures, site / "figures", ignore=shutil.ignore_patterns("*.lock", "*.tmp", ".*"))
    if src.manifest:
        shutil.copy2(src.manifest, site / "manifest.json")
    docs = _doc_pages(site)
    (site / "index.html").write_text(render_index(src, entries, manifest, stored_claims, site, docs))
    return entries


def _doc_pages(site: Path) -> list[tuple[str, str]]:
    """The README's pages, ``docs/*.md``, as ``site/docs/<name>.html`` (links between them kept);
    returns each page's ``(path in the site, title)``."""
    folder = project_root() / "docs"
    pages = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        text = path.read_text()
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
        body = re.sub(r"href=\"([\w-]+)\.md(#[^\"]*)?\"", r'href="\1.html\2"', markdown_html(text))
        (site / "docs").mkdir(exist_ok=True)
        (site / "docs" / f"{path.stem}.html").write_text(
            f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><p><a href='../index.html'>the report's index</a></p>\n{body}</body></html>\n"
        )
        pages.append((f"docs/{path.stem}.html", title))
    return pages


def _check_replaceable(site: Path) -> None:
    """Refuse ``site`` when it is a non-empty folder that is not a report (or not a folder)."""
    if site.exists() and (not site.is_dir() or (any(site.iterdir()) and not (site / MARKER).exists())):
        raise FileExistsError(f"{site} exists and is not a prismlib report; choose another --out")


def _move_into_place(build: Path, site: Path) -> None:
    """Replace ``site`` (absent, empty or an earlier report) by the whole new ``build``."""
    old = site.with_name(f".{site.name}.old-{os.getpid()}")
    if site.exists():
        site.rename(old)
    build.rename(site)
    shutil.rmtree(old, ignore_errors=True)


def _claims_output(nb: nbformat.NotebookNode) -> str | None:
    """The Markdown claims table a notebook's claims cell displays (:func:`prismlib.claims.report`)."""
    from prismlib.claims import render

    i = claims_cell(nb)
    if i is None:
        return None
    head = render([]).splitlines()[0]
    return next(t for out in nb.cells[i].outputs if (t := out.get("data", {}).get("text/markdown", "")).startswith(head))


def main(argv: list[str]) -> int:
    """``python -m prismlib report [--profile P] [--out DIR] [--screenshots] [--strict]``: build,
    then check every link; exit 1 on a broken link, and with ``--strict`` (CI) on a notebook
    flagged as failed (without it such a notebook's page is its last good run, flagged, and
    the command names the re-run that fixes it)."""
    import argparse

    from prismlib.profiles import get_profile
    from prismlib.runs.cli import CommandParser

    parser = CommandParser(prog="python -m prismlib report")
    parser.add_argument("--profile", default=None, help="smoke, cpu or paper (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument("--out", default=None, help="the site's folder (default: report/<profile>/)")
    parser.add_argument(
        "--screenshots",
        action="store_true",
        help="also keep a PNG of each page as a reader sees it (headless chromium) in <out>/screenshots/",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a notebook's last run failed or did not complete (CI)")
    parser.add_argument("--readme", action="store_true", help="also write README.md's 'What it found' and 'Three ways in'")
    parser.add_argument(
        "--verdicts-moved",
        nargs="+",
        metavar=("COMMIT", "NN"),
        default=None,
        help="also write docs/results.md's table of the named notebooks' verdicts at COMMIT -> now (a re-run on another model)",
    )
    parser.add_argument("--allow-failed", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old scripts
    args = parser.parse_args(argv)
    index, entries = _build(args.profile, args.out)  # errors: one line by python -m prismlib
    pages = sorted(index.parent.glob("*.html"))
    print(f"report: {index} ({len(pages)} pages)")
    if args.readme:
        from prismlib.runs.findings import update_readme
        from prismlib.runs.readme_costs import update_costs

        name = get_profile(args.profile).name
        changed = update_readme(name)
        print(f"report: README.md's findings {'rewritten' if changed else 'already current'}")
        changed = update_costs(name)
        print(f"report: README.md's ways in {'rewritten' if changed else 'already current'}")
        if name == "cpu":  # docs/results.md is the cpu run's page
            from prismlib.runs.readme_costs import update_run_times
            from prismlib.runs.results_page import update_results_page

            changed = update_results_page(name) | update_run_times(name)
            print(f"report: docs/results.md {'rewritten' if changed else 'already current'}")
    if args.verdicts_moved:
        from prismlib.runs.results_page import update_verdicts_moved

        commit, *notebooks = args.verdicts_moved
        if not notebooks:
            parser.error("--verdicts-moved needs a commit and at least one notebook number, e.g. --verdicts-moved 48b440a 03 04")
        changed = update_verdicts_moved(commit, notebooks, get_profile(args.profile).name)
        print(f"report: docs/results.md's verdicts moved {'rewritten' if changed else 'already current'}")
    failed = [e for e in entries if not e.ok]
    profile_name = get_profile(args.profile).name
    for e in failed:
        print(f"report: {e.stem} is flagged as not a valid result: {e.problem}", file=sys.stderr)
    if failed:
        only = " ".join(e.stem[:2] for e in failed)
        print(
            f'report: the flagged pages show the last good run; re-run them with `make reproduce PROFILE={profile_name} ONLY="{only}"`',
            file=sys.stderr,
        )
    external = external_links(index.parent)
    if external:
        print(f"external links (not fetched): {', '.join(external)}")
    unreadable: list[str] = []
    if args.screenshots:
        from prismlib.runs.browser import FULL_PAGE_MAX, measure_page, screenshot

        for page in pages:
            m = measure_page(page)
            shot = screenshot(page, index.parent / "screenshots" / f"{page.stem}.png", height=min(m.height, FULL_PAGE_MAX))
            print(f"screenshot: {shot.relative_to(index.parent)} (page {m.height} px tall, output streams {m.streams} px)")
            unreadable += m.problems(page.name)
        for problem in unreadable:
            print(f"report: {problem}", file=sys.stderr)
    broken = check_links(index.parent)
    for b in broken:
        print(f"broken link: {b}", file=sys.stderr)
    return 1 if broken or unreadable or (failed and args.strict) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
