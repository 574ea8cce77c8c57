"""The cpu profile (prismlib.profiles.cpu): its LSTM recipe written out on one screen."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prismlib" / "profiles"


SCREEN = 60
"""Lines of a screen: the cpu profile's LSTM recipe, its comment included, fits in them."""


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
