"""Dependencies point one way, read from the source with ``ast`` (no import).

The modules directly in ``prismlib/`` and the package ``profiles`` are the core (settings,
statistics, claims, paths, artifacts, the job cache, executors and process pool, timing,
devices, progress bars, plots) and import no other package of the library; ``data`` and
``spectral`` import only the core; ``probing`` and ``lstm`` import those; ``lstm.iclr`` (the
ICLR 2021 version of work B) and ``lstm.claims`` (work B's grid and claims) may import
``lstm``, never the reverse, nor each other; ``prism`` may import ``probing``, never the
reverse; ``runs`` and ``__main__`` sit on top and nothing below imports them. Imports inside
functions and under ``TYPE_CHECKING`` count, and no circle may exist between any two modules.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "prismlib"

LAYERS: dict[str, set[str]] = {
    "core": {"core"},
    "data": {"core", "data"},
    "spectral": {"core", "spectral"},
    "probing": {"core", "data", "spectral", "probing"},
    "lstm": {"core", "data", "spectral", "lstm"},
    "lstm.iclr": {"core", "data", "spectral", "lstm", "lstm.iclr"},
    "lstm.claims": {"core", "data", "spectral", "lstm", "lstm.claims"},
    "prism": {"core", "data", "spectral", "probing", "prism"},
    "pretrain": {"core", "data", "spectral", "probing", "lstm", "prism", "pretrain"},
    "top": {"core", "data", "spectral", "probing", "lstm", "lstm.iclr", "lstm.claims", "prism", "pretrain", "top"},
}
"""Layer -> the layers its modules may import."""
PACKAGES = {"data", "spectral", "probing", "lstm", "prism", "pretrain", "runs"}
SUBPACKAGES = {"lstm.iclr", "lstm.claims"}
"""Sub-packages that are a layer of their own (above their package)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """``core``, a package's or a sub-package's name, or ``top`` (``runs`` and ``__main__``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "core"  # prismlib/__init__.py: a docstring and the version
    if parts[1] in ("runs", "__main__"):
        return "top"
    if ".".join(parts[1:3]) in SUBPACKAGES:
        return ".".join(parts[1:3])
    return parts[1] if parts[1] in PACKAGES else "core"


def _exported_by(package: str) -> dict[str, str]:
    """Name -> defining submodule of a package's lazy ``_EXPORTS`` table, read from its source."""
    init = LIB / package.split(".", 1)[1].replace(".", "/") / "__init__.py"
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_EXPORTS" and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):
                for name in ast.literal_eval(value):
                    found[name] = f"{package}.{ast.literal_eval(key)}"
    return found


def imports_of(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The prismlib modules that ``module``'s code imports, at any depth: ``from pkg import
    name`` resolves to the submodule ``pkg.name`` or to the submodule that defines ``name``."""
    found: set[str] = set()
    modules = {module_name(p) for p in LIB.rglob("*.py")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("prismlib")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("prismlib"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    found.add(sub)
                elif target in modules and target != "prismlib" and (LIB / target.split(".", 1)[-1].replace(".", "/")).is_dir():
                    found.add(_exported_by(target).get(alias.name, target))
                else:
                    found.add(target)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(ast.parse(p.read_text()), module_name(p), p.stem == "__init__") for p in sorted(LIB.rglob("*.py"))}


def test_the_resolver_sees_every_import_form():
    src = (
        "from prismlib.lstm import trained\nfrom prismlib.lstm import model\nimport prismlib.paths\n"
        "from . import bigram\nfrom .job import RunSpec\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from prismlib.runs import report\n"
        "def f():\n    from prismlib.spectral import band_pass\n"
    )
    assert imports_of(ast.parse(src), "prismlib.lstm.ablation", False) == {
        "prismlib.lstm.trained_runs",
        "prismlib.lstm.job",
        "prismlib.lstm.model",
        "prismlib.paths",
        "prismlib.lstm.bigram",
        "prismlib.runs.report",
        "prismlib.spectral.filters",
    }
    assert layer("prismlib.runs.report") == layer("prismlib.__main__") == "top"
    assert layer("prismlib.jobcache") == layer("prismlib") == "core" and layer("prismlib.prism.arms") == "prism"
    assert layer("prismlib.lstm.iclr") == layer("prismlib.lstm.iclr.dyck") == "lstm.iclr" and layer("prismlib.lstm.job") == "lstm"
    assert imports_of(ast.parse("from prismlib.lstm.iclr import trained_dyck\n"), "prismlib.runs.x", False) == {
        "prismlib.lstm.iclr.dyck_training"
    }
    assert layer("prismlib.lstm.claims") == layer("prismlib.lstm.claims.grid") == "lstm.claims"
    assert imports_of(ast.parse("from prismlib.lstm import EXPERIMENTS, RunSpec\n"), "prismlib.runs.x", False) == {
        "prismlib.lstm.claims.grid",
        "prismlib.lstm.job",
    }


def test_every_import_points_down():
    offenders = [
        f"{m} ({layer(m)}) imports {d} ({layer(d)})"
        for m, deps in import_graph().items()
        for d in sorted(deps)
        if layer(d) not in LAYERS[layer(m)]
    ]
    assert not offenders, "\n".join(offenders)


def test_no_import_cycle_anywhere_in_the_library():
    graph = import_graph()
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == "done":
            return
        if state.get(node) == "open":
            raise AssertionError(f"import cycle: {' -> '.join([*path[path.index(node) :], node])}")
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            visit(dep, [*path, node])
        state[node] = "done"

    for node in sorted(graph):
        visit(node, [])


@pytest.mark.parametrize("folder", ["notebooks", "benchmarks"])
def test_notebooks_and_benchmarks_do_not_reach_into_the_command_line(folder):
    """The notebooks and the benchmark scripts use the library, not its commands (``runs``)."""
    offenders = [
        f"{p.name}: {m.group(0)}"
        for p in sorted((ROOT / folder).glob("*.py"))
        for m in re.finditer(r"^\s*(from|import) prismlib\.runs\b.*$", p.read_text(), re.M)
    ]
    assert not offenders, offenders
