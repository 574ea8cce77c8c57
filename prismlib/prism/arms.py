"""Continued MLM training of section 4: the text, the arms of Table 1 as jobs, the sanity gate.

Section 4.1 trains BERT further with masked language modelling, once with a prism layer
after its last layer and once without, and probes both (Table 1). Four *arms* are
compared here (:data:`ARMS`): the encoder before continued training (``original``, =
App. B.2), the prism attached to it without training (``prism_untrained``), and the two
continued-trained models ``baseline`` and ``prism``; ``prism-every`` is App. B.3. The
control that isolates *training with the prism* is ``baseline_prism_untrained``: the
continued-trained baseline with an untrained prism added afterwards (the same continued
training, the same filter; only whether the model trained with the filter differs).

Two recipes (``profile.prism.recipe``): ``full``, the paper's (every parameter trained
from the first step, Adam at its defaults, :func:`prismlib.prism.train_mlm`; the ``paper``
profile), and ``staged``, the cpu's (:mod:`prismlib.prism.staged_recipe`: lower layers frozen and
their masked states cached once, shared by every arm since the prism sits above them;
a head warm-up; then the top layers). With the staged recipe ``prism-every`` puts the
prism after each *trained* layer only: a prism under a frozen layer would change the
frozen layers' input, which no cached state can follow.

Each trained arm is a job of :mod:`prismlib.jobcache` (:class:`ArmJob`): cached under
``.cache/jobs/<key>/``, resumable, and run as parallel single-thread processes by
:func:`section4_models`. A finished job also stores its held-out masked-token score
(after the head warm-up and at the end), the sanity gate (:func:`mlm_sanity`) of every
claim that rests on it.

Long: the arm job's recipe (``ArmJob.train`` and ``model``, :func:`prism_layers`,
:func:`training_inputs`, :func:`stop_rule`) is pinned by a fingerprint that includes this
module's name (``tests/fixtures/recipe_fingerprints.json``), so it stays here, and the
section-4 data and sanity gate sit beside the jobs that read them.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from prismlib.artifacts import load_checkpoint, load_or_discard, remove, save_atomic
from prismlib.claims import Gate
from prismlib.jobcache import job_key, run_missing, with_recipe
from prismlib.paths import cache_dir
from prismlib.prism.layer import PrismHandle, attach_prism, encoder_layers
from prismlib.prism.mlm_training import TrainResult, derived_seed, load_mlm_tokenizer, train_mlm
from prismlib.prism.span_analysis import heldout_logprobs, heldout_mask
from prismlib.prism.staged_recipe import (
    FrozenPart,
    StagedEncoder,
    StateCache,
    StopRule,
    build_state_cache,
    first_trained,
    head_features,
    open_state_cache,
    set_attention_dropout,
    train_top,
    warm_up_head,
)
from prismlib.stats import Interval

ARMS = ("original", "prism_untrained", "baseline", "baseline_prism_untrained", "prism", "prism-every")
"""Arms of Table 1 and App. B: before continued training (App. B.2), the prism attached
without training to it (second control), continued MLM without the prism, the same model
with an untrained prism added afterwards (the control of training with the prism), continued
MLM with the prism, and B.3."""
UNTRAINED_PRISM_ON = {"prism_untrained": "original", "baseline_prism_untrained": "baseline"}
"""Arms that add an untrained prism after the last layer of another arm's weights."""
TRAINED = ("baseline", "prism", "prism-every")


# =========================================================================== the text


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


def mlm_corpus(profile, tokenizer) -> MLMCorpus:
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


# =========================================================================== the arms as jobs


@dataclass
class Section4Data:
    """What every arm job reads: the training inputs, the held-out inputs of the sanity
    gate and Fig. 5, and (staged recipe) the folder of the frozen-state cache."""

    train: Tensor
    heldout: Tensor
    states: str | None = None
    stop: Tensor | None = None
    stop_states: str | None = None

    def digest(self) -> str:
        h = hashlib.sha256(self.train.numpy().tobytes())
        h.update(self.heldout.numpy().tobytes())
        if self.stop is not None and len(self.stop):
            h.update(self.stop.numpy().tobytes())
        return h.hexdigest()[:16]


