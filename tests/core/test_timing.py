"""Timing a piece of code the same way everywhere (prismlib.timing, for benchmarks/): the helpers
run anywhere (no timings are asserted)."""

from __future__ import annotations

import pytest
import torch

from prismlib.timing import NO_CUDA, benchmark_device, best_time, describe_device, format_duration, interleaved_times, spread


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


def test_interleaved_times_runs_each_function_once_per_round_in_turns():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    times = interleaved_times(fns, rounds=3, warmup=1)
    assert calls[:3] == ["a", "b", "c"]  # warm-up
    assert calls[3:] == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]  # each round starts one further on
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3, "c": 3}
    assert spread([2.0, 3.0, 9.0]) == 1.5 and spread([1.0]) == 1.0


@pytest.mark.parametrize(
    "seconds, text",
    [(0.0, "0 s"), (0.004, "< 1 s"), (13.7, "14 s"), (133.2, "2.2 min"), (3251.7, "54 min"), (9002.3, "2.5 h"), (4.5e6, "1,250 h")],
)
def test_format_duration_picks_a_unit_that_never_rounds_to_zero(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_refuses_a_negative_duration_and_marks_an_unknown_one():
    assert format_duration(float("nan")) == "?"
    with pytest.raises(ValueError, match="cannot be negative"):
        format_duration(-1.0)
