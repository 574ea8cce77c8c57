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
# # 10 · Work B as published: Dyck-2, routing by timescale, and the mutual information of language
#
# Mahto, Vo, Turek & Huth, *Multi-timescale representation learning in LSTM language models*
# (ICLR 2021), the published version of the slides of notebooks 05-08, with its official code
# (HuthLab/multi-timescale-LSTM-LMs). Notebook 07 has its timescale estimates and its
# frequency-binned perplexities; this notebook adds the paper's other experiments:
#
# 1. **Dyck-2**, a formal language whose long-range dependencies are known exactly: every
#    closing bracket must match the innermost open one, however far back it was opened. A
#    one-layer LSTM reads a string and, at every position, says which closer may come next
#    (one sigmoid per bracket type); a string counts as right only if every output at every
#    position is right. The paper compares a baseline LSTM with a *multi-timescale* LSTM whose
#    units get inverse-gamma (shape 1.5) timescales, frozen, and reads accuracy against the
#    longest bracket distance in the string: the multi-timescale model keeps its accuracy to
#    longer distances.
# 2. **WikiText-2**: the two language models on a second corpus.
# 3. **Routing by timescale**: zero one block of layer-2 units at a time, ordered by their
#    assigned timescale, and see which words' perplexity suffers: the paper finds the
#    long-timescale units matter most for rare words.
# 4. **Forget-gate trajectories**: how the gates of fixed and free units move across a passage.
# 5. **The slides' open question**: does the decay of memory with distance follow the decay of
#    the mutual information between words $d$ apart, which the ICLR version gives as its
#    reason for power-law timescales (after Lin & Tegmark 2017)?
#
# Decisions are stated where they are made; every size and seed is in `prismlib/profiles/`
# (`ICLRSettings`, `DyckSettings`), the machinery in `prismlib.lstm.iclr` (`dyck`, `dyck_model`,
# `dyck_training`, `routing`, `mutual_information`) and `prismlib.lstm` (`ablation`).

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper
executor = os.environ.get("PRISMLIB_EXECUTOR", "local")  # inline | local | slurm

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from prismlib.claims import Claim, Gate, Test, report
from prismlib.data.ptb import UNK, load_ptb_corpus
from prismlib.data.published import ICLR_PTB_TEST_PPL
from prismlib.data.registry import verify
from prismlib.devices import torch_threads
from prismlib.lstm import (
    INVGAMMA_SHAPE,
    MIN_SEEDS,
    PARETO_EXPONENT,
    ablation,
    bigram,
    converged_gate,
    frequency_bins,
    grid,
    perplexity,
    timescale_from_bias,
    timescales,
    token_nll,
    trained,
    untrained_model,
)
from prismlib.lstm.iclr import (
    DYCK_MARGIN,
    FIT_MARGIN,
    KEEP_FACTOR,
    OFFICIAL_RECIPE,
    ROUTING_MARGIN,
    ablated_token_nll,
    compare_decays,
    correct_matrix,
    distance_distribution,
    dyck_accuracy_table,
    dyck_converged_gate,
    dyck_data,
    dyck_learned_gate,
    dyck_timescales,
    fit_mi_power_law,
    forget_gate_trajectories,
    invgamma_test,
    loglog_exponent,
    long_range_floor_gate,
    long_range_test,
    memory_floor,
    mutual_information_curve,
    official_edges,
    pair_probabilities,
    rank_agreement,
    retention_curve,
    routing_ratios,
    routing_test,
    seed_accuracy,
    shown_timescales,
    shuffled_floor,
    third_weights,
    timescale_drift,
    timescale_fits,
    timescale_order,
    trained_dyck,
    unit_blocks,
)
from prismlib.plots import save_figure, save_table, set_theme
from prismlib.profiles import get_profile
from prismlib.stats import Interval

P = get_profile(profile)
S, R = P.lstm, P.iclr
D = R.dyck
set_theme()
t_start = time.perf_counter()
print(
    f"profile={P.name}: Dyck-2 LSTMs of {D.hidden} units, {D.n_train:,} / {D.n_validation:,} / {D.n_test:,} strings, "
    f"seeds {D.seeds}, Adam {D.lr:g}, cap {D.epochs} epochs; PTB models of notebook 07 ({S.layers} layers {S.hidden}/{S.emb})"
)

# %% [markdown]
# ## 1 · Dyck-2
#
# **The data** (`prismlib.lstm.iclr.dyck`, from the official `create_dyckn.py`): the grammar
# $S \to (S) \mid [S] \mid SS \mid \varepsilon$, each with probability 1/4, strings of 2 to 200
# symbols, distinct across the three splits, one seeded draw for every model. The paper draws
# 10,000 / 2,000 / 5,000 strings; this profile's sizes are printed below. The grammar is
# critical (an $S$ has one $S$ child on average), so lengths are heavy-tailed: most strings are
# short, a few reach the limit. The distance of a closer is how many symbols back its opener
# is; a string's *longest distance* is what the paper's accuracy is read against, in the
# official bins (`linspace(2, longest string, 10)` over spans, i.e. distance + 1).

# %% tags=["nbval-check-output"]
data = dyck_data(D)
test = data["test"]
edges = official_edges(int(test.lengths.max()))
law = pair_probabilities(3)
print(f"P(string has k pairs) before conditioning, k = 0..3: {', '.join(f'{p:.4f}' for p in law)}")
for name, split in data.items():
    print(
        f"{name:>10}: {len(split.lengths):5d} strings, length mean {split.lengths.mean():.1f} (max {split.lengths.max()}), "
        f"longest distance mean {split.longest.mean():.1f} (max {split.longest.max()})"
    )
