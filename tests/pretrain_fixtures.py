"""The tiny pretraining recipe shared by the installment and encoder tests: both phases of
BERT's schedule in 8 steps of generated text, seconds on one thread."""

from __future__ import annotations

from prismlib.profiles import PretrainSettings

SETTINGS = PretrainSettings(
    "1x32h2", seq_len=32, batch_size=8, lr=3e-3, warmup_steps=3, total_steps=8, long_seq_len=64, long_share=0.25,
    threads=1, eval_every=4, checkpoint_every=4, heldout_inputs=16,
)  # fmt: skip
"""A tiny recipe with both phases: steps 0-5 at 32 tokens, 6-7 at 64 (4 inputs a step), done after 8."""
CONTINUATION = PretrainSettings(
    "1x32h2", seq_len=64, batch_size=4, lr=1e-3, warmup_steps=1, total_steps=2, threads=1, eval_every=2, checkpoint_every=2,
    heldout_inputs=8, base=SETTINGS,
)  # fmt: skip
"""A continuation of SETTINGS at its long length: 2 steps of 4 x 64 from the done base, its held
out the 8 inputs of 64 tokens the base's long phase checks (16 x 32 // 64)."""
CLEAN = "0" * 40
"""A clean commit for the provenance the tests patch in (a committed state needs committed code)."""