def prism_layers(arm: str, n_layers: int, S) -> list[int] | None:
    """The encoder layers a prism follows in ``arm`` (``None``: no prism)."""
    if arm in ("original", "baseline"):
        return None
    if arm in ("prism", *UNTRAINED_PRISM_ON):
        return [n_layers - 1]
    if arm == "prism-every":
        return list(range(n_layers - S.train_layers if S.recipe == "staged" else 0, n_layers))
    raise ValueError(f"unknown arm {arm!r}; choose from {ARMS}")


def stop_rule(settings: Any, heldout: StateCache) -> StopRule:
    """The :class:`StopRule` of the prism settings (``PrismSettings`` that train to a stop)
    on the stopping text's cached states ``heldout``: rounds of ``round_steps``, capped at
    ``steps``; its rule is :meth:`prismlib.anneal.AnnealSettings.rule` of ``settings.schedule``."""
    return StopRule(heldout, settings.schedule.rule(settings.steps // settings.round_steps, None), settings.round_steps)


def recipe_settings(settings: Any) -> dict[str, Any]:
    """The recipe of the prism settings (``PrismSettings.training``, every setting that changes a
    trained arm), flat (:meth:`~prismlib.profiles.Nested.flat`: the anneal ``schedule``'s fields
    beside the recipe's own, as before they were grouped, so the keys stayed): what an arm's
    key hashes."""
    return settings.training.flat()


RECIPE_VERSION = 2
"""Version of the code that trains a section-4 arm (:func:`recipe_code`); from version 2 on it
enters every arm's key, so a bump retrains. 2: training to a stop (:class:`StopRule`), the
best held-out weights kept, the best at the last decay stored beside them."""


def recipe_code() -> list[Any]:
    """The functions and classes whose code defines what an arm job trains (a test pins their
    :func:`~prismlib.jobcache.code_fingerprint` beside :data:`RECIPE_VERSION`)."""
    from prismlib import anneal
    from prismlib.prism import layer, mlm_training, staged_recipe
    from prismlib.probing import masking

    return [
        ArmJob.train, ArmJob.model, prism_layers, training_inputs, mlm_training.load_mlm_model, mlm_training.mlm_loss,
        mlm_training.training_batch, mlm_training.batch_indices, mlm_training.derived_seed, mlm_training.train_mlm,
        masking.mask_batch, staged_recipe.first_trained, staged_recipe.lower_states, staged_recipe.top_states,
        staged_recipe.set_trainable, staged_recipe.set_attention_dropout, staged_recipe.mask_version, staged_recipe.build_state_cache,
        staged_recipe.head_features, staged_recipe.warm_up_head, staged_recipe.lr_factor, staged_recipe.train_top,
        staged_recipe.cached_loss, staged_recipe.StopRule, staged_recipe._trained_state, anneal.anneal_check,
        anneal.AnnealSettings.rule, anneal.AnnealSettings.check_cap, stop_rule, layer.PrismLayer, layer.attach_prism, layer.sector_sizes,
    ]  # fmt: skip


@dataclass(frozen=True, eq=False)
class ArmJob:
    """One continued-trained arm (``baseline``, ``prism``, ``prism-every``) of a profile.
    Two jobs are equal when their keys are."""

    arm: str
    encoder: str
    profile: str
    seed: int
    settings: Any  # PrismSettings
    data: str  # Section4Data.digest()

    def describe(self) -> dict[str, Any]:
        recipe = recipe_settings(self.settings)
        return with_recipe(
            {
                "kind": "mlm-arm",
                "arm": self.arm,
                "encoder": self.encoder,
                "profile": self.profile,
                "seed": self.seed,
                "settings": recipe,
                "data": self.data,
            },
            RECIPE_VERSION,
        )

    @property
    def key(self) -> str:
        return job_key(self.describe())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArmJob) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def label(self) -> str:
        return f"MLM {self.arm}"

    def model(self, device: torch.device | str = "cpu") -> tuple[Any, nn.Module, PrismHandle | None]:
        """``(tokenizer, model, prism handle)`` as before training: the encoder, the seeded head, the arm's prism."""
        from prismlib.prism.mlm_training import load_mlm_model

        tokenizer, model = load_mlm_model(self.encoder, self.seed, device)
        where = prism_layers(self.arm, len(encoder_layers(model)), self.settings)
        return tokenizer, model, attach_prism(model, where) if where else None

    def train(self, folder: Path, device: torch.device, progress: bool, data: Section4Data) -> None:
        """Train the arm (recipe of the settings), score the held-out inputs, write ``done.pt``."""
        S = self.settings
        tokenizer, model, _ = self.model(device)
        special = tokenizer.all_special_ids

        def heldout() -> tuple[np.ndarray, np.ndarray]:
            lp, sel = heldout_logprobs(
                model, data.heldout, tokenizer.mask_token_id, special, self.seed, batch_size=S.eval_batch, device=device
            )
            return lp.sum(1).numpy(), sel.sum(1).numpy()

        record: dict[str, Any] = {}
        previous = None
        if S.recipe == "staged":
            start = first_trained(model, S.train_layers)
            if S.attention_dropout is not None:
                set_attention_dropout(model, start, S.attention_dropout)
            cache = open_state_cache(data.states)  # type: ignore[arg-type]
            head_file = folder / "head.pt"
            ck = load_or_discard(head_file, map_location=device)  # a corrupt one: warm the head up again
            if ck is not None:
                model.load_state_dict(ck["model"])
                record = ck["record"]
            else:
                t0 = time.perf_counter()
                feats, targets = head_features(model, cache, start, progress=progress)
                losses = warm_up_head(model, feats, targets, S.head_epochs, S.head_lr, S.head_batch, self.seed, progress)
                record = {
                    "head_losses": losses,
                    "head_positions": len(targets),
                    "head_seconds": time.perf_counter() - t0,
                    "heldout_head": heldout(),
                }
                save_atomic(head_file, model=model.state_dict(), record=record)
            stop = None
            if S.trains_to_stop:
                if not data.stop_states:
                    raise RuntimeError("this profile trains to a stop but the data has no stopping text; build it with section4_data")
                stop = stop_rule(S, open_state_cache(data.stop_states))
            result, previous = train_top(
                model,
                cache,
                start,
                steps=S.steps,
                batch_size=S.batch_size,
                lr=S.lr,
                warmup=S.warmup,
                clip=S.clip,
                seed=self.seed,
                checkpoint=folder / "partial.pt",
                checkpoint_every=S.checkpoint_every,
                progress=progress,
                desc=self.label,
                stop=stop,
            )
            if previous is not None:  # the earlier checkpoint of the stability gates: scored like the final one
                final = {k: v.clone() for k, v in model.state_dict().items() if k in previous}
                model.load_state_dict(previous, strict=False)
                record["heldout_previous"] = heldout()
                model.load_state_dict(final, strict=False)
        else:
            result = train_mlm(
                model,
                data.train,
                steps=S.steps,
                batch_size=S.batch_size,
                lr=S.lr,
                seed=self.seed,
                special_ids=special,
                mask_id=tokenizer.mask_token_id,
                vocab_size=len(tokenizer),
                checkpoint_path=folder / "partial.pt",
                checkpoint_every=S.checkpoint_every,
                device=device,
                progress=progress,
                desc=self.label,
            )
        record["heldout_final"] = heldout()
        extra = {"previous": previous} if S.recipe == "staged" and previous is not None else {}
        save_atomic(folder / "done.pt", model=model.state_dict(), result=result, record=record, **extra)
        for name in ("partial.pt", "head.pt"):
            remove(folder / name)


@dataclass
class TrainedMLM:
    """A model of section 4: an arm, ready to probe and evaluate.

    Attributes:
        variant: the arm (:data:`ARMS`).
        name: unique name for feature caches.
        tokenizer, model: the ``*ForMaskedLM`` model in eval mode, prism hooks attached.
        handle: the :class:`PrismHandle`, or ``None`` without a prism layer.
        result: the training record (:class:`prismlib.prism.TrainResult`; ``None`` untrained).
        record: ``head_losses``, ``heldout_head`` and ``heldout_final`` (per held-out
            input: the sum of log p over its masked tokens, and their number), ...
        device: where the model lives.
    """

    variant: str
    name: str
    tokenizer: object
    model: nn.Module
    handle: PrismHandle | None
    result: TrainResult | None
    record: dict[str, Any]
    device: torch.device

    def encoder(self, frozen: FrozenPart | None = None):
        """The model's encoder (prism included) as a :class:`prismlib.probing.Encoder` for probing.

        ``frozen``: compute the frozen part from this shared memo (:class:`StagedEncoder`;
        the model's prism layers must all lie above it), see :func:`probe_encoders`."""
        from prismlib.probing.encoders import Encoder

        base = cast(Any, self.model).base_model.eval()
        if frozen is None:
            return Encoder(self.name, self.tokenizer, base, self.device)
        if self.handle is not None and min(self.handle.layer_indices) < frozen.start:
            raise ValueError(f"{self.variant}: a prism follows layer {min(self.handle.layer_indices)}, inside the shared frozen part")
        return Encoder(self.name, self.tokenizer, StagedEncoder(base, frozen), self.device)


def probe_encoders(models: dict[str, TrainedMLM], settings: Any) -> dict[str, Any]:
    """The encoders of ``models`` for probing (:class:`prismlib.probing.Encoder` by model).

    With the staged recipe (``settings``: ``PrismSettings``) they share one
    :class:`FrozenPart`: every window's frozen states are computed once, and each model
    runs only its top ``train_layers`` layers (the arms differ only there)."""
    if settings.recipe != "staged" or not models:
        return {v: m.encoder() for v, m in models.items()}
    frozen = FrozenPart(first_trained(next(iter(models.values())).model, settings.train_layers))
    return {v: m.encoder(frozen) for v, m in models.items()}


def section4_data(profile, corpus: MLMCorpus, tokenizer, device: str | torch.device = "cpu", progress: bool = True) -> Section4Data:
    """The inputs every arm reads; for the staged recipe the frozen-state cache is built
    here (once per profile, text and encoder, with every core), then reused."""
    from prismlib.devices import torch_threads
    from prismlib.prism.mlm_training import load_mlm_model

    S = profile.prism
    data = Section4Data(training_inputs(corpus, S, profile.seed), fig5_inputs(corpus, S, profile.seed)[0])
    if S.trains_to_stop:
        data.stop = corpus.stop
    if S.recipe != "staged":
        return data
    _, model = load_mlm_model(profile.encoder, profile.seed, device)
    start = first_trained(model, S.train_layers)
    digest = hashlib.sha256(repr((profile.encoder, profile.seed, start, S.mask_versions)).encode())
    digest.update(data.train.numpy().tobytes())
    folder = cache_dir() / "mlm" / f"states-{profile.encoder.replace('/', '--')}-{digest.hexdigest()[:16]}"
    with torch_threads(os.cpu_count() or 1):  # before the arms train: every core is free; a finished cache is kept
        build_state_cache(
            model,
            data.train,
            start,
            S.mask_versions,
            profile.seed,
            tokenizer.all_special_ids,
            tokenizer.mask_token_id,
            len(tokenizer),
            folder,
            progress=progress,
        )
    data.states = str(folder)
    if S.trains_to_stop:  # the stopping text's states, one seeded masking (not the training maskings' seed)
        assert data.stop is not None
        stop_seed = derived_seed(profile.seed, 406)
        digest = hashlib.sha256(repr((profile.encoder, stop_seed, start)).encode())
        digest.update(data.stop.numpy().tobytes())
        stop_folder = cache_dir() / "mlm" / f"stop-{profile.encoder.replace('/', '--')}-{digest.hexdigest()[:16]}"
        with torch_threads(os.cpu_count() or 1):
            build_state_cache(
                model,
                data.stop,
                start,
                1,
                stop_seed,
                tokenizer.all_special_ids,
                tokenizer.mask_token_id,
                len(tokenizer),
                stop_folder,
                progress=progress,
            )
        data.stop_states = str(stop_folder)
    return data


def arm_jobs(profile, data: Section4Data, arms=TRAINED) -> list[ArmJob]:
    """The jobs of the trained ``arms`` of ``profile`` on ``data``."""
    return [ArmJob(a, profile.encoder, profile.name, profile.seed, profile.prism, data.digest()) for a in arms]


def section4_models(
    profile,
    corpus: MLMCorpus,
    arms=ARMS,
    executor: str | None = None,
    device: str | None = None,
    progress: bool = True,
    slurm: dict | None = None,
    checkpoint: str = "final",
) -> tuple[dict[str, TrainedMLM], Section4Data]:
    """The models of ``arms``, training the missing ones first.

    The trained arms are jobs (:class:`ArmJob`) run by :func:`prismlib.jobcache.run_missing`:
    on a CPU all at once as single-thread processes (``local``, the default), on a GPU
    one after the other, or on a SLURM cluster (``executor="slurm"``, options ``slurm``).
    ``original`` and ``prism_untrained`` need no training; ``baseline_prism_untrained`` is
    the trained ``baseline`` with an untrained prism added.

    Args:
        checkpoint: ``"final"`` (the kept, best held-out weights) or ``"previous"`` (for
            runs trained to a stop: the best weights at the last decay, the earlier
            checkpoint of the effect-stability gates). With ``"previous"`` an arm whose
            run never decayed is left out of the result; untrained arms are the same at
            both checkpoints, and so is an arm whose best check came at its last decay
            (it then carries the final model's name, so their cached states are shared).

    Returns:
        ``({arm: TrainedMLM}, data)``.
    """
    from prismlib.devices import resolve_device
    from prismlib.jobcache import job_dir

    dev = resolve_device(device or profile.device)
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {unknown}; choose from {ARMS}")
    if checkpoint not in ("final", "previous"):
        raise ValueError(f"checkpoint must be 'final' or 'previous', got {checkpoint!r}")
    trained = list(dict.fromkeys(w for a in arms if (w := UNTRAINED_PRISM_ON.get(a, a)) in TRAINED))
    data = section4_data(profile, corpus, load_mlm_tokenizer(profile.encoder), dev, progress)
    jobs = arm_jobs(profile, data, trained)
    workers = 1 if dev.type == "cuda" else max(1, len(jobs))
    # the device as named, not as resolved here: a SLURM job resolves ``auto`` on its own node
    run_missing(jobs, executor, workers, device=device or profile.device, data=data, slurm=slurm)
    models = {}
    for arm in arms:
        job = ArmJob(arm, profile.encoder, profile.name, profile.seed, profile.prism, data.digest())
        tok, model, handle = job.model(dev)
        result, record, name = None, {}, f"{profile.encoder}+{arm}" if arm != "original" else profile.encoder
        weights = UNTRAINED_PRISM_ON.get(arm, arm)
        if weights in TRAINED:
            source = ArmJob(weights, profile.encoder, profile.name, profile.seed, profile.prism, data.digest())
            done = load_checkpoint(job_dir(source) / "done.pt", map_location=dev)
            model.load_state_dict(done["model"])
            earlier = checkpoint == "previous"
            if earlier:
                if done.get("previous") is None:
                    continue
                model.load_state_dict(done["previous"], strict=False)
                # kept at the check of the last decay: the final weights again, under the final's name (its cached states)
                earlier = done["result"].previous_step != done["result"].best_step
            name = f"{profile.encoder}+{arm}-{profile.name}-{source.key}" + ("@previous" if earlier else "")
            if arm == weights:
                result, record = done["result"], done["record"]
        model.eval()
        models[arm] = TrainedMLM(arm, name, tok, model, handle, result, record, dev)
    return models, data


# =========================================================================== the sanity gate


@dataclass
class MLMSanity:
    """The MLM sanity check of section 4's trained arms (:func:`mlm_sanity`).

    Attributes:
        table: one row per arm and stage (columns arm, stage, steps, heldout_loss,
            unigram_loss, gain, ci_low, ci_high, articles).
        intervals: per arm, model minus unigram log p (nats per masked held-out token)
            at the final stage, with its interval over articles.
        improved: per arm (staged recipe), final minus head-warm-up log p on the same
            held-out tokens: what training the top layers added over the encoder before it.
        results: per arm, its training record (why it stopped, its held-out curve).
    """

    table: pd.DataFrame
    intervals: dict[str, Interval]
    improved: dict[str, Interval] = field(default_factory=dict)
    results: dict[str, TrainResult] = field(default_factory=dict)

    def curves(self) -> pd.DataFrame:
        """The stopping text's held-out loss at every check of every arm trained to a stop
        (columns arm, step, heldout_loss, lr_scale, kept: whether it is the kept checkpoint,
        earlier: whether it is the earlier checkpoint of the stability gates)."""
        rows = [
            {
                "arm": arm,
                "step": step,
                "heldout_loss": loss,
                "lr_scale": scale,
                "kept": step == r.best_step,
                "earlier": step == r.previous_step,
            }
            for arm, r in self.results.items()
            for step, loss, scale in (r.heldout or [])
        ]
        return pd.DataFrame(rows, columns=["arm", "step", "heldout_loss", "lr_scale", "kept", "earlier"])

    def converged_gate(self, arm: str, model: str) -> Gate:
        """Gate: ``arm`` trained until its schedule's rule stopped it (not at its cap, and
        not a fixed budget)."""
        r = self.results.get(arm)
        name = f"converged: {model} trained until its rule stopped it"
        if r is None or r.anneal is None:
            return Gate(name, False, "not converged: a fixed budget of steps (this profile does not train to a stop)")
        best = "" if r.best_step is None else f", best held-out check at step {r.best_step} (kept)"
        detail = f"stopped: {r.anneal.stop} after {r.steps} steps, decays at rounds {list(r.anneal.decayed_at)}{best}"
        return Gate(name, r.converged, detail if r.converged else f"not converged: {detail}")

    def improved_gate(self, arm: str, model: str) -> Gate:
        """Gate: ``arm``'s held-out MLM loss is below that of the encoder before training
        (after the head warm-up, on the same tokens), its interval above 0."""
        iv = self.improved.get(arm)
        name = f"{model}'s held-out MLM loss is below the encoder's before training"
        if iv is None:
            return Gate(name, False, "no held-out score of the encoder before training (full recipe)")
        return Gate.from_interval(name, iv, detail=f"trained - before log p {iv} nats per masked held-out token")

    def gate(self, arm: str, model: str) -> Gate:
        """Gate: ``arm``'s MLM head (called ``model`` in the row) beats the unigram model
        on held-out text, its interval above 0."""
        row = self.table[(self.table["arm"] == arm) & (self.table["stage"] == "final")].iloc[0]
        iv = self.intervals[arm]
        return Gate.from_interval(
            f"{model}'s MLM head beats a unigram model on held-out text",
            iv,
            detail=f"held-out loss {row.heldout_loss:.3f} vs unigram {row.unigram_loss:.3f} nats/token; model - unigram log p {iv}",
        )


def mlm_sanity(
    models: dict[str, TrainedMLM],
    data: Section4Data,
    articles: np.ndarray,
    unigram: np.ndarray,
    mask_id: int,
    special_ids,
    seed: int,
    n_boot: int,
) -> MLMSanity:
    """Held-out masked-token loss of every trained arm against a unigram model of the training text.

    The held-out score of :func:`prismlib.prism.heldout_logprobs` (15% of the tokens of
    every held-out input masked, seeded) was stored by each job after the head warm-up
    (staged recipe) and at the end; ``unigram`` (``(vocab,)`` log-probabilities,
    :func:`prismlib.prism.unigram_logprobs` of the training inputs) scores the same tokens.
    The interval of model minus unigram log p (nats per masked token) resamples articles.

    Returns:
        :class:`MLMSanity`: the table of every arm and stage, and the final intervals
        behind each arm's gate.
    """
    from prismlib.prism.span_analysis import article_mean

    _, selected = heldout_mask(data.heldout, mask_id, special_ids, seed)
    uni = (unigram[data.heldout.numpy()] * selected.numpy()).sum(1)
    rows, gates, improved = [], {}, {}
    for arm, m in models.items():
        if "heldout_head" in m.record and "heldout_final" in m.record:
            final, counts = (np.asarray(x, dtype=np.float64) for x in m.record["heldout_final"])
            before = np.asarray(m.record["heldout_head"][0], dtype=np.float64)
            improved[arm] = article_mean(final, articles, before, weights=counts, n_boot=n_boot, seed=seed)
        for stage, key, steps in (("head warm-up", "heldout_head", 0), ("final", "heldout_final", m.result.steps if m.result else 0)):
            if key not in m.record:
                continue
            sums, counts = (np.asarray(x, dtype=np.float64) for x in m.record[key])
            iv = article_mean(sums, articles, uni, weights=counts, n_boot=n_boot, seed=seed)
            rows.append(
                {
                    "arm": arm,
                    "stage": stage,
                    "steps": steps,
                    "heldout_loss": -sums.sum() / counts.sum(),
                    "unigram_loss": -uni.sum() / counts.sum(),
                    "gain": iv.effect,
                    "ci_low": iv.low,
                    "ci_high": iv.high,
                    "articles": iv.units,
                }
            )
            if stage == "final":
                gates[arm] = iv
    results = {arm: m.result for arm, m in models.items() if m.result is not None}
    return MLMSanity(pd.DataFrame(rows), gates, improved, results)
