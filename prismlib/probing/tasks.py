"""The probing tasks of paper section 3: which data, which labels, which windows.

=========  ================  ==========================================  ===============
task       unit of a label   ``offline`` data (cpu / smoke profile)      ``full`` (paper)
=========  ================  ==========================================  ===============
``pos``    word              train/val: NLTK treebank sample (WSJ files  Treebank-3 if
                             0001-0199, split by file); test: CoNLL-2000  ``PRISMLIB_PTB3``
                             test (WSJ section 20)                       is set, else
                                                                         CoNLL-2000
``swda``   utterance         SWDA WS97 split (1115 / 21 / 19 convs)      same
``topic``  document          20 Newsgroups bydate; val = 10% of train    same
``mlm``    masked wordpiece  train: WikiText-2 valid; val / test: the    WikiText-103
                             WikiText-103 test articles, 1/3 and 2/3     train/valid/test
=========  ================  ==========================================  ===============

Dialog-act labels (``da_labels``): ``resolved`` is the standard 42-class SWBD-DAMSL
clustering with a ``+`` continuation resolved to the speaker's previous act;
``continuation`` keeps ``+`` as a 43rd tag, as the cgpotts/swda preprocessing the paper
used does (``damsl_act_tag``).

MLM targets (``mlm_vocab``): the probe predicts the original wordpiece at a ``[MASK]``
among the ``mlm_vocab`` most frequent target wordpieces of the training split (0: every
target seen); masked positions whose target is outside that vocabulary, or is
``[UNK]`` (WikiText-2's ``<unk>``), are not fed to the probe; the split's sentence in
``TaskData.sources`` states the share kept. Label ``k`` is the ``k+1``-th most frequent
training target, so :func:`mlm_bucket` cuts a task built with every target (``mlm_vocab=0``)
into frequency buckets (ranks ``first..last``), each probed on its own: the bucket of ranks
``1..v`` is exactly the task built with ``mlm_vocab=v``.

Windows: POS = consecutive sentences of a WSJ file, SWDA = chunks of a
conversation, topic = a post truncated to one window, MLM = chunks of an article with
15% of the wordpieces replaced by ``[MASK]`` (the probe predicts the original token).
The number of windows per split is a profile setting (:class:`prismlib.profiles.TaskSize`):
at most that many sources (files, conversations, posts, articles) are drawn, cut into
windows, and that many windows drawn from them, all with a fixed seed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from prismlib.data import (
    DAMSL_TAGS,
    NEWSGROUPS,
    damsl_tag,
    load_conll2000,
    load_newsgroups,
    load_swda,
    load_tagged_dir,
    load_treebank_sample,
    load_wikitext,
)
from prismlib.data.pos import TaggedDocument
from prismlib.data.swda import CONTINUATION
from prismlib.data.wikitext import detokenize_wikitext
from prismlib.probing.features import Features
from prismlib.probing.masking import mask_window
from prismlib.probing.windows import IGNORE, Unit, Window, pack_units, tokenize_many
from prismlib.profiles import Profile, get_profile

TASKS: tuple[str, ...] = ("pos", "swda", "topic", "mlm")
TASK_UNITS = {"pos": "word", "swda": "utterance", "topic": "document", "mlm": "masked wordpiece"}
PTB3_ENV = "PRISMLIB_PTB3"
"""Environment variable naming a user's LDC Treebank-3 ``tagged/pos/wsj`` directory."""

_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]", "``": '"', "''": '"'}
SPLITS = ("train", "val", "test")
DA_LABELS: tuple[str, ...] = ("resolved", "continuation")
"""Dialog-act label sets: 42 classes with ``+`` resolved, or 43 with ``+`` kept (the paper's)."""


