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
# # 07 · Customised timescales in layer 2 (experiment 4)
#
# *Timescale-dependent representation learning in language models* (Mahto), slides
# **experiment 4** ("Customize timescale in layers").
#
# Experiments 2-3 suggested keeping layer 1 free (short timescales) and putting long ones
# higher up. Here only **layer 2's** input/forget biases are fixed; layers 1 and 3 train
# as in the baseline:
#
# 1. one timescale for all units: $b_f = \log(X-1)$ for $X \in \{5, 10, 20, 30, 70\}$;
# 2. mixtures of short and long memory: **MOD5** (half the units a gradient of timescales
#    1 → 20, half fixed at 70) and **MOD8** (80 % / 20 %);
# 3. **Pareto**: timescales drawn from a power law, density $\propto 1/T^{1.54}$ ("smooth
#    module").
#
# The slides report test perplexity, the mean ± sd over bootstrap resamples of the test set
# (PTB test as 1177 sequences of 70 words), and for the baseline, MOD5, MOD8 and Pareto
# the mean ± sd over 6 seeds: every layer-2 variant beats the baseline (61.40), Pareto most
# (59.52; 59.66 ± 0.17 over seeds against 61.64 ± 0.28).
#
# We add the variant of the later published version (ICLR 2021) as one more row: layer 1
# half at $T = 3$, half at $T = 4$; layer 2 at inverse-gamma (shape 0.56) quantiles of
# timescale; in its own convention $b_f = -\log(e^{1/T} - 1)$ (`prismlib.timescales`).
# Decisions: the gradient part of MOD5/MOD8 is $\log(\mathrm{linspace}(1, 19))$ (timescales
# 2-20, since $T = 1$ has no finite bias); Pareto timescales are sampled ($T \ge 1$, seeded).

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from prismlib import bigram, timescales
from prismlib.claims import Claim, Test, report
from prismlib.data.ptb import load_ptb_corpus
from prismlib.lstm import (
    RunSpec, model_perplexity, perplexity, perplexity_contrast, perplexity_difference, runs_table, seed_spread, train_all,
)  # fmt: skip
from prismlib.plots import save_figure, save_table, set_theme
from prismlib.profiles import get_profile

P = get_profile(profile)
S = P.lstm
set_theme()
t_start = time.perf_counter()
corpus = load_ptb_corpus()
test_ids = corpus.test if S.test_tokens is None else corpus.test[: S.test_tokens]
seed = S.seeds[0]
print(f"profile={P.name}: layers {[S.hidden] * (S.layers - 1) + [S.emb]}, {S.optimizer}, seeds {S.seeds}, "
      f"test on {len(test_ids):,} tokens")

# %% [markdown]
# ## The layer-2 timescales of each variant
#
# At the paper's layer-2 width (1150 units), the timescales $T = 1 + e^{b_f}$ each variant
# fixes (quantiles over units, 2 decimals; the published variant in its own convention):

# %% tags=["nbval-check-output"]
LAYER2 = [("layer2", X) for X in (5, 10, 20, 30, 70)] + [("mod5", None), ("mod8", None), ("pareto", None), ("published", None)]
rows = []
for name, X in LAYER2:
    b = timescales.variant_forget_biases(name, (1150, 1150, 400), None if X is None else float(X),
                                         torch.Generator().manual_seed(0))[1].double()  # fmt: skip
    T = timescales.timescale_from_bias(b, "exp" if name == "published" else "logit")
    q = np.quantile(T.numpy(), [0, 0.1, 0.5, 0.9, 1])
    rows.append({"variant": timescales.describe(name, None if X is None else float(X)),
                 **{f"T q{int(p * 100)}": round(float(v), 2) for p, v in zip([0, 0.1, 0.5, 0.9, 1], q)}})  # fmt: skip
print(pd.DataFrame(rows).to_string(index=False))

