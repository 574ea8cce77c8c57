"""One seaborn theme for every figure, and the helpers that save figures and tables."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from prismlib.paths import figure_dir

BAND_PALETTE = dict(zip(("ORIG", "LOW", "MID-LOW", "MID", "MID-HIGH", "HIGH"), sns.color_palette("colorblind", 6)))
"""Colours used for the original signal and the five bands in every figure."""


def set_theme() -> None:
    """Apply the project's seaborn theme (call once at the top of a notebook)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind", font_scale=1.0)
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "savefig.bbox": "tight", "axes.titleweight": "bold"})


def save_figure(fig: plt.Figure, name: str, profile: str) -> list[Path]:
    """Write ``fig`` to ``figures/<profile>/<name>.png`` and ``.pdf``; returns both paths."""
    out = figure_dir(profile)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    for path in paths:
        fig.savefig(path, metadata={"CreationDate": None} if path.suffix == ".pdf" else None)
    return paths


def save_table(df: pd.DataFrame, name: str, profile: str, floatfmt: str = ".4g") -> list[Path]:
    """Write ``df`` to ``figures/<profile>/<name>.csv`` and ``.md``; returns both paths."""
    out = figure_dir(profile)
    csv, md = out / f"{name}.csv", out / f"{name}.md"
    df.to_csv(csv, index=False)
    md.write_text(df.to_markdown(index=False, floatfmt=floatfmt) + "\n")
    return [csv, md]
