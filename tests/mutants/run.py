"""Mutation testing of the verdict layer (``make mutants``; issue 23).

Every verdict passes through a few small modules (:data:`MODULES`). This script changes
one of them in one small way at a time (a *mutant*: a flipped or off-by-one comparison,
``+`` for ``-``, ``low`` for ``high``, ``min`` for ``max``, ``and`` for ``or``, a number
moved, a keyword argument dropped, a ``raise`` dropped, an ``abs`` or a sign dropped) and
runs that module's tests against it. A mutant the tests do not notice *survives*: some
change of a verdict or of a reported number that no test guards. Survivors that change
nothing observable are listed, each with its reason, in ``tests/mutants/equivalent.txt``.

Hand-written rather than mutmut or cosmic-ray (no extra dependency to pin): on this
machine importing torch in a fresh process costs seconds to minutes, and a tool that starts
the test command once per mutant pays that a thousand times. Here a module maps to its own
test files (:data:`MODULES`), and a mutant costs only the tests that can see it:

* the parent process imports torch, numpy, scipy, pandas, pytest and hypothesis once, and a
  fork of it collects the module's tests; every mutant runs in a fork of that one;
* a mutant inside a function is compiled from the AST and swapped in as that function's
  code object (its defaults too), so every reference to the function, however imported,
  runs the mutant; a mutant of module- or class-level code (a constant, a dataclass field)
  is served to a fresh pytest run by an import hook. No file is written;
* a first, traced run of the tests records which test executes which line of the module;
  a mutant runs only the tests that execute its statement (its function, for a default;
  all of them, for module- and class-level code), cheapest first, stopping at the first
  failure;
* hypothesis runs derandomised and without its example database, so a score is
  reproducible; a mutant that loops is stopped by a CPU-time limit (a *timeout*, counted
  as killed).

Usage::

    python tests/mutants/run.py                 # every module
    python tests/mutants/run.py stats claims    # some of them
    python tests/mutants/run.py --list stats    # the mutants only, no test run
    python tests/mutants/run.py --survivors stats   # re-test only last run's survivors
    python tests/mutants/run.py --verbose stats     # a line per mutant, not only per survivor

Output: a table per module (mutants, killed, timeout, survived, equivalent, score) and
every survivor with its place and change; the results are kept under
``.cache/mutants/`` for ``--survivors``. Exit status 1 when a non-equivalent mutant
survives in the statistics or the claims, when another module's tests kill less than 90% of
its non-equivalent mutants (:data:`GOALS`), or when an equivalent listed no longer exists
(the list must stay reviewed).
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib.abc
import importlib.util
import json
import os
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT = Path(__file__).with_name("equivalent.txt")
CACHE = ROOT / ".cache" / "mutants"

_TRAINING = ("tests/lstm/claims/test_verdicts_claim_gates.py::test_claim_gates_and_the_learning_curve_table",)
"""Left out of the convergence and verdicts mutants: it trains two models (a minute here) to read
their gates, which the synthetic runs of the same file test exactly."""

MODULES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "stats": ("prismlib.stats", ("tests/core/test_stats.py", "tests/core/test_claims_rules.py"), ()),
    "claims": ("prismlib.claims", ("tests/core/test_claims.py", "tests/core/test_claims_rules.py"), ()),
    "bigram": ("prismlib.lstm.bigram", ("tests/lstm/test_bigram.py",), ()),
    "timescales": ("prismlib.lstm.timescales", ("tests/lstm/test_timescales.py",), ()),
    "memory": ("prismlib.lstm.ablation", ("tests/lstm/test_ablation.py",), ()),
    "convergence": (
        "prismlib.lstm.convergence",
        (
            "tests/lstm/test_convergence.py",
            "tests/lstm/claims/test_verdicts.py",
            "tests/lstm/claims/test_verdicts_claim_gates.py",
            "tests/lstm/claims/test_summaries.py",
        ),
        _TRAINING,
    ),
    "verdicts": (
        "prismlib.lstm.claims.verdicts",
        (
            "tests/lstm/claims/test_verdicts.py",
            "tests/lstm/claims/test_verdicts_claim_gates.py",
            "tests/lstm/test_convergence.py",
            "tests/lstm/claims/test_doubling.py",
        ),
        _TRAINING,
    ),
    "doubling": ("prismlib.lstm.claims.doubling", ("tests/lstm/claims/test_doubling.py",), ()),
    "schedule": ("prismlib.anneal", ("tests/core/test_anneal.py", "tests/profiles/test_schema.py", "tests/lstm/test_job_keys.py"), ()),
    "artifacts": ("prismlib.artifacts", ("tests/core/test_artifacts.py",), ()),
}
"""Short name -> (module, the test files that guard it, tests left out of the mutation run).

