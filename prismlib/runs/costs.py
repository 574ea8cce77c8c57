"""What a profile's notebooks do, in operations: jobs, FLOPs, memory and disk per notebook.

:func:`works` counts each notebook's work from the profile's settings and the models' shapes:
training ``6 x parameters x tokens`` (forward + backward; BERT's attention adds
``12 x layers x seq_len x hidden`` per token), evaluation a third of that, a softmax probe
``6 x features x classes`` per row and epoch; the models it trains (jobs of
:mod:`prismlib.lstm.claims.grid` and :mod:`prismlib.prism.arms`), the peak accelerator memory of its
largest step and the disk its checkpoints and feature caches fill. The corpus sizes of the
full datasets (:data:`WINDOWS`) are approximate, from the datasets' published sizes. Time is
operations over a sustained throughput per kind of work: assumed (:data:`ASSUMED_TFLOPS`) or
timed on this machine's device (:func:`measure`). Alone this model is off by orders of
magnitude where a notebook's time is not its FLOPs (timings, data, Python):
:mod:`prismlib.runs.clock` (printed by ``python -m prismlib plan``) takes measured runs first and
calibrates it on them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from prismlib.devices import resolve_device
from prismlib.lstm.claims.grid import experiment
from prismlib.lstm.job import RunSpec, build_model
from prismlib.prism.arms import ARMS, TRAINED, UNTRAINED_PRISM_ON
from prismlib.probing.encoders import DRY_RUN_CONFIG, DRY_RUN_ENCODER, encoder_location
from prismlib.probing.features import CONDITIONS, HAAR_CONDITIONS, SMOOTH_CONDITIONS
from prismlib.profiles import LSTMSettings, Profile

PTB_TRAIN, PTB_VALID, PTB_VOCAB = 929_589, 73_760, 10_000
PTB_TEST_TOKENS = 82_430
"""Tokens of PTB's test split (notebook 10's routing ablation reads it whole)."""
DYCK_INPUTS = 4
"""One-hot inputs of a Dyck-2 model: two bracket pairs."""
"""PTB's training and validation tokens and vocabulary (:mod:`prismlib.data.ptb`)."""

WINDOWS: dict[str, dict[str, tuple[int, int, int]]] = {
    "offline": {"pos": (190, 20, 100), "swda": (3_300, 60, 60), "topic": (10_180, 1_130, 7_530), "mlm": (530, 170, 340)},
    "full": {"pos": (2_000, 80, 110), "swda": (3_300, 60, 60), "topic": (10_180, 1_130, 7_530), "mlm": (250_000, 530, 600)},
}
"""Approximate 512-token windows (train, val, test) of each probing task when a size is
``-1`` (all), from the datasets' published sizes: POS on the NLTK sample and CoNLL-2000
test (offline) or Treebank-3 sections 02-21 / 22 / 23 (~1.2M words); SWDA's 1,115 / 21 /
19 conversations (~1.4M words); one window per 20 Newsgroups post; MLM on WikiText-2
valid and WikiText-103 test (offline) or WikiText-103 train (~103M words) / valid / test."""

CLASSES = {"pos": 45, "swda": 43, "topic": 20, "mlm": 20_000}
"""Classes per probe (MLM: the wordpieces seen as targets, about 20k of 29k)."""

ASSUMED_TFLOPS = {"transformer": 100.0, "lstm": 5.0, "probe": 20.0}
"""Sustained TFLOP/s assumed without ``--measure``: a bert-base step under bfloat16 autocast
on a current data-centre GPU, a batch-20 cuDNN LSTM (latency-bound), float32 probes."""

SPLITS = ("train", "val", "test")
FILTERS = len(CONDITIONS) + len(SMOOTH_CONDITIONS) + len(HAAR_CONDITIONS)
"""Conditions of notebook 09's fixed-filter probes: ORIG and five brick-wall, smooth and Haar bands."""
MASKED = 77
"""Labelled rows of an MLM window: 15% of its 510 wordpieces."""
BYTES = 4


