"""What a job's key hashes (prismlib.lstm.job): the cache folder of every LSTM job is named by the
hash of what changes its model, its whole recipe (the anneal schedule's patience included),
and nothing else."""

from __future__ import annotations

import dataclasses

import pytest
from lstm_fixtures import tiny_lstm

from prismlib import lstm
from prismlib.lstm import job as lstm_job
from prismlib.profiles import get_profile

TINY = tiny_lstm(optimizer="ntasgd", average_last=1, epochs=2, steps_per_epoch=3, cutoffs=(10, 20), curve_every=1, curve_tokens=100)
CACHE_TINY = tiny_lstm(optimizer="ntasgd", average_last=1, curve_every=2, curve_tokens=1000, epochs=2, steps_per_epoch=3, cutoffs=(10, 20))
"""The job-cache tests' tiny recipe (``tests/core/test_jobcache.py``)."""


def _job(seed: int = 1, variant: str = "layer2", T: float | None = 5.0) -> lstm_job.Job:
    return lstm_job.Job(lstm.RunSpec(variant, T, fixed=T is not None, seed=seed), CACHE_TINY, "test")


def test_key_hashes_what_changes_the_model():
    job = _job()
    assert job.key == _job().key and len(job.key) == 16
    assert job.key != _job(seed=2).key  # seed
    assert job.key != lstm_job.Job(job.spec, CACHE_TINY.updated(lr=1.0), "test").key  # a training setting
    assert job.key == lstm_job.Job(job.spec, CACHE_TINY, "cpu").key  # not the profile's name: one recipe, one model
    # evaluation-only settings do not retrain
    assert job.key == lstm_job.Job(job.spec, CACHE_TINY.updated(seeds=(7,), memory_contexts=3, threads=None), "test").key


def test_the_key_hashes_the_whole_recipe_and_no_analysis_setting():
    """Every recipe field (its anneal schedule's included), whatever its value, moves the key; no
    analysis setting and no profile name does."""
    from dataclasses import fields

    from prismlib.profiles import LSTMSettings

    base = lstm_job.Job(lstm.RunSpec(), TINY, "test")
    assert set(base.describe()) == {"spec", "training", "recipe"}
    flat = TINY.recipe.flat()  # the schedule's fields beside the recipe's own, under their own names
    assert base.describe()["training"] == flat and {"decay_factor", "decay_patience", "fixed_path"} <= set(flat)
    assert lstm_job.Job(lstm.RunSpec(), TINY, "another profile").key == base.key
    changed = {"optimizer": "adam", "steps_per_epoch": None, "cutoffs": (5,), "curve_every": None, "converge_share": 0.4,
               "until_converged": True, "fixed_path": True}  # fmt: skip
    needs = {
        "until_converged": {"average_last": 0},
        "fixed_path": {"optimizer": "anneal", "average_last": 0, "epochs": 40, "min_rounds": 3},
    }
    for name, current in flat.items():
        value = changed.get(name, current)
        if name not in changed:
            value = not value if isinstance(value, bool) else (value * 2 + 1 if value is not None else 7)
        start = TINY.recipe.updated(**needs.get(name, {}))
        keys = {lstm_job.Job(lstm.RunSpec(), TINY.updated(recipe=r), "test").key for r in (start, start.updated(**{name: value}))}
        assert len(keys) == 2, name
    for f in fields(LSTMSettings):
        if f.name != "recipe":
            value = getattr(TINY, f.name)
            other = {"seeds": (9,), "memory_fit": (3, 4), "memory_mode": "remove", "grid": "slides", "freeze": "all"}.get(f.name)
            other = other if other is not None else (not value if isinstance(value, bool) else (value or 0) + 1)
            assert lstm_job.Job(lstm.RunSpec(), dataclasses.replace(TINY, **{f.name: other}), "test").key == base.key, f.name
    assert (
        lstm_job.Job(lstm.RunSpec(freeze="all", fixed=True, variant="layerwise", T=20.0), TINY, "test").key
        != lstm_job.Job(lstm.RunSpec(fixed=True, variant="layerwise", T=20.0), TINY, "test").key
    )


def test_patience_is_part_of_the_recipe_and_must_be_at_least_one():
    from prismlib.lstm.job import Job

    s = get_profile("cpu").lstm.updated(decay_patience=1)
    assert Job(lstm.RunSpec(), s, "cpu").describe()["training"]["decay_patience"] == 1
    two = s.updated(decay_patience=2)
    assert Job(lstm.RunSpec(), two, "cpu").key != Job(lstm.RunSpec(), s, "cpu").key
    with pytest.raises(ValueError, match="decay_patience must be >= 1"):
        s.updated(decay_patience=0)
