"""How far a training LSTM job is: ``status.json`` in its cache folder.

:meth:`~prismlib.lstm.job.Job.train` rewrites the file after every epoch
(:func:`write_status`); ``python -m prismlib train`` and the installments read it
(:func:`read_status`) to report progress and project what a job still needs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from prismlib.jobcache import Trainable, job_dir
from prismlib.lstm.convergence import fit_power_law
from prismlib.lstm.training import TrainHistory
from prismlib.profiles import LSTMSettings

STATUS = "status.json"
"""Per job folder: how far training is, rewritten after every epoch (:func:`write_status`)."""


def write_status(folder: Path, hist: TrainHistory, s: LSTMSettings) -> None:
    """Write ``<folder>/status.json``: tokens and seconds so far, the last curve point, and
    the budget at which the model gate would pass by a power-law fit of the curve
    (``projected_tokens``, ``null`` while the curve is too short to fit)."""
    curve = hist.learning_curve()
    projected = None
    if curve is not None:
        try:
            projected = fit_power_law(curve).budget(s.converge_share, s.converge_tolerance, start=curve.budget)
        except ValueError:
            projected = None
    status: dict[str, Any] = {
        "epochs": hist.epochs,
        "tokens": hist.tokens,
        "seconds": round(hist.seconds, 1),
        "valid_ppl": None if curve is None else float(curve.valid_ppl[-1]),
        "projected_tokens": projected if projected is None or math.isfinite(projected) else None,
        "cap_tokens": round(hist.tokens / max(hist.epochs, 1) * s.epochs),
    }
    if hist.anneal is not None:
        status |= {"decays": len(hist.anneal.decayed_at), "lr_scale": hist.anneal.scale, "stop": hist.anneal.stop}
    tmp = folder / (STATUS + ".tmp")
    tmp.write_text(json.dumps(status))
    tmp.replace(folder / STATUS)


def read_status(job: Trainable, cache: Path | None = None) -> dict[str, Any] | None:
    """The job's ``status.json`` (``None`` before its first epoch)."""
    path = job_dir(job, cache) / STATUS
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
