"""Section 4 of work A: the prism layer and continued masked-language-model training.

================ ================================================================
layer            ``PrismLayer`` and ``attach_prism`` (hooks on a Hugging Face BERT)
mlm_training     the paper's continued MLM training (checkpoints, exact resume)
staged_recipe    the cpu recipe: frozen lower layers, head warm-up, top layers
corpus           section 4's text: training, stopping and held-out Fig. 5 inputs
arms             Table 1's arms as cached, resumable training jobs, and the trained models
sanity           the MLM sanity gate: each trained arm's held-out MLM loss against a unigram model
seeds            training seeds: seeded condition names, seed means, one interval over units and seeds, the seeds gate,
                 a Table 1 row's accuracy columns
span_analysis    Fig. 5: masked-span scores, held-out scores, per-article means
verdicts         the gates of Table 1 and App. B's claims (sanity, convergence, stability); a Fig. 5
                 claim tested at every near-window width
table1_claims    Table 1 and App. B's claims with their gates; the names and paper numbers of notebook 03
================ ================================================================

Every public name of the modules is importable from the package (``from prismlib.prism import
...``); a module is imported on first use of one of its names, so the package imports only
what a caller needs."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "layer": (
        "sector_sizes",
        "sector_slices",
        "PrismLayer",
        "encoder_layers",
        "PrismHandle",
        "attach_prism",
    ),
    "mlm_training": (
        "chunk_tokens",
        "load_mlm_model",
        "load_mlm_tokenizer",
        "mlm_head",
        "mlm_loss",
        "derived_seed",
        "batch_indices",
        "training_batch",
        "TrainResult",
        "train_mlm",
    ),
    "staged_recipe": (
        "first_trained",
        "lower_states",
        "top_states",
        "tied_weight",
        "head_parameters",
        "set_trainable",
        "set_attention_dropout",
        "FrozenPart",
        "StagedEncoder",
        "StateCache",
        "mask_version",
        "build_state_cache",
        "open_state_cache",
        "head_features",
        "warm_up_head",
        "lr_factor",
        "train_top",
        "StopRule",
        "cached_loss",
    ),
    "corpus": (
        "MLMCorpus",
        "mlm_corpus",
        "articles_line",
        "training_inputs",
        "fig5_inputs",
    ),
    "arms": (
        "ARMS",
        "UNTRAINED_PRISM_ON",
        "TRAINED",
        "Section4Data",
        "prism_layers",
        "stop_rule",
        "ArmJob",
        "TrainedMLM",
        "section4_data",
        "arm_jobs",
        "section4_models",
        "probe_encoders",
        "RECIPE_VERSION",
        "recipe_code",
        "recipe_settings",
    ),
    "sanity": (
        "MLMSanity",
        "mlm_sanity",
    ),
    "seeds": (
        "SEED",
        "seeded",
        "split_seed",
        "seeds_interval",
        "seeds_test",
        "seeds_gate",
        "every_seed",
        "seed_means",
        "seed_effects",
        "spread_row",
        "SeedComparison",
        "accuracy_columns",
    ),
    "span_analysis": (
        "masked_span_logprobs",
        "heldout_logprobs",
        "heldout_mask",
        "unigram_logprobs",
        "per_article",
        "article_mean",
        "span_minus_outside",
        "FAR",
        "DIP_WIDTHS",
        "span_regions",
        "fig5_summary",
        "fig5_by_seed",
        "bootstrap_ci",
    ),
    "verdicts": (
        "EARLIER",
        "arm_of",
        "trained_weights",
        "earlier",
        "sector_condition",
        "Section4Gates",
        "stable_since_decay",
        "Fig5Key",
        "claim_at_every_width",
    ),
    "table1_claims": (
        "TASK_NAMES",
        "MODEL_NAMES",
        "UNIT_NAMES",
        "TABLE1_PAPER",
        "APPENDIX_B_PAPER",
        "published_b2",
        "published_b3",
        "b3_margin",
        "KEEPS",
        "TABLE1_CAPTION",
        "HALF_GAIN",
        "probing_claim",
        "with_half_gain",
        "section4_claims",
        "comparably_or_better",
        "decomposition",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