The files are the module's own (``tests/<package>/test_<module>.py`` and its seams
``test_<module>_*.py``, as ``docs/testing.md`` lays them out) and those whose tests execute
its code through another module: the verdicts' tests run the convergence gates, the tests of
the settings and of the job keys run the anneal schedule's checks, the learning-curve table
builds learning curves. A test that moves to another file moves here too
(``tests/test_layout.py`` checks that every file and test named here exists). Left out: the
one test that trains models for a minute; the fast tests of the same files guard the code."""

SKIP_FUNCTIONS: dict[str, set[str]] = {}
"""Functions left unmutated, with the reason beside them."""

GOALS: dict[str, float] = {"stats": 1.0, "claims": 1.0}
"""Smallest share of non-equivalent mutants each module's tests must kill (issue 23): all of
them in the statistics and the claims, :data:`GOAL` elsewhere. A run below a goal exits 1."""
GOAL = 0.9

CPU_LIMIT_FACTOR, CPU_LIMIT_MIN = 5.0, 60.0
"""A mutant's run may take this many times the CPU seconds of the unmutated run (at least the minimum)."""

CMP_SWAPS = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
BIN_SWAPS = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Div,),
    ast.Div: (ast.Mult,),
    ast.FloorDiv: (ast.Div,),
    ast.Pow: (ast.Mult,),
    ast.Mod: (ast.FloorDiv,),
    ast.BitOr: (ast.BitAnd,),
    ast.BitAnd: (ast.BitOr,),
}
KEEP_KEYWORDS = {"desc", "leave", "mininterval", "repr", "device", "dtype"}
"""Keyword arguments never dropped: progress bars, reprs, devices and dtypes (the project's
arrays are float64 or int64 either way; torch's defaults are float32)."""
COSMETIC_KEYWORDS = {"desc", "leave", "mininterval"}
"""Keyword arguments whose values are not mutated either: how a progress bar looks."""
NAME_SWAPS = {
    "low": "high",
    "high": "low",
    "min": "max",
    "max": "min",
    "any": "all",
    "all": "any",
    "argmin": "argmax",
    "argmax": "argmin",
    "nanmin": "nanmax",
    "nanmax": "nanmin",
}


@dataclass
class Mutant:
    index: int
    line: int
    function: str
    operator: str
    before: str
    after: str
    scope: str = "lines"  # "lines": tests that execute ``lines``; "all": every test of the module
    lines: tuple[int, ...] = ()
    target: str | None = None  # qualified name of the top-level function or method whose code is swapped
    in_defaults: bool = False  # the mutation is in that function's defaults
    key: str = ""
    status: str = ""
    tests: int = 0

    def describe(self) -> str:
        return f"`{self.before}` -> `{self.after}`"


