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
# # 03 · The prism layer (paper section 4.1-4.2, Table 1, Appendix B)
#
# *Language Through a Prism*, **section 4**. A *prism layer* divides the hidden units
# of a layer into five contiguous *sectors* and band-passes each sector along the
# tokens with one band of Table 3a: the first sector keeps only the LOW frequencies,
# the last only the HIGH ones. Placed after the last encoder layer, it forces the MLM
# head to read document-scale information from the first units and word-scale
# information from the last. The encoder is then trained further with masked language
# modelling so that it can adapt, and, for a fair comparison, an unmodified copy is
# trained with the same data and procedure. Both are probed (section 3's probes) for
# topic, dialog acts and part of speech.
#
# **Paper claims (Table 1):** BERT + Prism beats BERT on topic (51.01 vs 32.21) and
# dialog acts (54.02 vs 47.09) and roughly keeps POS (94.41 vs 95.86).
# **Appendix B:** B.1 the LOW sector alone carries most of the topic information
# (45.1; HIGH sector 5.3) and the HIGH sector most of POS (84.1; LOW sector 16.8);
# B.2 the encoder *before* continued training is slightly worse than the trained
# baseline (POS 94.6, DA 41.8, topic 28.9); B.3 a prism layer after *every* layer is
# worse than one after the last (topic 45.2, DA 51.8, POS 94.0).
#
# **How it is built here.** `prismlib.prism.attach_prism(model, "last" | "every")` adds
# the prism layer to a Hugging Face `BertForMaskedLM` by forward hooks (no copy of the
# library's code): sectors of `sector_sizes(hidden)` units (768 → 154, 154, 154, 153,
# 153; the 384 units of MiniLM → 77, 77, 77, 77, 76), each filtered over every
# sequence's real length with `prismlib.spectral.band_pass`. `prismlib.mlm.train_mlm`
# trains with BERT's masking (15% of the tokens; 80% `[MASK]`, 10% random, 10% kept)
# and Adam, seeded, with checkpoints; the probes are `prismlib.probe` with the paper's
# recipe, exactly as in notebook 02.

# %% tags=["parameters"]
import os

profile = os.environ.get("PRISMLIB_PROFILE", "cpu")  # smoke | cpu | paper

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import Markdown, display

from prismlib.claims import Claim, compare, render
from prismlib.encode import ENCODERS, Features, encode_splits
from prismlib.plots import save_figure, save_table, set_theme
from prismlib.prism import VARIANTS, mlm_corpus, sector_sizes, trained_mlm
from prismlib.probe import majority_baseline, probe_conditions
from prismlib.profiles import get_profile
from prismlib.tasks import build_task

P = get_profile(profile)
S, Q = P.prism, P.probe  # prism settings; the probe recipe of notebook 02
if S.threads:
    torch.set_num_threads(S.threads)
set_theme()
t_start = time.perf_counter()
original = trained_mlm(P, "original")  # the encoder before continued training (App. B.2)
tokenizer, hidden = original.tokenizer, original.model.config.hidden_size
print(f"profile={P.name}  encoder={P.encoder} ({ENCODERS[P.encoder]}), hidden {hidden}, device {original.device}")

# %% [markdown]
# ## The sectors
#
# The hidden units are split evenly; the remainder goes to the first sectors, as in
# the paper's footnote 7 (768 mod 5 = 3 extra units for LOW, MID-LOW, MID).

# %% NBVAL_CHECK_OUTPUT
print("bert-base (768):", sector_sizes(768))
print(f"{P.encoder} ({hidden}):", sector_sizes(hidden))

# %% [markdown]
# ## Continued MLM training
#
# The paper trains on WikiText-103 train for 50k steps at batch 8 with Adam's default
# settings (learning rate 1e-3, betas 0.9/0.999); every profile here uses Adam with
# those defaults, no warm-up, no weight decay, no gradient clipping. Our `paper`
# profile also uses the paper's data and steps. The `cpu` profile has neither
# WikiText-103 train (it is not part of the offline data) nor the compute: one step at
# batch 8 x 512 tokens takes 10-15 s on one core of the 2-core build machine, so each
# model gets only a few dozen steps, on the WikiText text available offline.
# WikiText-2 comes tokenized: we undo its number/hyphen splitting (` @-@ ` -> `-`,
# ` @,@ ` -> `,`, ` @.@ ` -> `.`) and leave its `<unk>` markers as literal text. The
# offline MiniLM has no MLM head: a standard BERT head (dense + GELU + LayerNorm +
# decoder tied to the input embeddings) is initialised once from the profile seed, so
# all models start from identical weights and see identical batches and masks. Which
# text trained and which is held out (for Fig. 5, notebook 04):

