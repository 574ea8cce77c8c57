"""What a finished LSTM job keeps in its committed record, and that a committed record is not retrained."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, tiny_lstm, zipf_corpus

from prismlib import jobcache as jobs
from prismlib import lstm
from prismlib.artifacts import load_checkpoint
from prismlib.lstm import job as lstm_job
from prismlib.lstm import outcome, trained_runs
from prismlib.lstm.claims.grid import experiment
from prismlib.profiles import get_profile
from prismlib.records import read_record

TINY = tiny_lstm(optimizer="anneal", epochs=5, steps_per_epoch=3, min_rounds=1, decays=1, fixed_path=True, cutoffs=(10, 20), records=True)


def test_chunked_sums_every_predicted_token_once():
    nll = np.array([1.0, np.nan, 2.0, 3.0, 4.0, np.nan, 5.0])
    sums, counts = outcome.chunked(nll, 3)
    np.testing.assert_allclose(sums, [3.0, 7.0, 5.0])
    np.testing.assert_array_equal(counts, [2, 2, 1])
    sums, counts = outcome.chunked(np.full(4, np.nan), 2)
    np.testing.assert_array_equal(counts, [0, 0])
    with pytest.raises(ValueError, match="size >= 1"):
        outcome.chunked(nll, 0)


def test_the_weights_kept_are_those_of_the_memory_and_routing_models():
    for profile in ("cpu", "cpu-long"):
        for spec in experiment("memory", get_profile(profile)):
            assert outcome.keeps_weights(spec.variant, spec.T, spec.fixed, spec.seed) == (spec.seed in outcome.WEIGHT_SEEDS)
    assert outcome.keeps_weights("official", None, True, 0) and not outcome.keeps_weights("official", None, True, 2)
    assert not outcome.keeps_weights("layerwise", 20.0, True, 0) and not outcome.keeps_weights("layerwise", 70.0, False, 0)


@pytest.fixture
def clean_tree(monkeypatch, tmp_path):
    """Records are written only from committed code: pretend the checkout is clean, write under ``tmp_path``."""
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "0" * 40)


def test_a_finished_job_writes_its_record_and_is_not_retrained_from_it(tmp_path, clean_tree, monkeypatch):
    corpus = zipf_corpus()
    spec = lstm.RunSpec("official", fixed=True, seed=0)  # a model whose weights are kept
    job = lstm_job.Job(spec, TINY, "test")
    run = trained_runs.trained([spec], TINY, "test", executor="inline", cache=tmp_path / "cache", corpus=corpus)[spec]
    done = load_checkpoint(jobs.job_dir(job, tmp_path / "cache") / "done.pt")  # what training produced, per token
    hist, test_nll = done["history"], done["test_nll"]
    folder = job.committed()
    assert folder is not None and folder.name == job.key and folder.parent == tmp_path / "out" / "results" / "test" / "runs"
    record = read_record(folder, job.describe())
    assert record["provenance"]["commit"] == "0" * 40 and record["provenance"]["threads"] == TINY.threads
    assert record["provenance"]["device"] == "cpu"  # where it trained (a GPU's numerics differ)
    assert record["history"]["stop"] == hist.stop_reason and record["history"]["val_ppl"] == hist.val_ppl
    assert math.isclose(record["test_ppl"], lstm.perplexity(test_nll), rel_tol=1e-12)
    assert record["biases_final"][1] == [float(v) for v in done["biases_final"][1].double()]
    arrays = outcome.load_arrays(folder)
    sums, counts = outcome.chunked(test_nll, lstm.evaluation.CHUNK)
    assert arrays["test_sums"].dtype == np.float32 and arrays["test_counts"].dtype == np.int16
    np.testing.assert_allclose(arrays["test_sums"], sums, rtol=1e-6)
    np.testing.assert_array_equal(arrays["test_counts"], counts)
    np.testing.assert_allclose(arrays["test_bin_sums"].sum(axis=0), sums, rtol=1e-5)  # every predicted token in exactly one bin
    block_ppl = np.exp(arrays["test_block_sums"].sum() / arrays["test_block_counts"].sum())
    assert math.isclose(block_ppl, lstm.perplexity(test_nll), rel_tol=1e-6)
    assert {k for k in arrays if k.startswith("valid_round")} == {
        f"valid_round{r}_{x}" for r in hist.val_snapshots for x in ("sums", "counts")
    }
    assert len([k for k in arrays if k.startswith("forget_means_layer")]) == TINY.layers
    model = outcome.load_weights(lstm.build_model(spec, VOCAB, TINY, lstm_job._rank(corpus)), folder)
    for name, p in run.model.named_parameters():
        # float16 storage; the raw entries under a fixed bias are never read (the official variant's hold NaN)
        torch.testing.assert_close(dict(model.named_parameters())[name], p, atol=2e-3, rtol=1e-3, equal_nan=True)
    for name, b in run.model.named_buffers():  # the fixed biases: exact, rebuilt from the spec
        assert torch.equal(dict(model.named_buffers())[name], b), name

    def no_training(*args, **kwargs):
        raise AssertionError("a job with a committed record was retrained")

    monkeypatch.setattr(lstm_job, "train_lm", no_training)
    assert jobs.run_missing([job], "inline", cache=tmp_path / "empty cache", data=corpus) == []


def test_a_job_of_a_model_without_kept_weights_and_a_dirty_tree(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PRISMLIB_OUTPUT", str(tmp_path / "out"))
    corpus = zipf_corpus()
    spec = lstm.RunSpec("layerwise", 20.0, fixed=True, seed=0)
    job = lstm_job.Job(spec, TINY, "test")
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "1" * 40 + "+dirty")
    trained_runs.trained([spec], TINY, "test", executor="inline", cache=tmp_path / "a", corpus=corpus)
    assert job.committed() is None and "uncommitted code" in capsys.readouterr().err
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "1" * 40)
    trained_runs.trained([spec], TINY, "test", executor="inline", cache=tmp_path / "b", corpus=corpus)
    folder = job.committed()
    assert folder is not None and not (folder / outcome.WEIGHTS).exists()
    with pytest.raises(FileNotFoundError, match="keeps no weights"):
        outcome.load_weights(lstm.build_model(spec, VOCAB, TINY), folder)
    (folder / outcome.ARRAYS).write_bytes(b"flipped")
    assert job.committed() is None and "outcome.npz" in capsys.readouterr().err  # refused in one line, then retrained


def test_a_doubled_path_twin_keeps_no_weights_and_its_key_ignores_the_flag(tmp_path, clean_tree):
    corpus = zipf_corpus()
    spec = lstm.RunSpec(seed=0)  # the baseline's first seed: its regular run keeps weights
    twin = lstm_job.Job(spec, TINY, "test", twin=True)
    assert twin.key == lstm_job.Job(spec, TINY, "test").key
    jobs.run_missing([twin], "inline", cache=tmp_path / "cache", data=corpus)
    folder = twin.committed()
    assert folder is not None and not (folder / outcome.WEIGHTS).exists()


def test_fresh_ignores_the_committed_records(tmp_path, clean_tree, monkeypatch):
    corpus = zipf_corpus()
    spec = lstm.RunSpec(seed=3)
    job = lstm_job.Job(spec, TINY, "test")
    trained_runs.trained([spec], TINY, "test", executor="inline", cache=tmp_path / "cache", corpus=corpus)
    assert job.committed() is not None
    monkeypatch.setenv(lstm_job.FRESH_ENV, "1")
    assert job.committed() is None and jobs.run_missing([job], "inline", cache=tmp_path / "other", data=corpus) == [job]