def _short(node: ast.AST, limit: int = 160) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Sites(ast.NodeTransformer):
    """Walks a module in a fixed order; with ``target`` the mutation of that index is applied.

    Without ``target`` it only lists the mutants (``self.found``)."""

    def __init__(self, skip: set[str], target: int | None = None) -> None:
        self.skip, self.target = skip, target
        self.found: list[Mutant] = []
        self.count = 0
        self.stack: list[str] = []  # enclosing def / class names
        self.kinds: list[str] = []  # "def" or "class" for each of them
        self.stmt: ast.stmt | None = None  # innermost statement being visited
        self.scope = "all"  # "all", "lines" (the statement's) or "body" (the function's, for defaults)
        self.body_lines: tuple[int, ...] = ()
        self.default_arg = ""  # the argument whose default is being visited

    # -- bookkeeping -------------------------------------------------------------------------
    def _apply(self, node: ast.AST, variants: list[tuple[str, ast.AST]]) -> ast.AST:
        """Register the mutations of ``node``; return the one selected by ``target`` (else ``node``)."""
        chosen = node
        for operator, mutated, *label in variants:
            index, self.count = self.count, self.count + 1
            if self.target is None:
                if self.scope == "lines" and self.stmt is not None:
                    scope, lines = "lines", tuple(range(self.stmt.lineno, (self.stmt.end_lineno or self.stmt.lineno) + 1))
                elif self.scope == "body":
                    scope, lines = "lines", self.body_lines
                else:
                    scope, lines = "all", ()
                target, in_defaults = None, False
                if "def" in self.kinds:
                    first = self.kinds.index("def")
                    target = ".".join(self.stack[: first + 1])
                    in_defaults = self.scope == "body" and self.kinds.count("def") == 1
                name = f"{self.default_arg}=" if self.scope == "body" else ""  # a default names its argument
                before, after = label[0] if label else (_short(node), _short(mutated))
                self.found.append(
                    Mutant(
                        index,
                        getattr(node, "lineno", 0),
                        ".".join(self.stack) or "<module>",
                        operator,
                        name + before,
                        name + after,
                        scope,
                        lines,
                        target,
                        in_defaults,
                    )
                )
            elif index == self.target:
                chosen = mutated
        return chosen

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.stmt):
            outer_stmt, outer_scope = self.stmt, self.scope
            self.stmt = node
            if not self.kinds or self.kinds[-1] == "class":
                self.scope = "all"  # module- and class-level code acts at import, on every test
            try:
                return super().visit(node)
            finally:
                self.stmt, self.scope = outer_stmt, outer_scope
        return super().visit(node)

    # -- what is never mutated ---------------------------------------------------------------
    def visit_Import(self, node):  # noqa: N802
        return node

    visit_ImportFrom = visit_Import  # noqa: N815

    def visit_Expr(self, node):  # noqa: N802
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # a docstring
        return self.generic_visit(node)

    def visit_If(self, node):  # noqa: N802
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return node
        return self.generic_visit(node)

    def visit_AnnAssign(self, node):  # noqa: N802
        if node.value is not None:
            node.value = self.visit(node.value)
        return node  # the annotation stays

    def _visit_def(self, node, kind: str):
        if node.name in self.skip:
            return node
        self.stack.append(node.name)
        self.kinds.append(kind)
        outer_lines, outer_scope = self.body_lines, self.scope
        try:
            if kind == "def":
                # a default is evaluated at import but read only by the tests that call the function
                self.body_lines = tuple(range(node.lineno, (node.end_lineno or node.lineno) + 1))
                self.scope = "body"
                positional = [*node.args.posonlyargs, *node.args.args][
                    len(node.args.posonlyargs) + len(node.args.args) - len(node.args.defaults) :
                ]
                for i, (arg, d) in enumerate(zip(positional, node.args.defaults)):
                    self.default_arg = arg.arg
                    node.args.defaults[i] = self.visit(d)
                for i, (arg, d) in enumerate(zip(node.args.kwonlyargs, node.args.kw_defaults)):
                    self.default_arg = arg.arg
                    node.args.kw_defaults[i] = d if d is None else self.visit(d)
                self.scope, self.default_arg = "lines", ""
            node.body = [self.visit(stmt) for stmt in node.body]
            return node  # decorators, annotations and bases stay
        finally:
            self.stack.pop()
            self.kinds.pop()
            self.body_lines, self.scope = outer_lines, outer_scope

    def visit_FunctionDef(self, node):  # noqa: N802
        return self._visit_def(node, "def")

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node):  # noqa: N802
        return self._visit_def(node, "class")

    def visit_JoinedStr(self, node):  # noqa: N802
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                value.value = self.visit(value.value)  # the format spec (a string) stays
        return node

    # -- the mutations -----------------------------------------------------------------------
    def visit_Raise(self, node):  # noqa: N802
        return self._apply(node, [("drop raise", ast.copy_location(ast.Pass(), node))])

    def visit_Compare(self, node):  # noqa: N802
        self.generic_visit(node)
        variants = []
        for i, op in enumerate(node.ops):
            for new in CMP_SWAPS.get(type(op), ()):
                mutated = copy.copy(node)
                mutated.ops = [*node.ops[:i], new(), *node.ops[i + 1 :]]
                variants.append(("compare", mutated))
        return self._apply(node, variants)

    def visit_BinOp(self, node):  # noqa: N802
        self.generic_visit(node)
        variants = [
            ("arithmetic", ast.copy_location(ast.BinOp(node.left, new(), node.right), node)) for new in BIN_SWAPS.get(type(node.op), ())
        ]
        if isinstance(node.op, ast.Mult):
            variants += [("drop factor", node.right), ("drop factor", node.left)]
        elif isinstance(node.op, ast.Div):
            variants.append(("drop divisor", node.left))
        return self._apply(node, variants)

    def visit_AugAssign(self, node):  # noqa: N802
        self.generic_visit(node)
        variants = [
            ("arithmetic", ast.copy_location(ast.AugAssign(node.target, new(), node.value), node))
            for new in BIN_SWAPS.get(type(node.op), ())
        ]
        return self._apply(node, variants)

    def visit_UnaryOp(self, node):  # noqa: N802
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = node.operand.value  # a negative literal is a number: move it
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return self._apply(node, [("number", ast.copy_location(ast.Constant(_moved(-value)), node))])
            return node
        self.generic_visit(node)
        if isinstance(node.op, ast.USub):
            return self._apply(node, [("drop sign", node.operand)])
        if isinstance(node.op, ast.Not):
            return self._apply(node, [("drop not", node.operand)])
        return node

    def visit_BoolOp(self, node):  # noqa: N802
        self.generic_visit(node)
        new = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return self._apply(node, [("boolean", ast.copy_location(ast.BoolOp(new, node.values), node))])

    def visit_Constant(self, node):  # noqa: N802
        v = node.value
        if isinstance(v, bool):
            return self._apply(node, [("boolean", ast.copy_location(ast.Constant(not v), node))])
        if isinstance(v, (int, float)):
            return self._apply(node, [("number", ast.copy_location(ast.Constant(_moved(v)), node))])
        return node

    def visit_Name(self, node):  # noqa: N802
        if node.id in NAME_SWAPS and isinstance(node.ctx, ast.Load):
            return self._apply(node, [("swap name", ast.copy_location(ast.Name(NAME_SWAPS[node.id], node.ctx), node))])
        return node

    def visit_Attribute(self, node):  # noqa: N802
        self.generic_visit(node)
        if node.attr in NAME_SWAPS and isinstance(node.ctx, ast.Load):
            mutated = ast.copy_location(ast.Attribute(node.value, NAME_SWAPS[node.attr], node.ctx), node)
            return self._apply(node, [("swap name", mutated)])
        return node

    def visit_Call(self, node):  # noqa: N802
        node.func = self.visit(node.func)
        node.args = [self.visit(a) for a in node.args]
        for kw in node.keywords:
            if kw.arg not in COSMETIC_KEYWORDS:
                kw.value = self.visit(kw.value)
        variants = []
        for i, kw in enumerate(node.keywords):
            if kw.arg is not None and kw.arg not in KEEP_KEYWORDS:  # not **kwargs
                mutated = copy.copy(node)
                mutated.keywords = node.keywords[:i] + node.keywords[i + 1 :]
                callee = _short(node.func, 60)
                label = (f"{callee}(..., {_short(kw, 60)}, ...)", f"{callee}(...)")
                variants.append((f"drop {kw.arg}=", mutated, label))
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name == "abs" and len(node.args) == 1 and not node.keywords:
            variants.append(("drop abs", node.args[0]))
        return self._apply(node, variants)


