"""What every work-B notebook (05-08) starts with: the profile, PTB and its test tokens,
and the trained runs with the reference table beside them.

The notebooks read the same PTB test tokens (the profile's ``test_tokens`` first tokens,
or all), and each writes ``figures/<profile>/lm_references.*``: the unigram and
Kneser-Ney bigram references of :func:`prismlib.lstm.bigram.ptb_references` with a row
per baseline seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from prismlib.data.ptb import PTBCorpus, load_ptb_corpus
from prismlib.lstm.bigram import lm_references
from prismlib.lstm.job import RunSpec
from prismlib.lstm.trained_runs import TrainedRun, sources_line, trained
from prismlib.plots import save_table, set_theme
from prismlib.profiles import LSTMSettings, Profile, get_profile


class WorkBStart(NamedTuple):
    """A work-B notebook's profile and data (unpack it: ``P, S, corpus, test_ids = ...``).

    Attributes:
        profile: the run profile; ``settings`` its LSTM settings (``profile.lstm``).
        corpus: PTB as id arrays.
        test_ids: ``(n,)`` int64, the PTB test tokens every model and reference is scored on.
    """

    profile: Profile
    settings: LSTMSettings
    corpus: PTBCorpus
    test_ids: np.ndarray


def ptb_test_ids(corpus: PTBCorpus, settings: LSTMSettings) -> np.ndarray:
    """The PTB test tokens the models are scored on: the first ``settings.test_tokens``, or all."""
    return corpus.test if settings.test_tokens is None else corpus.test[: settings.test_tokens]


def work_b_start(profile_name: str) -> WorkBStart:
    """The profile named ``profile_name``, the plot theme set (:func:`prismlib.plots.set_theme`),
    PTB loaded and its test tokens cut (:func:`ptb_test_ids`)."""
    P = get_profile(profile_name)
    set_theme()
    corpus = load_ptb_corpus()
    return WorkBStart(P, P.lstm, corpus, ptb_test_ids(corpus, P.lstm))


def baseline_references(references: pd.DataFrame, runs: dict[RunSpec, TrainedRun]) -> pd.DataFrame:
    """``references`` (:func:`~prismlib.lstm.bigram.ptb_references`) with a row per baseline
    run of ``runs``: ``"baseline seed k"`` with its validation and test perplexity."""
    baseline = {f"baseline seed {s.seed}": (r.val_ppl, r.test_ppl) for s, r in runs.items() if s.variant == "baseline"}
    return lm_references(references, baseline)


def trained_with_references(
    specs: Sequence[RunSpec], profile: Profile, references: pd.DataFrame, executor: str | None = None
) -> dict[RunSpec, TrainedRun]:
    """The trained runs of ``specs`` (:func:`~prismlib.lstm.trained`, missing ones trained on
    ``executor``), and ``lm_references`` of the profile written: the references with a row
    per baseline seed among them (:func:`baseline_references`). Prints one line saying where the
    runs come from (:func:`~prismlib.lstm.sources_line`: committed records, with the commit
    and date they were trained at, or local checkpoints)."""
    runs = trained(specs, profile.lstm, profile.job_profile, executor=executor, device=profile.device)
    print(sources_line(runs))
    save_table(baseline_references(references, runs), "lm_references", profile.name)
    return runs
