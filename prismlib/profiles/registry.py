"""The profiles by name: :data:`PROFILES`, built once from each profile module's
``get_config()``, and :func:`get_profile`, which reads the name and the device from the
environment when asked to.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace

from prismlib.profiles import cpu, cpu_long, dryrun, paper, smoke
from prismlib.profiles.schema import Profile

PROFILE_ENV = "PRISMLIB_PROFILE"
DEVICE_ENV = "PRISMLIB_DEVICE"
DEFAULT_PROFILE = "cpu"

CONFIGS: dict[str, Callable[[], Profile]] = {
    "smoke": smoke.get_config,
    "cpu": cpu.get_config,
    "paper": paper.get_config,
    "dryrun": dryrun.get_config,
    "cpu-long": cpu_long.get_config,
}
"""Profile name -> the ``get_config`` of its module (``prismlib.profiles.<name>``, ``-`` as ``_``)."""

PROFILES: dict[str, Profile] = {name: get_config() for name, get_config in CONFIGS.items()}
"""Every profile by name, as its module's ``get_config()`` gives it."""


def get_profile(name: str | None = None) -> Profile:
    """The profile called ``name``; ``None`` reads ``$PRISMLIB_PROFILE`` (default ``cpu``).

    Its device is ``$PRISMLIB_DEVICE`` when that is set (see :mod:`prismlib.profiles`).
    """
    name = name or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if name not in PROFILES:
        gpu = (f"; a GPU is a device, not a profile: set {DEVICE_ENV}=cuda with any profile, e.g. "
               f"`make reproduce PROFILE=paper {DEVICE_ENV}=cuda`") if name.lower() in ("gpu", "cuda") else ""  # fmt: skip
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)} (PROFILE=... or {PROFILE_ENV}){gpu}")
    device = os.environ.get(DEVICE_ENV)
    if not device:
        return PROFILES[name]
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
        raise ValueError(f"{DEVICE_ENV}={device!r} is not a device; use auto, cpu, cuda or cuda:<index>")
    return replace(PROFILES[name], device=device)
