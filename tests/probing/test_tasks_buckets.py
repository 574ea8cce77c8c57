"""MLM frequency buckets and the profile's task settings (prismlib.probing.tasks), on
hand-made windows (the real-data check is in test_tasks.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib.probing import IGNORE, Features, TaskData, Window, mlm_bucket, profile_task
from prismlib.probing import tasks as tasks_module
from prismlib.profiles import get_profile


def mlm_task() -> tuple[TaskData, dict[str, Features]]:
    """Targets ranked 0..5 (label k = rank k + 1); two windows per split, each position its own unit."""
    windows, feats = {}, {}
    for s, split in enumerate(("train", "val", "test")):
        wins = []
        for i in range(2):
            labels = np.array([IGNORE, 0, 3, IGNORE, 5, 1, 2, 4, 0, IGNORE], dtype=np.int64)
            units = np.where(labels != IGNORE, np.arange(10) + 100 * (2 * s + i), -1)
            wins.append(Window(np.arange(10), labels, (labels != IGNORE).astype(np.float32), units, f"art{i}"))
        windows[split] = wins
        pos = [np.flatnonzero(w.labels != IGNORE) for w in wins]
        labels = torch.from_numpy(np.concatenate([w.labels[p] for w, p in zip(wins, pos)]))
        unit = torch.from_numpy(np.concatenate([w.unit_ids[p] for w, p in zip(wins, pos)]))
        window = torch.from_numpy(np.concatenate([np.full(len(p), i) for i, p in enumerate(pos)]))
        x = labels[:, None].float().half()
        feats[split] = Features({"ORIG": x}, labels, torch.ones(len(labels)), window, unit, torch.from_numpy(np.concatenate(pos)))
    masked = {"train": 20, "val": 16, "test": 16}  # more than labelled: some targets were never seen in training
    return TaskData("mlm", ["the", ",", "of", "and", "in", "a"], windows, {}, masked), feats


def test_a_bucket_keeps_the_targets_of_its_ranks_renumbered_from_zero():
    task, feats = mlm_task()
    bucket, bf = mlm_bucket(task, feats, 2, 4)
    assert bucket.key == "mlm 2-4" and bucket.ranks == (2, 4) and bucket.name == "mlm" and bucket.unit == "masked wordpiece"
    assert bucket.label_names == [",", "of", "and"]
    for split in ("train", "val", "test"):
        assert bf[split].labels.tolist() == [2, 0, 1] * 2  # ranks 4, 2, 3 of each window
        assert (bf[split].x["ORIG"].float().squeeze(1) == bf[split].labels + 1).all()  # the rows of those targets
        assert bf[split].weights.tolist() == [1.0] * 6
        w = bucket.windows[split][0]
        assert w.labels.tolist() == [IGNORE, IGNORE, 2, IGNORE, IGNORE, 0, 1, IGNORE, IGNORE, IGNORE]
        assert ((w.unit_ids == -1) == (w.labels == IGNORE)).all() and (w.weights[w.labels == IGNORE] == 0).all()
    assert bucket.sources["test"] == "6 of 16 masked wordpieces (38%) have a target of training-frequency rank 2-4"
    assert bucket.row_groups("test", bf["test"].window).tolist() == ["art0"] * 3 + ["art1"] * 3
    rest, rf = mlm_bucket(task, feats, 5, 0)
    assert rest.key == "mlm 5+" and rest.label_names == ["in", "a"] and rf["test"].labels.tolist() == [1, 0] * 2
    assert mlm_bucket(task, feats, 5, 99)[0].label_names == ["in", "a"]
    # bucket 1..6 is the whole task
    whole, wf = mlm_bucket(task, feats, 1, 6)
    assert torch.equal(wf["test"].labels, feats["test"].labels)


def test_buckets_are_cut_only_from_the_task_of_every_target():
    task, feats = mlm_task()
    bucket, bf = mlm_bucket(task, feats, 2, 4)
    with pytest.raises(ValueError, match="every training target"):
        mlm_bucket(bucket, bf, 1, 2)
    with pytest.raises(ValueError, match="every training target"):
        mlm_bucket(TaskData("pos", ["NN"], task.windows), feats, 1, 1)
    with pytest.raises(ValueError, match="empty or misordered"):
        mlm_bucket(task, feats, 7, 0)
    with pytest.raises(ValueError, match="empty or misordered"):
        mlm_bucket(task, feats, 4, 3)


def test_profile_task_passes_the_profile_s_settings(monkeypatch):
    seen = {}
    monkeypatch.setattr(tasks_module, "build_task", lambda name, tok, sizes, **kw: seen.update(kw, name=name, sizes=sizes))
    p = get_profile("smoke")
    profile_task("swda", None, p)
    assert seen == {
        "name": "swda",
        "sizes": p.probe.sizes["swda"].windows(),
        "profile_name": "smoke",
        "seed": p.seed,
        "window": p.window,
        "mask_prob": p.probe.mask_prob,
        "da_labels": p.probe.da_labels,
        "mlm_vocab": p.probe.mlm_vocab,
    }
    profile_task("mlm", None, p, da_labels="resolved", mlm_vocab=0)
    assert (seen["da_labels"], seen["mlm_vocab"]) == ("resolved", 0)
