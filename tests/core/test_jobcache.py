"""The job layer: content-addressed cache, parallel workers, resume, the submitit path, and the
process pool (``run_pool``)."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from lstm_fixtures import tiny_lstm, uniform_corpus

from prismlib import jobcache as jobs
from prismlib import lstm
from prismlib.devices import torch_threads
from prismlib.jobcache import run_pool
from prismlib.lstm import job as lstm_job
from prismlib.lstm import trained_runs, training

TINY = tiny_lstm(optimizer="ntasgd", average_last=1, curve_every=2, curve_tokens=1000, epochs=2, steps_per_epoch=3, cutoffs=(10, 20))


def _job(seed: int = 1, variant: str = "layer2", T: float | None = 5.0) -> lstm_job.Job:
    return lstm_job.Job(lstm.RunSpec(variant, T, fixed=T is not None, seed=seed), TINY, "test")


def _weights(folder: str) -> dict[str, torch.Tensor]:
    return torch.load(f"{folder}/done.pt", weights_only=False)["model"]


def test_cached_job_is_read_not_retrained(tmp_path, monkeypatch):
    corpus = uniform_corpus()
    runs = trained_runs.trained([_job().spec], TINY, "test", executor="inline", cache=tmp_path, corpus=corpus)
    run = runs[_job().spec]
    h = run.model.sizes[1]
    assert torch.allclose(run.biases_final[1], torch.full((h,), math.log(4.0)))  # fixed layer 2 at X = 5
    assert math.isfinite(run.test_ppl) and run.test_ppl > 1

    def no_training(*args, **kwargs):
        raise AssertionError("a cached job was retrained")

    monkeypatch.setattr(lstm_job, "train_lm", no_training)
    assert jobs.run_missing([_job()], "inline", cache=tmp_path, data=corpus) == []
    again = trained_runs.trained([_job().spec], TINY, "test", executor="inline", cache=tmp_path, corpus=corpus)[_job().spec]
    np.testing.assert_array_equal(again.test_chunks.sums, run.test_chunks.sums)
    for a, b in zip(run.model.state_dict().values(), again.model.state_dict().values()):
        assert torch.equal(a, b)


@pytest.mark.slow
def test_two_jobs_in_parallel_workers_match_inline(tmp_path):
    """Bit for bit: each worker trains with one torch thread (``run_pool``), and so does the
    inline run here, so both are the same computation on this machine (with another thread
    count a matrix product may sum in another order)."""
    corpus, both = uniform_corpus(), [_job(seed=1), _job(seed=2, variant="baseline", T=None)]
    ran = jobs.run_missing(both, "local", workers=2, cache=tmp_path / "pool", data=corpus)
    assert ran == both
    with torch_threads(1):
        jobs.run_missing(both, "inline", cache=tmp_path / "inline", data=corpus)
    for job in both:
        pool = _weights(str(jobs.job_dir(job, tmp_path / "pool")))
        inline = _weights(str(jobs.job_dir(job, tmp_path / "inline")))
        for name in inline:
            assert torch.equal(pool[name], inline[name]), name


def test_interrupted_job_resumes_to_the_same_weights(tmp_path, monkeypatch):
    corpus, job = uniform_corpus(), _job(seed=3)
    straight = jobs.run_job(job, tmp_path / "straight", "cpu", False, corpus)
    saves = []
    real_save = training.save_atomic

    def save_then_die(path, **obj):  # the process dies right after the first epoch's checkpoint
        real_save(path, **obj)
        saves.append(path)
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "save_atomic", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    monkeypatch.setattr(training, "save_atomic", real_save)
    folder = jobs.job_dir(job, tmp_path / "killed")
    assert saves and (folder / "partial.pt").exists() and not (folder / "done.pt").exists()
    assert torch.load(folder / "partial.pt", weights_only=False)["history"].epochs == 1
    resumed = jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    assert not (folder / "partial.pt").exists()
    a, b = _weights(straight), _weights(resumed)
    for name in a:
        assert torch.equal(a[name], b[name]), name


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["debug", "local"])
def test_slurm_path_through_submitit(tmp_path, cluster):
    pytest.importorskip("submitit")
    corpus, job = uniform_corpus(), _job(seed=4)
    ran = jobs.run_missing([job], "slurm", cache=tmp_path, data=corpus, slurm={"cluster": cluster, "timeout_min": 5})
    assert ran == [job] and jobs.is_done(job, tmp_path)
    assert (tmp_path / "submitit").is_dir()


def test_bad_executor_and_untrained_job_are_named(tmp_path):
    with pytest.raises(ValueError, match="executor must be one of"):
        jobs.run_missing([_job()], "threads", cache=tmp_path)
    with pytest.raises(FileNotFoundError, match="has not been trained"):
        trained_runs.load_run(_job(), cache=tmp_path, corpus=uniform_corpus())


def test_a_truncated_or_bit_flipped_done_checkpoint_is_moved_aside_and_the_job_retrains(tmp_path, capsys):
    corpus, job = uniform_corpus(), _job(seed=4)
    first = _weights(jobs.run_job(job, tmp_path, "cpu", False, corpus))
    folder = jobs.job_dir(job, tmp_path)
    for damage in ("truncate", "flip"):
        raw = bytearray((folder / "done.pt").read_bytes())
        if damage == "truncate":
            raw = raw[:1000]
        else:
            raw[len(raw) // 3] ^= 0x10
        (folder / "done.pt").write_bytes(bytes(raw))
        capsys.readouterr()
        assert not jobs.is_done(job, tmp_path)
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "done.pt" in err[0] and "moved aside" in err[0], err
        assert not folder.exists()
        assert jobs.run_missing([job], "inline", cache=tmp_path, data=corpus) == [job]
        again = _weights(str(folder))
        for name in first:
            assert torch.equal(first[name], again[name]), name
    assert len(list((tmp_path / "quarantine").glob("*"))) == 2  # both broken entries kept for inspection


def test_a_spec_json_that_does_not_match_its_folder_is_moved_aside(tmp_path, capsys):
    corpus, job = uniform_corpus(), _job(seed=5)
    jobs.run_job(job, tmp_path, "cpu", False, corpus)
    folder = jobs.job_dir(job, tmp_path)
    spec = json.loads((folder / "spec.json").read_text())
    spec["spec"]["seed"] = 6  # another job's description in this folder
    (folder / "spec.json").write_text(json.dumps(spec))
    assert not jobs.is_done(job, tmp_path)
    assert "spec.json describes job" in capsys.readouterr().err
    assert jobs.run_missing([job], "inline", cache=tmp_path, data=corpus) == [job] and jobs.is_done(job, tmp_path)


def test_a_corrupt_partial_checkpoint_starts_the_job_over(tmp_path, monkeypatch, capsys):
    corpus, job = uniform_corpus(), _job(seed=3)
    straight = jobs.run_job(job, tmp_path / "straight", "cpu", False, corpus)
    real_save = training.save_atomic

    def save_then_die(path, **obj):
        real_save(path, **obj)
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "save_atomic", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    monkeypatch.setattr(training, "save_atomic", real_save)
    partial = jobs.job_dir(job, tmp_path / "killed") / "partial.pt"
    partial.write_bytes(partial.read_bytes()[:-10])
    resumed = jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    assert "partial.pt" in capsys.readouterr().err
    a, b = _weights(straight), _weights(resumed)
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_two_processes_asking_for_the_same_job_train_it_once(tmp_path):
    import threading

    corpus, calls, barrier = uniform_corpus(), [], threading.Barrier(2)

    @dataclasses.dataclass(frozen=True)
    class Counted(lstm_job.Job):
        def train(self, folder, device, progress, data):
            calls.append(threading.get_ident())
            super().train(folder, device, progress, data)

    job = Counted(lstm.RunSpec(seed=7), TINY, "test")

    reported = []

    def ask():
        barrier.wait()
        reported.append(jobs.run_missing([job], "inline", cache=tmp_path, data=corpus))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and jobs.is_done(job, tmp_path)
    assert sorted(len(r) for r in reported) == [0, 1]  # the one that waited says it trained nothing
    assert not list(jobs.job_dir(job, tmp_path).glob("*.lock"))


def test_a_run_that_may_not_train_stops_naming_the_command_that_trains(tmp_path, monkeypatch):
    monkeypatch.setenv(jobs.NO_TRAIN_ENV, "1")
    with pytest.raises(
        FileNotFoundError,
        match=r"1 model\(s\) are not in the cache .*layer2 X=5 \(fixed\) seed 1.*"
        r"`python -m prismlib train --profile test`",
    ):
        jobs.run_missing([_job()], "inline", cache=tmp_path, data=uniform_corpus())


def test_an_entry_cached_before_digests_is_adopted_when_it_loads_and_moved_aside_when_it_does_not(tmp_path, capsys):
    corpus, job = uniform_corpus(), _job(seed=8)
    jobs.run_job(job, tmp_path, "cpu", False, corpus)
    folder = jobs.job_dir(job, tmp_path)
    side = folder / "done.pt.sha256"
    side.unlink()  # as written before digests existed
    assert jobs.is_done(job, tmp_path) and side.exists()
    side.unlink()
    (folder / "done.pt").write_bytes(b"not a checkpoint")
    assert not jobs.is_done(job, tmp_path)
    assert "done.pt: unreadable" in capsys.readouterr().err


# ------------------------------------------------------------------ the process pool (run_pool)


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
    with pytest.raises(KeyboardInterrupt):
        run_pool(_interrupt_first, jobs, 2, progress=False)
    # without the stop, leaving the pool ran every queued job (11 x 0.3 s on 2 workers) before re-raising;
    # counted, not timed (two spawned workers can take many seconds to start on a busy machine)
    assert len(list(tmp_path.glob("*.done"))) < 4
    time.sleep(1.0)
    assert len(list(tmp_path.glob("*.done"))) < 4  # and nothing ran on after the call returned


def test_a_job_an_earlier_run_left_in_the_cache_is_noted_as_reused_and_one_trained_since_is_not(tmp_path, monkeypatch):
    """What lets ``reproduce`` tell a run's time from a fresh clone's: a finished job older
    than the run's start, and not committed, is written to the log; one trained after the
    start (an earlier notebook of the same run) is not, nor is a job with a committed record."""
    corpus, log = uniform_corpus(), tmp_path / "reused.log"
    old, new = _job(seed=1), _job(seed=2)
    jobs.run_missing([old], "inline", cache=tmp_path, data=corpus)
    monkeypatch.setenv(jobs.REUSED_LOG_ENV, str(log))
    monkeypatch.setenv(jobs.REUSED_BEFORE_ENV, str(time.time() + 0.01))
    time.sleep(0.02)
    assert jobs.run_missing([old, new], "inline", cache=tmp_path, data=corpus) == [new]
    assert log.read_text().split() == [old.key] and jobs.reused_jobs(log) == 1
    jobs.run_missing([old, new, old], "inline", cache=tmp_path, data=corpus)  # a second request of the same jobs
    assert log.read_text().split() == [old.key, old.key] and jobs.reused_jobs(log) == 1  # one job, counted once
    monkeypatch.setattr(lstm_job.Job, "committed", lambda self: object(), raising=False)
    jobs.run_missing([old, new], "inline", cache=tmp_path, data=corpus)  # a fresh clone has committed records too
    assert jobs.reused_jobs(log) == 1 and jobs.reused_jobs(tmp_path / "absent") == 0
    monkeypatch.delenv(jobs.REUSED_LOG_ENV)
    jobs.run_missing([old], "inline", cache=tmp_path, data=corpus)  # outside reproduce: nothing is written
