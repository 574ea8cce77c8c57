"""prismlib.spectral.timing: the helpers of benchmarks/ run anywhere (no timings are asserted)."""

from __future__ import annotations

import pytest
import torch

from prismlib.spectral import filter_timings


def test_filter_timings_times_torch_dct_in_float32_where_it_cannot_run_the_dtype():
    df = filter_timings([16], batch=1, hidden=2, repeats=1, dtype=torch.bfloat16)
    ran_in = df.groupby("backend")["dtype"].unique().map(list).to_dict()
    assert ran_in == {"prismlib": ["bfloat16"], "torch-dct": ["float32"], "scipy": ["float32"]}
    assert set(df["pass"]) == {"forward", "forward+backward"} and (df["seconds"] > 0).all()


def test_filter_timings_reports_flops_spread_and_the_matmul_yardstick():
    df = filter_timings([16, 40], batch=1, hidden=2, repeats=2, reference=True)
    assert list(df.columns) == ["n", "backend", "pass", "dtype", "seconds", "median", "spread", "gflop", "gflops"]
    got = set(zip(df["n"], df["backend"], df["pass"]))
    for n in (16, 40):
        assert {
            (n, "prismlib", "forward"),
            (n, "prismlib", "forward+backward"),
            (n, "torch-dct", "forward"),
            (n, "torch-dct", "forward+backward"),
            (n, "scipy", "forward"),
            (n, "matmul", "reference"),
        } == {key for key in got if key[0] == n}
    assert (df["seconds"] > 0).all() and (df["spread"] >= 1).all() and (df["gflop"] > 0).all()
    assert (df["median"] >= df["seconds"]).all()
    fwd = df.set_index(["n", "backend", "pass"])["gflop"]
    assert fwd[(40, "prismlib", "forward+backward")] == 2 * fwd[(40, "prismlib", "forward")]
    assert fwd[(40, "matmul", "reference")] == 2 * 2 * 40 * 40 / 1e9  # (batch * hidden, n) @ (n, n)


