# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
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
# (tests/lstm/test_model.py checks it with weight decay on).

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper
executor = os.environ.get("PRISMLIB_EXECUTOR", "local")  # where missing models train: inline | local | slurm

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from prismlib.claims import report
from prismlib.data.published import EXP2, EXP2_TITLES, EXP3, EXP3_TITLES, SLIDES_BASELINE
from prismlib.lstm import (
    WorkBClaims,
    bigram,
    doubling_check,
    first_layer_worse_by,
    first_layer_worst,
    grid,
    no_harm,
    perplexity,
    perplexity_claim,
    plot_learning_curves,
    published_margin,
    recipe_summary,
    rises,
    runs_table,
    save_learning_curves,
    timescales,
    trained_with_references,
    work_b_start,
)
from prismlib.plots import save_figure, save_table

t_start = time.perf_counter()
P, S, corpus, test_ids = work_b_start(profile)
sizes = [S.hidden] * (S.layers - 1) + [S.emb]
print(f"profile={P.name}: {recipe_summary(S)}; seeds {S.seeds}; test on {len(test_ids):,} tokens; fixed variants freeze {S.freeze} biases")

# %% [markdown]
# The fixed biases of each variant at this profile's layer sizes, as the range of
# timescales $T = 1 + e^{b_f}$ per layer (the seed of the first model; 2 decimals):

# %% tags=["nbval-check-output"]
fixed = grid.experiment("exp2", P) + grid.experiment("exp3", P)
ranges = []
for spec in [s for s in fixed if s.seed == S.seeds[0]]:  # drawn as prismlib.lstm.build_model draws them
    biases = timescales.variant_forget_biases(spec.variant, sizes, spec.T, torch.Generator().manual_seed(10_000 + spec.seed))
    ranges.append(
        {
            "variant": spec.label,
            **{
                f"L{layer + 1} T": "{:.2f}-{:.2f}".format(*timescales.timescale_from_bias(b.double()).aminmax())
                for layer, b in enumerate(biases)
            },
        }
    )
print(pd.DataFrame(ranges).to_string(index=False))

# %% [markdown]
# ## References: unigram, bigram (the gate of every claim)
#
# The add-one unigram and the interpolated Kneser-Ney bigram of the whole PTB training
# split (`prismlib.lstm.bigram`; notebook 05 says why), scored on exactly the test tokens the
# LSTMs predict. Every perplexity claim below needs the baseline clearly below the
# bigram. Perplexities to 1 decimal:

# %% tags=["nbval-check-output"]
refs, uni_nll, kn_nll = bigram.ptb_references(corpus.train, corpus.valid, test_ids, len(corpus.vocab), S.eval_batch)
print(refs.round(1).to_string(index=False))

# %% [markdown]
# ## Training
#
# Every model is a job of `prismlib.jobcache` (notebook 05 says how the grid is trained and
# cached); the baseline (every seed) is the same job as in notebook 05. Fixed variants:
# layer-wise ($T$, $T/2$, $T/4$: first layer longest) and gradient for $T \in \{20, 70, 200\}$; middle layer longest ($T/4$, $T$,
# $T/2$) and last layer longest ($T/4$, $T/2$, $T$, the inverse layer-wise assignment)
# for $T \in \{20, 70\}$.

# %%
baseline = grid.experiment("baseline", P)
runs = trained_with_references(baseline + fixed, P, refs, executor)
table = runs_table(list(runs.values()), S.bootstrap)
BASE = "baseline (seed mean)"
checks = WorkBClaims(
    runs,
    key=lambda s: BASE if s.variant == "baseline" else (s.variant, int(s.T)),
    reference=BASE,
    share=S.converge_share,
    tolerance=S.converge_tolerance,
    doubling=doubling_check(P, executor),  # the convergence gate of a fixed path (notebook 05)
)
seeds = checks.end
nll = seeds.nll
base_ppl, base_sd = seeds.perplexity(BASE), seeds.seed_sd(BASE)
ppl = {key: seeds.perplexity(key) for key in nll if key != BASE}
delta = {key: seeds.delta(key) for key in nll if key != BASE}
table[["model", "seed", "val ppl", "test ppl", "bootstrap mean", "bootstrap sd", "train tokens", "stopped"]]

