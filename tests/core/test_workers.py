"""prismlib.workers: the device, thread setting and the single-thread worker pool."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from prismlib.workers import one_thread, resolve_device, run_pool, torch_threads


def _square_and_threads(x: int) -> tuple[int, int]:
    return x * x, torch.get_num_threads()


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise RuntimeError("job 3 failed")
    return x


@pytest.mark.slow
def test_pool_results_are_in_job_order_and_run_with_one_thread():
    jobs = [5, 1, 4, 2, 3]
    inline = run_pool(_square_and_threads, jobs, 1, progress=False)
    pooled = run_pool(_square_and_threads, jobs, 2, progress=False)
    assert [r[0] for r in inline] == [r[0] for r in pooled] == [25, 1, 16, 4, 9]
    assert {r[1] for r in pooled} == {1}


@pytest.mark.slow
def test_a_failing_job_raises_in_the_caller():
    with pytest.raises(RuntimeError, match="job 3 failed"):
        run_pool(_fail_on_three, [1, 2, 3], 2, progress=False)
    with pytest.raises(RuntimeError, match="job 3 failed"):
        run_pool(_fail_on_three, [1, 2, 3], 1, progress=False)


def _interrupt_first(job: tuple[int, str]) -> int:
    i, folder = job
    if i == 0:
        raise KeyboardInterrupt  # what Ctrl-C raises in a worker
    time.sleep(0.3)
    (Path(folder) / f"{i}.done").touch()
    return i


@pytest.mark.slow
def test_an_interrupted_pool_starts_no_more_jobs_and_stops_its_workers(tmp_path):
    jobs = [(i, str(tmp_path)) for i in range(12)]
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        run_pool(_interrupt_first, jobs, 2, progress=False)
    # without the stop, leaving the pool ran every queued job (11 x 0.3 s on 2 workers) before re-raising
    assert len(list(tmp_path.glob("*.done"))) < 4 and time.perf_counter() - t0 < 30
    time.sleep(1.0)
    assert len(list(tmp_path.glob("*.done"))) < 4  # and nothing ran on after the call returned


def test_threads_are_restored_and_devices_resolved():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
    one_thread()
    assert torch.get_num_threads() == 1
    torch.set_num_threads(before)
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
