"""The probing tasks on the real datasets, at smoke size (skipped when the data is absent)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
import torch
from real_data import need
from transformers import BertConfig, BertModel

from prismlib.probing import IGNORE, TASKS, Encoder, build_task, encode_windows, load_encoder
from prismlib.profiles import get_profile

pytestmark = [pytest.mark.data, pytest.mark.slow, pytest.mark.usefixtures("real_data_dir")]

FILES = {
    "pos": ("nltk_data/corpora/treebank.zip", "nltk_data/corpora/conll2000.zip"),
    "swda": ("swb1_dialogact_annot.tar.gz", "swda_splits/ws97-train-convs.list"),
    "topic": ("20news-bydate.tar.gz",),
    "mlm": ("wikitext-103-raw/wiki.test.raw", "wikitext-2/wiki.valid.tokens"),
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
        assert len(task.label_names) == 43 and task.label_names[-1] == "+"  # the default: the paper's 43 classes
    if name == "mlm":
        masked = sum((w.labels != IGNORE).sum() for w in task.windows["train"])
        content = sum(len(w) - 2 for w in task.windows["train"])
        assert 0.1 < masked / content < 0.2


@pytest.fixture(scope="module")
def random_encoder(tokenizer) -> Encoder:
    """A tiny randomly initialised BERT over MiniLM's vocabulary: fast, and the weights of
    the rows it yields do not depend on what the encoder computes."""
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=512,
    )
    return Encoder("random", tokenizer, BertModel(cfg).eval(), torch.device("cpu"))


@pytest.mark.parametrize("name", TASKS)
def test_weights_of_every_unit_sum_to_one_over_the_rows_fed(name, tokenizer, random_encoder):
    """App. C after sampling: each gold unit's weights sum to 1 over the positions the probe sees."""
    need(*FILES[name])
    size = get_profile("smoke").probe.sizes[name]
    task = build_task(name, tokenizer, size.windows(), profile_name="smoke", seed=0, mlm_vocab=50)
    positions = size.positions if size.positions > 0 else 16  # force a sample even for MLM
    for split, wins in task.windows.items():
        f = encode_windows(random_encoder, wins, {-1: ("ORIG",)}, positions=positions, seed=0)[-1]
        assert len(f) == sum(min(positions, int((w.labels != IGNORE).sum())) for w in wins)
        units, inverse = np.unique(f.unit.numpy(), return_inverse=True)
        totals = np.bincount(inverse, weights=f.weights.double().numpy())
        assert np.allclose(totals, 1.0, atol=1e-5), f"{name}/{split}: unit weight sums {totals.min()}..{totals.max()}"
        assert (f.unit >= 0).all() and (f.labels >= 0).all()
        # the rows are where Features say they are
        for r in range(0, len(f), max(1, len(f) // 7)):
            w = wins[int(f.window[r])]
            assert w.labels[int(f.position[r])] == int(f.labels[r]) and w.unit_ids[int(f.position[r])] == int(f.unit[r])


def test_dialog_act_label_sets(tokenizer):
    need(*FILES["swda"])
    sizes = get_profile("smoke").probe.sizes["swda"].windows()
    resolved = build_task("swda", tokenizer, sizes, profile_name="smoke", seed=0, da_labels="resolved")
    kept = build_task("swda", tokenizer, sizes, profile_name="smoke", seed=0, da_labels="continuation")
    assert len(resolved.label_names) == 42 and len(kept.label_names) == 43 and kept.label_names[-1] == "+"
    plus = kept.label_names.index("+")
    n_plus = sum(int((w.labels == plus).sum()) for w in kept.windows["train"])
    assert n_plus > 0  # continuations exist and keep their own tag
    for a, b in zip(resolved.windows["train"], kept.windows["train"]):
        assert np.array_equal(a.input_ids, b.input_ids) and np.array_equal(a.unit_ids, b.unit_ids)
        same = b.labels != plus
        assert np.array_equal(a.labels[same], b.labels[same])  # only the '+' utterances differ
    with pytest.raises(ValueError, match="da_labels must be one of"):
        build_task("swda", tokenizer, sizes, profile_name="smoke", seed=0, da_labels="43")


def test_mlm_target_vocabulary(tokenizer):
    need(*FILES["mlm"])
    sizes = get_profile("smoke").probe.sizes["mlm"].windows()
    task = build_task("mlm", tokenizer, sizes, profile_name="smoke", seed=0, mlm_vocab=20)
    assert len(task.label_names) == 20 and task.label_names[0] == "the"
    assert "[UNK]" not in task.label_names
    for wins in task.windows.values():
        for w in wins:
            labelled = w.labels != IGNORE
            assert (w.weights[~labelled] == 0).all() and (w.unit_ids[~labelled] == -1).all()
    assert all("masked wordpieces" in s for s in task.sources.values())


def test_the_first_frequency_bucket_is_the_task_of_that_vocabulary(tokenizer, random_encoder):
    """Ranks 1..20 cut from the task of every target are exactly the task built with
    mlm_vocab=20: the same masks, targets, labels and rows (notebook 09 builds the latter)."""
    from prismlib.probing import mlm_bucket

    need(*FILES["mlm"])
    sizes = get_profile("smoke").probe.sizes["mlm"].windows()
    every = build_task("mlm", tokenizer, sizes, profile_name="smoke", seed=0, mlm_vocab=0)
    twenty = build_task("mlm", tokenizer, sizes, profile_name="smoke", seed=0, mlm_vocab=20)
    feats = {s: encode_windows(random_encoder, w, {-1: ("ORIG",)}, positions=0, seed=0)[-1] for s, w in every.windows.items()}
    bucket, bf = mlm_bucket(every, feats, 1, 20)
    assert bucket.label_names == twenty.label_names and len(every.label_names) > 20
    for split, wins in twenty.windows.items():
        assert every.masked[split] == twenty.masked[split] > 0
        for a, b in zip(bucket.windows[split], wins):
            assert np.array_equal(a.input_ids, b.input_ids) and np.array_equal(a.labels, b.labels)
        direct = encode_windows(random_encoder, wins, {-1: ("ORIG",)}, positions=0, seed=0)[-1]
        assert torch.equal(bf[split].labels, direct.labels) and torch.equal(bf[split].x["ORIG"], direct.x["ORIG"])
        assert torch.equal(bf[split].weights, direct.weights)


def test_one_dialog_act_label_set_everywhere():
    """The library's default is every profile's, and every notebook that builds a task passes
    the profile's setting (notebook 03 once built the 42-class set while 02 built 43)."""
    import ast
    import inspect

    from prismlib.paths import project_root
    from prismlib.profiles import PROFILES

    default = inspect.signature(build_task).parameters["da_labels"].default
    assert {p.probe.da_labels for p in PROFILES.values()} == {default} == {"continuation"}
    calls = 0
    for path in sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "build_task":
                calls += 1
                passed = {k.arg: ast.unparse(k.value) for k in node.keywords}
                spread = None in passed and '"da_labels": S.da_labels' in path.read_text()  # build_task(..., **kwargs)
                ok = passed.get("da_labels", "").endswith(".da_labels") or spread
                assert ok, f"{path.name}: build_task without the profile's da_labels"
    assert calls >= 2