# %%
corpus = mlm_corpus(P, tokenizer)
print(corpus.description)
print(f"\ntraining articles ({len(corpus.train_articles)}):", "; ".join(corpus.train_articles))
print(f"\nheld-out articles ({len(corpus.eval_articles)}):", "; ".join(corpus.eval_articles))
seen = S.steps * S.batch_size
print(
    f"\n{S.steps} steps x batch {S.batch_size} x {S.seq_len} tokens = {seen} sequences "
    f"({seen / len(corpus.train):.2f} passes over our training text); the paper: 50,000 x 8 = 400,000 sequences, "
    f"{400_000 / seen:,.0f} times more; learning rate {S.lr:g}"
)

# %%
variants = [v for v in VARIANTS if v != "prism-every" or S.every_layer]
models, t0 = {"original": original}, time.perf_counter()
for v in variants:
    models[v] = trained_mlm(P, v, corpus)
    r = models[v].result
    how = "loaded from cache" if r.seconds == 0 else f"trained in {r.seconds:.0f} s" + (f" (resumed at step {r.resumed_from})" if r.resumed_from else "")
    print(f"{v:12s} {r.steps} steps, {how}; loss first 5 steps {np.mean(r.losses[:5]):.3f}, last 5 steps {np.mean(r.losses[-5:]):.3f}")
train_seconds = time.perf_counter() - t0

