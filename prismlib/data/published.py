"""The published numbers the notebooks compare with, each with where it is printed.

One place for what the papers and the slides report, so a notebook reads a number instead
of typing it again. Every constant is listed in :data:`SOURCES` with its source: the
table, figure or slide it is copied from. The numbers are copied as printed (rounding
included) and never computed here; this module imports nothing of the library.

Work A: *Prism* (the paper), Table 3a (:data:`TABLE_3A`), Table 1 (:data:`TABLE_1`) and
Appendix B's sector, original-encoder and every-layer accuracies (:data:`APP_B1`,
:data:`APP_B2`, :data:`APP_B3`). Work B: the slides *Timescale-dependent representation
learning in language models* (Mahto), experiments 1-4 (:data:`EXP1` ... :data:`EXP4`, with
the row titles the slides print), and the ICLR 2021 version's PTB test perplexities
(:data:`ICLR_PTB_TEST_PPL`).
"""

from __future__ import annotations

import math

TABLE_3A: list[tuple[str, str, str, str]] = [
    ("LOW", "Document", "256–∞", "0–1"),
    ("MID-LOW", "Paragraph", "32–256", "2–8"),
    ("MID", "Sentence", "8–32", "9–33"),
    ("MID-HIGH", "Clause", "2–8", "34–129"),
    ("HIGH", "Word", "1–2", "130–511"),
]
"""Prism, Table 3a as printed: (filter, example scale, period in tokens, DCT index) per band."""

TABLE_1: dict[tuple[str, str], float] = {
    ("topic", "baseline"): 32.21, ("topic", "prism"): 51.01,
    ("swda", "baseline"): 47.09, ("swda", "prism"): 54.02,
    ("pos", "baseline"): 95.86, ("pos", "prism"): 94.41,
}  # fmt: skip
"""Prism, Table 1: probe accuracy (%) per (task, model); ``baseline`` is BERT after the same
continued MLM training, ``prism`` is BERT + Prism (the App. B.2 and B.3 comparisons quote
these at one decimal)."""

APP_B1: dict[tuple[str, str], float | None] = {
    ("LOW", "topic"): 45.1, ("HIGH", "topic"): 5.3,
    ("HIGH", "pos"): 84.1, ("LOW", "pos"): 16.8,
    ("LOW", "swda"): None, ("HIGH", "swda"): None,
}  # fmt: skip
"""Prism, App. B.1: accuracy (%) of BERT + Prism's LOW or HIGH sector probed alone, per
(sector, task); ``None``: not reported (dialog acts)."""

APP_B2: dict[str, float] = {"pos": 94.6, "swda": 41.8, "topic": 28.9}
"""Prism, App. B.2: accuracy (%) of the original BERT, before continued MLM training, per task."""

APP_B3: dict[str, float] = {"topic": 45.2, "swda": 51.8, "pos": 94.0}
"""Prism, App. B.3: accuracy (%) with a prism layer after every layer, per task."""

EXP1: dict[tuple[str, int | None], float] = {
    ("baseline", None): 61.70,
    ("layerwise", 20): 60.70, ("layerwise", 70): 61.10, ("layerwise", 200): 60.90,
    ("gradient", 20): 60.73, ("gradient", 70): 61.17, ("gradient", 200): 61.28,
    ("inverse", 70): 61.12,
}  # fmt: skip
"""Slides, experiment 1 (chrono initialisation): test perplexity per (variant, T)."""

EXP1_TITLES: dict[str, str] = {
    "baseline": "1. Baseline",
    "layerwise": "2. Chrono layers initialization (L1 log(T-1), L2 log(T/2-1), L3 log(T/4-1))",
    "gradient": "3. Chrono gradient initialization (all layers log(1 -> T))",
    "inverse": "4. Inverse chrono layers initialization (L1 log(T/4-1), L2 log(T/2-1), L3 log(T-1))",
}
"""Slides, experiment 1: the 'model type' of each row, per variant."""

SLIDES_BASELINE = 61.70
"""Slides, experiments 1-3: the baseline AWD-LSTM's test perplexity (row 1 of each table)."""

EXP2: dict[tuple[str, int], float] = {
    ("layerwise", 20): 61.71, ("layerwise", 70): 65.53, ("layerwise", 200): 68.25,
    ("gradient", 20): 61.02, ("gradient", 70): 64.45, ("gradient", 200): 67.23,
}  # fmt: skip
"""Slides, experiment 2 (fixed forget-gate biases): test perplexity per (variant, T)."""

EXP2_TITLES: dict[str, str] = {
    "layerwise": "2. Fixed bias using chrono layers initialization (L1 log(T-1), L2 log(T/2-1), L3 log(T/4-1))",
    "gradient": "3. Fixed bias using chrono gradient initialization (all layers log(1 -> T-1))",
}
"""Slides, experiment 2: the 'model type' of each row, per variant."""

