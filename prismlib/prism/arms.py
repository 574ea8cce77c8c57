"""Continued MLM training of section 4: the arms of Table 1 as cached, resumable jobs.

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

Each trained arm is trained once per training seed of ``profile.prism.seeds``
(:mod:`prismlib.prism.seeds`: seed ``s`` of every arm shares its head initialisation, head
warm-up order, masks, data order and dropout, so the arms are paired by seed); each (arm, seed)
is a job of :mod:`prismlib.jobcache` (:class:`ArmJob`, the seed part of its key): cached under
``.cache/jobs/<key>/``, resumable, and run as parallel single-thread processes by
:func:`section4_models`. With the staged recipe the frozen part is one set of weights for
every arm and seed; its output is cached once per seed's maskings (a seed's masks change what
the frozen layers see), shared by that seed's arms. A finished job also stores its held-out masked-token score
(after the head warm-up and at the end), which the sanity gate
(:func:`prismlib.prism.mlm_sanity`) of every claim that rests on it reads. The text the
arms train on and are scored on is :mod:`prismlib.prism.corpus`.

The code of an arm job's recipe (:func:`recipe_code`: ``ArmJob.train`` and ``model``,
:func:`prism_layers`, :func:`stop_rule`, :func:`prismlib.prism.training_inputs`, ...) is pinned
by a fingerprint beside :data:`RECIPE_VERSION` (``tests/fixtures/recipe_fingerprints.json``).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor, nn

from prismlib.artifacts import load_checkpoint, load_or_discard, remove, save_atomic
from prismlib.jobcache import job_key, run_missing, with_recipe
from prismlib.paths import cache_dir
from prismlib.prism.corpus import MLMCorpus, fig5_inputs, training_inputs
from prismlib.prism.layer import PrismHandle, attach_prism, encoder_layers
from prismlib.prism.mlm_training import TrainResult, derived_seed, load_mlm_tokenizer, train_mlm
from prismlib.prism.seeds import seeded
from prismlib.prism.span_analysis import heldout_logprobs
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
from prismlib.profiles import Profile

ARMS = ("original", "prism_untrained", "baseline", "baseline_prism_untrained", "prism", "prism-every")
"""Arms of Table 1 and App. B: before continued training (App. B.2), the prism attached
without training to it (second control), continued MLM without the prism, the same model
with an untrained prism added afterwards (the control of training with the prism), continued
MLM with the prism, and B.3."""
UNTRAINED_PRISM_ON = {"prism_untrained": "original", "baseline_prism_untrained": "baseline"}
"""Arms that add an untrained prism after the last layer of another arm's weights."""
TRAINED = ("baseline", "prism", "prism-every")