fig, ax = plt.subplots(figsize=(6.5, 3.5))
for v in variants:
    losses = pd.Series(models[v].result.losses)
    ax.plot(np.arange(1, len(losses) + 1), losses.rolling(max(1, len(losses) // 10), min_periods=1).mean(), label=v)
ax.set_xlabel("step")
ax.set_ylabel("MLM loss (running mean)")
ax.set_title(f"Continued MLM training: {P.encoder}, batch {S.batch_size}")
ax.legend()
save_figure(fig, "mlm_training_loss", P.name)
plt.show()

# %% [markdown]
# ## Probing data
#
# The probes of notebook 02 (same tasks, windows, $1/|N|$ weights, recipe), with
# fewer windows per split (`profile.prism.sizes`), because every model is encoded
# once per task. Each model is probed on its final-layer representations (for the
# prism models: the prism layer's output). For App. B.1 the LOW and HIGH sectors of
# the BERT + Prism features are probed alone: the same features, only those columns.

# %%
TASKS3 = ("topic", "swda", "pos")
tasks = {name: build_task(name, tokenizer, S.sizes[name].windows(), profile_name=P.name, seed=P.seed, window=P.window) for name in TASKS3}
pd.DataFrame({name: {"classes": len(t.label_names), **t.summary()} for name, t in tasks.items()}).T

# %%
t0 = time.perf_counter()
features = {}  # model -> task -> split -> Features
for v, m in models.items():
    enc = m.encoder()
    features[v] = {
        name: encode_splits(enc, t.windows, {-1: ("ORIG",)}, task=name, profile=P.name, positions=S.sizes[name].positions,
                            seed=P.seed, batch_size=Q.encode_batch)[-1]
        for name, t in tasks.items()
    }
encode_seconds = time.perf_counter() - t0
print(f"features of {len(models)} models ready in {encode_seconds:.0f} s")

prism_model = models["prism"].handle.prism
SECTORS = {"LOW sector": prism_model.sector("LOW"), "HIGH sector": prism_model.sector("HIGH")}


def with_sectors(feats: dict[str, Features]) -> dict[str, Features]:
    """Add the LOW- and HIGH-sector columns of the prism model's features as conditions."""
    return {
        split: Features({"ORIG": f.x["ORIG"], **{k: f.x["ORIG"][:, sl] for k, sl in SECTORS.items()}}, f.labels, f.weights, f.window)
        for split, f in feats.items()
    }


# %% [markdown]
# ## Probes
#
# Softmax probes, Adam defaults, at most 30 epochs, learning rate halved after an
# epoch without a lower validation loss, patience 1, best epoch restored; 3 runs per
# model and task in the cpu and paper profiles (2 in smoke). SD = over probe runs.

# %%
t0 = time.perf_counter()
rows, chance = [], {}
for v in models:
    for name, t in tasks.items():
        feats = with_sectors(features[v][name]) if v == "prism" else features[v][name]
        conds = tuple(feats["train"].x)
        df = probe_conditions(feats, len(t.label_names), conds, Q.runs, P.seed, max_epochs=Q.max_epochs,
                              patience=Q.patience, batch_size=Q.batch_size, device=original.device)
        df.insert(0, "task", name)
        df.insert(0, "model", v)
        df["n_train_tokens"] = len(feats["train"])
        rows.append(df)
        chance[name] = majority_baseline(feats["train"], feats["test"])
runs = pd.concat(rows, ignore_index=True)
probe_seconds = time.perf_counter() - t0
res = runs.groupby(["model", "task", "condition"]).accuracy.agg(["mean", "std"]).mul(100)
print(f"{len(runs)} probes trained in {probe_seconds:.0f} s; majority-class test accuracy: "
      + ", ".join(f"{k} {100 * c:.1f}%" for k, c in chance.items()))

# %% [markdown]
# ## Table 1

# %%
PAPER_T1 = {  # (mean, SD) in %, paper Table 1
    ("topic", "baseline"): (32.21, 0.08), ("topic", "prism"): (51.01, 0.14),
    ("swda", "baseline"): (47.09, 0.33), ("swda", "prism"): (54.02, 0.61),
    ("pos", "baseline"): (95.86, 0.02), ("pos", "prism"): (94.41, 0.02),
}  # fmt: skip
TASK_NAMES = {"topic": "Topic classification", "swda": "Dialog speech acts", "pos": "Part of speech"}
MODEL_NAMES = {"baseline": "BERT", "prism": "BERT + Prism", "original": "BERT before continued training",
               "prism-every": "prism after every layer"}  # fmt: skip
table1 = pd.DataFrame([
    {"task": TASK_NAMES[name], "model": MODEL_NAMES[v], "accuracy": res.loc[(v, name, "ORIG"), "mean"],
     "sd": res.loc[(v, name, "ORIG"), "std"], "paper accuracy": PAPER_T1[(name, v)][0], "paper sd": PAPER_T1[(name, v)][1]}
    for name in TASKS3 for v in ("baseline", "prism")
])  # fmt: skip
save_table(table1, "table1_prism", P.name, floatfmt=".2f")
display(table1.round(2))

fig, ax = plt.subplots(figsize=(7, 3.6))
x = np.arange(len(TASKS3))
for i, v in enumerate(("baseline", "prism")):
    d = table1[table1["model"] == MODEL_NAMES[v]]
    ax.bar(x + (i - 0.5) * 0.38, d["accuracy"], 0.36, yerr=d["sd"].fillna(0), capsize=3, label=f"{MODEL_NAMES[v]} (ours)")
    ax.scatter(x + (i - 0.5) * 0.38, d["paper accuracy"], marker="_", s=400, color="k", zorder=3,
               label="paper" if i == 0 else None)
ax.set_xticks(x, [TASK_NAMES[t] for t in TASKS3])
ax.set_ylabel("probe accuracy (%)")
ax.set_title(f"Table 1: {P.encoder}, {S.steps} steps of continued training")
ax.legend(fontsize=8, loc="upper left")
save_figure(fig, "table1_prism", P.name)
plt.show()

# %% [markdown]
# ## Appendix B
#
# B.1: the LOW and HIGH sectors of BERT + Prism probed alone (the columns of the
# features above). B.2: the encoder before continued training (for the cpu profile
# that is the MiniLM of notebook 02 with a fresh, untrained MLM head, which probing
# does not use). B.3: a prism layer after every layer, trained like the others.

# %%
PAPER_B = {  # %, paper Appendix B (None: not reported)
    ("B.1", "prism", "LOW sector", "topic"): 45.1, ("B.1", "prism", "HIGH sector", "topic"): 5.3,
    ("B.1", "prism", "HIGH sector", "pos"): 84.1, ("B.1", "prism", "LOW sector", "pos"): 16.8,
    ("B.1", "prism", "LOW sector", "swda"): None, ("B.1", "prism", "HIGH sector", "swda"): None,
    ("B.2", "original", "ORIG", "pos"): 94.6, ("B.2", "original", "ORIG", "swda"): 41.8,
    ("B.2", "original", "ORIG", "topic"): 28.9,
    ("B.3", "prism-every", "ORIG", "topic"): 45.2, ("B.3", "prism-every", "ORIG", "swda"): 51.8,
    ("B.3", "prism-every", "ORIG", "pos"): 94.0,
}  # fmt: skip
appendix_b = pd.DataFrame([
    {"section": sec, "model": MODEL_NAMES[v], "features": cond if cond != "ORIG" else "all units",
     "task": TASK_NAMES[name], "accuracy": res.loc[(v, name, cond), "mean"], "sd": res.loc[(v, name, cond), "std"],
     "paper accuracy": paper}
    for (sec, v, cond, name), paper in PAPER_B.items() if v in models
])  # fmt: skip
save_table(appendix_b, "appendix_b", P.name, floatfmt=".2f")
display(appendix_b.round(2))

# %% [markdown]
# ## Which of the paper's claims held
#
# Computed from the tables above. "Inside the noise" means the difference is no
# larger than the larger SD of the two over probe runs. "POS roughly kept" means a drop
# of at most 3 points (the paper's drop is 1.45).

# %%
acc, sd = res["mean"], res["std"].fillna(0)


def versus(a: tuple, b: tuple) -> tuple[float, bool, str]:
    diff, noise = compare(acc[a], acc[b], sd[a], sd[b])
    return diff, noise, f"{acc[a]:.1f} vs {acc[b]:.1f} ({diff:+.1f} points)"


claims = []
for name, text in (("topic", "BERT + Prism beats BERT on topic"), ("swda", "BERT + Prism beats BERT on dialog acts")):
    d, n, p = versus(("prism", name, "ORIG"), ("baseline", name, "ORIG"))
    claims.append(Claim(f"{text}: {p}", d > 0, n))
d, n, p = versus(("prism", "pos", "ORIG"), ("baseline", "pos", "ORIG"))
claims.append(Claim(f"BERT + Prism roughly keeps POS (drop of at most 3 points): {p}", d >= -3, n))
d, n, p = versus(("prism", "topic", "LOW sector"), ("prism", "topic", "HIGH sector"))
claims.append(Claim(f"B.1: the LOW sector beats the HIGH sector on topic: {p}", d > 0, n))
d, n, p = versus(("prism", "pos", "HIGH sector"), ("prism", "pos", "LOW sector"))
claims.append(Claim(f"B.1: the HIGH sector beats the LOW sector on POS: {p}", d > 0, n))
for name in TASKS3:
    d, n, p = versus(("baseline", name, "ORIG"), ("original", name, "ORIG"))
    claims.append(Claim(f"B.2: continued training does not weaken the baseline on {TASK_NAMES[name].lower()}: {p}", d >= 0, n))
if "prism-every" in models:
    for name in ("topic", "swda"):
        d, n, p = versus(("prism-every", name, "ORIG"), ("prism", name, "ORIG"))
        claims.append(Claim(f"B.3: prism after every layer is worse than after the last on {TASK_NAMES[name].lower()}: {p}", d < 0, n))
display(Markdown(render(claims)))

# %% [markdown]
# **Reading these results.** The `cpu` profile differs from the paper in ways that
# matter for every claim above: the encoder is a 6-layer sentence-embedding MiniLM,
# not `bert-base-cased`, with an MLM head that starts untrained; continued training
# sees a few hundred sequences instead of 400,000, so the prism models have had almost
# no time to re-allocate information to the sectors; and the probes see far fewer
# examples (counts above). Look at B.2 first: where the continued-trained baseline
# probes *below* the encoder before continued training, the few steps at Adam's
# default learning rate (1e-3, no warm-up, as in the paper) have so far damaged the
# pretrained representations more than they adapted them, and Table 1 then compares
# two damaged models rather than the end points of the paper's 50k steps. A claim that
# fails here is reported as failing, not tuned until it holds; the `paper` profile
# (`make reproduce PROFILE=paper` on a GPU) runs the paper's settings.

# %%
total = time.perf_counter() - t_start
print(f"notebook ran in {total:.0f} s on profile {P.name} (training {train_seconds:.0f} s, "
      f"encoding {encode_seconds:.0f} s, probes {probe_seconds:.0f} s)")
