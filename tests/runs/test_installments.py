"""Installments: missing jobs in priority order inside a wall-clock budget, none begun that cannot finish."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lstm_fixtures import tiny_lstm, zipf_corpus

from prismlib import lstm
from prismlib.lstm import job as lstm_job
from prismlib.lstm.claims.doubling import doubling_jobs
from prismlib.lstm.claims.grid import experiment
from prismlib.profiles import get_profile
from prismlib.runs import installments

TINY = tiny_lstm(optimizer="anneal", epochs=5, steps_per_epoch=3, min_rounds=1, decays=1, fixed_path=True, cutoffs=(10, 20))


def test_a_fixed_path_job_reads_its_rounds_times_a_round_of_tokens():
    job = lstm_job.Job(lstm.RunSpec(), TINY, "test")
    assert installments.job_tokens(job, 10_000) == (1 + 1 + 1) * 3 * TINY.batch_size * TINY.bptt
    cpu = lstm_job.Job(lstm.RunSpec(), tiny_lstm(steps_per_epoch=None, checks_per_pass=4, optimizer="anneal", fixed_path=True,
                                                  min_rounds=10, decays=2, epochs=20), "test")  # fmt: skip
    assert installments.job_tokens(cpu, 1000) == 13 * 250


def test_a_job_that_cannot_finish_inside_the_budget_is_not_begun(tmp_path):
    jobs = [lstm_job.Job(lstm.RunSpec(seed=s), TINY, "test") for s in (0, 1)]
    result = installments.train_installment(jobs, 1e-4, 2, 10_000, cache=tmp_path, data=zipf_corpus())
    assert result.finished == [] and result.stopped == [] and result.left == jobs
    assert result.rate == installments.DEFAULT_RATE and result.rate_records == 0
    assert result.left_seconds == pytest.approx(2 * installments.job_tokens(jobs[0], 10_000) / installments.DEFAULT_RATE)
    assert not any((tmp_path / "jobs").glob("*/done.pt"))


@pytest.mark.slow
def test_an_installment_trains_what_fits_in_worker_processes_and_a_second_one_has_nothing_left(tmp_path):
    jobs = [lstm_job.Job(lstm.RunSpec(seed=s), TINY, "test") for s in (0, 1)]
    corpus = zipf_corpus()
    # a budget far above the tiny jobs' seconds: a machine starved by other work (two trainings
    # beside this test, niced) stopped one of them at a 5-minute budget; the call returns when both end
    result = installments.train_installment(jobs, 60, 2, 10_000, cache=tmp_path, data=corpus, poll=0.2)
    assert sorted(j.key for j in result.finished) == sorted(j.key for j in jobs) and result.left == []
    assert all((tmp_path / "jobs" / j.key / "done.pt").exists() for j in jobs)
    again = installments.train_installment(jobs, 5, 2, 10_000, cache=tmp_path, data=corpus)
    assert again.finished == [] and again.left == [] and again.left_seconds == 0


def test_what_is_left_is_projected_at_the_rate_measured_at_the_end(tmp_path, monkeypatch):
    """Installment 1 projected its 85 jobs left at the default rate it assumed at its start,
    although its own three records had measured the rate by its end."""
    rates = iter([(10_000.0, 0), (20_000.0, 3)])
    monkeypatch.setattr(installments, "measured_rate", lambda jobs: next(rates))
    jobs = [lstm_job.Job(lstm.RunSpec(seed=0), TINY, "test")]
    result = installments.train_installment(jobs, 1e-6, 1, 10_000, cache=tmp_path, data=zipf_corpus())
    assert (result.rate, result.rate_records) == (20_000.0, 3) and result.finished == []
    assert result.left_seconds == pytest.approx(installments.projected_seconds(jobs[0], 10_000, 20_000.0, tmp_path))


def test_once_a_job_finished_the_next_is_projected_at_this_installments_own_rate(tmp_path, monkeypatch):
    """Installment 7 trained at 16k tokens/s while the committed records' median said 13k: a job
    that fits at the rate its own finished jobs measured is begun. The clock stands still until
    the first job is done, then jumps to half the budget: at the records' rate the second job
    (projected 400 s) no longer fits in the 300 s left, at the installment's own rate it does."""
    jobs = [lstm_job.Job(lstm.RunSpec(seed=s), TINY, "test") for s in (0, 1)]
    tokens = installments.job_tokens(jobs[0], 10_000)
    first_done = tmp_path / "jobs" / jobs[0].key / "done.pt"
    monkeypatch.setattr(installments, "_now", lambda: 300.0 if first_done.exists() else 0.0)
    monkeypatch.setattr(installments, "measured_rate", lambda js: (tokens / 400, 5) if len(js) != 1 else (tokens / 10, 1))
    result = installments.train_installment(jobs, 10, 1, 10_000, cache=tmp_path, data=zipf_corpus(), poll=0.2)
    assert [j.key for j in result.finished] == [j.key for j in jobs]