@dataclass
class Section4Data:
    """What every arm job reads: the training inputs, the held-out inputs of the sanity
    gate and Fig. 5, and (staged recipe) the folders of the frozen-state caches: one per
    training seed (its maskings of the training inputs), one of the stopping text (shared)."""

    train: Tensor
    heldout: Tensor
    states: dict[int, str] | None = None
    stop: Tensor | None = None
    stop_states: str | None = None

    def states_of(self, seed: int) -> str:
        """The folder of training seed ``seed``'s frozen-state cache."""
        if self.states is None or seed not in self.states:
            built = sorted(self.states or {})
            raise RuntimeError(f"no frozen-state cache of training seed {seed} (built: {built}); build it with section4_data(..., seeds)")
        return self.states[seed]

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
        ArmJob.train, ArmJob.model, Section4Data.states_of, prism_layers, training_inputs, mlm_training.load_mlm_model,
        mlm_training.mlm_loss,
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
            cache = open_state_cache(data.states_of(self.seed))
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
                pretrained_lr=S.pretrained_lr,
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
        seed: the training seed (an untrained arm: the profile's seed, which seeded its MLM head).
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
    seed: int = 0

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


def section4_data(
    profile: Profile,
    corpus: MLMCorpus,
    tokenizer,
    device: str | torch.device = "cpu",
    progress: bool = True,
    seeds: tuple[int, ...] | None = None,
) -> Section4Data:
    """The inputs every arm reads; for the staged recipe the frozen-state caches are built
    here (once per profile, text, encoder and training seed of ``seeds``, default
    ``profile.prism.seeds``, with every core), then reused. Seed ``s``'s cache holds its own
    ``mask_versions`` maskings of the training inputs (:func:`prismlib.prism.mask_version` of
    ``s``); the profile's seed's cache is the one built before seeds existed."""
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
    data.states = {}
    for seed in S.seeds if seeds is None else seeds:
        digest = hashlib.sha256(repr((profile.encoder, seed, start, S.mask_versions)).encode())
        digest.update(data.train.numpy().tobytes())
        folder = cache_dir() / "mlm" / f"states-{profile.encoder.replace('/', '--')}-{digest.hexdigest()[:16]}"
        with torch_threads(os.cpu_count() or 1):  # before the arms train: every core is free; a finished cache is kept
            build_state_cache(
                model,
                data.train,
                start,
                S.mask_versions,
                seed,
                tokenizer.all_special_ids,
                tokenizer.mask_token_id,
                len(tokenizer),
                folder,
                progress=progress,
            )
        data.states[seed] = str(folder)
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


def arm_jobs(profile: Profile, data: Section4Data, arms=TRAINED, seeds: tuple[int, ...] | None = None) -> list[ArmJob]:
    """The jobs of the trained ``arms`` of ``profile`` on ``data``, one per training seed of
    ``seeds`` (default ``profile.prism.seeds``), seed by seed (a seed's arms side by side)."""
    seeds = profile.prism.seeds if seeds is None else seeds
    return [ArmJob(a, profile.encoder, profile.name, s, profile.prism, data.digest()) for s in seeds for a in arms]


def section4_models(
    profile: Profile,
    corpus: MLMCorpus,
    arms=ARMS,
    executor: str | None = None,
    device: str | None = None,
    progress: bool = True,
    slurm: dict | None = None,
    checkpoint: str = "final",
    seeds: tuple[int, ...] | None = None,
) -> tuple[dict[str, TrainedMLM], Section4Data]:
    """The models of ``arms``, every trained one for each training seed, training the missing ones first.

    The trained arms are jobs (:class:`ArmJob`, one per arm and seed) run by
    :func:`prismlib.jobcache.run_missing`: on a CPU as single-thread processes, one per trained
    arm of a seed (``local``, the default; the seeds queue, seed by seed), on a GPU one after
    the other, or on a SLURM cluster (``executor="slurm"``, options ``slurm``). ``original``
    and ``prism_untrained`` need no training (one model each, the profile's seed);
    ``baseline_prism_untrained`` is each seed's trained ``baseline`` with an untrained prism added.

    Args:
        checkpoint: ``"final"`` (the kept, best held-out weights) or ``"previous"`` (for
            runs trained to a stop: the best weights at the last decay, the earlier
            checkpoint of the effect-stability gates). With ``"previous"`` a model whose
            run never decayed is left out of the result; untrained arms are the same at
            both checkpoints, and so is a model whose best check came at its last decay
            (it then carries the final model's name, so their cached states are shared).
        seeds: the training seeds (default ``profile.prism.seeds``).

    Returns:
        ``({model: TrainedMLM}, data)``: an untrained arm under its name (``"original"``), a
        trained one under its name and seed (:func:`prismlib.prism.seeded`: ``"prism#1"``).
    """
    from prismlib.devices import resolve_device
    from prismlib.jobcache import job_dir

    dev = resolve_device(device or profile.device)
    seeds = profile.prism.seeds if seeds is None else tuple(seeds)
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm(s) {unknown}; choose from {ARMS}")
    if checkpoint not in ("final", "previous"):
        raise ValueError(f"checkpoint must be 'final' or 'previous', got {checkpoint!r}")
    trained = list(dict.fromkeys(w for a in arms if (w := UNTRAINED_PRISM_ON.get(a, a)) in TRAINED))
    data = section4_data(profile, corpus, load_mlm_tokenizer(profile.encoder), dev, progress, seeds)
    jobs = arm_jobs(profile, data, trained, seeds)
    workers = 1 if dev.type == "cuda" else max(1, min(len(jobs), len(trained)))
    # the device as named, not as resolved here: a SLURM job resolves ``auto`` on its own node
    run_missing(jobs, executor, workers, device=device or profile.device, data=data, slurm=slurm)
    models = {}
    for arm in arms:
        weights = UNTRAINED_PRISM_ON.get(arm, arm)
        for seed in seeds if weights in TRAINED else (profile.seed,):
            job = ArmJob(arm, profile.encoder, profile.name, seed, profile.prism, data.digest())
            tok, model, handle = job.model(dev)
            result, record, name = None, {}, f"{profile.encoder}+{arm}" if arm != "original" else profile.encoder
            key = arm
            if weights in TRAINED:
                key = seeded(arm, seed)
                source = ArmJob(weights, profile.encoder, profile.name, seed, profile.prism, data.digest())
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
            models[key] = TrainedMLM(arm, name, tok, model, handle, result, record, dev, seed)
    return models, data