@dataclass(frozen=True)
class Work:
    """One kind of work of a notebook: ``flops`` operations of ``kind`` (a key of
    :data:`ASSUMED_TFLOPS`), ``jobs`` models trained, ``memory`` peak bytes, ``disk`` bytes
    (``disk_for`` says of what)."""

    notebook: str
    what: str
    kind: str
    flops: float
    jobs: int = 0
    memory: float = 0.0
    disk: float = 0.0
    disk_for: str = ""
    specs: tuple[RunSpec, ...] = ()
    """Work B's LSTM models (:mod:`prismlib.lstm.claims.grid`) this work trains: ``python -m prismlib
    train`` trains them before the notebook runs, so their time is not the notebook's own."""


def encoder_config(name: str) -> dict:
    """The Hugging Face config of encoder ``name`` (no download: the shipped
    ``prismlib/configs/bert-base-cased.json``, the dry run's, or MiniLM's package folder)."""
    if name == DRY_RUN_ENCODER:
        path = DRY_RUN_CONFIG
    elif name == "bert-base-cased":
        path = DRY_RUN_CONFIG.with_name("bert-base-cased.json")
    else:
        path = Path(encoder_location(name)) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"no config for encoder {name!r} at {path}: plan knows minilm, bert-base-cased and {DRY_RUN_ENCODER}")
    return {k: v for k, v in json.loads(path.read_text()).items() if not k.startswith("_")}


def section4_config(profile: Profile) -> dict:
    """The config of the encoder notebooks 03-04 run on: the profile's pretraining's size when
    its section 4 runs on it (``prism.pretrained_encoder``; no record read), else
    :func:`encoder_config` of ``profile.encoder``."""
    if not (profile.prism.pretrained_encoder and profile.pretrain is not None):
        return encoder_config(profile.encoder)
    from prismlib.pretrain import BertSize, bert_config

    return {k: v for k, v in bert_config(BertSize.parse(profile.pretrain.size)).to_dict().items() if not k.startswith("_")}


def bert_parameters(c: dict) -> tuple[int, int]:
    """``(all, non-embedding)`` parameters of a BERT with config ``c`` (MLM head included)."""
    h, f, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h
    embed = (c["vocab_size"] + c["max_position_embeddings"] + c["type_vocab_size"]) * h + 2 * h
    head = h * h + 3 * h + c["vocab_size"]
    return embed + layers * layer + head, layers * layer + head + c["vocab_size"] * h


def bert_token_flops(c: dict, seq_len: int) -> float:
    """Forward operations per token of a BERT MLM: ``2 x`` non-embedding parameters (the tied
    decoder included) plus attention scores and mixing, ``4 x layers x seq_len x hidden``."""
    return 2 * bert_parameters(c)[1] + 4 * c["num_hidden_layers"] * seq_len * c["hidden_size"]


def bert_train_memory(c: dict, batch: int, seq_len: int) -> float:
    """Peak bytes of a training step: float32 weights, gradients and Adam's two moments, plus
    16-bit activations (``34 s b h + 5 a s^2 b`` per layer, Korthikanti et al. 2022)."""
    h, a, layers = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    acts = layers * (34 * seq_len * batch * h + 5 * a * seq_len**2 * batch)
    return 16 * bert_parameters(c)[0] + acts


def bert_eval_memory(c: dict, batch: int, seq_len: int) -> float:
    """Peak bytes of a forward pass returning every layer's hidden states: float32 weights,
    the states and one layer's attention scores."""
    h, a, layers = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    return BYTES * (bert_parameters(c)[0] + batch * seq_len * (h * (layers + 1) + a * seq_len))


def lstm_parameters(s: LSTMSettings) -> int:
    """Parameters of the profile's baseline LSTM LM (built once on the CPU)."""
    model = build_model(RunSpec("baseline"), PTB_VOCAB, s, torch.arange(PTB_VOCAB) if s.cutoffs else None)
    return sum(p.numel() for p in model.parameters())


