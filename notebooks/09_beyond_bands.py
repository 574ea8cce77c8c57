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
# # 09 · Beyond the five bands: smooth, wavelet and learned filters
#
# *Language Through a Prism* filters each neuron's activations across tokens with five
# **brick-wall** bands of DCT indices (notebook 01) and probes each band (notebook 02).
# Its conclusion names what it left open: filters with smooth edges, other
# decompositions than the DCT, and which scales a task really uses. Later work learned
# the filter instead of fixing it (*Spectral Probing*, Müller-Eberstein, van der Goot
# & Plank, EMNLP 2022). This notebook puts four families of filters side by side on the
# paper's four probing tasks, with the same windows, positions, probes and test units
# as notebook 02:
#
# | family | what is kept of a neuron's activations over a window of N tokens | `prismlib` |
# |---|---|---|
# | brick-wall bands | the DCT indices of one of the paper's five bands (App. A), nothing else | `spectral.band_pass` |
# | smooth bands | the same bands with Gaussian edges 0.25 octave wide; the five gains sum to 1 | `spectral.smooth_band_pass` |
# | Haar levels | orthonormal Haar wavelet details whose nominal period falls in the band (local in time, not in frequency) | `spectral.haar_band_pass` |
# | learned gate | a gain per frequency (sigmoid of 512 parameters over relative frequency $k/N$), trained jointly with the probe | `learned.SpectralGate` |
#
# The learned gate is the task's **spectral profile**: where in frequency the probe
# looks. The questions, asked as claims with the project's statistics: do the learned
# profiles tell the paper's story (topic low, dialog acts in between, part of speech
# high)? Does a smooth band, a wavelet band or the learned gate beat the best
# brick-wall band? Last, `spectrum.spectral_profile` measures where a model's own
# activations put their energy, for any Hugging Face encoder or decoder.
#
# **Decisions.** The probes are notebook 02's (Adam, lr 1e-3, lr halved on a
# validation plateau, patience 1, at most 30 epochs, the MLM probe `mlm_epochs`, raw
# features, $1/|N|$ weights, `[CLS]`/`[SEP]` inside the filtered sequence) with batches
# of `batch_size` rows (256; notebook 02 on cpu: 64), so that the 16 conditions fit
# the machine; accuracies can therefore differ a little from notebook 02's. The learned
# gate trains on whole windows (all their sampled rows) per step, as many windows as
# hold `batch_size` rows on average (`learned.matched_windows`), so it takes about as
# many steps per epoch as the fixed filters' probes (the table of the data gives both)
# and the same epoch cap trains it as much. The learned
# gate's logits take Adam at `gate_lr` (2e-2: at 1e-3 a logit moves about 1e-3 a step,
# and a cpu-sized task has a few hundred steps); it starts at 0.5 everywhere, which
# the linear probe absorbs, so training starts from the unfiltered probe with no band
# favoured. A gate trained on windows of N tokens sees frequency $k/N$ on the same grid
# for every N. Its profile is summarised per run by the mean gate over each of the
# paper's bands (at N = 512) and by its **spectral centre**: the band index
# (LOW = 0 ... HIGH = 4) weighted by those means.

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from prismlib import spectral
from prismlib.claims import Claim, Gate, Test, report
from prismlib.data import load_wikitext
from prismlib.plots import BAND_PALETTE, filter_responses, save_figure, save_table, set_theme, spectral_profile_figure
from prismlib.probing import (
    CONDITIONS,
    ENCODER_NAMES,
    ENCODERS,
    GATED,
    HAAR_CONDITIONS,
    MAJORITY,
    SMOOTH_CONDITIONS,
    TASKS,
    ProbeComparison,
    band_spread,
    build_task,
    cached_states,
    combine_runs,
    gated_probe_runs,
    load_encoder,
    matched_windows,
    probe_conditions,
    ranking,
    spectral_centre,
    summarise,
)
from prismlib.profiles import get_profile
from prismlib.spectral import noise_profile, spectral_profile
from prismlib.stats import Interval, mean_interval, welch_difference

P = get_profile(profile)
S, B = P.probe, P.beyond
set_theme()
torch.manual_seed(P.seed)
t_start = time.perf_counter()
encoder = load_encoder(P.encoder, device=P.device)
BANDS = CONDITIONS[1:]
FAMILIES = {"brick-wall": BANDS, "smooth": SMOOTH_CONDITIONS, "Haar": HAAR_CONDITIONS}
print(f"profile={P.name}  encoder={P.encoder} ({ENCODERS[P.encoder]}, {encoder.num_layers} layers, hidden {encoder.hidden_size})")
print(
    f"{B.runs} probe runs per condition; learned gate: {B.grid_size} grid points, gate lr {B.gate_lr}, "
    f"{B.batch_windows or f'the windows of about {B.batch_size} rows'} per step"
)

