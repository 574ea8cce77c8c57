"""The small BERT that is pretrained here: ``transformers``' ``BertForMaskedLM``, so section 4's
code runs the same path on it as on bert-base-cased.

:class:`BertSize` is the architecture (layers x hidden, heads, intermediate = 4 x hidden,
MiniLM's uncased WordPiece vocabulary of 30,522 and 512 positions by default, so section 4's
512-token windows fit); :func:`new_bert` builds it with BERT's initialisation from a seed.

The loss: :func:`prismlib.prism.mlm_loss` gathers the encoder's output at the masked
positions *before* the MLM head, so the vocabulary-sized decoder runs on ~15% of the tokens
(2.4-3.3x faster per step at 2 x 128 and 4 x 256, issue 76); :func:`full_head_loss` is the
library's head at every position, the same number (tests/pretrain/test_model.py), kept for
the speed benchmark. The masking is :func:`prismlib.probing.mask_batch` (BERT's 80/10/10 at
15%), drawn per step by :func:`prismlib.prism.training_batch`.

:func:`half_weights` and :func:`load_half_weights` are the float16 weights a committed state
keeps (:mod:`prismlib.pretrain.record`), the decoder tied to the word embeddings stored once.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import Tensor

MINILM_VOCAB = 30_522
"""Size of MiniLM's uncased WordPiece vocabulary (the tasks' tokenizer)."""
TOKENIZER = "minilm"
"""The encoder whose tokenizer the pretraining uses (:func:`prismlib.prism.load_mlm_tokenizer`)."""


@dataclass(frozen=True)
class BertSize:
    """The architecture of a small BERT.

    Attributes:
        layers: transformer layers.
        hidden: hidden size.
        heads: attention heads (``hidden`` must divide by it).
        vocab_size: wordpiece vocabulary (default MiniLM's 30,522).
        max_positions: position embeddings (512: section 4's windows).
        dropout: hidden and attention dropout (BERT's 0.1).
    """

    layers: int
    hidden: int
    heads: int
    vocab_size: int = MINILM_VOCAB
    max_positions: int = 512
    dropout: float = 0.1

    def __post_init__(self) -> None:
        if min(self.layers, self.hidden, self.heads) < 1 or self.hidden % self.heads:
            raise ValueError(f"need layers, hidden, heads >= 1 and hidden divisible by heads, got {self}")

    @property
    def intermediate(self) -> int:
        """Feed-forward width: 4 x hidden, as every BERT."""
        return 4 * self.hidden

    @property
    def name(self) -> str:
        """``"4x256"``: layers x hidden."""
        return f"{self.layers}x{self.hidden}"

    @classmethod
    def parse(cls, text: str, **kw: Any) -> BertSize:
        """``"4x256"`` -> 4 layers of 256 with 256 / 64 = 4 heads (at least 1; ``"4x256h8"``: 8 heads)."""
        m = re.fullmatch(r"(\d+)x(\d+)(?:h(\d+))?", text.strip())
        if m is None:
            raise ValueError(f"a size is LAYERSxHIDDEN[hHEADS], e.g. 4x256 or 2x128h2, got {text!r}")
        layers, hidden = int(m[1]), int(m[2])
        return cls(layers, hidden, int(m[3]) if m[3] else max(1, hidden // 64), **kw)

    def describe(self) -> dict[str, Any]:
        """The fields as a JSON-able dict (part of a recipe's key)."""
        return asdict(self)


def bert_config(size: BertSize, attn_implementation: str = "sdpa") -> Any:
    """A ``transformers.BertConfig`` of ``size`` (GELU, LayerNorm eps 1e-12, 2 token types, as BERT)."""
    from transformers import BertConfig

    config = BertConfig(
        vocab_size=size.vocab_size,
        hidden_size=size.hidden,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        intermediate_size=size.intermediate,
        max_position_embeddings=size.max_positions,
        hidden_dropout_prob=size.dropout,
        attention_probs_dropout_prob=size.dropout,
    )
    config._attn_implementation = attn_implementation
    return config


def new_bert(size: BertSize, seed: int, attn_implementation: str = "sdpa") -> Any:
    """A freshly initialised ``BertForMaskedLM`` of ``size`` (BERT's initialisation, decoder tied
    to the word embeddings), in train mode; the same seed gives the same weights, and the
    global torch RNG is left as it was."""
    from transformers import BertForMaskedLM

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForMaskedLM(bert_config(size, attn_implementation))
    return model.train()


def parameter_count(model: torch.nn.Module, embeddings: bool = True) -> int:
    """Parameters of ``model`` (tied weights once); ``embeddings=False`` leaves out the
    word, position and token-type embeddings (the usual count of a model's compute)."""
    seen: set[int] = set()
    total = 0
    for name, p in model.named_parameters():
        if id(p) in seen or (not embeddings and "embeddings" in name):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


def step_flops(size: BertSize, batch: int, seq_len: int, masked_share: float | None = 0.15) -> float:
    """Approximate floating-point operations of one training step (forward + backward = 3 x
    forward, 2 per multiply-add): the layers' matrix products, attention scores and the MLM
    head (transform + decoder) at ``masked_share`` of the positions (``None``: every position)."""
    h, layers, tokens = size.hidden, size.layers, batch * seq_len
    per_token_layer = 2 * (4 * h * h + 2 * h * size.intermediate) + 2 * 2 * seq_len * h
    head_tokens = tokens * (1.0 if masked_share is None else masked_share)
    head = 2 * (h * h + h * size.vocab_size)
    return 3.0 * (tokens * layers * per_token_layer + head_tokens * head)


def half_weights(model: torch.nn.Module) -> dict[str, Tensor]:
    """The parameters in float16 (2 bytes each), a tied one once under its first name
    (``named_parameters``: the MLM decoder is the word embeddings): a committed state's weights."""
    return {name: p.detach().to(torch.float16) for name, p in model.named_parameters()}


def load_half_weights(model: Any, weights: dict[str, Tensor]) -> Any:
    """``model`` (in place, returned) with the parameters of ``weights`` (:func:`half_weights`)
    converted to each parameter's dtype: a tied parameter gets its one stored tensor.

    Raises:
        ValueError: ``weights`` holds other names or shapes than ``model``'s parameters.
    """
    params = dict(model.named_parameters())
    if set(weights) != set(params) or any(weights[n].shape != p.shape for n, p in params.items()):
        differ = sorted(set(weights) ^ set(params)) or [n for n, p in params.items() if weights[n].shape != p.shape]
        raise ValueError(f"the weights are not this architecture's parameters (they differ in {differ[:3]})")
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(weights[name].to(p.dtype))
    return model


def full_head_loss(model: Any, input_ids: Tensor, labels: Tensor) -> Tensor:
    """The library's masked-LM loss: the head at every position, cross-entropy where
    ``labels != -100`` (``model(input_ids, labels=labels).loss``)."""
    return model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), labels=labels).loss


def special_ids(tokenizer: Any) -> list[int]:
    """Ids never masked and never a target: ``[CLS]``, ``[SEP]``, ``[PAD]``, ``[MASK]`` and
    ``[UNK]`` (PTB's ``<unk>``: predicting it says nothing)."""
    ids = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id, tokenizer.mask_token_id, tokenizer.unk_token_id}
    return sorted(int(i) for i in ids if i is not None)


def pretraining_tokenizer() -> Any:
    """MiniLM's uncased WordPiece tokenizer (offline, :data:`TOKENIZER`), the tasks' tokenizer."""
    from prismlib.prism import load_mlm_tokenizer

    return load_mlm_tokenizer(TOKENIZER)
