"""The report's index page (:func:`render_index`): a banner for a profile whose numbers mean
nothing (:data:`MEANINGLESS`), whether the results are current (:func:`currency_line`),
the contents, then its sections: the notebooks (state, commit, run time), the verdicts per
notebook, the figures and tables grouped by the notebook that writes them
(:func:`figure_owners`), the claims table (``figures/<profile>/claims.csv``, else each
notebook's claims cell), the run manifest and the documentation pages.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import nbformat
import pandas as pd

from prismlib.claims import OUTCOMES, effect_parts, read_claims
from prismlib.paths import project_root
from prismlib.runs.findings import effect_text, headlines, work_summary
from prismlib.runs.pages import STYLE, commit_html, markdown_html, run_time_html
from prismlib.runs.results import Entry, Sources, grid_line
from prismlib.timing import format_duration

if TYPE_CHECKING:
    from prismlib.runs.clock import Estimate

FIGURE_ORDER = (".png", ".pdf", ".csv", ".md")
MEANINGLESS = {
    "smoke": "runs a few documents and tiny models, only to check that every notebook runs",
    "dryrun": "runs random weights on generated data, only to exercise the paper profile's code",
}
"""Profiles whose claims cannot carry meaning, and why (a banner on their index)."""


def render_index(
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
    csv = site / "figures" / "claims.csv"
    table = read_claims(csv) if csv.exists() else None
    if table is not None and len(table):
        parts.append(f"<h2 id='findings'>What it found</h2>\n{findings_html(table, entries)}")
        if (grid := grid_line(src.profile)) is not None and not src.stored:
            parts.append(f"<p class='note'>{grid}</p>")
    from prismlib.runs.clock import notebook_estimates

    est = notebook_estimates(src.profile)  # once: every re-run cost below reads it
    parts.append(f"<p>{currency_line(entries, src.profile, lambda stems: rerun_cost(stems, est))}</p>")
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
    sections = [("notebooks", "Notebooks", _notebook_table(entries, src, manifest, est))]
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


def findings_html(table: pd.DataFrame, entries: list[Entry]) -> str:
    """The index's first screen: each work's verdict counts (and the gate that most often left
    a claim open), then each notebook's first decided claim with its effect; the claims of a
    notebook whose last run failed are left out (stale), saying so."""
    pages = _pages(entries)
    stale = sorted(nb for nb, e in pages.items() if not e.ok)
    table = table[~table["notebook"].astype(str).str.zfill(2).isin(stale)]
    head = "".join(f"<th>{_verdict(v)}</th>" for v in OUTCOMES)
    rows = []
    for w in work_summary(table):
        cells = "".join(f"<td class='num'>{w.counts[v]}</td>" for v in OUTCOMES)
        lack = f"{w.top_gate_claims} of {w.counts['not testable']}: {html.escape(w.top_gate)}" if w.top_gate else ""
        rows.append(
            f"<tr><td><b>{w.work}.</b> {html.escape(w.title)}</td><td class='num'>{w.total}</td>{cells}<td><small>{lack}</small></td></tr>"
        )
    out = (
        f"<table><tr><th>work</th><th>claims</th>{head}<th>the gate most often failed by a not-testable claim</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    items = []
    for _, r in headlines(table).iterrows():
        nb = str(r["notebook"]).zfill(2)
        link = f"<a href='{pages[nb].stem}.html'>{nb}</a>" if nb in pages else nb
        items.append(
            f"<li>{link} {_verdict(str(r['verdict']))}: {html.escape(str(r['claim']))} "
            f"(<span class='num'>{html.escape(effect_text(r))}</span>)</li>"
        )
    if items:
        out += f"<p>Each notebook's first decided claim (all of them: <a href='#claims'>claims</a>):</p><ul>{''.join(items)}</ul>"
    if stale:
        out += f"<p class='failed'>Left out: the {_verdict('stale')} claims of {', '.join(stale)}, whose last run failed.</p>"
    return out


def _redact_index(page: str) -> str:
    """The index without the build machine's paths (the checkout, the data directory)."""
    from prismlib.data.datadir import data_dir
    from prismlib.runs.pages import path_patterns, redact_paths

    roots = {str(project_root()): "&lt;project&gt;", str(data_dir()): "&lt;data&gt;", str(Path.home()): "~"}
    return redact_paths(page, path_patterns(roots))


