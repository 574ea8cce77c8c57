"""The three run profiles (smoke / cpu / paper): every size, step and seed in one place.

Notebooks take a ``profile`` parameter (papermill) whose default comes from the
environment variable ``PRISMLIB_PROFILE`` (``cpu`` when unset), so nbval can run the
notebooks on the ``smoke`` profile while ``make reproduce`` runs ``cpu``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

PROFILE_ENV = "PRISMLIB_PROFILE"
DEFAULT_PROFILE = "cpu"


@dataclass(frozen=True)
class SpectralSettings:
    """Notebook 01 (paper section 2, App. A and D).

    Attributes:
        article: index of the WikiText-103 test article whose first window gives Fig. 2.
        neuron: hidden unit shown in Fig. 2; ``None`` picks the unit with the largest
            variance over the window.
        appendix_a_lengths: sequence lengths for which App. A's allocation is tabulated.
        timing_lengths: sequence lengths N of the App. D timing sweep.
        timing_batch: batch size of the timing inputs ``(batch, N, hidden)``.
        timing_repeats: timed repetitions per point (the minimum is reported).
    """

    article: int
    neuron: int | None
    appendix_a_lengths: tuple[int, ...]
    timing_lengths: tuple[int, ...]
    timing_batch: int
    timing_repeats: int


@dataclass(frozen=True)
class Profile:
    """One run profile.

    Attributes:
        name: ``smoke``, ``cpu`` or ``paper``.
        encoder: key of :data:`prismlib.encode.ENCODERS` (``minilm`` offline, or
            ``bert-base-cased`` from the Hugging Face hub).
        window: tokens per window including the two special tokens (510 + 2).
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        seed: base seed; every random step derives its seed from it.
        spectral: settings of notebook 01.
    """

    name: str
    encoder: str
    window: int
    device: str
    seed: int
    spectral: SpectralSettings


_APPENDIX_A = (16, 64, 128, 256, 510, 512, 1024, 4096)

PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        encoder="minilm",
        window=512,
        device="cpu",
        seed=0,
        spectral=SpectralSettings(
            article=0,
            neuron=None,
            appendix_a_lengths=_APPENDIX_A,
            timing_lengths=(64, 256, 512),
            timing_batch=2,
            timing_repeats=2,
        ),
    ),
    "cpu": Profile(
        name="cpu",
        encoder="minilm",
        window=512,
        device="auto",
        seed=0,
        spectral=SpectralSettings(
            article=0,
            neuron=None,
            appendix_a_lengths=_APPENDIX_A,
            timing_lengths=(32, 64, 128, 256, 512, 1024, 2048, 4096),
            timing_batch=8,
            timing_repeats=2,
        ),
    ),
    "paper": Profile(
        name="paper",
        encoder="bert-base-cased",
        window=512,
        device="auto",
        seed=0,
        spectral=SpectralSettings(
            article=0,
            neuron=None,
            appendix_a_lengths=_APPENDIX_A,
            timing_lengths=(32, 64, 128, 256, 512, 1024, 2048, 4096, 8192),
            timing_batch=8,
            timing_repeats=10,
        ),
    ),
}


def get_profile(name: str | None = None) -> Profile:
    """The profile called ``name``; ``None`` reads ``$PRISMLIB_PROFILE`` (default ``cpu``)."""
    name = name or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)} (PROFILE=... or {PROFILE_ENV})")
    return PROFILES[name]
