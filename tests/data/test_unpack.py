"""Unpacking (prismlib.data.unpack): parquet rows back into lines."""

from __future__ import annotations

from data_fixtures import WIKI_TEXT, hf_rows

from prismlib.data import unpack


def test_lines_from_rows_restores_the_blank_lines() -> None:
    assert "".join(unpack.lines_from_rows(hf_rows(WIKI_TEXT), " \n")) == WIKI_TEXT
    assert list(unpack.lines_from_rows([None, "", "x\n"], " \n")) == [" \n", " \n", "x\n"]
