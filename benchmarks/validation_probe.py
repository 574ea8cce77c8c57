"""The ORIG probe of several encoders on one task's validation split, side by side: what
``prism_damage.py`` and ``encoder_orig.py`` measure a choice on (never on test).

    from validation_probe import orig_on_validation      # benchmarks/ is the script's folder
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ValidationProbe:
    """The probes of one task on its validation split.

    Attributes:
        compare: the models' accuracies and paired differences over validation units
            (:class:`prismlib.prism.seeds.SeedComparison`; conditions named as the encoders).
        units: validation units (posts, conversations, files); positions: probed rows.
        encode_seconds, probe_seconds: the wall time of each part.
    """

    compare: Any
    units: int
    positions: int
    encode_seconds: float
    probe_seconds: float


def orig_on_validation(encoders: dict[str, Any], task: Any, profile: Any, positions: int, specials: str = "inside") -> ValidationProbe:
    """Probe the last layer's ORIG features of every encoder of ``encoders`` (name -> encoder)
    on ``task``'s windows with ``profile``'s probe recipe and runs, scored on validation."""
    import torch

    from prismlib.prism.seeds import SeedComparison
    from prismlib.probing import ProbeRecipe, encode_splits, pool_features, probe_conditions

    P, Q = profile, profile.probe
    t0 = time.perf_counter()
    where = dict(task=task.name, profile_name=P.name, positions=positions, seed=P.seed, batch_size=Q.encode_batch, specials=specials)
    features = {k: encode_splits(enc, task.windows, {-1: ("ORIG",)}, **where)[-1] for k, enc in encoders.items()}
    encoded = time.perf_counter() - t0
    feats = pool_features(features)
    feats = {"train": feats["train"], "val": feats["val"], "test": feats["val"]}  # scored on validation only
    t1 = time.perf_counter()
    runs = probe_conditions(
        feats, len(task.label_names), tuple(features), Q.runs, P.seed, ProbeRecipe.of(Q, task.name), workers=Q.workers,
        device=torch.device("cpu"),
    )  # fmt: skip
    groups = task.row_groups("val", feats["val"].window)
    compare = SeedComparison.from_runs(runs, feats["val"], groups, seed=P.seed, task=task.name)
    return ValidationProbe(compare, len(np.unique(groups)), len(feats["val"].labels), encoded, time.perf_counter() - t1)