# %% [markdown]
# ## Learning curves
#
# Validation perplexity during training (notebook 05 says what the model and
# effect-stability gates read off these curves; the key under each title says what the
# marks are).

# %%
save_learning_curves(runs, P.name)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True, layout="constrained")
for ax, (title, variants) in zip(axes, [("Experiment 2", ("baseline", "layerwise", "gradient")),
                                         ("Experiment 3", ("baseline", "middle", "inverse"))]):  # fmt: skip
    plot_learning_curves(
        ax,
        {s: r for s, r in runs.items() if s.variant in variants},
        lambda s: "baseline" if s.variant == "baseline" else s.label,
        f"{title} ({P.name})",
    )
save_figure(fig, "exp2_exp3_learning_curves", P.name)
plt.show()

# %% [markdown]
# ## Experiment 2, in the slides' layout
#
# "Δ vs baseline" is the model's perplexity minus the baseline's seed mean, with its 95%
# interval from a paired bootstrap over 100-token chunks of PTB test (10,000 resamples);
# "seed sd" is the spread of a model's seeds where it has several (reported here; in the
# claims it joins each contrast's interval). "Δ%" puts our
# difference as a share of our baseline beside the slides' as a share of theirs (61.70).
# The slides' numbers and row titles are `prismlib.data.published.EXP2` and `EXP2_TITLES`
# (experiment 3: `EXP3`, `EXP3_TITLES`).

# %%
BASELINE_ROW = {
    "model type": "1. Baseline",
    "T": "",
    "test ppl (ours)": base_ppl,
    "seed sd": base_sd,
    "seeds": seeds.seeds(BASE),
    "Δ vs baseline [95% CI] (ours)": "",
    "Δ% (ours)": np.nan,
    "slides": SLIDES_BASELINE,
    "Δ% (slides)": np.nan,
}
ROWS = {
    key: {
        "T": str(key[1]),
        "test ppl (ours)": ppl[key],
        "seed sd": seeds.seed_sd(key),
        "seeds": seeds.seeds(key),
        "Δ vs baseline [95% CI] (ours)": str(delta[key]),
        "Δ% (ours)": 100 * delta[key].effect / base_ppl,
    }
    for key in ppl
}
exp2 = pd.DataFrame(
    [BASELINE_ROW]
    + [
        {"model type": EXP2_TITLES[v], **ROWS[(v, T)], "slides": theirs, "Δ% (slides)": 100 * (theirs - SLIDES_BASELINE) / SLIDES_BASELINE}
        for (v, T), theirs in EXP2.items()
    ]
)
save_table(exp2, "exp2_fixed_bias", P.name)
exp2

# %% [markdown]
# ## Experiment 3: where the longest timescale sits

# %%
exp3 = pd.DataFrame(
    [BASELINE_ROW]
    + [
        {"model type": EXP3_TITLES[v], **ROWS[(v, T)], "slides": theirs, "Δ% (slides)": 100 * (theirs - SLIDES_BASELINE) / SLIDES_BASELINE}
        for (v, T), theirs in EXP3.items()
    ]
)
save_table(exp3, "exp3_layer_placement", P.name)
exp3

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True, layout="constrained")
for ax, (title, variants, Ts) in zip(
    axes,
    [
        ("Experiment 2: fixed biases", ("layerwise", "gradient"), (20, 70, 200)),
        ("Experiment 3: the layer with the longest T", ("layerwise", "middle", "inverse"), (20, 70)),
    ],
):
    for v in variants:
        label = {"layerwise": "first (layer-wise)", "middle": "middle", "inverse": "last (inverse)"}.get(v, v)
        sd = np.nan_to_num([seeds.seed_sd((v, T)) for T in Ts])  # 0 where a model has one seed
        ax.errorbar(Ts, [ppl[(v, T)] for T in Ts], yerr=sd, marker="o", capsize=3, label=label if "3" in title else v)
    ax.axhspan(base_ppl - base_sd, base_ppl + base_sd, color="0.85", label="baseline ± seed sd")
    ax.axhline(base_ppl, color="0.4", lw=1)
    ax.set_xscale("log")
    ax.set_xticks(Ts, [str(T) for T in Ts])
    ax.minorticks_off()  # the log axis' minor labels (3x10^1, ...) overlapped the T ticks
    ax.set_xlabel("T")
    ax.set_title(title)
    ax.legend(fontsize=8)
