"""Work B's claims layer: what the notebooks 05-08 train, start with, tabulate and claim.

The experiment grid, the notebooks' start and tables, and the claims with their gates, built
on the model, training and analysis of :mod:`prismlib.lstm` (which never imports this
package).

================== ======================================================================
grid               which models each experiment trains on each profile
header             what every work-B notebook starts with: profile, PTB test tokens, trained runs
summaries          tables and figures of trained runs: the runs table, learning curves
verdicts           the gates every perplexity claim carries: convergence, stability, seeds
doubling           the doubling check: is one fixed learning-rate path long enough for a claim
slide_claims       the slides' perplexity claims of notebooks 05-07 as tests, with their gates wired in
ablation_claims    notebook 08's memory claims: the cell-state ablation as tests, with their gates
================== ======================================================================

Every public name of the modules is importable from this package (``from
prismlib.lstm.claims import ...``) and from :mod:`prismlib.lstm`, whose table lists them
again (``from prismlib.lstm import claim_gates``); a module is imported on first use of one
of its names."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "grid": (
        "EXPERIMENTS",
        "NOTEBOOK_EXPERIMENTS",
        "DOUBLING",
        "CLAIM_TWINS",
        "experiment",
        "all_specs",
        "doubling_specs",
        "claim_twin_specs",
        "in_priority",
    ),
    "header": (
        "WorkBStart",
        "ptb_test_ids",
        "work_b_start",
        "baseline_references",
        "trained_with_references",
    ),
    "summaries": (
        "runs_table",
        "CURVES_TABLE",
        "CURVE_COLUMNS",
        "curves_frame",
        "save_learning_curves",
        "plot_learning_curves",
    ),
    "verdicts": (
        "SMALL_EFFECT",
        "MIN_SEEDS",
        "TestsOf",
        "claim_gates",
        "WorkBClaims",
        "interval_row",
        "stopped_by_rule",
        "converged_gate",
    ),
    "doubling": (
        "DoublingCheck",
        "doubling_jobs",
        "doubling_check",
    ),
    "slide_claims": (
        "perplexity_claim",
        "equivalent",
        "rises",
        "first_layer_worst",
        "no_harm",
        "layer2_key",
        "layer2_short",
        "beats_baseline",
        "beats_by",
        "first_layer_worse_by",
        "published_margin",
        "pareto_best",
        "x70_worst",
        "RARE_MARGIN",
        "bin_log_gap",
        "rare_words",
    ),
    "ablation_claims": (
        "MemoryGates",
        "layer_slope",
        "slope_gap",
        "run_name",
        "range_gap",
        "log_tau_gap",
        "L3_SIMILAR",
        "ControlledEffect",
        "controlled_effect",
        "controlled_tests",
        "control_note",
        "slope_range",
        "ablate_models",
        "untrained_controls",
        "decay_gate",
        "MemoryClaims",
        "memory_claims",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
