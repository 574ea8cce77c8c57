"""The profiles package (issue 43): one module per profile whose ``get_config()`` is the
profile :func:`get_profile` gives, a schema without values, the cpu LSTM recipe on one
screen, and every name imported from ``prismlib.profiles`` still there."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import textwrap
from pathlib import Path

import pytest

import prismlib.profiles
from prismlib.profiles import CONFIGS, PROFILES, get_profile
from prismlib.profiles import schema as schema_module

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prismlib" / "profiles"
NOT_PROFILES = {"__init__", "schema", "nested", "registry"}
SCREEN = 60
"""Lines of a screen: the cpu profile's LSTM recipe, its comment included, fits in them."""


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


def _keyword_block(source: str, function: str, keyword: str) -> tuple[int, int]:
    """First and last line of ``keyword=...`` in the call ``function`` returns, with the
    comment lines right above it."""
    lines = source.splitlines()
    func = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function)
    ret = next(n for n in ast.walk(func) if isinstance(n, ast.Return))
    assert isinstance(ret.value, ast.Call)
    kw = next(k for k in ret.value.keywords if k.arg == keyword)
    first = kw.value.lineno
    while lines[first - 2].strip().startswith("#"):
        first -= 1
    return first, kw.value.end_lineno


def test_the_cpu_lstm_recipe_is_written_out_in_its_module_and_fits_on_a_screen():
    source = (PACKAGE / "cpu.py").read_text()
    first, last = _keyword_block(source, "get_config", "lstm")
    block = "\n".join(source.splitlines()[first - 1 : last])
    assert "LSTMRecipe(" in block and "LSTMSettings(" in block, "the cpu recipe's values are written in prismlib/profiles/cpu.py"
    assert last - first + 1 <= SCREEN, f"the cpu LSTM recipe takes {last - first + 1} lines (lines {first}-{last}); a screen is {SCREEN}"


def test_the_measure_of_a_block_counts_its_comment():
    src = textwrap.dedent(
        """\
        def get_config():
            return f(
                a=1,
                # why b
                # is 2
                b=g(
                    2,
                ),
            )
        """
    )
    assert _keyword_block(src, "get_config", "b") == (4, 8)


def test_every_public_name_of_the_modules_is_exported():
    exported = set(prismlib.profiles.__all__)
    for path in sorted(PACKAGE.glob("*.py")):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"prismlib.profiles.{path.stem}")
        for node in ast.parse(path.read_text()).body:
            names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            for name in names:
                if name.startswith("_") or name == "get_config":
                    continue
                assert name in exported, f"profiles/{path.name}: {name} is not in prismlib.profiles.__all__"
                assert getattr(prismlib.profiles, name) is getattr(module, name), name
    assert all(hasattr(prismlib.profiles, name) for name in exported)


def _imported_names() -> dict[str, set[str]]:
    """Name -> files that import it from ``prismlib.profiles`` (library, tests, notebooks, benchmarks)."""
    found: dict[str, set[str]] = {}
    for folder in ("prismlib", "tests", "notebooks", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module == "prismlib.profiles" and not node.level:
                    for alias in node.names:
                        found.setdefault(alias.name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_name_imported_from_the_package_anywhere_resolves():
    imported = _imported_names()
    assert {"get_profile", "PROFILES", "LSTMSettings", "until_converged", "DRY_RUN_SIZES"} <= set(imported)
    missing = {name: sorted(files) for name, files in imported.items() if not hasattr(prismlib.profiles, name)}
    assert not missing, missing


def test_a_grouped_field_reads_through_and_changes_by_its_name_at_any_depth():
    s = get_profile("smoke").lstm
    assert s.decays == s.recipe.decays == s.recipe.schedule.decays == 2 and s.bptt == s.recipe.bptt
    changed = s.updated(decays=3, lr=1.0, seeds=(5,))
    assert (changed.recipe.schedule.decays, changed.recipe.lr, changed.seeds) == (3, 1.0, (5,))
    assert changed.updated(decays=2, lr=s.lr, seeds=s.seeds) == s  # nothing else moved
    whole = s.updated(schedule=dataclasses.replace(s.schedule, min_rounds=1))
    assert whole.min_rounds == 1 and whole.decays == 2
    with pytest.raises(ValueError, match="decays must be >= 1"):  # every level's checks run
        s.updated(decays=0)


def test_a_change_to_no_setting_or_to_a_group_both_ways_is_refused_naming_it():
    s = get_profile("smoke").lstm
    with pytest.raises(TypeError, match="no LSTMSettings setting named decay, lrate"):
        s.updated(decay=3, lrate=1.0)
    with pytest.raises(TypeError, match=r"change schedule whole or some of its settings \(decays\), not both"):
        s.updated(schedule=s.schedule, decays=3)
    with pytest.raises(AttributeError, match="LSTMSettings has no setting 'no_such'"):
        s.no_such  # noqa: B018


def test_flat_gives_every_field_once_and_refuses_a_name_at_two_levels():
    from prismlib.profiles import Nested

    p = get_profile("cpu")
    flat = p.prism.training.flat()
    assert "schedule" not in flat and flat["decays"] == p.prism.decays and flat["steps"] == p.prism.steps
    assert len(flat) == len(dataclasses.fields(p.prism.training)) - 1 + len(dataclasses.fields(p.prism.schedule))

    @dataclasses.dataclass(frozen=True)
    class Clash(Nested):
        decays: int
        schedule: object

    with pytest.raises(TypeError, match="Clash: decays named at two levels"):
        Clash(decays=1, schedule=p.prism.schedule).flat()


@pytest.mark.parametrize("group", ["lstm", "prism", "dyck"])
def test_nested_settings_survive_pickle_and_copy(group):
    import copy
    import pickle

    p = get_profile("cpu")
    s = p.iclr.dyck if group == "dyck" else getattr(p, group)
    for again in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
        assert again == s and again.decays == s.decays
