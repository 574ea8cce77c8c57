"""Work B as published (Mahto et al., ICLR 2021): Dyck-2, routing by timescale, mutual information.

The experiments of the published version that the slides (:mod:`prismlib.lstm`, notebooks
05-08) do not have, run by notebook 10; they build on the LSTM LM, its timescales and its
evaluation in :mod:`prismlib.lstm`, which never imports this package.

================== ======================================================================
dyck               the ICLR paper's Dyck-2 task: grammar sampler, legal next symbols, scoring
dyck_model         the Dyck-2 LSTMs: baseline and the official multi-timescale model
dyck_training      Dyck-2 training as cached, resumable, seeded jobs; their convergence gate
routing            routing by timescale: layer-2 unit blocks zeroed by timescale; forget-gate trajectories
mutual_information mutual information between words d apart (bias-corrected), its decay fits
timescale_fit      trained timescales: inverse gamma against rivals; fixed units keep their timescales
================== ======================================================================

Every public name of the modules is importable from the package (``from prismlib.lstm.iclr
import ...``); a module is imported on first use of one of its names, so the package imports
only what a caller needs."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
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
    "dyck_model": (
        "DYCK_MODELS",
        "dyck_timescales",
        "DyckLSTM",
        "build_dyck_model",
    ),
    "dyck_training": (
        "dyck_data",
        "epoch_batches",
        "squared_error",
        "dyck_outputs",
        "validation_loss",
        "constant_loss",
        "DyckHistory",
        "train_dyck",
        "DyckJob",
        "DyckRun",
        "dyck_jobs",
        "load_dyck_run",
        "trained_dyck",
        "dyck_converged_gate",
        "DYCK_RECIPE_VERSION",
        "dyck_recipe_code",
        "DYCK_MARGIN",
        "LEARNED_SHORT",
        "correct_matrix",
        "dyck_accuracy_table",
        "seed_accuracy",
        "long_range_difference",
        "long_range_test",
        "dyck_learned_gate",
        "memory_floor",
        "long_range_floor_gate",
    ),
    "routing": (
        "timescale_order",
        "unit_blocks",
        "ablated_token_nll",
        "bin_ratio",
        "routing_ratios",
        "log_ratio_contrast",
        "forget_gate_trajectories",
        "ROUTING_MARGIN",
        "third_weights",
        "routing_contrast",
        "routing_test",
    ),
    "timescale_fit": (
        "RIVALS",
        "FIT_MARGIN",
        "KEEP_FACTOR",
        "fitted_loglik",
        "invgamma_advantage",
        "timescale_fits",
        "invgamma_test",
        "shown_timescales",
        "timescale_drift",
        "rank_agreement",
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
        "retention_curve",
        "loglog_exponent",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
