"""The ``smoke`` profile: every code path of every notebook in about a minute each on 2 CPU
cores (CI and nbval); nothing converges and no claim is meant to hold.
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
    """The ``smoke`` profile."""
    return Profile(
        name="smoke", encoder="minilm", window=512, device="cpu", seed=0, data="offline",
        # Notebook 01 (section 2, App. A and D).
        spectral=SpectralSettings(
            article=0, neuron=None, appendix_a_lengths=(16, 64, 128, 256, 510, 512, 1024, 4096),
            timing_lengths=(64, 256, 512), timing_batch=2, timing_repeats=2,
        ),
        # Notebooks 02-03: probing (windows per split).
        probe=ProbeSettings(
            sizes={
                "pos": TaskSize(train=8, val=3, test=4, positions=32),
                "swda": TaskSize(train=8, val=4, test=4, positions=32),
                "topic": TaskSize(train=40, val=12, test=24, positions=8),
                "mlm": TaskSize(train=6, val=2, test=3, positions=0),
            },
            runs=2, max_epochs=3, patience=1, mlm_epochs=3, batch_size=64, encode_batch=8, sweep_layers=(0, 3),
            mlm_vocab=100, mlm_buckets=((1, 50), (51, 0)),
        ),
        # Notebooks 03-04: the cpu profile's staged recipe on a few inputs, a step per round.
        prism=PrismSettings(
            training=MLMRecipe(
                train_text="offline", train_articles_103=30, steps=4, batch_size=1, seq_len=512, lr=1e-4, recipe="staged",
                train_layers=2, train_inputs=4, mask_versions=1, head_epochs=1, head_lr=1e-3, head_batch=64, warmup=1, clip=1.0,
                attention_dropout=0.0, stop_articles=1, round_steps=1,
                schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=1, min_rounds=0, decay_patience=1),
            ),
            checkpoint_every=1, every_layer=True,
            sizes={
                "pos": TaskSize(train=2, val=1, test=2, positions=64),
                "swda": TaskSize(train=2, val=1, test=2, positions=64),
                "topic": TaskSize(train=12, val=4, test=4, positions=16),
            },
            # two training seeds: every seed code path runs (the seed-level intervals need two); the
            # seeds gate (three) fails, visibly
            span=(200, 300), eval_inputs=4, eval_stride=510, eval_batch=4, bootstrap=200, seeds=(0, 1), threads=1,
        ),
        # Notebooks 05-08 (work B): tiny models on the first tokens of PTB with the cpu recipe's
        # schedule (rounds of 4 steps, at most 6); they stop at their cap or "did not learn".
        lstm=LSTMSettings(
            recipe=LSTMRecipe(
                emb=16, hidden=32, layers=3, dropout=0.1, dropouth=0.1, dropouti=0.1, dropoute=0.1, wdrop=0.2,
                optimizer="anneal", lr=20.0, clip=0.25, wdecay=1.2e-6, alpha=2.0, beta=1.0, nonmono=5,
                batch_size=8, bptt=20, epochs=6, steps_per_epoch=4, eval_batch=4, valid_tokens=1000, test_tokens=2000,
                cutoffs=(200, 1000), average_last=0,
                schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=2, min_rounds=2, decay_patience=1),
            ),
            seeds=(0, 1), bootstrap=200, memory_contexts=8, context=30, threads=1, memory_fit=(2, 20),
        ),
        # Notebook 09: two learned-gate runs (smoke's profile-ordering claim is not testable by
        # the runs rule).
        beyond=BeyondSettings(runs=2, gate_runs=2, spectrum_texts=4),
        # Notebook 10: every code path in seconds; nothing converges.
        iclr=ICLRSettings(
            dyck=DyckSettings(
                recipe=DyckRecipe(
                    hidden=16, n_train=64, n_validation=32, n_test=96, batch_size=16, lr=1e-2, epochs=4, anneal=True, bucket=True,
                    schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.01, decays=2, min_rounds=1, decay_patience=2),
                ),
                seeds=(1, 2),
            ),
            routing_blocks=8, routing_tokens=2000, passage=60, mi_distances=20, mi_fit=(1, 10), mi_chunks=10, mi_tokens=50_000,
            bootstrap=200,
        ),
    )  # fmt: skip
