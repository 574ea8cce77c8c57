"""A profile's executed results as the report reads them: where they are (:class:`Sources`,
:func:`find_sources`) and one :class:`Entry` per notebook (what it reproduces, from
:func:`describe`; its run time, from :func:`notebook_seconds` or the manifest; its commit
and state).

The notebooks are the executed copies in ``results/<profile>/`` written by ``python -m
prismlib reproduce``.  For the smoke profile, when ``results/smoke/`` is absent, they are
the stored outputs of ``notebooks/NN_*.ipynb`` (the smoke run nbval checks); there is then
no manifest and no figure files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat

from prismlib.paths import output_root, project_root
from prismlib.records import RUNS

NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"


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
    runs: str = ""  # Markdown: where a work-B notebook's LSTM runs come from (:func:`lstm_runs_line`)

    @property
    def ok(self) -> bool:
        """True when the executed notebook is a complete result of its last run."""
        return not self.problem


def find_sources(profile_name: str) -> Sources:
    """The executed notebooks, manifest and figures of profile ``profile_name`` (see :mod:`prismlib.runs.results`).

    Raises:
        FileNotFoundError: the profile has no executed notebooks; the message names the
            command that makes them.
    """
    results = output_root() / "results" / profile_name
    executed = tuple(sorted(results.glob(NOTEBOOK_GLOB)))
    stored = not executed and profile_name == "smoke"
    if stored:
        executed = tuple(sorted((project_root() / "notebooks").glob(NOTEBOOK_GLOB)))
    if not executed:
        raise FileNotFoundError(
            f"no executed notebooks for profile {profile_name!r} in {results}; run "
            f"`python -m prismlib reproduce --profile {profile_name}` (or `make reproduce PROFILE={profile_name}`) first"
        )
    manifest = results / "manifest.json"
    figures = output_root() / "figures" / profile_name
    sources = {p.stem for p in (project_root() / "notebooks").glob("[0-9][0-9]_*.py")}
    return Sources(
        profile=profile_name,
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


SOURCES = re.compile(r"^(?:\d+ trained models: .*|no trained models)$", re.M)
"""The line a work-B notebook prints about where its runs were read from (:func:`prismlib.lstm.sources_line`)."""


def executed_sources(nb: nbformat.NotebookNode) -> str | None:
    """The line an executed work-B notebook printed about where its runs came from, or ``None``
    (a notebook executed before the notebooks read committed records printed none)."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            if found := SOURCES.search(text):
                return found.group(0)
    return None


def lstm_runs_line(stem: str, profile_name: str, nb: nbformat.NotebookNode | None = None) -> str | None:
    """Where a work-B notebook's LSTM runs come from (Markdown), for its page's header: what the
    executed notebook ``nb`` read (the line it printed; else, executed before the notebooks read
    records, its machine's job cache), and how many of its runs have a committed record now
    (``results/<profile>/runs/``, with the commits they were trained at); ``None`` for a notebook
    that trains no LSTM of the grid, or a profile that keeps no records."""
    from prismlib.lstm.claims.grid import NOTEBOOK_EXPERIMENTS, experiment
    from prismlib.lstm.job import jobs_for
    from prismlib.profiles import get_profile
    from prismlib.runs.installments import committed_state

    prof = get_profile(profile_name)
    if stem[:2] not in NOTEBOOK_EXPERIMENTS or not prof.lstm.records:
        return None
    specs = dict.fromkeys(s for e in NOTEBOOK_EXPERIMENTS[stem[:2]] for s in experiment(e, prof))
    jobs = jobs_for(list(specs), prof.lstm, prof.job_profile)
    if not jobs:
        return None
    used = executed_sources(nb) if nb is not None else None
    head = (
        f"**LSTM runs:** as executed, {used}; "
        if used
        else "**LSTM runs:** this page was executed with the runs in the job cache of the machine that ran it; "
    )
    done, commits = committed_state(jobs)
    runs = f"`results/{jobs[0].profile}/{RUNS}/`"
    if not done:
        return f"{head}none of its {len(jobs)} runs has a committed record ({runs}) yet"
    at = ", ".join(f"`{c}`" for c in commits)
    left = f"; {len(jobs) - done} not trained yet" if done < len(jobs) else ""
    verb = "has" if done == 1 else "have"
    return f"{head}now {done} of its {len(jobs)} runs {verb} a committed record in {runs} (trained at {at}){left}"


def grid_line(profile_name: str) -> str | None:
    """How far work B's grid of committed runs is (HTML): records of the profile's long variant
    (``cpu-long`` for ``cpu``: the same grid, under the name the installments train it) out of
    its whole grid; ``None`` for a profile that keeps no records."""
    from prismlib.profiles import PROFILES, get_profile
    from prismlib.runs.installments import committed_state, grid_jobs

    prof = get_profile(f"{profile_name}-long" if f"{profile_name}-long" in PROFILES else profile_name)
    if not prof.lstm.records:
        return None
    jobs = grid_jobs(prof)
    done, commits = committed_state(jobs)
    how = "trained" if done == len(jobs) else "it trains"
    line = (
        f"Work B's grid of committed runs (<code>results/{jobs[0].profile}/{RUNS}/</code>, the <code>{prof.name}</code> "
        f"profile's {len(jobs)} runs): <b>{done} of {len(jobs)} trained</b>; {how} in installments "
        f"(<code>python -m prismlib train --profile {prof.name} --minutes 110</code>). Each work-B page's header "
        "says which runs it read."
    )
    if commits:  # folded: a reader wants the count, not two dozen hashes
        codes = ", ".join(f"<code>{c}</code>" for c in commits)
        line += f"<details><summary>the {len(commits)} commits they were trained at</summary>{codes}</details>"
    return line