def rerun_cost(stems: Sequence[str], est: Mapping[str, Estimate]) -> str:
    """What running the notebooks ``stems`` again takes (HTML), from their estimates ``est``
    (:func:`prismlib.runs.clock.notebook_estimates`: measured runs where they exist): the
    notebooks' own run time and the worker time of the LSTM models they would train first;
    ``""`` when a notebook's time is only modelled (no measured run to go by)."""
    from prismlib.runs.clock import MODELLED

    known = [est[s] for s in stems if s in est]
    if not known or any(e.basis == MODELLED for e in known):
        return ""  # only operations at an assumed throughput: no time worth stating
    train = sum(e.training_seconds for e in known)
    text = f"about {format_duration(sum(e.seconds for e in known))} of notebook runs"
    if train:
        text += f" after {format_duration(train)} (worker time) of LSTM training"
    if missing := [s[:2] for s in stems if s not in est]:
        text += f"; {', '.join(missing)} not estimated"
    return text + " (<code>python -m prismlib plan</code>)"


def currency_line(entries: list[Entry], profile_name: str, cost: Callable[[list[str]], str] | None = None) -> str:
    """One line (HTML): whether every result comes from this checkout's ``prismlib`` and
    notebook sources, else which are older and why, the command that re-runs them and, with
    ``cost`` (:func:`rerun_cost` of the stems), what that takes."""
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
    takes = cost([e.stem for e in old]) if cost else ""
    return (
        f"<b class='warn'>{len(old)} of {len(entries)} results are not current:</b> {items}. "
        f'<code>make reproduce PROFILE={html.escape(profile_name)} ONLY="{only}"</code> runs them again' + (f": {takes}." if takes else ".")
    )


