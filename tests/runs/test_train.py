"""``python -m prismlib train`` (prismlib.runs.train): a budget that is not a positive number of
minutes, and jobs trained until converged behind a projection bar."""

from __future__ import annotations

import pytest
from lstm.test_training_curves import TINY, _long_job
from lstm_fixtures import uniform_corpus

from prismlib import jobcache as jobs
from prismlib import lstm
from prismlib.lstm import job as lstm_job
from prismlib.runs.train import main as train_main
from prismlib.runs.train import projection


@pytest.mark.usefixtures("one_torch_thread")  # (test_convergence.py ran it on one thread)
def test_train_until_converged_runs_the_jobs_with_a_projection_bar(tmp_path):
    from prismlib.runs.train import train_until_converged

    corpus, job = uniform_corpus(), _long_job()
    ran = train_until_converged([job], "inline", 1, "cpu", {}, cache=tmp_path, poll=0.05, data=corpus)
    assert ran == [job] and jobs.is_done(job, tmp_path)
    done_tokens, total, seconds = projection([job], 1, tmp_path)
    assert done_tokens == total == lstm.read_status(job, tmp_path)["tokens"] and seconds == 0
    with pytest.raises(ValueError, match="until_converged settings"):
        train_until_converged([lstm_job.Job(lstm.RunSpec(), TINY, "test")], "inline", 1, "cpu", {}, cache=tmp_path)


@pytest.mark.parametrize("minutes", ["0", "-5", "nan"])
def test_a_budget_that_is_not_a_positive_number_of_minutes_is_one_line(minutes, capsys):
    with pytest.raises(SystemExit) as exit_:
        train_main(["--profile", "smoke", "--minutes", minutes])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "--minutes must be a positive number" in err


class _Job:
    """A stand-in job: a committed record or not, finished in the cache or not."""

    def __init__(self, record: bool, cached: bool) -> None:
        self.record, self.cached = record, cached

    def committed(self) -> str | None:
        return "runs/key" if self.record else None


def test_trained_counts_committed_records_beside_the_cache(monkeypatch):
    # a fresh clone: records committed, an empty cache; the count must not read 0 trained
    from prismlib.runs import train

    monkeypatch.setattr(train, "is_done", lambda job, cache=None: job.cached)
    jobs_ = [_Job(True, False), _Job(True, True), _Job(False, True), _Job(False, False), _Job(False, False)]
    assert train._trained_counts(jobs_) == (2, 1)
    assert train._trained_counts([]) == (0, 0)


def test_training_ahead_says_how_many_train_and_how_long_before_any_training(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from lstm_fixtures import tiny_lstm

    from prismlib.data import ptb
    from prismlib.runs import installments, train

    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))  # no record, an empty cache
    monkeypatch.setattr(ptb, "load_ptb_corpus", lambda: SimpleNamespace(train=range(10_000)))
    monkeypatch.setattr(installments, "DEFAULT_RATE", 1.0)  # slow enough for minutes to show
    settings = tiny_lstm(optimizer="anneal", epochs=5, steps_per_epoch=3, min_rounds=1, decays=1, fixed_path=True)
    jobs_ = [lstm_job.Job(lstm.RunSpec(seed=s), settings, "test") for s in range(4)]
    tokens = installments.job_tokens(jobs_[0], 10_000)
    line = train.training_ahead(jobs_, 2)
    minutes = 4 * tokens / 60
    assert line.startswith(f"4 LSTM model(s) train first: about {minutes / 2:.0f} min on 2 worker(s) ({minutes:.0f} worker-minutes"), line
    assert "no record measured it: the default" in line
    monkeypatch.setattr(train, "is_done", lambda job, cache=None: job.spec.seed < 3)
    assert train.training_ahead(jobs_, 2).startswith("1 LSTM model(s) train first")
