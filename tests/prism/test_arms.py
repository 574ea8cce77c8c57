"""Section 4's arms as jobs (prismlib.prism.arms): the layers a prism follows, what an arm's key hashes."""

from __future__ import annotations

import pytest

from prismlib import jobcache as jobs
from prismlib.prism import arms
from prismlib.profiles import get_profile


def test_arm_layers_and_job_keys():
    S = get_profile("cpu").prism.updated(train_layers=2)
    assert arms.prism_layers("baseline", 6, S) is None and arms.prism_layers("prism", 6, S) == [5]
    assert arms.prism_layers("prism-every", 6, S) == [4, 5]  # staged: the trained layers only
    assert arms.prism_layers("prism-every", 4, get_profile("cpu").prism) == [0, 1, 2, 3]  # cpu's BERT: every layer trained
    assert arms.prism_layers("prism-every", 12, get_profile("paper").prism) == list(range(12))
    with pytest.raises(ValueError, match="unknown arm"):
        arms.prism_layers("bert", 6, S)
    a = arms.ArmJob("prism", "minilm", "cpu", 0, S, "d")
    assert a.key != arms.ArmJob("baseline", "minilm", "cpu", 0, S, "d").key
    assert a.key != arms.ArmJob("prism", "minilm", "cpu", 0, S, "other data").key
    assert a.key != arms.ArmJob("prism", "minilm", "cpu", 0, S.updated(lr=2e-4), "d").key
    assert a.key == arms.ArmJob("prism", "minilm", "cpu", 0, S.updated(bootstrap=7), "d").key
    assert jobs.job_dir(a, None).name == a.key


def test_an_arms_key_hashes_its_whole_recipe_flat_and_nothing_beside_it():
    """Every field of the recipe (its anneal schedule's included) moves an arm's key; the settings
    beside it (probes, Fig. 5, checkpoints, threads) never do: no list of fields to put in."""
    from dataclasses import fields

    from prismlib.prism import ArmJob
    from prismlib.profiles import PrismSettings, get_profile

    S = get_profile("cpu").prism
    base = ArmJob("prism", "minilm", "cpu", 0, S, "d")
    flat = S.training.flat()
    assert base.describe()["settings"] == flat and {"recipe", "decay_factor", "decay_patience"} <= set(flat)
    changed = {"train_text": "wikitext103-train", "recipe": "full", "steps": 800, "round_steps": 40, "attention_dropout": 0.5,
               "train_inputs": 7, "pretrained_lr": 1e-4}  # fmt: skip
    needs = {"recipe": {"attention_dropout": None, "stop_articles": 0}}
    for name, value in flat.items():
        other = changed[name] if name in changed else not value if isinstance(value, bool) else value * 2 + 1
        start = S.updated(**needs.get(name, {}))
        keys = {ArmJob("prism", "minilm", "cpu", 0, s, "d").key for s in (start, start.updated(**{name: other}))}
        assert len(keys) == 2, name
    beside = {f.name: getattr(S, f.name) for f in fields(PrismSettings) if f.name != "training"}
    assert set(beside) == set(
        "checkpoint_every every_layer sizes span eval_inputs eval_stride eval_batch bootstrap seeds threads pretrained_encoder".split()
    )
    # a seed is the job's own field, and the encoder (pretrained_encoder names it) too
    others = {"every_layer": False, "sizes": {}, "span": (0, 1), "threads": 3, "seeds": (4, 5, 6), "pretrained_encoder": False}
    same = S.updated(**{k: others.get(k, v * 2 + 1 if isinstance(v, int) else v) for k, v in beside.items()})
    assert same != S and ArmJob("prism", "minilm", "cpu", 0, same, "d").key == base.key


def test_arm_jobs_train_every_arm_for_every_seed_seed_by_seed_the_first_seeds_keys_unchanged():
    from types import SimpleNamespace

    P = get_profile("cpu")
    data = SimpleNamespace(digest=lambda: "d")
    assert P.prism.seeds == (0, 1, 2) and P.prism.seeds[0] == P.seed
    made = arms.arm_jobs(P, data)  # type: ignore[arg-type]
    assert [(j.arm, j.seed) for j in made] == [(a, s) for s in P.prism.seeds for a in arms.TRAINED]
    assert len({j.key for j in made}) == len(made)
    # the first seed's jobs are those of the profile's seed, whose keys tests/fixtures/job_keys.json pins
    assert [j.key for j in made[:3]] == [arms.ArmJob(a, P.encoder, P.name, P.seed, P.prism, "d").key for a in arms.TRAINED]
    assert [j.seed for j in arms.arm_jobs(P, data, ("prism",), seeds=(7,))] == [7]  # type: ignore[arg-type]
