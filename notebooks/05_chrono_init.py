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
# # 05 · Chrono initialisation of forget-gate biases (experiment 1)
#
# *Timescale-dependent representation learning in language models* (Mahto; slides of the
# work published as "Multi-timescale representation learning in LSTM language models",
# ICLR 2021), **experiment 1** and the slide *"What happened to forget gate biases after
# training?"*.
#
# An LSTM unit whose forget gate stays at $f$ keeps a fraction $f$ of its memory per word;
# its timescale is $T = 1/(1-f)$ words. With $f = \sigma(b_f)$ the forget-gate bias sets
# it: $b_f = \log(T-1)$. **Chrono initialisation** draws $b_f \sim \log(\mathcal U(1,
# T_{max}-1))$ and sets the input-gate bias $b_i = -b_f$. The slides build *chrono LSTM
# LMs* on the AWD-LSTM baseline (3 layers, 1150/1150/400, tied embeddings, NT-ASGD, PTB):
#
# * **layer-wise**: layer 1 $T_{max} = T$, layer 2 $T/2$, layer 3 $T/4$ (the first layer
#   remembers longest), for $T \in \{20, 70, 200\}$;
# * **gradient**: every layer's units spread evenly over $\log(1 \to T-1)$;
# * **inverse layer-wise**: layer 1 $T/4$, layer 2 $T/2$, layer 3 $T$.
#
# Here the biases are only an *initialisation*; training may move them. The slides found
# that test perplexity does not change (61.70 for the baseline, 60.5-61.3 for the chrono
# models) and that after training the bias distributions depend on the layer, not on how
# they were initialised.
#
# Conventions (`prismlib.lstm.timescales`): the whole bias goes into `bias_ih` and the same
# entries of `bias_hh` are zeroed, so the effective bias is exactly the variant's value;
# "layer-wise" samples chrono values per layer (as the slides' *Approach* page writes for
# $T = 20$: $\log\mathcal U(1,19)$, $\log\mathcal U(1,9)$, $\log\mathcal U(1,4)$); "gradient"
# uses $\log(\mathrm{linspace}(1, T-1))$.

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper
executor = os.environ.get("PRISMLIB_EXECUTOR", "local")  # where missing models train: inline | local | slurm

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch
from IPython.display import display

from prismlib.claims import Claim, Test, report
from prismlib.data.published import EXP1, EXP1_TITLES
from prismlib.jobcache import training_runs
from prismlib.lstm import (
    RunSpec,
    WorkBClaims,
    bigram,
    doubling_check,
    equivalent,
    grid,
    perplexity,
    perplexity_claim,
    perplexity_difference,
    plot_learning_curves,
    recipe_summary,
    runs_table,
    save_learning_curves,
    timescales,
    trained_with_references,
    work_b_start,
)
from prismlib.plots import save_figure, save_table

t_start = time.perf_counter()
P, S, corpus, test_ids = work_b_start(profile)
print(f"profile={P.name}: {recipe_summary(S)}; seeds {S.seeds}; fixed variants freeze {S.freeze}")
print(
    f"PTB: train {len(corpus.train):,} / valid {len(corpus.valid):,} / test {len(corpus.test):,} tokens, "
    f"validation on {S.valid_tokens or 'all'} valid tokens per epoch, test on {len(test_ids):,} test tokens"
)

# %% [markdown]
# The initial forget biases of each variant at the paper's layer sizes (1150/1150/400),
# as the range of timescales $T = 1 + e^{b_f}$ per layer (the same functions set the
# biases of the models trained below), to 2 decimals:

# %% tags=["nbval-check-output"]
ranges = []
for name, T in [("layerwise", 20), ("layerwise", 70), ("gradient", 70), ("inverse", 70)]:
    biases = timescales.variant_forget_biases(name, (1150, 1150, 400), float(T), torch.Generator().manual_seed(0))
    for layer, b in enumerate(biases):
        t = timescales.timescale_from_bias(b.double())
        ranges.append(
            {
                "variant": f"{name} T={T}",
                "layer": layer + 1,
                "T min": round(t.min().item(), 2),
                "T median": round(t.median().item(), 2),
                "T max": round(t.max().item(), 2),
            }
        )
print(pd.DataFrame(ranges).to_string(index=False))

# %% [markdown]
# ## References: unigram, bigram (the gate of every claim)
#
# A claim about language models is only testable when the models are clearly better than
# the **bigram model of the same data**: an interpolated Kneser-Ney
# bigram fitted on the whole PTB training split (`prismlib.lstm.bigram`), scored on exactly the
# test tokens the LSTMs predict. An add-one unigram of the same text says where a model
# that has learnt only word frequencies would sit. Perplexities to 1 decimal:

