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

:func:`check_links` lists the relative links of the site that do not resolve (CI fails
on any); :func:`external_links` lists the absolute ones, which are never fetched.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

import nbformat
import pandas as pd

from prismlib.paths import output_root, project_root

MARKER = ".prismlib-report"  # marks a folder build_report may replace
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
FIGURE_ORDER = (".png", ".pdf", ".csv", ".md")
STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.5rem; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
td p { margin: 0.2rem 0; }
code { background: #f3f3f3; padding: 0 0.2rem; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.5rem 1rem; }
.num { text-align: right; white-space: nowrap; }
table.claims { table-layout: fixed; width: 100%; }
table.claims td { overflow-wrap: anywhere; }
table.claims .effect { text-align: right; }
table.claims .effect .num { display: inline-block; }
table.claims .effect small { display: block; }
.v-held { color: #1b7a1b; font-weight: bold; }
.v-not-held { color: #b00020; font-weight: bold; }
.v-inside-noise { color: #8a6d00; font-weight: bold; }
.v-not-testable { color: #666; font-weight: bold; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; padding: 0; list-style: none; }
.figures li { width: 16rem; }
.figures img { max-width: 100%; border: 1px solid #ddd; }
.figures figcaption { font-size: 0.9rem; }
.failed, tr.failed td { background: #fde7e9; color: #8a0015; }
p.failed { border-left: 4px solid #b00020; padding: 0.5rem 1rem; }
.warn { color: #8a4b00; }
.v-stale { color: #b00020; font-weight: bold; }
nav ol { columns: 2; }
"""
PAGE_STYLE = """
.failed { background: #fde7e9; color: #8a0015; border-left: 4px solid #b00020; padding: 0.5rem 1rem; }
.warn { color: #8a4b00; }
math[display="block"] { margin: 0.6rem 0; }
"""
MEANINGLESS = {
    "smoke": "runs a few documents and tiny models, only to check that every notebook runs",
    "dryrun": "runs random weights on generated data, only to exercise the paper profile's code",
}
"""Profiles whose claims cannot carry meaning, and why (a banner on their index)."""


@dataclass(frozen=True)
class Sources:
    """What a profile's report is built from.

    Attributes:
        profile: the profile's name.
        notebooks: the executed ``NN_*.ipynb``, in order.
        stored: ``True`` when they are the stored smoke outputs of ``notebooks/`` (no
            ``results/smoke/``), ``False`` when they are ``results/<profile>/``'s.
        manifest: ``results/<profile>/manifest.json``, or ``None`` when absent.
        figures: ``figures/<profile>/``, or ``None`` when absent or ``stored``.
        missing: notebooks of ``notebooks/`` with no executed copy here.
    """

    profile: str
    notebooks: tuple[Path, ...]
    stored: bool
    manifest: Path | None
    figures: Path | None
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Entry:
    """One notebook of the report: its page, what it reproduces, its run and its state.

    ``problem`` is empty for a complete result; else why it is not one (the last run
    failed, with its error, or a cell did not run): the index shows it in red and the
    notebook's claims as stale.  ``commit`` is the one the result was executed at
    (``inherited``: only known as the profile's, from an old manifest); ``changed`` names
    what differs now (``prismlib``, ``notebook``; ``?`` when unknown)."""

    stem: str
    title: str
    summary: str  # Markdown: the first sentence after the title
    seconds: float | None
    seconds_note: str  # where ``seconds`` comes from
    problem: str = ""
    commit: str = ""
    inherited: bool = False
    changed: tuple[str, ...] = ()
    dropped: int = 0  # progress outputs left out of the page

    @property
    def ok(self) -> bool:
        """True when the executed notebook is a complete result of its last run."""
        return not self.problem


def find_sources(profile: str) -> Sources:
    """The executed notebooks, manifest and figures of ``profile`` (see the module docstring).

    Raises:
        FileNotFoundError: the profile has no executed notebooks; the message names the
            command that makes them.
    """
    results = output_root() / "results" / profile
    executed = tuple(sorted(results.glob(NOTEBOOK_GLOB)))
    stored = not executed and profile == "smoke"
    if stored:
        executed = tuple(sorted((project_root() / "notebooks").glob(NOTEBOOK_GLOB)))
    if not executed:
        raise FileNotFoundError(
            f"no executed notebooks for profile {profile!r} in {results}; run "
            f"`python -m prismlib reproduce --profile {profile}` (or `make reproduce PROFILE={profile}`) first"
        )
    manifest = results / "manifest.json"
    figures = output_root() / "figures" / profile
    sources = {p.stem for p in (project_root() / "notebooks").glob("[0-9][0-9]_*.py")}
    return Sources(
        profile=profile,
        notebooks=executed,
        stored=stored,
        manifest=manifest if manifest.is_file() and not stored else None,
        figures=figures if figures.is_dir() and not stored else None,
        missing=tuple(sorted(sources - {p.stem for p in executed})),
    )


def describe(nb: nbformat.NotebookNode) -> tuple[str, str]:
    """``(title, summary)`` of a notebook: the ``# `` heading of its first Markdown cell and
    the first sentence of the paragraph after it (Markdown), which say what it reproduces."""
    first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    lines = first.strip().splitlines()
    title = lines[0].lstrip("#").strip() if lines and lines[0].startswith("#") else ""
    rest = "\n".join(lines[1:] if title else lines).strip()
    paragraph = rest.split("\n\n")[0].replace("\n", " ")
    # a sentence ends at . ! or ? (and closing emphasis, quotes or brackets) before a capital,
    # outside brackets ("(Eq. 1, Fig. 2 vs. Fig. 3)" does not end one)
    for match in re.finditer(r"[.!?][*_\"')]*(?=\s+[A-Z])", paragraph):
        sentence = paragraph[: match.end()]
        if sentence.count("(") == sentence.count(")"):
            return title, sentence
    return title, paragraph


def notebook_seconds(nb: nbformat.NotebookNode) -> tuple[float | None, str]:
    """Run time of an executed notebook and where it comes from: papermill's duration, else
    the span of the cells' execution timestamps (the kernel's start not included)."""
    duration = nb.metadata.get("papermill", {}).get("duration")
    if duration is not None:
        return round(float(duration), 1), "papermill"
    stamps = [
        datetime.fromisoformat(t.replace("Z", "+00:00"))
        for c in nb.cells
        for key in ("iopub.execute_input", "shell.execute_reply")
        if (t := c.get("metadata", {}).get("execution", {}).get(key))
    ]
    if len(stamps) < 2:
        return None, ""
    return round((max(stamps) - min(stamps)).total_seconds(), 1), "cell timestamps"


def build_report(profile: str | None = None, out_dir: str | Path | None = None) -> Path:
    """Write the report of ``profile`` (default ``$PRISMLIB_PROFILE`` or ``cpu``).

    Args:
        profile: smoke, cpu or paper.
        out_dir: the site's folder (default ``report/<profile>/``).  It is replaced when it
            is empty or an earlier report; any other existing folder is refused.

    Returns:
        Path of the site's ``index.html``.
    """
    return _build(profile, out_dir)[0]


def _build(profile: str | None, out_dir: str | Path | None) -> tuple[Path, list[Entry]]:
    """:func:`build_report`, also returning the notebooks' entries (their states)."""
    from prismlib.profiles import get_profile
    from prismlib.runs.manifest import changed_sources, read_manifest
    from prismlib.runs.notebooks import incomplete

    src = find_sources(get_profile(profile).name)
    site = Path(out_dir) if out_dir is not None else output_root() / "report" / src.profile
    _prepare(site)
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
        entry = Entry(
            path.stem, title or path.stem, summary, seconds, note, problem,
            str(record.get("commit") or ""), bool(record.get("inherited")), changed,
        )  # fmt: skip
        stored_claims[entry.stem] = _claims_output(nb)
        shutil.copy2(path, site / "notebooks" / path.name)
        page, dropped = _notebook_page(nb, entry, src)
        entries.append(replace(entry, dropped=dropped))
        (site / f"{entry.stem}.html").write_text(page)
    if src.figures:
        shutil.copytree(src.figures, site / "figures", ignore=shutil.ignore_patterns("*.lock", "*.tmp", ".*"))
    if src.manifest:
        shutil.copy2(src.manifest, site / "manifest.json")
    docs = _doc_pages(site)
    index = site / "index.html"
    index.write_text(_index_page(src, entries, manifest, stored_claims, site, docs))
    return index, entries


def _doc_pages(site: Path) -> list[tuple[str, str]]:
    """The README's pages, ``docs/*.md``, as ``site/docs/<name>.html`` (links between them kept);
    returns each page's ``(path in the site, title)``."""
    folder = project_root() / "docs"
    pages = []
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        text = path.read_text()
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
        body = re.sub(r"href=\"([\w-]+)\.md(#[^\"]*)?\"", r'href="\1.html\2"', _md(text))
        (site / "docs").mkdir(exist_ok=True)
        (site / "docs" / f"{path.stem}.html").write_text(
            f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><p><a href='../index.html'>the report's index</a></p>\n{body}</body></html>\n"
        )
        pages.append((f"docs/{path.stem}.html", title))
    return pages


def _prepare(site: Path) -> None:
    """Empty ``site`` for a new build, refusing a non-empty folder that is not a report."""
    if site.exists():
        if any(site.iterdir()) and not (site / MARKER).exists():
            raise FileExistsError(f"{site} exists and is not a prismlib report; choose another --out")
        shutil.rmtree(site)
    site.mkdir(parents=True)
    (site / MARKER).write_text("written by prismlib.runs.build_report; replaced by the next build\n")


def _seconds(entry: Entry) -> str:
    if entry.seconds is None:
        return "n/a"
    text = f"{entry.seconds:,.1f} s"
    return text if entry.seconds_note in ("manifest", "papermill") else f"&asymp; {text} ({entry.seconds_note})"


def _commit(entry: Entry) -> str:
    """The commit a result was executed at, as Markdown-safe HTML, with its flags."""
    if not entry.commit:
        return "commit unknown"
    text = f"<code>{html.escape(entry.commit[:10])}</code>" + (" (dirty)" if entry.commit.endswith("+dirty") else "")
    if entry.inherited:
        text += " <span class='warn'>(the profile's commit in an old manifest; the notebook may be older)</span>"
    if entry.changed == ("?",):
        text += " <span class='warn'>(unknown whether its sources changed since)</span>"
    elif entry.changed:
        text += f" <span class='warn'><b>{' and '.join(entry.changed)} changed since</b></span>"
    return text


def _notebook_page(nb: nbformat.NotebookNode, entry: Entry, src: Sources) -> tuple[str, int]:
    """One notebook as a self-contained HTML page (a header linking back to the index and
    saying how the result stands), without progress output or machine paths, its math as
    MathML; returns the page and how many progress outputs were left out."""
    from nbconvert import HTMLExporter

    from prismlib.data.datadir import data_dir
    from prismlib.runs import pages

    where = "stored smoke outputs of `notebooks/`" if src.stored else f"`results/{src.profile}/`"
    header = (
        f"[&larr; report index](index.html) &middot; profile `{src.profile}` &middot; run time {_seconds(entry)} "
        f"&middot; executed at {_commit(entry)} &middot; executed notebook ({where}): "
        f"[{entry.stem}.ipynb](notebooks/{entry.stem}.ipynb)"
    )
    if entry.problem:
        header += f"\n\n<p class='failed'><b>Not a valid result.</b> {html.escape(entry.problem)}</p>"
    nb = nbformat.from_dict(nb)  # a copy: nothing here is written back
    dropped = pages.clean_outputs(nb)
    if dropped:
        header += f" &middot; {dropped} progress outputs left out"
    roots = pages.project_roots(nb, {str(project_root()): "<project>", str(data_dir()): "<data>", str(Path.home()): "~"})
    pages.redact_notebook(nb, roots)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(header))
    math = pages.notebook_math(nb)
    body, _ = HTMLExporter(embed_images=True).from_notebook_node(nb, resources={"metadata": {"name": entry.title}})
    body = pages.strip_cdn_scripts(pages.fill_math(body, math))
    body = body.replace("</head>", f"<style>{PAGE_STYLE}</style></head>", 1)
    return body, dropped


def _claims_output(nb: nbformat.NotebookNode) -> str | None:
    """The Markdown claims table a notebook's last cell displays (:func:`prismlib.claims.report`)."""
    from prismlib.claims import render

    head = render([]).splitlines()[0]
    for cell in reversed(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get("text/markdown", "")
            if text.startswith(head):
                return text
    return None


def _md(text: str) -> str:
    """Markdown as HTML, its TeX as MathML (no MathJax on the index either)."""
    from nbconvert.filters import markdown2html

    from prismlib.runs.pages import fill_math, math_to_mathml

    math: dict[str, str] = {}
    return fill_math(markdown2html(math_to_mathml(text, math)), math)


def _index_page(
    src: Sources, entries: list[Entry], manifest: dict, stored_claims: dict, site: Path, docs: Sequence[tuple[str, str]] = ()
) -> str:
    """The index: contents, notebooks (state, commit, run time), the verdicts per notebook,
    figures by notebook, the full claims table, the manifest and the README's pages (``docs``)."""
    esc = html.escape
    parts = [
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>prism-companion: {esc(src.profile)} report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>prism-companion: the <code>{esc(src.profile)}</code> profile</h1>",
    ]
    if src.profile in MEANINGLESS:
        parts.append(
            f"<p class='failed'><b>These numbers mean nothing about the papers.</b> The <code>{esc(src.profile)}</code> "
            f"profile {esc(MEANINGLESS[src.profile])}; its verdicts only show that the claims are computed. "
            "Read the <code>cpu</code> (or <code>paper</code>) report for results.</p>"
        )
    parts.append(
        "<p>A reproducible companion to <em>Language Through a Prism</em> (Tamkin, Jurafsky &amp; Goodman, "
        "NeurIPS 2020) and timescale-dependent LSTM language models (Mahto et al., ICLR 2021). Built by "
        f"<code>python -m prismlib report --profile {esc(src.profile)}</code> (<code>make report</code>).</p>"
    )
    parts.append(f"<p>{currency_line(entries, src.profile)}</p>")
    bad = [e for e in entries if not e.ok]
    if bad:
        items = "".join(f"<li><a href='{e.stem}.html'>{esc(e.stem)}</a>: {esc(e.problem)}</li>" for e in bad)
        parts.append(
            f"<div class='failed'><p><b>{len(bad)} notebook(s) are not valid results</b>; their claims are marked "
            f"<span class='v-stale'>stale</span>:</p><ul>{items}</ul></div>"
        )
    if src.stored:
        parts.append(
            "<p class='note'><code>results/smoke/</code> is absent, so this report shows the <b>stored outputs of "
            "<code>notebooks/NN_*.ipynb</code></b> (the smoke run that <code>make test</code>'s nbval checks, "
            "refreshed by <code>make paired</code>). It has no run manifest and no figure files, and its claims "
            "are the notebooks' own claims cells; run times are estimated from the cells' timestamps. "
            "<code>python -m prismlib reproduce --profile smoke</code> writes all of them.</p>"
        )
    csv = site / "figures" / "claims.csv"
    table = pd.read_csv(csv, dtype={"notebook": str}, keep_default_na=False) if csv.exists() else None
    sections = [("notebooks", "Notebooks", _notebook_table(entries, src))]
    if table is not None:
        sections.append(("verdicts", "Verdicts per notebook", _verdict_summary(table, entries)))
    if (site / "figures").is_dir():
        sections.append(("figures", "Figures and tables by notebook", _figures_section(site / "figures", src.notebooks)))
    sections.append(("claims", "Claims", _claims_section(table, entries, stored_claims)))
    sections.append(("manifest", "Run manifest", _manifest_section(src, manifest)))
    if docs:
        items = "".join(f"<li><a href='{href}'>{html.escape(title)}</a></li>" for href, title in docs)
        sections.append(("docs", "Documentation", f"<ul>{items}</ul>"))
    toc = "".join(f"<li><a href='#{key}'>{title}</a></li>" for key, title, _ in sections)
    toc += "".join(f"<li><a href='{e.stem}.html'>{esc(e.title)}</a></li>" for e in entries)
    parts.append(f"<nav><h2>Contents</h2><ol>{toc}</ol></nav>")
    for key, title, body in sections:
        parts += [f"<h2 id='{key}'>{title}</h2>", body]
    parts.append("</body></html>\n")
    return _redact_index("\n".join(parts))


def _redact_index(page: str) -> str:
    """The index without the build machine's paths (the checkout, the data directory)."""
    from prismlib.data.datadir import data_dir
    from prismlib.runs.pages import path_patterns, redact_paths

    roots = {str(project_root()): "&lt;project&gt;", str(data_dir()): "&lt;data&gt;", str(Path.home()): "~"}
    return redact_paths(page, path_patterns(roots))


def currency_line(entries: list[Entry], profile: str) -> str:
    """One line (HTML): whether every result comes from this checkout's ``prismlib`` and
    notebook sources, else which are older and why, and the command that re-runs them."""
    old = [e for e in entries if e.changed or "+dirty" in e.commit or not e.commit or not e.ok]
    if not old:
        return f"<b>Current:</b> all {len(entries)} results ran from this checkout's <code>prismlib</code> and notebook sources."

    def why(e: Entry) -> str:
        if not e.ok:
            return "last run failed"
        if e.changed:
            return f"{' and '.join(e.changed)} changed since"
        return "run from uncommitted code" if "+dirty" in e.commit else "no record of its run"

    items = ", ".join(f"<a href='{e.stem}.html'>{e.stem[:2]}</a> ({html.escape(why(e))})" for e in old)
    only = " ".join(e.stem[:2] for e in old)
    return (
        f"<b class='warn'>{len(old)} of {len(entries)} results are not current:</b> {items}. "
        f'<code>make reproduce PROFILE={html.escape(profile)} ONLY="{only}"</code> runs them again.'
    )


def _notebook_table(entries: list[Entry], src: Sources) -> str:
    rows = []
    for e in entries:
        state = f"<b>failed</b><br><small>{html.escape(e.problem)}</small>" if e.problem else "ok"
        rows.append(
            f"<tr{' class=failed' if e.problem else ''}><td><a href='{e.stem}.html'>{html.escape(e.stem)}</a></td>"
            f"<td><b>{html.escape(e.title)}</b>{_md(e.summary)}</td><td>{state}</td><td>{_commit(e)}</td>"
            f"<td class='num'>{_seconds(e)}</td><td><a href='notebooks/{e.stem}.ipynb'>.ipynb</a></td></tr>"
        )
    timed = [e for e in entries if e.seconds is not None]
    total = f"{sum(cast(float, e.seconds) for e in timed):,.1f} s"
    if any(e.seconds_note not in ("manifest", "papermill") for e in timed):
        total = f"&asymp; {total}"
    if len(timed) < len(entries):
        total += f" ({len(entries) - len(timed)} without a time)"
    out = (
        "<table><tr><th>notebook</th><th>reproduces</th><th>state</th><th>executed at</th><th>run time</th>"
        "<th>executed</th></tr>\n" + "\n".join(rows) + f"\n<tr><td colspan='4'>total</td><td class='num'>{total}</td><td></td></tr></table>"
    )
    if src.missing:
        out += f"<p class='note'>Not executed on this profile: {html.escape(', '.join(src.missing))}.</p>"
    return out


def _verdict(v: str) -> str:
    return f"<span class='v-{v.replace(' ', '-')}'>{html.escape(v)}</span>"


def _pages(entries: list[Entry]) -> dict[str, Entry]:
    return {e.stem[:2]: e for e in entries}


def _verdict_summary(table: pd.DataFrame, entries: list[Entry]) -> str:
    """How many claims of each notebook got each verdict (stale for a failed notebook)."""
    from prismlib.claims import VERDICTS

    pages = _pages(entries)
    head = "".join(f"<th>{_verdict(v)}</th>" for v in VERDICTS)
    rows = []
    for nb, group in table.groupby(table["notebook"].str.zfill(2), sort=True):
        e = pages.get(nb)
        link = f"<a href='{e.stem}.html'>{html.escape(e.title)}</a>" if e else html.escape(nb)
        counts = group["verdict"].value_counts()
        cells = "".join(f"<td class='num'>{counts.get(v, 0) or ''}</td>" for v in VERDICTS)
        if e is not None and not e.ok:
            cells = f"<td colspan='{len(VERDICTS)}'>{_verdict('stale')}: the last run failed; {len(group)} claims of an older run</td>"
        rows.append(f"<tr{' class=failed' if e is not None and not e.ok else ''}><td>{link}</td>{cells}</tr>")
    return f"<table><tr><th>notebook</th>{head}</tr>" + "".join(rows) + "</table>"


GATE_SHOWN = 160
"""Characters of a claim's gate text shown in the claims table; the rest opens on a click."""


def _collapsed(text: str, shown: int = GATE_SHOWN) -> str:
    """``text`` escaped; when longer than ``shown`` characters, its start with the whole of
    it behind a ``<details>`` toggle (the gate details of a claim run to a paragraph)."""
    if len(text) <= shown:
        return html.escape(text)
    cut = text.rfind(" ", 0, shown)
    head = text[: cut if cut > shown // 2 else shown]
    return f"<details><summary>{html.escape(head)} …</summary>{html.escape(text)}</details>"


def _claims_section(table: pd.DataFrame | None, entries: list[Entry], stored_claims: dict) -> str:
    """``figures/<profile>/claims.csv`` as a table (notebooks linked; a failed notebook's
    claims marked stale), else each notebook's claims cell."""
    from prismlib.claims import VERDICTS

    pages = _pages(entries)
    if table is None:
        found = [(stem, md) for stem, md in stored_claims.items() if md]
        if not found:
            return "<p>No claims table: neither <code>figures/claims.csv</code> nor a claims cell in the notebooks.</p>"
        out = []
        for stem, md in found:
            e = pages.get(stem[:2])
            stale = f"<p>{_verdict('stale')}: {html.escape(e.problem)}</p>" if e is not None and not e.ok else ""
            out.append(f"<h3><a href='{stem}.html'>{html.escape(stem)}</a></h3>\n{stale}{_md(md)}")
        return "\n".join(out)
    stale_nbs = {nb for nb, e in pages.items() if not e.ok}
    nbs = table["notebook"].str.zfill(2)
    fresh = table[~nbs.isin(stale_nbs)]
    counts = fresh["verdict"].value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {_verdict(v)}" for v in VERDICTS)
    if len(fresh) < len(table):
        summary += f", {len(table) - len(fresh)} {_verdict('stale')}"
    rows = []
    for nb, r in zip(nbs, table.itertuples(index=False)):
        link = f"<a href='{pages[nb].stem}.html'>{nb}</a>" if nb in pages else html.escape(nb)
        parts = (f"{r.effect:+.3g}", f"[{r.ci_low:+.3g}, {r.ci_high:+.3g}]", str(r.unit))  # each kept whole, wrapped between
        effect = " ".join(f"<span class='num'>{html.escape(p)}</span>" for p in parts if p)
        verdict = _verdict(cast(str, r.verdict))
        if nb in stale_nbs:
            verdict = f"{_verdict('stale')}<br><small>was <s>{html.escape(cast(str, r.verdict))}</s></small>"
        rows.append(
            f"<tr><td>{link}</td><td>{verdict}</td><td>{html.escape(str(r.claim))}</td>"
            f"<td class='effect'>{effect}<small>{html.escape(str(r.test))}</small></td>"
            f"<td>{html.escape(str(r.paper))}</td><td><small>{_collapsed(str(r.gate))}</small></td></tr>"
        )
    return (
        f"<p>{summary} (of {len(table)}). Effects with their 95% paired-bootstrap intervals over the test set's "
        "independent units (<code>prismlib/claims.py</code>); the same table as "
        "<a href='figures/claims.csv'>claims.csv</a> and <a href='figures/claims.md'>claims.md</a>.</p>\n"
        "<table class='claims'><colgroup><col style='width:8%'><col style='width:9%'><col style='width:24%'>"
        "<col style='width:19%'><col style='width:21%'><col style='width:19%'></colgroup>\n"
        "<tr><th>notebook</th><th>verdict</th><th>claim</th><th>effect [95% CI]</th><th>paper</th><th>gate</th></tr>\n"
        + "\n".join(rows)
        + "</table>"
    )


WRITTEN_BY_CALL = {"lstm_learning_curves": "save_learning_curves("}
"""Tables a library function writes under its own name: the notebook that calls it owns them."""


def figure_owners(stems: list[str], notebooks: tuple[Path, ...]) -> dict[str, tuple[str, str]]:
    """Figure / table name -> (notebook stem, caption): the first notebook whose code names
    it in quotes (or calls the function that writes it, :data:`WRITTEN_BY_CALL`), and the
    heading (or first sentence) of the Markdown cell before that code."""
    out: dict[str, tuple[str, str]] = {}
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        caption = ""
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                lines = [ln.strip() for ln in cell.source.strip().splitlines() if ln.strip()]
                if lines:
                    first = lines[0].lstrip("#").strip() if lines[0].startswith("#") else describe_sentence(lines)
                    caption = first
                continue
            for stem in stems:
                named = f'"{stem}"' in cell.source or f"'{stem}'" in cell.source
                if stem not in out and (named or WRITTEN_BY_CALL.get(stem, "\0") in cell.source):
                    out[stem] = (path.stem, caption)
    return out


def describe_sentence(lines: list[str]) -> str:
    """The first sentence of a Markdown paragraph (at most 160 characters)."""
    text = " ".join(lines)
    match = re.search(r"[.!?](?=\s|$)", text)
    sentence = text[: match.end()] if match else text
    return sentence if len(sentence) <= 160 else sentence[:157] + "..."


def _figures_section(figures: Path, notebooks: tuple[Path, ...]) -> str:
    """Every figure (thumbnail, png and pdf) and table (csv and md) of ``figures/``, grouped
    by the notebook that writes it, in notebook order, each with its caption."""
    by_stem: dict[str, list[Path]] = {}
    for f in sorted(figures.iterdir()):
        if f.suffix in FIGURE_ORDER and f.stem != "claims":
            by_stem.setdefault(f.stem, []).append(f)
    owners = figure_owners(list(by_stem), notebooks)
    groups: dict[str, list[str]] = {}
    for stem in by_stem:
        groups.setdefault(owners.get(stem, ("zz", ""))[0], []).append(stem)
    out = []
    for nb in sorted(groups):
        title = f"<a href='{nb}.html'>{html.escape(nb)}</a>" if nb != "zz" else "written by no notebook of this report"
        items = []
        for stem in groups[nb]:
            files = sorted(by_stem[stem], key=lambda f: FIGURE_ORDER.index(f.suffix))
            links = " &middot; ".join(f"<a href='figures/{f.name}'>{f.suffix[1:]}</a>" for f in files)
            png = next((f for f in files if f.suffix == ".png"), None)
            thumb = f"<a href='figures/{png.name}'><img src='figures/{png.name}' alt='{stem}' loading='lazy'></a>" if png else ""
            caption = owners.get(stem, ("", ""))[1]
            cap = f"<br>{_md(caption) if caption else ''}"
            items.append(f"<li><figure>{thumb}<figcaption><code>{html.escape(stem)}</code>: {links}{cap}</figcaption></figure></li>")
        out.append(f"<h3>{title}</h3>\n<ul class='figures'>\n" + "\n".join(items) + "\n</ul>")
    return "\n".join(out)


def _json_html(value: object) -> str:
    """A JSON value as HTML: objects as two-column tables, lists of objects as tables."""
    if isinstance(value, dict):
        rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_json_html(v)}</td></tr>" for k, v in value.items())
        return f"<table>{rows}</table>"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        cols = list(dict.fromkeys(k for v in value for k in v))
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{_json_html(v.get(c, ''))}</td>" for c in cols) + "</tr>" for v in value)
        return f"<table><tr>{head}</tr>{body}</table>"
    if isinstance(value, list):
        return ", ".join(_json_html(v) for v in value)
    return html.escape("" if value is None else str(value))


def _manifest_section(src: Sources, manifest: dict) -> str:
    """Each notebook's run (commit, start, seconds, device; failures), the package
    versions of the runs, and the ``train`` runs."""
    if not manifest:
        return (
            f"<p>No run manifest (<code>results/{html.escape(src.profile)}/manifest.json</code>); "
            f"<code>python -m prismlib reproduce --profile {html.escape(src.profile)}</code> writes one.</p>"
        )
    runs: list[dict[str, Any]] = []
    versions: dict[str, list[str]] = {}
    for stem, r in manifest.get("notebooks", {}).items():
        failure = r.get("failure", {})
        runs.append({
            "notebook": stem, "commit": str(r.get("commit", ""))[:12] + (" (inherited)" if r.get("inherited") else ""),
            "started": r.get("started", ""), "seconds": r.get("seconds", ""), "device": r.get("device", ""),
            "last failure": f"{failure.get('time', '')}: {failure.get('error', '')}" if failure else "",
        })  # fmt: skip
        if r.get("packages"):
            versions.setdefault(json.dumps(r["packages"], sort_keys=True), []).append(stem)
    parts = [
        "<p>Written by <code>python -m prismlib reproduce</code>, one record per notebook (<a href='manifest.json'>manifest.json</a>).</p>",
        _json_html(runs),
    ]
    for packages, stems in versions.items():
        parts += [f"<h3>Package versions of {html.escape(', '.join(stems))}</h3>", _json_html(json.loads(packages))]
    if manifest.get("training"):
        parts += ["<h3>Training runs (<code>python -m prismlib train</code>)</h3>", _json_html(manifest["training"])]
    return "\n".join(parts)


class _LinkParser(HTMLParser):
    """Collects every ``href`` and ``src`` attribute of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("href", "src") and v is not None]


def _page_links(site: Path) -> list[tuple[Path, str]]:
    """``(page, link)`` for every ``href``/``src`` of every ``.html`` page under ``site``."""
    out = []
    for page in sorted(site.rglob("*.html")):
        parser = _LinkParser()
        parser.feed(page.read_text(encoding="utf-8"))
        out += [(page, link) for link in parser.links]
    return out


def check_links(site_dir: str | Path) -> list[str]:
    """The relative links of the site's pages that do not resolve to a file inside it.

    A fragment (``#id``, ``page.html#id``) and a query are dropped before resolving;
    links with a scheme (``https:``, ``data:``, ``mailto:``) are not checked (see
    :func:`external_links`).  A root-absolute path (``/x``) is broken: the site is
    opened from files, not served.

    Returns:
        ``"page: link (why)"`` for each broken link; empty when every link resolves.
    """
    site = Path(site_dir).resolve()
    broken = []
    for page, link in _page_links(site):
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # external, data: or mailto:, or a fragment of the page itself
        where = page.relative_to(site)
        if parts.path.startswith("/"):
            broken.append(f"{where}: {link} (absolute path)")
            continue
        target = (page.parent / unquote(parts.path)).resolve()
        if not target.is_relative_to(site):
            broken.append(f"{where}: {link} (outside the site)")
        elif not target.is_file():
            broken.append(f"{where}: {link} (missing)")
    return broken


def external_links(site_dir: str | Path) -> list[str]:
    """The distinct ``http(s)`` links of the site's pages (listed, never fetched)."""
    return sorted({link for _, link in _page_links(Path(site_dir)) if urlsplit(link).scheme in ("http", "https")})


def main(argv: list[str]) -> int:
    """``python -m prismlib report [--profile P] [--out DIR] [--screenshots] [--strict]``: build,
    then check every link; exit 1 on a broken link, and with ``--strict`` (CI) on a notebook
    flagged as failed (without it such a notebook's page is its last good run, flagged, and
    the command names the re-run that fixes it)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m prismlib report")
    parser.add_argument("--profile", default=None, help="smoke, cpu or paper (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument("--out", default=None, help="the site's folder (default: report/<profile>/)")
    parser.add_argument(
        "--screenshots", action="store_true",
        help="also keep a PNG of each page as a reader sees it (headless chromium) in <out>/screenshots/",
    )  # fmt: skip
    parser.add_argument("--strict", action="store_true", help="exit 1 when a notebook's last run failed or did not complete (CI)")
    parser.add_argument("--allow-failed", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old scripts
    args = parser.parse_args(argv)
    index, entries = _build(args.profile, args.out)  # errors: one line by python -m prismlib
    pages = sorted(index.parent.glob("*.html"))
    print(f"report: {index} ({len(pages)} pages)")
    failed = [e for e in entries if not e.ok]
    from prismlib.profiles import get_profile

    profile = get_profile(args.profile).name
    for e in failed:
        print(f"report: {e.stem} is flagged as not a valid result: {e.problem}", file=sys.stderr)
    if failed:
        only = " ".join(e.stem[:2] for e in failed)
        print(f"report: the flagged pages show the last good run; re-run them with `make reproduce PROFILE={profile} "
              f"ONLY=\"{only}\"`", file=sys.stderr)  # fmt: skip
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
