# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · Fixed forget-gate biases (experiments 2 and 3)
#
# *Timescale-dependent representation learning in language models* (Mahto), slides
# **experiment 2** ("Fixed forget gates biases") and **experiment 3** ("Variation of
# timescale across layers").
#
# Experiment 1 (notebook 05) found that training overrides a chrono *initialisation*.
# Here the same values are **fixed**: the input- and forget-gate biases of every unit
# keep their chrono values for the whole of training while everything else trains. The
# slides saw a *T-dependent pattern*: with layer-wise biases (layer 1 longest) test
# perplexity rises from 61.71 (T = 20) to 65.53 (T = 70) and 68.25 (T = 200); the same for
# the gradient assignment. Experiment 3 moves the longest timescale to the middle or the
# last layer and finds that **a small timescale in the first layer works best** (60.54 -
# 60.61 at T = 20 against 61.71).
#
# Fixed means exact: `prismlib.lstm.LSTMLayer` computes its biases as
# `where(fixed_mask, fixed_value, trainable)` at every forward and hands them to the fused
# LSTM kernel, so the fixed entries are bit-identical after any number of optimiser steps
# (tests/test_lstm.py checks it with weight decay on).

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from prismlib.claims import Claim, render
from prismlib.data.ptb import load_ptb_corpus
from prismlib.lstm import RunSpec, runs_table, seed_spread, train_all, verdict
from prismlib.plots import save_figure, save_table, set_theme
from prismlib.profiles import get_profile

P = get_profile(profile)
S = P.lstm
set_theme()
t_start = time.perf_counter()
corpus = load_ptb_corpus()
seed = S.seeds[0]
print(f"profile={P.name}: layers {[S.hidden] * (S.layers - 1) + [S.emb]}, {S.optimizer}, seeds of the baseline {S.seeds}")

# %% [markdown]
# ## Training
#
# The baseline (every seed) comes from notebook 05's checkpoints when they exist and is
# trained otherwise. Fixed variants: layer-wise ($T$, $T/2$, $T/4$: first layer
# longest) and gradient for $T \in \{20, 70, 200\}$; middle layer longest ($T/4$, $T$,
# $T/2$) and last layer longest ($T/4$, $T/2$, $T$, the inverse layer-wise assignment)
# for $T \in \{20, 70\}$.

# %%
baseline = [RunSpec("baseline", seed=s) for s in S.seeds]
fixed = [RunSpec(v, float(T), fixed=True, seed=seed) for v in ("layerwise", "gradient") for T in (20, 70, 200)]
fixed += [RunSpec(v, float(T), fixed=True, seed=seed) for v in ("middle", "inverse") for T in (20, 70)]
runs = train_all(baseline + fixed, corpus, S, P.device)
table = runs_table(list(runs.values()), S.bootstrap)
base_ppl = table.loc[table.variant == "baseline", "test ppl"]
base_mean, base_sd = seed_spread(base_ppl)
ppl = {(r.variant, r["T"]): r["test ppl"] for _, r in table.iterrows() if r.variant != "baseline"}
table[["model", "seed", "val ppl", "test ppl", "bootstrap mean", "bootstrap sd", "train tokens"]]

# %% [markdown]
# ## Experiment 2, in the slides' layout

# %%
SLIDES_2 = {
    ("layerwise", 20): 61.71, ("layerwise", 70): 65.53, ("layerwise", 200): 68.25,
    ("gradient", 20): 61.02, ("gradient", 70): 64.45, ("gradient", 200): 67.23,
}  # fmt: skip
TITLES_2 = {
    "layerwise": "2. Fixed bias using chrono layers initialization (L1 log(T-1), L2 log(T/2-1), L3 log(T/4-1))",
    "gradient": "3. Fixed bias using chrono gradient initialization (all layers log(1 -> T-1))",
}


def baseline_row() -> dict:
    return {"model type": "1. Baseline", "T": "", "test ppl (ours)": base_mean, "seed sd": base_sd,
            "slides": 61.70, "vs baseline (2 seed sd)": ""}  # fmt: skip


def row(title: str, variant: str, T: int, slides: float) -> dict:
    v = ppl[(variant, float(T))]
    return {"model type": title, "T": str(T), "test ppl (ours)": v, "seed sd": np.nan, "slides": slides,
            "vs baseline (2 seed sd)": verdict(v, base_ppl)}  # fmt: skip


exp2 = pd.DataFrame([baseline_row()] + [row(TITLES_2[v], v, T, s) for (v, T), s in SLIDES_2.items()])
save_table(exp2, "exp2_fixed_bias", P.name)
exp2