def lstm_token_flops(s: LSTMSettings) -> float:
    """Forward operations per token: ``2 x`` the LSTM weights plus the softmax (full: every
    word; adaptive: about the head cluster)."""
    sizes = [s.emb, *([s.hidden] * (s.layers - 1)), s.emb]
    rnn = sum(4 * (i + o) * o for i, o in zip(sizes[:-1], sizes[1:]))
    out = s.emb * (s.cutoffs[0] + len(s.cutoffs) if s.cutoffs else PTB_VOCAB)
    return 2.0 * (rnn + out)


def _windows(profile: Profile, task: str, split: str, size: int) -> int:
    """Windows of a split: ``size``, or all of them (:data:`WINDOWS`) when it is ``-1``."""
    return WINDOWS[profile.data][task][SPLITS.index(split)] if size < 0 else size


def _probe_flops(profile: Profile, sizes: dict, features: int, conditions: int, runs: int) -> float:
    """Training operations of ``runs x conditions`` probes on every task of ``sizes``, each at
    its own epoch cap (:meth:`~prismlib.profiles.ProbeSettings.epochs_for`: the MLM probe's is
    ``mlm_epochs``)."""
    total = 0.0
    for task, size in sizes.items():
        rows = _windows(profile, task, "train", size.train) * (size.positions if size.positions > 0 else MASKED)
        total += 6.0 * rows * features * CLASSES[task] * profile.probe.epochs_for(task) * runs * conditions
    return total


def _encode(profile: Profile, c: dict, sizes: dict, models: int) -> float:
    """Forward operations of ``models`` encoders over every window of every task of ``sizes``."""
    windows = sum(_windows(profile, task, split, getattr(size, split)) for task, size in sizes.items() for split in SPLITS)
    return models * windows * profile.window * bert_token_flops(c, profile.window)


