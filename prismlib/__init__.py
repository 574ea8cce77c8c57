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
                 evaluation, the experiment grid, the bigram gate, the cell-state ablation
``runs``         the top: the ``python -m prismlib`` commands (train, plan, reproduce,
                 report, cache) and the report; nothing in the library imports it
``data``         one module per dataset, a data directory, a registry with checksums
``profiles``     every size, step and seed of the smoke, cpu, paper and dryrun profiles
``stats``        the paired bootstrap over independent units behind every verdict
``claims``       claims, their tests and gates, the four verdicts, the claims table
``paths``        where outputs and caches go; locks
``artifacts``    atomic checkpoint save and load, each file's SHA-256 checked on read,
                 broken entries moved to ``.cache/quarantine/``
``plots``        the figure theme and saving (png + pdf), tables (csv + md)
``workers``      device, torch threads, the single-thread worker pool, progress bars
``jobcache``     a trained model is a job cached by the hash of its spec; executors
                 (inline, local pool, SLURM) that train the missing ones
``timing``       timing a piece of code the same way everywhere (``benchmarks/``)
================ ==================================================================

Dependencies point one way (``tests/test_layers.py``): the modules without a package are the
core and import no package; ``data`` and ``spectral`` import only the core; ``probing`` and
``lstm`` import those; ``prism`` may import ``probing``, never the reverse; ``runs`` and
``__main__`` sit on top.

Each package's ``__init__`` re-exports its modules' public names, so notebooks import
short names (``from prismlib.lstm import LSTMLM, trained``).
"""

__version__ = "0.1.0"
