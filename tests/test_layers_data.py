"""The import graph of prismlib.data, read from the source with ``ast`` (no import): its layers,
as ``test_layers.py`` checks the library's.

The catalogue (each dataset's files, sources and checksums) imports the dataset modules'
checks; the dataset modules import only the data directory; the registry (fetch, verify)
imports the catalogue. No module may import the registry except the package's
``__init__``, none but the registry and ``__init__`` the catalogue, and no circle, lazy
or not, may exist between the package's modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import prismlib.data

PACKAGE = "prismlib.data"
DATA_DIR = Path(prismlib.data.__file__).parent
MODULES = sorted(p.stem for p in DATA_DIR.glob("*.py") if p.stem != "__init__")


def _imported(tree: ast.AST, module: str) -> set[str]:
    """Sibling modules of ``prismlib.data`` that a module's code imports, at any depth
    (inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 1 or (node.level == 0 and not (node.module or "").startswith(PACKAGE)):
                continue
            base = node.module or ""
            if node.level == 0:
                base = base.removeprefix(PACKAGE).lstrip(".")
            # `from . import x` and `from prismlib.data import x` import the module x
            names = [base] if base else [a.name for a in node.names]
            names = [f"{PACKAGE}.{n}" for n in names]
        else:
            continue
        for name in names:
            if name.startswith(PACKAGE + "."):
                found.add(name.removeprefix(PACKAGE + ".").split(".")[0])
    found.discard(module)
    return found & set(MODULES)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``__init__`` included as a node)."""
    return {stem: _imported(ast.parse((DATA_DIR / f"{stem}.py").read_text()), stem) for stem in [*MODULES, "__init__"]}


def test_the_parser_sees_every_import_form() -> None:
    src = (
        "from .registry import x\nfrom . import swda, ptb\nimport prismlib.data.pos\n"
        "from prismlib.data.wikitext import y\nfrom prismlib.data import newsgroups\n"
        "def f():\n    from .datadir import locate\n"
    )
    assert _imported(ast.parse(src), "other") == {
        "registry",
        "swda",
        "ptb",
        "pos",
        "wikitext",
        "newsgroups",
        "datadir",
    }


def test_no_module_imports_the_registry() -> None:
    graph = import_graph()
    importers = sorted(m for m, deps in graph.items() if "registry" in deps)
    assert importers == ["__init__"], (
        f"{importers} import prismlib.data.registry: dataset modules import "
        "prismlib.data.datadir (locate, errors); the registry imports them"
    )


def test_only_the_registry_imports_the_catalogue() -> None:
    graph = import_graph()
    importers = sorted(m for m, deps in graph.items() if "catalogue" in deps)
    assert importers == ["__init__", "registry"], (
        f"{importers} import prismlib.data.catalogue: dataset modules import "
        "prismlib.data.datadir (locate, errors); the catalogue imports their checks"
    )


def test_the_catalogue_imports_the_dataset_checks() -> None:
    graph = import_graph()
    assert {"newsgroups", "swda", "wikitext"} <= graph["catalogue"]
    assert {"catalogue", "datadir"} <= graph["registry"]


def test_no_import_cycle() -> None:
    graph = {m: deps - {"__init__"} for m, deps in import_graph().items() if m != "__init__"}
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", f"import cycle: {' -> '.join([*path, node])}"
        state[node] = "open"
        for dep in sorted(graph[node]):
            visit(dep, [*path, node])
        state[node] = "done"

    for module in sorted(graph):
        visit(module, [])
