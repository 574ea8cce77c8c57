"""One seaborn theme for every figure, the helpers that save figures and tables, and the
figures several notebooks draw (Figure 4's bars, a bands x tasks heatmap, filter responses,
a spectral profile against white noise)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.patches import Rectangle

from prismlib.paths import figure_dir

BAND_PALETTE = dict(zip(("ORIG", "LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"), sns.color_palette("colorblind", 6)))
"""Colours used for the original signal and the five bands in every figure."""


def set_theme() -> None:
    """Apply the project's seaborn theme (call once at the top of a notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind", font_scale=1.0)
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "savefig.bbox": "tight", "axes.titleweight": "bold"})


def save_figure(fig: plt.Figure, name: str, profile_name: str) -> list[Path]:
    """Write ``fig`` to ``figures/<profile>/<name>.png`` and ``.pdf``; returns both paths."""
    out = figure_dir(profile_name)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    for path in paths:
        fig.savefig(path, metadata={"CreationDate": None} if path.suffix == ".pdf" else None)
    return paths


def save_table(df: pd.DataFrame, name: str, profile_name: str, floatfmt: str = ".4g") -> list[Path]:
    """Write ``df`` to ``figures/<profile>/<name>.csv`` and ``.md``; returns both paths."""
    out = figure_dir(profile_name)
    csv, md = out / f"{name}.csv", out / f"{name}.md"
    df.to_csv(csv, index=False)
    md.write_text(df.to_markdown(index=False, floatfmt=floatfmt) + "\n")
    return [csv, md]


CONTROL_COLOR = "0.6"
"""Colour of a control condition (e.g. ``DC``, the window mean) beside the bands."""


def condition_bars(
    table: pd.DataFrame,
    tasks: Sequence[str],
    conditions: Sequence[str],
    titles: Mapping[str, str],
    *,
    majority: str = "majority",
    controls: Sequence[str] = (),
    title: str = "",
) -> plt.Figure:
    """Accuracy per condition with its interval, one panel per task (Figure 4).

    Args:
        table: rows ``task, condition, accuracy, ci_low, ci_high`` (accuracies in %), with a
            ``majority`` row per task (drawn as a dotted line).
        tasks: the panels, in order; ``titles`` names each.
        conditions: the bars (coloured by :data:`BAND_PALETTE`), in order.
        controls: extra bars drawn grey and hatched after the conditions, where a task has them.
    """
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 4.2), squeeze=False)
    for ax, name in zip(axes[0], tasks):
        d = table[table["task"] == name].set_index("condition")
        names = [c for c in (*conditions, *controls) if c in d.index]
        bars = d.loc[names]
        err = np.vstack([bars["accuracy"] - bars["ci_low"], bars["ci_high"] - bars["accuracy"]])
        drawn = ax.bar(
            range(len(names)),
            bars["accuracy"],
            yerr=err,
            capsize=3,
            edgecolor="0.2",
            linewidth=0.5,
            color=[BAND_PALETTE.get(c, CONTROL_COLOR) for c in names],
        )
        for patch, c in zip(drawn.patches, names):
            if c in controls:
                patch.set_hatch("//")
        base = d.loc[majority, "accuracy"]
        ax.axhline(base, color="0.3", ls=":", lw=1, label="majority class")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax.set_title(titles.get(name, name), fontsize=11)
        ax.set_ylim(0, max(base, bars["ci_high"].max()) * 1.15)
    axes[0, 0].set_ylabel("probe accuracy (%)")
    axes[0, 0].legend(loc="upper right", fontsize=8)
    if title:
        fig.suptitle(title, y=1.02)
    fig.tight_layout()
    return fig


