"""The pages a reader opens stay readable: no paragraph and no table cell of the README or
``docs/*.md`` is over :data:`MAX_CHARS` characters (issue 77 found an opening paragraph of
6,107 characters and table cells of 6,523). Read from the files, nothing imported:

* a paragraph is a block of lines between blank lines; a list item starts a paragraph of its
  own (a list of short items is not one long paragraph), and so does a heading;
* a table row's cells are measured one by one;
* what a code fence holds is not prose and is skipped;
* a paragraph's length is its lines stripped and joined by single spaces.

``docs/log.md``, the dated history, is left out: its entries are records of what happened,
kept whole.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_CHARS = 800
EXEMPT = {"log.md"}  # the dated history (see above)
PAGES = sorted([ROOT / "README.md", *(p for p in ROOT.glob("docs/*.md") if p.name not in EXEMPT)])

ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
FENCE = re.compile(r"^\s*(```|~~~)")
CELL_SEPARATOR = re.compile(r"(?<!\\)\|")


def blocks(text: str) -> list[tuple[int, str, int]]:
    """``(line, kind, characters)`` of every paragraph (``kind`` "paragraph", list items and
    headings included) and every table cell (``"table cell"``) of Markdown ``text`` outside
    code fences; ``line`` is where the block starts, counted from 1."""
    out: list[tuple[int, str, int]] = []
    start, lines, fenced = 0, [], False

    def close() -> None:
        nonlocal lines
        if lines:
            out.append((start, "paragraph", len(" ".join(line.strip() for line in lines))))
        lines = []

    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if FENCE.match(line):
            close()
            fenced = not fenced
        elif fenced:
            continue
        elif not stripped:
            close()
        elif stripped.startswith("|"):
            close()
            out += [(number, "table cell", len(cell.strip())) for cell in CELL_SEPARATOR.split(stripped.strip("|"))]
        else:
            if ITEM.match(line) or stripped.startswith("#"):
                close()
            if not lines:
                start = number
            lines.append(line)
            if stripped.startswith("#"):
                close()
    close()
    return out


def too_long(path: Path, root: Path = ROOT) -> list[str]:
    """One line per paragraph or table cell of ``path`` over :data:`MAX_CHARS`: file (from
    ``root``), line, length."""
    return [
        f"{path.relative_to(root)}:{line}: a {kind} of {length:,} characters (at most {MAX_CHARS})"
        for line, kind, length in blocks(path.read_text())
        if length > MAX_CHARS
    ]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_paragraph_or_table_cell_is_over_800_characters(path):
    problems = too_long(path)
    assert not problems, "split these into shorter paragraphs, a list or sub-headings:\n" + "\n".join(problems)


def test_the_check_measures_paragraphs_items_and_cells_and_skips_code():
    text = "\n".join(
        [
            "# A title",  # 1
            "",
            "one line",  # 3
            "and its second",
            "- an item",  # 5
            "- another item",  # 6
            "",
            "```",
            "x" * 2000,  # in a fence: not prose
            "```",
            "| a | bb \\| c |",  # 11: an escaped pipe stays in its cell
            "",
        ]
    )
    assert blocks(text) == [
        (1, "paragraph", 9),
        (3, "paragraph", len("one line and its second")),
        (5, "paragraph", len("- an item")),
        (6, "paragraph", len("- another item")),
        (11, "table cell", 1),
        (11, "table cell", len("bb \\| c")),
    ]
    assert blocks("word " * 200 + "\n\n" + "| " + "y" * 801 + " |")[1] == (3, "table cell", 801)


def test_the_check_names_the_file_line_and_length(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\nshort\n\n" + "z" * 801 + "\n")
    assert too_long(page, tmp_path) == [f"page.md:5: a paragraph of 801 characters (at most {MAX_CHARS})"]
