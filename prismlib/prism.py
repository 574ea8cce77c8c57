"""The prism layer of "Language Through a Prism" (section 4.1, App. B.3).

A prism layer splits the hidden units of a layer's output into five contiguous
*sectors* and band-passes each sector along the tokens with its own band of Table 3a
(LOW for the first sector, ..., HIGH for the last), over each sequence's real length:

    h (batch, length, hidden) -> [band_pass(h[..., sector_j], band_j)]_j concatenated

The units are divided evenly; the ``hidden mod 5`` remaining units go to the first
sectors (paper footnote 7: 768 -> 154, 154, 154, 153, 153; MiniLM's 384 -> 77, 77, 77,
77, 76).  It has no parameters, is differentiable (thin DCT matrix products, see
:func:`prismlib.spectral.band_pass`) and runs on CPU and GPU.

:func:`attach_prism` puts a prism layer after the last encoder layer (the paper's
BERT + Prism) or after every encoder layer (App. B.3) of a Hugging Face BERT-style
model, by forward hooks: the library's modelling code is neither copied nor changed.
Everything computed from a layer's output afterwards sees the filtered output: the
next layer, ``last_hidden_state``, ``hidden_states`` and the MLM head.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor, nn

from prismlib.spectral import BAND_NAMES, Band, allocate_bands, band_pass, bands_for_lengths

__all__ = ["PrismHandle", "PrismLayer", "attach_prism", "encoder_layers", "sector_sizes", "sector_slices"]


def sector_sizes(hidden: int, k: int = 5) -> list[int]:
    """Units per sector: ``hidden // k`` each, the remainder one each to the first sectors.

    >>> sector_sizes(768)
    [154, 154, 154, 153, 153]
    """
    if k < 1:
        raise ValueError(f"need at least one sector, got k={k}")
    if hidden < k:
        raise ValueError(f"cannot split {hidden} hidden units into {k} non-empty sectors")
    base, extra = divmod(hidden, k)
    return [base + (1 if j < extra else 0) for j in range(k)]


def sector_slices(hidden: int, k: int = 5) -> list[slice]:
    """The contiguous unit ranges of :func:`sector_sizes`, first sector first."""
    out, lo = [], 0
    for size in sector_sizes(hidden, k):
        out.append(slice(lo, lo + size))
        lo += size
    return out


def _lengths_from_mask(attention_mask: Tensor, length: int) -> list[int] | None:
    """Real lengths of a right-padded ``(batch, length)`` mask; ``None`` when every row is full."""
    if attention_mask.ndim != 2 or attention_mask.shape[1] != length:
        raise ValueError(
            f"the prism layer needs a (batch, length) attention mask with length {length}, "
            f"got shape {tuple(attention_mask.shape)}"
        )
    mask = attention_mask != 0
    lengths = mask.sum(-1)
    if bool((lengths == length).all()):
        return None
    prefix = torch.arange(length, device=mask.device)[None, :] < lengths[:, None]
    if not bool((prefix == mask).all()):
        raise ValueError(
            "the prism layer filters each row over its real length and needs right padding "
            "(ones then zeros in every row of the attention mask); got a mask with holes or left padding"
        )
    if bool((lengths == 0).any()):
        raise ValueError("a row of the attention mask is all zeros; every input needs at least one token")
    return lengths.tolist()


class PrismLayer(nn.Module):
    """Band-pass five contiguous sectors of the hidden units, each with its own band.

    Args:
        hidden_size: number of hidden units (the last axis of the input).
        bands: band name of each sector, lowest units first (default the paper's
            LOW, MID-LOW, MID, MID-HIGH, HIGH); the bands for a sequence of length ``N``
            are those of ``allocate_bands(N)`` (Table 3a for ``N = 512``).
        base: growth factor of the band allocation (App. A; 4 in the paper).

    Shapes: ``forward(h (batch, length, hidden), attention_mask (batch, length) | None)``
    -> ``(batch, length, hidden)``.  Rows are filtered over their real length (the
    number of ones of a right-padded mask); padding positions come out zero.
    """

    def __init__(self, hidden_size: int, bands: Sequence[str] = BAND_NAMES, base: int = 4) -> None:
        super().__init__()
        bands = tuple(bands)
        unknown = [b for b in bands if b not in BAND_NAMES]
        if unknown:
            raise ValueError(f"unknown band(s) {unknown}; choose from {BAND_NAMES}")
        self.hidden_size = int(hidden_size)
        self.bands = bands
        self.base = int(base)
        self.sizes = sector_sizes(self.hidden_size, len(bands))
        self.slices = sector_slices(self.hidden_size, len(bands))

    def extra_repr(self) -> str:
        return f"hidden_size={self.hidden_size}, sectors={self.sizes}, bands={list(self.bands)}"

    def sector(self, band: str) -> slice:
        """The unit range filtered with ``band`` (e.g. ``"LOW"``)."""
        return self.slices[self.bands.index(band)]

    def forward(self, h: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        if h.ndim != 3 or h.shape[-1] != self.hidden_size:
            raise ValueError(f"expected (batch, length, {self.hidden_size}) hidden states, got {tuple(h.shape)}")
        n = h.shape[1]
        lengths = None if attention_mask is None else _lengths_from_mask(attention_mask, n)
        dtype = h.dtype
        # under autocast the DCT products would run in half precision; the filter is
        # cheap, so keep it in float32 for bands that stay clean
        if torch.is_autocast_enabled(h.device.type) or dtype in (torch.float16, torch.bfloat16):
            with torch.autocast(h.device.type, enabled=False):
                return self._filter(h.float(), n, lengths).to(dtype)
        return self._filter(h, n, lengths)

    def _filter_full(self, x: Tensor) -> Tensor:
        """Filter rows that are all of real length ``x.shape[1]``: five thin products."""
        bands = _bands(x.shape[1], len(self.bands), self.base)
        return torch.cat(
            [band_pass(x[..., sl], bands[name], dim=-2, check_finite=False) for name, sl in zip(self.bands, self.slices)],
            dim=-1,
        )

    def _filter(self, h: Tensor, n: int, lengths: list[int] | None) -> Tensor:
        if lengths is None:
            return self._filter_full(h)
        k = len(self.bands)
        return torch.cat(
            [
                band_pass(h[..., sl], bands_for_lengths(lengths, name, k, self.base), lengths=lengths, check_finite=False)
                for name, sl in zip(self.bands, self.slices)
            ],
            dim=-1,
        )


@lru_cache(maxsize=1024)
def _bands(n: int, k: int, base: int) -> dict[str, Band]:
    return {b.name: b for b in allocate_bands(n, k, base)}


def encoder_layers(model: nn.Module) -> nn.ModuleList:
    """The transformer layers of a BERT-style Hugging Face model (``<base>.encoder.layer``).

    Works for a bare encoder (``BertModel``) and for a model with a head
    (``BertForMaskedLM``; its ``base_model`` is the encoder).
    """
    base = getattr(model, "base_model", model)
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if not isinstance(layers, nn.ModuleList):
        raise TypeError(
            f"{type(model).__name__} has no `<base>.encoder.layer` list; attach_prism supports BERT-style "
            "Hugging Face encoders (BertModel, BertForMaskedLM, RoBERTa, ...)"
        )
    return layers


@dataclass
class PrismHandle:
    """What :func:`attach_prism` attached; :meth:`detach` removes it again.

    Attributes:
        prism: the :class:`PrismLayer` applied (one module, shared by every position).
        layer_indices: 0-based indices of the encoder layers whose output is filtered.
    """

    prism: PrismLayer
    layer_indices: list[int]
    _hooks: list = field(default_factory=list, repr=False)
    _state: dict = field(default_factory=dict, repr=False)

    @property
    def attached(self) -> bool:
        return bool(self._hooks)

    def detach(self) -> None:
        """Remove every hook; the model computes as before :func:`attach_prism`."""
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
        self._state.clear()


def attach_prism(
    model: nn.Module, where: str | Sequence[int] = "last", bands: Sequence[str] = BAND_NAMES, base: int = 4
) -> PrismHandle:
    """Insert a prism layer into a Hugging Face BERT-style model, by hooks.

    Args:
        model: ``BertForMaskedLM``, ``BertModel`` or a similar encoder whose layers are
            ``model.base_model.encoder.layer``.
        where: ``"last"`` (after the last encoder layer, the paper's BERT + Prism),
            ``"every"`` (after every encoder layer, App. B.3) or explicit 0-based layer
            indices.
        bands: band of each sector (see :class:`PrismLayer`).
        base: band allocation growth factor.

    Returns:
        A :class:`PrismHandle`; ``handle.detach()`` restores the plain model.

    How: a forward pre-hook on the encoder (``model.base_model``) keeps the
    ``attention_mask`` of the current call, and a forward hook on each chosen layer
    returns the filtered output.  Those hooks are *prepended*, so they run before any
    hook the library registers on the same layers (``output_hidden_states`` is recorded
    by such hooks in transformers 5): ``hidden_states`` and ``last_hidden_state`` hold
    the prism output, and the next layer and the MLM head are computed from it.  Call
    the model with a right-padded ``attention_mask`` (or none, for full-length rows).
    """
    layers = encoder_layers(model)
    n_layers = len(layers)
    if where == "last":
        indices = [n_layers - 1]
    elif where == "every":
        indices = list(range(n_layers))
    elif isinstance(where, str):
        raise ValueError(f"where must be 'last', 'every' or a list of layer indices, got {where!r}")
    else:
        indices = sorted({int(i) % n_layers for i in where})
    base_model = getattr(model, "base_model", model)
    prism = PrismLayer(int(base_model.config.hidden_size), bands=bands, base=base)
    handle = PrismHandle(prism, indices)
    state = handle._state

    def keep_mask(module, args, kwargs):
        mask = kwargs.get("attention_mask")
        if mask is None and len(args) > 1:
            mask = args[1]
        state["attention_mask"] = mask
        return None

    def filter_output(module, args, output):
        if isinstance(output, tuple):
            return (prism(output[0], state.get("attention_mask")), *output[1:])
        return prism(output, state.get("attention_mask"))

    handle._hooks.append(base_model.register_forward_pre_hook(keep_mask, with_kwargs=True, prepend=True))
    for i in indices:
        handle._hooks.append(layers[i].register_forward_hook(filter_output, prepend=True))
    return handle


# =========================================================================== the models of section 4

VARIANTS: dict[str, str | None] = {"baseline": None, "prism": "last", "prism-every": "every"}
"""Continued-training variants: plain BERT, BERT + Prism (after the last layer), and a
prism layer after every layer (App. B.3); the value is ``attach_prism``'s ``where``."""


@dataclass
class MLMCorpus:
    """Training and held-out evaluation text of the continued MLM training.

    Attributes:
        train: ``(n, seq_len)`` int64 training inputs.
        evaluation: ``(m, seq_len)`` int64 held-out inputs for Fig. 5 (before sub-sampling).
        train_articles: ``"<dataset>/<split>: <title>"`` of every training article.
        eval_articles: the same for the held-out articles.
        description: one paragraph saying exactly which text trained and which evaluated.
        eval_article: ``(m,)`` int64 index into ``eval_articles`` of the article each
            row of ``evaluation`` was cut from: Fig. 5's bootstrap unit (inputs of one
            article are not independent; with ``eval_stride < seq_len - 2`` they overlap).
    """

    train: Tensor
    evaluation: Tensor
    train_articles: list[str]
    eval_articles: list[str]
    description: str
    eval_article: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __post_init__(self) -> None:
        self.eval_article = np.asarray(self.eval_article, dtype=np.int64)
        if len(self.eval_article) != len(self.evaluation):
            raise ValueError(
                f"eval_article must name the article of each of the {len(self.evaluation)} evaluation inputs, "
                f"got {len(self.eval_article)}"
            )


def mlm_corpus(profile, tokenizer) -> MLMCorpus:
    """The continued-training text of ``profile`` and the held-out Fig. 5 text.

    ``offline`` (cpu, smoke): train on WikiText-2 valid (60 articles; the tokenized
    release, lightly detokenised by :func:`prismlib.mlm.detokenize_wikitext`) plus
    ``train_articles_103`` WikiText-103 test articles (raw release) drawn with the
    profile's seed; evaluate on the other WikiText-103 test articles.  WikiText-2 valid
    and WikiText-103 test share no article (WikiText-2's valid/test are WikiText-103's).
    ``wikitext103-train`` (paper): train on WikiText-103 train, evaluate on WikiText-103
    test, with inputs every ``eval_stride`` wordpieces.
    """

    from prismlib.data import load_wikitext
    from prismlib.mlm import chunk_tokens, detokenize_wikitext

    S = profile.prism
    if S.train_text == "wikitext103-train":
        train_parts = [("wikitext103/train", a) for a in load_wikitext("wikitext103", "train")]
        eval_parts = [("wikitext103/test", a) for a in load_wikitext("wikitext103", "test")]
        how = "WikiText-103 train (all articles)"
    elif S.train_text == "offline":
        w103 = load_wikitext("wikitext103", "test")
        if not 0 < S.train_articles_103 < len(w103):
            raise ValueError(f"train_articles_103 must be in 1..{len(w103) - 1}, got {S.train_articles_103}")
        order = np.random.default_rng([profile.seed, 403]).permutation(len(w103))
        train_idx = sorted(order[: S.train_articles_103].tolist())
        eval_idx = sorted(order[S.train_articles_103 :].tolist())
        train_parts = [("wikitext2/valid", a) for a in load_wikitext("wikitext2", "valid")]
        train_parts += [("wikitext103/test", w103[i]) for i in train_idx]
        eval_parts = [("wikitext103/test", w103[i]) for i in eval_idx]
        how = (
            f"WikiText-2 valid (all {len(train_parts) - len(train_idx)} articles, detokenised) + "
            f"{len(train_idx)} of the 60 WikiText-103 test articles (raw)"
        )
    else:
        raise ValueError(f"unknown train_text {S.train_text!r}; expected 'offline' or 'wikitext103-train'")
    train_titles = {a.title for _, a in train_parts}
    overlap = [a.title for _, a in eval_parts if a.title in train_titles]
    if overlap:
        raise RuntimeError(f"evaluation articles also in the training text: {overlap[:5]}")
    clean = detokenize_wikitext
    train, _ = chunk_tokens(tokenizer, [clean(a.text) for _, a in train_parts], S.seq_len)
    evaluation, eval_doc = chunk_tokens(tokenizer, [clean(a.text) for _, a in eval_parts], S.seq_len, stride=S.eval_stride)
    description = (
        f"Training text: {how}, cut into {len(train)} inputs of {S.seq_len} tokens (no input crosses two "
        f"articles; each article's last partial piece is dropped). Held-out text for Fig. 5: "
        f"{len(eval_parts)} WikiText-103 test articles not used in training, {len(evaluation)} inputs of "
        f"{S.seq_len} tokens starting every {S.eval_stride} wordpieces."
    )
    return MLMCorpus(
        train, evaluation, [f"{src}: {a.title}" for src, a in train_parts], [f"{src}: {a.title}" for src, a in eval_parts],
        description, np.asarray(eval_doc, dtype=np.int64),
    )


@dataclass
class TrainedMLM:
    """A continued-trained masked LM of section 4 (or the encoder before it, ``"original"``).

    Attributes:
        variant: ``baseline``, ``prism``, ``prism-every`` or ``original``.
        name: unique name for feature caches (encoder, variant, profile, settings digest).
        tokenizer: its tokenizer.
        model: the ``*ForMaskedLM`` model in eval mode, prism hooks attached.
        handle: the :class:`PrismHandle`, or ``None`` without a prism layer.
        result: the training record (``None`` for ``original``).
        checkpoint: where the trained weights are cached.
        device: where the model lives.
    """

    variant: str
    name: str
    tokenizer: object
    model: nn.Module
    handle: PrismHandle | None
    result: object
    checkpoint: object
    device: torch.device

    def encoder(self):
        """The model's encoder (prism included) as a :class:`prismlib.encode.Encoder` for probing."""
        from prismlib.encode import Encoder

        return Encoder(self.name, self.tokenizer, self.model.base_model.eval(), self.device)


def _settings_digest(profile, corpus: MLMCorpus) -> str:
    import hashlib
    from dataclasses import asdict

    S = asdict(profile.prism)
    keys = ("train_text", "train_articles_103", "steps", "batch_size", "seq_len", "lr")
    h = hashlib.sha256(repr((profile.encoder, profile.seed, [S[k] for k in keys])).encode())
    h.update(corpus.train.numpy().tobytes())
    return h.hexdigest()[:10]


def trained_mlm(
    profile, variant: str, corpus: MLMCorpus | None = None, device: str | None = None, progress: bool = True
) -> TrainedMLM:
    """The model of ``variant`` trained with ``profile``'s settings, training it if needed.

    Every variant starts from the same weights (:func:`prismlib.mlm.load_mlm_model` with
    the profile's seed: pretrained encoder, seeded MLM head where the checkpoint has
    none), sees the same batches and masks (same seed) and is trained for the same
    steps; only the prism hooks differ.  Trained weights are cached under
    ``.cache/mlm/`` (keyed by profile, encoder, variant and a digest of the settings and
    the training text), so notebook 04 reuses what notebook 03 trained, and an
    interrupted training resumes from its last checkpoint.

    Args:
        profile: a :class:`prismlib.profiles.Profile`.
        variant: a key of :data:`VARIANTS`, or ``"original"`` (no continued training;
            the MLM head of a MiniLM is then untrained, so use it only for probing).
        corpus: :func:`mlm_corpus` of the profile (built when ``None``).
        device: default ``profile.device``.
    """
    from prismlib.encode import resolve_device
    from prismlib.mlm import load_mlm_model, train_mlm
    from prismlib.paths import cache_dir

    if variant not in VARIANTS and variant != "original":
        raise ValueError(f"unknown variant {variant!r}; choose from {[*VARIANTS, 'original']}")
    dev = resolve_device(device or profile.device)
    tokenizer, model = load_mlm_model(profile.encoder, profile.seed, dev)
    where = VARIANTS.get(variant)
    handle = attach_prism(model, where) if where else None
    if variant == "original":
        model.eval()
        return TrainedMLM(variant, profile.encoder, tokenizer, model, None, None, None, dev)
    corpus = corpus if corpus is not None else mlm_corpus(profile, tokenizer)
    digest = _settings_digest(profile, corpus)
    name = f"{profile.encoder}+{variant}-{profile.name}-steps{profile.prism.steps}-{digest}"
    path = cache_dir() / "mlm" / f"{name.replace('/', '--')}.pt"
    S = profile.prism
    result = train_mlm(
        model, corpus.train, steps=S.steps, batch_size=S.batch_size, lr=S.lr, seed=profile.seed,
        special_ids=tokenizer.all_special_ids, mask_id=tokenizer.mask_token_id, vocab_size=len(tokenizer),
        checkpoint_path=path, checkpoint_every=S.checkpoint_every, device=dev, progress=progress,
        desc=f"MLM {variant}",
    )  # fmt: skip
    model.eval()
    return TrainedMLM(variant, name, tokenizer, model, handle, result, path, dev)
