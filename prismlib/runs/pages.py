"""An executed notebook made fit for a reader: the report's notebook pages.

* :func:`clean_outputs` drops what a reader gets nothing from: progress bars (tqdm's
  carriage-return refreshes, stored by runs before ``reproduce`` logged them), tqdm's
  ``IProgress not found`` warning, weight-loading bars and progress widgets; other
  stderr (a real warning) is kept.
* :func:`redact_paths` replaces the build machine's paths (the checkout, the data
  directory, ``site-packages``, temporary folders) by short placeholders.
* :func:`math_to_mathml` renders the ``$...$`` / ``$$...$$`` TeX of Markdown as MathML
  (``latex2mathml``), which browsers draw without MathJax, without network;
  :func:`strip_cdn_scripts` removes nbconvert's MathJax and require.js loaders.

:func:`notebook_page` puts them together: one self-contained HTML page per notebook, under
a header saying how its result stands (:func:`run_time_html`, :func:`commit_html`).
:data:`STYLE` is the style sheet of the index and the documentation pages,
:data:`PAGE_STYLE` what a notebook page adds to nbconvert's; :func:`markdown_html` renders
the index's and the documentation's Markdown, its math as MathML too.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import nbformat

from prismlib.paths import figure_dir, project_root
from prismlib.runs.results import Entry, Sources

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
"""The style sheet of the index and the documentation pages."""
PAGE_STYLE = """
.failed { background: #fde7e9; color: #8a0015; border-left: 4px solid #b00020; padding: 0.5rem 1rem; }
.warn { color: #8a4b00; }
math[display="block"] { margin: 0.6rem 0; }
img.first-figure { max-width: 100%; max-height: 60vh; height: auto; display: block; margin: 0.4rem 0; }
"""
"""What a notebook page adds to nbconvert's style."""

_BAR = re.compile(r"\d+%\|[^|\n]*\|\s*\d+/\d+|\|\s*\d+/\d+ \[\d|it/s\]|s/it\]")
_NOISE = ("TqdmWarning: IProgress not found", "from .autonotebook import tqdm as notebook_tqdm", "Loading weights")
WIDGET = "application/vnd.jupyter.widget-view+json"


def is_progress(text: str) -> bool:
    """True for a stream text that is only progress bars, their clearing blanks, or the
    weight-loading / ``IProgress`` chatter of tqdm and transformers."""
    lines = [ln for ln in re.split(r"[\r\n]", text) if ln.strip()]
    return all(_BAR.search(ln) or any(n in ln for n in _NOISE) for ln in lines)


def clean_outputs(nb: nbformat.NotebookNode) -> int:
    """Drop the progress outputs of ``nb`` in place (:func:`is_progress` streams on stderr,
    progress widgets); returns how many outputs were dropped."""
    dropped = 0
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            stream_bar = out.get("output_type") == "stream" and out.get("name") == "stderr" and is_progress(out.get("text", ""))
            widget = WIDGET in out.get("data", {})
            if stream_bar or widget:
                dropped += 1
            else:
                kept.append(out)
        if "outputs" in cell:
            cell.outputs = kept
    return dropped


def path_patterns(roots: dict[str, str]) -> list[tuple[re.Pattern[str], str]]:
    """Regexes replacing each ``roots`` path (longest first) by its label, then any
    ``.../site-packages/`` and ``/tmp/...`` path."""
    pats = [
        (re.compile(re.escape(p.rstrip("/")) + r"(?=/|\b)"), label)
        for p, label in sorted(roots.items(), key=lambda kv: -len(kv[0]))
        if p and p != "/"
    ]
    pats.append((re.compile(r"(?:/[\w.+@-]+)+/(?:site|dist)-packages(?=/)"), "<site-packages>"))
    pats.append((re.compile(r"/tmp/[\w.+@/-]+"), "<tmp>"))
    return pats


def redact_paths(text: str, patterns: list[tuple[re.Pattern[str], str]]) -> str:
    """``text`` with every path of ``patterns`` replaced by its label."""
    for pat, label in patterns:
        text = pat.sub(label, text)
    return text


def _map_text(nb: nbformat.NotebookNode, fn: Callable[[str], str]) -> None:
    """Apply ``fn`` to every cell source and every text of every output, in place."""
    for cell in nb.cells:
        cell.source = fn(cell.source)
        for out in cell.get("outputs", []):
            if "text" in out:
                out.text = fn(out.text)
            if "traceback" in out:
                out.traceback = [fn(t) for t in out.traceback]
            for mime, value in out.get("data", {}).items():
                if isinstance(value, str) and mime.startswith("text/"):
                    out.data[mime] = fn(value)


def redact_notebook(nb: nbformat.NotebookNode, roots: dict[str, str]) -> None:
    """Replace the paths of ``roots`` (path -> label) and of ``site-packages`` in every
    source and text output of ``nb``, in place; its papermill paths are dropped."""
    pats = path_patterns(roots)
    _map_text(nb, lambda t: redact_paths(t, pats))
    pm = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path", "cwd"):
        pm.pop(key, None)


_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$\w])\$(?!\s)((?:[^$\n]|\n(?!\s*\n))+?)(?<![\s\\])\$(?![\w$])")


