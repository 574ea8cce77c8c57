"""The argument parser of every ``python -m prismlib <command>``: a bad argument is one line.

argparse's own parser answers a wrong flag or value with its whole usage block and then the
error; :class:`CommandParser` prints only ``prog: error: <what is wrong> (see --help)`` and
exits with status 2, as argparse does. The usage is printed by ``--help`` alone.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

HINT = "(see --help)"
"""Ends every argument error: where the usage is."""


class CommandParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are one line without the usage block
    (its subparsers, made with ``add_subparsers``, are of this class too)."""

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message> (see --help)`` on stderr and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {' '.join(message.splitlines())} {HINT}\n")