@dataclass
class TaskData:
    """Windows of every split of one task.

    Attributes:
        name: one of :data:`TASKS`.
        label_names: class names; a window's label ``k`` means ``label_names[k]``.
        windows: split (``train``/``val``/``test``) -> windows.
        sources: split -> a sentence saying which data the split was cut from.
        masked: MLM only: split -> masked wordpieces before the targets were restricted
            (the denominator of the share a vocabulary or a bucket keeps).
        ranks: an MLM frequency bucket (:func:`mlm_bucket`): its first and last
            training-frequency rank (1-based, inclusive; last 0: every rank from first on).
    """

    name: str
    label_names: list[str]
    windows: dict[str, list[Window]]
    sources: dict[str, str] = field(default_factory=dict)
    masked: dict[str, int] = field(default_factory=dict)
    ranks: tuple[int, int] | None = None

    @property
    def unit(self) -> str:
        return TASK_UNITS[self.name]

    @property
    def key(self) -> str:
        """The task's name in tables: its :data:`TASKS` name, or ``"mlm 1-500"`` (``"mlm 501+"``)
        for a frequency bucket."""
        if self.ranks is None:
            return self.name
        first, last = self.ranks
        return f"{self.name} {first}-{last}" if last else f"{self.name} {first}+"

    def window_groups(self, split: str) -> np.ndarray:
        """``(n_windows,)`` independent unit of each window of ``split``: the bootstrap unit.

        The unit is the window's source (a post, a conversation, a WSJ file, an article).
        When a split is a single source without file boundaries (CoNLL-2000 test, all of
        WSJ section 20), each window (about 20 consecutive sentences) is its own unit.
        """
        wins = self.windows[split]
        sources = np.array([w.source for w in wins], dtype=object)
        if len(set(sources)) == 1 and len(wins) > 1:
            return np.array([f"{w.source}#{i}" for i, w in enumerate(wins)], dtype=object)
        return sources

    def row_groups(self, split: str, window_index) -> np.ndarray:
        """``(n,)`` independent unit of each feature row, from the rows' window index
        (:attr:`prismlib.probing.Features.window`)."""
        return self.window_groups(split)[np.asarray(window_index)]

    def summary(self) -> dict[str, int]:
        """Windows, wordpieces and labelled units per split."""
        out = {}
        for split, wins in self.windows.items():
            out[f"{split} windows"] = len(wins)
            out[f"{split} labelled wordpieces"] = int(sum((w.labels != IGNORE).sum() for w in wins))
            out[f"{split} units"] = len({(w.source, u) for w in wins for u in w.unit_ids[w.unit_ids >= 0].tolist()})
        return out


def _subsample(items: list, n: int, rng: np.random.Generator) -> list:
    """``n`` items drawn without replacement in their original order (all when ``n < 0`` or too few)."""
    if n < 0 or n >= len(items):
        return items
    keep = np.sort(rng.choice(len(items), size=n, replace=False))
    return [items[i] for i in keep]


def _split_sources(items: list, fractions: Sequence[float], rng: np.random.Generator) -> list[list]:
    """Shuffle ``items`` and cut them into consecutive parts of the given fractions."""
    order = rng.permutation(len(items))
    cuts = np.cumsum([int(round(f * len(items))) for f in fractions[:-1]])
    return [[items[i] for i in part] for part in np.split(order, cuts)]


# ---------------------------------------------------------------- unit builders


def _word_units(tokenizer, docs: Sequence[TaggedDocument], tag_index: dict[str, int]) -> list[tuple[str, list[Unit]]]:
    words = [_PTB_ESCAPES.get(w, w) for d in docs for s in d.sentences for w, _ in s]
    pieces = iter(tokenize_many(tokenizer, words))
    out, uid = [], 0
    for d in docs:
        units = []
        for sentence in d.sentences:
            for _, tag in sentence:
                units.append(Unit(next(pieces), tag_index[tag], uid))
                uid += 1
        out.append((d.doc_id, units))
    return out