axes[0].set_ylabel(f"test perplexity ({P.name} profile; seed mean ± sd)")
fig.supxlabel(f"(the Kneser-Ney bigram, {perplexity(kn_nll):.0f}, lies far above the scale)", fontsize=8)
save_figure(fig, "exp2_exp3_fixed_bias", P.name)
plt.show()

# %% [markdown]
# ## Claims
#
# Each comparison is a perplexity difference on the same test tokens with one 95% interval:
# a paired bootstrap over 100-token chunks of PTB test, widened by the spread of the seeds'
# own perplexities where both models have several (`WorkBClaims.with_seeds`). "Rises with T" needs both
# steps (20 → 70 and 70 → 200) to rise; "a small timescale in the first layer works
# best" needs the first-layer-longest model to be worse than both others, so it is
# compared with the worse of the two (taken per resample), at T = 20 and at T = 70;
# "does not hurt" is a non-inferiority claim with the margin of notebook 05 (at most 2%
# above the baseline). Gates: the baseline is clearly below the Kneser-Ney bigram (a
# variant that a fixed timescale makes worse than the bigram is a result, not a reason
# to stop); every model a claim reads has converged (the model gate) and the claim's
# contrasts have stopped moving (the effect-stability gate); a contrast under 5% of the
# baseline's perplexity needs 3 seeds of each model (notebook 05). The contrast against the
# worse of two models keeps the chunk bootstrap alone (no single model per arm).
#
# **By the published effect.** The slides give the placement an effect size: how much worse
# the first-layer-longest model is than the middle- and the last-layer-longest at T = 20 and
# at T = 70 (`EXP3`, of their baseline `SLIDES_BASELINE`). A second row tests that size: each
# of the four gaps, as the same share of our baseline
# (`lstm.published_margin`), is the superiority margin of its own test (one model per arm, so
# each test is on the one interval with the seeds' spread), all four must hold
# (`lstm.first_layer_worse_by`); it carries the same gates as the row before, its
# effect-stability gate read from the same doubled twins. The margins are printed below the
# claims.

