"""A trained run read from its committed record (prismlib.lstm.trained_runs.load_run): the same analysis
numbers as the local run it was written from, the model only where the record keeps its
weights, and no record at all when FRESH is set."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lstm_fixtures import VOCAB, tiny_lstm, zipf_corpus

from prismlib import lstm, paths
from prismlib.jobcache import job_dir
from prismlib.lstm import job as lstm_job
from prismlib.lstm import trained_runs
from prismlib.lstm.chunks import MissingBins
from prismlib.lstm.claims import summaries

TINY = tiny_lstm(optimizer="anneal", epochs=5, steps_per_epoch=3, min_rounds=1, decays=1, fixed_path=True, cutoffs=(10, 20), records=True)
BASE = [lstm.RunSpec(seed=s) for s in (0, 1)]  # the baseline's weights are kept (WEIGHT_MODELS)
FIXED = [lstm.RunSpec("layerwise", 20.0, fixed=True, seed=s) for s in (0, 1)]  # a model whose weights are not
SPECS = BASE + FIXED


def _corpus():
    """The tiny Zipf corpus with a training text where one word is seen > 10k times, one 1k-10k
    and one 100-1k (the others < 100), so every frequency bin holds test tokens."""
    z = zipf_corpus(0)
    z.train = np.concatenate([z.train, np.zeros(12_000, int), np.ones(2_000, int), np.full(500, 2)])
    p = 1 / np.arange(1, VOCAB + 1) ** 2
    z.test = np.random.default_rng(1).choice(VOCAB, 1_000, p=p / p.sum())
    return z


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """SPECS trained once into a local cache, their records written from 'committed' code."""
    root = tmp_path_factory.mktemp("records")
    corpus = _corpus()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(paths.OUTPUT_ENV, str(root / "out"))
        mp.setattr("prismlib.records.loaded_commit", lambda: "0" * 40)
        local = trained_runs.trained(SPECS, TINY, "test", executor="inline", cache=root / "cache", corpus=corpus)
    return root, corpus, local


@pytest.fixture
def from_records(trained, monkeypatch):
    """The runs of SPECS read with an empty local cache: from their committed records."""
    root, corpus, local = trained
    monkeypatch.setenv(paths.OUTPUT_ENV, str(root / "out"))
    monkeypatch.delenv(lstm_job.FRESH_ENV, raising=False)
    read = {s: trained_runs.load_run(lstm_job.Job(s, TINY, "test"), cache=root / "empty", corpus=corpus) for s in SPECS}
    return corpus, local, read


def _key(spec) -> str:
    return "baseline" if spec.variant == "baseline" else "fixed"


def test_a_run_read_from_its_record_gives_the_analysis_numbers_of_its_local_run(from_records):
    corpus, local, read = from_records
    assert {r.source for r in local.values()} == {"checkpoint"} and {r.source for r in read.values()} == {"record"}
    for spec in SPECS:
        a, b = local[spec], read[spec]
        assert set(b.arrays) >= set(a.arrays)  # the record adds the forget-gate means
        for name, x in a.arrays.items():
            np.testing.assert_array_equal(b.arrays[name], x, err_msg=name)
        assert (a.test_ppl, a.val_ppl, a.history) == (b.test_ppl, b.val_ppl, b.history)
        assert all(torch.equal(x, y) for x, y in zip(a.biases_final + a.biases_init, b.biases_final + b.biases_init))
        np.testing.assert_allclose(np.concatenate(a.forget_means()), np.concatenate(b.forget_means()), atol=1e-6)  # measured vs stored
    checks = {name: lstm.WorkBClaims(runs, key=_key, reference="baseline") for name, runs in (("local", local), ("read", read))}
    for c in checks.values():
        assert c.end.seeds("fixed") == 2 and c.annealed and c.stable is not None
    assert checks["local"].end.delta("fixed") == checks["read"].end.delta("fixed")  # contrast with its interval
    tests_of = lstm.no_harm("fixed", 1.0, "ppl(fixed) - ppl(baseline)")
    gates = {name: c.gates(["baseline", "fixed"], tests_of) for name, c in checks.items()}
    assert [(g.passed, g.detail) for g in gates["local"]] == [(g.passed, g.detail) for g in gates["read"]]
    combined = {name: c.with_seeds(tests_of(c.end)[0], "fixed") for name, c in checks.items()}
    assert combined["local"] == combined["read"] and combined["read"].interval.resampled == "units+seeds"
    # the bigram comparison: the bigram's per-token NLL summed over the same chunks
    kn = lstm.bigram_nll(lstm.fit_bigram(corpus.train, VOCAB), corpus.test, TINY.eval_batch)
    vs = {name: lstm.versus_bigram(c.end.nll, kn, n_boot=500) for name, c in checks.items()}
    assert vs["local"] == vs["read"] and set(vs["read"]) == {"baseline", "fixed"}
    # frequency bins: per bin perplexity and the paired difference, and the rare-word contrast
    counts = np.bincount(corpus.train)
    freq = {name: lstm.perplexity_by_frequency(c.end.nll, corpus.test, counts, "baseline", 300) for name, c in checks.items()}
    assert freq["local"].drop(columns="delta").equals(freq["read"].drop(columns="delta"))
    assert freq["local"].delta.tolist() == freq["read"].delta.tolist() and (freq["read"].tokens > 0).all()
    rare = lstm.rare_words(corpus.test, counts, model="fixed")
    assert rare(checks["local"].end) == rare(checks["read"].end)
    # the tables and figures of the runs
    assert summaries.runs_table(list(local.values()), 50).equals(summaries.runs_table(list(read.values()), 50))
    assert summaries.curves_frame(local).equals(summaries.curves_frame(read))


def test_the_chunked_run_keeps_the_per_token_checkpoints_numbers(trained):
    """The port to chunk sums moves no number beyond float32 rounding (a record's precision)."""
    root, corpus, local = trained
    done = torch.load(job_dir(lstm_job.Job(SPECS[2], TINY, "test"), root / "cache") / "done.pt", weights_only=False)
    base = torch.load(job_dir(lstm_job.Job(SPECS[0], TINY, "test"), root / "cache") / "done.pt", weights_only=False)
    run, base_run = local[SPECS[2]], local[SPECS[0]]
    assert run.test_ppl == pytest.approx(lstm.perplexity(done["test_nll"]), rel=1e-6)
    per_token = lstm.perplexity_difference(done["test_nll"], base["test_nll"], n_boot=500)
    chunked = lstm.perplexity_difference(run.test_chunks, base_run.test_chunks, n_boot=500)
    assert chunked.units == per_token.units == 10
    assert (chunked.effect, chunked.low, chunked.high) == pytest.approx((per_token.effect, per_token.low, per_token.high), rel=1e-5)
    snaps = done["history"].val_snapshots
    end = run.valid_chunks_at("end")
    assert end is not None and end.perplexity() == pytest.approx(lstm.perplexity(snaps[max(snaps)]), rel=1e-6)


def test_a_record_without_weights_refuses_the_model_and_nothing_else(from_records):
    corpus, local, read = from_records
    fixed, base = read[FIXED[0]], read[BASE[0]]
    assert not fixed.has_model and base.has_model and local[FIXED[0]].has_model
    refusal = r"layerwise T=20 \(fixed\) seed 0 \(\w+\) was read from its committed record .* keeps no weights"
    with pytest.raises(lstm.NoWeights, match=refusal):
        lstm.context_use(fixed.model, corpus.test, 5, TINY.eval_batch, TINY.bptt, n_boot=50)
    assert fixed.forget_means()  # 07's timescale estimates need no model: the record keeps the means
    # a kept model is the trained one, in float16
    for (name, p), q in zip(base.model.named_parameters(), local[BASE[0]].model.parameters()):
        torch.testing.assert_close(p, q, atol=2e-3, rtol=1e-3, msg=name)
    assert not base.model.training
    use = [lstm.context_use(r.model, corpus.test, 5, TINY.eval_batch, TINY.bptt, n_boot=50) for r in (base, local[BASE[0]])]
    assert use[0].effect == pytest.approx(use[1].effect, abs=0.05)


def test_the_rare_word_claims_stability_gate_fails_closed_where_validation_keeps_no_bins(from_records):
    """Run records keep validation NLL per chunk, not per frequency bin: the rare-word claim's
    stability gate (annealed runs: validation) cannot be computed and says so, on both paths."""
    corpus, local, read = from_records
    for runs in (local, read):
        checks = lstm.WorkBClaims(runs, key=_key, reference="baseline")
        with pytest.raises(MissingBins):
            checks.stable[0].nll["fixed"].bin("<100")
        _, stable, _ = checks.gates(["baseline", "fixed"], lstm.rare_words(corpus.test, np.bincount(corpus.train), model="fixed"), True)
        assert not stable.passed and stable.detail.startswith("cannot be checked: these chunk sums keep no per-frequency-bin NLL")


def test_fresh_ignores_the_records_and_a_local_checkpoint_comes_first(trained, monkeypatch):
    root, corpus, local = trained
    monkeypatch.setenv(paths.OUTPUT_ENV, str(root / "out"))
    job = lstm_job.Job(FIXED[0], TINY, "test")
    assert trained_runs.load_run(job, cache=root / "cache", corpus=corpus).source == "checkpoint"
    assert trained_runs.load_run(job, cache=root / "empty", corpus=corpus).source == "record"
    monkeypatch.setenv(lstm_job.FRESH_ENV, "1")
    monkeypatch.setattr("prismlib.records.loaded_commit", lambda: "1" * 40 + "+dirty")  # writes no record over the others
    with pytest.raises(FileNotFoundError, match="has not been trained"):
        trained_runs.load_run(job, cache=root / "empty", corpus=corpus)
    trained_again = []
    train = lstm_job.train_lm
    monkeypatch.setattr(lstm_job, "train_lm", lambda *a, **k: trained_again.append(1) or train(*a, **k))
    run = trained_runs.trained([FIXED[0]], TINY, "test", executor="inline", cache=root / "fresh", corpus=corpus)[FIXED[0]]
    assert trained_again == [1] and run.source == "checkpoint"


def test_the_notebooks_say_where_their_runs_come_from(from_records):
    _, local, read = from_records
    line = trained_runs.sources_line({**{("local", s): r for s, r in local.items()}, **{("read", s): r for s, r in read.items()}})
    today = read[SPECS[0]].provenance["date"][:10]
    records = f"4 from committed run records (trained at commit 0000000000 on {today}, 4 jobs)"
    assert line == f"8 trained models: {records}, 4 from local checkpoints"


def test_freeze_conventions_are_checked():
    with pytest.raises(ValueError, match="freeze must be one of"):
        lstm.RunSpec("layerwise", 20.0, fixed=True, freeze="input")
    with pytest.raises(ValueError, match="applies to fixed variants"):
        lstm.RunSpec("layerwise", 20.0, fixed=False, freeze="forget")
    with pytest.raises(ValueError, match="applies to fixed variants"):
        lstm.RunSpec("official", fixed=True, freeze="forget")
    assert lstm.freeze_mask(2, "forget").tolist() == [False, False, True, True, False, False, False, False]