# %% [markdown]
# ## Experiment 3: where the longest timescale sits

# %%
SLIDES_3 = {
    ("layerwise", 20): 61.71, ("layerwise", 70): 65.53,
    ("middle", 20): 60.61, ("middle", 70): 63.15,
    ("inverse", 20): 60.54, ("inverse", 70): 63.48,
}  # fmt: skip
TITLES_3 = {
    "layerwise": "2. First layer - longest timescale (L1 T, L2 T/2, L3 T/4)",
    "middle": "3. Middle layer - longest timescale (L1 T/4, L2 T, L3 T/2)",
    "inverse": "4. Last layer - longest timescale (L1 T/4, L2 T/2, L3 T)",
}
exp3 = pd.DataFrame([baseline_row()] + [row(TITLES_3[v], v, T, s) for (v, T), s in SLIDES_3.items()])
save_table(exp3, "exp3_layer_placement", P.name)
exp3

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, (title, variants, Ts) in zip(
    axes,
    [("Experiment 2: fixed biases", ("layerwise", "gradient"), (20, 70, 200)),
     ("Experiment 3: longest timescale in layer ...", ("layerwise", "middle", "inverse"), (20, 70))],
):  # fmt: skip
    for v in variants:
        label = {"layerwise": "first (layer-wise)", "middle": "middle", "inverse": "last (inverse)"}.get(v, v)
        ax.plot(Ts, [ppl[(v, float(T))] for T in Ts], marker="o", label=label if "3" in title else v)
    ax.axhspan(base_mean - 2 * base_sd, base_mean + 2 * base_sd, color="0.85", label="baseline +/- 2 seed sd")
    ax.axhline(base_mean, color="0.4", lw=1)
    ax.set_xscale("log")
    ax.set_xticks(Ts, [str(T) for T in Ts])
    ax.set_xlabel("T")
    ax.set_title(title)
    ax.legend(fontsize=8)
axes[0].set_ylabel(f"test perplexity ({P.name} profile)")
save_figure(fig, "exp2_exp3_fixed_bias", P.name)
plt.show()

# %% [markdown]
# ## What held at this scale
#
# Our models are far smaller and trained far shorter than the slides' (notebook 05 says
# how much); perplexities are correspondingly higher. A difference counts only outside
# twice the baseline's seed standard deviation; single-seed variants carry their own
# (unmeasured) seed noise on top, so treat "yes" with care when the margin is small.

# %%
def rises(variant: str, Ts=(20, 70, 200)) -> bool:
    values = [ppl[(variant, float(T))] for T in Ts]
    return all(b > a for a, b in zip(values, values[1:])) and values[-1] - values[0] > 2 * base_sd


def t_gap_in_noise(variant: str) -> bool:
    return abs(ppl[(variant, 200.0)] - ppl[(variant, 20.0)]) <= 2 * base_sd


def series(variant: str, Ts=(20, 70, 200)) -> str:
    return ", ".join(f"{ppl[(variant, float(T))]:.1f}" for T in Ts)


first20, others20 = ppl[("layerwise", 20.0)], [ppl[("middle", 20.0)], ppl[("inverse", 20.0)]]
first70, others70 = ppl[("layerwise", 70.0)], [ppl[("middle", 70.0)], ppl[("inverse", 70.0)]]
gaps = [a - o for a, others in ((first20, others20), (first70, others70)) for o in others]
claims = [
    Claim(f"Fixed layer-wise biases: perplexity rises with T beyond the seed noise "
     f"({series('layerwise')}; 2 seed sd = {2 * base_sd:.2f})",
     rises("layerwise"), t_gap_in_noise("layerwise")),
    Claim(f"Fixed gradient biases: perplexity rises with T beyond the seed noise "
     f"({series('gradient')})", rises("gradient"), t_gap_in_noise("gradient")),
    Claim("A small timescale in the first layer works best: at T = 20 and T = 70 the first-layer-longest model is worse "
     "than both others by more than 2 seed sd",
     all(g > 2 * base_sd for g in gaps), any(abs(g) <= 2 * base_sd for g in gaps)),
    Claim(f"Fixed T = 20 layer-wise biases do not hurt (within noise of or below the baseline): "
     f"{exp2.iloc[1]['vs baseline (2 seed sd)']}", exp2.iloc[1]["vs baseline (2 seed sd)"] != "higher"),
]  # fmt: skip
display(Markdown(render(claims)))
print(f"baseline {base_mean:.2f} +/- {base_sd:.2f} (seed sd over {len(base_ppl)} seeds)")
print(f"notebook ran in {time.perf_counter() - t_start:.0f} s on profile {P.name}")
