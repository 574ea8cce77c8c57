"""The spectral tools of work A: the DCT and the five bands, the brick-wall, smooth and
Haar filters across tokens, and the band energy of any Hugging Face model.

============== ==================================================================
transform      DCT-II and its inverse (Eq. 1), the orthonormal DCT matrix
bands          the bands and their allocation (App. A, Table 3a), periods
filters        ``band_pass`` / ``low_pass`` / ``high_pass``, ``band_decomposition``,
               ``sector_band_pass`` (the prism layer's filter), ``frequency_response``
smooth         the smooth bands: Gaussian or Butterworth edges, ``smooth_band_pass``
cost           which path computes a filter (matrix products or FFTs): the cost model
checks         the argument checks the filters share (tensor, band, lengths)
wavelets       the Haar multiresolution across tokens, grouped like the bands
matching       smooth and Haar bands matched to the brick-wall bands' -3 dB points
equal_energy   brick-wall bands passing the matched smooth bands' energy (their twins)
energy         ``spectral_profile``: energy share per band per hidden unit, and the
               same measure on white noise (``noise_profile``, ``white_noise_shares``)
timing         App. D's filter timings against scipy and torch-dct (``benchmarks/``,
               notebook 01)
paper          Table 3a's period ranges and Figure 3b's low-pass snippet, as printed
============== ==================================================================

Two modules are internal and re-export nothing: ``dct_backends`` (the DCT by matrix rows,
``torch.fft`` or pocketfft) and ``engine`` (how the filters compute: thin products or FFTs,
the CPU's own autograd functions, rows grouped by real length).

Every public name of the modules is importable from the package (``from prismlib.spectral import
...``); a module is imported on first use of one of its names, so the package imports only
what a caller needs."""

from __future__ import annotations

from prismlib import lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "checks": (
        "all_finite",
        "check_tensor",
        "check_band_arg",
        "check_length",
        "norm_dim",
        "int_lengths",
        "as_lengths",
    ),
    "transform": (
        "FFT_THRESHOLD",
        "Norm",
        "dct_matrix",
        "dct",
        "idct",
    ),
    "bands": (
        "BAND_NAMES",
        "Band",
        "allocation_table",
        "allocate_bands",
        "bands_for_lengths",
        "paper_period",
        "true_period",
    ),
    "cost": (
        "POCKETFFT",
        "FFT_WIDTH",
        "fft_width",
        "fft_flops",
        "SplitPlan",
        "split_plan",
        "band_path",
        "smooth_path",
    ),
    "filters": (
        "band_decomposition",
        "band_pass",
        "sector_band_pass",
        "low_pass",
        "high_pass",
        "frequency_response",
    ),
    "smooth": (
        "SmoothShape",
        "SMOOTH_WIDTH",
        "SMOOTH_SHAPES",
        "smooth_step",
        "smooth_gain",
        "smooth_band_pass",
    ),
    "wavelets": (
        "haar_depth",
        "haar_nominal_index",
        "HaarBand",
        "haar_bands",
        "haar_bands_for_lengths",
        "haar_levels",
        "haar_band_pass",
    ),
    "matching": (
        "HALF_POWER",
        "HAAR_TOLERANCE",
        "MATCHED_FAMILIES",
        "MatchedBand",
        "brick_points",
        "matched_rows",
        "half_power_points",
        "half_power_table",
        "match_errors",
        "matched_bands",
    ),
    "equal_energy": (
        "passed_energy",
        "energy_split",
        "energy_twin",
        "energy_twins",
        "energy_twin_table",
        "passed_shares",
    ),
    "energy": (
        "max_model_length",
        "token_ids",
        "hidden_batches",
        "band_energy",
        "spectral_profile",
        "noise_profile",
        "white_noise_shares",
    ),
    "timing": (
        "torch_dct_decomposition",
        "scipy_decomposition",
        "BACKENDS",
        "REFERENCE_WIDTH",
        "filter_timings",
        "scipy_band_pass",
        "torch_dct_band_pass",
        "band_flops",
        "band_timings",
        "roofline_timings",
        "CROSSOVER_WIDTHS",
        "crossover_timings",
        "scipy_gain_filter",
        "sector_timings",
    ),
    "paper": (
        "period_range",
        "fig3b_low_pass",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
