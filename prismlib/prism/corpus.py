"""The text of section 4's continued MLM training: training, stopping and held-out Fig. 5 text.

:func:`mlm_corpus` cuts a profile's WikiText articles into full-length inputs
(:class:`MLMCorpus`: which article trains, which decides when training stops, which is
held out for Fig. 5 and the sanity gate, and a paragraph saying so); :func:`training_inputs`
and :func:`fig5_inputs` are the seeded draws of it that the arms train on and are scored on
(:mod:`prismlib.prism.arms`); :func:`articles_line` names a list of articles in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from prismlib.profiles import Profile


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
        stop: ``(k, seq_len)`` int64 inputs of the stopping text (training-side articles
            held out of training; empty for a fixed budget).
        stop_articles: the names of the stopping text's articles.
    """

    train: Tensor
    evaluation: Tensor
    train_articles: list[str]
    eval_articles: list[str]
    description: str
    eval_article: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    stop: Tensor = field(default_factory=lambda: torch.zeros(0, 0, dtype=torch.int64))
    stop_articles: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.eval_article = np.asarray(self.eval_article, dtype=np.int64)
        if len(self.eval_article) != len(self.evaluation):
            raise ValueError(
                f"eval_article must name the article of each of the {len(self.evaluation)} evaluation inputs, got {len(self.eval_article)}"
            )


def articles_line(articles: list[str], shown: int = 3) -> str:
    """One line for a list of ``"<dataset>/<split>: <title>"`` names: how many come from
    each source and the first ``shown`` titles (the full list stays on the corpus), e.g.
    ``"90 articles: 60 wikitext-2/valid, 30 wikitext-103/test; e.g. A; B; C; ..."``."""
    sources: dict[str, int] = {}
    for name in articles:
        source = name.split(": ", 1)[0]
        sources[source] = sources.get(source, 0) + 1
    counts = ", ".join(f"{n} {source}" for source, n in sources.items())
    titles = "; ".join(name.split(": ", 1)[-1] for name in articles[:shown])
    more = "; ..." if len(articles) > shown else ""
    return f"{len(articles)} articles: {counts}; e.g. {titles}{more}" if articles else "0 articles"


def mlm_corpus(profile: Profile, tokenizer) -> MLMCorpus:
    """The continued-training text of ``profile`` and the held-out Fig. 5 text.

    ``offline`` (cpu, smoke): train on WikiText-2 valid (60 articles; the tokenized
    release, lightly detokenised by :func:`prismlib.data.wikitext.detokenize_wikitext`) plus
    ``train_articles_103`` WikiText-103 test articles (raw release) drawn with the
    profile's seed; evaluate on the other WikiText-103 test articles. ``stop_articles`` of
    the WikiText-2 valid articles (a seeded draw) are held out of training as the stopping
    text of :class:`prismlib.prism.StopRule`.  WikiText-2 valid
    and WikiText-103 test share no article (WikiText-2's valid/test are WikiText-103's).
    ``wikitext103-train`` (paper): train on WikiText-103 train, evaluate on WikiText-103
    test, with inputs every ``eval_stride`` wordpieces.
    """
    from prismlib.data import load_wikitext
    from prismlib.data.wikitext import detokenize_wikitext
    from prismlib.prism.mlm_training import chunk_tokens

    S = profile.prism
    stop_parts: list = []
    if S.train_text == "wikitext103-train":
        if S.stop_articles:
            raise ValueError("stop_articles is for the offline text; the paper's recipe trains a fixed 50k steps")
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
        w2 = load_wikitext("wikitext2", "valid")
        if not 0 <= S.stop_articles < len(w2):
            raise ValueError(f"stop_articles must be in 0..{len(w2) - 1}, got {S.stop_articles}")
        held = set(np.random.default_rng([profile.seed, 405]).permutation(len(w2))[: S.stop_articles].tolist())
        stop_parts = [("wikitext2/valid", a) for i, a in enumerate(w2) if i in held]
        train_parts = [("wikitext2/valid", a) for i, a in enumerate(w2) if i not in held]
        train_parts += [("wikitext103/test", w103[i]) for i in train_idx]
        eval_parts = [("wikitext103/test", w103[i]) for i in eval_idx]
        how = (
            f"WikiText-2 valid ({len(train_parts) - len(train_idx)} of its {len(w2)} articles, detokenised) + "
            f"{len(train_idx)} of the 60 WikiText-103 test articles (raw)"
        )
    else:
        raise ValueError(f"unknown train_text {S.train_text!r}; expected 'offline' or 'wikitext103-train'")
    train_titles = {a.title for _, a in train_parts}
    overlap = [a.title for _, a in eval_parts + stop_parts if a.title in train_titles]
    overlap += [a.title for _, a in eval_parts if a.title in {b.title for _, b in stop_parts}]
    if overlap:
        raise RuntimeError(f"articles in two of the training, stopping and evaluation texts: {overlap[:5]}")
    clean = detokenize_wikitext
    train, _ = chunk_tokens(tokenizer, [clean(a.text) for _, a in train_parts], S.seq_len)
    evaluation, eval_doc = chunk_tokens(tokenizer, [clean(a.text) for _, a in eval_parts], S.seq_len, stride=S.eval_stride)
    stop = chunk_tokens(tokenizer, [clean(a.text) for _, a in stop_parts], S.seq_len)[0] if stop_parts else None
    stopping = (
        f" Stopping text (held-out MLM loss that decides when training stops): {len(stop_parts)} WikiText-2 valid "
        f"articles held out of training, {0 if stop is None else len(stop)} inputs."
        if stop_parts
        else ""
    )
    description = (
        f"Training text: {how}, cut into {len(train)} inputs of {S.seq_len} tokens (no input crosses two "
        f"articles; each article's last partial piece is dropped). Held-out text for Fig. 5: "
        f"{len(eval_parts)} WikiText-103 test articles not used in training, {len(evaluation)} inputs of "
        f"{S.seq_len} tokens starting every {S.eval_stride} wordpieces.{stopping}"
    )
    return MLMCorpus(
        train,
        evaluation,
        [f"{src}: {a.title}" for src, a in train_parts],
        [f"{src}: {a.title}" for src, a in eval_parts],
        description,
        np.asarray(eval_doc, dtype=np.int64),
        *(() if stop is None else (stop, [f"{src}: {a.title}" for src, a in stop_parts])),
    )


def training_inputs(corpus: MLMCorpus, S, seed: int) -> Tensor:
    """The ``(n, seq_len)`` inputs continued training uses: all of ``corpus.train``, or a
    seeded subset of ``S.train_inputs`` of them (in corpus order)."""
    if S.train_inputs is None or S.train_inputs >= len(corpus.train):
        return corpus.train
    pick = np.sort(np.random.default_rng([seed, 404]).choice(len(corpus.train), size=S.train_inputs, replace=False))
    return corpus.train[torch.from_numpy(pick)]


def fig5_inputs(corpus: MLMCorpus, S, seed: int) -> tuple[Tensor, np.ndarray]:
    """The held-out inputs of Fig. 5 and of the sanity gate: ``S.eval_inputs`` of
    ``corpus.evaluation`` drawn with ``seed`` (without replacement, in corpus order).

    Returns:
        ``(inputs (N, seq_len) int64, articles (N,) int64)``: the inputs and the article
        each was cut from (the bootstrap unit).
    """
    pool = corpus.evaluation
    n = min(S.eval_inputs, len(pool))
    pick = np.sort(np.random.default_rng([seed, 5]).choice(len(pool), size=n, replace=False))
    return pool[torch.from_numpy(pick)], corpus.eval_article[pick]