# %% [markdown]
# ## The bigram baseline (the gate of every claim)
#
# The interpolated Kneser-Ney bigram of the whole PTB training split (`prismlib.bigram`;
# notebook 05 says why), scored on exactly the test tokens the LSTMs predict. Every
# claim below needs its models clearly below it. Perplexities to 1 decimal:

# %% tags=["nbval-check-output"]
kn_nll, kn_line = bigram.ptb_baseline(corpus.train, corpus.test, test_ids, len(corpus.vocab), S.eval_batch)
print(kn_line)

# %% [markdown]
# ## Training
#
# Fixed-$X$ models and the published variant with the first seed; the baseline, MOD5,
# MOD8 and Pareto with every seed of the profile (the slides' seed column). The baseline
# comes from notebook 05's checkpoints when present.

# %%
specs = [RunSpec("baseline", seed=s) for s in S.seeds]
specs += [RunSpec("layer2", float(X), fixed=True, seed=seed) for X in (5, 10, 20, 30, 70)]
specs += [RunSpec(v, fixed=True, seed=s) for v in ("mod5", "mod8", "pareto") for s in S.seeds]
specs += [RunSpec("published", fixed=True, seed=seed)]
runs = train_all(specs, corpus, S, P.device)
table = runs_table(list(runs.values()), S.bootstrap)
table[["model", "seed", "val ppl", "test ppl", "bootstrap mean", "bootstrap sd", "train tokens"]]

# %% [markdown]
# ## Experiment 4, in the slides' layout
#
# "test ppl" and "bootstrapped" (mean ± sd over resamples of 70-word blocks, the slides'
# column) are the first seed's model; "seeds" is the mean ± sd of the seeds' perplexities
# where the slides have that column. "Δ vs baseline" is the perplexity difference to the
# baseline's seed mean with its 95% interval from a paired bootstrap over 100-token
# chunks of PTB test; for the multi-seed variants it compares seed means (per-token NLL
# averaged over seeds). Seed spread is reported, not tested.

# %%
SLIDES = {  # (test ppl, bootstrapped "mean +/- sd", seeds "mean +/- sd") as printed
    "baseline": (61.40, "61.42 +/- 1.52", "61.64 +/- 0.28"),
    "layer2 X=5": (60.17, "60.19 +/- 1.50", ""), "layer2 X=10": (59.88, "59.90 +/- 1.49", ""),
    "layer2 X=20": (59.97, "60.00 +/- 1.50", ""), "layer2 X=30": (60.09, "60.12 +/- 1.49", ""),
    "layer2 X=70": (60.71, "60.73 +/- 1.52", ""),
    "mod5": (60.16, "60.18 +/- 1.50", "60.34 +/- 0.15"), "mod8": (59.88, "59.89 +/- 1.49", "59.83 +/- 0.09"),
    "pareto": (59.52, "59.55 +/- 1.48", "59.66 +/- 0.17"), "published": (np.nan, "", ""),
}  # fmt: skip
TITLES = {"baseline": "1. Baseline"}
TITLES.update({f"layer2 X={X}": f"{i + 2}. L2: bias log({X}-1)" for i, X in enumerate((5, 10, 20, 30, 70))})
TITLES.update({
    "mod5": "7. L2: Modular I (MOD5): half 1->20, half 70", "mod8": "8. L2: Modular II (MOD8): 80% 1->20, 20% 70",
    "pareto": "9. L2: Pareto (1/x^1.54)", "published": "10. Published: L1 T in {3, 4}, L2 inverse-gamma(0.56)",
})  # fmt: skip


def key_of(spec: RunSpec) -> str:
    return spec.variant if spec.variant != "layer2" else f"layer2 X={spec.T:g}"


by_key: dict[str, list[RunSpec]] = {}
for spec in specs:
    by_key.setdefault(key_of(spec), []).append(spec)