def _moved(v: int | float) -> int | float:
    """A number moved to a nearby wrong value: ints by one, floats in (0, 1) halved, others doubled."""
    if isinstance(v, int):
        return v + 1
    if v == 0:
        return 1.0
    return v / 2 if 0 < abs(v) < 1 else v * 2


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def list_mutants(name: str) -> tuple[Path, list[Mutant]]:
    """The mutants of module ``name`` in a fixed order, each with a key that names it."""
    module, _, _ = MODULES[name]
    path = ROOT / (module.replace(".", "/") + ".py")
    sites = _Sites(SKIP_FUNCTIONS.get(name, set()))
    sites.visit(_tree(path))
    seen: dict[str, int] = {}
    for m in sites.found:
        base = f"{name}:{m.function}: {m.describe()}"
        seen[base] = seen.get(base, 0) + 1
        m.key = base if seen[base] == 1 else f"{base} #{seen[base]}"
    return path, sites.found


def mutated_tree(path: Path, index: int, skip: set[str]) -> ast.Module:
    tree = _Sites(skip, target=index).visit(_tree(path))
    return ast.fix_missing_locations(tree)


# -- running a mutant --------------------------------------------------------------------------
# A mutant inside a function is run by swapping that function's code object (and, for a
# mutated default, its defaults) in the live module, in a fork of a process that has
# already imported and collected everything: every reference to the function, imported
# by name anywhere, sees the change. A mutant of module- or class-level code (a constant,
# a dataclass default) needs the module imported afresh: it is served by an import hook
# to a fresh pytest run in a fork of the parent, which never imports prismlib.


