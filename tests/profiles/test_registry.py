"""The profile registry (prismlib.profiles.registry, issue 43): one module per profile whose
``get_config()`` is the profile :func:`get_profile` gives, and a profile for every module."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from prismlib.profiles import CONFIGS, PROFILES, get_profile

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prismlib" / "profiles"
NOT_PROFILES = {"__init__", "schema", "nested", "registry"}


def _module_of(name: str) -> str:
    return f"prismlib.profiles.{name.replace('-', '_')}"


@pytest.mark.parametrize("name", list(PROFILES))
def test_each_profile_module_gives_the_profile_of_its_name(name, monkeypatch):
    monkeypatch.delenv("PRISMLIB_DEVICE", raising=False)
    module = importlib.import_module(_module_of(name))
    assert CONFIGS[name] is module.get_config
    built = module.get_config()
    assert built == get_profile(name) and built.name == name


def test_every_module_beside_the_schema_is_a_profile_and_every_profile_has_one():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - NOT_PROFILES
    assert modules == {n.replace("-", "_") for n in PROFILES}
    assert list(PROFILES) == list(CONFIGS) == ["smoke", "cpu", "paper", "dryrun", "cpu-long"]