# %% tags=["nbval-check-output"]
refs, uni_nll, kn_nll = bigram.ptb_references(corpus.train, corpus.valid, test_ids, len(corpus.vocab), S.eval_batch)
print(refs.round(1).to_string(index=False))

# %% [markdown]
# ## Training
#
# Every model is a job of `prismlib.jobcache`, cached under `.cache/jobs/<hash of its spec>/`:
# `make reproduce` trains the whole grid of notebooks 05-08 first (`python -m prismlib
# train`, in parallel single-thread processes), and this notebook only reads the models;
# a model that is missing trains here on the `executor` of the parameters cell. The
# `cpu` profile trains one seed of every model (its budget), `cpu-long` three paired seeds
# (seed k of every model shares its data order and dropout masks), which the claims about
# small effects need; the tables give seed means and the seed sd where there are seeds.

# %%
baseline = grid.experiment("baseline", P)
specs = baseline + grid.experiment("exp1", P)
runs = trained_with_references(specs, P, refs, executor)
table = runs_table(list(runs.values()), S.bootstrap)
for run in training_runs(P.name):
    print(
        f"grid training recorded {run['started']}: {run['trained']} of {run['models']} models trained in "
        f"{run['seconds'] / 60:.1f} min ({run['executor']}, {run['workers']} workers)"
    )
table[["model", "seed", "val ppl", "test ppl", "bootstrap mean", "bootstrap sd", "train tokens", "train s", "stopped"]]

# %% [markdown]
# ## Have the models finished learning?
#
# Every model records its validation perplexity while it trains (its **learning curve**,
# `figures/<profile>/lstm_learning_curves.csv`). A claim about these models is a claim about
# where they end only when they have stopped learning. The `cpu` profile trains every model
# of a comparison on one **fixed learning-rate path** (`fixed_path` in
# `prismlib/profiles/cpu.py`): the rate stays at 20 for 140 rounds (quarter passes of PTB
# train), is divided by 4 at each of the next four rounds, and the run stops, as the
# slides train a fixed number of epochs. Every run then "stops by its rule" where the path
# ends, so whether the path is long enough is *measured*: the baseline and the slowest
# learners (fixed layer-wise T = 200, layer-2 X = 70) train a second time on the path
# doubled (280 rounds), and every perplexity claim below carries that **doubling check** as
# its effect-stability gate (`prismlib.lstm.doubling`): doubling the path moved each slow
# learner's contrast with the baseline by at most half the claim's margin (in the claim's
# own unit), or by less than half its interval's width. That bound is loose: where a claim's
# own models have their doubled twins too (`CLAIM_TWINS` in `prismlib/lstm/claims/grid.py`: 07's
# multi-timescale, Pareto and MOD rows, 06's layer placement; trained by installments, never
# by a notebook), each test is gated by its own shift instead, with the same allowance. And
# where a test says *not held*, that counterexample decides the claim, so the gate asks only
# that one of them stays within its allowance. The `smoke` profile trains with the
# **annealed** rule instead (`prismlib.anneal`: the rate is divided by 4 when validation has
# stalled, and a run stops by that rule after four decays); there the gate reads the
# claim's contrast on *validation* at the last two post-decay checkpoints. Every claim also
# carries the **model gate**: every run it reads stopped by its rule, not at its cap (one
# that never beat the bigram *did not learn*). The `paper` profile keeps the slides'
# NT-ASGD; its model gate asks that validation improved by less than 1% over the last
# quarter of the budget. Where a gate fails the claim is *not testable* and says why.
#
# The table under the curves is the doubling check itself (where the profile has a fixed
# path): each model's test perplexity on the two paths, and how far its contrast with the
# baseline moved (the slow learners, then the claims' own models trained so far).

# %%
BASE = "baseline (seed mean)"
doubling = doubling_check(P, executor)  # None where the profile's recipe has no fixed path
checks = WorkBClaims(
    runs,
    key=lambda s: BASE if s.variant == "baseline" else s.label,
    reference=BASE,
    share=S.converge_share,
    tolerance=S.converge_tolerance,
    doubling=doubling,
)
save_learning_curves(runs, P.name)
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
plot_learning_curves(ax, runs, lambda s: "baseline" if s.variant == "baseline" else s.label, f"Experiment 1: learning curves ({P.name})")
save_figure(fig, "exp1_learning_curves", P.name)
plt.show()
if doubling is not None:
    doubling_table = doubling.table()
    save_table(doubling_table, "doubling_check", P.name)
    display(doubling_table.round(2))

