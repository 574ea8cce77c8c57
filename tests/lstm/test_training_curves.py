"""What training records for the convergence gates (prismlib.lstm.training): the learning curve
and the half-budget snapshot (without changing the weights), histories pickled before them, and
an open-ended run (until converged) that stops at the model gate and resumes its curve."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, tiny_lstm, uniform_corpus

from prismlib import jobcache as jobs
from prismlib import lstm
from prismlib.lstm import convergence as cv
from prismlib.lstm import job as lstm_job
from prismlib.lstm import training
from prismlib.runs.train import projection

TINY = tiny_lstm(optimizer="ntasgd", average_last=1, epochs=2, steps_per_epoch=3, cutoffs=(10, 20), curve_every=1, curve_tokens=100)


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def test_old_histories_load_without_curves():
    old = training.TrainHistory(epochs=2, val_ppl=[300.0, 200.0], tokens=10)
    for name in ("steps", "epoch_tokens", "curve_tokens", "curve_ppl", "snapshots", "curve_source"):
        del old.__dict__[name]  # as pickled before these fields existed
    back = pickle.loads(pickle.dumps(old))
    assert back.learning_curve() is None and back.snapshot_near(5) is None and back.steps == 0


def test_training_records_the_curve_and_the_half_budget_snapshot_without_changing_the_weights():
    corpus, s = uniform_corpus(), TINY.updated(epochs=4, curve_every=2)
    spec = lstm.RunSpec("layer2", 5.0, fixed=True, seed=1)
    a = lstm.build_model(spec, VOCAB, s)
    hist = lstm.train_lm(a, corpus.train, corpus.valid, s, seed=1, progress=False, test_ids=corpus.test)
    assert hist.steps == 12 and len(hist.curve_tokens) == 6 and hist.curve_tokens[-1] == hist.tokens
    assert hist.epoch_tokens[-1] == hist.tokens and len(hist.epoch_tokens) == 4
    curve = hist.learning_curve()
    assert curve.source == "first 100 tokens of the validation split" and (curve.valid_ppl > 1).all()
    ((t_half, nll),) = hist.snapshots.items()
    assert t_half == hist.curve_tokens[2] and nll.dtype == np.float32 and nll.shape == corpus.test.shape
    assert hist.snapshot_near(hist.tokens / 2)[0] == t_half
    plain = s.updated(curve_every=None)
    b = lstm.build_model(spec, VOCAB, plain)
    lstm.train_lm(b, corpus.train, corpus.valid, plain, seed=1, progress=False)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name


LONG = TINY.updated(
    epochs=12,
    steps_per_epoch=4,
    curve_every=2,
    until_converged=True,
    average_last=0,
    converge_share=0.5,
    converge_tolerance=0.1,
    optimizer="adam",
    lr=3e-2,
)


def _long_job() -> lstm_job.Job:
    return lstm_job.Job(lstm.RunSpec(seed=5), LONG, "test")


def test_until_converged_stops_at_the_first_epoch_that_passes_the_model_gate(tmp_path):
    corpus, job = uniform_corpus(), _long_job()
    jobs.run_job(job, tmp_path, "cpu", False, corpus)
    hist = torch.load(jobs.job_dir(job, tmp_path) / "done.pt", weights_only=False)["history"]
    assert 1 < hist.epochs < LONG.epochs
    assert cv.model_gate("m", hist.learning_curve(), 0.5, 0.1).passed
    n = hist.epochs * LONG.steps_per_epoch // LONG.curve_every  # the curve as it was one epoch earlier
    before = cv.LearningCurve(np.array(hist.curve_tokens[: n - 2]), np.array(hist.curve_ppl[: n - 2]))
    assert not cv.model_gate("m", before, 0.5, 0.1).passed
    assert set(hist.snapshots) == {t for e, t in enumerate(hist.epoch_tokens, 1) if e in (1, 2, 3, 4, 6, 8, 12)}
    status = lstm.read_status(job, tmp_path)
    assert status["tokens"] == hist.tokens and status["epochs"] == hist.epochs


@pytest.mark.slow
def test_a_resumed_until_converged_run_continues_its_curve(tmp_path, monkeypatch):
    corpus, job = uniform_corpus(), _long_job()
    straight = jobs.run_job(job, tmp_path / "straight", "cpu", False, corpus)
    real_save, saves = training.save_atomic, []

    def save_then_die(path, **obj):  # dies right after the second epoch's checkpoint
        real_save(path, **obj)
        saves.append(path)
        if len(saves) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(training, "save_atomic", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    monkeypatch.setattr(training, "save_atomic", real_save)
    folder = jobs.job_dir(job, tmp_path / "killed")
    partial = torch.load(folder / "partial.pt", weights_only=False)["history"]
    assert partial.epochs == 2 and len(partial.curve_tokens) == 4
    done_tokens, total, _ = projection([job], 1, tmp_path / "killed")  # status.json: written after each checkpoint
    assert 0 < done_tokens <= partial.tokens and total >= done_tokens
    jobs.run_job(job, tmp_path / "killed", "cpu", False, corpus)
    a = torch.load(f"{straight}/done.pt", weights_only=False)
    b = torch.load(folder / "done.pt", weights_only=False)
    assert b["history"].curve_tokens[:4] == partial.curve_tokens  # continued, not restarted
    assert b["history"].curve_tokens == a["history"].curve_tokens and b["history"].curve_ppl == a["history"].curve_ppl
    np.testing.assert_array_equal(b["test_nll"], a["test_nll"])
