"""The ``dryrun`` profile: the ``paper`` profile (:mod:`prismlib.profiles.paper`) on sizes a
CI machine runs in minutes, every switch kept.
"""

from __future__ import annotations

from dataclasses import replace

from prismlib.profiles import paper
from prismlib.profiles.schema import Profile, TaskSize

DRY_RUN_SIZES: dict[str, frozenset[str]] = {
    "profile": frozenset({"name", "encoder"}),
    "spectral": frozenset({"timing_lengths", "timing_batch", "timing_repeats"}),
    "lstm": frozenset(
        {
            "emb",
            "hidden",
            "epochs",
            "steps_per_epoch",
            "valid_tokens",
            "test_tokens",
            "seeds",
            "bootstrap",
            "memory_contexts",
            "nonmono",
            "records",
        }
    ),  # fmt: skip
    "probe": frozenset({"sizes", "runs", "max_epochs", "mlm_epochs", "encode_batch", "option_runs"}),
    "prism": frozenset({"steps", "batch_size", "checkpoint_every", "sizes", "eval_inputs", "eval_batch", "bootstrap", "seeds"}),
    "beyond": frozenset({"runs", "gate_runs"}),
    "iclr": frozenset({"dyck", "routing_tokens", "mi_distances", "mi_fit", "mi_tokens", "bootstrap"}),
}
"""The only settings in which the dry run differs from the paper profile (a test checks it)."""


def get_config() -> Profile:
    """The ``dryrun`` profile: ``paper`` with only the settings named in :data:`DRY_RUN_SIZES`
    shrunk.

    The same data sources (``full``: WikiText-103 train, CoNLL-2000 / Treebank-3), the
    same kind of encoder (bert-base-cased's architecture with 2 small layers and random
    weights, :data:`prismlib.probing.DRY_RUN_ENCODER`: no download), full softmax and
    NT-ASGD at AWD's dropouts, the full continued-training recipe, the slides' LSTM grid,
    the 43 dialog-act classes (``nonmono`` 1, so validation that stalls once switches NT-ASGD
    to averaging).
    """
    base = paper.get_config()
    tiny = TaskSize(train=3, val=3, test=3, positions=32)
    return replace(
        base,
        name="dryrun",
        encoder="bert-base-cased-dryrun",
        spectral=replace(base.spectral, timing_lengths=(64, 2048), timing_batch=1, timing_repeats=1),
        lstm=base.lstm.updated(
            emb=16,
            hidden=32,
            epochs=3,
            steps_per_epoch=3,
            valid_tokens=2000,
            test_tokens=4000,
            seeds=(0,),
            bootstrap=100,
            memory_contexts=8,
            nonmono=1,
            records=False,
        ),  # fmt: skip
        probe=replace(
            base.probe,
            sizes={
                "pos": tiny,
                "swda": tiny,
                "topic": replace(tiny, train=12, val=4, test=6, positions=8),
                "mlm": replace(tiny, positions=0),
            },  # fmt: skip
            runs=2,
            max_epochs=2,
            mlm_epochs=2,
            encode_batch=4,
            option_runs=1,
        ),
        prism=base.prism.updated(
            steps=2,
            batch_size=1,
            checkpoint_every=1,
            sizes={t: tiny for t in ("pos", "swda", "topic")},
            eval_inputs=4,
            eval_batch=4,
            bootstrap=100,
            seeds=(0, 1),
        ),
        beyond=replace(base.beyond, runs=2, gate_runs=2),
        iclr=replace(
            base.iclr,
            dyck=base.iclr.dyck.updated(hidden=16, n_train=64, n_validation=32, n_test=64, epochs=2, seeds=(1,)),
            routing_tokens=4000,
            mi_distances=20,
            mi_fit=(1, 10),
            mi_tokens=50_000,
            bootstrap=100,
        ),
    )