print("bins of the longest distance:", ", ".join(f"{lo:.0f}-{hi:.0f}" for lo, hi in zip(edges[:-1], edges[1:])))

# %%
values, counts = distance_distribution(test.distances, test.mask)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
ax1.bar(values, counts, width=1.6, color="C0")
ax1.set(yscale="log", xlabel="distance of a closer to its opener (symbols)", ylabel="closers", title="Bracket distances (test)")
ax2.hist(test.longest, bins=edges, color="C1")
ax2.set(yscale="log", xlabel="longest distance in the string (official bins)", ylabel="strings", title="Longest distance per string")
save_figure(fig, "dyck_distances", P.name)
plt.show()

# %% [markdown]
# **The models and their training** (`prismlib.lstm.iclr.dyck_model`, `dyck_training`): one LSTM
# layer over a frozen one-hot input, a linear read-out and a sigmoid per bracket type, trained
# with Adam on the mean squared error of the sigmoids, gradient-norm clip 1. The
# multi-timescale model's units have the timescales $T_k$ = inverse-gamma(1.5, 1) quantiles
# $k/(H+1)$, with $b_f = -\log(e^{1/T} - 1)$ and $b_i = -b_f$; both bias tensors are frozen,
# as in the official `model_dyckn.py`. The official run stops when the validation loss falls
# below $10^{-4}$, at most 2000 epochs, at Adam $10^{-4}$; this profile's recipe is printed
# below, and a run also stops by the annealed rule of `prismlib.anneal` on validation loss
# where the profile sets it. A run at its cap is **not converged**. Each model and seed is a
# cached job (trained here if missing).

# %%
dyck_runs = trained_dyck(D, P.name, executor=executor, device=P.device, data=data)
print(
    f"official recipe: {OFFICIAL_RECIPE.hidden} units, Adam {OFFICIAL_RECIPE.lr:g}, batch {OFFICIAL_RECIPE.batch_size}, "
    f"stop at validation loss < {OFFICIAL_RECIPE.stop_val_loss:g} or {OFFICIAL_RECIPE.epochs} epochs, seeds 1..20; "
    f"this profile: {D.hidden} units, Adam {D.lr:g}, batch {D.batch_size}, threshold {D.stop_val_loss:g}, "
    f"{'annealed rule, ' if D.anneal else ''}cap {D.epochs} epochs, {'length buckets' if D.bucket else 'random batches'}"
)
pd.DataFrame(
    [
        {
            "model": k,
            "seed": s,
            "epochs": r.history.epochs,
            "stopped": r.history.stop,
            "by": r.history.stopped_by or "",
            "best valid loss": r.history.best_val_loss,
            "valid accuracy (last)": r.history.val_accuracy[-1],
            "test accuracy": r.test_correct.mean(),
            "train minutes": r.history.seconds / 60,
        }
        for (k, s), r in dyck_runs.items()
    ]
)

# %% [markdown]
# **Accuracy against the longest distance.** Per model, the share of test strings entirely
# right in each bin of the longest distance: the mean over seeds with Student's 95% interval
# over the seeds (the paper draws the mean ± one SD of 20 seeds), and each seed's own curve
# faintly. Bins with few strings are noisy (their counts are in the table).

# %%
acc_runs = dyck_accuracy_table(dyck_runs, test.longest, edges, n_boot=R.bootstrap)
acc = seed_accuracy(acc_runs)
save_table(acc, "dyck_accuracy_by_distance", P.name)
fig, ax = plt.subplots(figsize=(7.5, 4))
for i, (model, g) in enumerate(acc.groupby("model", sort=False)):
    mid = (g.low_edge + g.high_edge) / 2
    ax.plot(mid, g.accuracy, "o-", color=f"C{i}", label=f"{model} (mean of {g.seeds.max()} seeds)")
    ax.fill_between(mid, g.low, g.high, color=f"C{i}", alpha=0.2)
    for _, gs in acc_runs[acc_runs.model == model].groupby("seed"):
        ax.plot((gs.low_edge + gs.high_edge) / 2, gs.accuracy, color=f"C{i}", alpha=0.25, lw=0.8)