def test_the_plan_plays_the_loops_rule_a_free_worker_takes_the_first_job_that_fits():
    # stop 69: 26 twins of about 80 minutes, two workers, 140 minutes: two fit, not 26
    assert installments.fitting([80 * 60.0] * 26, 140 * 60, 2) == 2
    # one worker, 100 s: 50 s, then 100 s does not fit in the 50 s left but 30 s does
    assert installments.fitting([50.0, 100.0, 30.0], 100, 1) == 2
    assert installments.fitting([50.0, 100.0, 30.0], 100, 2) == 3
    # a worker busy past the budget begins nothing; the other one does
    assert installments.fitting([10.0, 10.0], 100, 2, busy=[200.0]) == 2
    assert installments.fitting([10.0, 95.0], 100, 2, busy=[200.0, 10.0]) == 1


@given(st.lists(st.floats(0, 1e4), max_size=8), st.floats(0, 1e4), st.integers(1, 4))
def test_the_plan_begins_only_jobs_that_fit_and_every_one_when_each_has_a_worker(seconds, budget, workers):
    n = installments.fitting(seconds, budget, workers)
    assert 0 <= n <= sum(s <= budget for s in seconds)
    if len(seconds) <= workers:
        assert n == sum(s <= budget for s in seconds)


def test_the_bar_counts_the_jobs_projected_to_fit_and_is_re_planned_when_one_ends(tmp_path, monkeypatch):
    """The scene of test_once_a_job_finished_the_next_is_projected_at_this_installments_own_rate:
    at the records' rate one job of 400 s fits in 600 s, the first job's own rate then makes
    the second fit too (the bar had counted every missing job)."""
    totals: list[int] = []

    class Bar:
        total = None

        def __init__(self, total=None, **kw):
            self.total = total
            totals.append(total)

        def set_postfix_str(self, text):
            pass

        def update(self, n):
            pass

        def refresh(self):
            totals.append(self.total)

        def close(self):
            totals.append(self.total)

    jobs = [lstm_job.Job(lstm.RunSpec(seed=s), TINY, "test") for s in (0, 1)]
    tokens = installments.job_tokens(jobs[0], 10_000)
    first_done = tmp_path / "jobs" / jobs[0].key / "done.pt"
    monkeypatch.setattr(installments, "progress_bar", lambda **kw: Bar(**kw))
    monkeypatch.setattr(installments, "_now", lambda: 300.0 if first_done.exists() else 0.0)
    monkeypatch.setattr(installments, "measured_rate", lambda js: (tokens / 400, 5) if len(js) != 1 else (tokens / 10, 1))
    result = installments.train_installment(jobs, 10, 1, 10_000, cache=tmp_path, data=zipf_corpus(), poll=0.2)
    assert len(result.finished) == 2
    assert totals[0] == 1 and totals[-1] == 2  # planned at the start, re-planned after the first job