# %% [markdown]
# ## The filters
#
# For a window of 512 tokens, the share of each DCT component's energy that each band
# keeps (`spectral.frequency_response`: the filter applied to every cosine of the
# DCT basis). The brick-wall bands are indicator functions; the smooth bands overlap
# at their edges and still add up to the whole signal; a Haar level is local in time,
# so it keeps part of a wide range of frequencies.

# %%
N = P.window
cosine_bands = spectral.allocate_bands(N)
haar = spectral.haar_bands(N)
responses = {
    "brick-wall": [spectral.frequency_response(lambda x, b=b: spectral.band_pass(x, b, dim=-2), N) for b in cosine_bands],
    "smooth": [spectral.frequency_response(lambda x, b=b: spectral.smooth_band_pass(x, b, dim=-2), N) for b in cosine_bands],
    "Haar": [spectral.frequency_response(lambda x, b=b: spectral.haar_band_pass(x, b, dim=-2), N) for b in haar],
}
fig = filter_responses(responses, BANDS, N, title="Frequency response of the three fixed filter families")  # brick-wall: steps
save_figure(fig, "filter_responses", P.name)
plt.show()
print("Haar levels per band at N = 512: " + ", ".join(f"{b.name} {b.lo}-{b.hi - 1}" + (" + mean" if b.coarse else "") for b in haar))

# %% [markdown]
# ## Data and states
#
# The windows of notebook 02 (same profile sizes and seeds), and its cache: the last
# layer's full states of each window (float16, `.cache/states/`), stored by notebook 02's
# encoder pass (encoded here only when 02 has not run); every fixed filter is applied to
# them and the learned gate trains on them.

# %%
t0 = time.perf_counter()
tasks = {name: build_task(name, encoder.tokenizer, S.sizes[name].windows(), profile_name=P.name, seed=P.seed, window=P.window,
                          mask_prob=S.mask_prob, da_labels=S.da_labels, mlm_vocab=S.mlm_vocab) for name in TASKS}  # fmt: skip
states = {
    name: {split: cached_states(encoder, t.windows[split], -1, task=name, split=split, profile=P.name,
                                positions=S.sizes[name].positions, seed=P.seed, batch_size=S.encode_batch)
           for split in ("train", "val", "test")}
    for name, t in tasks.items()
}  # fmt: skip
encode_seconds = time.perf_counter() - t0
windows_per_step = {name: B.batch_windows or matched_windows(st["train"], B.batch_size) for name, st in states.items()}