nll = {key: np.stack([runs[s].test_nll for s in ss]) if len(ss) > 1 else runs[ss[0]].test_nll for key, ss in by_key.items()}
ppl = {key: model_perplexity(x) for key, x in nll.items()}  # seed mean where there are seeds
delta = {key: perplexity_difference(nll[key], nll["baseline"]) for key in nll if key != "baseline"}
rows = []
for key, title in TITLES.items():
    first = runs[next(s for s in by_key[key] if s.seed == seed)]
    trow = table[(table.model == first.spec.label) & (table.seed == seed)].iloc[0]
    seeds = [runs[s].test_ppl for s in by_key[key]]
    mean, sd = seed_spread(seeds)
    slides = SLIDES[key]
    rows.append({
        "model type": title, "test ppl": first.test_ppl,
        "bootstrapped": f"{trow['bootstrap mean']:.2f} +/- {trow['bootstrap sd']:.2f}",
        "seeds": f"{mean:.2f} +/- {sd:.2f} ({len(seeds)})" if len(seeds) > 1 else "",
        "Δ vs baseline [95% CI]": "" if key == "baseline" else str(delta[key]),
        "slides test ppl": slides[0], "slides bootstrapped": slides[1], "slides seeds (6)": slides[2],
    })  # fmt: skip
exp4 = pd.DataFrame(rows)
save_table(exp4, "exp4_layer2_timescales", P.name)
exp4

# %%
fig, ax = plt.subplots(figsize=(9, 4))
plot = table.assign(key=[r.variant if r.variant != "layer2" else f"X={r['T']:g}" for _, r in table.iterrows()])
order = ["baseline"] + [f"X={X}" for X in (5, 10, 20, 30, 70)] + ["mod5", "mod8", "pareto", "published"]
sns.stripplot(plot, x="key", y="test ppl", order=order, hue="seed", ax=ax, size=7, jitter=False)
bmean, bsd = seed_spread([runs[s].test_ppl for s in by_key["baseline"]])
ax.axhspan(bmean - bsd, bmean + bsd, color="0.88", zorder=0, label="baseline ± seed sd")
ax.axhline(perplexity(kn_nll), color="C3", ls="--", lw=1, label="Kneser-Ney bigram")
ax.set_xlabel("")
ax.set_ylabel(f"test perplexity ({P.name})")
ax.set_title("Experiment 4: fixed layer-2 timescales (one dot per seed)")
ax.legend(fontsize=8, title="seed")
save_figure(fig, "exp4_layer2_timescales", P.name)
plt.show()

# %% [markdown]
# ## Claims
#
# Each comparison is a perplexity difference on the same test tokens with a 95% interval
# from a paired bootstrap over 100-token chunks of PTB test; "over seeds" compares seed
# means (the slides' seed column). "Best" and "worst" of a set compare the named model
# with the best (or worst) of the others, taken per resample: "X = 70 is the worst"
# is X = 70 minus the worst of X = 5 .. 30 (claimed > 0), "Pareto is the best mixture"
# is Pareto minus the better of MOD5 and MOD8 (claimed < 0). Gate: every model a claim
# involves is clearly below the Kneser-Ney bigram.

# %%
XS = (5, 10, 20, 30, 70)
vs_bigram = bigram.versus_bigram(nll, kn_nll)


def gate(*keys: str) -> tuple:
    return (bigram.beats_bigram(vs_bigram, kn_nll, keys),)


def x(X: int) -> str:
    return f"layer2 X={X}"