def _mathml(tex: str, display: bool) -> str:
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - any TeX it cannot parse is shown as code, never raw
        return f"<code>{html.escape(tex)}</code>"


def math_to_mathml(markdown: str, table: dict[str, str]) -> str:
    """Replace the TeX of ``markdown`` (outside code) by placeholders, adding placeholder ->
    MathML to ``table``, to be substituted into the HTML after Markdown rendering
    (:func:`fill_math`), so Markdown never touches the MathML."""

    def hold(mathml: str) -> str:
        key = f"PRISMMATH{len(table):05d}X"
        table[key] = mathml
        return key

    parts = _CODE.split(markdown)
    for i in range(0, len(parts), 2):  # even parts are outside code
        text = _DISPLAY.sub(lambda m: hold(_mathml(m.group(1), True)), parts[i])
        parts[i] = _INLINE.sub(lambda m: hold(_mathml(m.group(1), False)), text)
    return "".join(parts)


def notebook_math(nb: nbformat.NotebookNode) -> dict[str, str]:
    """:func:`math_to_mathml` on every Markdown cell and Markdown output of ``nb``, in
    place; returns the placeholders' MathML for :func:`fill_math`."""
    table: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = math_to_mathml(cell.source, table)
        for out in cell.get("outputs", []):
            md = out.get("data", {}).get("text/markdown")
            if isinstance(md, str):
                out.data["text/markdown"] = math_to_mathml(md, table)
    return table


def fill_math(page: str, table: dict[str, str]) -> str:
    """Put the MathML of ``table`` where its placeholders are in ``page``."""
    if not table:
        return page
    return re.sub(r"PRISMMATH\d{5}X", lambda m: table.get(m.group(0), m.group(0)), page)


_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_REQUIRE = re.compile(r"<script src=\"https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^\"]*\"></script>")
_MERMAID = re.compile(r"<script type=\"module\">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>", re.S)


def strip_cdn_scripts(page: str) -> str:
    """nbconvert's page without its MathJax, require.js and Mermaid loaders (nothing from
    a CDN; the notebooks have no Mermaid diagrams)."""
    return _MERMAID.sub("", _REQUIRE.sub("", _MATHJAX.sub("", page)))


def project_roots(nb: nbformat.NotebookNode, extra: dict[str, str]) -> dict[str, str]:
    """Path -> label of the build machine's folders: ``extra`` plus the checkout the
    notebook was executed in (papermill's ``cwd`` is its ``notebooks/``)."""
    roots = dict(extra)
    cwd = nb.metadata.get("papermill", {}).get("cwd")
    if cwd:
        roots.setdefault(str(Path(cwd).parent), "<project>")
    return roots


def run_time_html(entry: Entry) -> str:
    """A notebook's run time as HTML: ``n/a`` when unknown; marked approximate, with its
    source, when neither papermill nor the manifest gave it."""
    if entry.seconds is None:
        return "n/a"
    text = f"{entry.seconds:,.1f} s"
    return text if entry.seconds_note in ("manifest", "papermill") else f"&asymp; {text} ({entry.seconds_note})"


def commit_html(entry: Entry) -> str:
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


_SAVED_FIGURE = re.compile(r"""save_figure\([^,()]+,\s*["']([^"']+)["']""")
PAPER_FIGURE = ("fig", "table", "exp")
"""Name prefixes of a figure that is the paper's (``fig4_probing``, ``table1_prism``,
``exp1_learning_curves``): a notebook's main figure is its first, else its first saved figure."""


def claims_cell(nb: nbformat.NotebookNode) -> int | None:
    """The index of the cell that displays ``nb``'s claims table (:func:`prismlib.claims.report`),
    the last such cell, or ``None``."""
    from prismlib.claims import render

    head = render([]).splitlines()[0]
    for i in reversed(range(len(nb.cells))):
        if any(out.get("data", {}).get("text/markdown", "").startswith(head) for out in nb.cells[i].get("outputs", [])):
            return i
    return None


