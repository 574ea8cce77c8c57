"""Running the project: jobs and executors, and the commands of ``python -m prismlib``.

=========== =====================================================================
jobs        a trained model is a job cached by the hash of its spec; executors
            ``inline``, ``local`` (single-thread worker processes), ``slurm``
train       ``python -m prismlib train``: a profile's models, up front
costs       ``python -m prismlib plan``: jobs, hours, memory and disk per notebook
notebooks   ``python -m prismlib reproduce``: every notebook headless (papermill)
report      ``python -m prismlib report``: the static HTML site of a profile
timing      the timing references of ``benchmarks/`` and App. D
=========== =====================================================================

Every public name of the modules is importable from the package (``from prismlib.runs import ...``); a module is imported on first use of one of its names, so the package imports only what a caller needs."""

from __future__ import annotations

from prismlib.lazy import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "jobs": (
        "EXECUTORS", "TRAINING_RECORD", "EXECUTOR_ENV", "Trainable", "job_key", "job_dir",
        "is_done", "run_job", "pool_size", "run_missing", "training_runs", "record_training",
    ),
    "train": (
        "SECTION4", "projection", "train_until_converged",
    ),
    "costs": (
        "WINDOWS", "CLASSES", "ASSUMED_TFLOPS", "SPLITS", "FILTERS", "MASKED", "BYTES", "HOURS",
        "Work", "encoder_config", "bert_parameters", "bert_token_flops", "bert_train_memory",
        "bert_eval_memory", "lstm_parameters", "lstm_token_flops", "works", "measure", "plan",
    ),
    "notebooks": (
        "PACKAGES", "notebook_sources", "reproduce", "refresh_paired",
    ),
    "report": (
        "MARKER", "NOTEBOOK_GLOB", "FIGURE_ORDER", "STYLE", "Sources", "Entry", "find_sources",
        "notebook_seconds", "build_report", "check_links", "external_links",
    ),
    "timing": (
        "torch_dct_decomposition", "scipy_decomposition", "NO_CUDA", "benchmark_device",
        "describe_device", "best_time", "interleaved_times", "SPREAD_WARNING", "spread", "BACKENDS",
        "REFERENCE_WIDTH", "filter_timings",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