seeds_note = f"{len(S.seeds)} seeds"
claims = [
    Claim(
        "07",
        f"Every fixed layer-2 value beats the baseline (ours: {', '.join(f'X={X} {ppl[x(X)]:.1f}' for X in XS)}; "
        f"baseline {ppl['baseline']:.1f}, seed mean)",
        "Experiment 4: L2 bias log(X-1): X = 5 60.17, 10 59.88, 20 59.97, 30 60.09, 70 60.71 vs baseline 61.40",
        tuple(Test(delta[x(X)], -1, 0.0, f"ppl(X={X}) - ppl(baseline)") for X in XS),
        gate("baseline", *[x(X) for X in XS]),
        "ppl",
    ),
    Claim(
        "07",
        f"X = 70 is the worst fixed value (ours: {ppl[x(70)]:.1f}; best X = {min(XS, key=lambda X: ppl[x(X)])})",
        "Experiment 4 table: X = 70 60.71, the highest of the five (next X = 5 60.17)",
        (Test(perplexity_contrast(nll[x(70)], [nll[x(X)] for X in XS[:-1]], against="worst"), +1, 0.0,
              "ppl(X=70) - worst of X=5..30"),),  # fmt: skip
        gate(*[x(X) for X in XS]),
        "ppl",
    ),
    Claim(
        "07",
        f"Pareto layer 2 beats the baseline over {seeds_note} (ours: {ppl['pareto']:.1f} vs {ppl['baseline']:.1f})",
        "Experiment 4: Pareto 59.66 +/- 0.17 vs baseline 61.64 +/- 0.28 over 6 seeds (single models 59.52 vs 61.40)",
        (Test(delta["pareto"], -1, 0.0, "ppl(Pareto) - ppl(baseline), seed means"),),
        gate("baseline", "pareto"),
        "ppl",
    ),
    Claim(
        "07",
        f"MOD5 and MOD8 beat the baseline over {seeds_note} (ours: {ppl['mod5']:.1f}, {ppl['mod8']:.1f} vs "
        f"{ppl['baseline']:.1f})",
        "Experiment 4: MOD5 60.34 +/- 0.15, MOD8 59.83 +/- 0.09 vs baseline 61.64 +/- 0.28 over 6 seeds",
        tuple(Test(delta[k], -1, 0.0, f"ppl({k}) - ppl(baseline), seed means") for k in ("mod5", "mod8")),
        gate("baseline", "mod5", "mod8"),
        "ppl",
    ),
    Claim(
        "07",
        f"Pareto is the best of the mixtures over {seeds_note} (ours: Pareto {ppl['pareto']:.1f}, MOD5 "
        f"{ppl['mod5']:.1f}, MOD8 {ppl['mod8']:.1f})",
        "Experiment 4: Pareto 59.66 vs MOD8 59.83 and MOD5 60.34 (seed means; single models 59.52 / 59.88 / 60.16)",
        (Test(perplexity_contrast(nll["pareto"], [nll["mod5"], nll["mod8"]], against="best"), -1, 0.0,
              "ppl(Pareto) - better of (MOD5, MOD8), seed means"),),  # fmt: skip
        gate("pareto", "mod5", "mod8"),
        "ppl",
    ),
]
print(f"baseline {ppl['baseline']:.2f} (seed mean; seed sd {bsd:.2f}); bigram {perplexity(kn_nll):.1f}")
print(", ".join(f"{v}: {sum(c.verdict == v for c in claims)}" for v in ("held", "not held", "inside noise", "not testable")))
print(f"notebook ran in {time.perf_counter() - t_start:.0f} s on profile {P.name}")

# %% [markdown]
# ## What held at this scale
#
# The slides' differences are about 1-2 perplexity points at ~61; our small models sit
# far *above* the Kneser-Ney bigram of PTB (~187 on the full test split) on the `cpu` and
# `smoke` profiles, so the gate fails and every claim is **not testable**: a model that
# has not learnt word-pair statistics cannot tell whether a fixed layer-2 timescale helps.
# The bootstrapped sd of the slides' table (and of ours) measures how the test set was
# sampled, which every model shares; the paired intervals above account for that
# sharing. Testing the claims needs models clearly below the bigram: the `paper` profile
# or a `cpu` profile trained for several full passes over PTB.

# %%
report(claims, P.name)
