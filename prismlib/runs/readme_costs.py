"""The README's "Three ways in" table, its times read from the committed results, not written by hand.

:func:`costs_markdown` renders the table: reading the report, the smoke path and regenerating
the results, the last row's hours from the profile's manifest (each notebook's last run,
``results/<profile>/manifest.json``) and its LSTM runs and worker-hours from the committed run
records (``results/<profile>/runs/``, :func:`prismlib.records.scan`); ``python -m prismlib
report --readme`` writes it between :data:`COSTS_MARKERS` (a test keeps the committed README
equal to it), and :func:`run_times_markdown`, ``docs/results.md``'s table of each notebook's
last run, between :data:`TIMES_MARKERS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from prismlib.paths import project_root, results_dir
from prismlib.records import RUNS, scan
from prismlib.runs.findings import WORKS, write_block
from prismlib.runs.manifest import cold_seconds, read_manifest, run_seconds
from prismlib.timing import format_duration

TIMES_MARKERS = ("<!-- run times: written by `python -m prismlib report --readme`; do not edit -->", "<!-- run times end -->")
"""The lines around ``docs/results.md``'s run-times table."""
COSTS_MARKERS = ("<!-- ways in: written by `python -m prismlib report --readme`; do not edit -->", "<!-- ways in end -->")
"""The lines around the README's "Three ways in" table."""
REPORT_ROW = (
    "read the committed results",
    "`make report PROFILE=cpu`, open `report/cpu/index.html`",
    "about 20 s (the first `make` also installs `.venv`: about 4 minutes)",
)
SMOKE_ROW = (
    "check that everything runs",
    "`make reproduce PROFILE=smoke`",
    "about 11 minutes, 14 with the first install (a review's fresh clone, 2026-12)",
)
"""The report's and the smoke path's rows as a review timed them, shown until
``benchmarks/reader_paths.py`` has measured them (:data:`READER_PATHS`)."""
READER_PATHS = Path("results") / "reader_paths.json"
"""The committed measurement of the install, the report's build and the smoke path from a
fresh clone (``benchmarks/reader_paths.py``), relative to the project root."""


def reader_rows(path: Path | None = None) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """The report's and the smoke path's rows from the measurement at ``path`` (default
    :data:`READER_PATHS`), or :data:`REPORT_ROW` and :data:`SMOKE_ROW` when there is none."""
    path = project_root() / READER_PATHS if path is None else path
    if not path.is_file():
        return REPORT_ROW, SMOKE_ROW
    m = json.loads(path.read_text())
    install, report, smoke = (float(m[k]) for k in ("install_seconds", "report_seconds", "smoke_seconds"))
    where = f"measured from a fresh clone at `{str(m['commit'])[:7]}`, {m['day']}: `{READER_PATHS}`"
    first = f"the first `make` also installs `.venv`: {format_duration(install)}"
    return (
        (REPORT_ROW[0], REPORT_ROW[1], f"{format_duration(report)} ({first}; {where})"),
        (SMOKE_ROW[0], SMOKE_ROW[1], f"{format_duration(smoke)}, {format_duration(smoke + install)} with the first install ({where})"),
    )


@dataclass(frozen=True)
class RunCosts:
    """What regenerating a profile costs, from its committed files.

    Attributes:
        notebook_seconds: notebook stem -> seconds of its last run on an empty job cache (the
            manifest: :func:`~prismlib.runs.manifest.run_seconds`), as from a fresh clone.
        records: committed LSTM run records that can be used.
        worker_seconds: their training's wall seconds, summed (one worker each).
        warm: the notebooks whose last run reused trained models and no run on an empty
            cache is recorded (their seconds are that run's: a fresh clone takes longer).
    """

    notebook_seconds: dict[str, float]
    records: int
    worker_seconds: float
    warm: tuple[str, ...] = ()

    def work_seconds(self, work: str) -> float:
        """Seconds of the notebooks of ``work`` (``"A"`` or ``"B"``, :data:`~prismlib.runs.findings.WORKS`)."""
        return sum(s for nb, s in self.notebook_seconds.items() if nb[:2] in WORKS[work][1])