def test_reproduce_says_in_one_line_where_work_bs_runs_come_from(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))  # no committed record, an empty job cache
    cpu = get_profile("cpu")
    line = installments.records_line(cpu, ["05_chrono_init", "08_memory_ablation"])
    twins = len(doubling_jobs(cpu, claims=False)[1])
    n = len(set(s for e in ("baseline", "exp1", "memory") for s in experiment(e, cpu))) + twins
    assert line.startswith(f"work B: 0 of the {n} LSTM runs of notebooks 05 08 from committed run records; {n} train first")
    assert line.endswith(f"0 of the {len(lstm.claim_twin_specs(cpu))} twins of the claims' own models are there (notebooks never train "
                         "them: `python -m prismlib train --profile cpu-long --minutes 110`)")  # fmt: skip
    only_08 = installments.records_line(cpu, ["08_memory_ablation", "01_spectral_filters"])
    n_08 = len(set(s for e in ("baseline", "memory") for s in experiment(e, cpu)))
    assert f"of the {n_08} LSTM runs of notebook 08" in only_08 and "claims' own" not in only_08  # 08 reads no twin
    monkeypatch.setenv("PRISMLIB_FRESH", "1")
    assert installments.records_line(cpu, ["08_memory_ablation"]).startswith("work B, FRESH=1: committed run records ignored; 0 of the ")
    assert installments.records_line(cpu, ["01_spectral_filters"]) is None


def test_a_notebook_reads_the_claims_twins_that_are_there_and_only_05_to_07_read_any(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))  # no committed record, an empty job cache
    cpu = get_profile("cpu")
    assert installments.twins_read(cpu, "07_layer2_timescales") == []
    claims = lstm.claim_twin_specs(cpu)
    monkeypatch.setattr(installments, "_present", lambda job, fresh: job.spec in claims[:2] and not fresh)
    keys = sorted(j.key for j in doubling_jobs(cpu)[1] if j.spec in claims[:2])
    assert len(keys) == 2 and installments.twins_read(cpu, "07_layer2_timescales") == keys
    assert installments.twins_read(cpu, "05_chrono_init") == keys and installments.twins_read(cpu, "08_memory_ablation") == []
    monkeypatch.setenv("PRISMLIB_FRESH", "1")
    assert installments.twins_read(cpu, "06_fixed_bias") == []


def test_the_slow_learners_twins_follow_their_models_and_the_claims_twins_come_last_claim_by_claim():
    long = get_profile("cpu-long")
    jobs = installments.grid_jobs(long)
    twins = [i for i, j in enumerate(jobs) if j.twin]
    claims = lstm.claim_twin_specs(long)
    assert len(twins) == len(lstm.doubling_specs(long)) and len(jobs) == len(lstm.all_specs(long)) + len(twins)
    assert [j.spec for j in jobs[-len(claims) :]] == claims and all(j.twin for j in jobs[-len(claims) :])
    for i in twins[: -len(claims)]:  # a slow learner's twin right after its model on the profile's path
        assert jobs[i - 1].spec == jobs[i].spec and not jobs[i - 1].twin


def test_a_committed_record_that_fails_its_digest_stops_the_run_before_any_training(tmp_path, monkeypatch):
    import shutil

    cpu = get_profile("cpu")
    job = next(j for j in installments._work_b(cpu, ["05_chrono_init"])[1] if j.committed() is not None)
    source = job.committed()
    assert source is not None
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))  # a copy of that one record, flipped below
    copy = job.runs / job.key
    shutil.copytree(source, copy)
    installments.check_records(cpu, ["05_chrono_init"])  # intact: nothing to say
    data = bytearray((copy / "record.json").read_bytes())
    data[10] ^= 1
    (copy / "record.json").write_bytes(bytes(data))
    with pytest.raises(installments.RecordsError) as err:
        installments.check_records(cpu, ["05_chrono_init", "01_spectral_filters"], ["05", "01"])
    lines = str(err.value).splitlines()
    assert lines[0].startswith("1 committed run record cannot be used") and len(lines) == 3
    assert str(copy / "record.json") in lines[1] and "SHA256SUMS" in lines[1]
    assert f"`git checkout -- {copy}`" in lines[2] and '`make reproduce FRESH=1 ONLY="05 01"`' in lines[2]
    installments.check_records(cpu, ["01_spectral_filters", "03_prism_layer"])  # no work-B notebook reads it
    monkeypatch.setenv("PRISMLIB_FRESH", "1")
    installments.check_records(cpu, ["05_chrono_init"])  # FRESH=1 ignores every record
