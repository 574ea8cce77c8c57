"""The commands of ``python -m prismlib`` and the report: the top of the library (nothing
below imports it; the job cache and executors it drives are :mod:`prismlib.jobcache`).

============ =====================================================================
data         ``python -m prismlib data``: list, fetch, verify, check-urls
train        ``python -m prismlib train``: a profile's models, up front
installments training a grid in installments that fit a wall-clock budget
costs        what a profile's notebooks do: jobs, FLOPs, memory and disk (the FLOP model)
clock        how long each notebook takes: measured runs first, else the FLOP model
             calibrated on them; each notebook's time for the report
plan         ``python -m prismlib plan``: the notebooks' jobs, time, memory and disk as a table
reproduce    ``python -m prismlib reproduce``: every notebook headless (papermill),
             a result replaced only by a complete run
manifest     ``results/<profile>/manifest.json``: per-notebook provenance and failures
preflight    the datasets and encoder the notebooks need, checked before they run
cache        ``python -m prismlib cache``: what the caches hold, verified, cleaned
report       ``python -m prismlib report``: the static HTML site of a profile
results      what a report is built from: the executed notebooks of a profile, each
             one's entry (what it reproduces, run time, commit, state)
pages        an executed notebook fit for a reader (no progress output, no machine
             paths, math as MathML) as a page; the style sheets, Markdown as HTML
findings     what a profile found, from its claims: the index's first screen and the
             README's "What it found" table
readme_costs the README's "Three ways in" times and docs/results.md's run times, from the
             manifest and the run records
results_page docs/results.md's "What each notebook found", from the claims
spectrum     ``python -m prismlib profile``: a local model's energy per band, layer by layer
index_page   the report's index and its sections (currency line, notebooks,
             verdicts, figures, claims, manifest)
links        the site's link check
browser      headless chromium: a page's height, its streams' share, screenshots
cli          the argument parser of every command: an error is one line, usage
             only with ``--help``
============ =====================================================================

Every public name of the modules is importable from the package (``from prismlib.runs import
...``); a module is imported on first use of one of its names, so the package imports only
what a caller needs."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "train": (
        "SECTION4",
        "PRETRAIN_MIN_MINUTES",
        "projection",
        "train_until_converged",
        "training_ahead",
    ),
    "costs": (
        "WINDOWS",
        "CLASSES",
        "ASSUMED_TFLOPS",
        "SPLITS",
        "FILTERS",
        "MASKED",
        "BYTES",
        "Work",
        "encoder_config",
        "section4_config",
        "bert_parameters",
        "bert_token_flops",
        "bert_train_memory",
        "bert_eval_memory",
        "lstm_parameters",
        "lstm_token_flops",
        "works",
        "measure",
    ),
    "clock": (
        "MEASURED",
        "CALIBRATED",
        "MODELLED",
        "Estimate",
        "Calibration",
        "measured_runs",
        "run_date",
        "calibrate",
        "rates_label",
        "estimates",
        "notebook_estimates",
    ),
    "plan": (
        "plan_table",
        "PLAN_WIDTH",
        "device_counts",
    ),
    "reproduce": (
        "PACKAGES",
        "notebook_sources",
        "short_commit",
        "check_arguments",
        "NotebookFailed",
        "incomplete",
        "run_notebooks",
        "refresh_paired",
        "current_result",
        "cold_fields",
        "claims_summary",
    ),
    "manifest": (
        "FORMAT",
        "LEGACY_KEYS",
        "manifest_path",
        "read_manifest",
        "notebook_records",
        "cold_seconds",
        "run_seconds",
        "update_record",
        "write_manifest",
        "source_digests",
        "changed_sources",
    ),
    "preflight": (
        "PROBING",
        "NEEDS",
        "PreflightError",
        "needs",
        "encoder_problem",
        "preflight_problems",
    ),
    "results": (
        "NOTEBOOK_GLOB",
        "Sources",
        "Entry",
        "find_sources",
        "notebook_seconds",
        "SOURCES",
        "executed_sources",
        "lstm_runs_line",
        "grid_line",
    ),
    "findings": (
        "WORKS",
        "DECIDED",
        "README_MARKERS",
        "WorkSummary",
        "failed_gate",
        "work_summary",
        "headlines",
        "effect_text",
        "findings_markdown",
        "update_readme",
        "write_block",
    ),
    "readme_costs": (
        "COSTS_MARKERS",
        "REPORT_ROW",
        "SMOKE_ROW",
        "READER_PATHS",
        "reader_rows",
        "RunCosts",
        "run_costs",
        "costs_markdown",
        "update_costs",
        "TIMES_MARKERS",
        "run_times_markdown",
        "update_run_times",
    ),
    "results_page": (
        "RESULTS_MARKERS",
        "CLAIM_CHARS",
        "PAPER_CHARS",
        "MOVED_MARKERS",
        "SHOWN",
        "short",
        "notebook_lines",
        "notebook_findings",
        "notebook_titles",
        "update_results_page",
        "verdict_changes",
        "claims_at",
        "update_verdicts_moved",
    ),
    "spectrum": (
        "PAPER_WINDOW",
        "MIN_WINDOW",
        "load_local_model",
        "text_windows",
        "special_wrap",
        "band_energy",
    ),
    "report": (
        "MARKER",
        "build_report",
    ),
    "index_page": (
        "FIGURE_ORDER",
        "MEANINGLESS",
        "render_index",
        "findings_html",
        "currency_line",
        "rerun_cost",
        "figure_owners",
        "WRITTEN_BY_CALL",
        "describe_sentence",
        "not_run_reason",
    ),
    "links": (
        "check_links",
        "external_links",
    ),
    "pages": (
        "STYLE",
        "PAGE_STYLE",
        "WIDGET",
        "is_progress",
        "clean_outputs",
        "path_patterns",
        "redact_paths",
        "redact_notebook",
        "math_to_mathml",
        "notebook_math",
        "fill_math",
        "strip_cdn_scripts",
        "project_roots",
        "run_time_html",
        "commit_html",
        "PAPER_FIGURE",
        "claims_cell",
        "main_figure",
        "first_screen",
        "notebook_page",
        "markdown_html",
    ),
    "browser": (
        "FLAGS",
        "WIDTH",
        "PageMetrics",
        "find_chromium",
        "measure_page",
        "screenshot",
    ),
    "cli": (
        "HINT",
        "CommandParser",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
