"""A small BERT pretrained here with masked LM on the offline training text (issue 76), so
section 4's claims meet their premise at cpu scale.

============ ==================================================================
corpus       the pretraining text: training splits only, every sentence of an
             evaluated split left out (hashed), the guard that refuses an overlap,
             the held-out slice, the corpus digest, generated text for tests
sequences    the text as WordPiece ids packed into full-length inputs (cached)
model        ``BertSize`` and the ``transformers`` ``BertForMaskedLM`` built from it
evaluation   the held-out masked-LM loss against a unigram model on the same positions
recipe       ``PretrainConfig`` (BERT's long second phase included), the run's key, the
             learning rate with its re-warm-up after a boundary
record       committed states: a run's fp16 weights between sittings, kept in git (a
             continued run's retired from the tree, its curve kept)
train        the resumable training loop (AdamW, minutes budget, curve, phases, resuming
             from a committed state)
installment  one installment of a pretraining (``train --minutes``): a budget's steps from
             the local or the committed state, then the committed state; the recipe
             of a profile's ``PretrainSettings`` (a continuation's base resolved)
projection   a pilot curve projected to a budget (log-linear gain, power law)
encoder      the committed pretraining as a Hugging Face encoder folder (built
             once per record, in the cache), its masked-LM premise gate, its
             curve as a figure, and the encoder a profile's section 4 runs on
============ ==================================================================

Every public name of the modules is importable from the package (``from prismlib.pretrain
import ...``); a module is imported on first use of one of its names."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "corpus": (
        "SOURCES",
        "PTB_BLOCK",
        "HELDOUT_EVERY",
        "MIN_WORDS",
        "PTB_UNK",
        "NUMBER",
        "UNK_TOKEN",
        "normalise_sentence",
        "sentence_key",
        "sentence_keys",
        "split_sentences",
        "Document",
        "PretrainCorpus",
        "corpus_digest",
        "split_heldout",
        "EvaluatedSplit",
        "SplitKeys",
        "EVALUATED",
        "ptb_vocabulary",
        "evaluated_keys",
        "check_disjoint",
        "exclude",
        "newsgroups_documents",
        "swda_documents",
        "ptb_documents",
        "build_corpus",
        "synthetic_documents",
    ),
    "sequences": (
        "tokenizer_digest",
        "tokenize_documents",
        "pack_sequences",
        "PretrainInputs",
        "pretraining_inputs",
    ),
    "model": (
        "MINILM_VOCAB",
        "TOKENIZER",
        "BertSize",
        "bert_config",
        "new_bert",
        "parameter_count",
        "step_flops",
        "half_weights",
        "load_half_weights",
        "full_head_loss",
        "special_ids",
        "pretraining_tokenizer",
    ),
    "evaluation": (
        "HeldOut",
        "unigram_model",
        "heldout_set",
        "heldout_loss",
    ),
    "recipe": (
        "SCHEDULES",
        "RECIPE_VERSION",
        "REWARM_STEPS",
        "PretrainConfig",
        "recipe_description",
        "recipe_key",
        "learning_rate",
        "check_lengths",
        "cross_boundary",
    ),
    "record": (
        "WEIGHTS",
        "RunSoFar",
        "CommittedState",
        "check_committed",
        "write_state",
        "read_state",
        "RETIRED",
        "retire_weights",
    ),
    "train": (
        "STATE",
        "CURVE",
        "RUN",
        "CURVE_COLUMNS",
        "PretrainResult",
        "write_curve",
        "read_curve",
        "pretrain",
        "PretrainData",
        "offline_inputs",
        "synthetic_inputs",
        "parser",
        "main",
    ),
    "installment": (
        "pretrain_config",
        "InputsFor",
        "recipe_config",
        "recipe_inputs",
        "PretrainOutcome",
        "pretrain_installment",
    ),
    "projection": (
        "LogLinear",
        "fit_log_linear",
        "Projection",
        "project",
    ),
    "encoder": (
        "PREMISE_GATE",
        "BUILT",
        "PretrainingNotDone",
        "PretrainedEncoder",
        "committed_encoder",
        "pretrained_premise",
        "pretraining_figure",
        "Section4Encoder",
        "section4_encoder",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
