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
from dataclasses import dataclass
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
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
.v-held { color: #1b7a1b; font-weight: bold; }
.v-not-held { color: #b00020; font-weight: bold; }
.v-inside-noise { color: #8a6d00; font-weight: bold; }
.v-not-testable { color: #666; font-weight: bold; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; padding: 0; list-style: none; }
.figures li { width: 16rem; }
.figures img { max-width: 100%; border: 1px solid #ddd; }
"""


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
    """One notebook of the report: its page, what it reproduces and its run time."""

    stem: str
    title: str
    summary: str  # Markdown: the first sentence after the title
    seconds: float | None
    seconds_note: str  # where ``seconds`` comes from


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
    from prismlib.profiles import get_profile

    src = find_sources(get_profile(profile).name)
    site = Path(out_dir) if out_dir is not None else output_root() / "report" / src.profile
    _prepare(site)
    manifest = json.loads(src.manifest.read_text()) if src.manifest else {}
    (site / "notebooks").mkdir()
    entries, stored_claims = [], {}
    for path in src.notebooks:
        nb = nbformat.read(path, as_version=4)
        title, summary = describe(nb)
        seconds, note = notebook_seconds(nb)
        if path.stem in manifest.get("seconds", {}):
            seconds, note = manifest["seconds"][path.stem], "manifest"
        entry = Entry(path.stem, title or path.stem, summary, seconds, note)
        entries.append(entry)
        stored_claims[entry.stem] = _claims_output(nb)
        shutil.copy2(path, site / "notebooks" / path.name)
        (site / f"{entry.stem}.html").write_text(_notebook_page(nb, entry, src))
    if src.figures:
        shutil.copytree(src.figures, site / "figures", ignore=shutil.ignore_patterns("*.lock", "*.tmp"))
    if src.manifest:
        shutil.copy2(src.manifest, site / "manifest.json")
    index = site / "index.html"
    index.write_text(_index_page(src, entries, manifest, stored_claims, site))
    return index


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


def _notebook_page(nb: nbformat.NotebookNode, entry: Entry, src: Sources) -> str:
    """One notebook as a self-contained HTML page, with a header linking back to the index."""
    from nbconvert import HTMLExporter

    where = "stored smoke outputs of `notebooks/`" if src.stored else f"`results/{src.profile}/`"
    header = (
        f"[&larr; report index](index.html) &middot; profile `{src.profile}` &middot; run time {_seconds(entry)} "
        f"&middot; executed notebook ({where}): [{entry.stem}.ipynb](notebooks/{entry.stem}.ipynb)"
    )
    nb = nbformat.from_dict(nb)  # a copy: the header cell is not written back
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(header))
    body, _ = HTMLExporter(embed_images=True).from_notebook_node(nb, resources={"metadata": {"name": entry.title}})
    return body


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
    from nbconvert.filters import markdown2html

    return markdown2html(text)


def _index_page(src: Sources, entries: list[Entry], manifest: dict, stored_claims: dict, site: Path) -> str:
    """The index: notebooks, claims, figures and tables, manifest."""
    esc = html.escape
    parts = [
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>prism-companion: {esc(src.profile)} report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>prism-companion: the <code>{esc(src.profile)}</code> profile</h1>",
        "<p>A reproducible companion to <em>Language Through a Prism</em> (Tamkin, Jurafsky &amp; Goodman, "
        "NeurIPS 2020) and timescale-dependent LSTM language models (Mahto et al., ICLR 2021). Built by "
        f"<code>python -m prismlib report --profile {esc(src.profile)}</code> (<code>make report</code>).</p>",
    ]
    if src.stored:
        parts.append(
            "<p class='note'><code>results/smoke/</code> is absent, so this report shows the <b>stored outputs of "
            "<code>notebooks/NN_*.ipynb</code></b> (the smoke run that <code>make test</code>'s nbval checks, "
            "refreshed by <code>make paired</code>). It has no run manifest and no figure files, and its claims "
            "are the notebooks' own claims cells; run times are estimated from the cells' timestamps. "
            "<code>python -m prismlib reproduce --profile smoke</code> writes all of them.</p>"
        )
    parts.append(_failures_banner(manifest))
    parts += ["<h2 id='notebooks'>Notebooks</h2>", _notebook_table(entries, src)]
    parts += ["<h2 id='claims'>Claims</h2>", _claims_section(src, entries, stored_claims, site)]
    if (site / "figures").is_dir():
        parts += ["<h2 id='figures'>Figures and tables</h2>", _figures_section(site / "figures")]
    parts += ["<h2 id='manifest'>Run manifest</h2>", _manifest_section(src, manifest)]
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _failures_banner(manifest: dict) -> str:
    """A red box naming every notebook whose last run failed (``manifest["failures"]``):
    the page and the claims shown for it are from its last good run, now stale."""
    failures = manifest.get("failures") or {}
    if not failures:
        return ""
    items = "".join(
        f"<li><b>{html.escape(name)}</b> at {html.escape(str(f.get('time', '?')))}: {html.escape(str(f.get('error', '')))}</li>"
        for name, f in sorted(failures.items())
    )
    return (
        "<div class='failed' style='border:2px solid #b00;background:#fee;padding:0.5em 1em;color:#700'>"
        "<b>The last run of these notebooks failed.</b> Their pages and claims below are from their last good run, "
        f"and are stale:<ul>{items}</ul></div>"
    )


def _notebook_table(entries: list[Entry], src: Sources) -> str:
    rows = [
        f"<tr><td><a href='{e.stem}.html'>{html.escape(e.stem)}</a></td>"
        f"<td><b>{html.escape(e.title)}</b>{_md(e.summary)}</td><td class='num'>{_seconds(e)}</td>"
        f"<td><a href='notebooks/{e.stem}.ipynb'>.ipynb</a></td></tr>"
        for e in entries
    ]
    timed = [e for e in entries if e.seconds is not None]
    total = f"{sum(e.seconds for e in timed):,.1f} s"
    if any(e.seconds_note not in ("manifest", "papermill") for e in timed):
        total = f"&asymp; {total}"
    if len(timed) < len(entries):
        total += f" ({len(entries) - len(timed)} without a time)"
    out = (
        "<table><tr><th>notebook</th><th>reproduces</th><th>run time</th><th>executed</th></tr>\n"
        + "\n".join(rows)
        + f"\n<tr><td colspan='2'>total</td><td class='num'>{total}</td><td></td></tr></table>"
    )
    if src.missing:
        out += f"<p class='note'>Not executed on this profile: {html.escape(', '.join(src.missing))}.</p>"
    return out


def _verdict(v: str) -> str:
    return f"<span class='v-{v.replace(' ', '-')}'>{html.escape(v)}</span>"


def _claims_section(src: Sources, entries: list[Entry], stored_claims: dict, site: Path) -> str:
    """``figures/<profile>/claims.csv`` as a table (notebooks linked), else each notebook's claims cell."""
    from prismlib.claims import VERDICTS

    csv = site / "figures" / "claims.csv"
    pages = {e.stem[:2]: e.stem for e in entries}
    if not csv.exists():
        found = [(stem, md) for stem, md in stored_claims.items() if md]
        if not found:
            return "<p>No claims table: neither <code>figures/claims.csv</code> nor a claims cell in the notebooks.</p>"
        return "\n".join(f"<h3><a href='{stem}.html'>{html.escape(stem)}</a></h3>\n{_md(md)}" for stem, md in found)
    table = pd.read_csv(csv, dtype={"notebook": str}, keep_default_na=False)
    counts = table["verdict"].value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {_verdict(v)}" for v in VERDICTS)
    rows = []
    for r in table.itertuples(index=False):
        nb = str(r.notebook).zfill(2)
        link = f"<a href='{pages[nb]}.html'>{nb}</a>" if nb in pages else html.escape(nb)
        effect = f"{r.effect:+.3g} [{r.ci_low:+.3g}, {r.ci_high:+.3g}] {r.unit}".strip()
        rows.append(
            f"<tr><td>{link}</td><td>{_verdict(r.verdict)}</td><td>{html.escape(str(r.claim))}</td>"
            f"<td class='num'>{html.escape(effect)}<br><small>{html.escape(str(r.test))}</small></td>"
            f"<td>{html.escape(str(r.paper))}</td><td><small>{html.escape(str(r.gate))}</small></td></tr>"
        )
    return (
        f"<p>{summary} (of {len(table)}). Effects with their 95% paired-bootstrap intervals over the test set's "
        "independent units (<code>prismlib/claims.py</code>); the same table as "
        "<a href='figures/claims.csv'>claims.csv</a> and <a href='figures/claims.md'>claims.md</a>.</p>\n"
        "<table><tr><th>notebook</th><th>verdict</th><th>claim</th><th>effect [95% CI]</th><th>paper</th><th>gate</th></tr>\n"
        + "\n".join(rows)
        + "</table>"
    )


def _figures_section(figures: Path) -> str:
    """Every figure (thumbnail, png and pdf) and table (csv and md) of ``figures/``, by name."""
    by_stem: dict[str, list[Path]] = {}
    for f in sorted(figures.iterdir()):
        if f.suffix in FIGURE_ORDER and f.stem != "claims":
            by_stem.setdefault(f.stem, []).append(f)
    items = []
    for stem, files in by_stem.items():
        files.sort(key=lambda f: FIGURE_ORDER.index(f.suffix))
        links = " &middot; ".join(f"<a href='figures/{f.name}'>{f.suffix[1:]}</a>" for f in files)
        png = next((f for f in files if f.suffix == ".png"), None)
        thumb = f"<a href='figures/{png.name}'><img src='figures/{png.name}' alt='{stem}' loading='lazy'></a><br>" if png else ""
        items.append(f"<li>{thumb}<code>{html.escape(stem)}</code>: {links}</li>")
    return "<ul class='figures'>\n" + "\n".join(items) + "\n</ul>"


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
    if not manifest:
        return (
            f"<p>No run manifest (<code>results/{html.escape(src.profile)}/manifest.json</code>); "
            f"<code>python -m prismlib reproduce --profile {html.escape(src.profile)}</code> writes one.</p>"
        )
    return (
        "<p>Written by <code>python -m prismlib reproduce</code>: git commit, device, package versions, seconds "
        "per notebook and the <code>train</code> runs that filled the job cache "
        "(<a href='manifest.json'>manifest.json</a>).</p>\n" + _json_html(manifest)
    )


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
    """``python -m prismlib report [--profile P] [--out DIR]``: build, then check every link."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m prismlib report")
    parser.add_argument("--profile", default=None, help="smoke, cpu or paper (default: $PRISMLIB_PROFILE or cpu)")
    parser.add_argument("--out", default=None, help="the site's folder (default: report/<profile>/)")
    args = parser.parse_args(argv)
    try:
        index = build_report(args.profile, args.out)
    except (FileNotFoundError, FileExistsError) as err:
        print(f"report: {err}", file=sys.stderr)
        return 1
    pages = sorted(index.parent.glob("*.html"))
    print(f"report: {index} ({len(pages)} pages)")
    external = external_links(index.parent)
    if external:
        print(f"external links (not fetched): {', '.join(external)}")
    broken = check_links(index.parent)
    for b in broken:
        print(f"broken link: {b}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