def _codes(code) -> list:
    out = [code]
    for const in code.co_consts:
        if hasattr(const, "co_qualname"):
            out += _codes(const)
    return out


def _live_function(module, qualname: str):
    obj = module
    for part in qualname.split("."):
        obj = vars(obj)[part] if isinstance(obj, type) else getattr(obj, part)
    for _ in range(5):
        if isinstance(obj, property):
            obj = obj.fget
        elif isinstance(obj, (classmethod, staticmethod)):
            obj = obj.__func__
        elif getattr(getattr(obj, "__code__", None), "co_qualname", None) == qualname:
            return obj
        else:
            obj = obj.__wrapped__
    raise LookupError(f"no function {qualname} in {module.__name__}")


def _patch(module, path: Path, m: Mutant, skip: set[str]) -> None:
    """Swap the live function ``m.target`` of ``module`` for its mutated version."""
    tree = mutated_tree(path, m.index, skip)
    code = compile(tree, str(path), "exec", dont_inherit=True)
    (new,) = [c for c in _codes(code) if c.co_qualname == m.target]
    live = _live_function(module, m.target)
    live.__code__ = new
    if m.in_defaults:
        node = tree
        for part in m.target.split("."):
            node = next(n for n in node.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part)
        expr = ast.Expression(ast.Tuple([*node.args.defaults, *[d or ast.Constant(None) for d in node.args.kw_defaults]], ast.Load()))
        values = eval(compile(ast.fix_missing_locations(expr), str(path), "eval"), vars(module))  # noqa: S307
        n = len(node.args.defaults)
        live.__defaults__ = tuple(values[:n]) or None
        kw = {a.arg: v for a, d, v in zip(node.args.kwonlyargs, node.args.kw_defaults, values[n:]) if d is not None}
        live.__kwdefaults__ = kw or None


