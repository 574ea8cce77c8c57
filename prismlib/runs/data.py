"""``python -m prismlib data list|fetch|verify|check-urls [NAME ...]``: the datasets of the
catalogue (:mod:`prismlib.data.catalogue`), fetched and verified by
:mod:`prismlib.data.registry`::

    python -m prismlib data list
    python -m prismlib data fetch [NAME ...] [--force] [--paper] [--profile P] [--data-dir DIR] [-v]
    python -m prismlib data verify [NAME ...] [--data-dir DIR]
    python -m prismlib data check-urls [NAME ...] [--timeout S]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from prismlib.data import catalogue
from prismlib.data.datadir import ENV_VAR, FETCH_COMMAND, ChecksumError, DownloadError, data_dir
from prismlib.data.download import PROBE_TIMEOUT_S, UrlStatus
from prismlib.data.registry import Fetched, check_urls, fetch, verify
from prismlib.runs.cli import CommandParser


def _print_table(root: Path) -> None:
    print(f"data directory: {root} ({ENV_VAR}={os.environ.get(ENV_VAR, '<unset>')})")
    for ds in catalogue.DATASETS.values():
        print(f"\n{ds.name}: {ds.description}\n  licence: {ds.licence}")
        for f in ds.files:
            here = "present" if (root / f.relpath).is_file() else "missing"
            labels = [s.label for s in f.sources] or ["derived (the conversations in the tar not in train or test)"]
            paper = "  [paper profile only]" if f.paper_only else ""
            print(f"  {f.relpath:40s} {here:8s} {labels[0]}{paper}")
            for label in labels[1:]:
                print(f"  {'':40s} {'':8s} or {label}")


def _print_url_checks(statuses: Sequence[UrlStatus]) -> bool:
    for s in statuses:
        print(f"{'ok' if s.ok else 'FAILED':6s} {s.detail:40s} {s.url}")
    failed = [s for s in statuses if not s.ok]
    if failed:
        print(f"{len(failed)} of {len(statuses)} source URLs did not answer", file=sys.stderr)
    return not failed


def fetch_line(fetched: Fetched, root: Path, verbose: bool = False) -> str:
    """The one line ``data fetch`` ends with: how many datasets are ready where, how many
    files were valid already and how many were written now (and where the details are)."""
    counts = _count(fetched.valid, "file") + " valid" + (f", {fetched.written} fetched now" if fetched.written else "")
    details = "" if verbose else "; details: -v"
    return f"data: {_count(fetched.datasets, 'dataset')} ready in {root} ({counts}{details})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``python -m prismlib data {list,fetch,verify,check-urls} [NAME ...]``.

    ``argv`` may start with ``"data"`` (it is skipped). Returns the exit status:
    0 on success, 1 when a required file is missing/invalid, a fetch failed, or a
    source URL did not answer.
    """
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["data"]:
        args_in = args_in[1:]
    parser = CommandParser(prog="python -m prismlib data", description="Fetch, verify and list the datasets.")
    parser.add_argument("command", choices=["fetch", "verify", "list", "check-urls"])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"datasets: {', '.join(catalogue.DATASETS)}")
    parser.add_argument("--data-dir", type=Path, default=None, help=f"default: ${ENV_VAR} or <repo>/data")
    parser.add_argument("--force", action="store_true", help="fetch: download again even if valid")
    parser.add_argument("--paper", action="store_true", help="fetch: also the paper profile's large files")
    parser.add_argument("--profile", default=None, help="fetch: what this profile reads (checked first; paper: --paper)")
    parser.add_argument("--timeout", type=float, default=PROBE_TIMEOUT_S, help="check-urls: seconds per request")
    parser.add_argument("-v", "--verbose", action="store_true", help="fetch: a line for every file (default: one summary line)")
    args = parser.parse_args(args_in)
    unknown = [n for n in args.names if n not in catalogue.DATASETS]
    if unknown:
        parser.error(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(catalogue.DATASETS)}")
    root = args.data_dir if args.data_dir is not None else data_dir()
    if args.profile is not None:  # a wrong profile is refused before anything is downloaded
        from prismlib.profiles import get_profile

        args.paper = args.paper or get_profile(args.profile).data == "full"

    if args.command == "list":
        _print_table(root)
        return 0
    if args.command == "check-urls":
        return 0 if _print_url_checks(check_urls(args.names or None, timeout=args.timeout)) else 1
    env = os.environ.get(ENV_VAR)
    where = f"{root} ({ENV_VAR}={env})" if env else f"{root} ({ENV_VAR} not set)"
    if args.command == "fetch":
        if not root.is_dir():  # never create a directory the user did not ask for
            print(
                f"error: the data directory {where} does not exist: create it (`mkdir -p {root}`) to download "
                f"the datasets there, or set {ENV_VAR} to the directory that holds them",
                file=sys.stderr,
            )
            return 1
        try:
            fetched = fetch(args.names or None, data_dir=root, force=args.force, paper=args.paper, verbose=args.verbose)
        except DownloadError as err:
            print(f"error: the data directory {where} lacks what was asked for, and downloading it failed: {err}", file=sys.stderr)
            return 1
        except (ChecksumError, ImportError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        print(fetch_line(fetched, root, args.verbose))
        return 0
    failed = False
    found = verify(args.names or None, data_dir=root)
    if not any(s.state != "missing" for statuses in found.values() for s in statuses):
        print(
            f"the data directory {where} holds none of the datasets: run `{FETCH_COMMAND}`, "
            f"or set {ENV_VAR} to the directory that holds them",
            file=sys.stderr,
        )
        return 1
    print(f"data directory: {where}")
    for name, statuses in found.items():
        for s in statuses:
            note = "" if s.required else " (paper profile only)"
            print(f"{name:16s} {s.relpath:40s} {s.state:8s} {s.detail}{note}")
            failed |= s.required and not s.ok
    if failed:
        print(f"some files are missing or invalid: run `{FETCH_COMMAND} [NAME ...]`", file=sys.stderr)
    return 1 if failed else 0