# %% tags=["nbval-check-output"]
# rows per split; optimiser steps per epoch of a fixed filter's probe and of the learned gate
pd.DataFrame({name: {"classes": len(t.label_names)} | {f"{s} rows": len(states[name][s]) for s in ("train", "val", "test")}
              | {"steps/epoch fixed": -(-len(states[name]["train"]) // B.batch_size),
                 "steps/epoch gate": -(-len(states[name]["train"].hidden) // windows_per_step[name])}
              for name, t in tasks.items()}).T  # fmt: skip

# %% [markdown]
# ## Probe every filter
#
# Brick-wall, smooth and Haar bands (and the unfiltered ORIG) with notebook 02's
# probe, the learned gate with the same recipe plus its gate; `runs` runs each. The
# table gives the accuracy (mean over runs) and its 95% interval over the test units.

# %%
t0 = time.perf_counter()
conditions = ("ORIG", *BANDS, *SMOOTH_CONDITIONS, *HAAR_CONDITIONS)
probes, gated, test_rows, groups, summaries = {}, {}, {}, {}, []
for name in TASKS:
    epochs = {"max_epochs": S.mlm_epochs if name == "mlm" else S.max_epochs, "patience": S.patience}
    feats = {split: st.features(conditions) for split, st in states[name].items()}
    fixed = probe_conditions(feats, len(tasks[name].label_names), conditions, B.runs, P.seed, workers=S.workers,
                             batch_size=B.batch_size, device=encoder.device, **epochs)  # fmt: skip
    gated[name] = gated_probe_runs(states[name], len(tasks[name].label_names), B.runs, P.seed, resample=B.resample,
                                   workers=S.workers, gate_lr=B.gate_lr, grid_size=B.grid_size, batch_windows=windows_per_step[name],
                                   device=encoder.device, **epochs)  # fmt: skip
    probes[name] = combine_runs(fixed, gated[name])
    test_rows[name], groups[name] = feats["test"], tasks[name].row_groups("test", feats["test"].window)
    summaries.append(summarise(probes[name], test_rows[name], groups[name], seed=P.seed).assign(task=name))
table = pd.concat(summaries, ignore_index=True)[["task", "condition", "accuracy", "ci_low", "ci_high", "sd_runs", "epochs"]]
save_table(table, "beyond_probing", P.name, floatfmt=".2f")
probe_seconds = time.perf_counter() - t0
print(f"{len(TASKS) * B.runs * (len(conditions) + 1)} probes trained in {probe_seconds:.0f} s")

# %% tags=["nbval-check-output"]
# accuracy %, rounded to 1 decimal: one column per family, one row per band
acc = table.set_index(["task", "condition"])["accuracy"]
wide = pd.DataFrame({
    (name, family): [acc[(name, f"{p}{b}")] for b in BANDS] for name in TASKS
    for family, p in (("brick", ""), ("smooth", "smooth:"), ("Haar", "haar:"))
}, index=list(BANDS))  # fmt: skip
wide.loc["ORIG"] = [acc[(name, "ORIG")] for name, _ in wide.columns]
wide.loc["learned"] = [acc[(name, GATED)] for name, _ in wide.columns]
wide.loc["majority"] = [acc[(name, MAJORITY)] for name, _ in wide.columns]
wide.round(1)

# %%
TITLES = {"pos": "Part of speech (word)", "swda": "Dialog acts (utterance)", "topic": "Topic (document)", "mlm": "Masked LM (token)"}
fig, axes = plt.subplots(1, len(TASKS), figsize=(4.4 * len(TASKS), 4.2))
width = 0.26
for ax, name in zip(axes, TASKS):
    d = table[table["task"] == name].set_index("condition")
    for j, (family, conds) in enumerate(FAMILIES.items()):
        bars = d.loc[list(conds)]
        err = np.vstack([bars["accuracy"] - bars["ci_low"], bars["ci_high"] - bars["accuracy"]])
        ax.bar(np.arange(len(BANDS)) + (j - 1) * width, bars["accuracy"], width, yerr=err, capsize=2,
               color=[BAND_PALETTE[b] for b in BANDS], alpha=(1.0, 0.6, 0.3)[j], edgecolor="0.2", linewidth=0.5,
               hatch=("", "", "//")[j], label=family)  # fmt: skip
    for cond, style in (("ORIG", "--"), (GATED, "-")):
        ax.axhline(d.loc[cond, "accuracy"], color="k", ls=style, lw=1.2, label="ORIG" if cond == "ORIG" else "learned gate")
    ax.axhline(d.loc[MAJORITY, "accuracy"], color="0.5", ls=":", lw=1, label="majority class")
    ax.set_xticks(range(len(BANDS)), BANDS, rotation=45, ha="right")
    ax.set_title(TITLES[name], fontsize=11)
axes[0].set_ylabel("probe accuracy (%)")
axes[0].legend(fontsize=7, loc="upper right")
fig.suptitle(f"Brick-wall, smooth (lighter) and Haar (hatched) bands, the learned gate: {P.encoder}, mean of {B.runs} runs", y=1.02)
fig.tight_layout()
save_figure(fig, "beyond_probing", P.name)
plt.show()

# %% [markdown]
# ## The learned spectral profiles
#
# Each task's learned gate over relative frequency $k/N$ (mean over runs; the band is
# the range over runs), with the paper's five bands at N = 512 shaded. A gate near 1
# passes that frequency, near 0 removes it; 0.5 is where it started.

# %%
fig, ax = plt.subplots(figsize=(8, 4.2))
grid = gated[TASKS[0]].grid
edges = [b.lo / N for b in cosine_bands] + [1.0]
for band, lo, hi in zip(BANDS, edges[:-1], edges[1:]):
    ax.axvspan(max(lo, 0.5 / N), hi, color=BAND_PALETTE[band], alpha=0.12, lw=0)
    ax.text(np.sqrt(max(lo, 0.5 / N) * hi), 1.02, band, ha="center", fontsize=8, transform=ax.get_xaxis_transform())
colors = dict(zip(TASKS, plt.get_cmap("tab10").colors))
for name in TASKS:
    g = gated[name].gates
    ax.plot(grid[1:], g.mean(0)[1:], color=colors[name], lw=1.6, label=TITLES[name])
    ax.fill_between(grid[1:], g.min(0)[1:], g.max(0)[1:], color=colors[name], alpha=0.2, lw=0)
ax.axhline(0.5, color="0.5", ls=":", lw=1)
ax.set_xscale("log")
ax.set_ylim(0, 1)
ax.set_xlabel("relative frequency k / N (log)")
ax.set_ylabel("learned gate")
ax.legend(fontsize=8, loc="lower left")
ax.set_title(f"Learned spectral profiles ({P.encoder}, last layer)", pad=18)
save_figure(fig, "learned_profiles", P.name)
plt.show()


profiles = pd.concat([gated[n].band_means.assign(task=n, spread=band_spread(gated[n].band_means),
                                                 centre=spectral_centre(gated[n].band_means)) for n in TASKS],
                     ignore_index=True)  # fmt: skip
_ = save_table(profiles, "learned_band_means", P.name, floatfmt=".3f")

# %% tags=["nbval-check-output"]
# mean gate per band, band spread and spectral centre, mean over runs, rounded
profiles.groupby("task", sort=False)[[*BANDS, "spread", "centre"]].mean().round(2)

# %% [markdown]
# ## Where a model puts its energy
#
# `spectral_profile(model, texts, layer)` works on any Hugging Face encoder or decoder:
# for each hidden unit, the share of its energy (over the tokens of each text) in each
# of the paper's bands, averaged over texts weighted by length; `center=True` removes
# each unit's mean per text first (otherwise the constant part fills LOW). Here: the
# profile's encoder on WikiText-103 test articles, every layer (one pass: a list of layers
# is measured from the same model calls). Dashed: the same measure on white noise of the
# same lengths (`noise_profile`; on average each band's width over the length), what a
# band gets from a signal with no structure across tokens.

# %%
t0 = time.perf_counter()
texts = [a.text for a in load_wikitext("wikitext103", "test")[: B.spectrum_texts]]
layers = list(range(encoder.num_layers + 1))  # every layer from one pass over the texts
energy = spectral_profile(encoder.model, texts, layers, tokenizer=encoder.tokenizer, center=True, device=encoder.device)
shares = energy.mean(axis=1).unstack("band")[list(BANDS)]
noise = noise_profile(energy.attrs["lengths"], center=True, seed=P.seed).mean(axis=1)  # the same measure on white noise
spectrum_seconds = time.perf_counter() - t0
fig = spectral_profile_figure(shares, energy.loc[encoder.num_layers], noise, noise_label="white noise, same lengths",
                              title=f"Spectral profile of {P.encoder} on {len(texts)} WikiText-103 test articles (unit means removed; "
                              f"right: layer {encoder.num_layers})")  # fmt: skip
save_figure(fig, "spectral_profile", P.name)
plt.show()
_ = save_table(shares.reset_index(), "spectral_profile_layers", P.name, floatfmt=".3f")
shares.round(3)

# %% [markdown]
# ## Claims
#
# Every claim is tested as stated (`prismlib.claims`). **A filter beats another** only
# by at least **1 accuracy point** (our smallest effect that matters; a difference of a
# tenth of a point is `not held`), paired bootstrap over the test units; the best bands
# are chosen on the same test set, so the comparison is optimistic for both sides alike.
# **Gates**: the unfiltered probe beats the majority class; the condition a claim would
# credit (the best smooth or Haar band, the learned gate) must beat it too, or it cannot
# win. **The learned gate beats the fixed filters** is tested against the *better* of
# the unfiltered probe and the best brick-wall band: a gate that passes everything
# matches the unfiltered probe and beats a band only because it keeps what the band
# throws away. Where the gate beats the unfiltered probe itself is a claim of its own.
#
# **The learned profiles tell the paper's story** if the spectral centre of topic is
# below that of dialog acts, and that of dialog acts below part of speech. A centre is
# only meaningful for a gate that prefers some band: a gate that passes everything
# (about 1 in every band) or that never moved from its start (0.5 everywhere) has a
# *band spread* (largest minus smallest band mean) near 0, and its centre is noise.
# So each task in the ordering is gated on its spread being clearly above 0.2, and the
# centre is taken above the gate's least-passed band (`prismlib.probing.spectral_centre`),
# a property of the gate's shape, not its level. A learned gate has no test set to
# resample: its noise is the spread over probe runs (Student / Welch t intervals over
# the runs). Each run trains on its own bootstrap resample of the training windows, so
# that spread covers the training data as well as the seed (with two runs, as on the
# cpu profile, the interval is wide; the `paper` profile has five).

# %%
MIN_EFFECT = 1.0  # accuracy points: the smallest difference a "beats" claim counts (our choice)
SPREAD_MARGIN = 0.2  # gate units: a task has a spectral profile when its band means differ by more than this
MODEL = ENCODER_NAMES[P.encoder]
compare = {n: ProbeComparison(probes[n], test_rows[n], groups[n], seed=P.seed, task=n) for n in TASKS}
orig_gates = {n: compare[n].gate() for n in TASKS}
gate_gates = {n: compare[n].gate(GATED) for n in TASKS}
centres = profiles.groupby("task")["centre"].apply(list)
spreads = profiles.groupby("task")["spread"].apply(list)


def profile_gate(name: str) -> Gate:
    """The task's learned gate prefers some band: its band spread is clearly above SPREAD_MARGIN."""
    values = spreads[name]
    iv = mean_interval(values) if np.ptp(values) > 0 else Interval(values[0], values[0], values[0], len(values), resampled="runs")
    return Gate(f"the {name} gate prefers a band (band spread > {SPREAD_MARGIN:g})", iv.low > SPREAD_MARGIN, f"spread {iv}")


story = tuple(Test(welch_difference(centres[high], centres[low]), +1, label=f"centre({high}) - centre({low})")
              for low, high in (("topic", "swda"), ("swda", "pos")))  # fmt: skip
claims = [
    Claim("09", "The learned profiles order the tasks as the paper's bands do: topic lowest, dialog acts in between, "
          f"POS highest (spectral centres: topic {np.mean(centres['topic']):.2f}, dialog acts {np.mean(centres['swda']):.2f}, "
          f"POS {np.mean(centres['pos']):.2f}; MLM {np.mean(centres['mlm']):.2f}; band spreads: "
          + ", ".join(f"{n} {np.mean(spreads[n]):.2f}" for n in ("topic", "swda", "pos")) + ")",
          "LOW best for topic, MID for dialog acts, HIGH for POS (Fig. 4); learned filters: Spectral Probing (EMNLP 2022)",
          story, tuple(gate_gates[n] for n in ("topic", "swda", "pos")) + tuple(profile_gate(n) for n in ("topic", "swda", "pos")),
          "bands", control="an all-pass or untrained gate has no band spread: the spread gates rule both out"),
]  # fmt: skip
for name in TASKS:
    best_brick = ranking(table[table["task"] == name], BANDS)[0]
    for family, conds in (("smooth", SMOOTH_CONDITIONS), ("Haar", HAAR_CONDITIONS)):
        best = ranking(table[table["task"] == name], conds)[0]
        claims.append(Claim(
            "09", f"{TITLES[name]}: the best {family} band ({best} {acc[(name, best)]:.1f}) beats the best brick-wall band "
            f"({best_brick} {acc[(name, best_brick)]:.1f}) by at least {MIN_EFFECT:g} point",
            f"future work in the paper: {'smooth filters' if family == 'smooth' else 'other decompositions (wavelets)'}",
            (Test.superiority(compare[name].diff(best, best_brick), MIN_EFFECT, label=f"{best} - {best_brick}"),),
            (orig_gates[name],), "points", (compare[name].gate(best),)))  # fmt: skip
    fixed = max(("ORIG", best_brick), key=lambda c: acc[(name, c)])
    claims.append(Claim(
        "09", f"{TITLES[name]}: the learned gate ({acc[(name, GATED)]:.1f}) beats the better of the unfiltered probe "
        f"(ORIG {acc[(name, 'ORIG')]:.1f}) and the best brick-wall band ({best_brick} {acc[(name, best_brick)]:.1f}) "
        f"by at least {MIN_EFFECT:g} point", "learned filters (Spectral Probing, EMNLP 2022) over fixed bands",
        (Test.superiority(compare[name].diff(GATED, fixed), MIN_EFFECT, label=f"learned - {fixed}"),), (orig_gates[name],),
        "points", (gate_gates[name],),
        control=f"compared with {fixed}: a gate that passes everything matches ORIG"))  # fmt: skip
    claims.append(Claim(
        "09", f"{TITLES[name]}: the learned gate ({acc[(name, GATED)]:.1f}) beats the unfiltered probe "
        f"(ORIG {acc[(name, 'ORIG')]:.1f}) by at least {MIN_EFFECT:g} point", "beyond the paper: filtering can help a probe",
        (Test.superiority(compare[name].diff(GATED, "ORIG"), MIN_EFFECT, label="learned - ORIG"),), (orig_gates[name],),
        "points", (gate_gates[name],)))  # fmt: skip
print(
    f"notebook ran in {time.perf_counter() - t_start:.0f} s on profile {P.name} (encoding {encode_seconds:.0f} s, "
    f"probes {probe_seconds:.0f} s, spectral profile {spectrum_seconds:.0f} s)"
)
report(claims, P.name, model=MODEL)