class _Serve(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from precompiled (mutated) code: the fresh-import path."""

    def __init__(self, name: str, path: Path, code) -> None:
        self.name, self.path, self.code = name, path, code

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code, module.__dict__)  # noqa: S102


def _pytest_args(files_or_ids: list[str], stop: bool = True) -> list[str]:
    return ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--no-header", "--tb=no", "-W", "ignore",
            "-o", f"cache_dir={CACHE / 'pytest'}", *(["-x"] if stop else []), *files_or_ids]  # fmt: skip


def _in_child(fn, cpu_limit: float | None = None, wall_limit: float | None = None, quiet: bool = True):
    """``fn()`` -> ``(exit code, JSON payload)`` in a forked child; ``(-1, None)`` when a limit stopped it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 3
        try:
            if cpu_limit:
                used = resource.getrusage(resource.RUSAGE_SELF)
                soft = int(used.ru_utime + used.ru_stime + cpu_limit) + 1
                resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
            if quiet:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
            code, payload = fn()
            with os.fdopen(write, "w") as out:
                json.dump(payload, out)
        except BaseException:  # noqa: BLE001 - a mutant may break anything; it is then killed
            code = 4
        finally:
            os._exit(code)
    os.close(write)
    start, chunks, stopped = time.monotonic(), [], False
    while True:
        ready, _, _ = select.select([read], [], [], 1.0)
        if ready:
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        elif wall_limit and time.monotonic() - start > wall_limit:
            os.kill(pid, signal.SIGKILL)
            stopped = True
            break
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if stopped or os.WIFSIGNALED(status):
        return -1, None
    text = b"".join(chunks).decode()
    return os.WEXITSTATUS(status), (json.loads(text) if text else None)


def _progress(m: Mutant, status: str) -> None:
    """A line per survivor as it is found (per mutant with ``--verbose``)."""
    if status == "survived" or not QUIET:
        print(f"  {status:<8} line {m.line}: {m.key}", file=sys.__stderr__, flush=True)


QUIET = True


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Driver:
    """pytest plugin that takes over the run loop of one module's tests: a traced run of
    every test (which lines of the module each executes, its CPU time), then each mutant."""

    def __init__(self, name: str, mutants: list[Mutant], path: Path, previous: dict[str, str]) -> None:
        self.name, self.mutants, self.path, self.previous = name, mutants, path, previous
        self.results: dict[str, tuple[str, int]] = {}
        self.baseline: dict = {}

    def _trace(self, items):
        from _pytest.runner import runtestprotocol

        filename = str(self.path)
        lines: dict[str, set[int]] = {}
        current: list[str] = []

        def local(frame, event, arg):
            if event == "line":
                lines[current[0]].add(frame.f_lineno)
            return local

        def glob(frame, event, arg):
            if frame.f_code.co_filename == filename:
                lines[current[0]].add(frame.f_lineno)
                return local
            return None

        cpu, failed = {}, []
        for i, item in enumerate(items):
            current[:] = [item.nodeid]
            lines[item.nodeid] = set()
            t0 = _cpu()
            sys.settrace(glob)
            try:
                reports = runtestprotocol(item, log=False, nextitem=items[i + 1] if i + 1 < len(items) else None)
            finally:
                sys.settrace(None)
            cpu[item.nodeid] = _cpu() - t0
            if any(r.failed for r in reports):
                failed.append(item.nodeid)
        return (0 if not failed else 1), {"lines": {k: sorted(v) for k, v in lines.items()}, "cpu": cpu, "failed": failed}

    def pytest_runtestloop(self, session):
        from _pytest.runner import runtestprotocol

        items = list(session.items)
        module = sys.modules[MODULES[self.name][0]]
        skip = SKIP_FUNCTIONS.get(self.name, set())
        code, base = _in_child(lambda: self._trace(items))
        if code != 0 or base is None:
            self.baseline = {"failed": base["failed"] if base else ["?"]}
            return True
        self.baseline = {"cpu": base["cpu"], "lines": base["lines"]}
        lines = {k: set(v) for k, v in base["lines"].items()}
        by_id = {item.nodeid: item for item in items}
        print(
            f"{self.name}: {len(self.mutants)} mutants, {len(items)} tests, unmutated run {sum(base['cpu'].values()):.1f} s CPU",
            file=sys.__stderr__,
            flush=True,
        )
        for m in self.mutants:
            if m.target is None or m.status:
                continue  # the fresh-import path (the parent runs these), or decided already
            wanted = set(m.lines)
            selected = sorted((t for t in by_id if lines[t] & wanted), key=lambda t: base["cpu"][t])
            if not selected:
                self.results[m.key] = ("survived", 0)
                continue
            chosen = [by_id[t] for t in selected]

            def one(m=m, chosen=chosen):
                _patch(module, self.path, m, skip)
                for i, item in enumerate(chosen):
                    reports = runtestprotocol(item, log=False, nextitem=chosen[i + 1] if i + 1 < len(chosen) else None)
                    if any(r.failed for r in reports):
                        return 1, None
                return 0, None

            limit = CPU_LIMIT_FACTOR * sum(base["cpu"][t] for t in selected) + CPU_LIMIT_MIN
            rc, _ = _in_child(one, limit, 100 * limit)
            self.results[m.key] = ("timeout" if rc == -1 else "survived" if rc == 0 else "killed", len(selected))
            _progress(m, self.results[m.key][0])
        return True


def _prepare() -> None:
    """Import the heavy libraries once, in the parent, and a reproducible hypothesis profile."""
    os.environ.setdefault("PRISMLIB_PROFILE", "smoke")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.dont_write_bytecode = True
    for p in (str(ROOT / "tests"), str(ROOT)):
        if p not in sys.path:
            sys.path.insert(0, p)
    os.chdir(ROOT)
    import hypothesis
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pytest  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.stats  # noqa: F401
    import torch

    torch.set_num_threads(1)
    hypothesis.settings.register_profile("mutants", database=None, derandomize=True, deadline=None, print_blob=False)
    hypothesis.settings.load_profile("mutants")
    from importlib.metadata import entry_points

    for ep in entry_points(group="pytest11"):
        try:
            ep.load()
        except Exception:  # noqa: BLE001 - a broken optional plugin only costs time in the children
            pass
    assert not any(k == "prismlib" or k.startswith("prismlib.") for k in sys.modules), "the parent must not import prismlib"


def load_equivalents() -> dict[str, str]:
    """``tests/mutants/equivalent.txt``: one reviewed mutant a line, ``key  # reason``."""
    out: dict[str, str] = {}
    if EQUIVALENT.exists():
        for raw in EQUIVALENT.read_text().splitlines():
            if raw.strip() and not raw.startswith("#"):
                key, _, reason = raw.partition("  # ")
                out[key.strip()] = reason.strip()
    return out


def run_module(name: str, survivors_only: bool, equivalents: dict[str, str]) -> list[Mutant]:
    module, files, slow = MODULES[name]
    path, mutants = list_mutants(name)
    skip = SKIP_FUNCTIONS.get(name, set())
    source = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    cache_file = CACHE / f"{name}.json"
    previous: dict[str, str] = {}
    if survivors_only and cache_file.exists():
        data = json.loads(cache_file.read_text())
        previous = data["status"] if data.get("source") == source else {}
    for m in mutants:
        if m.key in equivalents:
            m.status = "equivalent"
        elif previous.get(m.key) in ("killed", "timeout"):
            m.status = previous[m.key]
    args = [*files, *[f"--deselect={t}" for t in slow]]

    def warm():
        import pytest

        driver = _Driver(name, mutants, path, previous)
        pytest.main(_pytest_args(args, stop=False), plugins=[driver])
        return 0, {"results": driver.results, "baseline": driver.baseline}

    _, payload = _in_child(warm, quiet=False)
    if payload is None or "cpu" not in payload["baseline"]:
        failed = payload["baseline"].get("failed") if payload else "?"
        raise SystemExit(f"{name}: the unmutated tests fail or do not run ({failed}); fix them first")
    for m in mutants:
        if m.key in payload["results"]:
            m.status, m.tests = payload["results"][m.key]
            m.status = str(m.status)
    cpu, lines = payload["baseline"]["cpu"], payload["baseline"]["lines"]
    fresh = [m for m in mutants if m.target is None and not m.status]
    for m in fresh:  # module- and class-level code: a fresh import of the mutated module
        selected = list(cpu) if m.scope == "all" else [t for t in cpu if set(lines[t]) & set(m.lines)]
        m.tests = len(selected)
        if not selected:
            m.status = "survived"
            continue
        code_obj = compile(mutated_tree(path, m.index, skip), str(path), "exec", dont_inherit=True)

        def one(selected=sorted(selected, key=cpu.get), code_obj=code_obj):  # noqa: B008 (binds this iteration's values)
            import pytest

            sys.meta_path.insert(0, _Serve(module, path, code_obj))
            return int(pytest.main(_pytest_args(selected))), None

        limit = CPU_LIMIT_FACTOR * sum(cpu[t] for t in selected) + 3 * CPU_LIMIT_MIN
        rc, _ = _in_child(one, limit, 100 * limit)
        m.status = "timeout" if rc == -1 else "survived" if rc == 0 else "killed"
        _progress(m, m.status)
    CACHE.mkdir(parents=True, exist_ok=True)
    cache_file.write_text(json.dumps({"source": source, "status": {m.key: m.status for m in mutants}}, indent=0))
    return mutants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"short names, of {', '.join(MODULES)} (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants without running tests")
    parser.add_argument("--survivors", action="store_true", help="re-test only the previous run's survivors")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant as it finishes (default: survivors)")
    args = parser.parse_args(argv)
    global QUIET
    QUIET = not args.verbose
    names = args.modules or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; choose from {', '.join(MODULES)}")
    equivalents = load_equivalents()
    if args.list:
        for name in names:
            for m in list_mutants(name)[1]:
                print(f"{m.key}  [line {m.line}, {m.operator}{', fresh import' if m.target is None else ''}]")
        return 0
    _prepare()
    start = time.monotonic()
    results = {name: run_module(name, args.survivors, equivalents) for name in names}
    minutes = (time.monotonic() - start) / 60
    header = "| module      | mutants | killed | timeout | survived | equivalent | score  | goal |"
    print("\n" + header + "\n|" + "|".join("-" * len(c) for c in header.split("|")[1:-1]) + "|")
    below = []
    for name, mutants in results.items():
        n = {s: sum(m.status == s for m in mutants) for s in ("killed", "timeout", "survived", "equivalent")}
        live = len(mutants) - n["equivalent"]
        score = (n["killed"] + n["timeout"]) / live if live else 1.0
        goal = GOALS.get(name, GOAL)
        print(
            f"| {name:<12}| {len(mutants):>7} | {n['killed']:>6} | {n['timeout']:>7} | {n['survived']:>8} | "
            f"{n['equivalent']:>10} | {score:>6.1%} | {goal:>4.0%} |"
        )
        if score < goal:
            below.append(name)
    for name, mutants in results.items():
        alive = [m for m in mutants if m.status == "survived"]
        if alive:
            print(f"\nsurvivors of {name} ({MODULES[name][0]}):")
            for m in alive:
                print(f"  line {m.line}: {m.key}{'' if m.tests else '  (no test executes this line)'}")
    known = {m.key for ms in results.values() for m in ms}
    stale = [k for k in equivalents if k.split(":", 1)[0] in results and k not in known]
    if stale:
        print("\nlisted in tests/mutants/equivalent.txt but no longer a mutant (review the list):")
        print("\n".join(f"  {k}" for k in stale))
    if below:
        print(f"\nbelow the goal: {', '.join(below)}")
    print(f"\n{len(known)} mutants in {minutes:.1f} min")
    return 1 if below or stale else 0


if __name__ == "__main__":
    sys.exit(main())