def test_benchmark_script_tabulates_ratios_and_gflops():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "spectral.py"
    spec = importlib.util.spec_from_file_location("bench_spectral", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    df = filter_timings([32], batch=1, hidden=2, repeats=1, reference=True)
    tab = mod.table(df, torch.device("cpu"))
    assert {"prismlib ms", "torch-dct/prismlib", "scipy/prismlib", "prismlib GFLOP/s", "matmul GFLOP/s", "path"} <= set(tab.columns)
    assert list(tab.index) == [(32, "forward"), (32, "forward+backward")]
    assert tab["path"].iloc[0] == "matmul"


def test_filter_timings_runs_only_the_backends_named():
    df = filter_timings([16], batch=1, hidden=2, repeats=1, backends=("prismlib", "scipy"))
    assert set(df["backend"]) == {"prismlib", "scipy"}
    with pytest.raises(ValueError, match="unknown backends \\['torch_dct'\\]"):
        filter_timings([16], batch=1, hidden=2, repeats=1, backends=("prismlib", "torch_dct"))


def test_band_timings_time_each_band_alone_with_its_path_and_flops():
    from prismlib.spectral import allocate_bands, band_flops, band_timings

    df = band_timings([32], batch=1, hidden=2, repeats=1)
    bands = allocate_bands(32)
    assert list(df["band"].unique()) == [b.name for b in bands]
    mine = df[(df["backend"] == "prismlib") & (df["pass"] == "forward")].set_index("band")
    assert set(mine["path"]) == {"matmul"}  # 32 tokens: every band is thinner than FFT_WIDTH
    assert set(df.loc[df["backend"] != "prismlib", "path"]) == {""}
    high = bands[-1]  # 11..32: the complement's 11 rows there and back
    assert mine.loc["HIGH", "gflop"] == band_flops(32, high, "matmul") * 2 / 1e9 == 4 * 32 * 11 * 2 / 1e9
    assert band_flops(32, high, "fft+fft") == 2 * 2.5 * 32 * 5 and band_flops(32, high, "identity") == 0
    fb = df[(df["backend"] == "torch-dct")].set_index(["band", "pass"])["gflop"]
    assert fb[("LOW", "forward+backward")] == 2 * fb[("LOW", "forward")]
    assert {("scipy", "forward"), ("matmul", "reference")} <= set(zip(df["backend"], df["pass"]))


def test_scipy_and_torch_dct_single_bands_are_the_band_pass():
    import numpy as np

    from prismlib.spectral import Band, band_pass, scipy_band_pass, torch_dct_band_pass

    x = torch.randn(2, 40, 3, dtype=torch.float64)
    band = Band("b", 3, 17)
    want = band_pass(x, band)
    np.testing.assert_allclose(scipy_band_pass(x.numpy().copy(), band), want.numpy(), atol=1e-12)
    torch.testing.assert_close(torch_dct_band_pass(x, band), want, atol=1e-10, rtol=0)


def test_roofline_counts_six_passes_for_the_decomposition_and_two_for_the_copy():
    from prismlib.spectral import roofline_timings

    df = roofline_timings([64], batch=1, hidden=4, repeats=1, dtype=torch.bfloat16)
    row = df.iloc[0]
    assert row["bytes"] == 64 * 4 * 2 and row["dtype"] == "bfloat16"
    assert row["copy GB/s"] == pytest.approx(2 * row["bytes"] / row["copy s"] / 1e9)
    assert row["decomposition GB/s"] == pytest.approx(6 * row["bytes"] / row["decomposition s"] / 1e9)
    assert row["% of copy"] == pytest.approx(100 * row["decomposition GB/s"] / row["copy GB/s"])


def test_benchmark_script_lists_every_ratio_under_one():
    import importlib.util
    from pathlib import Path

    import pandas as pd

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "spectral.py"
    spec = importlib.util.spec_from_file_location("bench_spectral", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tab = pd.DataFrame({"scipy/prismlib": [1.5, 0.73], "prismlib ms": [1.0, 2.0]}, index=[(512, "LOW"), (512, "HIGH")])
    assert mod.under_one(tab) == ["UNDER 1: scipy/prismlib = 0.73 at (512, 'HIGH')"]
    from prismlib.spectral import band_timings

    single = mod.single_table(band_timings([32], batch=1, hidden=2, repeats=1))
    assert list(single.index[:2]) == [(32, "LOW", "forward"), (32, "LOW", "forward+backward")]
    assert {"prismlib ms", "scipy/prismlib", "torch-dct/prismlib", "path", "prismlib GFLOP/s", "matmul GFLOP/s"} <= set(single.columns)


def test_crossover_times_both_paths_meets_them_on_a_line_and_restores_fft_width(monkeypatch):
    import prismlib.spectral.filters as filters
    import prismlib.spectral.timing as timing
    from prismlib.spectral import FFT_WIDTH

    before, seen, real_band_pass = dict(FFT_WIDTH), [], filters.band_pass

    def probe(x, band, **kw):  # records the FFT_WIDTH in force while each path runs
        seen.append((band.hi, FFT_WIDTH["cpu"]))
        return real_band_pass(x, band, **kw)

    def fake_times(fns, rounds, device="cpu", warmup=1):
        for fn in fns.values():
            fn()
        return {k: [float(i + 1)] for i, k in enumerate(fns)}  # fft 1 s, then the widths 2 s, 3 s

    monkeypatch.setattr(filters, "band_pass", probe)
    monkeypatch.setattr(timing, "interleaved_times", fake_times)
    df = timing.crossover_timings([64], batch=1, hidden=2, repeats=1, widths=(4, 16, 40))
    assert FFT_WIDTH == before
    assert seen == [(32, 0), (4, 64), (16, 64)]  # FFT path forced by 0, matrix path by n; 40 > 64 / 2 left out
    row = df.iloc[0]
    assert (row["fft+fft s"], row["matmul s at 4"], row["matmul s at 16"]) == (1.0, 2.0, 3.0)
    assert row["matmul s at 40"] != row["matmul s at 40"]  # NaN: not timed
    assert row["s per row"] == pytest.approx(1 / 12)  # (3 - 2) / (16 - 4)
    assert row["crossover"] == pytest.approx(-8.0)  # the line 2 + (w - 4) / 12 meets 1 s at w = -8
    assert timing.crossover_timings([16], batch=1, hidden=2, repeats=1).iloc[0]["crossover"] == float("inf")


def test_sector_timings_compare_the_prism_filter_and_smooth_bands_with_scipy():
    import numpy as np

    from prismlib.prism import sector_slices
    from prismlib.spectral import allocate_bands, scipy_gain_filter, sector_band_pass, sector_timings, smooth_band_pass, smooth_gain

    df = sector_timings([40], sector_slices(10), batch=1, repeats=1)
    assert df["filter"].tolist() == ["sectors"] + [f"smooth {b.name}" for b in allocate_bands(40)]
    assert df["path"].iloc[0].count("/") == 4 and set(df["path"].iloc[1:]) == {"matmul"}
    assert np.allclose(df["scipy/prismlib"], df["scipy s"] / df["prismlib s"])
    x = torch.randn(2, 40, 10, dtype=torch.float64)  # the scipy references compute the same filters
    bands, slices = allocate_bands(40), sector_slices(10)
    mask = np.zeros((40, 10))
    for b, sl in zip(bands, slices):
        mask[b.lo : b.hi, sl] = 1
    np.testing.assert_allclose(scipy_gain_filter(x.numpy(), mask), sector_band_pass(x, bands, slices).numpy(), atol=1e-12)
    gain = smooth_gain(40, bands[2]).double().numpy()[:, None]
    np.testing.assert_allclose(scipy_gain_filter(x.numpy(), gain), smooth_band_pass(x, bands[2]).numpy(), atol=1e-12)


def test_lstm_benchmark_counts_training_flops_of_the_layers_and_the_clusters_each_target_reaches():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "lstm.py"
    spec = importlib.util.spec_from_file_location("bench_lstm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    layers = 2 * (2 * 4 * 4 * (4 + 4))  # two layers of 4 units on 4 inputs: 4 gates x 4 x (4 + 4) multiply-adds each
    head = torch.zeros(10, dtype=torch.long)  # every target in the head
    assert mod.flops_per_token([4, 4], 4, (), head) == 3 * (layers + 2 * 4 * mod.VOCAB)
    assert mod.flops_per_token([4, 4], 4, (2000, 6000), head) == 3 * (layers + 2 * 4 * (2000 + 2))
    half = torch.tensor([0] * 5 + [3000] * 5)  # half in the first tail cluster (4000 words behind a 4 x 4 projection)
    expected = 3 * (layers + 2 * 4 * 2002 + 0.5 * (2 * 4 * 4 + 2 * 4 * 4000))
    assert mod.flops_per_token([4, 4], 4, (2000, 6000), half) == pytest.approx(expected)
    assert mod.matmul_gflops(torch.device("cpu"), n=64, repeats=1) > 0
