"""Verdicts old -> new: the claims of some notebooks before and after a re-run, side by side.

    python benchmarks/verdicts_moved.py OLD_COMMIT 02 03 04     # seconds

Reads ``figures/cpu/claims.csv`` as it stood at ``OLD_COMMIT`` and as it stands in the working
tree, matches the named notebooks' claims by the paper's statement and their place among its
claims (:func:`prismlib.runs.results_page.verdict_changes`), and writes the table into
``docs/results.md`` between :data:`MARKERS`, under a line naming the commit. Issue 76 ran it for
section 4's move from all-MiniLM-L6-v2 to the BERT pretrained here; no number is written by hand.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from prismlib.claims import read_claims
from prismlib.runs.findings import write_block
from prismlib.runs.results_page import verdict_changes

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = "figures/cpu/claims.csv"
MARKERS = ("<!-- verdicts moved: written by benchmarks/verdicts_moved.py; do not edit -->", "<!-- verdicts moved end -->")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the commit whose claims are the 'before'")
    parser.add_argument("notebooks", nargs="+", help="two-digit notebook numbers")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", args.old], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    text = subprocess.run(["git", "show", f"{commit}:{CLAIMS}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "claims.csv").write_text(text)
        old = read_claims(Path(tmp) / "claims.csv")
    table = verdict_changes(old, read_claims(ROOT / CLAIMS), args.notebooks)
    block = f"Before: `{CLAIMS}` at {commit}; after: as committed with this table.\n\n{table}"
    changed = write_block(ROOT / "docs" / "results.md", MARKERS, block, "the section 'Verdicts old -> new'")
    print(f"docs/results.md {'rewritten' if changed else 'already current'}: {table.count(chr(10)) - 1} claims")


if __name__ == "__main__":
    main()
