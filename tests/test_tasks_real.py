"""The probing tasks on the real datasets, at smoke size (skipped when the data is absent)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from conftest import need
from prismlib.encode import load_encoder
from prismlib.profiles import get_profile
from prismlib.tasks import TASKS, build_task
from prismlib.windows import IGNORE

pytestmark = [pytest.mark.data, pytest.mark.usefixtures("real_data_dir")]

FILES = {
    "pos": ("nltk_data/corpora/treebank.zip", "nltk_data/corpora/conll2000.zip"),
    "swda": ("swb1_dialogact_annot.tar.gz", "swda_splits/ws97-train-convs.list"),
    "topic": ("20news-bydate.tar.gz",),
    "mlm": ("wikitext-103-raw/wiki.test.raw",),
}


@pytest.fixture(scope="module")
def tokenizer():
    return load_encoder("minilm", device="cpu").tokenizer


@pytest.mark.parametrize("name", TASKS)
def test_task_windows_labels_and_weights(name, tokenizer):
    need(*FILES[name])
    sizes = get_profile("smoke").probe.sizes[name].windows()
    task = build_task(name, tokenizer, sizes, profile_name="smoke", seed=0)
    again = build_task(name, tokenizer, sizes, profile_name="smoke", seed=0)
    for split, wins in task.windows.items():
        assert 0 < len(wins) <= sizes[split]
        assert [w.input_ids.tolist() for w in wins] == [w.input_ids.tolist() for w in again.windows[split]]
        per_unit = defaultdict(float)
        where = defaultdict(set)
        for i, w in enumerate(wins):
            assert len(w) <= 512 and w.input_ids[0] == tokenizer.cls_token_id and w.input_ids[-1] == tokenizer.sep_token_id
            labelled = w.labels != IGNORE
            assert labelled.any() and (w.labels[labelled] < len(task.label_names)).all()
            for u, wt in zip(w.unit_ids[labelled], w.weights[labelled]):
                per_unit[(w.source, int(u))] += float(wt)
                where[(w.source, int(u))].add(i)
        whole = [v for k, v in per_unit.items() if len(where[k]) == 1]
        assert whole and all(v == pytest.approx(1.0, abs=1e-4) for v in whole)
    if name == "topic":
        assert len(task.label_names) == 20
    if name == "swda":
        assert len(task.label_names) == 42
    if name == "mlm":
        masked = sum((w.labels != IGNORE).sum() for w in task.windows["train"])
        content = sum(len(w) - 2 for w in task.windows["train"])
        assert 0.1 < masked / content < 0.2