def works(profile: Profile) -> list[Work]:
    """Every notebook's work on ``profile`` (see the module docstring for the counts)."""
    c, P, Q, S = encoder_config(profile.encoder), profile.prism, profile.probe, profile.lstm
    h = c["hidden_size"]
    eval_memory = bert_eval_memory(c, Q.encode_batch, profile.window)
    out = [
        Work(
            "01_spectral_filters",
            "one window encoded, the filter timings",
            "transformer",
            profile.window * bert_token_flops(c, profile.window),
            memory=bert_eval_memory(c, 1, profile.window),
        )
    ]
    probe_sizes = Q.sizes
    feature_rows = sum(
        _windows(profile, t, s, getattr(z, s)) * (z.positions if z.positions > 0 else MASKED)
        for t, z in probe_sizes.items()
        for s in SPLITS
    )
    out += [
        Work(
            "02_probing_filtered",
            "windows encoded; features of every condition cached",
            "transformer",
            _encode(profile, c, probe_sizes, 1),
            memory=eval_memory,
            disk=feature_rows * h * BYTES * len(CONDITIONS) * 2,
            disk_for="the features of every window, band and layer probed (float32, cached)",
        ),
        Work(
            "02_probing_filtered",
            f"{Q.runs} x {len(CONDITIONS)} probes per task, + the measured choices",
            "probe",
            _probe_flops(profile, probe_sizes, h, len(CONDITIONS), Q.runs)
            + _probe_flops(profile, {k: v for k, v in probe_sizes.items() if k != "mlm"}, h, 2 * len(CONDITIONS), Q.option_runs),
        ),
    ]
    c4 = section4_config(profile)  # the encoder of notebooks 03-04
    tokens = P.steps * P.batch_size * P.seq_len
    layers_trained = P.train_layers if P.recipe == "staged" else c4["num_hidden_layers"]
    train_share = (layers_trained + 1) / (c4["num_hidden_layers"] + 1) if P.recipe == "staged" else 1.0
    arm_flops = 3 * tokens * bert_token_flops(c4, P.seq_len) * train_share
    seeds = len(P.seeds)  # every trained arm once per training seed; the untrained arms once
    jobs = len(TRAINED) * seeds
    models = sum(seeds if UNTRAINED_PRISM_ON.get(a, a) in TRAINED else 1 for a in ARMS)
    out += [
        Work(
            "03_prism_layer",
            f"{len(TRAINED)} arms x {seeds} seeds x {P.steps:,} steps of {P.batch_size} x {P.seq_len} ({P.recipe} recipe)",
            "transformer",
            jobs * arm_flops,
            jobs=jobs,
            memory=bert_train_memory(c4, P.batch_size, P.seq_len),
            disk=jobs * 4 * bert_parameters(c4)[0] * BYTES,
            disk_for="checkpoints of the trained arms (weights and optimiser state)",
        ),
        Work("03_prism_layer", f"{models} models encode the probing windows", "transformer", _encode(profile, c4, P.sizes, models)),
        Work(
            "03_prism_layer",
            f"probes of {models} models",
            "probe",
            _probe_flops(profile, P.sizes, c4["hidden_size"], models + 1, Q.runs),
        ),
        Work(
            "04_long_range_mlm",
            f"Fig. 5: {P.eval_inputs} inputs x {len(ARMS)} models x {seeds} seeds",
            "transformer",
            len(ARMS) * seeds * P.eval_inputs * P.seq_len * bert_token_flops(c4, P.seq_len),
            memory=bert_eval_memory(c4, P.eval_batch, P.seq_len),
        ),
    ]
    per_token = lstm_token_flops(S)
    epoch_tokens = S.steps_per_epoch * S.batch_size * S.bptt if S.steps_per_epoch else PTB_TRAIN // S.checks_per_pass
    valid_tokens = S.valid_tokens or PTB_VALID
    job_flops = S.epochs * (3 * epoch_tokens + valid_tokens) * per_token
    rounds = f"at most {S.epochs} rounds (the cap; a run stops by its rule before)" if S.optimizer == "anneal" else f"{S.epochs} epochs"
    params = lstm_parameters(S)
    seen: set = set()
    for notebook, names in (
        ("05_chrono_init", ("baseline", "exp1")),
        ("06_fixed_bias", ("exp2", "exp3")),
        ("07_layer2_timescales", ("exp4", "official")),
        ("08_memory_ablation", ("memory",)),
    ):
        specs = [s for n in names for s in experiment(n, profile) if s not in seen]
        seen.update(specs)
        if not specs:
            continue  # every model it reads is trained for an earlier notebook
        out.append(
            Work(
                notebook,
                f"{len(specs)} LSTM LMs x {rounds}",
                "lstm",
                len(specs) * job_flops,
                jobs=len(specs),
                memory=16 * params + 12 * S.batch_size * (S.bptt + 20) * S.hidden * S.layers * BYTES,
                disk=len(specs) * 4 * params * BYTES,
                disk_for="LSTM checkpoints (the job cache)",
                specs=tuple(specs),
            )
        )
    memory_models = len(experiment("memory", profile))
    ablations = memory_models * S.memory_contexts * S.context * (S.memory_warmup + S.context)
    out.append(
        Work(
            "08_memory_ablation",
            f"cell-state ablation: {memory_models} models x {S.memory_contexts} contexts",
            "lstm",
            ablations * per_token,
        )
    )
    B, n = profile.beyond, profile.window
    gate_epochs = sum(Q.epochs_for(t) * _windows(profile, t, "train", z.train) for t, z in Q.sizes.items())  # window-epochs
    state_windows = sum(_windows(profile, t, s, getattr(z, s)) for t, z in Q.sizes.items() for s in SPLITS)
    out += [
        Work(
            "09_beyond_bands",
            "windows encoded, full states cached",
            "transformer",
            _encode(profile, c, Q.sizes, 1),
            memory=eval_memory,
            disk=state_windows * n * h * 2,
            disk_for="the encoder's states of every window (float16, shared with 02 and 03)",
        ),
        Work(
            "09_beyond_bands",
            f"{B.runs} x {FILTERS} fixed-filter probes per task",
            "probe",
            _probe_flops(profile, Q.sizes, h, FILTERS, B.runs),
        ),
        # the learned gate: a DCT and an inverse per window and step, forward and backward
        Work(
            "09_beyond_bands",
            f"{B.gate_runs} learned-gate probes per task",
            "probe",
            B.gate_runs * gate_epochs * 12.0 * n * n * h,
        ),
        # its all-pass control: the same windows and steps, no filter (the probe's rows only)
        Work(
            "09_beyond_bands",
            f"{B.gate_runs} all-pass-gate probes per task (the control)",
            "probe",
            _probe_flops(profile, Q.sizes, h, 1, B.gate_runs),
        ),
    ]
    D = profile.iclr.dyck
    dyck_token = 2.0 * 4 * (DYCK_INPUTS + D.hidden) * D.hidden  # one LSTM layer's forward per symbol; the tiny output left out
    out += [
        # the cap's passes over the training strings, of half the longest length on average, forward and backward
        Work(
            "10_multi_timescale_iclr",
            f"{2 * len(D.seeds)} Dyck-2 models trained (2 kinds x {len(D.seeds)} seeds, at most {D.epochs} passes)",
            "lstm",
            2 * len(D.seeds) * D.epochs * D.n_train * D.max_length / 2 * 3 * dyck_token,
            jobs=2 * len(D.seeds),
        ),
        # routing: PTB test through notebook 07's official model once per zeroed block (and once whole)
        Work(
            "10_multi_timescale_iclr",
            f"{profile.iclr.routing_blocks} timescale blocks zeroed in turn on PTB test",
            "lstm",
            (profile.iclr.routing_blocks + 1) * PTB_TEST_TOKENS * lstm_token_flops(profile.lstm),
        ),
    ]
    return out


