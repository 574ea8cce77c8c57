"""Coverage of the intervals a contrast between trained models could be tested on (issue 75).

    python benchmarks/combined_coverage.py            # 3 and 6 seeds, 300 units, 1000 experiments each

A contrast is measured on one test set shared by every training seed: per-seed contrasts
``TRUE + seed effect + unit effect``, the seed effect ~ N(0, sd_seed), the unit effect ~ N(0,
sd_unit) per test unit. Each simulated experiment builds, as the notebooks do, the paired
bootstrap over units of the seed-mean contrast, and from it and the per-seed contrasts:

* ``units``: the unit bootstrap alone (the training runs held fixed);
* ``seeds``: Student's t over the per-seed contrasts alone (the test set held fixed);
* ``satterthwaite``: both variances added, t with Satterthwaite's df;
* ``combined``: :func:`prismlib.stats.combined_interval` (Satterthwaite, never narrower than
  the seeds' own t interval);
* ``two-level``: a percentile bootstrap that resamples the seeds, then the units.

It prints the share of experiments whose 95% interval holds ``TRUE``, per seed count and
ratio of the seed spread of the mean (sd_seed / sqrt(seeds)) to the unit spread of the mean
(sd_unit / sqrt(units)); docs/claims.md quotes the table.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats as scipy_stats

from prismlib.stats import combined_interval, paired_bootstrap

TRUE = 1.0


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return x.mean(axis)


def experiment(
    rng: np.random.Generator, seeds: int, units: int, sd_seed: float, sd_unit: float, rep: int
) -> dict[str, tuple[float, float]]:
    """One simulated experiment: each method's interval ``(low, high)``."""
    y = TRUE + rng.normal(0, sd_seed, (seeds, 1)) + rng.normal(0, sd_unit, (1, units))
    unit = paired_bootstrap(_mean, [y.mean(0)], n_boot=1000, seed=rep)
    per_seed = y.mean(1)
    half_s = scipy_stats.t.ppf(0.975, seeds - 1) * per_seed.std(ddof=1) / np.sqrt(seeds)
    v_u, v_s = ((unit.high - unit.low) / (2 * 1.96)) ** 2, per_seed.var(ddof=1) / seeds
    df = (v_u + v_s) ** 2 / (v_u**2 / (units - 1) + v_s**2 / (seeds - 1))
    half_sat = scipy_stats.t.ppf(0.975, df) * np.sqrt(v_u + v_s)
    c = combined_interval(unit, per_seed)
    si, ui = rng.integers(0, seeds, (1000, seeds)), rng.integers(0, units, (1000, units))
    two = np.array([y[si[k]][:, ui[k]].mean() for k in range(1000)])
    m = float(per_seed.mean())
    return {
        "units": (unit.low, unit.high),
        "seeds": (m - half_s, m + half_s),
        "satterthwaite": (unit.effect - half_sat, unit.effect + half_sat),
        "combined": (c.low, c.high),
        "two-level": tuple(np.quantile(two, [0.025, 0.975])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--units", type=int, default=300)
    args = ap.parse_args()
    sd_unit = 1.0
    print(f"{'seeds':>5} {'ratio':>6} " + " ".join(f"{m:>13}" for m in ("units", "seeds", "satterthwaite", "combined", "two-level")))
    for seeds in (3, 6):
        for ratio in (0.0, 0.5, 1.0, 2.0, 4.0):
            sd_seed = ratio * sd_unit / np.sqrt(args.units) * np.sqrt(seeds)
            rng = np.random.default_rng(seeds * 100 + int(ratio * 10))
            hits: dict[str, int] = {}
            for rep in range(args.reps):
                for name, (lo, hi) in experiment(rng, seeds, args.units, sd_seed, sd_unit, rep).items():
                    hits[name] = hits.get(name, 0) + int(lo <= TRUE <= hi)
            print(f"{seeds:>5} {ratio:>6.1f} " + " ".join(f"{hits[m] / args.reps:>13.3f}" for m in hits), flush=True)


if __name__ == "__main__":
    main()
