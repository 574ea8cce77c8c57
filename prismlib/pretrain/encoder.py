"""The committed pretraining as an encoder: the small BERT of ``cpu-long`` (issue 76) as an
ordinary Hugging Face folder, and the gate of the premise section 4 rests on.

The pretraining lives in the repository as a committed state (:mod:`prismlib.pretrain.record`:
fp16 weights and ``record.json`` under ``results/cpu/runs/pretrain/<key>/``), a format of this
library. Section 4's notebooks read encoders the way they read bert-base-cased, through
``transformers`` (:func:`prismlib.probing.load_encoder` takes a folder), so
:func:`committed_encoder` reads the committed state of a profile's
:class:`~prismlib.profiles.PretrainSettings` with every check of
:func:`~prismlib.pretrain.read_state` (a flipped byte, a truncated file or another recipe stays
a :class:`~prismlib.records.BadRecord`, never used), refuses a missing or unfinished
pretraining with the command that finishes it (:class:`PretrainingNotDone`), and writes the
``BertForMaskedLM`` and the pretraining tokenizer with ``save_pretrained`` into
``.cache/encoders/pretrained-<key>/``: atomically, under a lock, and again only when the
record's weights change (their digest is kept beside them in :data:`BUILT`).

:func:`pretrained_premise` is the premise that the encoder was pretrained with masked LM, for
this encoder measured rather than stated: its gain over the unigram model on held-out text
must reach :data:`PREMISE_GATE` nats per masked token (issue 76's gate).

:func:`section4_encoder` is what notebooks 03 and 04 call first: for a profile whose section 4
runs on its own pretraining (``prism.pretrained_encoder``, the ``cpu`` profile) the profile
with that encoder (``pretrained-<key>``) and the measured premise; for any other profile the
profile as it is.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prismlib.artifacts import file_digest
from prismlib.claims import Gate
from prismlib.paths import cache_dir, locked, output_root, results_dir
from prismlib.pretrain.installment import pretrain_config, recipe_config, recipe_inputs
from prismlib.pretrain.model import pretraining_tokenizer
from prismlib.pretrain.recipe import PretrainConfig, recipe_key
from prismlib.pretrain.record import WEIGHTS, CommittedState, read_state
from prismlib.pretrain.train import PretrainData
from prismlib.probing.encoders import MASKED_LM_PREMISE, PRETRAINED_PREFIX
from prismlib.profiles import PretrainSettings, Profile
from prismlib.records import PRETRAIN, RUNS

PREMISE_GATE = 1.5
"""Issue 76's premise gate, in nats per masked token: the pretrained encoder's held-out
masked-LM loss must be at least this far below the unigram model's on the same positions
(at the longest length it was trained at) for section 4's claims, which rest on masked-LM
pretraining, to be tested on it. The pilot chose the size and budget to reach it
(docs/benchmarks.md)."""

BUILT = "pretrained.json"
"""The file of an encoder folder that says which record it was built from (the run's key and
the SHA-256 of the record's ``weights.pt``): a folder whose digest differs is rebuilt."""

_TRAIN = "python -m prismlib train --profile cpu-long --minutes 110"
"""The command that pretrains (one installment of) the profile's BERT."""


class PretrainingNotDone(RuntimeError):
    """The committed pretraining is missing or its schedule is not done: no encoder yet.

    Attributes:
        folder: where the committed state is expected (``<records>/<key>``).
        steps: the steps its committed state holds (0: none); total_steps: the schedule's.
    """

    def __init__(self, folder: Path, steps: int, total_steps: int, message: str) -> None:
        super().__init__(message)
        self.folder, self.steps, self.total_steps = folder, steps, total_steps


@dataclass(frozen=True)
class PretrainedEncoder:
    """The committed pretraining as a Hugging Face encoder folder (:func:`committed_encoder`).

    Attributes:
        folder: the ``save_pretrained`` folder (``BertForMaskedLM`` and its tokenizer): give
            ``str(folder)`` to :func:`prismlib.probing.load_encoder` or ``transformers``.
        key: the run's key (:func:`~prismlib.pretrain.recipe_key`).
        size: the architecture as the settings name it (``"4x256"``).
        steps: optimizer steps trained; tokens: training tokens seen.
        heldout_loss: the last held-out check's masked-LM loss at the longest length (nats per
            masked token); unigram_loss: the unigram model's on the same positions.
        seq_len: the input length of that check (the long phase's, when the recipe has one).
        curve: every held-out check of the run (the record's curve: step, tokens, seq_len,
            heldout_loss, unigram_loss, gain, ...); boundaries: the steps where it resumed
            from a committed state on a new machine. For a continuation, its base's checks
            first, then its own, their steps and tokens counted from the base's start
            (``steps`` and ``tokens`` too: all the model was trained on).
        continued_at: the steps where a continuation started from the done run before it (a
            fresh AdamW and a schedule of its own; ``()``: a run from scratch).
    """

    folder: Path
    key: str
    size: str
    steps: int
    tokens: int
    heldout_loss: float
    unigram_loss: float
    seq_len: int
    curve: tuple[dict[str, float], ...] = ()
    boundaries: tuple[int, ...] = ()
    continued_at: tuple[int, ...] = ()

    @property
    def gain(self) -> float:
        """``unigram_loss - heldout_loss``: what the pretraining learned beyond word frequencies,
        in nats per masked token (the premise's measure, :func:`pretrained_premise`)."""
        return self.unigram_loss - self.heldout_loss


def _shown(path: Path) -> str:
    """``path`` relative to the output root when it lies under it (as it is committed), else as is."""
    path = Path(path)
    return str(path.relative_to(output_root())) if path.is_absolute() and path.is_relative_to(output_root()) else str(path)


def _not_done(folder: Path, records: Path, steps: int, total: int, what: str) -> PretrainingNotDone:
    training = Path(records).parent.parent / "training.json"
    return PretrainingNotDone(
        folder,
        steps,
        total,
        f"{what} ({_shown(folder)}: step {steps} of {total}): run `{_TRAIN}` until it is done (each installment goes on "
        f"from the last), then commit {_shown(folder)} and {_shown(training)}",
    )


def _premise_check(state: CommittedState, config: PretrainConfig) -> dict[str, float]:
    """The last held-out check at the longest length the recipe trains (its long phase's)."""
    longest = config.long_seq_len or config.seq_len
    row = next((r for r in reversed(state.curve) if int(r["seq_len"]) == longest), None)
    if row is None:
        raise ValueError(f"{state.folder}: the committed state holds no held-out check at {longest} tokens, its longest length")
    return row


def _lineage(settings: PretrainSettings, records: Path, corpus: str, tokenizer: str) -> list[CommittedState]:
    """The committed states of a continuation's bases, the first run's first, without their
    weights (verified by :func:`~prismlib.pretrain.read_state`; ``[]`` for a run from scratch)."""
    if settings.base is None:
        return []
    config = recipe_config(settings.base, corpus, tokenizer)
    base = read_state(Path(records) / recipe_key(config, corpus, tokenizer), config, corpus, tokenizer, weights=False)
    return [*_lineage(settings.base, records, corpus, tokenizer), base]


def _joined(states: list[CommittedState]) -> dict[str, Any]:
    """One history of runs that continue each other: their curves and boundaries with steps and
    tokens counted from the first run's start, where each continuation started, and the totals."""
    curve: list[dict[str, float]] = []
    boundaries: list[int] = []
    starts: list[int] = []
    steps = tokens = 0
    for i, state in enumerate(states):
        if i:
            starts.append(steps)
        curve += [{**r, "step": r["step"] + steps, "tokens": r["tokens"] + tokens} for r in state.curve]
        boundaries += [b + steps for b in state.boundaries]
        steps, tokens = steps + state.step, tokens + state.tokens
    return {"curve": tuple(curve), "boundaries": tuple(boundaries), "continued_at": tuple(starts), "steps": steps, "tokens": tokens}


def _build(folder: Path, model: Any, built: dict[str, str]) -> None:
    """Write ``model`` and the pretraining tokenizer into ``folder`` whole or not at all:
    into a sibling ``.part`` folder, then moved into place (an older folder moved out first)."""
    tmp = folder.with_name(folder.name + ".part")
    old = folder.with_name(folder.name + ".old")
    for stale in (tmp, old):
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp)
    pretraining_tokenizer().save_pretrained(tmp)
    (tmp / BUILT).write_text(json.dumps(built, indent=1) + "\n")
    if folder.exists():
        os.replace(folder, old)
    os.replace(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)


