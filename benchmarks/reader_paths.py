"""Time the two paths a new reader takes, from a fresh clone, and commit the measurement.

    PRISMLIB_DATA=../shared/data python benchmarks/reader_paths.py     # about 15 minutes on 2 cores

Clones this repository's HEAD into a temporary folder and times, there, one after another on
an otherwise idle machine: the install (``make venv``), reading the committed results
(``make report PROFILE=cpu``) and the smoke path (``make reproduce PROFILE=smoke``). Writes
``results/reader_paths.json`` (seconds of each, the commit, the day, the cores), which the
README's "Three ways in" table reads (:mod:`prismlib.runs.readme_costs`): its first two rows
are this measurement, not a number written by hand. Run it on a clean tree (the clone is of
the last commit) and commit the file with the README it updates (``python -m prismlib report --readme``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "reader_paths.json"
STEPS = {
    "install_seconds": ["make", "venv"],
    "report_seconds": ["make", "report", "PROFILE=cpu"],
    "smoke_seconds": ["make", "reproduce", "PROFILE=smoke"],
}


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    if subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip():
        print("note: the tree has uncommitted changes; the clone times the last commit", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix="reader-paths-"))
    try:
        clone = tmp / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        result: dict[str, object] = {"commit": commit, "day": datetime.now(timezone.utc).date().isoformat(), "cores": os.cpu_count()}
        for name, cmd in STEPS.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=clone, check=True, stdout=subprocess.DEVNULL)
            result[name] = round(time.perf_counter() - t0, 1)
            print(f"{' '.join(cmd)}: {result[name]:.0f} s", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