# %%
MARGIN = round(0.02 * base_ppl, 1)
vs_bigram = bigram.versus_bigram({k if k == BASE else f"{k[0]} T={k[1]} (fixed)": x for k, x in nll.items()}, kn_nll)
GATE = bigram.beats_bigram(vs_bigram, kn_nll, [BASE])
series = {v: " / ".join(f"{ppl[(v, T)]:.1f}" for T in (20, 70, 200)) for v in ("layerwise", "gradient")}
EXP3_MODELS = [(v, T) for v in ("layerwise", "middle", "inverse") for T in (20, 70)]
no_harm_20 = no_harm(("layerwise", 20), MARGIN, "ppl(layerwise T=20 fixed) - ppl(baseline)")
PLACEMENT = {  # each published gap of experiment 3 (first-layer-longest minus the other), as a share of our baseline
    (v, T): published_margin(EXP3[("layerwise", T)] - EXP3[(v, T)], SLIDES_BASELINE, base_ppl)
    for T in (20, 70)
    for v in ("middle", "inverse")
}
claims = [
    perplexity_claim(
        "06",
        f"Fixed layer-wise biases: perplexity rises with T (ours, T = 20 / 70 / 200: {series['layerwise']})",
        "Experiment 2: 'A T-dependent pattern among performances!' Fixed layer-wise biases: 61.71 / 65.53 / 68.25 "
        "(T = 20 / 70 / 200; baseline 61.70)",
        checks,
        [("layerwise", T) for T in (20, 70, 200)],
        rises("layerwise"),
        GATE,
        [(("layerwise", 70), ("layerwise", 20)), (("layerwise", 200), ("layerwise", 70))],
    ),
    perplexity_claim(
        "06",
        f"Fixed gradient biases: perplexity rises with T (ours: {series['gradient']})",
        "Experiment 2: fixed chrono-gradient biases 61.02 / 64.45 / 67.23 (T = 20 / 70 / 200)",
        checks,
        [("gradient", T) for T in (20, 70, 200)],
        rises("gradient"),
        GATE,
        [(("gradient", 70), ("gradient", 20)), (("gradient", 200), ("gradient", 70))],
    ),
    perplexity_claim(
        "06",
        "A small timescale in the first layer works best: at T = 20 and at T = 70 the first-layer-longest model is "
        f"worse than both the middle- and the last-layer-longest (ours, first / middle / last: T = 20 "
        f"{ppl[('layerwise', 20)]:.1f} / {ppl[('middle', 20)]:.1f} / {ppl[('inverse', 20)]:.1f}; T = 70 "
        f"{ppl[('layerwise', 70)]:.1f} / {ppl[('middle', 70)]:.1f} / {ppl[('inverse', 70)]:.1f})",
        "Experiment 3: 'Small timescale in first layer - most effective'. First / middle / last layer longest: "
        "T = 20 61.71 / 60.61 / 60.54; T = 70 65.53 / 63.15 / 63.48",
        checks,
        EXP3_MODELS,
        first_layer_worst,
        GATE,
    ),
    perplexity_claim(
        "06",
        "A small timescale in the first layer works best, by the slides' relative effect: the first-layer-longest model is "
        "worse than the middle- and the last-layer-longest by at least the slides' gaps scaled to our baseline ("
        + "; ".join(f"{v} T={T}: {m:.2f}" for (v, T), m in PLACEMENT.items())
        + " ppl; ours: "
        + "; ".join(f"{v} T={T}: {ppl[('layerwise', T)] - ppl[(v, T)]:+.2f}" for (v, T) in PLACEMENT)
        + ")",
        "Experiment 3: 'Small timescale in first layer - most effective'. First / middle / last layer longest: "
        "T = 20 61.71 / 60.61 / 60.54; T = 70 65.53 / 63.15 / 63.48 (baseline 61.70)",
        checks,
        EXP3_MODELS,
        first_layer_worse_by(PLACEMENT),
        GATE,
        [(("layerwise", T), (v, T)) for (v, T) in PLACEMENT],
    ),
    perplexity_claim(
        "06",
        f"Fixed T = 20 layer-wise biases do not hurt: at most 2% (+{MARGIN:.1f}) above the baseline seed mean "
        f"(ours: {ppl[('layerwise', 20)]:.1f} vs {base_ppl:.1f})",
        "Experiment 2: fixed layer-wise T = 20 61.71 vs baseline 61.70",
        checks,
        [BASE, ("layerwise", 20)],
        no_harm_20,
        GATE,
        [(("layerwise", 20), BASE)],
    ),
]
print(f"baseline {base_ppl:.2f} (seed mean; seed sd {base_sd:.2f} over {len(S.seeds)} seeds); bigram {perplexity(kn_nll):.1f}")
print(
    "experiment 3's published gaps scaled to our baseline (ppl): "
    + ", ".join(f"first - {v} T={T} {m:.2f} ({100 * m / base_ppl:.1f}%)" for (v, T), m in PLACEMENT.items())
)
print(", ".join(f"{v}: {sum(c.verdict == v for c in claims)}" for v in ("held", "not held", "inside noise", "not testable")))
print(f"notebook ran in {time.perf_counter() - t_start:.0f} s on profile {P.name}")

# %% [markdown]
# ## What held at this scale
#
# Our models are far smaller than the slides' and trained with another schedule (notebook
# 05 says how), so their perplexities are several times the slides'. The claims are tested
# where the gate finds the baseline clearly below the bigram. Fixing a timescale is a
# much larger intervention than initialising one, and the slides' effects here are
# several perplexity points (61.7 -> 68.3 from T = 20 to 200), so they are the ones a
# small model has the best chance to resolve; the width of each interval above says
# whether it did. A fixed timescale also constrains a small model more (fewer free
# units per layer), so a larger penalty here than on the slides is expected, not a
# contradiction.

# %%
report(claims, P.name)