def _built(folder: Path) -> dict[str, str] | None:
    try:
        return dict(json.loads((folder / BUILT).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def committed_encoder(settings: PretrainSettings, records: Path, data: PretrainData | None = None) -> PretrainedEncoder:
    """The committed pretraining of ``settings`` as a Hugging Face encoder folder.

    Reads the committed state of the recipe (:func:`~prismlib.pretrain.recipe_config`; a
    continuation's bases too, whose curves come first in its history) on the
    corpus and tokenizer of ``data`` from ``<records>/<key>`` (:func:`~prismlib.pretrain.read_state`,
    every check included), and writes its ``BertForMaskedLM`` (fp32, the committed fp16 values)
    and the pretraining tokenizer into ``cache_dir()/"encoders"/f"pretrained-{key}"``, under a
    lock and atomically; a folder built from the same weights (:data:`BUILT`) is reused.

    Args:
        settings: the profile's pretraining (``cpu``'s ``profile.pretrain``).
        records: the committed states' folder, ``results/<job profile>/runs/pretrain`` (two
            folders up holds ``training.json``, which the fix names).
        data: the corpus the key is of (default: the offline corpus at the recipe's lengths,
            which builds its inputs; tests give :func:`~prismlib.pretrain.synthetic_inputs`).

    Returns:
        a :class:`PretrainedEncoder`.

    Raises:
        PretrainingNotDone: no committed state of the recipe, or one whose schedule is not done
            (the message says the step of the total and the command and files that fix it).
        prismlib.records.BadRecord: the committed state must not be used (a changed or missing
            file, another recipe, corpus or tokenizer, uncommitted code): one line, the file and the fix.
    """
    if data is None:
        data = recipe_inputs(pretrain_config(settings), progress=False)
    corpus, tokenizer = data.inputs.corpus_digest, data.inputs.tokenizer_digest
    config = recipe_config(settings, corpus, tokenizer)
    key = recipe_key(config, corpus, tokenizer)
    record = Path(records) / key
    if not record.exists():
        raise _not_done(record, records, 0, settings.total_steps, f"the {settings.size} BERT has no committed pretraining")
    state = read_state(record, config, corpus, tokenizer)
    if not state.done:
        raise _not_done(record, records, state.step, settings.total_steps, f"the {settings.size} BERT's pretraining is not done")
    check = _premise_check(state, config)
    history = _joined([*_lineage(settings, records, corpus, tokenizer), state])
    built = {"key": key, "weights_sha256": file_digest(record / WEIGHTS)}
    folder = cache_dir() / "encoders" / f"{PRETRAINED_PREFIX}{key}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with locked(folder.with_name(folder.name + ".build")):
        if _built(folder) != built:
            _build(folder, state.model, built)
    return PretrainedEncoder(
        folder=folder,
        key=key,
        size=settings.size,
        heldout_loss=float(check["heldout_loss"]),
        unigram_loss=float(check["unigram_loss"]),
        seq_len=int(check["seq_len"]),
        **history,
    )


def pretrained_premise(encoder: PretrainedEncoder, gate: float = PREMISE_GATE) -> Gate:
    """The masked-LM premise of a claim (:data:`prismlib.probing.MASKED_LM_PREMISE`, the name
    :func:`prismlib.probing.masked_lm_premise` gives it for the registered encoders) on the
    pretrained encoder: passed when its held-out gain over the unigram model reaches ``gate``
    nats per masked token (:data:`PREMISE_GATE`), i.e. it learned more than word frequencies;
    its detail the numbers behind it, in one sentence."""
    detail = (
        f"the {encoder.size} BERT pretrained here with masked LM on {encoder.tokens:,} tokens gains {encoder.gain:+.3f} nats "
        f"per masked token over the unigram model on held-out text (unigram {encoder.unigram_loss:.3f}, "
        f"model {encoder.heldout_loss:.3f}, at {encoder.seq_len} tokens), gate {gate:.2f}"
    )
    return Gate(MASKED_LM_PREMISE, encoder.gain >= gate, detail)


def pretraining_figure(encoder: PretrainedEncoder, gate: float = PREMISE_GATE) -> Any:
    """The pretraining's learning curve: the held-out gain over the unigram model (nats per
    masked token) against training tokens, one line per input length (BERT's two phases),
    the premise gate and the boundaries where the run resumed on a new machine.

    Returns:
        a matplotlib ``Figure`` (the caller saves it: :func:`prismlib.plots.save_figure`).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2))
    for seq_len in sorted({int(r["seq_len"]) for r in encoder.curve}):
        rows = [r for r in encoder.curve if int(r["seq_len"]) == seq_len and r["tokens"] > 0]
        ax.plot([r["tokens"] / 1e6 for r in rows], [r["gain"] for r in rows], marker=".", label=f"held out, inputs of {seq_len} tokens")
    ax.axhline(gate, color="0.2", lw=1, ls="--", label=f"premise gate {gate:g} nats")
    for i, step in enumerate(encoder.boundaries):
        at = next((r["tokens"] / 1e6 for r in encoder.curve if int(r["step"]) >= step), None)
        if at is not None:
            ax.axvline(at, color="0.6", lw=0.8, ls=":", label="resumed on a new machine" if i == 0 else None)
    for i, step in enumerate(encoder.continued_at):
        at = next(r["tokens"] / 1e6 for r in encoder.curve if int(r["step"]) >= step)
        ax.axvline(at, color="0.3", lw=1, ls="-.", label="continuation: fresh AdamW, its own schedule" if i == 0 else None)
    ax.set_xlabel("training tokens (millions)")
    ax.set_ylabel("gain over unigram (nats per masked token)")
    ax.set_title(f"The {encoder.size} BERT pretrained here: {encoder.steps:,} steps, gain {encoder.gain:+.2f} at {encoder.seq_len} tokens")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    return fig


@dataclass(frozen=True)
class Section4Encoder:
    """The encoder section 4 (notebooks 03-04) runs on, for one profile (:func:`section4_encoder`).

    Attributes:
        profile: the profile, its ``encoder`` the one section 4 runs on (``pretrained-<key>``
            when ``prism.pretrained_encoder``, else unchanged).
        premise: the masked-LM premise measured on the pretrained encoder
            (:func:`pretrained_premise`); ``None``: the registry's, as for MiniLM and BERT
            (:func:`prismlib.probing.masked_lm_premise`).
        pretrained: the committed pretraining behind the encoder (``None``: the profile's own encoder).
    """

    profile: Profile
    premise: Gate | None
    pretrained: PretrainedEncoder | None


def section4_encoder(profile: Profile, records: Path | None = None, data: PretrainData | None = None) -> Section4Encoder:
    """The encoder of ``profile``'s section 4: its committed pretraining when
    ``profile.prism.pretrained_encoder`` (built into its Hugging Face folder by
    :func:`committed_encoder`, the premise gate :func:`pretrained_premise`), else its ``encoder``.

    Args:
        profile: the notebook's profile.
        records: the committed states' folder (default ``results/<job profile>/runs/pretrain``).
        data: the pretraining corpus (default: the offline one; tests give a synthetic one).

    Raises:
        PretrainingNotDone, prismlib.records.BadRecord: as :func:`committed_encoder`.
    """
    if not profile.prism.pretrained_encoder:
        return Section4Encoder(profile, None, None)
    assert profile.pretrain is not None  # the profile refuses pretrained_encoder without it
    records = results_dir(profile.job_profile) / RUNS / PRETRAIN if records is None else records
    encoder = committed_encoder(profile.pretrain, records, data)
    return Section4Encoder(replace(profile, encoder=encoder.folder.name), pretrained_premise(encoder), encoder)
