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


def pytest_collection_modifyitems(items: list) -> None:
    """Each notebook's cells in order, whatever order the rest runs in.

    nbval runs a notebook's cells one after another in one kernel, so they must stay in
    order; pytest-randomly (the random-order checks of docs/testing.md) shuffles them as
    items without a module. In the fixed order this changes nothing. The slots the cells
    take are kept; each notebook takes its cells' slots in the order its first cell came."""
    slots = [i for i, item in enumerate(items) if hasattr(item, "cell_num") and str(item.path).endswith(".ipynb")]
    notebooks: dict[str, list] = {}
    for i in slots:
        notebooks.setdefault(str(items[i].path), []).append(items[i])
    ordered = [cell for cells in notebooks.values() for cell in sorted(cells, key=lambda c: c.cell_num)]
    for i, cell in zip(slots, ordered):
        items[i] = cell
