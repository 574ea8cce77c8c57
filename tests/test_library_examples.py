"""The examples that open ``docs/library.md`` run as they stand (issue 77, item 5), so the page
cannot rot: every ```` ```python ```` block of its "Examples" section (from that heading to the
next ``## `` heading) is executed in a namespace of its own, as a reader would paste it.

A block that raises fails its test with the example's heading and the block's first line; the
block is compiled under the page's path with the page's line numbers, so the traceback points
at the line of ``docs/library.md`` that broke. torch's global random state is restored after
each block (the examples seed it).
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "library.md"
SECTION = "## Examples"
N_EXAMPLES = 3  # band-passed hidden states, a prism layer's MLM step, a timescale LSTM's memory

FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^#{2,6} +(.+?) *$", re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """A ```` ```python ```` block of the page: its code, the heading above it, and the page line
    its code starts on (counted from 1)."""

    code: str
    heading: str
    line: int

    @property
    def first_line(self) -> str:
        return next((s for s in self.code.splitlines() if s.strip()), "")


def examples(text: str) -> list[Example]:
    """The ```` ```python ```` blocks of ``text``'s :data:`SECTION`, in page order."""
    start = text.find(f"\n{SECTION}\n")
    if start < 0:
        raise ValueError(f"the page has no {SECTION!r} heading")
    start += 1
    following = re.search(r"^## ", text[start + len(SECTION) :], re.MULTILINE)
    end = len(text) if following is None else start + len(SECTION) + following.start()
    out = []
    for block in FENCE.finditer(text, start, end):
        headings = HEADING.findall(text, start, block.start())
        line = text.count("\n", 0, block.start(1)) + 1
        out.append(Example(block.group(1), headings[-1] if headings else SECTION, line))
    return out


EXAMPLES = examples(PAGE.read_text())


def test_the_page_opens_with_its_examples():
    assert len(EXAMPLES) == N_EXAMPLES, f"{PAGE.name}'s {SECTION!r} section has {len(EXAMPLES)} python blocks"
    assert PAGE.read_text().index(SECTION) < PAGE.read_text().index("## The map")


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.heading for e in EXAMPLES])
def test_the_example_runs(example, one_torch_thread):
    import torch

    page = os.path.relpath(PAGE, ROOT)
    code = compile("\n" * (example.line - 1) + example.code, str(PAGE), "exec")
    with torch.random.fork_rng(devices=[]):
        try:
            exec(code, {"__name__": "__library_example__"})
        except Exception as err:
            frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(PAGE)]
            at = f" at {page}:{frames[-1].lineno} ({(frames[-1].line or '').strip()})" if frames else ""
            pytest.fail(
                f"the example {example.heading!r} of {page}, whose block starts {example.first_line!r} "
                f"(line {example.line}), raised {type(err).__name__}{at}: {err}"
            )


def test_the_extraction_takes_the_sections_python_blocks_only():
    text = "\n".join(
        [
            "# Page",  # 1
            "```python",
            "before = 1",  # 3: before the section
            "```",
            "## Examples",  # 5
            "### One",
            "```python",
            "a = 1",  # 8
            "b = 2",
            "```",
            "```text",
            "not python",
            "```",
            "### Two",
            "```python",
            "",
            "c = 3",  # 17
            "```",
            "## The map",
            "```python",
            "after = 1",  # 21: after the section
            "```",
            "",
        ]
    )
    assert examples(text) == [Example("a = 1\nb = 2\n", "One", 8), Example("\nc = 3\n", "Two", 16)]
    assert examples(text)[1].first_line == "c = 3"
    with pytest.raises(ValueError, match="no '## Examples' heading"):
        examples("# Page\n")
