"""Dyck-2 training as a job (prismlib.lstm.iclr.dyck_training): batches, stopping, exact resume, the cache."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from prismlib.anneal import STOPPED_AT_CAP, STOPPED_BY_RULE, AnnealSettings
from prismlib.jobcache import job_dir
from prismlib.lstm.iclr import dyck
from prismlib.lstm.iclr.dyck_model import build_dyck_model
from prismlib.lstm.iclr.dyck_training import (
    DyckJob,
    constant_loss,
    dyck_converged_gate,
    dyck_data,
    dyck_outputs,
    epoch_batches,
    train_dyck,
    trained_dyck,
    validation_loss,
)
from prismlib.profiles import DyckRecipe, DyckSettings
from prismlib.stats import combined_interval

TINY = DyckSettings(
    recipe=DyckRecipe(
        hidden=8, n_train=48, n_validation=16, n_test=24, batch_size=8, lr=1e-2, epochs=3, max_length=30, bucket=True,
        schedule=AnnealSettings(decay_factor=4.0, decay_tolerance=0.01, decays=2, min_rounds=2, decay_patience=2),
    ),
    seeds=(1, 2),
)  # fmt: skip


@pytest.fixture(scope="module")
def data():
    return dyck_data(TINY)


@pytest.mark.parametrize("bucket", [False, True])
def test_an_epoch_reads_every_string_once(bucket):
    lengths = np.random.default_rng(0).integers(2, 50, size=103)
    batches = epoch_batches(lengths, 10, np.random.default_rng(1), bucket)
    assert sorted(np.concatenate(batches).tolist()) == list(range(103)) and max(map(len, batches)) == 10
    spread = np.mean([np.ptp(lengths[b]) for b in batches])
    assert (spread < 10) == bucket  # bucketed batches hold strings of similar length


def test_the_data_is_one_seeded_draw_of_distinct_strings(data):
    again = dyck_data(TINY)
    assert all(np.array_equal(data[k].tokens, again[k].tokens) for k in data)
    strings = {dyck.decode(row) for split in data.values() for row in split.tokens}
    assert len(strings) == TINY.n_train + TINY.n_validation + TINY.n_test
    assert max(split.lengths.max() for split in data.values()) <= TINY.max_length


def test_training_lowers_the_loss_below_the_constant_output_and_keeps_the_best(data):
    s = TINY.updated(epochs=12, lr=3e-2)
    model = build_dyck_model("mts", s.hidden, 1)
    before = validation_loss(dyck_outputs(model, data["validation"]), data["validation"])
    hist = train_dyck(model, data["train"], data["validation"], s, seed=1, progress=False)
    after = validation_loss(dyck_outputs(model, data["validation"]), data["validation"])
    assert after == pytest.approx(min(hist.val_loss)) and after < before
    assert after < constant_loss(data["train"], data["validation"])
    assert hist.epochs == 12 and hist.stop == STOPPED_AT_CAP and not hist.converged


def test_the_official_threshold_stops_a_run_converged(data):
    s = TINY.updated(stop_val_loss=1.0)  # any loss is below it: stops after one epoch
    hist = train_dyck(build_dyck_model("baseline", s.hidden, 1), data["train"], data["validation"], s, seed=1, progress=False)
    assert hist.epochs == 1 and hist.stop == STOPPED_BY_RULE and hist.stopped_by == "threshold" and hist.converged


def test_the_annealed_rule_decays_and_stops_but_not_before_beating_the_constant_output(data):
    rule = dict(anneal=True, min_rounds=0, decay_tolerance=0.5, decays=1, decay_patience=1, stop_val_loss=0.0)
    s = TINY.updated(epochs=30, lr=3e-2, **rule)  # a 50% tolerance: every check after the first stalls
    hist = train_dyck(build_dyck_model("baseline", s.hidden, 1), data["train"], data["validation"], s, seed=1, progress=False)
    assert (hist.stop, hist.stopped_by, hist.anneal.decayed_at, hist.lr_scale) == (STOPPED_BY_RULE, "anneal", (2,), [1.0, 1.0, 0.25])
    slow = s.updated(lr=1e-4, epochs=6)  # never beats the constant output: no decay, and it did not learn
    hist = train_dyck(build_dyck_model("baseline", s.hidden, 1), data["train"], data["validation"], slow, seed=1, progress=False)
    assert hist.stop == "did not learn" and hist.anneal.decayed_at == () and hist.epochs == 6
    assert min(hist.val_loss) > constant_loss(data["train"], data["validation"])


def test_an_interrupted_run_resumes_exactly(data, tmp_path):
    s4 = TINY.updated(epochs=4)
    whole = build_dyck_model("baseline", 8, 3)
    train_dyck(whole, data["train"], data["validation"], s4, seed=3, progress=False)
    part = build_dyck_model("baseline", 8, 3)
    ck = tmp_path / "partial.pt"
    train_dyck(part, data["train"], data["validation"], TINY.updated(epochs=2), seed=3, checkpoint=ck, progress=False)
    resumed = build_dyck_model("baseline", 8, 3)
    hist = train_dyck(resumed, data["train"], data["validation"], s4, seed=3, checkpoint=ck, progress=False)
    assert hist.epochs == 4
    for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, equal_nan=True)


def test_the_key_names_what_changes_training():
    a = DyckJob("mts", 1, TINY, "smoke")
    assert a.key == DyckJob("mts", 1, TINY.updated(seeds=(1,), threads=2, eval_batch=7), "smoke").key
    assert len({a.key, DyckJob("baseline", 1, TINY, "smoke").key, DyckJob("mts", 2, TINY, "smoke").key,
                DyckJob("mts", 1, TINY.updated(lr=0.5), "smoke").key, DyckJob("mts", 1, TINY, "cpu").key}) == 5  # fmt: skip
    with pytest.raises(ValueError, match="kind"):
        DyckJob("lstm", 1, TINY, "smoke")


def test_the_key_hashes_the_whole_recipe_flat_and_nothing_beside_it():
    """Every recipe field (its anneal schedule's included) moves the key; the settings beside the
    recipe (seeds, evaluation batch, threads) never do: no list of fields to leave out or put in."""
    from dataclasses import fields

    base = DyckJob("mts", 1, TINY, "smoke")
    flat = TINY.recipe.flat()
    assert base.describe()["settings"] == flat and {"anneal", "decay_factor", "decay_patience"} <= set(flat)
    for name, value in flat.items():
        other = not value if isinstance(value, bool) else value * 2 + 1
        assert DyckJob("mts", 1, TINY.updated(**{name: other}), "smoke").key != base.key, name
    beside = {f.name for f in fields(DyckSettings)} - {"recipe"}
    assert beside == {"seeds", "eval_batch", "threads"}
    assert DyckJob("mts", 1, TINY.updated(seeds=(9,), eval_batch=1, threads=None), "smoke").key == base.key


PINNED_KEYS = {
    "smoke": ("ec50b30755a42006", "94e16c81d6ec9f84"),
    "cpu": ("5d551d22ad09d7e2", "baaef1787c11a9bb"),
    "paper": ("5176b994441d7224", "797783368b6ab3eb"),
    "dryrun": ("b1f4d373f865ca17", "3718c5a804d4ed90"),
}
"""The keys of each profile's first baseline and MTS Dyck job, as they were before the recipe and
its anneal schedule were grouped in classes of their own (issue 43): a model's cache folder."""


@pytest.mark.parametrize("profile", list(PINNED_KEYS))
def test_the_keys_stay_those_of_the_flat_settings(profile):
    from prismlib.profiles import PROFILES

    s = PROFILES[profile].iclr.dyck
    assert (DyckJob("baseline", s.seeds[0], s, profile).key, DyckJob("mts", s.seeds[0], s, profile).key) == PINNED_KEYS[profile]


def test_jobs_train_once_into_the_cache_and_load(data, tmp_path):
    s = TINY.updated(epochs=1, seeds=(1,))
    runs = trained_dyck(s, "test", executor="inline", cache=tmp_path, data=data, device="cpu")
    assert set(runs) == {("baseline", 1), ("mts", 1)}
    run = runs[("mts", 1)]
    assert run.test_correct.shape == (TINY.n_test,) and run.history.epochs == 1
    assert (job_dir(run.job, tmp_path) / "done.pt").exists() and not (job_dir(run.job, tmp_path) / "partial.pt").exists()
    outputs = dyck_outputs(run.model, data["test"])
    np.testing.assert_array_equal(run.test_correct, dyck.sequence_correct(outputs, data["test"].targets, data["test"].mask, logits=True))
    again = trained_dyck(s, "test", executor="inline", cache=tmp_path, data=data, device="cpu")  # read, not retrained
    assert torch.equal(again[("mts", 1)].model.readout.weight, run.model.readout.weight)
    gate = dyck_converged_gate(list(runs.values()))
    assert not gate.passed and "2 of 2 runs ended 'cap'" in gate.detail


def _run(kind: str, seed: int, correct: np.ndarray):
    from prismlib.lstm.iclr.dyck_training import DyckHistory, DyckRun

    return DyckRun(DyckJob(kind, seed, TINY, "test"), None, DyckHistory(), np.asarray(correct, dtype=bool))  # type: ignore[arg-type]


def test_the_claims_statistics_on_made_up_correctness():
    from prismlib.lstm.iclr.dyck_training import (
        correct_matrix,
        dyck_accuracy_table,
        dyck_learned_gate,
        long_range_difference,
        long_range_test,
        seed_accuracy,
    )

    longest = np.tile(np.arange(1, 101), 4)  # 400 strings, longest distances 1..100
    rng = np.random.default_rng(0)
    base = [(longest < 40) | (rng.random(400) < 0.1) for _ in range(3)]  # right below 40, rarely beyond
    mts = [(longest < 70) | (rng.random(400) < 0.1) for _ in range(3)]  # right below 70
    runs = {("baseline", s): _run("baseline", s, c) for s, c in zip((1, 2, 3), base)}
    runs |= {("mts", s): _run("mts", s, c) for s, c in zip((1, 2, 3), mts)}
    assert correct_matrix(runs, "mts").shape == (3, 400)
    table = dyck_accuracy_table(runs, longest, np.array([1, 40, 70, 100]), n_boot=200)
    assert len(table) == 6 * 3 and set(table.model) == {"baseline", "mts"}
    seeds = seed_accuracy(table)
    first = seeds[seeds.low_edge == 1].set_index("model").accuracy
    assert first["baseline"] == first["mts"] == 1.0  # every string below 40 right: no spread, no interval
    mid = seeds[seeds.low_edge == 40].set_index("model")
    assert mid.accuracy["mts"] == 1.0 and mid.accuracy["baseline"] < 0.2 and mid.low["baseline"] < mid.accuracy["baseline"]
    assert dyck_learned_gate(seeds).passed
    diff = long_range_difference(correct_matrix(runs, "mts"), correct_matrix(runs, "baseline"), longest, 40, n_boot=200)
    assert 0.4 < diff.effect < 0.6 and diff.low > 0 and diff.units == 4 * 61
    test = long_range_test(correct_matrix(runs, "mts"), correct_matrix(runs, "baseline"), longest, 40, 0.05, "long", n_boot=200)
    per_seed = [correct_matrix(runs, k)[:, longest >= 40].mean(axis=1).tolist() for k in ("mts", "baseline")]
    assert test.interval == combined_interval(diff, *per_seed) and test.interval.resampled == "units+seeds"
    assert (test.label, test.threshold, test.verdict) == ("long", 0.05, "held")
    alone = long_range_test(correct_matrix(runs, "mts")[:1], correct_matrix(runs, "baseline"), longest, 40, 0.05, "long", n_boot=200)
    assert alone.interval.resampled == "units"  # one seed of mts: the strings' bootstrap alone
    # seeds that disagree (one mts seed right only where the baseline is): the strings see a gain, the one interval does not
    split = correct_matrix(runs, "mts").copy()
    split[0] = correct_matrix(runs, "baseline")[0]
    unit = long_range_difference(split, correct_matrix(runs, "baseline"), longest, 40, n_boot=200)
    wide = long_range_test(split, correct_matrix(runs, "baseline"), longest, 40, 0.05, "long", n_boot=200)
    assert unit.low > 0.05 and wide.interval.low < unit.low and wide.interval.high > unit.high and wide.verdict == "inside noise"
    same = long_range_difference(correct_matrix(runs, "mts"), correct_matrix(runs, "mts"), longest, 40)
    assert (same.effect, same.low, same.high) == (0.0, 0.0, 0.0)
    failing = dyck_learned_gate(seeds.assign(accuracy=0.2))
    assert not failing.passed and "not learned" in failing.detail


def test_the_memory_floor_guesses_each_opener_older_than_the_horizon_once():
    from prismlib.lstm.iclr.dyck_training import memory_floor

    split = dyck.make_split([dyck.encode(s) for s in ("()", "(())", "([])", "((()))", "[][]")])
    np.testing.assert_allclose(memory_floor(split, 1), [0.5, 0.25, 0.25, 0.125, 0.25])
    np.testing.assert_allclose(memory_floor(split, 3), [1, 0.5, 0.5, 0.25, 1])
    np.testing.assert_allclose(memory_floor(split, 7), [1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="horizon"):
        memory_floor(split, 0)


def test_a_string_is_below_the_floor_only_with_a_distance_at_the_horizon(data):
    from prismlib.lstm.iclr.dyck_training import memory_floor

    split = data["test"]
    floor = memory_floor(split, 10)
    assert (floor[split.longest < 10] == 1).all() and (floor[split.longest >= 10] <= 0.5).all()


def test_the_floor_gate_fails_only_when_both_models_sit_at_the_floor():
    from prismlib.lstm.iclr.dyck_training import long_range_floor_gate

    longest = np.array([5, 50, 60, 70])
    floor = np.array([1.0, 0.3, 0.3, 0.3])
    at_floor = np.array([[1, 1, 0, 0], [1, 0, 1, 0]], dtype=bool)  # 0.25 and 0.25 on the long strings
    above = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=bool)  # 0.83
    assert not long_range_floor_gate(at_floor, at_floor, longest, 45, floor).passed
    assert "both models at the floor" in long_range_floor_gate(at_floor, at_floor, longest, 45, floor).detail
    assert long_range_floor_gate(above, at_floor, longest, 45, floor).passed
    assert long_range_floor_gate(at_floor, above, longest, 45, floor).passed
    assert not long_range_floor_gate(above, above, longest, 100, floor).passed