# %% [markdown]
# ## Experiment 1, in the slides' layout
#
# Our test perplexity beside the slides'. The baseline row is the seed mean (per-token NLL
# averaged over seeds; "seed sd" is the spread of the seeds' perplexities). "Δ vs baseline"
# is the chrono model's perplexity minus the baseline's, with its 95% interval from a
# paired bootstrap over 100-token chunks of PTB test (the same chunks for both models,
# 10,000 resamples as in the official evaluation of the ICLR version), and its share of
# our baseline's perplexity beside the slides' own difference as a share of theirs:
# absolute perplexities of models this different in size and training are not comparable.
# The slides' numbers and row titles are `prismlib.data.published.EXP1` and `EXP1_TITLES`.

# %%
seeds = checks.end
nll = seeds.nll
base_ppl, base_sd = seeds.perplexity(BASE), seeds.seed_sd(BASE)
delta = {name: seeds.delta(name) for name in nll if name != BASE}
slides_base = EXP1[("baseline", None)]
rows = [
    {
        "model type": EXP1_TITLES["baseline"],
        "T": "",
        "test ppl (ours)": base_ppl,
        "seed sd": base_sd,
        "seeds": seeds.seeds(BASE),
        "Δ vs baseline [95% CI] (ours)": "",
        "Δ% (ours)": np.nan,
        "slides": slides_base,
        "Δ% (slides)": np.nan,
    }
]
chrono = [s for s in specs if s.variant != "baseline" and s.seed == S.seeds[0]]  # one spec per model
for s in chrono:
    theirs = EXP1[(s.variant, int(s.T))]
    rows.append(
        {
            "model type": EXP1_TITLES[s.variant],
            "T": f"{s.T:g}",
            "test ppl (ours)": seeds.perplexity(s.label),
            "seed sd": seeds.seed_sd(s.label),
            "seeds": seeds.seeds(s.label),
            "Δ vs baseline [95% CI] (ours)": str(delta[s.label]),
            "Δ% (ours)": 100 * delta[s.label].effect / base_ppl,
            "slides": theirs,
            "Δ% (slides)": 100 * (theirs - slides_base) / slides_base,
        }
    )
exp1 = pd.DataFrame(rows)
save_table(exp1, "exp1_chrono_init", P.name)
exp1

# %% [markdown]
# ## What happened to forget-gate biases after training?
#
# Effective forget-gate biases ($b_{ih} + b_{hh}$ of the forget slice) of every unit,
# per layer, at initialisation and after training, for the baseline and the $T = 70$
# chrono models.

# %%
shown = [s for s in specs if s.seed == S.seeds[0] and (s.T in (None, 70.0))]
long = []
for spec in shown:
    run = runs[spec]
    for stage, biases in (("initialised", run.biases_init), ("trained", run.biases_final)):
        for layer, b in enumerate(biases):
            long += [{"model": spec.label, "stage": stage, "layer": f"layer {layer + 1}", "b_f": v} for v in b.numpy()]
long = pd.DataFrame(long)
g = sns.displot(
    long,
    x="b_f",
    hue="model",
    row="stage",
    col="layer",
    kind="hist",
    element="step",
    fill=False,
    stat="density",
    common_norm=False,
    bins=30,
    height=2.6,
    aspect=1.3,
    facet_kws={"sharey": False},
)
g.set_titles("{row_name}, {col_name}")
g.figure.suptitle("Forget-gate biases before and after training", y=1.02)
save_figure(g.figure, "exp1_forget_bias_hist", P.name)
plt.show()

# %% [markdown]
# How far did training move them? Per model and layer: the mean and sd of $b_f$ at
# initialisation and after training, the mean absolute change per unit, and how much
# nearer the trained mean is to the baseline's trained mean (same layer) than to its own
# initial mean ("override"; positive: training overrode the initialisation). Intervals:
# 95%, bootstrap over the layer's **hidden units** (a unit's initial and trained bias
# resampled together), the units a layer's bias distribution is made of.

# %%
base_run = runs[RunSpec("baseline", seed=S.seeds[0])]
shift, override = {}, {}
moved = []
for spec in shown:
    run = runs[spec]
    for layer, (b0, b1) in enumerate(zip(run.biases_init, run.biases_final)):
        shift[(spec.label, layer)] = timescales.bias_shift(b0, b1)
        if spec.variant != "baseline":
            override[(spec.label, layer)] = timescales.bias_override(b0, b1, base_run.biases_final[layer])
        moved.append(
            {
                "model": spec.label,
                "layer": layer + 1,
                "init mean": b0.mean().item(),
                "init sd": b0.std().item(),
                "trained mean": b1.mean().item(),
                "trained sd": b1.std().item(),
                "mean |change| [95% CI]": str(shift[(spec.label, layer)]),
                "override [95% CI]": str(override.get((spec.label, layer), "")),
            }
        )
moved = pd.DataFrame(moved)
save_table(moved, "exp1_forget_bias_moves", P.name)
moved

