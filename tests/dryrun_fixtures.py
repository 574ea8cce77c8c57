"""Fixtures of the paper profile's dry run: the files the ``paper`` profile reads that no
offline copy has, written by the tests themselves (generated text, never cut from a
dataset): WikiText-103 raw train / valid and an LDC Treebank-3 ``tagged/pos/wsj`` tree.

:func:`dry_run_data` makes a data directory that links every file of the real one and
adds the generated WikiText-103 splits; :func:`treebank3_dir` writes the Treebank-3 tree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_SYLLABLES = ("ka", "lo", "mi", "ren", "tas", "vo", "bel", "dun", "ir", "sto", "pa", "qu")
_TAGS = ("DT", "NN", "VBD", "JJ", "IN", "NNS", "RB")


def _words(rng: np.random.Generator, n: int) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES, size=rng.integers(1, 4))) for _ in range(n)]


def wikitext_raw(n_articles: int, seed: int) -> str:
    """A WikiText raw file's text: ``n_articles`` articles `` = Title = `` with a section
    heading and paragraphs of generated sentences, blank `` `` lines between lines as in
    the canonical release."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    for a in range(n_articles):
        lines.append(f" = {' '.join(_words(rng, 2)).title()} {seed}-{a} = ")
        for p in range(4):
            if p == 2:
                lines.append(f" = = {' '.join(_words(rng, 2)).title()} = = ")
            sentences = [" ".join(_words(rng, int(rng.integers(5, 15)))).capitalize() + " ." for _ in range(8)]
            lines.append(" " + " ".join(sentences) + " ")
    return "".join(f"{line}\n \n" for line in lines)


def dry_run_data(real: Path, root: Path) -> Path:
    """``root`` as a data directory: symlinks to every file of ``real``, plus generated
    ``wikitext-103-raw/wiki.{train,valid}.raw`` (the real test split is linked)."""
    for path in real.rglob("*"):
        if path.is_file():
            link = root / path.relative_to(real)
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(path)
    for split, n, seed in (("train", 12, 1), ("valid", 4, 2)):
        (root / "wikitext-103-raw" / f"wiki.{split}.raw").write_text(wikitext_raw(n, seed), encoding="utf-8")
    return root


def treebank3_dir(root: Path, files: int = 3, sentences: int = 12) -> Path:
    """A Treebank-3 ``tagged/pos/wsj`` tree with ``files`` files in each of sections 02,
    03, 22 and 23 (``SS/wsj_SSNN.pos``), ``sentences`` generated tagged sentences each, in
    the ``.pos`` format (bracketed chunks, ``=====`` separators). Returns the ``wsj`` folder."""
    rng = np.random.default_rng(23)
    wsj = root / "tagged" / "pos" / "wsj"
    for section, number in ((s, n) for s in ("02", "03", "22", "23") for n in range(1, files + 1)):
        lines = ["", "=" * 38, ""]
        for _ in range(sentences):
            tokens = [f"{w}/{rng.choice(_TAGS)}" for w in _words(rng, int(rng.integers(4, 12)))]
            lines += [f"[ {' '.join(tokens)} ]", "./.", "", "=" * 38, ""]
        path = wsj / section / f"wsj_{section}{number:02d}.pos"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="latin-1")
    return wsj
