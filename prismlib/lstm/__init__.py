"""Work B: LSTM language models whose units have set memory timescales.

================== ======================================================================
model              the AWD-style LSTM LM (weight drop, fixed bias entries, tied softmax)
timescales         timescale <-> forget-gate bias, chrono and the slides' variants
training           the AWD-LSTM training loop (NT-ASGD, annealed SGD or Adam, exact resume)
chunks             a model's NLL summed per 100-token chunk (``ChunkNLL``): what comparisons read
evaluation         per-token NLL, perplexity, paired chunk bootstraps, frequency bins
                   (array-level: nothing here takes a trained run)
job                ``RunSpec``, the cached ``Job`` and its recipe version (it writes its record)
trained_runs       ``trained``, ``TrainedRun``: a finished job read from its checkpoint or its record
status             ``status.json``: how far a training job is
outcome            what a finished job keeps in its committed record, and reading it back
bigram             the unigram and Kneser-Ney bigram references (the gate of every claim)
ablation           the cell-state ablation (how far back each layer remembers)
convergence        learning curves, the model gate, power-law budgets
claims             sub-package: the grid, the notebooks' header and tables, the claims and
                   their gates (grid, header, summaries, verdicts, doubling, slide_claims,
                   ablation_claims)
iclr               sub-package: the ICLR 2021 version's Dyck-2, routing by timescale, mutual information
================== ======================================================================

Every public name of the modules is importable from the package (``from prismlib.lstm import
...``), those of :mod:`prismlib.lstm.claims` too (its modules are keyed ``"claims.<module>"``
below, and each stays an attribute by its old name: ``prismlib.lstm.grid`` is the module
``prismlib.lstm.claims.grid``); a module is imported on first use of one of its names, so the
package imports only what a caller needs. Nothing in this package's other modules imports either sub-package. The sub-package
:mod:`prismlib.lstm.iclr` exports its own names only (``from prismlib.lstm.iclr import ...``)."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "model": (
        "State",
        "LSTMLayer",
        "embedded_dropout",
        "locked_dropout",
        "LMOutput",
        "frequency_rank",
        "LSTMLM",
        "detach_state",
        "batchify",
    ),
    "timescales": (
        "Convention",
        "CONVENTIONS",
        "VARIANTS",
        "PARETO_EXPONENT",
        "INVGAMMA_SHAPE",
        "timescale_from_forget",
        "forget_from_timescale",
        "bias_from_timescale",
        "timescale_from_bias",
        "chrono_bias",
        "gradient_bias",
        "pareto_timescales",
        "inverse_gamma_timescales",
        "variant_forget_biases",
        "official_layer2_biases",
        "apply_official",
        "apply_timescales",
        "forget_gate_biases",
        "describe",
        "bias_shift",
        "bias_override",
        "FREEZE",
        "DEFAULT_FREEZE",
        "freeze_mask",
    ),
    "training": (
        "TrainHistory",
        "train_lm",
        "anneal_rule",
        "recipe_summary",
    ),
    "evaluation": (
        "token_nll",
        "perplexity",
        "mean_nll",
        "N_BOOT_PTB",
        "predicted_mask",
        "seed_mean_nll",
        "chunk_sums",
        "model_perplexity",
        "perplexity_contrast",
        "perplexity_difference",
        "frequency_bins",
        "perplexity_by_frequency",
        "forget_gate_means",
        "Bootstrap",
        "bootstrap_perplexity",
        "seed_spread",
        "SeedMeans",
        "seed_rows",
        "seed_means",
        "grouped_means",
        "bin_log_ratio_contrast",
        "context_use",
        "context_use_gate",
    ),
    "chunks": (
        "CHUNK",
        "FREQUENCY_BINS",
        "MissingBins",
        "ChunkNLL",
        "NLL",
        "as_chunks",
        "paired_chunks",
    ),
    "job": (
        "RunSpec",
        "build_model",
        "Job",
        "jobs_for",
        "untrained_model",
        "RECIPE_VERSION",
        "recipe_code",
        "bigram_valid_ppl",
    ),
    "trained_runs": (
        "NoWeights",
        "TrainedRun",
        "run_from_outcome",
        "checkpoint_outcome",
        "load_run",
        "sources_line",
        "trained",
    ),
    "status": (
        "STATUS",
        "write_status",
        "read_status",
    ),
    "convergence": (
        "SHARE",
        "TOLERANCE",
        "LearningCurve",
        "improvement",
        "model_gate",
        "PowerLaw",
        "fit_power_law",
        "stable_budget",
        "extrapolation",
        "models_gate",
        "FEASIBLE_TOKENS",
        "SCALES",
        "humane_number",
        "format_tokens",
    ),
    "outcome": (
        "keeps_weights",
        "chunked",
        "outcome_arrays",
        "history_summary",
        "biases_summary",
        "weights_writer",
        "arrays_writer",
        "load_arrays",
        "load_weights",
        "final_test_chunks",
        "SNAPSHOTS",
        "snapshot_chunks",
        "stored_forget_means",
        "history_from_summary",
        "biases_from_summary",
    ),
    "bigram": (
        "BigramLM",
        "fit_bigram",
        "bigram_nll",
        "versus_bigram",
        "beats_bigram",
        "ptb_baseline",
        "unigram_nll",
        "ptb_references",
        "lm_references",
    ),
    "ablation": (
        "MODES",
        "context_starts",
        "cell_state_change",
        "decay_slopes",
        "effective_timescale",
        "changes_frame",
        "context_interval",
        "slope_interval",
        "slope_difference",
        "slope_range_difference",
        "control_excess",
        "pooled_seed_contrast",
        "control_gate",
        "power_slopes",
        "resolvable_fit",
        "shared_fit",
        "power_slope_interval",
    ),
    "claims.grid": (
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
    "claims.header": (
        "WorkBStart",
        "ptb_test_ids",
        "work_b_start",
        "baseline_references",
        "trained_with_references",
    ),
    "claims.summaries": (
        "runs_table",
        "CURVES_TABLE",
        "CURVE_COLUMNS",
        "curves_frame",
        "save_learning_curves",
        "plot_learning_curves",
    ),
    "claims.verdicts": (
        "SMALL_EFFECT",
        "MIN_SEEDS",
        "TestsOf",
        "claim_gates",
        "WorkBClaims",
        "interval_row",
        "stopped_by_rule",
        "converged_gate",
    ),
    "claims.doubling": (
        "DoublingCheck",
        "doubling_jobs",
        "doubling_check",
    ),
    "claims.slide_claims": (
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
    "claims.ablation_claims": (
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