def run_costs(profile_name: str) -> RunCosts:
    """:class:`RunCosts` of ``profile_name`` (no manifest or records: zeros)."""
    path = results_dir(profile_name) / "manifest.json"
    notebooks = read_manifest(path).get("notebooks", {}) if path.exists() else {}
    seconds = {nb: run_seconds(r) for nb, r in notebooks.items() if isinstance(r.get("seconds"), (int, float))}
    warm = tuple(nb for nb, r in notebooks.items() if nb in seconds and cold_seconds(r) is None)
    usable = [s.record for s in scan(results_dir(profile_name) / RUNS) if s.problem is None and s.record]
    worker = sum(float(r.get("provenance", {}).get("wall_seconds", 0.0)) for r in usable)
    return RunCosts(seconds, len(usable), worker, warm)


def costs_markdown(profile_name: str = "cpu", workers: int = 2) -> str:
    """The README's "Three ways in" table for ``profile_name`` on ``workers`` cores."""
    c = run_costs(profile_name)
    a, b = c.work_seconds("A"), c.work_seconds("B")
    hours = c.worker_seconds / 3600
    regenerate = (
        f"about {format_duration(a + b)} of notebooks, each at its last run's time on an empty cache in "
        f"`results/{profile_name}/manifest.json`: "
        f"work A's (01-04, 09) {format_duration(a)}, work B's (05-08, 10) {format_duration(b)}, because work B's "
        f"{c.records} LSTM runs come from the committed run records (`results/{profile_name}/runs/`); `FRESH=1` retrains "
        f"them: their training took {hours:.1f} worker-hours (about {hours / workers:.0f} h on {workers} cores, in "
        "installments: `python -m prismlib train --profile cpu-long --minutes 110`); rewrites `results/cpu`"
    )
    if c.warm:
        regenerate += f" (a fresh clone takes longer for {', '.join(nb[:2] for nb in c.warm)}: its last run reused trained models)"
    rows = [*reader_rows(), ("regenerate the results", '`make reproduce` (`ONLY="01 02"` for some notebooks)', regenerate)]
    lines = ["| you want to | run | time on 2 cores, no GPU |", "|---|---|---|"]
    return "\n".join(lines + [f"| {w} | {r} | {t} |" for w, r, t in rows])


def run_times_markdown(profile_name: str = "cpu") -> str:
    """Each notebook's last run in the profile's manifest: minutes, the day and the commit, and
    its minutes on an empty cache (:func:`~prismlib.runs.manifest.run_seconds`: what the README
    counts), which differ where the run reused trained models an earlier run left."""
    path = results_dir(profile_name) / "manifest.json"
    notebooks = read_manifest(path).get("notebooks", {}) if path.exists() else {}
    lines = ["| notebook | minutes | run on | commit | minutes on an empty cache |", "|---|---|---|---|---|"]
    for nb, r in sorted(notebooks.items()):
        if isinstance(r.get("seconds"), (int, float)):
            cold = cold_seconds(r)
            reused = int(r.get("reused_jobs") or 0)
            empty = f"{cold / 60:.1f}" if cold is not None else "not recorded"
            empty += f" (this run reused {reused} trained models)" if reused else ""
            lines.append(
                f"| {nb} | {r['seconds'] / 60:.1f} | {str(r.get('started', '?'))[:10]} | `{str(r.get('commit', '?'))[:7]}` | {empty} |"
            )
    return "\n".join(lines)


def update_costs(profile_name: str = "cpu", readme: Path | None = None) -> bool:
    """Write :func:`costs_markdown` between the README's :data:`COSTS_MARKERS`; whether it changed."""
    return write_block(readme or project_root() / "README.md", COSTS_MARKERS, costs_markdown(profile_name), "its 'Three ways in' heading")


def update_run_times(profile_name: str = "cpu", page: Path | None = None) -> bool:
    """Write :func:`run_times_markdown` into ``docs/results.md`` between :data:`TIMES_MARKERS`."""
    return write_block(page or project_root() / "docs" / "results.md", TIMES_MARKERS, run_times_markdown(profile_name), "its 'Run times'")
