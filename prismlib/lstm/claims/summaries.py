"""Tables and figures of trained runs: the runs table, the learning-curve table shared by
notebooks 05-07 and their plot. The run-level code of work B (it takes
:class:`~prismlib.lstm.trained_runs.TrainedRun`), kept apart from the array-level modules
(:mod:`~prismlib.lstm.convergence`, :mod:`~prismlib.lstm.evaluation`) that the job imports."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd
from matplotlib.ticker import FuncFormatter

from prismlib.lstm.convergence import SHARE
from prismlib.lstm.evaluation import bootstrap_perplexity
from prismlib.lstm.trained_runs import TrainedRun
from prismlib.paths import figure_dir, locked


def runs_table(runs: Sequence[TrainedRun], bootstrap_samples: int = 1000) -> pd.DataFrame:
    """One row per run: variant, T, fixed, seed, val/test perplexity, bootstrapped test mean and
    sd, training tokens and seconds, and why training stopped (``rule``, ``cap``, ``did not
    learn`` for annealed runs; ``epochs`` for a run that trained its set epochs)."""
    rows = []
    for r in runs:
        b = bootstrap_perplexity(r.test_chunks, samples=bootstrap_samples, seed=r.spec.seed)
        rows.append(
            {
                "model": r.spec.label,
                "variant": r.spec.variant,
                "T": r.spec.T,
                "fixed": r.spec.fixed,
                "seed": r.spec.seed,
                "val ppl": r.val_ppl,
                "test ppl": r.test_ppl,
                "bootstrap mean": b.mean,
                "bootstrap sd": b.sd,
                "train tokens": r.history.tokens,
                "train s": r.history.seconds,
                "stopped": getattr(r.history, "stop_reason", None) or "epochs",
            }
        )
    return pd.DataFrame(rows)


CURVES_TABLE = "lstm_learning_curves"
"""Name of the learning-curve table under ``figures/<profile>/`` (``.csv``)."""
CURVE_COLUMNS = ("model", "seed", "tokens", "valid_ppl")


def curves_frame(runs: Mapping[object, TrainedRun]) -> pd.DataFrame:
    """Long table of every run's learning curve: ``model`` (label), ``seed``, ``tokens``,
    ``valid_ppl`` (runs without a curve contribute no rows)."""
    rows = []
    for run in runs.values():
        c = run.curve
        if c is None:
            continue
        rows += [
            {"model": run.spec.label, "seed": run.spec.seed, "tokens": int(t), "valid_ppl": float(v)} for t, v in zip(c.tokens, c.valid_ppl)
        ]
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def save_learning_curves(runs: Mapping[object, TrainedRun], profile_name: str) -> pd.DataFrame:
    """Merge the curves of ``runs`` into ``figures/<profile>/lstm_learning_curves.csv``.

    Rows of the models (label and seed) in ``runs`` replace their earlier rows; other
    models' rows stay, so notebooks 05-07 each add theirs. Returns the whole table."""
    new = curves_frame(runs)
    csv = figure_dir(profile_name) / f"{CURVES_TABLE}.csv"
    with locked(csv):
        if csv.exists():
            old = pd.read_csv(csv)
            ours = set(zip(new.model, new.seed))
            old = old[[(m, s) not in ours for m, s in zip(old.model, old.seed)]]
            new = pd.concat([old, new], ignore_index=True)
        new = new.sort_values(["model", "seed", "tokens"], kind="stable").reset_index(drop=True)
        new.to_csv(csv, index=False)
    return new


def plot_learning_curves(ax, runs: Mapping[object, TrainedRun], label: Callable[[object], str], title: str = "") -> None:
    """Draw every run's learning curve on ``ax``: validation perplexity (log axis) against
    training tokens, one colour per model (``label(spec)``), the seeds of a model in the
    same colour; the last quarter of the budget (the model gate's window) shaded. Runs of
    the annealed schedule mark each learning-rate decay with a dot and their end with a
    cross (stopped by rule) or a square (at the cap, or did not learn); no window is shaded."""
    colours: dict[str, str] = {}
    budget, annealed = 0.0, False
    for spec, run in runs.items():
        c = run.curve
        if c is None:
            continue
        name = label(spec)
        first = name not in colours
        colours.setdefault(name, f"C{len(colours) % 10}")
        ax.plot(c.tokens, c.valid_ppl, color=colours[name], lw=1.2, alpha=0.85, label=name if first else None)
        budget = max(budget, c.budget)
        state = getattr(run.history, "anneal", None)
        if state is not None and len(c.tokens) >= state.rounds:
            annealed = True
            at = [r - 1 for r in state.decayed_at]
            ax.plot(c.tokens[at], c.valid_ppl[at], "o", ms=3.5, color=colours[name])
            ax.plot(c.tokens[-1], c.valid_ppl[-1], "x" if state.converged else "s", ms=6, color=colours[name])
    if budget and not annealed:
        ax.axvspan((1 - SHARE) * budget, budget, color="0.92", zorder=0)
    source = "full split" if annealed else "curve subset"
    key = "dots: rate decays; x: stopped by rule; square: at its cap" if annealed else f"shaded: the model gate's last {SHARE:.0%}"
    ax.set(yscale="log", xlabel="training tokens", ylabel=f"validation perplexity ({source})")
    ax.set_title(f"{title}\n({key})" if title else f"({key})", fontsize=9)  # two panels side by side: the key fits
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1e6:g}M"))
    ax.legend(fontsize=7)