def _pos(tokenizer, data: str, sizes: dict[str, int], rng: np.random.Generator) -> tuple[dict, dict, list[str]]:
    ptb3 = os.environ.get(PTB3_ENV)
    if data == "full" and ptb3:
        docs = load_tagged_dir(Path(ptb3))
        section = lambda d: int(d.doc_id.split("_")[-1][:2])  # noqa: E731  wsj_SSNN
        parts = {
            "train": [d for d in docs if 2 <= section(d) <= 21],
            "val": [d for d in docs if section(d) == 22],
            "test": [d for d in docs if section(d) == 23],
        }
        sources = {"train": "Treebank-3 sections 02-21", "val": "section 22", "test": "section 23"}
    elif data == "full":
        parts = {"train": [load_conll2000("train")], "val": [], "test": [load_conll2000("test")]}
        sources = {
            "train": "CoNLL-2000 train (WSJ 15-18), 90% of its windows",
            "val": "CoNLL-2000 train, the other 10% of its windows",
            "test": "CoNLL-2000 test (WSJ 20)",
        }
    else:
        val, train = _split_sources(load_treebank_sample(), [0.1, 0.9], rng)
        parts = {"train": train, "val": val, "test": [load_conll2000("test")]}
        sources = {
            "train": f"NLTK treebank sample, {len(train)} WSJ files",
            "val": f"NLTK treebank sample, {len(val)} other WSJ files",
            "test": "CoNLL-2000 test (WSJ section 20)",
        }
    tags = sorted({t for docs in parts.values() for d in docs for s in d.sentences for _, t in s})
    index = {t: i for i, t in enumerate(tags)}
    units = {split: _word_units(tokenizer, _subsample(docs, sizes[split], rng), index) for split, docs in parts.items()}
    return units, sources, tags


def _da_label(u, da_labels: str) -> str:
    """The utterance's class under label set ``da_labels`` (see :data:`DA_LABELS`)."""
    if da_labels == "continuation" and damsl_tag(u.act_tag) == CONTINUATION:
        return CONTINUATION
    return u.damsl


def _swda(tokenizer, sizes: dict[str, int], rng: np.random.Generator, da_labels: str) -> tuple[dict, dict, list[str]]:
    if da_labels not in DA_LABELS:
        raise ValueError(f"da_labels must be one of {DA_LABELS}, got {da_labels!r}")
    tags = list(DAMSL_TAGS) + ([CONTINUATION] if da_labels == "continuation" else [])
    index = {t: i for i, t in enumerate(tags)}
    units, uid = {}, 0
    for split in SPLITS:
        convs = _subsample(load_swda(split), sizes[split], rng)
        pieces = iter(tokenize_many(tokenizer, [u.plain_text for c in convs for u in c.utterances]))
        per_conv = []
        for c in convs:
            conv_units = []
            for u in c.utterances:
                label = _da_label(u, da_labels)
                if label not in index:
                    raise ValueError(f"{c.conv_id}: dialog act {label!r} is not one of the {len(tags)} classes of {da_labels!r}")
                conv_units.append(Unit(next(pieces), index[label], uid))
                uid += 1
            per_conv.append((c.conv_id, conv_units))
        units[split] = per_conv
    sources = {s: f"SWDA WS97 {s} conversations ({len(tags)} classes, '+' {da_labels})" for s in SPLITS}
    return units, sources, tags


def _topic(tokenizer, sizes: dict[str, int], rng: np.random.Generator) -> tuple[dict, dict, list[str]]:
    index = {g: i for i, g in enumerate(NEWSGROUPS)}
    val, train = _split_sources(load_newsgroups("train"), [0.1, 0.9], rng)
    parts = {"train": train, "val": val, "test": load_newsgroups("test")}
    units, uid = {}, 0
    for split, docs in parts.items():
        docs = _subsample(docs, sizes[split], rng)
        # header + body as distributed (bydate has no Newsgroups: line); cut long posts
        # before tokenizing, the window keeps at most 510 wordpieces anyway
        pieces = tokenize_many(tokenizer, [d.text[:6000] for d in docs])
        units[split] = [(d.doc_id, [Unit(p, index[d.newsgroup], uid + i)]) for i, (d, p) in enumerate(zip(docs, pieces))]
        uid += len(docs)
    sources = {
        "train": "20 Newsgroups bydate train, 90% of the posts",
        "val": "20 Newsgroups bydate train, the other 10%",
        "test": "20 Newsgroups bydate test",
    }
    return units, sources, list(NEWSGROUPS)


