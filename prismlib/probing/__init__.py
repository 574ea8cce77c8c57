"""Section 3 of work A: probing filtered representations.

================= =================================================================
windows           labelled 512-token windows from a dataset's documents
masking           BERT's masking of a batch or a probing window (the MLM probe's and
                  section 4's continued training)
tasks             the POS, dialog-act, topic and MLM probing tasks
encoders          the pretrained encoders (offline MiniLM, Hugging Face BERT), how each was
                  pretrained, and the gate on the paper's masked-LM premise
features          filtered features per condition, sampled positions
states            the encoder's full hidden states, cached once per window
recipe            how a probe trains (epoch cap, patience, rate, batches), built from the profile
probes            the paper's softmax probe, its runs (continued past a cap), accuracy comparisons
specialisation    bands x tasks on each task's scale: does a band do well only on its task,
                  and whose band profile is MLM's nearest?
study             notebook 02's procedures: probe a task, its comparisons over test units, the
                  measured choices
cap_check         is the probes' epoch cap long enough? the capped conditions again at twice
                  the cap, and a gate on every claim whose verdict the cap decides
fig4_claims       the claims of section 3 (Figure 4, the abstract) with their gates wired in
learned_filter    a learned per-frequency filter in front of the probe, its all-pass control
matched_features  notebook 09's smooth and Haar bands matched at -3 dB and the energy twins, as features
spectral_profiles reading the learned profiles: band spread, centre, their claims' gates
beyond_claims     notebook 09's claims: per task matched bands, energy twins, the learned gate
================= =================================================================

Every public name of the modules is importable from the package (``from prismlib.probing import
...``); a module is imported on first use of one of its names, so the package imports only
what a caller needs."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "windows": (
        "IGNORE",
        "Unit",
        "Window",
        "pack_units",
        "tokenize_many",
    ),
    "masking": (
        "LOSS_IGNORE",
        "mask_batch",
        "mask_window",
    ),
    "tasks": (
        "TASKS",
        "TASK_UNITS",
        "PTB3_ENV",
        "SPLITS",
        "DA_LABELS",
        "TaskData",
        "build_task",
        "profile_task",
        "mlm_bucket",
    ),
    "encoders": (
        "DRY_RUN_ENCODER",
        "DRY_RUN_CONFIG",
        "ENCODERS",
        "ENCODER_NAMES",
        "PRETRAINED_PREFIX",
        "encoder_name",
        "Pretraining",
        "ENCODER_PRETRAINING",
        "MASKED_LM_PREMISE",
        "masked_lm_premise",
        "dry_run_encoder",
        "encoder_location",
        "Encoder",
        "quiet_loading",
        "load_encoder",
        "first_window",
        "hidden_states",
    ),
    "features": (
        "CONDITIONS",
        "DC",
        "SMOOTH_CONDITIONS",
        "HAAR_CONDITIONS",
        "SMOOTH_WIDTH",
        "SMOOTH_SHAPE",
        "parse_condition",
        "Features",
        "pool_features",
        "SPECIALS",
        "placement",
        "filter_conditions",
        "sample_positions",
        "unit_weights",
        "encode_windows",
        "features_digest",
    ),
    "states": (
        "STATES_VERSION",
        "States",
        "encode_layer_states",
        "encode_states",
        "cached_layer_states",
        "cached_states",
        "encode_splits",
    ),
    "recipe": ("ProbeRecipe",),
    "probes": (
        "MAJORITY",
        "FitState",
        "ProbeResult",
        "weighted_loss",
        "weighted_accuracy",
        "check_splits",
        "fit_with_halving",
        "train_probe",
        "ProbeRuns",
        "majority_class",
        "probe_conditions",
        "collect_runs",
        "majority_baseline",
        "accuracy_sums",
        "compare_accuracy",
        "majority_gate",
        "accuracy_interval",
        "summarise",
        "ranking",
        "best_on_validation",
        "ProbeComparison",
    ),
    "specialisation": (
        "OWN_TASKS",
        "MIDPOINT",
        "relative_sums",
        "relative_score",
        "score_matrix",
        "score_grid",
        "score_interval",
        "specialisation_tests",
        "specialisation_table",
        "profile_distances",
        "nearer_profile",
    ),
    "study": (
        "probe_task",
        "ProbeStudy",
        "probe_study",
        "task_comparison",
        "choice_row",
        "choice_table",
        "choice_changes",
    ),
    "cap_check": (
        "CAP_GATE",
        "twins",
        "capped_conditions",
        "with_runs",
        "cap_gate",
        "with_cap_gates",
        "cap_table",
        "capped_table",
    ),
    "fig4_claims": (
        "DC_TASKS",
        "TASK_PHRASES",
        "PROFILE_TASKS",
        "PROFILE_GAP",
        "DC_READING",
        "task_phrase",
        "masked_lm_gate",
        "best_band_claim",
        "dc_claim",
        "profile_claim",
        "section3_claims",
        "masked_lm_claims",
    ),
    "learned_filter": (
        "GATED",
        "GateRecipe",
        "SpectralGate",
        "GatedProbe",
        "GatedProbeResult",
        "matched_windows",
        "train_gated_probe",
        "GatedRuns",
        "gated_probe_runs",
        "combine_runs",
        "ALL_PASS",
        "gate_and_control_runs",
    ),
    "matched_features": (
        "MATCHED_SMOOTH_CONDITIONS",
        "MATCHED_HAAR_CONDITIONS",
        "ENERGY_TWIN_CONDITIONS",
        "energy_twin_condition",
        "beyond_features",
    ),
    "spectral_profiles": (
        "band_spread",
        "spectral_centre",
        "MIN_GATE_RUNS",
        "runs_gate",
        "spread_gate",
        "smoothed_profile",
        "PROFILE_ORDER",
        "profile_order_claim",
    ),
    "beyond_claims": (
        "PipelineCheck",
        "pipeline_check",
        "matched_band_claim",
        "learned_gate_claims",
        "optimisation_gate",
        "task_claims",
        "section_claims",
        "section_claims_from_runs",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
