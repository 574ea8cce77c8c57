"""The settings classes (prismlib.profiles.schema): a schema without values."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

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