ax.set(
    xlabel="longest bracket distance in the string (bin centre)",
    ylabel="strings entirely right",
    ylim=(-0.02, 1.02),
    title=f"Dyck-2 accuracy by distance ({P.name}, {D.hidden} units)",
)
ax.legend(fontsize=8)
save_figure(fig, "dyck_accuracy_by_distance", P.name)
plt.show()
acc.assign(**{"95% CI over seeds": [f"[{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) else "" for lo, hi in zip(acc.low, acc.high)]})[
    ["model", "low_edge", "high_edge", "sequences", "seeds", "accuracy", "95% CI over seeds", "sd"]
]

# %% [markdown]
# **The claim.** "The multi-timescale model keeps its accuracy to longer distances than the
# baseline" is tested on the strings whose longest distance is at least the third official
# bin edge: the seed-mean accuracy of the multi-timescale model minus the baseline's must
# exceed 5 points (`DYCK_MARGIN`) on one interval: a paired bootstrap over those strings,
# widened by the spread of the seeds' own accuracies (training variance: the paper uses 20
# seeds; `long_range_test`). Gates: every run stopped by its rule, at least `MIN_SEEDS` seeds per model,
# both models right on at least half the shortest-distance strings (a model that has not learnt
# the task says nothing about where its accuracy falls off), and **the memory floor**: at least
# one model must beat, by the same 5 points, a reader that is right wherever the innermost open
# bracket is fewer than that third edge back and guesses the type of every older one
# (`memory_floor`, `long_range_floor_gate`). Where both models sit at that floor, the long
# strings test no long-range memory and the row is `not testable`, not `not held`.

# %%
long_from = float(edges[2])
mts_c, base_c = correct_matrix(dyck_runs, "mts"), correct_matrix(dyck_runs, "baseline")
dyck_test = long_range_test(
    mts_c, base_c, test.longest, long_from, DYCK_MARGIN, "acc(mts) - acc(baseline), long strings", n_boot=R.bootstrap
)
floor = memory_floor(test, int(long_from))
floor_gate = long_range_floor_gate(mts_c, base_c, test.longest, int(long_from), floor)
seeds_gate = Gate(
    f"seeds: >= {MIN_SEEDS} per model (training variance; the paper: 20)",
    min(len(mts_c), len(base_c)) >= MIN_SEEDS,
    f"mts {len(mts_c)}, baseline {len(base_c)}",
)
dyck_claim = Claim(
    "10",
    f"Dyck-2: the multi-timescale LSTM keeps its accuracy to longer distances than the baseline (strings with longest distance "
    f">= {long_from:.0f}: {mts_c[:, test.longest >= long_from].mean():.2f} vs {base_c[:, test.longest >= long_from].mean():.2f}, "
    f"seed means; {D.hidden} units, {len(mts_c)} / {len(base_c)} seeds)",
    "ICLR 2021, Dyck-2: the multi-timescale model's accuracy stays higher than the baseline's as the longest bracket distance "
    "grows (20 seeds, 256 units)",
    (dyck_test,),
    (dyck_converged_gate(list(dyck_runs.values())), seeds_gate, dyck_learned_gate(acc), floor_gate),
    "share",
    model=f"1-layer LSTM, {D.hidden} units",
)
print(f"[{dyck_claim.verdict}] difference {dyck_test.interval} on {dyck_test.interval.units} strings ({dyck_test.noise()})")
print(f"memory floor: {floor_gate.detail}")

# %% [markdown]
# ## 2 · WikiText-2
#
# The paper repeats the language-model comparison on WikiText-2. The offline data directory
# holds WikiText-2's validation and test splits but not its training split; without it this
# part is skipped (`python -m prismlib data fetch wikitext2` brings the split; the paper
# profile needs it). No other split is used in its place.

# %%
wt2_train = next(f for f in verify(["wikitext2"])["wikitext2"] if f.relpath.endswith("wiki.train.tokens"))
if not wt2_train.ok:
    print(f"WikiText-2 skipped: its training split {wt2_train.relpath} is {wt2_train.state} in the data directory.")
else:
    print(f"WikiText-2 training split present ({wt2_train.relpath}); training LMs on it is not wired into the job cache yet: skipped.")

# %% [markdown]
# ## 3 · Routing by timescale
#
# On notebook 07's trained PTB models (read from the job cache, trained there if missing), every
# seed whose weights are kept (a committed record keeps them for two seeds): the `official`
# multi-timescale model, whose layer-2 units have fixed inverse-gamma (0.56) timescales. Its layer-2 units are sorted by assigned timescale, longest first, and cut
# into `routing_blocks` blocks (the official code: 23 blocks of 50 of 1150 units); each block
# in turn is zeroed where layer 2's output enters layer 3 (layer 2's own recurrence keeps it,
# as in `util/model_ablation.py`), PTB test is scored, and each word-frequency bin's
# perplexity is divided by the intact model's. Intervals: paired bootstrap over 100-token
# chunks of PTB test.
#
# **The control**: random blocks of the same size in the same model: its layer-2 units in a
# random order (seeded per seed), cut into as many blocks. Zeroing any block of a trained LSTM
# may hurt rare words relatively more than frequent ones; what the timescale ordering adds is
# the effect beyond a random block's. The figure draws the first seed's blocks.

# %%
lm_specs = grid.experiment("baseline", P) + grid.experiment("official", P)
lm_runs = trained(lm_specs, S, P.job_profile, executor=executor, device=P.device)
base_runs = [lm_runs[s] for s in lm_specs if s.variant == "baseline"]
mts_runs = [lm_runs[s] for s in lm_specs if s.variant == "official"]
base_run, mts_run = base_runs[0], mts_runs[0]  # seed 0 of each: the figures, the memory section
route_runs = [r for r in mts_runs if r.has_model]  # the seeds whose weights are kept
corpus = load_ptb_corpus()
ids = corpus.test if R.routing_tokens is None else corpus.test[: R.routing_tokens]
train_counts = np.bincount(corpus.train, minlength=len(corpus.vocab))
T2 = timescale_from_bias(mts_run.biases_init[1].double(), "exp").numpy()  # assigned layer-2 timescales (every seed alike)
blocks = unit_blocks(timescale_order(mts_run.biases_init[1]), R.routing_blocks)
hidden2 = mts_run.model.rnns[1].hidden_size
intact_s, ablated_s = [], []  # per seed: (n,), (timescale blocks + random blocks, n)
with torch_threads(S.threads):
    for run in route_runs:
        rand = unit_blocks(np.random.default_rng([P.seed, run.spec.seed]).permutation(hidden2), R.routing_blocks)
        intact_s.append(token_nll(run.model, ids, S.eval_batch, S.bptt))
        ablated_s.append(np.stack([ablated_token_nll(run.model, ids, 1, b, S.eval_batch, S.bptt) for b in blocks + rand]))
    base_nll = token_nll(base_run.model, ids, S.eval_batch, S.bptt)
intact, ablated = intact_s[0], ablated_s[0][: len(blocks)]
random_ablated = ablated_s[0][len(blocks) :]
routes = routing_ratios(intact, ablated, ids, train_counts, np.array([T2[b].mean() for b in blocks]), n_boot=R.bootstrap)
routes_base = routing_ratios(intact, random_ablated, ids, train_counts, np.full(len(blocks), np.nan), n_boot=R.bootstrap)
save_table(routes, "routing_by_timescale", P.name)
save_table(routes_base, "routing_random_blocks", P.name)
fig, axes = plt.subplots(1, 2, figsize=(14, 4.2), sharey=True, layout="constrained")
for ax, table, title in (
    (axes[0], routes, f"{mts_run.spec.label}: blocks by assigned timescale"),
    (axes[1], routes_base, f"{mts_run.spec.label}: blocks of random units (control)"),
):
    for i, (label, g) in enumerate(table[table.bin != "all"].groupby("bin", sort=False)):
        ax.errorbar(g.block, g.ratio, yerr=[g.ratio - g.low, g.high - g.ratio], fmt=".-", capsize=2, color=f"C{i}", label=label)
    ax.axhline(1, color="0.5", ls="--", lw=1)
    ax.set(title=title)
ticks = routes.drop_duplicates("block")
axes[0].set_xticks(ticks.block, [f"{t:.3g}" for t in ticks.mean_T], rotation=45, ha="right", fontsize=8)
axes[0].set(xlabel="mean assigned timescale of the zeroed block (longest first)", ylabel="ppl ablated / ppl intact")
axes[1].set(xlabel="zeroed block (random units)")
axes[0].legend(title="training occurrences", fontsize=8)
fig.suptitle(f"Routing by timescale: {len(blocks)} blocks of layer 2 zeroed one at a time ({P.name})")
save_figure(fig, "routing_by_timescale", P.name)
plt.show()

# %% [markdown]
# **The claim**, as the paper's abstract states it: "the explicit multi-timescale model
# selectively routes information about different types of words through units with different
# timescales" (its routing figure: zeroing long-timescale units hurts rare words most, zeroing
# short ones frequent words). Per block, the contrast is log ratio(rare, < 100 training
# occurrences) minus log ratio(frequent, > 10k): above 0 when the block matters relatively more
# for rare words. Two tests, both needed, each above `ROUTING_MARGIN` (printed below, in log
# ratio), fixed before the run (`third_weights`, `routing_test`):
#
# * **across the blocks**: the mean contrast of the longest-timescale third of the blocks minus
#   that of the shortest third;
# * **against random blocks**: the longest third's mean contrast minus the mean over random blocks
#   of the same size of the same model (the control: zeroing any block may favour one kind of word).
#
# Each is the mean over the seeds whose weights are kept, on one interval that combines the
# bootstrap over 100-token chunks of PTB test with the spread of the seeds' own values (with two
# seeds Student's t has one degree of freedom: a wide interval, honestly so). Gates: the baseline
# is clearly below the Kneser-Ney bigram (notebook 05), and every multi-timescale model read
# stopped by its rule.

# %%
bins = frequency_bins(ids, train_counts)
rare, frequent = bins == "<100", bins == ">10k"
stack_abl, stack_int = np.stack(ablated_s), np.stack(intact_s)
route_gradient = routing_test(
    stack_abl, stack_int, rare, frequent, third_weights(len(blocks), len(blocks), "short"),
    "contrast(longest third of blocks) - contrast(shortest third)", n_boot=R.bootstrap,
)  # fmt: skip
route_random = routing_test(
    stack_abl, stack_int, rare, frequent, third_weights(len(blocks), len(blocks), "random"),
    "contrast(longest third of blocks) - contrast(random blocks, same size)", n_boot=R.bootstrap,
)  # fmt: skip
w_short = third_weights(len(blocks), len(blocks), "random")
w_short[: len(blocks)] = third_weights(len(blocks), 0, "short")[::-1].clip(min=0)  # the shortest third, against random blocks
route_short = routing_test(
    stack_abl, stack_int, rare, frequent, w_short, "contrast(shortest third) - contrast(random blocks)", n_boot=R.bootstrap
)
refs, uni_nll, kn_nll = bigram.ptb_references(corpus.train, corpus.valid, ids, len(corpus.vocab), S.eval_batch)
vs_bigram = bigram.versus_bigram({"baseline": base_nll}, kn_nll)
lm_gates = (
    bigram.beats_bigram(vs_bigram, kn_nll, ["baseline"]),
    converged_gate({f"{r.spec.label} seed {r.spec.seed}": r for r in route_runs}, S.converge_share, S.converge_tolerance),
)
route_claim = Claim(
    "10",
    f"Routing: in layer 2 of the multi-timescale model the longest-timescale third of the {len(blocks)} unit blocks singles out rare "
    f"words (log ratio <100 minus >10k) more than the shortest third and more than random blocks of the same size "
    f"({route_gradient.interval.effect:+.4f} and {route_random.interval.effect:+.4f}; seed mean of {len(route_runs)} seeds with kept weights)",
    "ICLR 2021, abstract: 'the explicit multi-timescale model selectively routes information about different types of words "
    "through units with different timescales' (the routing figure: long-timescale units matter most for low-frequency words)",
    (route_gradient, route_random),
    lm_gates,
    "log ratio",
    model=f"{mts_run.spec.label}, {S.layers} x {S.hidden}/{S.emb} LSTM ({P.name}), {len(route_runs)} seeds",
    control=f"random blocks of the same size: the longest third minus them {route_random.interval}; the shortest third minus "
    f"them {route_short.interval} (the paper: frequent words through short timescales, i.e. below 0)",
)
print(f"margin ROUTING_MARGIN = {ROUTING_MARGIN} (log ratio)")
print(f"[{route_claim.verdict}] across the blocks {route_gradient.interval}; against random blocks {route_random.interval}; "
      f"shortest third against random blocks {route_short.interval}")  # fmt: skip
pd.DataFrame(
    [
        {"model": run.spec.label, f"test ppl, ours ({len(ids):,} tokens)": perplexity(nll), "ICLR 2021 test ppl": ICLR_PTB_TEST_PPL[key]}
        for key, run, nll in (("baseline", base_run, base_nll), ("official", mts_run, intact))
    ]
)

# %% [markdown]
# ## 3b · The timescales the models learn and keep
#
# The paper's first empirical claim (abstract): "LSTM language models trained on natural English
# text learn to approximate this theoretical distribution", the inverse gamma its theory derives.
# Each trained baseline's layer-2 timescales, $T = 1/(1 - \sigma(b_f))$ from its trained forget
# biases (kept by every run record), are fitted by maximum likelihood with an inverse gamma and
# with its two usual rivals, a log-normal and a gamma (`prismlib.lstm.iclr.timescale_fit`). The
# rule, fixed before the run: the inverse gamma's log-likelihood per unit must beat the better
# rival's by more than `FIT_MARGIN` (nats, printed below; all three have two parameters), on one interval
# over units (resampled within each seed) and seeds. The Kolmogorov-Smirnov distance of each fit
# says how close the best one comes in absolute terms.
#
# And "multi-timescale units keep their assigned timescales" (the arXiv version's abstract: "the
# multi-timescale model successfully learns representations at the desired timescales"): a
# fixed bias does not fix the gate, so each fixed layer-2 unit's timescale *as shown on PTB test*
# ($-1/\log \bar f$ of its mean forget gate, the convention it was assigned in) is compared with
# its assigned one: the mean over units of $|\log_{10}(T_{shown}/T_{assigned})|$ must lie below
# the log of `KEEP_FACTOR` (printed below), over every seed (the units are the same in
# each). Spearman's rank correlation is printed beside it.

# %%
T_base = {r.spec.seed: timescale_from_bias(r.biases_final[1].double(), "logit").numpy() for r in base_runs}
fits = timescale_fits(T_base)
save_table(fits, "layer2_timescale_fits", P.name)
fit_test = invgamma_test(list(T_base.values()), "loglik(inverse gamma) - loglik(better of log-normal, gamma), per unit", n_boot=R.bootstrap)
shown = [shown_timescales(r.forget_means()[1]) for r in mts_runs]
drift_test = timescale_drift(T2, shown, "mean |log10(T shown / T assigned)|, layer-2 units", n_boot=R.bootstrap)
ranks = [rank_agreement(T2, t) for t in shown]
best_ks = fits.loc[fits.groupby("seed")["loglik"].idxmax()]
fit_claim = Claim(
    "10",
    f"A standard LSTM's layer-2 timescales (trained forget biases, T = 1/(1 - sigmoid(b_f))) follow an inverse gamma better than a "
    f"log-normal or a gamma ({fit_test.interval.effect:+.2f} nats per unit over {len(T_base)} seeds; its KS distance "
    f"{fits[fits.family == 'invgamma'].KS.min():.2f}-{fits[fits.family == 'invgamma'].KS.max():.2f})",
    "ICLR 2021, abstract: 'Experiments then showed that LSTM language models trained on natural English text learn to "
    "approximate this theoretical distribution' (the inverse gamma)",
    (fit_test,),
    (converged_gate({f"baseline seed {r.spec.seed}": r for r in base_runs}, S.converge_share, S.converge_tolerance),),
    "nats/unit",
    model=f"baseline, {S.layers} x {S.hidden}/{S.emb} LSTM ({P.name}), layer 2",
    control="best fit per seed: " + ", ".join(f"seed {r.seed} {r.family} (KS {r.KS:.2f})" for r in best_ks.itertuples()),
)
keep_claim = Claim(
    "10",
    f"The multi-timescale model's fixed layer-2 units keep their assigned timescales on PTB test, within a factor of {KEEP_FACTOR:g} "
    f"(mean |log10 ratio| {drift_test.interval.effect:.2f}, i.e. a factor {10**drift_test.interval.effect:.1f}; Spearman "
    f"{min(ranks):.2f}-{max(ranks):.2f} over {len(shown)} seeds)",
    "ICLR 2021 (arXiv version's abstract): 'the multi-timescale model successfully learns representations at the desired timescales'",
    (drift_test,),
    (converged_gate({f"{r.spec.label} seed {r.spec.seed}": r for r in mts_runs}, S.converge_share, S.converge_tolerance),),
    "log10",
    model=f"{mts_run.spec.label}, {S.layers} x {S.hidden}/{S.emb} LSTM ({P.name}), layer 2",
    control="timescale shown: -1/log of the mean forget gate on PTB test (an upper estimate of the decay's timescale)",
)
print(f"FIT_MARGIN = {FIT_MARGIN} nats per unit; KEEP_FACTOR = {KEEP_FACTOR}")
print(f"[{fit_claim.verdict}] {fit_test.interval} ({fit_test.noise()}); [{keep_claim.verdict}] {drift_test.interval}")
fits

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
for i, (sd, T) in enumerate(T_base.items()):
    ax1.hist(np.log10(T), bins=30, density=True, alpha=0.35, color=f"C{i}", label=f"baseline seed {sd}")
ax1.set(xlabel="log10 T (layer 2, trained)", ylabel="density", title="Learned layer-2 timescales")
ax1.legend(fontsize=8)
for i, t in enumerate(shown):
    ax2.loglog(T2, t, ".", ms=4, color=f"C{i}", label=f"seed {mts_runs[i].spec.seed}")
lim = np.array([np.nanmin(T2[T2 > 0]), np.nanmax(T2)])
ax2.plot(lim, lim, color="0.4", lw=1)
ax2.fill_between(lim, lim / KEEP_FACTOR, lim * KEEP_FACTOR, color="0.8", alpha=0.5, label=f"within a factor {KEEP_FACTOR:g}")
ax2.set(xlabel="assigned T", ylabel="T shown on PTB test", title="Fixed layer-2 units of the multi-timescale model")
ax2.legend(fontsize=8)
save_figure(fig, "layer2_timescales_learned_and_kept", P.name)
plt.show()

# %% [markdown]
# ## 4 · Forget-gate trajectories
#
# The forget gate of every unit at every word of the first words of PTB test, units sorted by
# timescale, longest at the top: in the multi-timescale model's layer 2 the assigned (fixed)
# one; in its free layer 3 and in the baseline's layer 2 the timescale of the trained bias. A
# fixed bias does not fix the gate: its input and recurrent weights still move it word by word.

# %%
passage = corpus.test[: R.passage]
panels = [
    ("multi-timescale, layer 2 (fixed)", mts_run, 1, mts_run.biases_init[1]),
    ("multi-timescale, layer 3 (free)", mts_run, 2, mts_run.biases_final[2]),
    ("baseline, layer 2 (free)", base_run, 1, base_run.biases_final[1]),
]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained")
for ax, (title, run, layer, bias) in zip(axes, panels):
    gates = forget_gate_trajectories(run.model, passage)[layer][:, timescale_order(bias)]
    im = ax.imshow(gates.T, aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    ax.set(title=title, xlabel="word of the passage")
    ax.grid(False)
axes[0].set_ylabel("unit (longest timescale at the top)")
fig.colorbar(im, ax=axes, label="forget gate", shrink=0.9)
fig.suptitle(f"Forget gates across {len(passage)} words of PTB test ({P.name})")
save_figure(fig, "forget_gate_trajectories", P.name)
plt.show()

# %% [markdown]
# ## 5 · Does memory follow the mutual information of language?
#
# **Mutual information** $I(d)$ between a word of PTB train and the word $d$ later, for
# $d = 1..$`mi_distances` (`prismlib.lstm.iclr.mutual_information`): Grassberger's (2003)
# bias-corrected entropy estimator (checked on Markov chains of known $I(d)$ in the tests), a
# delete-one-chunk jackknife over contiguous text chunks for the intervals. No estimator removes
# the bias of a word vocabulary: a *shuffled* PTB (same words, no dependence) still reads
# about 0.84 nats, so every curve here is $I(d)$ minus that floor. A power law $A d^{-\alpha}$
# is fitted to it over the profile's `mi_fit` range, and compared with an exponential.
#
# **Memory** on the same range, three ways: (i) notebook 08's cell-state ablation (a word
# $d$ back replaced by `<unk>`, the change $\lVert c - c'_d\rVert$ of each layer's cell
# state), fitted as a power law in $d$, for the baseline and the multi-timescale model and for
# each one's untrained control (the same fixed biases, random weights); (ii) what the assigned
# timescale distributions retain if every unit forgets at its own timescale,
# $\overline{e^{-d/T}}$: inverse gamma with shape $a$ retains $(1 + d)^{-a}$, the Pareto
# density $T^{-1.54}$ about $d^{-0.54}$.

# %%
mi_ids = corpus.train if R.mi_tokens is None else corpus.train[: R.mi_tokens]
mi = mutual_information_curve(mi_ids, R.mi_distances, chunks=R.mi_chunks)
floor = shuffled_floor(mi_ids, chunks=R.mi_chunks)
d_lo, d_hi = R.mi_fit
mi_fit = fit_mi_power_law(mi, d_lo, d_hi, offset=floor.effect)
decays = compare_decays(mi, d_lo, d_hi, offset=floor.effect)
mi_table = pd.DataFrame(
    [
        {"d": int(d), "I(d) - floor (nats)": iv.effect - floor.effect, "low": iv.low - floor.effect, "high": iv.high - floor.effect}
        for d, iv in zip(mi.distances, mi.intervals)
    ]
)
save_table(mi_table, "mutual_information_ptb", P.name)
print(
    f"PTB train ({len(mi_ids):,} tokens), Grassberger, {R.mi_chunks} chunks: shuffled floor {floor}; "
    f"I(1) - floor {mi_table.iloc[0, 1]:.3f}, I({mi_table.d.iloc[-1]}) - floor {mi_table.iloc[-1, 1]:.4f} nats"
)
print(
    f"power law over d = {d_lo}..{d_hi}: alpha {mi_fit.rate} ({mi_fit.used} distances used, {mi_fit.skipped} at or below the floor); "
    f"exponential fits worse by {decays.rss_difference} (rss of log I): better fit '{decays.better}'"
)

# %%
mem_specs = [base_run.spec, mts_run.spec]
changes, controls = {}, {}
with torch_threads(S.threads):
    for spec in mem_specs:
        args = dict(
            n_contexts=S.memory_contexts,
            length=S.context,
            replacement=corpus.stoi[UNK],
            seed=spec.seed,
            warmup=S.memory_warmup,
            mode=S.memory_mode,
        )
        changes[spec.label] = ablation.cell_state_change(lm_runs[spec].model, corpus.test, desc=spec.label, **args)
        controls[spec.label] = ablation.cell_state_change(
            untrained_model(spec, S, corpus, P.device), corpus.test, desc=f"{spec.label} (untrained)", **args
        )
mem_fit = (d_lo + 1, min(d_hi, S.context))  # d = 1 enters the cell state directly (notebook 08)
# a layer whose change is exactly 0 (below float resolution) in most contexts from some d on has
# forgotten the perturbation there: its slope is fitted up to that d only, and the row says so
mem_rows = []
for label in changes:
    for layer in range(S.layers):
        for kind, c in (("trained", changes[label]), ("untrained control", controls[label])):
            fit = ablation.resolvable_fit(c, layer, mem_fit)
            iv = ablation.power_slope_interval(c, layer, fit, n_boot=R.bootstrap) if fit else Interval(np.nan, np.nan, np.nan, len(c))
            mem_rows.append({
                "source": f"{label}, layer {layer + 1}", "kind": kind, "alpha": -iv.effect, "low": -iv.high, "high": -iv.low,
                "fit d": f"{fit[0]}..{fit[1]}" if fit else "change 0 (forgotten)",
            })  # fmt: skip
memory = pd.DataFrame(mem_rows)

# %% [markdown]
# The timescale distributions the variants assign, and what they retain over the same range
# (exact curves: no interval):

# %% tags=["nbval-check-output"]
d_grid = np.arange(1, max(R.mi_distances, S.context) + 1)
assigned = {
    f"inverse gamma (shape {INVGAMMA_SHAPE}), 1150 units (published)": timescales.inverse_gamma_timescales(1150).numpy(),
    f"Pareto (density T^-{PARETO_EXPONENT}), 1150 units, seed 0": timescales.pareto_timescales(1150, torch.Generator().manual_seed(0)).numpy(),
    "inverse gamma (shape 1.5), Dyck-2, 256 units": dyck_timescales(256).numpy(),
}  # fmt: skip
retained = pd.DataFrame(
    [
        {
            "source": name,
            "median T": float(np.median(T)),
            "alpha over mi_fit": loglog_exponent(d_grid, retention_curve(T, d_grid), d_lo, d_hi),
        }
        for name, T in assigned.items()
    ]
)
print(retained.to_string(index=False, float_format=lambda v: f"{v:.3f}"))

# %%
compare = pd.concat([
    pd.DataFrame([{"source": "PTB train: I(d) - floor", "kind": "mutual information", "alpha": mi_fit.rate.effect,
                   "low": mi_fit.rate.low, "high": mi_fit.rate.high, "fit d": f"{d_lo}..{d_hi}"}]),
    memory,
    retained.rename(columns={"alpha over mi_fit": "alpha"})
    .assign(kind="assigned timescales (exact)", low=np.nan, high=np.nan, **{"fit d": f"{d_lo}..{d_hi}"})
    .drop(columns="median T"),
], ignore_index=True)  # fmt: skip
save_table(compare, "memory_vs_mutual_information", P.name)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 4.8), layout="constrained", gridspec_kw={"width_ratios": [1, 1.1]})
ok = mi_table.low > 0  # intervals clear of the floor (a log axis cannot show the others)
ax1.errorbar(
    mi_table.d[ok],
    mi_table["I(d) - floor (nats)"][ok],
    yerr=[(mi_table["I(d) - floor (nats)"] - mi_table.low)[ok], (mi_table.high - mi_table["I(d) - floor (nats)"])[ok]],
    fmt=".",
    ms=3,
    color="C0",
    label="I(d) - floor [95% CI], where clear of 0",
)
dd = np.arange(d_lo, d_hi + 1)
ax1.plot(dd, mi_fit.amplitude * dd**-mi_fit.rate.effect, color="C3", label=f"power law, alpha {mi_fit.rate.effect:.2f}")
for i, (label, c) in enumerate(changes.items()):
    mean2 = np.nanmean(c[:, 1], axis=0)
    ax1.plot(
        np.arange(1, S.context + 1),
        mean2 / mean2[0] * mi_table.iloc[0, 1],
        color=f"C{i + 1}",
        ls="--",
        lw=1,
        label=f"{label}: layer-2 cell-state change (scaled)",
    )
ax1.set(
    xscale="log",
    yscale="log",
    xlabel="distance d (words)",
    ylabel="nats",
    title="Mutual information and memory, PTB",
    ylim=(mi_table.low[ok].min() / 3 if ok.any() else None, None),
)
ax1.legend(fontsize=7)
sub = compare[compare.kind != "assigned timescales (exact)"]
y = np.arange(len(sub))
ax2.errorbar(sub.alpha, y, xerr=[sub.alpha - sub.low, sub.high - sub.alpha], fmt="o", capsize=3, color="C0")
for alpha in retained["alpha over mi_fit"]:
    ax2.axvline(alpha, color="0.5", ls=":", lw=1)
ax2.axvspan(mi_fit.rate.low, mi_fit.rate.high, color="C3", alpha=0.15, label="MI exponent [95% CI]")
ax2.set_yticks(y, [f"{s} ({k})" for s, k in zip(sub.source, sub.kind)], fontsize=7)
ax2.set(xlabel="power-law exponent alpha (decay ~ d^-alpha)", title="Exponents (dotted: assigned timescales, exact)")
ax2.legend(fontsize=7)
save_figure(fig, "memory_vs_mutual_information", P.name)
plt.show()
compare

# %% [markdown]
# **Claims.** (a) Lin & Tegmark: the mutual information of language decays as a power law, not
# exponentially: the exponential's residuals (in $\log I$) minus the power law's must be above
# 0, jackknife over text chunks. (b) The slides' question, reported without a verdict (a
# descriptive row: the slides ask it as a question and answer nothing): the multi-timescale
# model's layer-2 memory exponent minus the mutual information's, beside a band of 0.2 (as an
# equivalence test would read it; the interval combines the memory's interval over contexts with the
# exponent's over chunks, end to end, which is conservative). Gates of (b): the model stopped
# by its rule, and its untrained control (the same fixed timescales, random weights) does not
# account for the decay (notebook 08's control gate on the power-law slope).

# %%
mi_claim = Claim(
    "10",
    f"The mutual information between PTB words d apart decays as a power law rather than an exponential over d = {d_lo}..{d_hi} "
    f"(alpha {mi_fit.rate.effect:.2f}; I(d) minus the shuffled floor {floor.effect:.2f} nats)",
    "ICLR 2021 (after Lin & Tegmark 2017): the mutual information in natural language decays as a power law, the reason for "
    "power-law (inverse-gamma) timescales",
    (Test(decays.rss_difference, +1, 0.0, "rss(exponential) - rss(power law), log I"),),
    (),
    "rss",
    model="PTB train, Grassberger estimator",
)
EQUIV = 0.2
mts_label = mts_run.spec.label
fits2 = [ablation.resolvable_fit(c[mts_label], 1, mem_fit) for c in (changes, controls)]  # layer 2, trained and control
fit2 = (mem_fit[0], min(f[1] for f in fits2 if f)) if all(fits2) else mem_fit
trained_iv, control_iv, excess = ablation.control_excess(
    [changes[mts_label]], [controls[mts_label]], lambda cs: float(ablation.power_slopes(cs[0][:, 1:2], fit2)[0]), n_boot=R.bootstrap
)
alpha2 = memory[(memory.source == f"{mts_label}, layer 2") & (memory.kind == "trained")].iloc[0]
combined = Interval(alpha2.alpha - mi_fit.rate.effect, alpha2.low - mi_fit.rate.high, alpha2.high - mi_fit.rate.low, trained_iv.units)
memory_claim = Claim(
    "10",
    f"Layer 2 of the multi-timescale model forgets with the mutual information's exponent (memory alpha {alpha2.alpha:.2f} over "
    f"d = {fit2[0]}..{fit2[1]} vs MI alpha {mi_fit.rate.effect:.2f}; assigned inverse-gamma timescales retain "
    f"alpha {retained['alpha over mi_fit'].iloc[0]:.2f})",
    "Slides, closing question: 'Can we relate the behavior of cell state change to Mutual Information in Language?' (no answer "
    "given); ICLR 2021 assigns power-law timescales for that reason",
    (Test.equivalence(combined, EQUIV, "alpha(memory, layer 2) - alpha(MI)"),),
    (
        converged_gate({mts_label: mts_run}, S.converge_share, S.converge_tolerance),
        ablation.control_gate("layer 2's power-law decay", trained_iv, control_iv, excess),
    ),
    "alpha",
    model=f"{mts_label}, {S.layers} x {S.hidden}/{S.emb} LSTM ({P.name})",
    control=f"untrained control: slope {control_iv}; trained - control {excess}",
    descriptive="the slides ask it as a question",
)
claims = [dyck_claim, route_claim, fit_claim, keep_claim, mi_claim, memory_claim]
print(", ".join(f"{v}: {sum(c.verdict == v for c in claims)}" for v in ("held", "not held", "inside noise", "not testable")))

# %% [markdown]
# ## What held at this scale
#
# The Dyck-2 claim needs models that finished training and learnt the short strings, and
# enough seeds; the cpu profile trains smaller models at a higher learning rate than the paper,
# for a bounded number of epochs, so a failed gate is a result here, not a verdict on the
# paper (the `paper` profile runs the official recipe: 256 units, 2000 epochs, 20 seeds). The
# routing and memory claims read notebook 07's models, whose size and schedule notebook 05
# states. The mutual information is a property of PTB alone and its estimate does not depend on
# any model; its exponent depends on the fit range and on the floor subtracted. The cell below
# prints what this run found.

# %%
print(
    f"Dyck-2: {sum(r.history.converged for r in dyck_runs.values())} of {len(dyck_runs)} runs stopped by rule; "
    f"accuracy on long strings mts {mts_c[:, test.longest >= long_from].mean():.2f}, baseline {base_c[:, test.longest >= long_from].mean():.2f}"
)
print("Dyck-2 accuracy by longest distance (seed mean [95% CI over seeds]):")
for r in acc.itertuples():
    ci = f" [{r.low:.2f}, {r.high:.2f}]" if np.isfinite(r.low) else ""
    print(f"  {r.model:>8} {r.low_edge:5.0f}-{r.high_edge:<5.0f} {r.accuracy:.2f}{ci} ({r.sequences} strings)")
print(f"WikiText-2: {'skipped (no training split)' if not wt2_train.ok else 'not run'}")
print("routing (first seed): longest block's ratios " + ", ".join(f"{r.bin} {r.ratio:.3f}" for r in routes[routes.block == 1].itertuples()))
print(f"routing over {len(route_runs)} seeds: across the blocks {route_gradient.interval}; against random blocks {route_random.interval}")
print(f"timescales: inverse gamma minus the better rival {fit_test.interval} nats per unit; fixed units' drift {drift_test.interval}")
print(f"mutual information: alpha {mi_fit.rate}; memory alpha of layer 2 (mts) {alpha2.alpha:.2f} [{alpha2.low:.2f}, {alpha2.high:.2f}]")
for c in claims:
    print(f"[{c.verdict}] {c.claim}")
print(f"notebook ran in {time.perf_counter() - t_start:.0f} s on profile {P.name}")

# %%
report(claims, P.name)