def _mlm_articles(data: str, rng: np.random.Generator, unk_token: str) -> tuple[dict, dict]:
    """Split -> list of ``(title, text)``, and split -> a sentence naming the source."""
    if data == "full":
        parts = {s: load_wikitext("wikitext103", w) for s, w in zip(SPLITS, ("train", "valid", "test"))}
        texts = {s: [(a.title, a.text) for a in arts] for s, arts in parts.items()}
        return texts, {s: f"WikiText-103 raw {w}" for s, w in zip(SPLITS, ("train", "valid", "test"))}
    # offline: WikiText-2 valid (tokenized: joins undone, <unk> -> the tokenizer's unknown token)
    # trains; the WikiText-103 (= WikiText-2) test articles, disjoint from it, validate and test.
    train = [(a.title, detokenize_wikitext(a.text).replace("<unk>", unk_token)) for a in load_wikitext("wikitext2", "valid")]
    val, test = _split_sources(load_wikitext("wikitext103", "test"), [1 / 3, 2 / 3], rng)
    texts = {"train": train, "val": [(a.title, a.text) for a in val], "test": [(a.title, a.text) for a in test]}
    sources = {
        "train": f"WikiText-2 valid, {len(train)} articles",
        "val": f"WikiText-103 raw test, {len(val)} articles",
        "test": f"WikiText-103 raw test, the other {len(test)} articles",
    }
    return texts, sources


def _mlm(tokenizer, sizes: dict[str, int], *, data: str, window: int, mask_prob: float, vocab: int, rng: np.random.Generator) -> TaskData:
    """Masked windows of every split; targets restricted to the ``vocab`` most frequent (see module doc)."""
    articles, sources = _mlm_articles(data, rng, tokenizer.unk_token)
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    windows, first, masked = {}, 0, {}
    for split, arts in articles.items():
        arts = _subsample(arts, sizes[split], rng)
        pieces = tokenize_many(tokenizer, [text for _, text in arts])
        srcs = [(title, [Unit([p], p, -1) for p in ps]) for (title, _), ps in zip(arts, pieces)]
        wins = _subsample(pack_units(srcs, cls_id, sep_id, window), sizes[split], rng)
        windows[split] = [
            mask_window(w, tokenizer.mask_token_id, mask_prob, rng, first_unit=first + i * window) for i, w in enumerate(wins)
        ]
        first += len(wins) * window
    train_targets = np.concatenate([w.labels[w.labels != IGNORE] for w in windows["train"]] or [np.zeros(0, np.int64)])
    ids, counts = np.unique(train_targets[train_targets != tokenizer.unk_token_id], return_counts=True)
    order = np.argsort(-counts, kind="stable")
    keep = ids[order[:vocab]] if vocab > 0 else ids[order]
    compact = {int(v): i for i, v in enumerate(keep)}
    for split in SPLITS:
        masked[split] = sum(int((w.labels != IGNORE).sum()) for w in windows[split])
        windows[split] = [_relabel(w, compact) for w in windows[split]]
        kept = sum(int((w.labels != IGNORE).sum()) for w in windows[split])
        sources[split] += (
            f"; {kept:,} of {masked[split]:,} masked wordpieces ({100 * kept / max(masked[split], 1):.0f}%) have a target in "
            "the probe's vocabulary"
        )
    label_names = tokenizer.convert_ids_to_tokens([int(v) for v in keep])
    return TaskData("mlm", label_names, windows, sources, masked)


# ---------------------------------------------------------------- build


def build_task(
    name: str,
    tokenizer,
    sizes: dict[str, int],
    *,
    profile_name: str,
    seed: int,
    window: int = 512,
    mask_prob: float = 0.15,
    da_labels: str = "continuation",
    mlm_vocab: int = 0,
) -> TaskData:
    """Windows of every split of task ``name``.

    Args:
        name: one of :data:`TASKS`.
        tokenizer: a Hugging Face fast tokenizer with ``cls/sep/mask_token_id``.
        sizes: windows to keep per split (``{"train": n, "val": n, "test": n}``; -1 = all).
        profile_name: the profile whose ``data`` setting selects the sources (``offline``,
            or ``full``: the paper's datasets; see the module docstring).
        seed: seeds the source split, the window subsample and the MLM masks.
        window: tokens per window including the two special tokens.
        mask_prob: share of wordpieces masked for the MLM probe.
        da_labels: dialog-act label set, one of :data:`DA_LABELS` (default the paper's 43 classes, as every profile).
        mlm_vocab: MLM targets kept: the most frequent training targets (0: all).
    """
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {TASKS}")
    rng = np.random.default_rng([seed, TASKS.index(name)])
    data = get_profile(profile_name).data
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    if name == "mlm":
        return _mlm(tokenizer, sizes, data=data, window=window, mask_prob=mask_prob, vocab=mlm_vocab, rng=rng)
    if name == "pos":
        units, sources, labels = _pos(tokenizer, data, sizes, rng)
    elif name == "swda":
        units, sources, labels = _swda(tokenizer, sizes, rng, da_labels)
    else:
        units, sources, labels = _topic(tokenizer, sizes, rng)
    windows = {s: pack_units(units[s], cls_id, sep_id, window, truncate=name == "topic") for s in SPLITS}
    if name == "pos" and not windows["val"]:  # full data without Treebank-3: carve val from train
        val, train = _split_sources(windows["train"], [0.1, 0.9], rng)
        windows = {"train": train, "val": val, "test": windows["test"]}
    windows = {s: _subsample(w, sizes[s], rng) for s, w in windows.items()}
    return TaskData(name, labels, windows, sources)


