"""The run profiles: every size, step and seed of every notebook, one module per profile.

============ ===========================================================================
schema       the settings classes: what each notebook's settings are and the checks
             their values must pass (no profile's values)
nested       :class:`Nested`: settings that group fields in settings of their own (a
             recipe, its anneal schedule): read through, changed by name, hashed flat
smoke        ``smoke``: every code path in about a minute per notebook (CI, nbval)
cpu          ``cpu``, the default: the whole study on 2 CPU cores, no GPU, no internet
cpu_long     ``cpu-long``: ``cpu`` with three paired seeds of every LSTM; any profile's
             ``-long`` twin (:func:`until_converged`)
paper        ``paper``: the papers' settings, for a GPU or a cluster
dryrun       ``dryrun``: ``paper`` on tiny sizes (:data:`DRY_RUN_SIZES`)
registry     :data:`PROFILES` and :func:`get_profile`
============ ===========================================================================

A profile module is one ``get_config()`` that returns its :class:`Profile`, the settings
in the order of the notebooks, each group with a line or two on what it does and why (the
measurements behind the values are in docs/profiles.md); a derived profile (``cpu-long``,
``dryrun``) calls the ``get_config()`` of the profile it derives from and changes what it
changes. :data:`PROFILES` holds each module's profile by name
(``cpu-long`` is in ``cpu_long``).

Notebooks take a ``profile`` parameter (papermill) whose default comes from the
environment variable ``PRISMLIB_PROFILE`` (``cpu`` when unset), so nbval can run the
notebooks on the ``smoke`` profile while ``make reproduce`` runs ``cpu``.

``PRISMLIB_DEVICE`` (``auto``, ``cpu``, ``cuda`` or ``cuda:<i>``), when set, replaces the
device of whichever profile :func:`get_profile` returns, e.g. to run the ``smoke``
profile (device ``cpu``) on a GPU: ``PRISMLIB_DEVICE=cuda python -m prismlib reproduce
--profile smoke``.  Every notebook and ``python -m prismlib train`` read the device from
the profile.

Every public name of the modules is importable from the package (``from prismlib.profiles
import get_profile, LSTMSettings``). The package imports them plainly, not lazily as the
work packages do: it needs nothing beyond the standard library, and a plain import keeps the
settings classes' types visible to mypy.
"""

from __future__ import annotations

from prismlib.profiles.cpu import CONTINUATION, CPU_PATH_ROUNDS, PRETRAIN_STEPS, PRETRAINING
from prismlib.profiles.cpu_long import LONG_CAP_EPOCHS, LONG_SEEDS, until_converged
from prismlib.profiles.dryrun import DRY_RUN_SIZES
from prismlib.profiles.nested import Nested
from prismlib.profiles.registry import CONFIGS, DEFAULT_PROFILE, DEVICE_ENV, PROFILE_ENV, PROFILES, get_profile
from prismlib.profiles.schema import (
    BeyondSettings,
    DyckRecipe,
    DyckSettings,
    ICLRSettings,
    LSTMRecipe,
    LSTMSettings,
    MLMRecipe,
    PretrainSettings,
    PrismSettings,
    ProbeSettings,
    Profile,
    SpectralSettings,
    TaskSize,
)

__all__ = [
    "CONTINUATION",
    "CPU_PATH_ROUNDS",
    "LONG_CAP_EPOCHS",
    "LONG_SEEDS",
    "PRETRAIN_STEPS",
    "PRETRAINING",
    "until_converged",
    "DRY_RUN_SIZES",
    "Nested",
    "CONFIGS",
    "DEFAULT_PROFILE",
    "DEVICE_ENV",
    "PROFILE_ENV",
    "PROFILES",
    "get_profile",
    "BeyondSettings",
    "DyckRecipe",
    "DyckSettings",
    "ICLRSettings",
    "LSTMRecipe",
    "LSTMSettings",
    "MLMRecipe",
    "PretrainSettings",
    "PrismSettings",
    "ProbeSettings",
    "Profile",
    "SpectralSettings",
    "TaskSize",
]
