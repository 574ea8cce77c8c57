"""prismlib.benchmark: the helpers of benchmarks/ run anywhere (no timings are asserted)."""

from __future__ import annotations

import torch

from prismlib.benchmark import NO_CUDA, benchmark_device, best_time, describe_device, filter_timings


def test_benchmark_device_falls_back_to_the_cpu_and_says_so(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert benchmark_device("cuda") == torch.device("cpu")
    assert benchmark_device("auto") == torch.device("cpu")
    assert NO_CUDA in capsys.readouterr().out
    assert benchmark_device("cpu") == torch.device("cpu")
    assert capsys.readouterr().out == ""
    assert describe_device(torch.device("cpu")).startswith(f"torch {torch.__version__}, CPU")


def test_best_time_is_the_minimum_after_warmup():
    calls = []
    assert best_time(lambda: calls.append(1), repeats=3, warmup=2) >= 0
    assert len(calls) == 5


def test_filter_timings_times_torch_dct_in_float32_where_it_cannot_run_the_dtype():
    df = filter_timings([16], batch=1, hidden=2, repeats=1, dtype=torch.bfloat16)
    ran_in = df.groupby("backend")["dtype"].unique().map(list).to_dict()
    assert ran_in == {"prismlib": ["bfloat16"], "torch-dct": ["float32"], "scipy": ["float32"]}
    assert set(df["pass"]) == {"forward", "forward+backward"} and (df["seconds"] > 0).all()