# %% [markdown]
# ## Claims
#
# Every claim is tested on this run's models:
#
# * **perplexity**: model minus baseline, paired bootstrap over 100-token chunks of PTB
#   test. "Not affected" is an equivalence claim: the slides call differences of up to
#   1.0 perplexity (1.6% of 61.70) "not affected at all", so each chrono model's interval
#   must lie within **±2% of the baseline's perplexity**;
# * **biases**: bootstrap over hidden units (above). The slide's claim is that the trained
#   distribution is "specific to each layer rather than initial values": each chrono
#   model's trained mean must be nearer the baseline's trained mean than its own starting
#   point, in every layer. (That training moves the biases at all is no claim of the
#   slide: any training moves them; the table above shows by how much.)
# * **gates**: a perplexity claim needs the baseline clearly (95% interval) below the
#   Kneser-Ney bigram's perplexity on the same tokens; a claim about trained biases needs
#   every model it reads below the bigram. Otherwise the claim is *not testable*: a model
#   worse than counting word pairs has not learnt what the claim is about. Every claim
#   also carries the model gate (the biases of a model still learning are still moving),
#   the perplexity claim the effect-stability gate, and a claim whose effect is under 5%
#   of the baseline's perplexity needs 3 seeds of each model it reads. Each contrast has
#   one interval: the chunk bootstrap widened by the spread of the seeds' own perplexities.

# %%
MARGIN = round(0.02 * base_ppl, 1)
vs_bigram = bigram.versus_bigram(nll, kn_nll)
chrono70 = [s for s in shown if s.variant != "baseline"]
not_affected = equivalent([s.label for s in chrono], MARGIN)  # each chrono model within ±MARGIN of the baseline
model70 = checks.gates([BASE] + [s.label for s in chrono70], lambda m: ())[0]
base0 = RunSpec("baseline", seed=S.seeds[0]).label
vs_bigram[base0] = perplexity_difference(base_run.test_chunks, kn_nll)
claims = [
    perplexity_claim(
        "05",
        f"Initialisation alone does not change test perplexity: all {len(chrono)} chrono models within ±2% "
        f"(±{MARGIN:.1f}) of the baseline seed mean {base_ppl:.1f} "
        f"(ours: {min(seeds.perplexity(s.label) for s in chrono):.1f}-{max(seeds.perplexity(s.label) for s in chrono):.1f})",
        "Experiment 1: 'Performance is not affected by the initialization at all!' Baseline 61.70; chrono layer-wise "
        "60.70 / 61.10 / 60.90, gradient 60.73 / 61.17 / 61.28 (T = 20 / 70 / 200), inverse 61.12 (T = 70)",
        checks,
        [BASE] + [s.label for s in chrono],
        not_affected,
        bigram.beats_bigram(vs_bigram, kn_nll, [BASE]),
        [(s.label, BASE) for s in chrono],  # each contrast's seeds join its interval, where both models have two or more
    ),
    Claim(
        "05",
        "After training, each layer's mean forget bias is nearer to the baseline's trained mean than to its own "
        "initial mean, for every T = 70 chrono model and layer",
        "'Forget gate bias distribution not affected by initialization; specific to each layer rather than initial values'",
        tuple(Test(override[(s.label, layer)], +1, 0.0, f"override {s.label} L{layer + 1}") for s in chrono70 for layer in range(S.layers)),
        (bigram.beats_bigram(vs_bigram, kn_nll, [base0] + [s.label for s in chrono70]), model70),
        "b_f",
    ),
]
worst = max(nll, key=lambda n: vs_bigram[n].effect)
print(
    f"bigram {perplexity(kn_nll):.1f}; our models {min(vs_bigram[n].effect for n in nll) + perplexity(kn_nll):.1f}"
    f"-{vs_bigram[worst].effect + perplexity(kn_nll):.1f} (worst: {worst})"
)
print(", ".join(f"{v}: {sum(c.verdict == v for c in claims)}" for v in ("held", "not held", "inside noise", "not testable")))
print(f"notebook ran in {time.perf_counter() - t_start:.0f} s on profile {P.name}")

# %% [markdown]
# ## What held at this scale
#
# The slides train AWD-LSTM 1150/1150/400 for 1000 epochs; this profile's models are far
# smaller (the printout at the top), so their perplexities are a few times the slides' ~61
# and only the *differences* compare. The training table says how far each model got and
# why it stopped, the claims table what each gate decided. Chrono sets the input-gate bias
# to $b_i = -b_f$: a unit initialised at $T = 70$ starts with its input gate at
# $\sigma(-\log 69) \approx 0.014$ and writes almost nothing into its cell until training
# opens the gate. Where a chrono model ends worse than the baseline, the model gate says
# whether that is this slow start (a run that had not stopped learning) or where the model
# ends at this scale (every run stopped by its rule).

# %%
report(claims, P.name)