def measure(profile: Profile, device: str = "auto", steps: int = 3) -> dict[str, float]:
    """Sustained TFLOP/s of each kind of work on ``device``, from ``steps`` timed training
    steps (after one warm-up) at the profile's sizes with random weights: a BERT MLM step
    (bfloat16 autocast on CUDA), an LSTM LM step, a probe step."""
    from transformers import BertConfig, BertForMaskedLM

    dev = resolve_device(device)
    P, S = profile.prism, profile.lstm

    def rate(step: Callable[[], None], flops: float) -> float:
        step()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        return flops * steps / (time.perf_counter() - t0) / 1e12

    c = encoder_config(profile.encoder)
    bert = BertForMaskedLM(BertConfig(**c)).to(dev)  # type: ignore[arg-type]
    opt = torch.optim.Adam(bert.parameters())
    ids = torch.randint(1000, c["vocab_size"], (P.batch_size, P.seq_len), device=dev)

    def bert_step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            loss = bert(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    out = {"transformer": rate(bert_step, 3 * P.batch_size * P.seq_len * bert_token_flops(c, P.seq_len))}
    bert_step = None  # type: ignore[assignment]  # frees the transformer and its optimiser before the LSTM is built
    lstm = build_model(RunSpec("baseline"), PTB_VOCAB, S, torch.arange(PTB_VOCAB) if S.cutoffs else None).to(dev)
    sgd = torch.optim.SGD(lstm.parameters(), lr=1.0)
    x = torch.randint(0, PTB_VOCAB, (S.batch_size, S.bptt + 1), device=dev)

    def lstm_step() -> None:
        out_ = lstm(x[:, :-1])
        lstm.nll(out_.last_dropped, x[:, 1:]).mean().backward()
        sgd.step()
        sgd.zero_grad(set_to_none=True)

    out["lstm"] = rate(lstm_step, 3 * S.batch_size * S.bptt * lstm_token_flops(S))
    h, k, rows = c["hidden_size"], CLASSES["pos"], profile.probe.batch_size
    probe = torch.nn.Linear(h, k).to(dev)
    popt = torch.optim.Adam(probe.parameters())
    feats, labels = torch.randn(rows, h, device=dev), torch.randint(0, k, (rows,), device=dev)

    def probe_step() -> None:
        torch.nn.functional.cross_entropy(probe(feats), labels).backward()
        popt.step()
        popt.zero_grad(set_to_none=True)

    out["probe"] = rate(probe_step, 6 * rows * h * k)
    return out
