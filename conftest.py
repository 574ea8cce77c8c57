"""pytest settings for the whole checkout: nbval runs the notebooks on the smoke profile.

At the root, not in ``notebooks/`` (every ``.py`` there is half of a notebook pair), and
nothing imports it as a module (the tests' own helpers live in ``tests/real_data.py``).

``make test`` sets ``PRISMLIB_PROFILE=smoke``; a bare ``pytest notebooks/NN_x.ipynb --nbval-lax``
did not, and each notebook's parameter cell then defaults to the cpu profile, which trains the
cpu models for hours. The kernels nbval starts inherit this process's environment, so setting
the default here makes a bare call check the smoke outputs the pairs store. An explicit
``PRISMLIB_PROFILE`` still wins.
"""

from __future__ import annotations

import os

os.environ.setdefault("PRISMLIB_PROFILE", "smoke")