def main_figure(nb: nbformat.NotebookNode) -> tuple[int, str] | None:
    """The cell that saves ``nb``'s main figure (see :data:`PAPER_FIGURE`) and the figure's name, or ``None``."""
    saved = [(i, name) for i, c in enumerate(nb.cells) if c.cell_type == "code" for name in _SAVED_FIGURE.findall(c.source)]
    paper = [(i, name) for i, name in saved if name.startswith(PAPER_FIGURE)]
    found = paper or saved
    return found[0] if found else None


def _results_line(nb: nbformat.NotebookNode) -> str:
    """Insert anchors before ``nb``'s claims cell and main-figure cell; return the header's line linking them."""
    claims, figure = claims_cell(nb), main_figure(nb)
    anchors = ([(claims, "claims")] if claims is not None else []) + ([(figure[0], "main-figure")] if figure else [])
    for i, key in sorted(anchors, reverse=True):
        nb.cells.insert(i, nbformat.v4.new_markdown_cell(f"<div id='{key}'></div>"))
    links = ["[its claims table](#claims)"] if claims is not None else []
    links += [f"[its main figure, `{figure[1]}`](#main-figure)"] if figure else []
    return f"**Results:** {' &middot; '.join(links)}" if links else "**Results:** this notebook shows no claims table or saved figure"


def first_screen(nb: nbformat.NotebookNode, stem: str, claims: Path | None, title: str = "") -> str:
    """What a reader sees first on a notebook's page, above its prose (Markdown): what the
    notebook found (:func:`prismlib.runs.results_page.notebook_lines` of its rows in the
    ``claims`` table, when there is one) and its main figure (:func:`main_figure`: the image
    its saving cell shows), narrowed to the page."""
    parts = []
    if claims is not None and claims.is_file():
        from prismlib.claims import read_claims
        from prismlib.runs.results_page import notebook_lines

        table = read_claims(claims)
        rows = table[table["notebook"].astype(str).str.zfill(2) == stem[:2]]
        if not rows.empty:
            parts.append(
                f"**{html.escape(title or stem)}: what it found** ([every claim](#claims); the notebook follows the figure):\n\n"
                + "\n".join(f"- {html.escape(ln, quote=False)}" for ln in notebook_lines(rows))
            )
    found = main_figure(nb)
    if found:
        png = next((o["data"]["image/png"] for o in nb.cells[found[0]].get("outputs", []) if "image/png" in o.get("data", {})), None)
        if png:
            data = png if isinstance(png, str) else "".join(png)
            parts.append(f"<img class='first-figure' alt='main figure: {found[1]}' src='data:image/png;base64,{data.strip()}'>")
    return "\n\n".join(parts)


def notebook_page(nb: nbformat.NotebookNode, entry: Entry, src: Sources) -> tuple[str, int]:
    """One notebook as a self-contained HTML page (a header linking back to the index and
    saying how the result stands), without progress output or machine paths, its math as
    MathML; returns the page and how many progress outputs were left out."""
    from nbconvert import HTMLExporter

    from prismlib.data.datadir import data_dir

    where = "stored smoke outputs of `notebooks/`" if src.stored else f"`results/{src.profile}/`"
    header = (
        f"[&larr; report index](index.html) &middot; profile `{src.profile}` &middot; run time {run_time_html(entry)} "
        f"&middot; executed at {commit_html(entry)} &middot; executed notebook ({where}): "
        f"[{entry.stem}.ipynb](notebooks/{entry.stem}.ipynb)"
    )
    if entry.problem:
        header += f"\n\n<p class='failed'><b>Not a valid result.</b> {html.escape(entry.problem)}</p>"
    nb = nbformat.from_dict(nb)  # a copy: nothing here is written back
    dropped = clean_outputs(nb)
    if dropped:
        header += f" &middot; {dropped} progress outputs left out"
    roots = project_roots(nb, {str(project_root()): "<project>", str(data_dir()): "<data>", str(Path.home()): "~"})
    redact_notebook(nb, roots)
    claims = None if src.stored else figure_dir(src.profile) / "claims.csv"
    screen = first_screen(nb, entry.stem, claims, entry.title)  # before the anchors move the cells
    header = f"{header}\n\n{screen}\n\n{_results_line(nb)}" + (f"\n\n{entry.runs}" if entry.runs else "")
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(header))
    math = notebook_math(nb)
    body, _ = HTMLExporter(embed_images=True).from_notebook_node(nb, resources={"metadata": {"name": entry.title}})
    body = strip_cdn_scripts(fill_math(body, math))
    body = body.replace("</head>", f"<style>{PAGE_STYLE}</style></head>", 1)
    return body, dropped


def markdown_html(text: str) -> str:
    """Markdown as HTML, its TeX as MathML (no MathJax on the index either)."""
    from nbconvert.filters import markdown2html

    math: dict[str, str] = {}
    return fill_math(markdown2html(math_to_mathml(text, math)), math)