def profile_task(name: str, tokenizer, profile: Profile, *, da_labels: str | None = None, mlm_vocab: int | None = None) -> TaskData:
    """:func:`build_task` with ``profile``'s windows per split, seed, window length, masking
    rate, dialog-act label set and MLM vocabulary (``da_labels`` and ``mlm_vocab`` override
    the last two)."""
    s = profile.probe
    return build_task(
        name,
        tokenizer,
        s.sizes[name].windows(),
        profile_name=profile.name,
        seed=profile.seed,
        window=profile.window,
        mask_prob=s.mask_prob,
        da_labels=s.da_labels if da_labels is None else da_labels,
        mlm_vocab=s.mlm_vocab if mlm_vocab is None else mlm_vocab,
    )


def mlm_bucket(task: TaskData, feats: dict[str, Features], first: int, last: int) -> tuple[TaskData, dict[str, Features]]:
    """The MLM targets of training-frequency ranks ``first .. last`` as a task of their own.

    Args:
        task: the MLM task built with every training target (``mlm_vocab=0``), whose label
            ``k`` is the ``k+1``-th most frequent training target.
        feats: split -> the task's :class:`~prismlib.probing.Features` (one layer).
        first, last: ranks, 1-based and inclusive; ``last=0`` (or beyond the vocabulary):
            every rank from ``first`` on.

    Returns:
        ``(bucket, bucket_feats)``: the task with only those targets labelled (label 0 = rank
        ``first``; :attr:`TaskData.ranks` set; its ``sources`` state the share of each
        split's masked wordpieces kept) and the features of those rows, their weights
        renormalised (:meth:`~prismlib.probing.Features.label_range`).

    Raises:
        ValueError: not an MLM task of every target, or an empty or misordered range.
    """
    if task.name != "mlm" or task.ranks is not None or not task.masked:
        raise ValueError("a frequency bucket is cut from the MLM task built with every training target (mlm_vocab=0)")
    n = len(task.label_names)
    stop = n if last == 0 else min(last, n)
    if not 1 <= first <= stop:
        raise ValueError(f"ranks {first}..{last or 'end'} are empty or misordered for a vocabulary of {n} targets")
    compact = {k: k - (first - 1) for k in range(first - 1, stop)}
    windows, sources = {}, {}
    for split, wins in task.windows.items():
        windows[split] = [_relabel(w, compact) for w in wins]
        kept = sum(int((w.labels != IGNORE).sum()) for w in windows[split])
        masked = task.masked.get(split, 0)
        sources[split] = (
            f"{kept:,} of {masked:,} masked wordpieces ({100 * kept / max(masked, 1):.0f}%) have a target of "
            f"training-frequency rank {first}-{stop}"
        )
    bucket = TaskData("mlm", task.label_names[first - 1 : stop], windows, sources, dict(task.masked), (first, last))
    return bucket, {split: f.label_range(first - 1, stop) for split, f in feats.items()}


def _relabel(w: Window, compact: dict[int, int]) -> Window:
    """Map token-id labels to compact classes; labels outside ``compact`` lose their label."""
    labels = np.array([compact.get(int(v), IGNORE) if v != IGNORE else IGNORE for v in w.labels], dtype=np.int64)
    keep = labels != IGNORE
    return Window(w.input_ids, labels, np.where(keep, w.weights, 0).astype(np.float32), np.where(keep, w.unit_ids, -1), w.source)
