"""What the docs, the notebooks' prose and the benchmark scripts name exists.

A module moved or removed leaves its old name behind in prose nothing runs (issue 43 found
``prismlib.lstm.schedule`` in notebook 05, ``prismlib/profiles.py`` in notebooks 02, 08 and
10, and a benchmark importing ``claim_margin`` from where it no longer is). Read from the
sources with ``ast`` and the file system, nothing imported:

* every ``prismlib.x.y`` in ``docs/*.md``, the READMEs, the Makefile, ``benchmarks/`` and
  the notebooks' markdown and comments is a module, or a module and a name it defines (a
  package's lazy ``_EXPORTS`` count), as is every ``prismlib`` target of a Sphinx role
  (``:func:`prismlib...```) in the library's docstrings;
* every repository path there (``prismlib/...``, ``benchmarks/...``, ``tests/...``,
  ``notebooks/...``, ``docs/...``, ``jupyter/...``) exists, but for patterns
  (``notebooks/NN_*.py``, ``tests/<package>/``); what a run writes (``results/``,
  ``figures/``, ``.cache/``, ``data/``) is not checked;
* every ``from prismlib... import name`` of a benchmark script or a notebook resolves.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "prismlib"

DOTTED = re.compile(r"\bprismlib(?:\.[A-Za-z_]\w*)+")
ROLE = re.compile(r":(?:mod|func|class|data|attr|meth|exc):`~?(prismlib(?:\.\w+)+)`")
PATH = re.compile(r"(?<![\w./-])((?:prismlib|benchmarks|tests|notebooks|docs|jupyter)/[\w./*<>{}$-]*)")
PATTERN = re.compile(r"[<>*{}$]|\bNN")
"""A path with a placeholder: a pattern, not a file."""


def _prose(path: Path) -> str:
    """What of ``path`` is prose: a notebook's markdown and comments (its code runs under
    nbval), the whole of any other file."""
    text = path.read_text()
    if path.parent.name == "notebooks":
        return "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    return text


TEXTS = sorted(
    [
        *ROOT.glob("docs/*.md"),
        ROOT / "README.md",
        ROOT / "data" / "README.md",
        ROOT / "Makefile",
        *ROOT.glob("benchmarks/*.py"),
        *ROOT.glob("benchmarks/*.sh"),
        *ROOT.glob("notebooks/[0-9][0-9]_*.py"),
    ]
)
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("notebooks/[0-9][0-9]_*.py")])


def _module_file(parts: list[str]) -> Path | None:
    """The source of module ``parts`` (``["prismlib", "runs", "plan"]``), ``None`` when there is none."""
    base = ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _defined(source: Path) -> frozenset[str]:
    """The names a module's top level defines or imports, and a package's lazy ``_EXPORTS``
    (its names and its modules' attributes, :func:`prismlib.lazy_exports`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_EXPORTS" and isinstance(node.value, ast.Dict):
                names |= {name for value in node.value.values for name in ast.literal_eval(value)}
                modules = [ast.literal_eval(key) for key in node.value.keys]  # "claims.grid": claims and grid are attributes
                names |= {part for module in modules for part in (module.partition(".")[0], module.rpartition(".")[2])}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def missing(dotted: str) -> bool:
    """Whether ``prismlib.a.b.c`` names nothing: its longest module prefix must exist and
    define the name after it (further parts, a class's attributes, are not checked)."""
    parts = dotted.split(".")
    n = len(parts)
    while n > 1 and _module_file(parts[:n]) is None:
        n -= 1
    source = _module_file(parts[:n])
    if source is None:
        return True
    return n < len(parts) and parts[n] not in _defined(source)


def missing_path(path: str) -> bool:
    """Whether a repository path (not a pattern) is absent from the checkout."""
    path = path.rstrip(".,;:)")
    return not PATTERN.search(path) and not (ROOT / path).exists()


def stale_imports(source: str) -> list[str]:
    """The ``prismlib`` names ``from prismlib... import name`` statements of ``source`` cannot find."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "prismlib":
            module = node.module or ""
            for alias in node.names:
                dotted = f"{module}.{alias.name}"
                if missing(module) or missing(dotted):
                    out.append(dotted)
    return out


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_modules_and_paths_a_text_names_exist(path):
    text = _prose(path)
    modules = sorted({m.group(0) for m in DOTTED.finditer(text) if missing(m.group(0))})
    paths = sorted({m.group(1) for m in PATH.finditer(text) if missing_path(m.group(1))})
    assert not modules and not paths, f"{path.relative_to(ROOT)} names what does not exist: {modules + paths}"


def test_the_library_docstrings_refer_to_what_exists():
    offenders = [
        f"{p.relative_to(ROOT)}: {m.group(1)}"
        for p in sorted(LIB.rglob("*.py"))
        for m in ROLE.finditer(p.read_text())
        if missing(m.group(1))
    ]
    assert not offenders, offenders


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_benchmarks_and_notebooks_import_what_exists(path):
    assert not stale_imports(path.read_text()), f"{path.relative_to(ROOT)}: {stale_imports(path.read_text())}"


def test_the_checks_catch_the_stale_references_they_were_written_for():
    assert missing("prismlib.lstm.schedule") and missing("prismlib.prism.LOSS_IGNORE") and missing("prismlib.low_pass")
    assert not missing("prismlib.anneal") and not missing("prismlib.probing.masking.LOSS_IGNORE")
    assert not missing("prismlib.lstm.train_lm") and not missing("prismlib.runs.costs.ASSUMED_TFLOPS.items")
    assert not missing("prismlib.lstm.claims.grid.experiment") and not missing("prismlib.lstm.grid")  # (lazy_exports' attribute)
    assert missing_path("prismlib/profiles.py") and not missing_path("prismlib/profiles/") and not missing_path("notebooks/NN_name.py")
    assert stale_imports("from prismlib.lstm.convergence import claim_margin") == ["prismlib.lstm.convergence.claim_margin"]
    assert stale_imports("from prismlib.claims import claim_margin\nfrom prismlib.lstm import LSTMLM") == []
