"""The ``cpu`` profile (the default): every notebook on 2 CPU cores, without a GPU or internet.

Its settings in the order of the notebooks; docs/profiles.md#cpu says which measurement chose
each number. ``cpu-long`` (:mod:`prismlib.profiles.cpu_long`) is its twin with every LSTM seed,
which this profile now has itself (the name the installments were trained under).
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
    PretrainSettings,
    PrismSettings,
    ProbeSettings,
    Profile,
    SpectralSettings,
    TaskSize,
)

CPU_PATH_ROUNDS = 140
"""Rounds (quarter passes) at the start rate of the cpu recipe's fixed path (work B): the
doubling check's choice (docs/profiles.md#cpu-lstm-recipe)."""

PRETRAIN_STEPS = 8054
"""Steps of the pretraining: four passes over the corpus's 64,429 training inputs, 32 a step
(the pilot's cap on repeated text)."""
PRETRAINING = PretrainSettings(
    size="4x256", seq_len=128, batch_size=32, lr=1e-3, warmup_steps=500, total_steps=PRETRAIN_STEPS, long_seq_len=512
)
"""The small BERT of issue 76, as the second pilot chose it (docs/benchmarks.md, "The second
pilot's result"): 4 x 256 for four passes over the corpus (64,429 inputs of 128 tokens, 32 a
step), the rate decaying to 0, BERT's last 10% of steps at 512 tokens; ``cpu-long``'s installments
train it. Its done record fails the premise gate at 512 tokens (+1.03 nats): :data:`CONTINUATION`."""
CONTINUATION = PretrainSettings(
    size="4x256", seq_len=512, batch_size=8, lr=5e-4, warmup_steps=100, total_steps=1611, heldout_inputs=64, base=PRETRAINING
)
"""The continuation at 512 tokens of :data:`PRETRAINING`'s done record, by the rule committed
before it ran (docs/benchmarks.md, "A continuation at 512 tokens"): 20% of the schedule's steps
at 8 x 512, a fresh AdamW re-warmed to half the peak rate, decaying to 0; its held-out checks
the 64 inputs of 512 tokens the base's long phase checked. It passed the premise gate (+2.29 nats
at 512 tokens); section 4 runs on it (``prism.pretrained_encoder``)."""


def get_config() -> Profile:
    """The ``cpu`` profile."""
    return Profile(
        name="cpu", encoder="minilm", window=512, device="auto", seed=0, data="offline",
        # Notebook 01 (section 2, App. A and D).
        spectral=SpectralSettings(
            article=0, neuron=None, appendix_a_lengths=(16, 64, 128, 256, 510, 512, 1024, 4096),
            timing_lengths=(32, 64, 128, 256, 512, 1024, 2048, 4096), timing_batch=8, timing_repeats=2,
        ),
        # Notebooks 02-03: probing (windows per split, of 512 tokens; topic's: one truncated post each); the MLM
        # probe in two buckets of target ranks, not a softmax over all targets: docs/profiles.md#cpu-probes
        probe=ProbeSettings(
            sizes={
                "pos": TaskSize(train=-1, val=-1, test=120, positions=128),
                "swda": TaskSize(train=400, val=-1, test=-1, positions=64),
                "topic": TaskSize(train=1200, val=300, test=600, positions=16),
                "mlm": TaskSize(train=-1, val=-1, test=-1, positions=0),
            },
            runs=3, max_epochs=30, patience=1, mlm_epochs=30, batch_size=64, encode_batch=8, mlm_vocab=500,
            mlm_buckets=((1, 500), (501, 2000)),
            workers=2,
        ),
        # Notebooks 03-04: the prism layer on the small BERT pretrained here (CONTINUATION, issue 76): every encoder
        # layer and its pretrained MLM head trained, as the paper's, the embeddings (tied to the decoder) frozen and
        # cached by the staged recipe, stopped by the annealed rule: docs/profiles.md#cpu-prism-training
        prism=PrismSettings(
            training=MLMRecipe(
                train_text="offline", train_articles_103=30, steps=400, batch_size=8, seq_len=512, lr=1e-3, recipe="staged",
                train_layers=4, train_inputs=None, mask_versions=1, head_epochs=0, head_lr=1e-3, head_batch=512, warmup=20,
                clip=1.0, attention_dropout=0.0, stop_articles=6, round_steps=20,
                schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=2, min_rounds=2, decay_patience=1),
            ),
            checkpoint_every=20, every_layer=True,
            # Table 1's probes at a scale that can carry it: docs/profiles.md#cpu-prism-probes
            sizes={
                "pos": TaskSize(train=-1, val=-1, test=120, positions=128),
                "swda": TaskSize(train=100, val=20, test=-1, positions=64),
                "topic": TaskSize(train=160, val=40, test=80, positions=32),
            },
            # threads=None: the notebook process encodes and scores with both cores (the arms train in
            # single-thread processes of their own; meanwhile the notebook waits)
            span=(200, 300), eval_inputs=64, eval_stride=510, eval_batch=8, bootstrap=1000, threads=None,
            # three training seeds of every trained arm (the seeds rule's minimum, the paper's 3 trials):
            # docs/profiles.md#cpu-prism-seeds
            seeds=(0, 1, 2), pretrained_encoder=True,
        ),
        # Notebooks 05-08 (work B): the recipe study's 96/96/96 model, on one fixed learning-rate path (lr 20 for
        # CPU_PATH_ROUNDS rounds, the doubling check's choice, then four divisions by 4): docs/profiles.md#cpu-lstm-recipe
        lstm=LSTMSettings(
            recipe=LSTMRecipe(
                emb=96, hidden=96, layers=3, dropout=0.25, dropouth=0.25, dropouti=0.25, dropoute=0.0, wdrop=0.0,
                optimizer="anneal", lr=20.0, clip=0.25, wdecay=1.2e-6, alpha=0.0, beta=0.0, nonmono=5,
                batch_size=20, bptt=35, epochs=CPU_PATH_ROUNDS + 6, steps_per_epoch=None, checks_per_pass=4, eval_batch=20,
                valid_tokens=None, test_tokens=None, cutoffs=(2000, 6000), average_last=0, fixed_path=True,
                # on the fixed path decay_tolerance and decay_patience go unused (they enter the keys)
                schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.002, decays=4, min_rounds=CPU_PATH_ROUNDS, decay_patience=1),
            ),
            # three paired seeds of every model (the seeds rule), trained once and committed as run records
            # (results/cpu/runs/): docs/profiles.md#cpu-lstm-seeds
            seeds=(0, 1, 2), all_seeds=True,
            bootstrap=1000, memory_contexts=100, context=70, threads=1, grid="slides", records=True,
        ),
        # Notebook 09: two runs of each fixed filter; the learned gate and its all-pass control
        # keep BeyondSettings' five.
        beyond=BeyondSettings(runs=2),
        # Notebook 10 (45 minutes from an empty cache, mostly Dyck training): 128 units at Adam 1e-3, at most 80
        # passes, a tighter annealed rule than the first one measured: docs/profiles.md#cpu-dyck
        iclr=ICLRSettings(
            dyck=DyckSettings(
                recipe=DyckRecipe(
                    hidden=128, n_train=2000, n_validation=500, n_test=2000, batch_size=32, lr=1e-3, epochs=80, anneal=True, bucket=True,
                    schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.005, decays=3, min_rounds=2, decay_patience=2),
                ),
                seeds=(1, 2, 3),
            ),
            routing_blocks=24, routing_tokens=None, passage=100, mi_distances=100, mi_fit=(1, 50),
        ),
        pretrain=CONTINUATION,
    )  # fmt: skip
