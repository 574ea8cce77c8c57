"""The settings classes (prismlib.profiles.schema): a schema without values, and the checks that
refuse settings that cannot work (an LSTM schedule that cannot stop, an unknown optimizer, an
empty MLM bucket, a pretraining size or count that cannot run)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from prismlib.profiles import get_profile
from prismlib.profiles import schema as schema_module

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prismlib" / "profiles"


def test_the_schema_holds_classes_and_no_profile_values():
    tree = ast.parse((PACKAGE / "schema.py").read_text())
    loose = [
        ast.unparse(node).splitlines()[0]
        for node in tree.body
        if not isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef))
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    assert not loose, f"schema.py is the settings classes only; values go in a profile module: {loose}"
    for cls in vars(schema_module).values():
        if dataclasses.is_dataclass(cls) and cls.__module__ == schema_module.__name__:
            nested = [f.name for f in dataclasses.fields(cls) if dataclasses.is_dataclass(f.default)]
            assert not nested, f"{cls.__name__}: a default that is settings ({nested}) is a profile's value"


LSTM = get_profile("smoke").lstm


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"decays": 0}, "decays must be >= 1"),
        ({"decay_tolerance": 0.0}, "decay_tolerance must be > 0"),
        ({"decay_factor": 1.0}, "decay_factor must be > 1"),
        ({"epochs": 4, "min_rounds": 4}, r"cap \(epochs = 4 rounds\) must exceed min_rounds \(4\)"),
        ({"checks_per_pass": 0}, "checks_per_pass must be >= 1"),
        ({"average_last": 1}, "stops by its own rule"),
    ],
)
def test_a_schedule_that_cannot_stop_is_refused_naming_the_setting(change, message):
    with pytest.raises(ValueError, match=message):
        LSTM.updated(**{"optimizer": "anneal", "average_last": 0, "min_rounds": 1, "epochs": 5, **change})


def test_an_unknown_optimizer_is_refused():
    with pytest.raises(ValueError, match="optimizer must be"):
        LSTM.updated(optimizer="sgd")


def test_profiles_refuse_a_bucket_that_is_empty_or_starts_before_rank_one():
    from dataclasses import replace

    s = get_profile("smoke").probe
    assert s.mlm_buckets == ((1, 50), (51, 0)) and get_profile("paper").probe.mlm_buckets == ((1, 0),)
    for bad in ((0, 10),), ((5, 4),), ():
        with pytest.raises(ValueError, match="bucket"):
            replace(s, mlm_buckets=bad)
    assert replace(s, mlm_buckets=((3, 3), (4, 0))).mlm_buckets == ((3, 3), (4, 0))


def test_prism_settings_refuse_training_seeds_that_are_missing_repeated_or_negative():
    S = get_profile("cpu").prism
    for bad in ((), (0, 0), (-1, 0)):
        with pytest.raises(ValueError, match="seeds must be distinct integers >= 0"):
            S.updated(seeds=bad)
    assert get_profile("smoke").prism.seeds == (0, 1) and get_profile("paper").prism.seeds == (0, 1, 2)


def test_a_rate_for_the_pretrained_layers_needs_the_staged_recipe_and_a_positive_value():
    S = get_profile("cpu").prism
    assert S.updated(pretrained_lr=1e-4).pretrained_lr == 1e-4 and S.pretrained_lr is None
    for bad in (0.0, -1e-4):
        with pytest.raises(ValueError, match="pretrained_lr needs the staged recipe and a rate > 0"):
            S.updated(pretrained_lr=bad)
    with pytest.raises(ValueError, match="pretrained_lr needs the staged recipe"):
        get_profile("paper").prism.updated(pretrained_lr=1e-4)


def test_pretrain_settings_refuse_a_size_or_count_that_cannot_run_and_only_cpu_and_its_twin_pretrain():
    from prismlib.profiles import PROFILES, PretrainSettings

    good = {"size": "4x256", "seq_len": 128, "batch_size": 32, "lr": 1e-3, "warmup_steps": 0, "total_steps": 10}
    assert PretrainSettings(**good).threads == 2 and PretrainSettings(**{**good, "size": "2x128h2", "heldout_inputs": None})
    for bad, message in (
        ({"size": "4by256"}, "LAYERSxHIDDEN"),
        ({"total_steps": 0}, "total_steps = 0"),
        ({"warmup_steps": -1}, "warmup_steps = -1"),
        ({"heldout_inputs": 0}, "heldout_inputs = 0"),
        ({"threads": 0, "eval_every": 0}, "threads = 0, eval_every = 0"),
    ):
        with pytest.raises(ValueError, match=message):
            PretrainSettings(**{**good, **bad})
    pretraining = {name: p.pretrain for name, p in PROFILES.items() if p.pretrain is not None}
    assert list(pretraining) == ["cpu", "cpu-long"]  # cpu's, which its twin's installments train
    assert pretraining["cpu"] == pretraining["cpu-long"]
    cont = pretraining["cpu"]  # the continuation at 512 tokens of the second pilot's choice (docs/benchmarks.md)
    assert (cont.size, cont.seq_len, cont.batch_size, cont.total_steps, cont.lr) == ("4x256", 512, 8, 1611, 5e-4)
    assert cont.base is not None and (cont.base.size, cont.base.long_seq_len, cont.base.base) == ("4x256", 512, None)


def test_a_profile_whose_section_4_runs_on_its_pretraining_must_have_one():
    smoke = get_profile("smoke")
    with pytest.raises(ValueError, match="profile smoke: prism.pretrained_encoder runs section 4 on the profile's own pretraining"):
        dataclasses.replace(smoke, prism=dataclasses.replace(smoke.prism, pretrained_encoder=True))
    assert not smoke.prism.pretrained_encoder and not get_profile("paper").prism.pretrained_encoder
    cpu = get_profile("cpu")  # section 4 on the small BERT pretrained here, every encoder layer trained (issue 76)
    assert cpu.prism.pretrained_encoder and cpu.prism.train_layers == 4 == int(cpu.pretrain.size.split("x")[0])
