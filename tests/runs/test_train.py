"""``python -m prismlib train`` (prismlib.runs.train): a budget that is not a positive number of
minutes, jobs trained until converged behind a projection bar, and an installment's pretraining
after its LSTM jobs (run and recorded, a done one not run again, an altered one refused in one
line, skipped with too few minutes left, ``--pretrain-only``)."""

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


def _tiny_pretrain(monkeypatch, tmp_path):
    """The smoke profile with a tiny pretraining on generated text, its outputs under ``tmp_path``,
    code taken as committed, and no LSTM job trained (the installment's LSTM part finds none)."""
    from dataclasses import replace
    from types import SimpleNamespace

    from prismlib.data import ptb
    from prismlib.pretrain import installment, synthetic_inputs
    from prismlib.profiles import PROFILES, PretrainSettings
    from prismlib.runs import installments, train

    settings = PretrainSettings(
        "1x32h2", seq_len=32, batch_size=4, lr=3e-3, warmup_steps=2, total_steps=4, threads=1, eval_every=2, heldout_inputs=4
    )
    profile = replace(PROFILES["smoke"], pretrain=settings)
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path))
    monkeypatch.setattr(train, "get_profile", lambda name=None: profile)
    monkeypatch.setattr(installment, "offline_inputs", lambda seq_len, progress, long_seq_len: synthetic_inputs(seq_len, n_docs=100))
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "0" * 40)
    monkeypatch.setattr(ptb, "load_ptb_corpus", lambda: SimpleNamespace(train=range(10_000)))
    empty = installments.Installment([], [], [], 0.0, 1.0, 0, 0.0)
    monkeypatch.setattr(installments, "train_installment", lambda *a, **kw: empty)
    return profile


def test_an_installment_runs_the_profiles_pretraining_after_the_lstm_jobs_and_records_it(tmp_path, monkeypatch, capsys):
    import json

    from prismlib.__main__ import main as cli_main

    _tiny_pretrain(monkeypatch, tmp_path)
    assert train_main(["--minutes", "30"]) == 0
    out = capsys.readouterr().out.splitlines()
    lstm_line = next(i for i, line in enumerate(out) if line.startswith("installment: 0 job(s) finished"))
    assert out[lstm_line + 1].startswith("pretraining 1x32h2: step 0 of 4, about ") and out[lstm_line + 1].endswith(
        " minutes this installment"
    )
    assert out[lstm_line + 2].startswith("pretraining 1x32h2: step 4 of 4 (done; +4 steps, 512 tokens in all)")
    runs = json.loads((tmp_path / "results" / "smoke" / "training.json").read_text())
    assert [r.get("kind") for r in runs] == [None, "pretrain"]  # the LSTM part's entry, then the pretraining's
    entry = runs[1]
    assert (entry["steps_before"], entry["steps"], entry["total_steps"], entry["tokens"], entry["completed"]) == (0, 4, 4, 512, True)
    assert entry["gain"] is not None and entry["record"] == f"results/smoke/runs/pretrain/{entry['key']}"
    assert (tmp_path / ".cache" / "pretrain" / entry["key"] / "state.pt").is_file()
    assert (tmp_path / entry["record"] / "weights.pt").is_file() and entry["size"] == "1x32h2" and entry["seconds"] > 0
    assert train_main(["--minutes", "30", "--pretrain-only"]) == 0  # a done record: nothing trained, nothing appended
    assert capsys.readouterr().out.splitlines()[-1].startswith("pretraining 1x32h2: done, step 4 of 4 in its committed state")
    assert len(json.loads((tmp_path / "results" / "smoke" / "training.json").read_text())) == 2
    weights = tmp_path / entry["record"] / "weights.pt"  # an altered committed state: refused in one line, nothing trained
    weights.write_bytes(weights.read_bytes()[:-1] + bytes([weights.read_bytes()[-1] ^ 1]))
    assert cli_main(["train", "--minutes", "30", "--pretrain-only"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"prismlib train: error: {weights}: its bytes do not match SHA256SUMS"), err


def test_an_installment_skips_the_pretraining_with_too_few_minutes_left_saying_so(tmp_path, monkeypatch, capsys):
    _tiny_pretrain(monkeypatch, tmp_path)
    assert train_main(["--minutes", "5"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "pretraining 1x32h2: skipped, 5 min left of this installment after the LSTM jobs, at least 10 needed "
        "(--pretrain-only gives it the whole budget)"
    )
    assert not (tmp_path / "results" / "smoke" / "runs" / "pretrain").exists()


def test_pretrain_only_needs_a_budget_and_a_profile_that_pretrains(capsys):
    for argv, message in (
        (["--profile", "smoke", "--pretrain-only"], "--pretrain-only is an installment's: give its budget too"),
        (["--profile", "smoke", "--minutes", "5", "--pretrain-only"], "profile smoke pretrains nothing"),
    ):
        with pytest.raises(SystemExit) as exit_:
            train_main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and message in err