EXP3: dict[tuple[str, int], float] = {
    ("layerwise", 20): 61.71, ("layerwise", 70): 65.53,
    ("middle", 20): 60.61, ("middle", 70): 63.15,
    ("inverse", 20): 60.54, ("inverse", 70): 63.48,
}  # fmt: skip
"""Slides, experiment 3 (the layer with the longest timescale): test perplexity per (variant, T)."""

EXP3_TITLES: dict[str, str] = {
    "layerwise": "2. First layer - longest timescale (L1 T, L2 T/2, L3 T/4)",
    "middle": "3. Middle layer - longest timescale (L1 T/4, L2 T, L3 T/2)",
    "inverse": "4. Last layer - longest timescale (L1 T/4, L2 T/2, L3 T)",
}
"""Slides, experiment 3: the 'model type' of each row, per variant."""

EXP4: dict[str, tuple[float, str, str]] = {
    "baseline": (61.40, "61.42 +/- 1.52", "61.64 +/- 0.28"),
    "layer2 X=5": (60.17, "60.19 +/- 1.50", ""), "layer2 X=10": (59.88, "59.90 +/- 1.49", ""),
    "layer2 X=20": (59.97, "60.00 +/- 1.50", ""), "layer2 X=30": (60.09, "60.12 +/- 1.49", ""),
    "layer2 X=70": (60.71, "60.73 +/- 1.52", ""),
    "mod5": (60.16, "60.18 +/- 1.50", "60.34 +/- 0.15"), "mod8": (59.88, "59.89 +/- 1.49", "59.83 +/- 0.09"),
    "pareto": (59.52, "59.55 +/- 1.48", "59.66 +/- 0.17"), "published": (math.nan, "", ""), "official": (math.nan, "", ""),
}  # fmt: skip
"""Slides, experiment 4 (customised layer-2 timescales), as printed: model -> (test perplexity,
bootstrapped "mean +/- sd", over 6 seeds "mean +/- sd"); the ICLR rows have no slide number (NaN)."""

EXP4_TITLES: dict[str, str] = {
    "baseline": "1. Baseline",
    "layer2 X=5": "2. L2: bias log(5-1)", "layer2 X=10": "3. L2: bias log(10-1)", "layer2 X=20": "4. L2: bias log(20-1)",
    "layer2 X=30": "5. L2: bias log(30-1)", "layer2 X=70": "6. L2: bias log(70-1)",
    "mod5": "7. L2: Modular I (MOD5): half 1->20, half 70", "mod8": "8. L2: Modular II (MOD8): 80% 1->20, 20% 70",
    "pareto": "9. L2: Pareto (1/x^1.54)", "published": "10. Published: L1 T in {3, 4}, L2 inverse-gamma(0.56)",
    "official": "11. Official code: as 10, L2 grid with T = 0, all L1-2 biases frozen",
}  # fmt: skip
"""Slides, experiment 4: the 'model type' of rows 1-9; rows 10-11 are ours (the ICLR variants)."""

ICLR_PTB_TEST_PPL: dict[str, float] = {"baseline": 58.98, "official": 57.58}
"""ICLR 2021 (Mahto et al.), PTB test perplexity of the baseline and the multi-timescale model, as
asserted by the official code (``model_evaluation.py``); a separately trained AWD-LSTM baseline."""

SOURCES: dict[str, str] = {
    "TABLE_3A": "Prism, Table 3a (bands: example scale, period, DCT index)",
    "TABLE_1": "Prism, Table 1 (probe accuracy: BERT and BERT + Prism on topic, dialog acts, POS)",
    "APP_B1": "Prism, App. B.1 (the LOW and HIGH sectors of BERT + Prism probed alone)",
    "APP_B2": "Prism, App. B.2 (the original BERT, before continued training)",
    "APP_B3": "Prism, App. B.3 (a prism layer after every layer)",
    "EXP1": "slides, experiment 1 table ('Chrono initialization'): test perplexity",
    "EXP1_TITLES": "slides, experiment 1 table: 'model type' column",
    "SLIDES_BASELINE": "slides, experiments 1-3 tables: row '1. Baseline'",
    "EXP2": "slides, experiment 2 table ('Fixed forget gates biases'): test perplexity",
    "EXP2_TITLES": "slides, experiment 2 table: 'model type' column",
    "EXP3": "slides, experiment 3 table ('Variation of timescale across layers'): test perplexity",
    "EXP3_TITLES": "slides, experiment 3 table: 'model type' column",
    "EXP4": "slides, experiment 4 table ('Customize timescale in layers'): test ppl, bootstrapped, over 6 seeds",
    "EXP4_TITLES": "slides, experiment 4 table: 'model type' column (rows 10-11: ours, the ICLR 2021 variants)",
    "ICLR_PTB_TEST_PPL": "ICLR 2021, PTB test perplexity, as asserted by the official model_evaluation.py",
}
"""Each constant of this module -> the table, figure or slide it is copied from."""
