"""Command line: ``python -m prismlib data {fetch,verify,list,check-urls} [NAME ...]``,
``python -m prismlib train [--profile P] [--executor E]``,
``python -m prismlib reproduce [--profile P] [--only NN ...] [--paired]``,
``python -m prismlib plan [--profile P] [--measure]``,
``python -m prismlib cache {list,verify,clean}``,
``python -m prismlib report [--profile P] [--out DIR]`` and
``python -m prismlib profile MODEL TEXT``."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys

USAGE = """usage: python -m prismlib <command> [...]

commands:
  data fetch [NAME ...] [-v]
                            download datasets into $PRISMLIB_DATA (default ./data), checksummed;
                            one summary line (-v: a line per file)
  data verify [NAME ...]    check that the datasets are present and intact
  data list                 the datasets, their sources and licences
  data check-urls [NAME ...]
                            ask every source URL whether it answers (needs internet; exit 1 if not)
  train [--profile P] [--executor inline|local|slurm] [--workers N] [--only EXP ...] [--section4]
        [--partition P] [--gpus N] [--timeout-min M]
                            train the LSTM LMs of work B (notebooks 05-08), and with --section4
                            the continued-MLM arms of section 4 (notebooks 03-04), into the job cache
  reproduce [--profile P] [--only NN ...] [--check-args]
                            run every notebook headless (papermill) -> results/P, figures/P;
                            --check-args: only check the profile, --only and the commit
  plan [--profile P] [--measure]
                            estimated jobs, GPU-hours, memory and disk per notebook
  cache list [--profile P]  what the caches hold: jobs (spec, recipe version, size, age, in use), states
  cache verify [--move-aside]
                            check every cached file against its digest (exit 1 if one is broken)
  cache clean [--dry-run]   remove what no current profile uses, and the entries moved aside
  report [--profile P] [--out DIR] [--readme] [--verdicts-moved COMMIT NN ...]
                            static HTML site of the executed notebooks, claims and manifest
                            -> report/P/index.html; fails on a link that does not resolve;
                            --readme: also README's tables and docs/results.md; --verdicts-moved:
                            docs/results.md's table of the notebooks' verdicts at COMMIT -> now
  profile MODEL TEXT [--out DIR] [--window N]
                            what frequencies each layer of a local Hugging Face model carries on a
                            text: energy share per band against white noise (table + figure)

  --debug (anywhere)        show the traceback of an error (default: one line naming the fix)
  <command> --help          the command's options (a wrong one is one line naming it)
"""


def user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that are a user's to fix (a wrong name, missing data, a failed notebook):
    printed as one line without a traceback."""
    from prismlib.artifacts import CorruptArtifact
    from prismlib.data.datadir import ChecksumError, DataNotFoundError, DownloadError
    from prismlib.records import BadRecord
    from prismlib.runs.preflight import PreflightError
    from prismlib.runs.reproduce import NotebookFailed

    return (
        ValueError,
        KeyError,
        FileNotFoundError,
        FileExistsError,
        PermissionError,
        ImportError,
        DataNotFoundError,
        ChecksumError,
        DownloadError,
        PreflightError,
        NotebookFailed,
        CorruptArtifact,
        BadRecord,
    )


def error_text(err: BaseException) -> str:
    """The message of ``err`` as the user reads it (a ``KeyError``'s without its quotes)."""
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    return text or type(err).__name__


def main(argv: list[str] | None = None) -> int:
    """``python -m prismlib ...``: run a command; a user error or Ctrl-C prints one line
    (``--debug``: the traceback) and gives exit status 1 (130 for Ctrl-C)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    missing = next((m for m in ("numpy", "torch") if importlib.util.find_spec(m) is None), None)
    if missing is not None:
        print(
            f"prismlib: error: this Python ({sys.executable}) has no {missing}: run the commands with the project's venv, "
            "`.venv/bin/python -m prismlib ...` (`make venv` creates it), or `source .venv/bin/activate` first",
            file=sys.stderr,
        )
        return 1
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    try:
        return _run(argv)
    except KeyboardInterrupt:
        if debug:
            raise
        # the notebook kernel died with the same Ctrl-C: its client's future is never read, and
        # asyncio would print that "exception was never retrieved" traceback at exit
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        print("prismlib: interrupted (Ctrl-C); results of finished steps are kept", file=sys.stderr)
        return 130
    except user_errors() as err:
        if debug:
            raise
        lines = error_text(err).splitlines()
        print(f"prismlib {argv[0] if argv else ''}: error: {lines[0]}", file=sys.stderr)
        for line in lines[1:]:
            print(f"  {line}", file=sys.stderr)
        return 1


COMMANDS = {
    "data": "prismlib.runs.data",
    "train": "prismlib.runs.train",
    "plan": "prismlib.runs.plan",
    "reproduce": "prismlib.runs.reproduce",
    "cache": "prismlib.runs.cache",
    "report": "prismlib.runs.report",
    "profile": "prismlib.runs.spectrum",
}
"""Command -> the module whose ``main(argv)`` runs it (imported only when called)."""


def _run(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"python -m prismlib: error: unknown command {command!r}; choose one of {', '.join(COMMANDS)} (see --help)", file=sys.stderr)
        return 2
    return int(importlib.import_module(COMMANDS[command]).main(rest))


if __name__ == "__main__":
    sys.exit(main())