def score_heatmap(scores: pd.DataFrame, labels: pd.DataFrame, own: Mapping[str, str], *, title: str = "", colorbar: str = "") -> plt.Figure:
    """A bands x tasks heatmap of ``scores`` (rows conditions, columns tasks), each cell
    annotated with the string of ``labels`` at the same place, and the cells of ``own``
    (condition -> task) outlined."""
    fig, ax = plt.subplots(figsize=(1.5 * len(scores.columns) + 2.5, 0.6 * len(scores) + 1.6))
    values = scores.to_numpy(dtype=float)
    top = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
    limit = min(max(top, 1.0), 2.0)  # beyond twice the scale the colour saturates; the label says the value
    sns.heatmap(
        scores.astype(float),
        annot=labels.to_numpy(),
        fmt="",
        cmap="vlag",
        center=0.0,
        vmin=-limit,
        vmax=limit,
        linewidths=0.5,
        linecolor="white",
        cbar_kws={"label": colorbar},
        ax=ax,
    )
    ax.grid(False)
    ax.set_facecolor("0.92")  # a cell without a score (NaN) is grey, labelled as given
    for r, c in zip(*np.nonzero(~np.isfinite(values))):
        ax.text(c + 0.5, r + 0.5, labels.iloc[r, c], ha="center", va="center", color="0.35", fontsize=9)
    for cond, task in own.items():
        if cond in scores.index and task in scores.columns:
            r, c = list(scores.index).index(cond), list(scores.columns).index(task)
            ax.add_patch(Rectangle((c, r), 1, 1, fill=False, edgecolor="0.1", lw=2.2))
    ax.set_xlabel("task")
    ax.set_ylabel("")
    ax.tick_params(axis="y", rotation=0)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def filter_responses(
    responses: Mapping[str, Sequence[np.ndarray]],
    bands: Sequence[str],
    n: int,
    *,
    steps: Sequence[str] = ("brick-wall",),
    marks: Sequence[float] = (),
    title: str = "",
) -> plt.Figure:
    """Energy kept per DCT index, one panel per filter family, one curve per band.

    Args:
        responses: family -> one ``(n,)`` response per band (index 0, the mean, not drawn:
            the x axis is logarithmic).
        steps: families whose gains are piecewise constant per index (brick-wall): drawn as
            steps centred on each index, not as lines between indices.
        marks: DCT-index positions drawn as dashed lines in every panel, with a dotted line
            at half power (e.g. the brick-wall bands' -3 dB points).
    """
    fig, axes = plt.subplots(1, len(responses), figsize=(4.7 * len(responses), 3.6), sharey=True, squeeze=False)
    k = np.arange(1, n)
    for ax, (family, curves) in zip(axes[0], responses.items()):
        style = "steps-mid" if family in steps else "default"
        for band, r in zip(bands, curves):
            ax.plot(k, np.asarray(r)[1:], color=BAND_PALETTE[band], label=band, lw=1.4, drawstyle=style)
        for x in marks:
            ax.axvline(x, color="0.5", lw=0.8, ls="--")
        if marks:
            ax.axhline(0.5, color="0.5", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel(f"DCT index k (N = {n}; k = 0, the mean, not shown)")
        ax.set_title(family)
    axes[0, 0].set_ylabel("energy kept")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(bands), bbox_to_anchor=(0.5, -0.02), frameon=False, fontsize=9)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def spectral_profile_figure(
    shares: pd.DataFrame, units: pd.DataFrame, noise: pd.Series, *, title: str = "", noise_label: str = "white noise"
) -> plt.Figure:
    """The energy share per band of a model's layers (stacked bars, left) and of each unit
    of one layer (boxes, right), against the same measure on white noise (dashed lines:
    the cumulative shares on the left, each band's share on the right).

    Args:
        shares: rows layers, columns bands (lowest first): the mean share over units.
        units: rows bands, columns units: each unit's share in the layer on the right.
        noise: band -> the share white noise of the same lengths puts there.
    """
    bands = list(shares.columns)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12.5, 3.8), gridspec_kw={"width_ratios": [1, 1.4]})
    bottom = np.zeros(len(shares))
    for band in bands:
        ax1.bar(shares.index, shares[band], bottom=bottom, color=BAND_PALETTE[band], label=band)
        bottom += shares[band].to_numpy()
    for i, edge in enumerate(np.cumsum(noise[bands].to_numpy())[:-1]):
        ax1.axhline(edge, color="0.1", ls="--", lw=1, label=f"{noise_label} (cumulative)" if i == 0 else None)
    ax1.set_xlabel("layer (0 = embeddings)")
    ax1.set_ylabel("mean energy share over units")
    ax1.set_ylim(0, 1)
    handles, names = ax1.get_legend_handles_labels()
    order = [names.index(b) for b in reversed(bands)] + [i for i, name in enumerate(names) if name not in bands]  # as stacked
    ax1.legend(
        [handles[i] for i in order], [names[i] for i in order], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False
    )
    ax2.boxplot([units.loc[b].dropna() for b in bands], tick_labels=bands, showfliers=False)
    for i, band in enumerate(bands, start=1):
        ax2.hlines(noise[band], i - 0.4, i + 0.4, color="0.1", ls="--", lw=1.2, label=noise_label if i == 1 else None)
    ax2.set_ylabel("energy share per unit")
    ax2.legend(fontsize=8, loc="upper left", frameon=False)
    if title:
        fig.suptitle(title, y=1.02)
    fig.tight_layout()
    return fig
