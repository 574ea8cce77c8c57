"""The ``paper`` profile: the papers' own settings (bert-base-cased, AWD-LSTM, the full
datasets), for a GPU or a cluster. ``dryrun`` (:mod:`prismlib.profiles.dryrun`) is this
profile on tiny sizes.
"""

from __future__ import annotations

from prismlib.anneal import AnnealSettings
from prismlib.profiles.schema import (
    BeyondSettings,
    DyckRecipe,
    DyckSettings,
    ICLRSettings,
    LSTMRecipe,
    LSTMSettings,
    MLMRecipe,
    PrismSettings,
    ProbeSettings,
    Profile,
    SpectralSettings,
    TaskSize,
)


def get_config() -> Profile:
    """The ``paper`` profile."""
    return Profile(
        name="paper", encoder="bert-base-cased", window=512, device="auto", seed=0, data="full",
        # Notebook 01 (section 2, App. A and D).
        spectral=SpectralSettings(
            article=0, neuron=None, appendix_a_lengths=(16, 64, 128, 256, 510, 512, 1024, 4096),
            timing_lengths=(32, 64, 128, 256, 512, 1024, 2048, 4096, 8192), timing_batch=8, timing_repeats=10,
        ),
        # Notebooks 02-03: probing (windows per split; -1: all).
        probe=ProbeSettings(
            sizes={
                "pos": TaskSize(train=-1, val=-1, test=-1, positions=128),
                "swda": TaskSize(train=-1, val=-1, test=-1, positions=128),
                "topic": TaskSize(train=-1, val=-1, test=-1, positions=32),
                "mlm": TaskSize(train=5000, val=200, test=-1, positions=0),
            },
            runs=3, max_epochs=30, patience=1, mlm_epochs=3, batch_size=256, encode_batch=16, option_runs=3,
        ),
        # Notebooks 03-04: the paper's continued training, 50k steps x 8 x 512 tokens of
        # WikiText-103 train, every parameter, Adam's defaults (lr 1e-3).
        prism=PrismSettings(
            training=MLMRecipe(
                train_text="wikitext103-train", train_articles_103=0, steps=50_000, batch_size=8, seq_len=512, lr=1e-3,
                # a fixed budget: the schedule goes unused (it enters the keys)
                schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=2, min_rounds=2, decay_patience=1),
            ),
            checkpoint_every=1000, every_layer=True,
            sizes={
                "pos": TaskSize(train=-1, val=-1, test=-1, positions=128),
                "swda": TaskSize(train=-1, val=-1, test=-1, positions=128),
                "topic": TaskSize(train=-1, val=-1, test=-1, positions=32),
            },
            # Table 1 and App. B report "averages of three trials": three training seeds of every arm
            span=(200, 300), eval_inputs=1600, eval_stride=128, eval_batch=16, bootstrap=1000, seeds=(0, 1, 2),
        ),
        # Notebooks 05-08 (work B): AWD-LSTM's PTB recipe (Merity et al. 2017; the slides'
        # baseline), 1000 epochs as on the slides.
        lstm=LSTMSettings(
            recipe=LSTMRecipe(
                emb=400, hidden=1150, layers=3, dropout=0.4, dropouth=0.25, dropouti=0.4, dropoute=0.1, wdrop=0.5,
                optimizer="ntasgd", lr=30.0, clip=0.25, wdecay=1.2e-6, alpha=2.0, beta=1.0, nonmono=5,
                batch_size=20, bptt=70, epochs=1000, steps_per_epoch=None, eval_batch=10, valid_tokens=None, test_tokens=None,
                # NT-ASGD: the anneal schedule goes unused (it enters the keys)
                schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=4, min_rounds=4, decay_patience=1),
            ),
            seeds=(0, 1, 2, 3, 4, 5), bootstrap=1000, memory_contexts=1000, context=70, threads=None, grid="slides",
            records=True,
        ),
        # Notebook 09: five runs per condition (the learned profiles' Welch intervals need more than
        # two runs' 1 degree of freedom): docs/profiles.md#paper-beyond-runs
        beyond=BeyondSettings(runs=5),
        # Notebook 10: the official Dyck recipe (prismlib.lstm.iclr.OFFICIAL_RECIPE) and 23 blocks of
        # 50 layer-2 units.
        iclr=ICLRSettings(
            dyck=DyckSettings(
                recipe=DyckRecipe(
                    hidden=256, n_train=10_000, n_validation=2_000, n_test=5_000, batch_size=32, lr=1e-4, epochs=2000,
                    # the official threshold only: the annealed rule goes unused (it enters the keys)
                    schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.01, decays=2, min_rounds=2, decay_patience=2),
                ),
                seeds=tuple(range(1, 21)),
            ),
            routing_blocks=23, routing_tokens=None, passage=100, mi_distances=100, mi_fit=(1, 50),
        ),
    )  # fmt: skip
