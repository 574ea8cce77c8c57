"""The settings classes of the run profiles: each notebook's settings, what they mean and the
checks their values must pass. The profiles' values are in the modules beside this one.

A trainer's settings hold its *recipe* (what changes a trained model: a job's key hashes it
whole, :meth:`~prismlib.profiles.Nested.flat`) beside the settings of its analyses, and a
recipe that anneals holds its :class:`~prismlib.anneal.AnnealSettings` (``schedule``); a
grouped field reads through and changes by its name (``settings.decays``,
``settings.updated(decays=2)``: :class:`~prismlib.profiles.Nested`).

Long: a settings class per notebook group, each setting documented beside the check of its
values; split, one profile's meaning would spread over modules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from prismlib.anneal import AnnealSettings
from prismlib.profiles.nested import Nested


@dataclass(frozen=True)
class SpectralSettings:
    """Notebook 01 (paper section 2, App. A and D).

    Attributes:
        article: index of the WikiText-103 test article whose first window gives Fig. 2.
        neuron: hidden unit shown in Fig. 2; ``None`` picks the unit with the largest
            variance over the window.
        appendix_a_lengths: sequence lengths for which App. A's allocation is tabulated.
        timing_lengths: sequence lengths N of the App. D timing sweep.
        timing_batch: batch size of the timing inputs ``(batch, N, hidden)``.
        timing_repeats: timed repetitions per point (the minimum is reported).
    """

    article: int
    neuron: int | None
    appendix_a_lengths: tuple[int, ...]
    timing_lengths: tuple[int, ...]
    timing_batch: int
    timing_repeats: int


@dataclass(frozen=True)
class LSTMRecipe(Nested):
    """How one of work B's language models is trained: everything that changes the trained
    model or the numbers its run record keeps, and nothing else. A job's key hashes the
    recipe whole (:meth:`prismlib.lstm.Job.describe`, :meth:`~prismlib.profiles.Nested.flat`), so a new field
    here or in its ``schedule`` changes every key (the models of the old recipe are
    retrained, never reused); analysis settings live beside it in :class:`LSTMSettings`.

    Attributes:
        emb, hidden, layers: embedding size (= last layer, tied), other layers' width, depth.
        dropout, dropouth, dropouti, dropoute, wdrop: AWD-LSTM's output, between-layer,
            input, embedding and hidden-to-hidden (DropConnect) dropout rates.
        optimizer: ``ntasgd`` (SGD -> ASGD, the slides' baseline), ``anneal`` (SGD whose rate
            falls on a validation plateau and which stops by that rule,
            :mod:`prismlib.anneal`, or on a fixed path: ``fixed_path``; the cpu recipe) or
            ``adam``.
        lr, clip, wdecay: learning rate, gradient-norm clip, weight decay.
        alpha, beta: AR and TAR regularisation weights.
        nonmono: NT-ASGD's non-monotone window (validation checks).
        batch_size, bptt: training streams and mean BPTT length (sequence length 70).
        epochs: training epochs (validation + checkpoint after each).
        steps_per_epoch: BPTT steps per "epoch"; ``None`` is a full pass over PTB train.
        eval_batch: streams for validation / test evaluation.
        valid_tokens: first tokens of PTB valid used for the per-epoch validation (NT-ASGD,
            best checkpoint); ``None`` is the full split.
        test_tokens: first tokens of PTB test evaluated; ``None`` is the full split.
        schedule: the ``anneal`` schedule (:class:`~prismlib.anneal.AnnealSettings`; its
            fields read through, ``recipe.decays``): the rate is divided by ``decay_factor``
            when full validation fails to improve by ``decay_tolerance`` (a fraction) at
            ``decay_patience`` checks in a row; the run stops at the first such stall after
            ``decays`` decays; no decay in the first ``min_rounds`` rounds nor before the
            model beats the PTB bigram on validation. ``epochs`` is the cap in rounds. Other
            optimizers leave it unused (its values still enter the key).
        cutoffs: adaptive-softmax cluster boundaries (word frequency ranks), e.g.
            ``(2000, 6000)``; ``()`` is the full softmax tied to the embedding (AWD-LSTM).
        average_last: NT-ASGD switches to averaged SGD for the last ``average_last`` epochs
            at the latest (0: only when validation stalls for ``nonmono`` epochs, AWD's rule;
            a run of a few epochs never stalls).
        curve_every: BPTT steps between the points of a model's learning curve (perplexity
            of the first ``curve_tokens`` tokens of PTB valid); ``None``: the per-epoch
            validation perplexities are the curve.
        curve_tokens: size of the fixed validation subset of the learning curve.
        until_converged: ``epochs`` is a cap; training stops after the first epoch at which
            the model gate passes (:func:`prismlib.lstm.model_gate`).
        converge_share, converge_tolerance: the model gate of every work-B perplexity claim
            (and the stop rule of ``until_converged``): the validation perplexity improved by
            less than ``converge_tolerance`` (a fraction) over the last ``converge_share`` of
            the budget.
        checks_per_pass: with ``steps_per_epoch=None``, the "epochs" (rounds: validation,
            checkpoint, a schedule decision) per pass over PTB train (1: one per pass).
        fixed_path: the ``anneal`` schedule on a fixed learning-rate path, the same for
            every model of a comparison: the rate stays at ``lr`` for ``min_rounds`` rounds,
            is divided by ``decay_factor`` after each of the next ``decays`` rounds, and the
            run stops after one more (``decay_tolerance`` and ``decay_patience`` unused;
            validation only picks the kept checkpoint and draws the curve).
    """

    emb: int
    hidden: int
    layers: int
    dropout: float
    dropouth: float
    dropouti: float
    dropoute: float
    wdrop: float
    optimizer: str
    lr: float
    clip: float
    wdecay: float
    alpha: float
    beta: float
    nonmono: int
    batch_size: int
    bptt: int
    epochs: int
    steps_per_epoch: int | None
    eval_batch: int
    valid_tokens: int | None
    test_tokens: int | None
    schedule: AnnealSettings
    cutoffs: tuple[int, ...] = ()
    average_last: int = 0
    curve_every: int | None = None
    curve_tokens: int = 10_000
    until_converged: bool = False
    converge_share: float = 0.25
    converge_tolerance: float = 0.01
    checks_per_pass: int = 1
    fixed_path: bool = False

    def __post_init__(self) -> None:
        if self.optimizer not in ("ntasgd", "anneal", "adam"):
            raise ValueError(f"optimizer must be 'ntasgd', 'anneal' or 'adam', got {self.optimizer!r}")
        if self.checks_per_pass < 1:
            raise ValueError(f"checks_per_pass must be >= 1, got {self.checks_per_pass}")
        if self.fixed_path and self.optimizer != "anneal":
            raise ValueError(f"fixed_path is a form of the anneal schedule: set optimizer='anneal' (got {self.optimizer!r})")
        if self.optimizer == "anneal":
            self.schedule.check_cap(self.epochs, self.fixed_path, cap_name="epochs")
            if self.until_converged or self.average_last:
                raise ValueError("the anneal schedule stops by its own rule: set until_converged=False and average_last=0")
        if self.until_converged and self.average_last:
            raise ValueError("until_converged stops at an epoch not known in advance: set average_last=0 (NT-ASGD's own switch)")
        if self.curve_every is not None and self.curve_every < 1:
            raise ValueError(f"curve_every must be a positive number of steps or None, got {self.curve_every}")
        if not 0 < self.converge_share < 1 or self.converge_tolerance <= 0:
            raise ValueError(
                f"converge_share must be in (0, 1) and converge_tolerance > 0, got {self.converge_share}, {self.converge_tolerance}"
            )

    def doubled(self) -> LSTMRecipe:
        """This fixed path twice as long at the start rate, with the same tail: the recipe of
        the doubling check (the convergence gate of every paired comparison)."""
        if not self.fixed_path:
            raise ValueError("only a fixed learning-rate path has a doubled twin (fixed_path=True)")
        rounds = self.schedule.min_rounds
        return self.updated(min_rounds=2 * rounds, epochs=self.epochs + rounds)


@dataclass(frozen=True)
class LSTMSettings(Nested):
    """Notebooks 05-08 (work B): the recipe of its language models and how they are analysed.

    The recipe's fields read through the settings too (``settings.hidden`` is
    ``settings.recipe.hidden``, ``settings.decays`` is ``settings.recipe.schedule.decays``);
    :meth:`~Nested.updated` changes fields of any of them by name.

    Attributes:
        recipe: how every model is trained (:class:`LSTMRecipe`; a job's key hashes it).
        seeds: seeds of the models whose table has a seed column (experiment 4, baseline).
        bootstrap: bootstrap resamples of the test set (70-word blocks).
        memory_contexts: 70-word contexts from PTB test in the cell-state ablation.
        context: context length of the ablation (words).
        threads: torch CPU threads while training / evaluating (``None``: torch's default).
            On 2 shared cores one thread is faster: two threads per process oversubscribe.
        memory_warmup: words the model reads before each ablation context (notebook 08).
        memory_fit: distances ``(d_min, d_max)`` over which every model's decay is fitted.
        memory_mode: what ablating a word means: ``replace`` (by ``<unk>``) or ``remove``.
        grid: which models the notebooks train (:mod:`prismlib.lstm.claims.grid`): ``slides`` (every
            model the slides tabulate) or ``cpu`` (a subset that tests each claim; the smoke
            profile's).
        all_seeds: every model of the grid trains with every seed of ``seeds`` (paired: seed
            k of every model shares its data order and dropout masks); otherwise only the
            baseline, Pareto and, on the slides grid, MOD5 and MOD8 do (the others: the first
            seed).
        freeze: what the grid's fixed variants freeze (:data:`prismlib.lstm.FREEZE`).
        records: every finished job also writes its committed run record under
            ``results/<profile>/runs/`` (:mod:`prismlib.records`), and a job whose usable
            record is there is not trained again (``cpu``, ``paper``; never ``smoke``).
    """

    recipe: LSTMRecipe
    seeds: tuple[int, ...]
    bootstrap: int
    memory_contexts: int
    context: int
    threads: int | None
    memory_warmup: int = 100
    memory_fit: tuple[int, int] = (2, 50)
    memory_mode: str = "replace"
    grid: str = "cpu"
    freeze: str = "input_forget"
    all_seeds: bool = False
    records: bool = False


@dataclass(frozen=True)
class TaskSize:
    """Windows per split of one probing task, and labelled positions sampled per window.

    ``-1`` windows means all; ``positions <= 0`` means every labelled position.
    """

    train: int
    val: int
    test: int
    positions: int

    def windows(self) -> dict[str, int]:
        return {"train": self.train, "val": self.val, "test": self.test}


@dataclass(frozen=True)
class ProbeSettings:
    """Notebooks 02-03 (paper section 3 and the probes of section 4).

    Attributes:
        sizes: task (``pos``, ``swda``, ``topic``, ``mlm``) -> :class:`TaskSize`.
        runs: probe runs per condition (error bars = SD over runs; the paper: 3).
        max_epochs: epoch limit of a probe (the paper: 30).
        patience: early-stopping patience (the paper: 1).
        mlm_epochs: epoch limit of the MLM probe (the paper: 3), which also stops early
            on validation loss with ``patience``.
        batch_size: tokens per probe step.
        encode_batch: windows per encoder call.
        layer: encoder layer probed (``-1`` = last).
        mask_prob: share of wordpieces masked for the MLM probe.
        sweep_layers: layers of the topic layer sweep (``None``: every layer).
        mlm_vocab: MLM probe targets of notebook 09 (and of :func:`prismlib.probing.profile_task`):
            the most frequent training target wordpieces (0: every target seen, the paper's
            full vocabulary).
        mlm_buckets: notebook 02's MLM probes: one per bucket of training-frequency ranks
            ``(first, last)`` (1-based, inclusive; ``last`` 0: to the end), each over its own
            targets, cut from the task of every target (:func:`prismlib.probing.mlm_bucket`);
            ``((1, 0),)`` is one probe over every target seen, the paper's.
        da_labels: dialog-act label set: ``continuation`` (every profile's default) keeps
            ``+`` as a 43rd tag (the paper's cgpotts/swda preprocessing), ``resolved``
            gives 42 classes (measured as a choice in notebook 02).
        standardize: probe features standardised (``False``: raw, as in the paper).
        specials: ``inside`` ([CLS]/[SEP] filtered with the tokens) or ``outside``.
        workers: parallel probe-training processes (one thread each).
        option_runs: probe runs per condition in notebook 02's tables of the three
            measured choices (features, special tokens, dialog-act labels).
    """

    sizes: dict[str, TaskSize]
    runs: int
    max_epochs: int
    patience: int
    mlm_epochs: int
    batch_size: int
    encode_batch: int
    layer: int = -1
    mask_prob: float = 0.15
    sweep_layers: tuple[int, ...] | None = None
    mlm_vocab: int = 0
    mlm_buckets: tuple[tuple[int, int], ...] = ((1, 0),)
    da_labels: str = "continuation"
    standardize: bool = False
    specials: str = "inside"
    workers: int = 1
    option_runs: int = 1

    def __post_init__(self) -> None:
        if not self.mlm_buckets:
            raise ValueError("mlm_buckets needs at least one bucket of ranks (first, last); ((1, 0),) is every target")
        for first, last in self.mlm_buckets:
            if first < 1 or (last != 0 and last < first):
                raise ValueError(f"an MLM bucket is (first, last) with 1 <= first <= last (last 0: to the end), got {(first, last)}")

    def epochs_for(self, task: str) -> int:
        """The epoch cap of a probe on ``task``: ``mlm_epochs`` for ``"mlm"`` (its frequency
        buckets included), else ``max_epochs``."""
        return self.mlm_epochs if task == "mlm" else self.max_epochs


@dataclass(frozen=True)
class MLMRecipe(Nested):
    """How section 4 trains an arm further with masked language modelling: everything that
    changes a trained arm, and nothing else. An arm's key hashes it whole
    (:meth:`prismlib.prism.ArmJob.describe`, :meth:`~prismlib.profiles.Nested.flat`); the probes, Fig. 5 and
    how often a run checkpoints live beside it in :class:`PrismSettings`.

    Attributes:
        train_text: ``"wikitext103-train"`` (the paper) or ``"offline"``: WikiText-2 valid
            plus ``train_articles_103`` WikiText-103 test articles (the others are held out).
        train_articles_103: WikiText-103 test articles (of 60, a seeded draw) that join the
            offline training text; the remaining ones are the Fig. 5 evaluation text.
        steps: optimizer steps of continued training (the paper: 50k).
        batch_size: sequences per step (the paper: 8).
        seq_len: tokens per training sequence, special tokens included (512).
        lr: Adam's learning rate (the paper: Adam's defaults, i.e. 1e-3).
        schedule: the annealed rule of a run that trains to a stop
            (:class:`~prismlib.anneal.AnnealSettings`, as work B's; its fields read through):
            see ``stop_articles``. A fixed budget leaves it unused (its values still enter
            the key).
        recipe: ``"full"`` (the paper: every parameter trained from the first step,
            :func:`prismlib.prism.train_mlm`) or ``"staged"`` (the cpu recipe of
            :mod:`prismlib.prism.staged_recipe`: lower layers frozen and cached, a head warm-up,
            then the top ``train_layers`` layers and the head).
        train_layers: staged: encoder layers trained, counted from the top.
        train_inputs: training inputs used (a seeded subset; ``None``: all of them).
        mask_versions: staged: maskings of every training input whose frozen states are
            cached (epoch ``e`` of the top-layer training reads version ``e mod mask_versions``).
        head_epochs: staged: epochs of the head warm-up over the masked positions.
        head_lr: staged: Adam's learning rate in the head warm-up.
        pretrained_lr: staged: Adam's learning rate for the trained encoder layers, which
            start pretrained (``None``: ``lr``, as the head); the head (and nothing else
            trains: a prism has no parameters) keeps ``lr``. A lower rate is the remedy
            measured against the damage continued training does to the encoder
            (``benchmarks/prism_damage.py``).
        head_batch: staged: masked positions per step of the head warm-up.
        warmup: steps of linear learning-rate warm-up (then linear decay to 0 at ``steps``;
            0: a constant rate, the paper's Adam defaults).
        clip: gradient-norm clipping (0: none, the paper).
        attention_dropout: staged: dropout on the attention probabilities of the trained
            layers (``None``: the encoder's own, 0.1 for BERT and MiniLM). On a CPU PyTorch's
            fused attention kernel has no dropout: with it a step runs the unfused path,
            which costs 40% of a cpu step (:mod:`benchmarks.prism_recipe`); the hidden
            dropout is kept either way.
        stop_articles: staged: training-side articles (a seeded draw from WikiText-2 valid)
            held out of training as the *stopping text*; 0: a fixed budget of ``steps``
            (linear decay). With stopping text the top layers train to a stop
            (:class:`prismlib.prism.StopRule`): the held-out MLM perplexity on it is checked
            every ``round_steps`` steps and the annealed rule of :mod:`prismlib.anneal`
            (``schedule``) lowers the rate and stops; ``steps`` is the cap. The stopping
            text is neither trained on nor used by Fig. 5.
        round_steps: steps between two checks of a run that trains to a stop.
    """

    train_text: str
    train_articles_103: int
    steps: int
    batch_size: int
    seq_len: int
    lr: float
    schedule: AnnealSettings
    recipe: str = "full"
    train_layers: int = 0
    train_inputs: int | None = None
    mask_versions: int = 1
    head_epochs: int = 0
    head_lr: float = 1e-3
    pretrained_lr: float | None = None
    head_batch: int = 512
    warmup: int = 0
    clip: float = 0.0
    attention_dropout: float | None = None
    stop_articles: int = 0
    round_steps: int = 0

    @property
    def trains_to_stop(self) -> bool:
        """Whether the arms train until the annealed rule stops them (else a fixed budget)."""
        return self.stop_articles > 0

    def __post_init__(self) -> None:
        if self.stop_articles > 0:
            if self.recipe != "staged":
                raise ValueError("training to a stop (stop_articles > 0) needs the staged recipe")
            if self.round_steps < 1 or self.steps % self.round_steps:
                raise ValueError(f"round_steps must be >= 1 and divide steps ({self.steps}), got {self.round_steps}")
            self.schedule.check_cap(self.steps // self.round_steps, cap_name="steps // round_steps")
        if self.recipe not in ("full", "staged"):
            raise ValueError(f"recipe must be 'full' or 'staged', got {self.recipe!r}")
        if self.recipe == "staged" and (self.train_layers < 1 or self.mask_versions < 1):
            raise ValueError(
                f"the staged recipe needs train_layers >= 1 and mask_versions >= 1, got {self.train_layers} and {self.mask_versions}"
            )
        if self.pretrained_lr is not None and (self.recipe != "staged" or not self.pretrained_lr > 0):
            raise ValueError(f"pretrained_lr needs the staged recipe and a rate > 0, got {self.pretrained_lr}")
        if self.attention_dropout is not None and (self.recipe != "staged" or not 0 <= self.attention_dropout < 1):
            raise ValueError(f"attention_dropout needs the staged recipe and a value in [0, 1), got {self.attention_dropout}")


@dataclass(frozen=True)
class PrismSettings(Nested):
    """Notebooks 03-04 (paper section 4, App. B): continued MLM training of the encoder
    with and without a prism layer, the probes of Table 1, and Fig. 5.

    The recipe's fields read through the settings (``settings.steps`` is
    ``settings.training.steps``); :meth:`~Nested.updated` changes fields of either by name.

    Attributes:
        training: how every arm is trained (:class:`MLMRecipe`; an arm's key hashes it). Not
            called ``recipe``: that is the recipe's kind, ``full`` or ``staged``.
        checkpoint_every: steps between checkpoints.
        every_layer: also train the App. B.3 model (prism after every layer).
        sizes: probing task (``pos``, ``swda``, ``topic``) -> windows per split and positions.
        span: masked positions of Fig. 5 (half-open; the paper: tokens 200-299).
        eval_inputs: inputs of Fig. 5 (the paper: N = 1600).
        eval_stride: wordpieces between the starts of consecutive Fig. 5 inputs of an article.
        eval_batch: inputs per forward pass in the Fig. 5 evaluation.
        bootstrap: bootstrap resamples of the Fig. 5 intervals.
        seeds: training seeds of every trained arm, paired across arms (:mod:`prismlib.prism.seeds`);
            the first is the profile's ``seed``, the arm jobs' seed before seeds existed. A
            contrast of trained arms needs :data:`prismlib.claims.MIN_SEEDS` (the paper: 3 trials).
        threads: torch CPU threads in notebooks 03-04 (``None``: torch's default; on 2
            shared cores one thread is faster).
        pretrained_encoder: section 4 runs on the profile's own pretraining (the committed
            record of ``profile.pretrain``, the small BERT of issue 76, read by
            :func:`prismlib.pretrain.section4_encoder`) instead of ``profile.encoder``.
    """

    training: MLMRecipe
    checkpoint_every: int
    every_layer: bool
    sizes: dict[str, TaskSize]
    span: tuple[int, int]
    eval_inputs: int
    eval_stride: int
    eval_batch: int
    bootstrap: int
    seeds: tuple[int, ...]
    threads: int | None = None
    pretrained_encoder: bool = False

    def __post_init__(self) -> None:
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or min(self.seeds) < 0:
            raise ValueError(f"seeds must be distinct integers >= 0, at least one, got {self.seeds}")


@dataclass(frozen=True)
class BeyondSettings:
    """Notebook 09 (beyond the paper): smooth, wavelet and learned filters on the probing
    tasks of notebook 02 (same windows, sizes and probe recipe: :class:`ProbeSettings`).

    Attributes:
        runs: probe runs per fixed filter (ORIG, the brick-wall, smooth and Haar bands).
        gate_runs: runs of the learned gate and of its all-pass control (trained alike, each
            run on its own bootstrap resample): the learned profiles' noise is the spread
            over these runs, and a claim about them needs
            :data:`prismlib.probing.MIN_GATE_RUNS` (5; a Welch interval over 2 runs has
            about 1 degree of freedom).
        batch_size: rows per step of the fixed filters' probes (notebook 02's recipe with
            larger batches: on 2 cores a probe's time is mostly its number of steps; a cpu
            POS probe took 11.8 s at 64 rows per step, 4.8 s at 256, on one thread of a loaded
            machine).
        gate_lr: Adam's learning rate of the learned gate's logits (the linear probe keeps
            the paper's 1e-3): at 1e-3 a logit moves about 1e-3 per step, too little in the
            few hundred steps of a cpu-sized task (measured on synthetic data).
        grid_size: points of the learned gate's frequency grid.
        batch_windows: windows per step of the learned probe; ``None``: as many as hold
            ``batch_size`` sampled rows on average (:func:`prismlib.probing.matched_windows`),
            so that it takes about as many steps per epoch as the fixed filters' probes.
        spectrum_texts: WikiText-103 test articles of the spectral profile of the encoder.
        resample: each learned-gate run trains on its own bootstrap resample of the
            training windows, so the interval over runs of its profile covers the training
            data as well as the seed (:func:`prismlib.probing.gated_probe_runs`).
    """

    runs: int
    gate_runs: int = 5
    batch_size: int = 256
    gate_lr: float = 2e-2
    grid_size: int = 512
    batch_windows: int | None = None
    spectrum_texts: int = 20
    resample: bool = True


@dataclass(frozen=True)
class DyckRecipe(Nested):
    """How notebook 10 trains a Dyck-2 model (:mod:`prismlib.lstm.iclr.dyck_training`): everything
    that changes a trained model, and nothing else; a Dyck job's key hashes it whole
    (:meth:`prismlib.lstm.iclr.DyckJob.describe`, :meth:`~prismlib.profiles.Nested.flat`). The official recipe is
    :data:`prismlib.lstm.iclr.OFFICIAL_RECIPE` (256 units, batch 32, Adam 1e-4, clip 1, MSE, stop at
    validation loss < 1e-4 or 2000 epochs, 10,000 / 2,000 / 5,000 strings, 20 seeds).

    Attributes:
        hidden: LSTM units.
        n_train, n_validation, n_test: distinct strings per split (one seeded draw, ``data_seed``).
        max_length: longest string (symbols).
        batch_size, lr, clip: Adam's batches, learning rate and gradient-norm clip.
        epochs: the cap (passes over the training strings); a run at its cap is not converged.
        stop_val_loss: a run stops, converged, once its validation loss (mean squared error per
            output) falls below this (the official rule).
        anneal: also the annealed rule of :mod:`prismlib.anneal` on the validation loss, with
            ``schedule``.
        schedule: the annealed rule's knobs (:class:`~prismlib.anneal.AnnealSettings`; its fields
            read through): the rate is divided by ``decay_factor`` when the loss improves by less
            than ``decay_tolerance`` (a fraction) at ``decay_patience`` checks in a row, and the
            run stops, converged, at the next such stall after ``decays`` decays (none in the
            first ``min_rounds`` epochs nor before the loss beats the best constant output).
            Without ``anneal`` it goes unused (its values still enter the key).
        bucket: batches of strings of similar length (a random draw among equal lengths, the
            batches in random order) instead of the official random batches: the same
            strings per epoch at a third of the padding on cpu.
        data_seed: seed of the data draw (every model reads the same strings).
    """

    hidden: int
    n_train: int
    n_validation: int
    n_test: int
    batch_size: int
    lr: float
    epochs: int
    schedule: AnnealSettings
    max_length: int = 200
    clip: float = 1.0
    stop_val_loss: float = 1e-4
    anneal: bool = False
    bucket: bool = False
    data_seed: int = 0

    def __post_init__(self) -> None:
        if min(self.hidden, self.n_train, self.n_validation, self.n_test, self.batch_size, self.epochs) < 1:
            raise ValueError("a Dyck recipe needs hidden, n_train, n_validation, n_test, batch_size and epochs (the cap) >= 1")
        if self.anneal:
            self.schedule.check_cap(self.epochs, cap_name="epochs")


@dataclass(frozen=True)
class DyckSettings(Nested):
    """Notebook 10's Dyck-2 models: their recipe, seeds and how they are run.

    The recipe's fields read through the settings (``settings.hidden`` is
    ``settings.recipe.hidden``); :meth:`~Nested.updated` changes fields of either by name.

    Attributes:
        recipe: how every model is trained (:class:`DyckRecipe`; a job's key hashes it).
        seeds: seeds of each model (the paper: 1..20).
        eval_batch: strings per evaluation batch.
        threads: torch threads of a training process.
    """

    recipe: DyckRecipe
    seeds: tuple[int, ...]
    eval_batch: int = 256
    threads: int | None = 1

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("Dyck settings need at least one seed (seeds=(1,))")


@dataclass(frozen=True)
class ICLRSettings:
    """Notebook 10 (the ICLR 2021 version of work B): Dyck-2, routing by timescale, forget-gate
    trajectories and the mutual information of PTB. The PTB language models are notebook 07's
    (:class:`LSTMSettings`).

    Attributes:
        dyck: the Dyck-2 models (:class:`DyckSettings`).
        routing_blocks: blocks of layer-2 units zeroed one at a time, longest assigned
            timescale first (the official code: 23 blocks of 50 of 1150 units).
        routing_tokens: first tokens of PTB test scored with each block zeroed (``None``: all).
        passage: words of the PTB test passage whose forget gates are drawn (from its start).
        mi_distances: ``I(d)`` for ``d = 1..mi_distances``.
        mi_fit: distances ``(d_min, d_max)`` of the power-law fits (mutual information and memory).
        mi_chunks: text chunks of the mutual information's jackknife.
        mi_tokens: first tokens of PTB train read by the mutual information (``None``: all).
        bootstrap: resamples of every bootstrap of the notebook.
    """

    dyck: DyckSettings
    routing_blocks: int
    routing_tokens: int | None
    passage: int
    mi_distances: int
    mi_fit: tuple[int, int]
    mi_chunks: int = 20
    mi_tokens: int | None = None
    bootstrap: int = 1000


@dataclass(frozen=True)
class PretrainSettings:
    """The small BERT pretrained here with masked LM (issue 76, :mod:`prismlib.pretrain`): its
    recipe and how an installment runs it (``python -m prismlib train --minutes``,
    :func:`prismlib.pretrain.pretrain_installment`). The recipe's fields make a
    :class:`~prismlib.pretrain.PretrainConfig` (:func:`prismlib.pretrain.pretrain_config`,
    which runs the recipe's own checks: the long phase's lengths and share), always with a
    linear decay to 0 at ``total_steps``, so a run has an end and its record says ``done``.

    Attributes:
        size: the architecture, ``LAYERSxHIDDEN[hHEADS]`` (``"4x256"``:
            :meth:`prismlib.pretrain.BertSize.parse`).
        seq_len: tokens per input of the first phase (special tokens included).
        batch_size: inputs per step of the first phase.
        lr: AdamW's peak learning rate, after ``warmup_steps`` of linear warm-up.
        warmup_steps: steps of the warm-up.
        total_steps: the schedule's length: the run is done after this many steps.
        long_seq_len: BERT's second phase: the last ``long_share`` of the steps train on
            inputs this long, as many tokens per step (``None``: one phase).
        long_share: the share of ``total_steps`` in the long phase.
        seed: initialisation, data order, masking and dropout.
        dropout: hidden and attention dropout (BERT's 0.1).
        threads: torch threads of the pretraining process (it runs alone, after the LSTM
            jobs of an installment).
        eval_every: steps between held-out checks (the curve).
        checkpoint_every: steps between local states (the loop also saves at the budget's end).
        heldout_inputs: held-out inputs scored at each check (``None``: all).
        base: a *continuation*: the done pretraining (of the same size) whose committed weights
            this one starts from, with a fresh AdamW and its own schedule (its key names the
            base's); an installment trains the base first while it is not done. ``None``: from scratch.
    """

    size: str
    seq_len: int
    batch_size: int
    lr: float
    warmup_steps: int
    total_steps: int
    long_seq_len: int | None = None
    long_share: float = 0.1
    seed: int = 0
    dropout: float = 0.1
    threads: int = 2
    eval_every: int = 200
    checkpoint_every: int = 200
    heldout_inputs: int | None = 256
    base: PretrainSettings | None = None

    def __post_init__(self) -> None:
        if self.base is not None and self.base.size != self.size:
            raise ValueError(f"a continuation keeps its base's architecture: size {self.size!r}, base {self.base.size!r}")
        if re.fullmatch(r"\d+x\d+(h\d+)?", self.size) is None:
            raise ValueError(f"a pretraining size is LAYERSxHIDDEN[hHEADS], e.g. 4x256 or 2x128h2, got {self.size!r}")
        least = {"seq_len": 1, "batch_size": 1, "total_steps": 1, "warmup_steps": 0, "threads": 1, "eval_every": 1, "checkpoint_every": 1}
        low = [f"{k} = {getattr(self, k)}" for k, n in least.items() if getattr(self, k) < n]
        if self.heldout_inputs is not None and self.heldout_inputs < 1:
            low.append(f"heldout_inputs = {self.heldout_inputs}")
        if low:
            raise ValueError(
                f"pretraining settings need warmup_steps >= 0, heldout_inputs >= 1 or None and every other count >= 1, got {', '.join(low)}"
            )


@dataclass(frozen=True)
class Profile:
    """One run profile.

    Attributes:
        name: its key in :data:`prismlib.profiles.PROFILES` (``smoke``, ``cpu``, ``paper``...).
        encoder: key of :data:`prismlib.probing.ENCODERS` (``minilm`` offline, or
            ``bert-base-cased`` from the Hugging Face hub).
        window: tokens per window including the two special tokens (510 + 2).
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        seed: base seed; every random step derives its seed from it.
        spectral: settings of notebook 01.
        probe: settings of the probing notebooks (02, 03).
        lstm: settings of notebooks 05-08 (LSTM language models, work B).
        prism: settings of notebooks 03-04 (prism layer, continued MLM training, Fig. 5).
        beyond: settings of notebook 09 (smooth, wavelet and learned filters).
        iclr: settings of notebook 10 (the ICLR 2021 version of work B: Dyck-2, routing,
            mutual information).
        pretrain: the small BERT pretrained here (:class:`PretrainSettings`), trained by
            ``python -m prismlib train --minutes`` after the LSTM jobs; ``None``: this profile
            pretrains nothing (every profile but ``cpu`` and its twin ``cpu-long``, whose size
            and budget the pilot of docs/benchmarks.md chose; section 4 runs on it where
            ``prism.pretrained_encoder`` says so).
        data: the probing data (:mod:`prismlib.probing.tasks`): ``offline`` (the copies every
            machine has) or ``full`` (the paper's: Treebank-3 when ``PRISMLIB_PTB3`` is
            set, CoNLL-2000 train, WikiText-103 train and valid).
        jobs_as: the profile name work B's trained models are cached under (``None``: this
            profile's own); a twin that only adds seeds (``cpu-long``) shares the models of
            the profile it extends.
    """

    name: str
    encoder: str
    window: int
    device: str
    seed: int
    spectral: SpectralSettings
    probe: ProbeSettings
    lstm: LSTMSettings
    prism: PrismSettings
    beyond: BeyondSettings
    iclr: ICLRSettings
    data: str = "offline"
    jobs_as: str | None = None
    pretrain: PretrainSettings | None = None

    @property
    def job_profile(self) -> str:
        """The profile name in the keys of this profile's LSTM jobs (:mod:`prismlib.lstm.job`)."""
        return self.jobs_as or self.name

    def __post_init__(self) -> None:
        if self.data not in ("offline", "full"):
            raise ValueError(f"data must be 'offline' or 'full', got {self.data!r}")
        if self.prism.pretrained_encoder and self.pretrain is None:
            raise ValueError(
                f"profile {self.name}: prism.pretrained_encoder runs section 4 on the profile's own pretraining, "
                "but it has none: give it pretrain=PretrainSettings(...) or set pretrained_encoder=False"
            )
