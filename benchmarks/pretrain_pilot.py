"""The pilot of issue 76 (item 2): short pretraining runs at a few sizes, each curve projected
to the pretraining budget.

    python benchmarks/pretrain_pilot.py --out pilot --sizes 2x128,4x256,4x384 --minutes 30
    python benchmarks/pretrain_pilot.py --out /tmp/p --sizes 1x32h2 --corpus synthetic --seq-len 32 --batch 8 --tokens 20000   # a check

Each size is one process (``python -m prismlib.pretrain.train``, the library's loop; the
pilot's runs are its recipe with a constant learning rate after the warm-up), run one after
the other with ``--threads`` torch threads, for ``--minutes`` or ``--tokens`` each; its state,
``curve.csv`` (tokens seen, held-out masked-LM loss, unigram loss on the same masked positions,
gain in nats) and ``run.json`` go to ``<out>/<size>/`` (a second call resumes a run that was cut
short). Then every curve is projected (:func:`prismlib.pretrain.project`: a log-linear fit of
the gain, the optimistic reading, and a power law on perplexity, the cautious one) to the
tokens the run's own rate buys in the budget: ``--budget-minutes`` of wall time at the run's
threads, by default 4 installments x 110 minutes of one process on both cores (the 2 workers
of the budget, as 2 threads; the rate counts the held-out checks too). With ``--speed``
(the ``--json`` of ``benchmarks/pretrain_speed.py``), the rate is instead the one measured
there for that size at ``--budget-threads`` threads (masked head, fastest row), times the
share of the pilot run's wall time spent on training steps, as the rule in
``docs/benchmarks.md`` says. Each size also says whether its committed states fit the
repository cap (``--installments`` fp16 states of its parameters in ``--cap-mb``), the budget's
tokens are read at most at ``--max-passes`` passes over the corpus (repeated text returns less
than fresh), and the rule's choice is printed last. Writes ``<out>/projection.json`` and ``projection.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

from prismlib.pretrain import CURVE, RUN, BertSize, new_bert, parameter_count, project, read_curve

BUDGET_MINUTES = 4 * 110
"""Wall minutes of the pretraining budget: 4 installments of 110 minutes on both cores."""
GATE, TIE = 1.5, 0.1
"""The premise gate (nats per masked token) and the tie margin of the rule (docs/benchmarks.md)."""


def speed_rate(speed: dict, size: str, threads: int) -> float:
    """The fastest masked-head tokens/s (median over steps) of ``size`` at ``threads`` in a
    ``pretrain_speed.py --json`` file."""
    rows = [r for r in speed["rows"] if r["size"] == size and r["threads"] == threads and r["head"] == "masked"]
    if not rows:
        fix = f"run benchmarks/pretrain_speed.py --sizes {size} --threads {threads} --json FILE"
        raise SystemExit(f"--speed has no masked-head row for {size} at {threads} threads: {fix}")
    return max(float(r["tokens_per_second"]) for r in rows)


def choose(rows: list[dict]) -> str:
    """The rule: among the sizes whose states fit the cap, the largest cautious (lower)
    projection that reaches the gate, ties within :data:`TIE` to the smaller model."""
    ok = [r for r in rows if r["fits_cap"] and r["projected_cautious"] >= GATE]
    if not ok:
        up = [r for r in rows if r["fits_cap"] and r["projected_log_linear"] >= GATE]
        if not up:
            return "none: no size that fits the cap reaches the gate even optimistically; the curves are the result"
        best = max(up, key=lambda r: r["projected_log_linear"])
        return f"{best['size']} for one installment only (only its upper estimate reaches {GATE}); then the rule again"
    top = max(r["projected_cautious"] for r in ok)
    best = min((r for r in ok if r["projected_cautious"] >= top - TIE), key=lambda r: r["parameters"])
    return f"{best['size']} (lower estimate {best['projected_cautious']:+.2f} nats at its budget)"


def run_size(size: str, out: Path, args: argparse.Namespace, extra: list[str]) -> None:
    """One pilot run in its own process (resumes a state in ``out``)."""
    cmd = [sys.executable, "-m", "prismlib.pretrain.train", "--out", str(out), "--size", size, "--threads", str(args.threads)]
    cmd += ["--seq-len", str(args.seq_len), "--batch", str(args.batch), "--lr", str(args.lr), "--warmup", str(args.warmup)]
    cmd += ["--corpus", args.corpus, "--eval-every", str(args.eval_every)]
    cmd += ["--minutes", str(args.minutes)] if args.minutes else []
    cmd += ["--max-tokens", str(args.tokens)] if args.tokens else []
    subprocess.run(cmd + extra, check=True)


def plot(out: Path, curves: dict[str, tuple[list[dict[str, float]], float]], rows: list[dict], skip: float) -> None:
    """``<out>/pilot_curves.png`` and ``.pdf``: each size's measured gain against training tokens
    (log scale) and both projections from the fitted half to its budget, beside the gate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from prismlib.plots import set_theme

    set_theme()
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    for (size, (curve, unigram)), row, color in zip(curves.items(), rows, plt.rcParams["axes.prop_cycle"].by_key()["color"]):
        pts = [r for r in curve if r["tokens"] > 0]
        tokens, losses = [r["tokens"] for r in pts], [r["heldout_loss"] for r in pts]
        ax.plot(tokens, [unigram - x for x in losses], marker=".", color=color, label=f"{size}: measured")
        grid = np.geomspace(tokens[len(tokens) // 2], max(row["budget_tokens"], tokens[-1]), 24)
        fits = [project(tokens, losses, unigram, float(b), skip) for b in grid]
        ax.plot(grid, [f.log_linear for f in fits], ls="--", color=color, lw=1, label=f"{size}: log-linear (upper)")
        ax.plot(grid, [f.power_law for f in fits], ls=":", color=color, lw=1.5, label=f"{size}: power law (lower)")
    ax.axhline(GATE, color="0.2", lw=1, label=f"premise gate {GATE} nats")
    ax.axhline(2.0, color="0.6", lw=1, ls="-.", label="aim 2 nats")
    ax.set_xscale("log")
    ax.set_xlabel("training tokens")
    ax.set_ylabel("gain over unigram (nats per masked token)")
    ax.set_title("Pretraining pilot: held-out masked-LM gain, projected to each size's budget")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    for suffix in ("png", "pdf"):
        fig.savefig(out / f"pilot_curves.{suffix}", bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--sizes", default="2x128,4x256,4x384")
    p.add_argument("--minutes", type=float, default=None, help="wall minutes per run")
    p.add_argument("--tokens", type=float, default=None, help="training tokens per run")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--corpus", choices=("offline", "synthetic"), default="offline")
    p.add_argument("--budget-minutes", type=float, default=BUDGET_MINUTES)
    p.add_argument("--skip", type=float, default=0.5, help="share of each curve's tokens left out of the fits (the rule: its first half)")
    p.add_argument("--speed", type=Path, default=None, help="pretrain_speed.py --json output: the budget's rate per size")
    p.add_argument("--budget-threads", type=int, default=2, help="threads of the pretraining (with --speed)")
    p.add_argument("--installments", type=int, default=4, help="committed states (one per installment, the last the record)")
    p.add_argument("--cap-mb", type=float, default=100.0, help="the repository growth allowed for those states")
    p.add_argument("--max-passes", type=float, default=4.0, help="the projection reads at most this many passes over the corpus")
    p.add_argument("--project-only", action="store_true", help="no training: project the curves already in --out")
    args, extra = p.parse_known_args()
    if not (args.minutes or args.tokens or args.project_only):
        p.error("give --minutes or --tokens per run (or --project-only)")
    rows = []
    curves: dict[str, tuple[list[dict[str, float]], float]] = {}
    for size in [s for s in args.sizes.split(",") if s]:
        folder = args.out / size
        if not args.project_only:
            run_size(size, folder, args, extra)
        curve, run = read_curve(folder / CURVE), json.loads((folder / RUN).read_text())
        curves[size] = (curve, run["unigram_loss"])
        rate = run["tokens"] / run["seconds"] if run["seconds"] else 0.0  # the held-out checks count too
        if args.speed:
            train_share = run["train_seconds"] / run["seconds"] if run["seconds"] else 1.0
            rate = speed_rate(json.loads(args.speed.read_text()), size, args.budget_threads) * train_share
        corpus_tokens = run["train_inputs"] * run["config"]["seq_len"]
        budget_tokens = min(rate * 60 * args.budget_minutes, args.max_passes * corpus_tokens)  # no more fresh-enough data than that
        n_params = parameter_count(new_bert(BertSize.parse(size), 0))
        state_mb = args.installments * 2 * n_params / 1e6
        proj = project([r["tokens"] for r in curve], [r["heldout_loss"] for r in curve], run["unigram_loss"], budget_tokens, args.skip)
        rows.append(
            {
                "size": size,
                "threads": run["threads"],
                "parameters": n_params,
                "states_mb": state_mb,
                "fits_cap": state_mb <= args.cap_mb,
                "tokens": run["tokens"],
                "minutes": run["seconds"] / 60,
                "pilot_tokens_per_second": run["tokens"] / run["seconds"] if run["seconds"] else 0.0,
                "budget_tokens_per_second": rate,
                "unigram_loss": run["unigram_loss"],
                "measured_gain": proj.measured[0],
                "gain_per_doubling": proj.per_doubling,
                "budget_tokens": budget_tokens,
                "budget_passes": rate * 60 * args.budget_minutes / corpus_tokens,
                "projected_log_linear": proj.log_linear,
                "projected_power_law": proj.power_law,
                "projected_cautious": proj.cautious,
            }
        )
    args.out.mkdir(parents=True, exist_ok=True)
    choice = choose(rows)
    plot(args.out, curves, rows, args.skip)
    (args.out / "projection.json").write_text(
        json.dumps(
            {"budget_minutes": args.budget_minutes, "skip": args.skip, "speed": str(args.speed), "runs": rows, "choice": choice}, indent=1
        )
    )
    with open(args.out / "projection.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    where = f"{args.budget_threads} threads as measured in {args.speed}" if args.speed else "each run's own rate"
    print(f"projection to {args.budget_minutes:.0f} wall minutes at {where} (gain = unigram - held-out loss, nats/masked token)")
    print(
        f"{'size':>7} {'params':>7} {'states':>7} {'tokens':>10} {'min':>6} {'tok/s':>7} {'gain':>7} {'/doubl':>7} "
        + f"{'budget tok/s':>12} {'budget tok':>11} {'log-lin':>8} {'power':>7} {'cautious':>8}"
    )
    for r in rows:
        print(
            f"{r['size']:>7} {r['parameters'] / 1e6:>6.1f}M {r['states_mb']:>5.0f}MB{'' if r['fits_cap'] else '!'} "
            f"{r['tokens']:>10,} {r['minutes']:>6.1f} {r['pilot_tokens_per_second']:>7,.0f} "
            f"{r['measured_gain']:>+7.3f} {r['gain_per_doubling']:>+7.3f} "
            f"{r['budget_tokens_per_second']:>12,.0f} {r['budget_tokens']:>11.3g} "
            f"{r['projected_log_linear']:>+8.3f} {r['projected_power_law']:>+7.3f} {r['projected_cautious']:>+8.3f}"
        )
    print(f"choice (rule in docs/benchmarks.md; '!': states over the {args.cap_mb:.0f} MB cap): {choice}")


if __name__ == "__main__":
    main()
