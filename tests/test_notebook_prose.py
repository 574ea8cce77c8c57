"""Prose cannot go stale: a notebook's markdown states methods and the paper's numbers;
what this run found is rendered from computed values (a table, or ``Markdown(f"...")``).
The phrases below are the ways a result crept into markdown before; a test fails on any."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.py"))
RESULT_PHRASES = [
    r"\bevery gate pass",
    r"\bgates? (all )?passe?d?\b in (this|the|our)",
    r"\bwhat the cpu run shows\b",
    r"\bin (the|our|this) `?cpu`? run\b",
    r"\bon our `?cpu`? run\b",
    r"\bnot reproduced\b|\bis reproduced\b",
    r"\bby about \d+(\.\d+)? (points|nats|ppl)\b",
    r"\bcosts? about \d",
    r"\(ours:? [-+]?\d",
]


def _markdown(path: Path) -> list[str]:
    return [c.source for c in jupytext.read(path).cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_states_no_result_of_a_run(path):
    hits = [
        f"{m.group(0)!r} in: ...{text[max(0, m.start() - 60) : m.end() + 60]}..."
        for cell in _markdown(path)
        for text in [" ".join(line.lstrip("# ").strip() for line in cell.splitlines())]  # sentences span lines
        for pattern in RESULT_PHRASES
        for m in [re.search(pattern, text, re.IGNORECASE)]
        if m
    ]
    assert not hits, f"{path.name}: render results from computed values instead:\n" + "\n".join(hits)


def test_the_phrase_list_catches_the_stale_sentences_it_was_written_for():
    stale = [
        "the three arms at once). Every gate passes: each trained head is 0.6-0.7 nats per",
        "to the paper's numbers. BERT + Prism beats BERT on topic by about 13 points, as in",
        "not reproduced, and BERT's absence of a dip is.",
        "Where the chrono models come out clearly *worse* than the baseline (as on our `cpu` run),",
    ]
    for line in stale:
        assert any(re.search(p, line, re.IGNORECASE) for p in RESULT_PHRASES), line
