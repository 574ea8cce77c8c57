"""prismlib: the library behind the notebooks of the prism-companion project.

One package per work, and a few modules both share:

================ ==================================================================
``spectral``     work A, section 2: the DCT, the five bands, brick-wall, smooth and
                 Haar filters across tokens, the band energy of any model
``probing``      work A, section 3: windows, BERT's masking, tasks, encoders, filtered
                 features, probes, the learned spectral gate
``prism``        work A, section 4: the prism layer, continued MLM training
                 (the paper's and the cpu's staged recipe), Table 1's arms, Fig. 5
``lstm``         work B: the LSTM LM, timescales and the slides' variants, training,
                 evaluation, the cached jobs, the bigram gate, the cell-state ablation;
                 its sub-package ``lstm.claims`` the experiment grid and the notebooks'
                 claims with their gates, ``lstm.iclr`` the ICLR 2021 version's Dyck-2,
                 routing by timescale and mutual information
``runs``         the top: the ``python -m prismlib`` commands (data, train, plan,
                 reproduce, report, cache) and the report; nothing in the library imports it
``data``         one module per dataset, a data directory, the catalogue of datasets
                 with checksums, and the registry that fetches and verifies them
``profiles``     every size, step and seed: the settings classes and one module per
                 profile (smoke, cpu, cpu-long, paper, dryrun), ``get_profile``
``stats``        the paired bootstrap over independent units behind every verdict
``claims``       claims, their tests and gates, the four verdicts, the claims table
``paths``        where outputs and caches go; locks
``artifacts``    atomic checkpoint save and load, each file's SHA-256 checked on read,
                 broken entries moved to ``.cache/quarantine/``
``plots``        the figure theme and saving (png + pdf), tables (csv + md)
``devices``      the torch device and torch's thread count
``progress``     progress bars (a widget, a terminal, or a headless run's log file)
``jobcache``     a trained model is a job cached by the hash of its spec; executors
                 (inline, local pool, SLURM) that train the missing ones; the process pool
``timing``       timing a piece of code the same way everywhere (``benchmarks/``)
``anneal``       the annealed schedule and its stopping rule (work B, section 4)
================ ==================================================================

Dependencies point one way (``tests/test_layers.py``): the modules without a package and the
settings package ``profiles`` are the core and import no other package; ``data`` and
``spectral`` import only the core; ``probing`` and ``lstm`` import those, ``lstm.iclr`` and
``lstm.claims`` import ``lstm`` (never the reverse, nor each other); ``prism`` may import ``probing``, never the reverse; ``runs`` and
``__main__`` sit on top.

Each package's ``__init__`` re-exports its modules' public names, so notebooks import
short names (``from prismlib.lstm import LSTMLM, trained``) through :func:`lazy_exports`
(PEP 562): a name's module is imported on its first use, so the core (filters, prism layer,
LSTM model) needs torch, numpy and scipy only and the heavier modules load when used.
``profiles`` imports its names plainly: it needs only the standard library, and mypy sees the
settings classes' types.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` whose submodule ``m`` defines the
    names ``exports[m]``; a submodule itself is an attribute too (``prismlib.lstm.model``).
    A key may name a module of a sub-package (``"claims.grid"``): the sub-package and the
    module are then attributes too, each by its own name (``prismlib.lstm.claims``,
    ``prismlib.lstm.grid``), so a module that moves into a sub-package keeps its names and
    its attribute. A name exported by two submodules is an error (a package has one meaning
    per name), as is one attribute for two modules."""
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported by both {where[name]} and {module}")
            where[name] = module
    modules: dict[str, str] = {}
    for module in exports:
        top = module.partition(".")[0]
        for attribute, path in ((top, top), (module.rpartition(".")[2], module)):
            if modules.setdefault(attribute, path) != path:
                raise ValueError(f"{package}: {attribute!r} names both the submodules {modules[attribute]} and {path}")
    clash = set(where) & set(modules)
    if clash:
        raise ValueError(f"{package}: {sorted(clash)} name both a submodule and a name in it; rename the module")

    def __getattr__(name: str) -> Any:
        if name in modules:
            return importlib.import_module(f"{package}.{modules[name]}")
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    def __dir__() -> list[str]:
        return sorted([*where, *modules])

    return __getattr__, __dir__, sorted(where)


__version__ = "0.1.0"
