"""Work B: LSTM language models whose units have set memory timescales.

================== ======================================================================
model              the AWD-style LSTM LM (weight drop, fixed bias entries, tied softmax)
timescales         timescale <-> forget-gate bias, chrono and the slides' variants
training           the AWD-LSTM training loop (NT-ASGD, annealed SGD or Adam, exact resume)
evaluation         per-token NLL, perplexity, paired chunk bootstraps, frequency bins
                   (array-level: nothing here takes a trained run)
job                ``RunSpec`` (what to train), the cached ``Job``, ``TrainedRun``
grid               which models each experiment trains on each profile
bigram             the unigram and Kneser-Ney bigram references (the gate of every claim)
ablation           the cell-state ablation (how far back each layer remembers)
convergence        learning curves, the model gate, power-law budgets
verdicts           the gates every perplexity claim carries: convergence, stability, seeds
summaries          tables and figures of trained runs: the runs table, learning curves
dyck               the ICLR paper's Dyck-2 task: grammar sampler, legal next symbols, scoring
mutual_information mutual information between words d apart (bias-corrected), its decay fits
================== ======================================================================

Every public name of the modules is importable from the package (``from prismlib.lstm import
...``); a module is imported on first use of one of its names, so the package imports only
what a caller needs."""

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
        "N_BOOT_PTB",
        "CHUNK",
        "predicted_mask",
        "seed_mean_nll",
        "chunk_sums",
        "model_perplexity",
        "perplexity_contrast",
        "perplexity_difference",
        "FREQUENCY_BINS",
        "frequency_bins",
        "perplexity_by_frequency",
        "forget_gate_means",
        "Bootstrap",
        "bootstrap_perplexity",
        "seed_spread",
        "SeedMeans",
        "seed_means",
        "context_use",
        "context_use_gate",
    ),
    "job": (
        "RunSpec",
        "TrainedRun",
        "build_model",
        "Job",
        "jobs_for",
        "load_run",
        "trained",
        "STATUS",
        "write_status",
        "read_status",
        "untrained_model",
        "RECIPE_VERSION",
        "recipe_code",
        "bigram_valid_ppl",
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
        "format_tokens",
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
    "grid": (
        "EXPERIMENTS",
        "experiment",
        "all_specs",
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
        "control_gate",
    ),
    "dyck": (
        "P_OPEN",
        "P_SPLIT",
        "P_EMPTY",
        "MAX_LENGTH",
        "MIN_LENGTH",
        "SYMBOLS",
        "N_TYPES",
        "END",
        "PAD",
        "THRESHOLD",
        "N_EDGES",
        "DyckRecipe",
        "OFFICIAL_RECIPE",
        "encode",
        "decode",
        "production_probabilities",
        "derive",
        "sample_sequences",
        "pair_probabilities",
        "match_indices",
        "bracket_distances",
        "legal_next",
        "closer_targets",
        "DyckSplit",
        "make_split",
        "build_dataset",
        "sequence_correct",
        "official_edges",
        "accuracy_by_distance",
        "distance_distribution",
    ),
    "mutual_information": (
        "MI_ESTIMATORS",
        "MI_CHUNKS",
        "entropy_estimate",
        "MutualInformation",
        "mutual_information_curve",
        "shuffled_floor",
        "DecayFit",
        "fit_mi_power_law",
        "fit_mi_exponential",
        "DecayComparison",
        "compare_decays",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
