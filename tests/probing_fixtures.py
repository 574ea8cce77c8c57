"""Synthetic probing inputs shared by the learned-filter, matched-feature and cap-check tests:
windows whose label lives in one end of the spectrum, and probe runs whose saved states are
zeroed (to show a continued run starts from its state)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from prismlib.probing import ProbeRuns, States
from prismlib.spectral import dct_matrix


def synthetic(n_windows: int, seed: int, where: str, hidden: int = 4, noise: float = 2.0) -> States:
    """Windows whose label is the sign of a component living only in the ``where``
    frequencies (low: relative frequency 1/n .. 0.15; high: >= 0.6) of unit 0, buried in
    noise that carries no label, in the other end of the spectrum (low case: >= 0.5;
    high case: < 0.3), on every unit."""
    rng = np.random.default_rng(seed)
    hidden_states, labels, win, pos = [], [], [], []
    for i in range(n_windows):
        n = int(rng.integers(40, 90))
        c = dct_matrix(n).numpy()
        k = np.arange(n)
        signal = (k >= 1) & (k < 0.15 * n) if where == "low" else k >= 0.6 * n
        noisy = k >= 0.5 * n if where == "low" else k < 0.3 * n
        s = c[signal].T @ rng.standard_normal(signal.sum())
        s /= s.std()
        h = c[noisy].T @ (rng.standard_normal((noisy.sum(), hidden)) * noise * np.sqrt(n / noisy.sum()))
        h[:, 0] += s
        hidden_states.append(torch.tensor(h, dtype=torch.float16))
        labels.append((s > 0).astype(np.int64))
        win.append(np.full(n, i))
        pos.append(k)
    y = torch.from_numpy(np.concatenate(labels))
    return States(
        hidden_states,
        y,
        torch.ones(len(y)),
        torch.from_numpy(np.concatenate(win)),
        torch.arange(len(y)),
        torch.from_numpy(np.concatenate(pos)),
    )


def zeroed(runs: ProbeRuns) -> ProbeRuns:
    """``runs`` whose resume states hold zero parameters in place of those the cap left."""
    zero = {
        c: [None if s is None else dataclasses.replace(s, model={k: torch.zeros_like(v) for k, v in s.model.items()}) for s in states]
        for c, states in runs.resume.items()
    }
    return dataclasses.replace(runs, resume=zero)