def _notebook_table(entries: list[Entry], src: Sources, manifest: dict, est: Mapping[str, Estimate]) -> str:
    rows = []
    for e in entries:
        state = f"<b>failed</b><br><small>{html.escape(e.problem)}</small>" if e.problem else "ok"
        rows.append(
            f"<tr{' class=failed' if e.problem else ''}><td><a href='{e.stem}.html'>{html.escape(e.stem)}</a></td>"
            f"<td><b>{html.escape(e.title)}</b>{markdown_html(e.summary)}</td><td>{state}</td><td>{commit_html(e)}</td>"
            f"<td class='num'>{run_time_html(e)}</td><td><a href='notebooks/{e.stem}.ipynb'>.ipynb</a></td></tr>"
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
        why = {stem: not_run_reason(stem, src.profile, manifest, est) for stem in src.missing}
        items = "".join(f"<li><code>{html.escape(stem)}</code>: {reason}</li>" for stem, reason in why.items())
        out += f"<div class='note'><p>Not executed on this profile:</p><ul>{items}</ul></div>"
    return out


def not_run_reason(stem: str, profile_name: str, manifest: dict, est: Mapping[str, Estimate]) -> str:
    """Why a notebook of ``notebooks/`` has no executed copy on ``profile_name`` (HTML) and the command that runs it."""
    failure = manifest.get("notebooks", {}).get(stem, {}).get("failure")
    takes = rerun_cost([stem], est)
    run = f"<code>make reproduce PROFILE={html.escape(profile_name)} ONLY={html.escape(stem[:2])}</code> runs it" + (
        f" ({takes})" if takes else ""
    )
    if failure:
        return f"its only run failed ({html.escape(str(failure.get('time', '?')))}: {html.escape(str(failure.get('error', '?')))}); {run}"
    return f"never run on this profile (the run manifest has no record of it); {run}"


def _verdict(v: str) -> str:
    return f"<span class='v-{v.replace(' ', '-')}'>{html.escape(v)}</span>"


def _pages(entries: list[Entry]) -> dict[str, Entry]:
    return {e.stem[:2]: e for e in entries}


def _verdict_summary(table: pd.DataFrame, entries: list[Entry]) -> str:
    """How many claims of each notebook got each verdict (stale for a failed notebook)."""
    pages = _pages(entries)
    head = "".join(f"<th>{_verdict(v)}</th>" for v in OUTCOMES)
    rows = []
    for nb, group in table.groupby(table["notebook"].str.zfill(2), sort=True):
        e = pages.get(nb)
        link = f"<a href='{e.stem}.html'>{html.escape(e.title)}</a>" if e else html.escape(nb)
        counts = group["verdict"].value_counts()
        cells = "".join(f"<td class='num'>{counts.get(v, 0) or ''}</td>" for v in OUTCOMES)
        if e is not None and not e.ok:
            cells = f"<td colspan='{len(OUTCOMES)}'>{_verdict('stale')}: the last run failed; {len(group)} claims of an older run</td>"
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
    pages = _pages(entries)
    if table is None:
        found = [(stem, md) for stem, md in stored_claims.items() if md]
        if not found:
            return "<p>No claims table: neither <code>figures/claims.csv</code> nor a claims cell in the notebooks.</p>"
        out = []
        for stem, md in found:
            e = pages.get(stem[:2])
            stale = f"<p>{_verdict('stale')}: {html.escape(e.problem)}</p>" if e is not None and not e.ok else ""
            out.append(f"<h3><a href='{stem}.html'>{html.escape(stem)}</a></h3>\n{stale}{markdown_html(md)}")
        return "\n".join(out)
    stale_nbs = {nb for nb, e in pages.items() if not e.ok}
    nbs = table["notebook"].str.zfill(2)
    fresh = table[~nbs.isin(stale_nbs)]
    counts = fresh["verdict"].value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {_verdict(v)}" for v in OUTCOMES)
    if len(fresh) < len(table):
        summary += f", {len(table) - len(fresh)} {_verdict('stale')}"
    rows = []
    for nb, r in zip(nbs, table.itertuples(index=False)):
        link = f"<a href='{pages[nb].stem}.html'>{nb}</a>" if nb in pages else html.escape(nb)
        parts = effect_parts(cast(float, r.effect), cast(float, r.ci_low), cast(float, r.ci_high), str(r.unit))
        effect = " ".join(f"<span class='num'>{html.escape(p)}</span>" for p in parts)  # each kept whole, wrapped between
        verdict = _verdict(cast(str, r.verdict))
        if nb in stale_nbs:
            verdict = f"{_verdict('stale')}<br><small>was <s>{html.escape(cast(str, r.verdict))}</s></small>"
        model = str(getattr(r, "model", "") or "")
        ran = f"<br><small>ran on: {html.escape(model)}</small>" if model and model != "nan" else ""  # where it is not the paper's model
        rows.append(
            f"<tr><td>{link}</td><td>{verdict}</td><td>{html.escape(str(r.claim))}{ran}</td>"
            f"<td class='effect'>{effect}<small>{html.escape(str(r.test))}</small></td>"
            f"<td>{html.escape(str(r.paper))}</td><td><small>{_collapsed(str(r.gate))}</small></td></tr>"
        )
    return (
        f"<p>{summary} (of {len(table)}). Each row's effect and 95% interval are the test that decided it: over the "
        "test set's independent units, and over the training seeds too where trained models are compared (one interval, "
        "<a href='docs/claims.html'>claims</a>); the same table as "
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
            cap = f"<br>{markdown_html(caption) if caption else ''}"
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


TRAINING_COLUMNS = ("started", "profile", "seconds", "trained", "left", "worker_minutes", "workers", "completed")
"""The columns of the index's table of training runs (every field is in the folded JSON)."""


def _training_html(runs: list[dict[str, Any]]) -> str:
    """The training runs as a narrow table of :data:`TRAINING_COLUMNS`, each run's every field
    (job keys included) folded beneath it."""
    rows = [{k: r.get(k, "") for k in TRAINING_COLUMNS} for r in runs]
    return _json_html(rows) + f"<details><summary>every field of the {len(runs)} runs</summary>{_json_html(runs)}</details>"


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
        runs.append(
            {
                "notebook": stem,
                "commit": str(r.get("commit", ""))[:12] + (" (inherited)" if r.get("inherited") else ""),
                "started": r.get("started", ""),
                "seconds": r.get("seconds", ""),
                "device": r.get("device", ""),
                "last failure": f"{failure.get('time', '')}: {failure.get('error', '')}" if failure else "",
            }
        )
        if r.get("packages"):
            versions.setdefault(json.dumps(r["packages"], sort_keys=True), []).append(stem)
    parts = [
        "<p>Written by <code>python -m prismlib reproduce</code>, one record per notebook (<a href='manifest.json'>manifest.json</a>).</p>",
        _json_html(runs),
    ]
    for packages, stems in versions.items():
        parts += [f"<h3>Package versions of {html.escape(', '.join(stems))}</h3>", _json_html(json.loads(packages))]
    if manifest.get("training"):
        parts += ["<h3>Training runs (<code>python -m prismlib train</code>)</h3>", _training_html(manifest["training"])]
    return "\n".join(parts)
